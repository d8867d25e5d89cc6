#pragma once
// Structured-sparse products in HM storage: C = alpha op(A) op(B) + beta C.
//
// The diagonal set of C is found symbolically first (from the diagonal lists alone), so C is
// allocated once; a plan keeps that structure and the pairs of diagonals that meet on each
// diagonal of C, for repeated products with the same structure. Transposed operands are read
// through their reversed diagonals; no data moves. Rectangular matrices are allowed.
//
// Each product runs through one detail function (detail/hm_product_dispatch.hpp): the portable
// kernels on every execution space, and on CUDA, OpenMP and Serial the specialized kernels where
// product_options::implementation lets them and they serve the product.

#include <nearsparse/core/detail/view_cache.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/diagonal/detail/hm_product_dispatch.hpp>
#include <nearsparse/diagonal/detail/plan_outputs.hpp>
#include <nearsparse/diagonal/hm_matrix.hpp>
#include <nearsparse/diagonal/operation.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace nearsparse::diagonal {

/// The symbolic HM product of op(A) op(B): C's structure and the pairs of diagonals meeting on
/// it. Valid for any A and B with the same shapes and stored diagonals as those it was built from.
template <class Scalar, class MemorySpace>
class hm_product_plan : public detail::plan_outputs<hm_product_plan<Scalar, MemorySpace>,
                                                    hm_matrix<Scalar, MemorySpace>> {
 public:
  using matrix = hm_matrix<Scalar, MemorySpace>;

  template <class ExecSpace>
  hm_product_plan(const ExecSpace& exec, const matrix& a, const matrix& b, op op_a = op::none,
                  op op_b = op::none)
      : hm_product_plan(exec, a, b, op_a, op_b,
                        detail::hm_symbolic_for(exec, "nearsparse::diagonal::hm_product_plan", a, b,
                                                op_a, op_b)) {}

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
  /// Whether the output-stationary product on CUDA, with implementation::automatic, computes C
  /// in dense tiles over the band (operands that fill most of their diagonal range;
  /// detail/hm_band_tiles.hpp) rather than pair by pair.
  bool band_tiles() const { return band_tiles_; }

  /// The plan's arrays as its kernels read them.
  const detail::hm_device_pairs<MemorySpace>& device() const { return device_; }

 private:
  friend struct detail::hm_product_access;
  friend class detail::plan_outputs<hm_product_plan, matrix>;

  // C's values, c_stored_count() of them, unset.
  typename matrix::values_view c_values_uninitialized() const {
    return detail::hm_c_values<Scalar, MemorySpace>(std::size_t(c_stored_count()));
  }

  // C with the product's structure around `values` (c_stored_count() of them).
  matrix make_c_with(typename matrix::values_view values) const {
    return detail::hm_product_access::make_matrix<Scalar, MemorySpace>(
        rows(), cols(), symbolic_.c_offsets, symbolic_.c_starts, c_offsets_, c_starts_,
        std::move(values));
  }

  // From a symbolic phase already done (the one-call multiply does it first).
  template <class ExecSpace>
  hm_product_plan(const ExecSpace& exec, const matrix& a, const matrix& b, op op_a, op op_b,
                  detail::hm_symbolic_result<MemorySpace> symbolic)
      : op_a_(op_a),
        op_b_(op_b),
        a_rows_(a.rows()),
        a_cols_(a.cols()),
        b_rows_(b.rows()),
        b_cols_(b.cols()),
        a_offsets_(a.host_offsets()),
        b_offsets_(b.host_offsets()),
        symbolic_(std::move(symbolic.host)),
        band_tiles_(detail::hm_band_tiles_pay_for(symbolic_, a, b, op_a, op_b)) {
    static_assert(Kokkos::SpaceAccessibility<ExecSpace, MemorySpace>::accessible,
                  "nearsparse::diagonal::hm_product_plan: the execution space cannot reach the "
                  "matrices' memory");
    if (symbolic.device.storage.data() != nullptr)
      build_from_device_symbolic(exec, a, b, symbolic.device);
    else
      build_device(exec, a, b);
  }

 public:
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

  // The device arrays live in one buffer: the pairs, what the host's symbolic pass found, C's
  // index by offset and each chunk's diagonal. For host memory everything is written in place.
  // On a device, a small plan is built on the host and copied in one transfer (a kernel launch
  // costs more than the copy there); a large one uploads only the symbolic pass's arrays and a
  // kernel writes the pairs and the rest where they are used.
  template <class ExecSpace>
  void build_device(const ExecSpace& exec, const matrix& a, const matrix& b) {
    using detail::index_type;
    const auto& s = symbolic_;
    const std::size_t pairs = std::size_t(s.pair_ptr.back());
    const std::size_t nc = s.c_offsets.size();
    const std::size_t chunks = std::size_t(s.chunk_ptr.back());
    const auto words_of = [](std::size_t count, std::size_t size) {
      return (count * size + sizeof(index_type) - 1) / sizeof(index_type);
    };
    const std::size_t symbolic_words = 3 * (nc + 1) + words_of(nc, sizeof(int));
    const std::size_t words = 4 * pairs + symbolic_words +
                              words_of(std::size_t(s.c_range), sizeof(int)) +
                              words_of(chunks, sizeof(int));
    constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible;
    const bool on_host = host || words <= detail::hm_small_plan_words;
    auto& d = device_;
    bool wait = false;  // one wait for the device for both cached arrays
    d.storage = nearsparse::detail::cached_view_taken<Kokkos::View<index_type*, MemorySpace>>(
        wait, "nearsparse::hm_plan", words);
    c_offsets_ = nearsparse::detail::cached_view_taken<Kokkos::View<int*, MemorySpace>>(
        wait, "nearsparse::hm_product.C.offsets", nc);
    nearsparse::detail::fence_cached_views<MemorySpace>(wait);
    set_shape();

    // The host writes words [from, to) of the buffer: all of it, or the symbolic pass's arrays.
    const std::size_t from = on_host ? 0 : 4 * pairs;
    const std::size_t to = on_host ? words : 4 * pairs + symbolic_words;
    // Staged in a host buffer kept from plan to plan: a fresh one would fault its pages in.
    Kokkos::View<index_type*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> staged;
    if constexpr (!host) staged = decltype(staged)(detail::hm_staging_buffer(to - from), to - from);
    index_type* const written = host ? d.storage.data() : staged.data() - from;
    // Points `view` at the next `count` values of the buffer; returns where the host writes them
    // (null past `to`).
    std::size_t at = 0;
    const auto carve = [&](auto& view, std::size_t count) {
      using array = std::decay_t<decltype(view)>;
      using value = typename array::value_type;
      view = array(reinterpret_cast<value*>(d.storage.data() + at), count);
      // from <= at < to, in one unsigned comparison (from is 0 for plans in host memory)
      value* out = at - from < to - from ? reinterpret_cast<value*>(written + at) : nullptr;
      at += words_of(count, sizeof(value));
      return out;
    };
    const auto put = [&](const auto& v, auto& view) {
      auto* out = carve(view, v.size());
      std::copy(v.begin(), v.end(), out);
    };
    auto* host_pairs = carve(d.pairs, pairs);
    put(s.pair_ptr, d.pair_ptr);
    put(s.chunk_ptr, d.chunk_ptr);
    put(s.c_starts, d.c_starts);
    c_starts_ = Kokkos::subview(d.storage, std::make_pair(at - (nc + 1), at));
    put(s.c_offsets, d.c_offsets);
    auto* host_index = carve(d.c_index, std::size_t(s.c_range));
    auto* host_chunk_diagonal = carve(d.chunk_diagonal, chunks);
    if (on_host) {
      detail::hm_c_index(s, host_index);
      detail::hm_fill_pairs(s, host_index, host_pairs);
      for (std::size_t t = 0; t < nc; ++t)
        std::fill(host_chunk_diagonal + s.chunk_ptr[t], host_chunk_diagonal + s.chunk_ptr[t + 1],
                  int(t));
    }
    if constexpr (host) {
      std::copy(s.c_offsets.begin(), s.c_offsets.end(), c_offsets_.data());
    } else {
      // A pageable copy: the source is consumed before the call returns, so the next plan may
      // write `staged` again.
      Kokkos::deep_copy(exec, Kokkos::subview(d.storage, std::make_pair(from, to)), staged);
      if (on_host)
        Kokkos::deep_copy(exec, c_offsets_, d.c_offsets);
      else
        detail::hm_fill_pairs_device(exec, d, c_offsets_, a.offsets(), a.starts(), b.offsets(),
                                     b.starts());
    }
  }

  // The plan's scalars, as its kernels read them.
  void set_shape() {
    const auto& s = symbolic_;
    auto& d = device_;
    d.rows = s.rows;
    d.inner = s.inner;
    d.cols = s.cols;
    d.c_lo = s.c_lo;
    d.a_transposed = op_a_ == op::transpose;
    d.b_transposed = op_b_ == op::transpose;
    d.chunks = s.chunk_ptr.back();
  }

  // After the device's symbolic pass C's arrays are already where the kernels read them (the
  // plan keeps that allocation): only the pairs, C's index by offset and each chunk's diagonal
  // are added, by the pair-writing kernel, and nothing is copied from the host.
  template <class ExecSpace>
  void build_from_device_symbolic(const ExecSpace& exec, const matrix& a, const matrix& b,
                                  const detail::hm_device_symbolic<MemorySpace>& symbolic) {
    using detail::index_type;
    const auto& s = symbolic_;
    const std::size_t pairs = std::size_t(s.pair_ptr.back());
    const std::size_t nc = s.c_offsets.size();
    const std::size_t chunks = std::size_t(s.chunk_ptr.back());
    const auto words_of_ints = [](std::size_t count) {
      return (count * sizeof(int) + sizeof(index_type) - 1) / sizeof(index_type);
    };
    auto& d = device_;
    bool wait = false;
    d.storage = nearsparse::detail::cached_view_taken<Kokkos::View<index_type*, MemorySpace>>(
        wait, "nearsparse::hm_plan",
        4 * pairs + words_of_ints(std::size_t(s.c_range)) + words_of_ints(chunks));
    c_offsets_ = nearsparse::detail::cached_view_taken<Kokkos::View<int*, MemorySpace>>(
        wait, "nearsparse::hm_product.C.offsets", nc);
    nearsparse::detail::fence_cached_views<MemorySpace>(wait);
    set_shape();
    index_type* at = d.storage.data();
    d.pairs = decltype(d.pairs)(reinterpret_cast<detail::hm_pair*>(at), pairs);
    at += 4 * pairs;
    d.c_index = decltype(d.c_index)(reinterpret_cast<int*>(at), std::size_t(s.c_range));
    at += words_of_ints(std::size_t(s.c_range));
    d.chunk_diagonal = decltype(d.chunk_diagonal)(reinterpret_cast<int*>(at), chunks);
    d.pair_ptr = decltype(d.pair_ptr)(symbolic.pair_ptr().data(), nc + 1);
    d.chunk_ptr = decltype(d.chunk_ptr)(symbolic.chunk_ptr().data(), nc + 1);
    d.c_starts = decltype(d.c_starts)(symbolic.c_starts().data(), nc + 1);
    d.c_offsets = decltype(d.c_offsets)(symbolic.c_offsets().data(), nc);
    symbolic_storage_ = symbolic.storage;
    c_starts_ = Kokkos::subview(
        symbolic_storage_, std::make_pair(symbolic.c_starts_at(), symbolic.c_starts_at() + nc + 1));
    detail::hm_fill_pairs_device(exec, d, c_offsets_, a.offsets(), a.starts(), b.offsets(),
                                 b.starts());
  }

  op op_a_, op_b_;
  int a_rows_, a_cols_, b_rows_, b_cols_;
  std::vector<int> a_offsets_, b_offsets_;
  detail::hm_symbolic_product symbolic_;
  bool band_tiles_ = false;
  detail::hm_device_pairs<MemorySpace> device_;
  Kokkos::View<int*, MemorySpace> c_offsets_;                // C's, shared with every C made
  Kokkos::View<detail::index_type*, MemorySpace> c_starts_;  // in one of the two storages
  // C's arrays from the device's symbolic pass (empty after the host's)
  Kokkos::View<detail::index_type*, MemorySpace> symbolic_storage_;
};

/// C = alpha op(A) op(B) + beta C with the structures of `plan`. With beta = 0, C is not read.
/// Throws nearsparse::invalid_argument unless A, B and C have the plan's structures and alpha and
/// beta are finite; nearsparse::unsupported for implementation::specialized where there is no
/// specialized path (product_options).
template <class ExecSpace, class Scalar, class Mem>
void multiply(const ExecSpace& exec, const hm_product_plan<Scalar, Mem>& plan,
              typename hm_matrix<Scalar, Mem>::scalar_type alpha, const hm_matrix<Scalar, Mem>& a,
              const hm_matrix<Scalar, Mem>& b, typename hm_matrix<Scalar, Mem>::scalar_type beta,
              const hm_matrix<Scalar, Mem>& c, const product_options& options = {}) {
  detail::check_plan_product<ExecSpace>(plan, alpha, a, b, beta, c, options);
  detail::hm_multiply_with_plan(exec, plan, alpha, a, b, beta, c, options);
}

/// C = op(A) op(B), allocated with the diagonal set the symbolic phase finds. On CUDA, with the
/// output-stationary algorithm and implementation automatic, a product in band tiles (see
/// hm_product_plan::band_tiles) needs no plan on the device, and neither does a C of at most 2000
/// diagonals (A and B of at most 1024), which comes from one fused kernel
/// (detail/cuda_hm_whole.hpp); on OpenMP and Serial, for matrices in HostSpace, the host kernel
/// reads the symbolic phase's pairs from a per-thread buffer, with no plan; otherwise a plan is
/// made and used once. C's values come from an allocation cache that also keeps host memory
/// (detail/plan_outputs.hpp). With implementation
/// specialized the band tiles also run products they do not pay for; a product neither kernel
/// can run throws nearsparse::unsupported.
template <class ExecSpace, class Scalar, class Mem>
hm_matrix<Scalar, Mem> multiply(const ExecSpace& exec, const hm_matrix<Scalar, Mem>& a,
                                const hm_matrix<Scalar, Mem>& b, op op_a = op::none,
                                op op_b = op::none, const product_options& options = {}) {
  detail::static_assert_product<ExecSpace, Mem>();
  detail::check_product_options(detail::multiply_name, options);
  auto symbolic = detail::hm_symbolic_for(exec, detail::multiply_name, a, b, op_a, op_b);
  return detail::hm_multiply_whole(exec, a, b, op_a, op_b, std::move(symbolic), options);
}

}  // namespace nearsparse::diagonal
