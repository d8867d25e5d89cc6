#pragma once
// Which tile products a threshold keeps: the work matrix V (kept products per output tile),
// their total for the valid ratio, and the tau search of section 3.5.2. Portable on every
// backend: one pass over the MT x NT x KT norm products.

#include <nearsparse/spamm/detail/norms.hpp>
#include <nearsparse/spamm/options.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace nearsparse::detail::spamm {

template <class MemorySpace>
using work_matrix = Kokkos::View<int**, Kokkos::LayoutRight, MemorySpace>;

/// V(i, j) = number of k with ||A[i,k]|| ||B[k,j]|| >= tau; returns the sum of V.
template <class ExecSpace, class Mem>
std::int64_t count_kept(const ExecSpace& exec, const norm_map<Mem>& a_norms,
                        const norm_map<Mem>& b_norms, double tau, const work_matrix<Mem>& v) {
  const int mt = static_cast<int>(a_norms.extent(0)), kt = static_cast<int>(a_norms.extent(1));
  const int nt = static_cast<int>(b_norms.extent(1));
  if (mt == 0 || nt == 0) return 0;
  const bool store = v.extent(0) == static_cast<std::size_t>(mt);
  std::int64_t total = 0;
  Kokkos::parallel_reduce(
      "nearsparse::spamm::count_kept",
      Kokkos::RangePolicy<ExecSpace>(exec, 0, static_cast<std::int64_t>(mt) * nt),
      KOKKOS_LAMBDA(const std::int64_t idx, std::int64_t& sum) {
        const int i = static_cast<int>(idx / nt), j = static_cast<int>(idx % nt);
        int kept = 0;
        for (int k = 0; k < kt; ++k) kept += a_norms(i, k) * b_norms(k, j) >= tau ? 1 : 0;
        if (store) v(i, j) = kept;
        sum += kept;
      },
      total);
  return total;
}

/// Mean of all MT * KT * NT norm products: sum_k (sum_i A(i,k)) (sum_j B(k,j)) / count.
template <class ExecSpace, class Mem>
double average_norm_product(const ExecSpace& exec, const norm_map<Mem>& a_norms,
                            const norm_map<Mem>& b_norms) {
  const int mt = static_cast<int>(a_norms.extent(0)), kt = static_cast<int>(a_norms.extent(1));
  const int nt = static_cast<int>(b_norms.extent(1));
  if (mt == 0 || nt == 0 || kt == 0) return 0.0;
  double sum = 0.0;
  Kokkos::parallel_reduce(
      "nearsparse::spamm::average_norm_product", Kokkos::RangePolicy<ExecSpace>(exec, 0, kt),
      KOKKOS_LAMBDA(const int k, double& s) {
        double sa = 0.0, sb = 0.0;
        for (int i = 0; i < mt; ++i) sa += a_norms(i, k);
        for (int j = 0; j < nt; ++j) sb += b_norms(k, j);
        s += sa * sb;
      },
      sum);
  return sum / (double(mt) * double(nt) * double(kt));
}

/// Kept products of every output tile as lists: for output tile t = i * nt + j the kept k are
/// ks(offsets(t)) ... ks(offsets(t + 1) - 1), ascending.
template <class Mem>
struct kept_list {
  Kokkos::View<std::int64_t*, Mem> offsets;
  Kokkos::View<int*, Mem> ks;
};

template <class ExecSpace, class Mem>
kept_list<Mem> list_kept(const ExecSpace& exec, const norm_map<Mem>& a_norms,
                         const norm_map<Mem>& b_norms, double tau) {
  const int mt = static_cast<int>(a_norms.extent(0)), kt = static_cast<int>(a_norms.extent(1));
  const int nt = static_cast<int>(b_norms.extent(1));
  const std::int64_t tiles = static_cast<std::int64_t>(mt) * nt;
  kept_list<Mem> out;
  out.offsets = Kokkos::View<std::int64_t*, Mem>(
      Kokkos::view_alloc(exec, "nearsparse::spamm::kept_offsets"), tiles + 1);
  auto offsets = out.offsets;
  Kokkos::parallel_scan(
      "nearsparse::spamm::kept_offsets", Kokkos::RangePolicy<ExecSpace>(exec, 0, tiles),
      KOKKOS_LAMBDA(const std::int64_t idx, std::int64_t& running, const bool final) {
        const int i = static_cast<int>(idx / nt), j = static_cast<int>(idx % nt);
        int kept = 0;
        for (int k = 0; k < kt; ++k) kept += a_norms(i, k) * b_norms(k, j) >= tau ? 1 : 0;
        if (final) offsets(idx) = running;
        running += kept;
        if (final && idx == tiles - 1) offsets(tiles) = running;
      });
  std::int64_t total = 0;
  if (tiles > 0) {
    Kokkos::deep_copy(exec, Kokkos::View<std::int64_t, Kokkos::HostSpace>(&total),
                      Kokkos::subview(offsets, tiles));
    exec.fence();
  }
  out.ks = Kokkos::View<int*, Mem>(Kokkos::view_alloc(exec, "nearsparse::spamm::kept_ks"), total);
  auto ks = out.ks;
  Kokkos::parallel_for(
      "nearsparse::spamm::kept_fill", Kokkos::RangePolicy<ExecSpace>(exec, 0, tiles),
      KOKKOS_LAMBDA(const std::int64_t idx) {
        const int i = static_cast<int>(idx / nt), j = static_cast<int>(idx % nt);
        std::int64_t at = offsets(idx);
        for (int k = 0; k < kt; ++k)
          if (a_norms(i, k) * b_norms(k, j) >= tau) ks(at++) = k;
      });
  return out;
}

}  // namespace nearsparse::detail::spamm
