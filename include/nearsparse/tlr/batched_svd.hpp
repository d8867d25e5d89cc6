#pragma once
// Batched SVD of many small dense matrices of one shape: A_b = U_b diag(S_b) V_b^T for every b,
// the building block of compression and recompression. The portable path runs one team per
// matrix with the one-sided Jacobi SVD of the tile kernels (any m, n); on Kokkos::Cuda, matrices
// of 24 x 24 up to 32 x 32 go to cuSOLVER's gesvdjBatched (src/tlr/cuda_batched_svd.cpp), which
// is ahead of the portable kernel for those shapes (perf/RESULTS.md, tlr/batched_svd).
//
//   Kokkos::View<double***, Kokkos::LayoutLeft> A("A", m, n, batch);   // column-major, contiguous
//   Kokkos::View<double**, Kokkos::LayoutLeft> S("S", k, batch);       // k = min(m, n)
//   Kokkos::View<double***, Kokkos::LayoutLeft> U("U", m, k, batch), V("V", n, k, batch);
//   auto report = nearsparse::tlr::batched_svd(exec, A, S, U, V);       // A is overwritten
//
// Singular values come in decreasing order; U and V have orthonormal columns (the columns that
// belong to zero singular values complete the bases).

#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/finite.hpp>
#include <nearsparse/core/view_checks.hpp>
#include <nearsparse/tlr/detail/batched_svd_kernel.hpp>
#include <nearsparse/tlr/options.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <type_traits>

namespace nearsparse::tlr {

namespace detail {

template <class View>
constexpr void static_assert_batch_view() {
  static_assert(Kokkos::is_view<View>::value, "nearsparse::tlr::batched_svd: arguments are Views");
  static_assert(std::is_same<typename View::non_const_value_type, double>::value,
                "nearsparse::tlr::batched_svd: Views of double");
  static_assert(std::is_same<typename View::array_layout, Kokkos::LayoutLeft>::value,
                "nearsparse::tlr::batched_svd: LayoutLeft Views (column-major, batch slowest)");
}

}  // namespace detail

/// A(:, :, b) = U(:, :, b) diag(S(:, b)) V(:, :, b)^T for every b. A is m x n x batch
/// (overwritten), S is k x batch, U is m x k x batch and V is n x k x batch with k = min(m, n), all
/// LayoutLeft Views of double accessible from `exec`. Throws nearsparse::invalid_argument for
/// mismatched extents, non-finite values in A or bad options, and nearsparse::unsupported for
/// implementation::specialized where cuSOLVER cannot take the call.
template <class ExecSpace, class AView, class SView, class UView, class VView>
batched_svd_report batched_svd(const ExecSpace& exec, const AView& a, const SView& s,
                               const UView& u, const VView& v,
                               const batched_svd_options& options = batched_svd_options{}) {
  constexpr const char* fn = "nearsparse::tlr::batched_svd";
  detail::static_assert_batch_view<AView>();
  detail::static_assert_batch_view<SView>();
  detail::static_assert_batch_view<UView>();
  detail::static_assert_batch_view<VView>();
  static_assert(
      AView::rank == 3 && UView::rank == 3 && VView::rank == 3 && SView::rank == 2,
      "nearsparse::tlr::batched_svd: A, U, V are rank 3 (rows, columns, batch), S rank 2");
  static_assert(is_accessible_from_v<ExecSpace, AView> && is_accessible_from_v<ExecSpace, SView> &&
                    is_accessible_from_v<ExecSpace, UView> &&
                    is_accessible_from_v<ExecSpace, VView>,
                "nearsparse::tlr::batched_svd: Views must be accessible from the execution space");
  const std::size_t m = a.extent(0), n = a.extent(1), batch = a.extent(2);
  const std::size_t k = m < n ? m : n;
  auto shape = [](const auto& x) { return nearsparse::detail::extents_string(x); };
  require(s.extent(0) == k && s.extent(1) == batch, fn, "S",
          nearsparse::detail::concat("is ", shape(s), "; A is ", shape(a), ", so S must be ", k,
                                     " x ", batch));
  require(u.extent(0) == m && u.extent(1) == k && u.extent(2) == batch, fn, "U",
          nearsparse::detail::concat("is ", shape(u), "; A is ", shape(a), ", so U must be ", m,
                                     " x ", k, " x ", batch));
  require(v.extent(0) == n && v.extent(1) == k && v.extent(2) == batch, fn, "V",
          nearsparse::detail::concat("is ", shape(v), "; A is ", shape(a), ", so V must be ", n,
                                     " x ", k, " x ", batch));
  nearsparse::detail::require_valid(fn, "options.implementation", options.implementation);
  require(options.max_sweeps >= 1, fn, "options.max_sweeps",
          nearsparse::detail::concat("is ", options.max_sweeps, "; it must be at least 1"));
  require(options.workspace_bytes > 0, fn, "options.workspace_bytes", "must be > 0");
  require(m * n * batch < std::size_t(1) << 62 && batch <= std::size_t(2147483647), fn, "A",
          nearsparse::detail::concat("(", shape(a), ") exceeds the supported size"));
  if (k > 0 && batch > 0) {
    Kokkos::View<const double*, typename AView::memory_space,
                 Kokkos::MemoryTraits<Kokkos::Unmanaged>>
        flat(a.data(), m * n * batch);
    require_finite(exec, fn, "A", flat);
  }
  detail::svd_batch job;
  job.m = int(m);
  job.n = int(n);
  job.batch = int(batch);
  job.a = a.data();
  job.s = s.data();
  job.u = u.data();
  job.v = v.data();
  return detail::dispatch_batched_svd(exec, job, options);
}

}  // namespace nearsparse::tlr
