// The SpAMM multiplication on the host (Kokkos::OpenMP and Kokkos::Serial): the kept tile
// products through the host BLAS. One iteration per C tile, dynamically scheduled (tiles near the
// diagonal of a decay matrix keep many more products than tiles far from it); each lists its kept
// k on the fly and merges every run of consecutive kept k into one gemm of inner extent
// run * tile on the packed panels (A's rows and B^T's rows are both k-contiguous, so a run is a
// plain submatrix of each), accumulating in the packed type. Inside the parallel region OpenBLAS
// runs each gemm on the calling thread.
#include <nearsparse/core/detail/host_blas.hpp>
#include <nearsparse/spamm/detail/multiply.hpp>

#include <Kokkos_Core.hpp>

#include <climits>
#include <cstddef>
#include <type_traits>

namespace nearsparse::spamm::detail {

bool host_spamm_available() {
  return nearsparse::detail::host_blas::available();
}

const char* host_spamm_unavailable_reason() {
  return host_spamm_available() ? nullptr : "this build has no host BLAS (OpenBLAS)";
}

namespace {

namespace blas = nearsparse::detail::host_blas;

// Where a tile's gemms write: straight into C (row-major with leading dimension ld, or C^T
// row-major where C is column-major), or into a buffer of tile x tile values of the packed type.
enum class target { row_major_c, column_major_c, buffer };

template <class T, class CT>
target target_of(const geometry& g, std::size_t s0, std::size_t s1) {
  if (!std::is_same<T, CT>::value) return target::buffer;
  const std::size_t most = std::size_t(INT_MAX);
  if (s1 == 1 && s0 >= std::size_t(g.n) && s0 <= most) return target::row_major_c;
  if (s0 == 1 && s1 >= std::size_t(g.m) && s1 <= most) return target::column_major_c;
  return target::buffer;
}

// C = alpha * sum over kept k of A(ti, k) B(k, tj) + beta * C, tile by tile; a and b are the
// packed operands as T values (float or double).
template <class Exec, class T, class CT>
void multiply_tiles(const Exec& exec, const multiply_problem& p, const T* a, const T* b, CT alpha,
                    CT beta, CT* c, std::size_t s0, std::size_t s1) {
  const geometry g = p.geo;
  if (g.mt == 0 || g.nt == 0) return;
  const int tile = g.tile, kt = g.kt, nt = g.nt, m = g.m, n = g.n;
  const std::size_t kp = std::size_t(g.kp);
  const double* an = p.a_norms;
  const double* bn = p.b_norms;
  const double tau = p.tau;
  const target where = target_of<T, CT>(g, s0, s1);
  using policy = Kokkos::TeamPolicy<Exec, Kokkos::Schedule<Kokkos::Dynamic>>;
  using member = typename policy::member_type;
  using buffer_view = Kokkos::View<T*, typename Exec::scratch_memory_space,
                                   Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const int buffer_size = where == target::buffer ? tile * tile : 0;
  policy tiles(exec, g.mt * g.nt, 1);
  tiles.set_chunk_size(1);
  tiles.set_scratch_size(1, Kokkos::PerTeam(buffer_view::shmem_size(buffer_size)));
  Kokkos::parallel_for("nearsparse::spamm::multiply", tiles, [=](const member& team) {
    const int ti = team.league_rank() / nt, tj = team.league_rank() % nt;
    const int rows = (ti + 1) * tile <= m ? tile : m - ti * tile;
    const int cols = (tj + 1) * tile <= n ? tile : n - tj * tile;
    const T* a_panel = a + std::size_t(ti) * tile * kp;
    const T* b_panel = b + std::size_t(tj) * tile * kp;
    CT* c_tile = c + std::size_t(ti) * tile * s0 + std::size_t(tj) * tile * s1;
    buffer_view buffer(team.team_scratch(1), buffer_size);
    const double* a_row = an + std::size_t(ti) * kt;
    bool first = true;
    for (int k = 0; k < kt;) {
      if (!(a_row[k] * bn[std::size_t(k) * nt + tj] >= tau)) {
        ++k;
        continue;
      }
      int end = k + 1;
      while (end < kt && a_row[end] * bn[std::size_t(end) * nt + tj] >= tau) ++end;
      const int inner = (end - k) * tile;
      const std::size_t k0 = std::size_t(k) * tile;
      if (where == target::buffer) {
        blas::gemm(blas::order::row_major, blas::op::none, blas::op::transpose, rows, cols, inner,
                   T(1), a_panel + k0, int(kp), b_panel + k0, int(kp), first ? T(0) : T(1),
                   buffer.data(), cols);
      } else {
        // Into C itself: every gemm scales its part by alpha, the first also C by beta
        // (OpenBLAS writes beta = 0 without reading C).
        T* out = reinterpret_cast<T*>(c_tile);
        const T scale = static_cast<T>(alpha), keep = first ? static_cast<T>(beta) : T(1);
        if (where == target::row_major_c) {
          blas::gemm(blas::order::row_major, blas::op::none, blas::op::transpose, rows, cols, inner,
                     scale, a_panel + k0, int(kp), b_panel + k0, int(kp), keep, out, int(s0));
        } else {  // C^T = B^T(tj) A(ti)^T, row-major with leading dimension s1
          blas::gemm(blas::order::row_major, blas::op::none, blas::op::transpose, cols, rows, inner,
                     scale, b_panel + k0, int(kp), a_panel + k0, int(kp), keep, out, int(s1));
        }
      }
      first = false;
      k = end;
    }
    if (where != target::buffer && !first) return;
    // C = alpha * sum + beta * C from the buffer, or C = beta * C where nothing was kept;
    // beta = 0 only writes, so NaN in C does not propagate.
    for (int r = 0; r < rows; ++r) {
      CT* c_row = c_tile + std::size_t(r) * s0;
      const T* sum = buffer.data() + std::size_t(r) * cols;
      for (int col = 0; col < cols; ++col) {
        const CT value = first ? CT(0) : alpha * static_cast<CT>(sum[col]);
        CT& out = c_row[std::size_t(col) * s1];
        out = beta == CT(0) ? value : value + beta * out;
      }
    }
  });
}

// The packed operands of a 16-bit format decoded to float, rows m (A) and n (B^T) of kp values:
// the host BLAS has no half-precision product with float accumulation. Decoding is exact.
template <class Format, class Exec>
void decode_rows(const Exec& exec, const typename Format::storage* packed, int rows, std::size_t kp,
                 float* out) {
  Kokkos::parallel_for("nearsparse::spamm::decode", Kokkos::RangePolicy<Exec>(exec, 0, rows),
                       [=](const int r) {
                         const typename Format::storage* in = packed + std::size_t(r) * kp;
                         float* row = out + std::size_t(r) * kp;
                         for (std::size_t t = 0; t < kp; ++t) row[t] = Format::decode(in[t]);
                       });
}

template <class Exec, class CT>
void host_multiply_any(const Exec& exec, const multiply_problem& p, CT alpha, CT beta, CT* c,
                       std::size_t s0, std::size_t s1) {
  if (p.geo.m == 0 || p.geo.n == 0) return;
  with_format(p.precision, [&](auto fmt) {
    using Format = decltype(fmt);
    using storage = typename Format::storage;
    if constexpr (std::is_same<storage, float>::value || std::is_same<storage, double>::value) {
      multiply_tiles(exec, p, static_cast<const storage*>(p.a), static_cast<const storage*>(p.b),
                     alpha, beta, c, s0, s1);
    } else {
      const std::size_t kp = std::size_t(p.geo.kp);
      Kokkos::View<float*, typename Exec::memory_space> a_f(
          Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "nearsparse::spamm::A_float"),
          std::size_t(p.geo.m) * kp);
      Kokkos::View<float*, typename Exec::memory_space> b_f(
          Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "nearsparse::spamm::Bt_float"),
          std::size_t(p.geo.n) * kp);
      decode_rows<Format>(exec, static_cast<const storage*>(p.a), p.geo.m, kp, a_f.data());
      decode_rows<Format>(exec, static_cast<const storage*>(p.b), p.geo.n, kp, b_f.data());
      multiply_tiles(exec, p, a_f.data(), b_f.data(), alpha, beta, c, s0, s1);
      exec.fence();  // before the decoded operands are freed
    }
  });
}

}  // namespace

#ifdef KOKKOS_ENABLE_OPENMP
void host_multiply(const Kokkos::OpenMP& exec, const multiply_problem& p, float alpha, float beta,
                   float* c, std::size_t s0, std::size_t s1) {
  host_multiply_any(exec, p, alpha, beta, c, s0, s1);
}
void host_multiply(const Kokkos::OpenMP& exec, const multiply_problem& p, double alpha, double beta,
                   double* c, std::size_t s0, std::size_t s1) {
  host_multiply_any(exec, p, alpha, beta, c, s0, s1);
}
#endif

#ifdef KOKKOS_ENABLE_SERIAL
void host_multiply(const Kokkos::Serial& exec, const multiply_problem& p, float alpha, float beta,
                   float* c, std::size_t s0, std::size_t s1) {
  host_multiply_any(exec, p, alpha, beta, c, s0, s1);
}
void host_multiply(const Kokkos::Serial& exec, const multiply_problem& p, double alpha, double beta,
                   double* c, std::size_t s0, std::size_t s1) {
  host_multiply_any(exec, p, alpha, beta, c, s0, s1);
}
#endif

}  // namespace nearsparse::spamm::detail
