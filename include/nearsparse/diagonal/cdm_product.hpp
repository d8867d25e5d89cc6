#pragma once
// Banded products in CDM storage: C = alpha op(A) op(B) + beta C for square n x n matrices.
//
// Compact diagonal k of C gathers A_a * B_b over all stored a, b with (a + b) mod n = k, so C's
// compact diagonals are known before any arithmetic and C is allocated once. A plan keeps them.

#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/core/detail/view_cache.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/diagonal/cdm_matrix.hpp>
#include <nearsparse/diagonal/detail/cdm_product_dispatch.hpp>
#include <nearsparse/diagonal/detail/cdm_product_kernel.hpp>
#include <nearsparse/diagonal/detail/plan_outputs.hpp>
#include <nearsparse/diagonal/detail/product_checks.hpp>
#include <nearsparse/diagonal/operation.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace nearsparse::diagonal {

/// The symbolic CDM product of op(A) op(B): C's compact diagonals.
template <class Scalar, class MemorySpace>
class cdm_product_plan : public detail::plan_outputs<cdm_product_plan<Scalar, MemorySpace>,
                                                     cdm_matrix<Scalar, MemorySpace>> {
 public:
  using matrix = cdm_matrix<Scalar, MemorySpace>;

  template <class ExecSpace>
  cdm_product_plan(const ExecSpace& exec, const matrix& a, const matrix& b, op op_a = op::none,
                   op op_b = op::none)
      : op_a_(op_a),
        op_b_(op_b),
        n_(a.size()),
        a_indices_(a.host_indices()),
        b_indices_(b.host_indices()) {
    static_assert(Kokkos::SpaceAccessibility<ExecSpace, MemorySpace>::accessible,
                  "nearsparse::diagonal::cdm_product_plan: the execution space cannot reach the "
                  "matrices' memory");
    if (b.size() != n_)
      nearsparse::detail::throw_invalid_argument(
          "nearsparse::diagonal::cdm_product_plan", "A/B",
          nearsparse::detail::concat("do not conform: A is ", n_, " x ", n_, ", B is ", b.size(),
                                     " x ", b.size()));
    const auto logical = [this](int k, op o) { return o == op::none ? k : (n_ - k) % n_; };
    std::vector<int> a_logical;
    for (const int k : a_indices_) a_logical.push_back(logical(k, op_a));
    std::vector<bool> used(std::size_t(n_), false);
    for (const int la : a_logical)
      for (const int k : b_indices_) used[std::size_t((la + logical(k, op_b)) % n_)] = true;
    for (int k = 0; k < n_; ++k)
      if (used[std::size_t(k)]) c_indices_.push_back(k);
    multiply_adds_ = double(a_indices_.size()) * double(b_indices_.size()) * n_;
    c_lookup_.assign(std::size_t(n_), -1);
    for (std::size_t t = 0; t < c_indices_.size(); ++t)
      c_lookup_[std::size_t(c_indices_[t])] = int(t);
    upload(exec, a_logical);
  }

  int size() const { return n_; }
  op op_a() const { return op_a_; }
  op op_b() const { return op_b_; }
  /// C's compact diagonals, ascending.
  const std::vector<int>& c_indices() const { return c_indices_; }
  /// Floating-point operations of one product (2 per multiply-add, padding zeros included).
  double flops() const { return 2 * multiply_adds_; }

  Kokkos::View<int*, MemorySpace> a_logical() const { return a_logical_; }

  /// Throws nearsparse::invalid_argument unless A, B and C have the structure this plan is for.
  void check(const char* function, const matrix& a, const matrix& b, const matrix& c) const {
    check_one(function, "A", a, a_indices_);
    check_one(function, "B", b, b_indices_);
    check_one(function, "C", c, c_indices_);
  }

 private:
  friend class detail::plan_outputs<cdm_product_plan, matrix>;

  // C's values, unset.
  typename matrix::values_view c_values_uninitialized() const {
    return detail::cdm_c_values<Scalar, MemorySpace>(c_indices_.size(), std::size_t(n_));
  }

  // C with the product's structure around `values`. Its compact diagonals and lookup are the
  // plan's device arrays (shared, never written).
  matrix make_c_with(typename matrix::values_view values) const {
    return matrix(n_, c_indices_, c_lookup_, c_indices_device_, c_lookup_device_,
                  std::move(values));
  }

  // One device allocation: A's logical diagonals, then C's compact diagonals and lookup, which
  // every C made from the plan shares. Only the short lists are copied; on a device the lookup
  // (n entries) is filled by a kernel instead.
  template <class ExecSpace>
  void upload(const ExecSpace& exec, const std::vector<int>& a_logical) {
    const std::size_t na = a_logical.size(), nc = c_indices_.size(), n = std::size_t(n_);
    const auto storage = nearsparse::detail::cached_view<Kokkos::View<int*, MemorySpace>>(
        "nearsparse::cdm_plan", na + nc + n);
    a_logical_ = Kokkos::subview(storage, std::make_pair(std::size_t(0), na));
    c_indices_device_ = Kokkos::subview(storage, std::make_pair(na, na + nc));
    c_lookup_device_ = Kokkos::subview(storage, std::make_pair(na + nc, na + nc + n));
    constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible;
    Kokkos::View<int*, Kokkos::HostSpace> staged;
    if constexpr (!host)
      staged = Kokkos::View<int*, Kokkos::HostSpace>(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("nearsparse::cdm_plan")),
          na + nc);
    int* const written = host ? storage.data() : staged.data();
    std::copy(a_logical.begin(), a_logical.end(), written);
    std::copy(c_indices_.begin(), c_indices_.end(), written + na);
    if constexpr (host) {
      std::copy(c_lookup_.begin(), c_lookup_.end(), storage.data() + na + nc);
    } else {
      // A pageable copy: `staged` is read before the call returns.
      Kokkos::deep_copy(exec, Kokkos::subview(storage, std::make_pair(std::size_t(0), na + nc)),
                        staged);
      detail::cdm_fill_lookup(exec, c_indices_device_, c_lookup_device_);
    }
  }

  void check_one(const char* function, const char* name, const matrix& m,
                 const std::vector<int>& indices) const {
    if (m.size() != n_ || m.host_indices() != indices)
      nearsparse::detail::throw_invalid_argument(
          function, name,
          nearsparse::detail::concat("(", m.size(), " x ", m.size(), ", ", m.diagonal_count(),
                                     " compact diagonals) does not have the structure the plan "
                                     "was made for (",
                                     n_, " x ", n_, ", ", indices.size(), " compact diagonals)"));
  }

  op op_a_, op_b_;
  int n_;
  std::vector<int> a_indices_, b_indices_, c_indices_, c_lookup_;
  double multiply_adds_ = 0;
  // Parts of one device allocation.
  Kokkos::View<int*, MemorySpace> a_logical_, c_indices_device_, c_lookup_device_;
};

/// C = alpha op(A) op(B) + beta C with the structures of `plan`. With beta = 0, C is not read.
/// Throws nearsparse::invalid_argument unless A, B and C have the plan's structures and alpha and
/// beta are finite; nearsparse::unsupported for implementation::specialized where there is no
/// specialized path (the host backends' kernel for matrices in HostSpace is the only one).
template <class ExecSpace, class Scalar, class Mem>
void multiply(const ExecSpace& exec, const cdm_product_plan<Scalar, Mem>& plan,
              typename cdm_matrix<Scalar, Mem>::scalar_type alpha, const cdm_matrix<Scalar, Mem>& a,
              const cdm_matrix<Scalar, Mem>& b, typename cdm_matrix<Scalar, Mem>::scalar_type beta,
              const cdm_matrix<Scalar, Mem>& c, const product_options& options = {}) {
  detail::check_plan_product<ExecSpace>(plan, alpha, a, b, beta, c, options);
  detail::cdm_multiply_with_plan(exec, plan, alpha, a, b, beta, c, options);
}

/// C = op(A) op(B), allocated with the compact diagonals the symbolic phase finds.
template <class ExecSpace, class Scalar, class Mem>
cdm_matrix<Scalar, Mem> multiply(const ExecSpace& exec, const cdm_matrix<Scalar, Mem>& a,
                                 const cdm_matrix<Scalar, Mem>& b, op op_a = op::none,
                                 op op_b = op::none, const product_options& options = {}) {
  // Refused before the plan's work, as the HM product refuses it.
  detail::cdm_refuse_unavailable<ExecSpace, Mem>(options);
  const cdm_product_plan<Scalar, Mem> plan(exec, a, b, op_a, op_b);
  auto c = plan.make_c_uninitialized(exec);  // beta = 0: every value is written
  multiply(exec, plan, Scalar(1), a, b, Scalar(0), c, options);
  return c;
}

}  // namespace nearsparse::diagonal
