#pragma once
// Structured-sparse products in HM storage: C = alpha op(A) op(B) + beta C.
//
// The diagonal set of C is found symbolically first (from the diagonal lists alone), so C is
// allocated once; a plan keeps that structure and the pairs of diagonals that meet on each
// diagonal of C, for repeated products with the same structure. Transposed operands are read
// through their reversed diagonals; no data moves. Rectangular matrices are allowed.

#include <nearsparse/core/detail/view_cache.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/diagonal/detail/hm_product_kernels.hpp>
#include <nearsparse/diagonal/detail/hm_symbolic.hpp>
#include <nearsparse/diagonal/hm_matrix.hpp>
#include <nearsparse/diagonal/operation.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace nearsparse::diagonal {

namespace detail {
template <class T, class Mem, class ExecSpace>
Kokkos::View<T*, Mem> to_device(const ExecSpace& exec, const std::vector<T>& host,
                                const char* label) {
  // A std::string: Kokkos 3 reads a bare const char* in view_alloc as memory to wrap.
  const std::string name(label);
  auto out = nearsparse::detail::cached_view<Kokkos::View<T*, Mem>>(name, host.size());
  Kokkos::View<T*, Kokkos::HostSpace> staged(Kokkos::view_alloc(Kokkos::WithoutInitializing, name),
                                             host.size());
  for (std::size_t k = 0; k < host.size(); ++k) staged(k) = host[k];
  Kokkos::deep_copy(exec, out, staged);
  exec.fence();  // `staged` dies here
  return out;
}

void require_finite_scalar(const char* function, const char* name, double value);
}  // namespace detail

/// The symbolic HM product of op(A) op(B): C's structure and the pairs of diagonals meeting on
/// it. Valid for any A and B with the same shapes and stored diagonals as those it was built from.
template <class Scalar, class MemorySpace>
class hm_product_plan {
 public:
  using matrix = hm_matrix<Scalar, MemorySpace>;

  template <class ExecSpace>
  hm_product_plan(const ExecSpace& exec, const matrix& a, const matrix& b, op op_a = op::none,
                  op op_b = op::none)
      : op_a_(op_a),
        op_b_(op_b),
        a_rows_(a.rows()),
        a_cols_(a.cols()),
        b_rows_(b.rows()),
        b_cols_(b.cols()),
        a_offsets_(a.host_offsets()),
        b_offsets_(b.host_offsets()) {
    static_assert(Kokkos::SpaceAccessibility<ExecSpace, MemorySpace>::accessible,
                  "hm_product_plan: the execution space cannot reach the matrices' memory");
    symbolic_ = detail::hm_symbolic(
        "hm_product_plan", {a.rows(), a.cols(), &a.host_offsets(), &a.host_starts(), op_a},
        {b.rows(), b.cols(), &b.host_offsets(), &b.host_starts(), op_b});
    upload(exec);
  }

  int rows() const { return symbolic_.rows; }
  int cols() const { return symbolic_.cols; }
  int inner() const { return symbolic_.inner; }
  op op_a() const { return op_a_; }
  op op_b() const { return op_b_; }
  /// Offsets of C's diagonals, ascending.
  const std::vector<int>& c_offsets() const { return symbolic_.c_offsets; }
  /// Number of stored values of C.
  std::int64_t c_stored_count() const { return symbolic_.c_starts.back(); }
  /// Pairs of diagonals of A and B that meet somewhere in C.
  std::int64_t pair_count() const { return symbolic_.pair_ptr.back(); }
  /// Floating-point operations of one product (2 per multiply-add).
  double flops() const { return 2 * symbolic_.multiply_adds; }

  /// A zero C with the product's structure.
  template <class ExecSpace>
  matrix make_c(const ExecSpace& exec) const {
    return matrix(exec, rows(), cols(), c_offsets(), "nearsparse::hm_product.C");
  }

  /// C with the product's structure and unset values, for a product with beta = 0.
  template <class ExecSpace>
  matrix make_c_uninitialized(const ExecSpace& exec) const {
    return matrix(exec, rows(), cols(), c_offsets(), "nearsparse::hm_product.C",
                  values_init::uninitialized);
  }

  const detail::hm_device_pairs<MemorySpace>& device() const { return device_; }

  /// Throws nearsparse::invalid_argument unless A, B and C have the structure this plan is for.
  void check(const char* function, const matrix& a, const matrix& b, const matrix& c) const {
    check_one(function, "A", a, a_rows_, a_cols_, a_offsets_);
    check_one(function, "B", b, b_rows_, b_cols_, b_offsets_);
    check_one(function, "C", c, rows(), cols(), c_offsets());
  }

 private:
  static void check_one(const char* function, const char* name, const matrix& m, int rows, int cols,
                        const std::vector<int>& offsets) {
    if (m.rows() != rows || m.cols() != cols || m.host_offsets() != offsets)
      nearsparse::detail::throw_invalid_argument(
          function, name,
          nearsparse::detail::concat("(", m.rows(), " x ", m.cols(), ", ", m.diagonal_count(),
                                     " diagonals) does not have the structure the plan was made "
                                     "for (",
                                     rows, " x ", cols, ", ", offsets.size(), " diagonals)"));
  }

  // Packs the device arrays into one buffer, the pairs written straight into it, and copies it
  // over in one transfer.
  template <class ExecSpace>
  void upload(const ExecSpace& exec) {
    const auto& s = symbolic_;
    const std::size_t pairs = std::size_t(s.pair_ptr.back());
    const std::size_t words = 4 * pairs + pairs + 3 * s.pair_ptr.size() + s.a_ptr.size();
    device_.storage =
        nearsparse::detail::cached_view<Kokkos::View<detail::index_type*, MemorySpace>>(
            "nearsparse::hm_plan", words);
    Kokkos::View<detail::index_type*, Kokkos::HostSpace> staged(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("nearsparse::hm_plan")), words);
    std::size_t at = 0;
    const auto carve = [&](auto& view, std::size_t count) {
      using value = typename std::decay_t<decltype(view)>::value_type;
      view = std::decay_t<decltype(view)>(reinterpret_cast<value*>(device_.storage.data() + at),
                                          count);
      auto* host = reinterpret_cast<value*>(staged.data() + at);
      at += count * sizeof(value) / sizeof(detail::index_type);
      return host;
    };
    auto* host_pairs = carve(device_.pairs, pairs);
    auto* host_order = carve(device_.a_order, pairs);
    detail::hm_fill_pairs(s, host_pairs, host_order);
    const auto put = [&](const std::vector<detail::index_type>& v, auto& view) {
      auto* host = carve(view, v.size());
      std::copy(v.begin(), v.end(), host);
    };
    put(s.pair_ptr, device_.pair_ptr);
    put(s.chunk_ptr, device_.chunk_ptr);
    put(s.c_starts, device_.c_starts);
    put(s.a_ptr, device_.a_ptr);
    Kokkos::deep_copy(exec, device_.storage, staged);
    exec.fence();  // `staged` dies here
    device_.chunks = s.chunk_ptr.back();
  }

  op op_a_, op_b_;
  int a_rows_, a_cols_, b_rows_, b_cols_;
  std::vector<int> a_offsets_, b_offsets_;
  detail::hm_symbolic_product symbolic_;
  detail::hm_device_pairs<MemorySpace> device_;
};

/// C = alpha op(A) op(B) + beta C with the structures of `plan`. With beta = 0, C is not read.
template <class ExecSpace, class Scalar, class Mem>
void multiply(const ExecSpace& exec, const hm_product_plan<Scalar, Mem>& plan, double alpha,
              const hm_matrix<Scalar, Mem>& a, const hm_matrix<Scalar, Mem>& b, double beta,
              const hm_matrix<Scalar, Mem>& c,
              hm_algorithm algorithm = hm_algorithm::output_stationary) {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "multiply: the first argument must be an execution space instance");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, Mem>::accessible,
                "multiply: the execution space cannot reach the matrices' memory");
  detail::require_finite_scalar("multiply", "alpha", alpha);
  detail::require_finite_scalar("multiply", "beta", beta);
  plan.check("multiply", a, b, c);
  if (algorithm == hm_algorithm::atomic) {
    detail::hm_atomic(exec, plan.device(), a.starts(), Scalar(alpha), a.values(), b.values(),
                      Scalar(beta), c.values());
  } else if constexpr (Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible) {
    detail::hm_output_stationary_host(exec, plan.device(), Scalar(alpha), a.values(), b.values(),
                                      Scalar(beta), c.values());
  } else {
    detail::hm_output_stationary_device(exec, plan.device(), Scalar(alpha), a.values(), b.values(),
                                        Scalar(beta), c.values());
  }
}

/// C = op(A) op(B), allocated with the diagonal set the symbolic phase finds.
template <class ExecSpace, class Scalar, class Mem>
hm_matrix<Scalar, Mem> multiply(const ExecSpace& exec, const hm_matrix<Scalar, Mem>& a,
                                const hm_matrix<Scalar, Mem>& b, op op_a = op::none,
                                op op_b = op::none,
                                hm_algorithm algorithm = hm_algorithm::output_stationary) {
  const hm_product_plan<Scalar, Mem> plan(exec, a, b, op_a, op_b);
  auto c = plan.make_c_uninitialized(exec);  // beta = 0: every value is written
  multiply(exec, plan, 1.0, a, b, 0.0, c, algorithm);
  return c;
}

}  // namespace nearsparse::diagonal
