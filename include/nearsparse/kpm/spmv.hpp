#pragma once
// y = alpha H x + beta y for a CRS or SELL-C-sigma matrix and a vector or a block of vectors: the
// kernel of the naive KPM stage and of the Lanczos bounds, and a product users expect with a
// format. For a SELL matrix x and y are in its (permuted) row order.

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/view_checks.hpp>
#include <nearsparse/kpm/detail/aug_spmmv.hpp>
#include <nearsparse/kpm/detail/matrix_rows.hpp>

#include <Kokkos_Core.hpp>

namespace nearsparse::kpm {

namespace detail {
/// A rank-1 View as an n x 1 unmanaged rank-2 View; a rank-2 View as it is.
template <class View>
auto as_block(const View& v) {
  if constexpr (View::rank == 2) {
    return v;
  } else {
    using T = typename View::value_type;
    return Kokkos::View<T**, Kokkos::LayoutRight, typename View::memory_space,
                        Kokkos::MemoryTraits<Kokkos::Unmanaged>>(v.data(), v.extent(0), 1);
  }
}

/// y = alpha H x + beta y without checks, through the kernel dispatch (aug_spmmv.hpp).
template <class ExecSpace, class Matrix, class XView, class YView>
void apply_matrix(const ExecSpace& exec, double alpha, const Matrix& h, const XView& x, double beta,
                  const YView& y, const aug_settings& settings) {
  using traits = matrix_traits<Matrix>;
  Kokkos::View<double**, typename traits::memory_space> no_eta;
  aug_spmmv(exec, "nearsparse::kpm::spmv", rows_of(h), 0, traits::rows(h), as_block(x), as_block(y),
            aug_coefficients{alpha, 0.0, beta}, false, no_eta, 0, settings);
}
}  // namespace detail

/// The kernel is the automatic implementation choice (nearsparse::implementation).
template <class ExecSpace, class Matrix, class XView, class YView>
void spmv(const ExecSpace& exec, double alpha, const Matrix& h, const XView& x, double beta,
          const YView& y) {
  using traits = detail::matrix_traits<Matrix>;
  static_assert_vector_or_matrix<ExecSpace, XView>();
  static_assert_vector_or_matrix<ExecSpace, YView>();
  static_assert(int(XView::rank) == int(YView::rank),
                "nearsparse::kpm::spmv: x and y must have the same rank");
  static_assert(std::is_same_v<typename XView::non_const_value_type, typename traits::scalar> &&
                    std::is_same_v<typename YView::value_type, typename traits::scalar>,
                "nearsparse::kpm::spmv: x and y must hold the matrix's scalar type");
  constexpr const char* fn = "nearsparse::kpm::spmv";
  using nearsparse::detail::concat;
  using nearsparse::detail::extents_string;
  const std::size_t rows = std::size_t(traits::rows(h)), cols = std::size_t(traits::cols(h));
  require(x.extent(0) == cols, fn, "x",
          concat("has extents ", extents_string(x), ", but extent(0) must equal the ", cols,
                 " columns of H (", rows, " x ", cols, ")"));
  require(y.extent(0) == rows, fn, "y",
          concat("has extents ", extents_string(y), ", but extent(0) must equal the ", rows,
                 " rows of H (", rows, " x ", cols, ")"));
  if constexpr (XView::rank == 2)
    require(x.extent(1) == y.extent(1), fn, "y",
            concat("has extents ", extents_string(y), ", but needs as many columns as x (",
                   extents_string(x), ")"));
  require(std::isfinite(alpha) && std::isfinite(beta), fn, "alpha, beta",
          concat("must be finite, got ", alpha, " and ", beta));
  detail::aug_settings settings;
  settings.function = fn;
  detail::apply_matrix(exec, alpha, h, x, beta, y, settings);
}

}  // namespace nearsparse::kpm
