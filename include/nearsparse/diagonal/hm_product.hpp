#pragma once
// Structured-sparse products in HM storage: C = alpha op(A) op(B) + beta C.
//
// The diagonal set of C is found symbolically first (from the diagonal lists alone), so C is
// allocated once; a plan keeps that structure and the pairs of diagonals that meet on each
// diagonal of C, for repeated products with the same structure. Transposed operands are read
// through their reversed diagonals; no data moves. Rectangular matrices are allowed.

#include <nearsparse/core/detail/view_cache.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/diagonal/detail/cuda_hm_whole.hpp>
#include <nearsparse/diagonal/detail/hm_band_tiles.hpp>
#include <nearsparse/diagonal/detail/hm_device_symbolic.hpp>
#include <nearsparse/diagonal/detail/hm_product_kernels.hpp>
#include <nearsparse/diagonal/detail/hm_symbolic.hpp>
#include <nearsparse/diagonal/hm_matrix.hpp>
#include <nearsparse/diagonal/operation.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace nearsparse::diagonal {

template <class Scalar, class MemorySpace>
class hm_product_plan;

namespace detail {
void require_finite_scalar(const char* function, const char* name, double value);

template <class Scalar, class Mem>
hm_symbolic_product hm_symbolic_of(const char* function, const hm_matrix<Scalar, Mem>& a,
                                   const hm_matrix<Scalar, Mem>& b, op op_a, op op_b) {
  return hm_symbolic(function, {a.rows(), a.cols(), &a.host_offsets(), &a.host_starts(), op_a},
                     {b.rows(), b.cols(), &b.host_offsets(), &b.host_starts(), op_b});
}

/// The symbolic product and, when the device pass made it, C's arrays in device memory.
template <class Mem>
struct hm_symbolic_result {
  hm_symbolic_product host;
  hm_device_symbolic<Mem> device;  // storage empty after the host pass
};

/// The symbolic phase where it costs least: on the device for scattered diagonals in device
/// memory from hm_device_symbolic_min_pairs pairs on (or always with `on_device`, for tests),
/// otherwise on the host.
template <class ExecSpace, class Scalar, class Mem>
hm_symbolic_result<Mem> hm_symbolic_for(const ExecSpace& exec, const char* function,
                                        const hm_matrix<Scalar, Mem>& a,
                                        const hm_matrix<Scalar, Mem>& b, op op_a, op op_b,
                                        bool on_device = false) {
  const hm_operand_structure sa{a.rows(), a.cols(), &a.host_offsets(), &a.host_starts(), op_a};
  const hm_operand_structure sb{b.rows(), b.cols(), &b.host_offsets(), &b.host_starts(), op_b};
  constexpr bool host_memory = Kokkos::SpaceAccessibility<Kokkos::HostSpace, Mem>::accessible;
  hm_symbolic_result<Mem> r;
  if (on_device || (!host_memory && hm_symbolic_on_device_pays(sa, sb)))
    r.host = hm_symbolic_device(exec, function, sa, a.offsets(), sb, b.offsets(), r.device);
  else
    r.host = hm_symbolic(function, sa, sb);
  return r;
}

/// The private constructors of hm_matrix and hm_product_plan, for the product's code.
struct hm_product_access {
  template <class Scalar, class Mem>
  static hm_matrix<Scalar, Mem> make_matrix(int rows, int cols, std::vector<int> host_offsets,
                                            std::vector<index_type> host_starts,
                                            typename hm_matrix<Scalar, Mem>::offsets_view offsets,
                                            typename hm_matrix<Scalar, Mem>::starts_view starts,
                                            typename hm_matrix<Scalar, Mem>::values_view values) {
    return hm_matrix<Scalar, Mem>(rows, cols, std::move(host_offsets), std::move(host_starts),
                                  std::move(offsets), std::move(starts), std::move(values));
  }

  template <class ExecSpace, class Scalar, class Mem>
  static hm_product_plan<Scalar, Mem> make_plan(const ExecSpace& exec,
                                                const hm_matrix<Scalar, Mem>& a,
                                                const hm_matrix<Scalar, Mem>& b, op op_a, op op_b,
                                                hm_symbolic_result<Mem> symbolic) {
    return hm_product_plan<Scalar, Mem>(exec, a, b, op_a, op_b, std::move(symbolic));
  }

  template <class Scalar, class Mem>
  static hm_matrix<Scalar, Mem> make_c_with(const hm_product_plan<Scalar, Mem>& plan,
                                            typename hm_matrix<Scalar, Mem>::values_view values) {
    return plan.make_c_with(std::move(values));
  }
};

/// Whether the band tiles (detail/hm_band_tiles.hpp) pay for op(A) op(B) with C's structure `s`.
template <class Scalar, class Mem>
bool hm_band_tiles_pay_for(const hm_symbolic_product& s, const hm_matrix<Scalar, Mem>& a,
                           const hm_matrix<Scalar, Mem>& b, op op_a, op op_b) {
  return hm_band_tiles_pay(s.rows, s.inner, s.cols,
                           hm_band_range_of(a.host_offsets(), op_a == op::transpose),
                           hm_band_range_of(b.host_offsets(), op_b == op::transpose),
                           hm_band_range_of(s.c_offsets, false), s.multiply_adds);
}

/// C's offsets, starts and values for the symbolic product `s`, from the allocation cache, with
/// one wait for the device for the three (a few microseconds each on an H100).
template <class Scalar, class Mem>
auto cached_c_arrays(const hm_symbolic_product& s) {
  using matrix = hm_matrix<Scalar, Mem>;
  namespace core = nearsparse::detail;
  const std::size_t nc = s.c_offsets.size();
  bool wait = false;
  auto arrays =
      std::make_tuple(core::cached_view_taken<typename matrix::offsets_view>(
                          wait, "nearsparse::hm_product.C.offsets", nc),
                      core::cached_view_taken<typename matrix::starts_view>(
                          wait, "nearsparse::hm_product.C.starts", nc + 1),
                      core::cached_view_taken<typename matrix::values_view>(
                          wait, "nearsparse::hm_product.C.values", std::size_t(s.c_starts.back())));
  core::fence_cached_views<Mem>(wait);
  return arrays;
}

#ifdef KOKKOS_ENABLE_CUDA
/// C = alpha op(A) op(B) + beta C in band tiles on CUDA; C must have the symbolic product's
/// structure. tensor_cores = false runs the FMA form where the fp64 tensor cores would (tests).
/// write_c_structure: the kernel also writes C's device offsets and starts (C must store every
/// diagonal of its range).
template <class Scalar, class Mem>
void cuda_hm_band_multiply(const Kokkos::Cuda& exec, double alpha, const hm_matrix<Scalar, Mem>& a,
                           op op_a, const hm_matrix<Scalar, Mem>& b, op op_b, double beta,
                           const hm_matrix<Scalar, Mem>& c, bool tensor_cores = true,
                           bool write_c_structure = false) {
  const bool ta = op_a == op::transpose, tb = op_b == op::transpose;
  cuda_hm_band_args<Scalar> args;
  args.m = c.rows();
  args.k = ta ? a.rows() : a.cols();
  args.n = c.cols();
  args.a = {a.offsets().data(), a.starts().data(), ta, hm_band_range_of(a.host_offsets(), ta)};
  args.b = {b.offsets().data(), b.starts().data(), tb, hm_band_range_of(b.host_offsets(), tb)};
  args.c = {c.offsets().data(), c.starts().data(), false,
            hm_band_range_of(c.host_offsets(), false)};
  args.a_values = a.values().data();
  args.b_values = b.values().data();
  args.c_values = c.values().data();
  args.alpha = Scalar(alpha);
  args.beta = Scalar(beta);
  args.tensor_cores = tensor_cores;
  if (write_c_structure) {
    args.c_offsets_out = c.offsets().data();
    args.c_starts_out = c.starts().data();
  }
  cuda_hm_band_tiles(exec, args);
}

/// The whole product in band tiles, one launch. When C stores every diagonal of its range (two
/// bands make such a C) the kernel writes C's device structure; otherwise it is copied up first
/// (two small copies).
template <class Scalar, class Mem>
hm_matrix<Scalar, Mem> cuda_hm_band_whole(const Kokkos::Cuda& exec, const hm_matrix<Scalar, Mem>& a,
                                          const hm_matrix<Scalar, Mem>& b, op op_a, op op_b,
                                          hm_symbolic_product s) {
  const std::size_t nc = s.c_offsets.size();
  const bool c_is_band = hm_band_range_of(s.c_offsets, false).whole();
  auto [offsets, starts, values] = cached_c_arrays<Scalar, Mem>(s);
  if (!c_is_band) {
    // Pageable copies: the sources are consumed before the calls return.
    Kokkos::deep_copy(exec, offsets,
                      Kokkos::View<const int*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                          s.c_offsets.data(), nc));
    Kokkos::deep_copy(exec, starts,
                      Kokkos::View<const index_type*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                          s.c_starts.data(), nc + 1));
  }
  const auto c = hm_product_access::make_matrix<Scalar, Mem>(
      s.rows, s.cols, std::move(s.c_offsets), std::move(s.c_starts), std::move(offsets),
      std::move(starts), std::move(values));
  cuda_hm_band_multiply(exec, 1.0, a, op_a, b, op_b, 0.0, c, true, c_is_band);
  return c;
}

/// Whether the fused CUDA kernel (detail/cuda_hm_whole.hpp) takes this product.
inline bool cuda_hm_whole_takes(const hm_symbolic_product& s, int a_diagonals, int b_diagonals) {
  const std::size_t nc = s.c_offsets.size();
  return nc >= 1 && nc <= std::size_t(cuda_hm_whole_max_diagonals) &&
         s.chunk_ptr.back() <= std::numeric_limits<int>::max() &&  // a block per chunk
         a_diagonals <= cuda_hm_whole_max_operand_diagonals &&
         b_diagonals <= cuda_hm_whole_max_operand_diagonals;
}

/// The whole product through the fused CUDA kernel: C's three arrays from the allocation cache
/// and one launch.
template <class Scalar, class Mem>
hm_matrix<Scalar, Mem> cuda_hm_multiply_whole(const Kokkos::Cuda& exec,
                                              const hm_matrix<Scalar, Mem>& a,
                                              const hm_matrix<Scalar, Mem>& b, op op_a, op op_b,
                                              hm_symbolic_product s) {
  const std::size_t nc = s.c_offsets.size();
  auto [offsets, starts, values] = cached_c_arrays<Scalar, Mem>(s);
  cuda_hm_whole_args<Scalar> args;
  args.m = s.rows;
  args.k = s.inner;
  args.n = s.cols;
  args.a_transposed = op_a == op::transpose;
  args.b_transposed = op_b == op::transpose;
  args.a_diagonals = a.diagonal_count();
  args.b_diagonals = b.diagonal_count();
  args.a_offsets = a.offsets().data();
  args.a_starts = a.starts().data();
  args.a = a.values().data();
  args.b_offsets = b.offsets().data();
  args.b_starts = b.starts().data();
  args.b = b.values().data();
  args.c_diagonals = int(nc);
  args.host_c_offsets = s.c_offsets.data();
  args.host_c_starts = s.c_starts.data();
  args.c_offsets = offsets.data();
  args.c_starts = starts.data();
  args.c = values.data();
  cuda_hm_whole(exec, args);
  return hm_product_access::make_matrix<Scalar, Mem>(s.rows, s.cols, std::move(s.c_offsets),
                                                     std::move(s.c_starts), std::move(offsets),
                                                     std::move(starts), std::move(values));
}
#endif
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
      : hm_product_plan(exec, a, b, op_a, op_b,
                        detail::hm_symbolic_for(exec, "hm_product_plan", a, b, op_a, op_b)) {}

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
  /// Whether the output-stationary product on CUDA computes C in dense tiles over the band
  /// (operands that fill most of their diagonal range; detail/hm_band_tiles.hpp) rather than
  /// pair by pair.
  bool band_tiles() const { return band_tiles_; }

  /// A zero C with the product's structure. Like the product, its work is queued on `exec`.
  template <class ExecSpace>
  matrix make_c(const ExecSpace& exec) const {
    auto c = make_c_uninitialized(exec);
    Kokkos::deep_copy(exec, c.values(), Scalar(0));
    return c;
  }

  /// C with the product's structure and unset values, for a product with beta = 0. Its offsets
  /// and starts are the plan's device arrays (shared, never written), so it costs one allocation.
  template <class ExecSpace>
  matrix make_c_uninitialized(const ExecSpace&) const {
    return make_c_with(nearsparse::detail::cached_view<typename matrix::values_view>(
        "nearsparse::hm_product.C.values", std::size_t(c_stored_count())));
  }

  const detail::hm_device_pairs<MemorySpace>& device() const { return device_; }

 private:
  friend struct detail::hm_product_access;

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
                  "hm_product_plan: the execution space cannot reach the matrices' memory");
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
      value* out = at >= from && at < to ? reinterpret_cast<value*>(written + at) : nullptr;
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
    c_starts_ = Kokkos::subview(symbolic_storage_, std::make_pair(symbolic.c_starts_at(),
                                                                  symbolic.c_starts_at() + nc + 1));
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
    detail::hm_atomic(exec, plan.device(), a.offsets(), a.starts(), Scalar(alpha), a.values(),
                      b.offsets(), b.starts(), b.values(), Scalar(beta), c.values());
  } else if constexpr (Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible) {
    detail::hm_output_stationary_host(exec, plan.device(), Scalar(alpha), a.values(), b.values(),
                                      Scalar(beta), c.values());
  } else {
#ifdef KOKKOS_ENABLE_CUDA
    if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>)
      if (plan.band_tiles()) {
        detail::cuda_hm_band_multiply(exec, alpha, a, plan.op_a(), b, plan.op_b(), beta, c);
        return;
      }
#endif
    detail::hm_output_stationary_device(exec, plan.device(), Scalar(alpha), a.values(), b.values(),
                                        Scalar(beta), c.values());
  }
}

/// C = op(A) op(B), allocated with the diagonal set the symbolic phase finds. On CUDA, with the
/// output-stationary algorithm, a product in band tiles (see hm_product_plan::band_tiles) needs
/// no plan on the device, and neither does a C of at most 2000 diagonals (A and B of at most
/// 1024), which comes from one fused kernel (detail/cuda_hm_whole.hpp); otherwise a plan is made
/// and used once.
template <class ExecSpace, class Scalar, class Mem>
hm_matrix<Scalar, Mem> multiply(const ExecSpace& exec, const hm_matrix<Scalar, Mem>& a,
                                const hm_matrix<Scalar, Mem>& b, op op_a = op::none,
                                op op_b = op::none,
                                hm_algorithm algorithm = hm_algorithm::output_stationary) {
  static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                "multiply: the first argument must be an execution space instance");
  auto symbolic = detail::hm_symbolic_for(exec, "multiply", a, b, op_a, op_b);
#ifdef KOKKOS_ENABLE_CUDA
  // A small product on a GPU: one launch, no plan on the device.
  if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>)
    if (algorithm == hm_algorithm::output_stationary) {
      auto& s = symbolic.host;
      if (detail::hm_band_tiles_pay_for(s, a, b, op_a, op_b))
        return detail::cuda_hm_band_whole(exec, a, b, op_a, op_b, std::move(s));
      if (detail::cuda_hm_whole_takes(s, a.diagonal_count(), b.diagonal_count()))
        return detail::cuda_hm_multiply_whole(exec, a, b, op_a, op_b, std::move(s));
    }
#endif
  // C's values are taken before the plan queues its work: a View from the cache waits for the
  // device, and waiting after the plan's copies and kernel would hold the product's launch back.
  auto values = nearsparse::detail::cached_view<typename hm_matrix<Scalar, Mem>::values_view>(
      "nearsparse::hm_product.C.values", std::size_t(symbolic.host.c_starts.back()));
  const auto plan =
      detail::hm_product_access::make_plan(exec, a, b, op_a, op_b, std::move(symbolic));
  // beta = 0: every value is written
  auto c = detail::hm_product_access::make_c_with(plan, std::move(values));
  multiply(exec, plan, 1.0, a, b, 0.0, c, algorithm);
  return c;
}

}  // namespace nearsparse::diagonal
