// The get-norm kernel on the host (Kokkos::OpenMP and Kokkos::Serial): one iteration per tile,
// each row of the tile a contiguous run of k summed in double by a loop the compiler vectorizes.
// The same sums as the portable kernel in another order.
#include <nearsparse/spamm/detail/norms.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstddef>

namespace nearsparse::spamm::detail {
namespace {

template <class Format, class Exec>
void host_norms(const Exec& exec, const void* packed, const geometry& geo, operand which,
                const norm_map<typename Exec::memory_space>& norms) {
  using storage = typename Format::storage;
  const int tile = geo.tile, kt = geo.kt, k = geo.k;
  const std::size_t kp = std::size_t(geo.kp);
  const bool is_a = which == operand::a;
  const int rows = is_a ? geo.m : geo.n;
  const int tiles_r = is_a ? geo.mt : geo.nt;
  if (tiles_r == 0 || kt == 0) return;
  const storage* data = static_cast<const storage*>(packed);
  double* out = norms.data();
  const int nt = geo.nt;
  // Tiles of one row panel are consecutive iterations: a thread's static chunk walks along the
  // panel's rows.
  Kokkos::parallel_for("nearsparse::spamm::get_norm",
                       Kokkos::RangePolicy<Exec>(exec, 0, tiles_r * kt), [=](const int idx) {
                         const int tr = idx / kt, tk = idx % kt;
                         const int r_end = (tr + 1) * tile < rows ? tile : rows - tr * tile;
                         const int c_end = (tk + 1) * tile < k ? tile : k - tk * tile;
                         double sum = 0.0;
                         for (int r = 0; r < r_end; ++r) {
                           const storage* row =
                               data + std::size_t(tr * tile + r) * kp + std::size_t(tk) * tile;
                           double part = 0.0;
#pragma omp simd reduction(+ : part)
                           for (int c = 0; c < c_end; ++c) {
                             const double v = Format::decode(row[c]);
                             part += v * v;
                           }
                           sum += part;
                         }
                         const double norm = std::sqrt(sum);
                         if (is_a) {
                           out[std::size_t(tr) * kt + tk] = norm;
                         } else {
                           out[std::size_t(tk) * nt + tr] = norm;
                         }
                       });
}

template <class Exec>
void host_compute_norms(const Exec& exec, const char* function, const options& opt,
                        const void* packed, const geometry& geo, operand which,
                        const norm_map<typename Exec::memory_space>& norms) {
  if (!host_spamm_taken(exec, function, opt)) {
    compute_norms_portable(exec, opt.precision, packed, geo, which, norms);
    return;
  }
  with_format(opt.precision,
              [&](auto fmt) { host_norms<decltype(fmt)>(exec, packed, geo, which, norms); });
}

}  // namespace

#ifdef KOKKOS_ENABLE_OPENMP
void compute_norms(const Kokkos::OpenMP& exec, const char* function, const options& opt,
                   const void* packed, const geometry& geo, operand which,
                   const norm_map<Kokkos::OpenMP::memory_space>& norms) {
  host_compute_norms(exec, function, opt, packed, geo, which, norms);
}
#endif

#ifdef KOKKOS_ENABLE_SERIAL
void compute_norms(const Kokkos::Serial& exec, const char* function, const options& opt,
                   const void* packed, const geometry& geo, operand which,
                   const norm_map<Kokkos::Serial::memory_space>& norms) {
  host_compute_norms(exec, function, opt, packed, geo, which, norms);
}
#endif

}  // namespace nearsparse::spamm::detail
