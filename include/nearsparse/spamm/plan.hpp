#pragma once
// A reusable SpAMM plan: A and B packed once (rounded to the input format, padded, B transposed)
// with their tile norm maps, and a threshold tau with its work matrix V. Repeated products with
// the same operands, new tau values, tau searches and matrix powers (update_b with the previous
// product) all reuse what the plan holds.
//
// Building a plan queues its kernels (packing with the finite check, get-norm, the count of kept
// products or the tau search) and waits for the device once, at the end, for what the host must
// know: whether A or B held non-finite values, the kept count, the tau found. Its device storage
// comes from the allocation cache (core/detail/view_cache.hpp), so plans made one after another
// (a whole spamm::multiply call in a loop) allocate and free nothing. On a GPU the bisection of a
// tau search of up to 2^19 norm products runs in one launch (search_tau_in_one_team); a larger
// one, or one on the host, counts with the whole device once per step (spamm::search_launch).
//
//   nearsparse::spamm::options opt;
//   opt.precision = nearsparse::spamm::precision::fp16;
//   opt.target_valid_ratio = 0.10;
//   nearsparse::spamm::plan plan(exec, A, B, opt);  // pack, get-norm, tau search
//   plan.multiply(exec, 1.0f, 0.0f, C);             // C = A B over the kept 10 % of tile pairs
//   plan.valid_ratio(); plan.work_matrix();         // what was kept
//
// With an error target instead (relative to ||A||_F ||B||_F; see options.hpp):
//
//   opt.precision = nearsparse::spamm::precision::fp32;
//   opt.target_valid_ratio = 0;                     // one target, not both
//   opt.target_error = 1e-3;                        // at least rounding_floor(opt.precision)
//   nearsparse::spamm::plan plan(exec, A, B, opt);  // tau: the largest that meets 1e-3
//   plan.error_bound(exec).relative();              // <= 1e-3
//   plan.update(exec, A2, B2);                      // new operands, then
//   plan.search_error(exec, 1e-4);                  // a new tau for them and a new target
//
// The measured error of a product C against an exact one: spamm::measure_error(exec, exact, C)
// (error.hpp), whose relative_to(plan.error_bound(exec).norm_product) is in the measure of the
// bound, and relative() in that of ||A B||_F.

#include <nearsparse/core/detail/elementwise.hpp>
#include <nearsparse/core/detail/scalar_traits.hpp>
#include <nearsparse/core/detail/view_cache.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/view_checks.hpp>
#include <nearsparse/spamm/detail/error_bound.hpp>
#include <nearsparse/spamm/detail/geometry.hpp>
#include <nearsparse/spamm/detail/kept_products.hpp>
#include <nearsparse/spamm/detail/multiply.hpp>
#include <nearsparse/spamm/detail/norms.hpp>
#include <nearsparse/spamm/detail/pack.hpp>
#include <nearsparse/spamm/detail/pack_norms.hpp>
#include <nearsparse/spamm/detail/tau_search.hpp>
#include <nearsparse/spamm/options.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace nearsparse::spamm {

namespace detail {

/// Throws nearsparse::invalid_argument for options no plan can use.
void validate_options(const char* function, const options& opt);
void validate_search(const char* function, double target, const search_options& search);
/// An error target of search_error: finite, > 0, at least rounding_floor(precision); errors
/// name `argument`.
void validate_error_search(const char* function, double target_error, spamm::precision precision,
                           const search_options& search, const char* argument = "target_error");

/// Element types A and B may hold: any real type convertible to double (float, double, the
/// integer types, Kokkos' half_t).
template <class T>
inline constexpr bool is_real_input_v =
    !nearsparse::detail::is_kokkos_complex<std::remove_cv_t<T>>::value &&
    std::is_constructible<double, T>::value;

template <class T>
inline constexpr bool is_real_output_v =
    std::is_same<T, float>::value || std::is_same<T, double>::value;

/// Compile-time checks of the operands every SpAMM plan takes.
template <class ExecSpace, class AView, class BView>
constexpr void static_assert_operands() {
  static_assert_matrix<ExecSpace, AView>();
  static_assert_matrix<ExecSpace, BView>();
  static_assert(
      is_real_input_v<typename AView::value_type> && is_real_input_v<typename BView::value_type>,
      "nearsparse::spamm: A and B must hold real values (float, double, half_t)");
}

/// Compile-time checks of the product every SpAMM plan writes.
template <class ExecSpace, class CView>
constexpr void static_assert_output() {
  static_assert_matrix<ExecSpace, CView>();
  static_assert(is_real_output_v<typename CView::non_const_value_type>,
                "nearsparse::spamm: C must hold float or double");
  static_assert(!std::is_const<typename CView::value_type>::value,
                "nearsparse::spamm: C must be writable");
}

/// Element (i, j) of C = beta * C (zero where beta is zero: NaN in C does not propagate).
template <class CView>
struct scale_c_element {
  CView c;
  typename CView::non_const_value_type beta;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t i, const std::int64_t j) const {
    using c_value = typename CView::non_const_value_type;
    c(i, j) = beta == c_value(0) ? c_value(0) : beta * c(i, j);
  }
};

/// The device pointers and parameters of one product under `opt`.
inline multiply_problem make_problem(const options& opt, const geometry& geo, const void* a,
                                     const void* b, const double* a_norms, const double* b_norms,
                                     double tau) {
  multiply_problem p;
  p.precision = opt.precision;
  p.geo = geo;
  p.a = a;
  p.b = b;
  p.a_norms = a_norms;
  p.b_norms = b_norms;
  p.tau = tau;
  p.stride = opt.load_balance_stride;
  return p;
}

/// Selects plan's constructor that names another entry point in its errors (multiply).
struct named_call {
  const char* function;
};

}  // namespace detail

/// Kept tile products as lists per output tile (see detail::kept_list).
template <class MemorySpace>
using kept_list = detail::kept_list<MemorySpace>;

template <class ExecSpace>
class plan {
 public:
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  /// Tile norms: A's is MT x KT, B's is KT x NT.
  using norm_map_type = detail::norm_map<memory_space>;
  /// V(i, j): kept tile products of output tile (i, j), MT x NT.
  using work_matrix_type = detail::work_matrix<memory_space>;

  template <class AView, class BView>
  plan(const ExecSpace& exec, const AView& a, const BView& b,
       const spamm::options& opt = spamm::options{})
      : plan(detail::named_call{"nearsparse::spamm::plan"}, exec, a, b, opt) {}

  /// The constructor above, naming `call.function` in its errors.
  template <class AView, class BView>
  plan(detail::named_call call, const ExecSpace& exec, const AView& a, const BView& b,
       const spamm::options& opt)
      : options_(opt) {
    detail::static_assert_operands<ExecSpace, AView, BView>();
    const char* fn = call.function;
    detail::validate_options(fn, opt);
    require_extent_match(fn, "B", b, 0, "A", a, 1);
    constexpr std::size_t limit = std::numeric_limits<int>::max() - detail::block_pad;
    require(a.extent(0) <= limit && a.extent(1) <= limit && b.extent(1) <= limit, fn, "A",
            nearsparse::detail::concat("and B (", nearsparse::detail::extents_string(a), " times ",
                                       nearsparse::detail::extents_string(b),
                                       ") exceed the supported extent ", limit));
    geo_ = detail::geometry(static_cast<int>(a.extent(0)), static_cast<int>(b.extent(1)),
                            static_cast<int>(a.extent(1)), opt.tile);
    allocate(exec);
    queue_operand(exec, fn, a, detail::operand::a);
    queue_operand(exec, fn, b, detail::operand::b);
    if (opt.target_valid_ratio > 0) {
      search_tau(exec, opt.target_valid_ratio, opt.search, fn);
    } else if (opt.target_error > 0) {
      search_error(exec, opt.target_error, opt.search, fn);
    } else {
      set_tau(exec, opt.tau, fn);
    }
  }

  /// Refreshes the plan in place for new operands of the plan's extents, as an iteration that
  /// multiplies new matrices each step needs: A and B are packed into the plan's storage, their
  /// norm maps and V recomputed at the plan's tau. It allocates nothing and does not wait for the
  /// device; the kept count and the check of A and B for non-finite values are taken by the next
  /// call that needs them (check, kept_count, valid_ratio, set_tau, search_tau, update_a,
  /// update_b), which waits for the device then and throws nearsparse::invalid_argument there
  /// if A or B held NaN or Inf (with options::check_finite). A product queued before that check
  /// runs on whatever the operands held. The refreshed plan computes bit for bit what a new plan
  /// with the same options and tau computes.
  template <class AView, class BView>
  void update(const ExecSpace& exec, const AView& a, const BView& b) {
    detail::static_assert_operands<ExecSpace, AView, BView>();
    constexpr const char* fn = "nearsparse::spamm::plan::update";
    require_extents(fn, "A", a, geo_.m, geo_.k);
    require_extents(fn, "B", b, geo_.k, geo_.n);
    queue_operand(exec, fn, a, detail::operand::a);
    queue_operand(exec, fn, b, detail::operand::b);
    detail::count_kept_into(exec, a_norms_, b_norms_, tau_, work_,
                            word(detail::search_words::kept));
    bound_known_ = false;
    pending_ = fn;
    pending_exec_ = exec;
  }

  /// Waits for what update() left pending on `exec` (the instance update() was given, or one
  /// ordered after it): throws nearsparse::invalid_argument (naming
  /// nearsparse::spamm::plan::update) if the operands it took held non-finite values, again at
  /// every call until an update with finite operands, and takes the kept count. Does nothing
  /// when nothing is pending. A plan with an update pending is not to be read from several
  /// threads at once (the first read takes the count).
  void check(const ExecSpace& exec) const {
    if (pending_ != nullptr) settle(exec, pending_);
  }

  /// Replaces A by a matrix of the same extents (packing and norms again; tau kept).
  template <class AView>
  void update_a(const ExecSpace& exec, const AView& a) {
    static_assert_matrix<ExecSpace, AView>();
    constexpr const char* fn = "nearsparse::spamm::plan::update_a";
    require_extents(fn, "A", a, geo_.m, geo_.k);
    queue_operand(exec, fn, a, detail::operand::a);
    set_tau(exec, tau_, fn);
  }

  /// Replaces B by a matrix of the same extents: for a power A^p, pass each product back in.
  template <class BView>
  void update_b(const ExecSpace& exec, const BView& b) {
    static_assert_matrix<ExecSpace, BView>();
    constexpr const char* fn = "nearsparse::spamm::plan::update_b";
    require_extents(fn, "B", b, geo_.k, geo_.n);
    queue_operand(exec, fn, b, detail::operand::b);
    set_tau(exec, tau_, fn);
  }

  /// Sets the threshold and recomputes V and the valid ratio.
  void set_tau(const ExecSpace& exec, double tau) {
    set_tau(exec, tau, "nearsparse::spamm::plan::set_tau");
  }

  /// Searches a tau for the valid ratio `target` (0 < target <= 1), sets it, and returns what was
  /// found: the tau whose valid ratio came closest to the target among the taus the search
  /// evaluated (widening up from the mean norm product, then bisecting). The search stops at the
  /// first evaluation within search.tolerance of the target, or after search.max_iterations
  /// bisections, so with a tolerance > 0 an unevaluated tau may come closer still; tolerance 0
  /// bisects until the interval cannot shrink or the iterations run out.
  search_report search_tau(const ExecSpace& exec, double target,
                           const search_options& search = search_options{}) {
    return search_tau(exec, target, search, "nearsparse::spamm::plan::search_tau");
  }

  /// Searches the largest tau whose error bound (error_bound) is at most
  /// target_error * ||A||_F ||B||_F for the plan's current operands (after update() too), sets
  /// it, and returns what was found: tau, the valid ratio, the bound relative to
  /// ||A||_F ||B||_F (error_bound) and the evaluations of the bound (iterations). target_error
  /// must be finite and at least rounding_floor(options().precision); a target_error of 1 or more
  /// may keep nothing (C = beta * C), as the bound of dropping everything is at most
  /// ||A||_F ||B||_F.
  ///
  /// Tie rule: tile products whose norm product equals tau are kept, as everywhere in SpAMM, so
  /// the tau found is a norm product (all its equals kept), or the next double above the largest
  /// when dropping everything meets the target. Any larger tau misses the target. From the same
  /// norm maps, every backend finds the same tau (detail/error_bound.hpp says how).
  ///
  /// The search evaluates the bound once per step (a reduction over the MT * NT * KT norm
  /// products and a wait for the device), at most search.max_iterations + 1 times; converged is
  /// false only if those ran out first (tau then still meets the target). search.tolerance,
  /// max_widenings and launch do not apply.
  search_report search_error(const ExecSpace& exec, double target_error,
                             const search_options& search = search_options{}) {
    return search_error(exec, target_error, search, "nearsparse::spamm::plan::search_error");
  }

  /// The bound on the error of the dropped tile products at the plan's tau: bound =
  /// sqrt(sum_ij d_ij^2) with d_ij = sum of ||A[i,k]||_F ||B[k,j]||_F over the dropped k, so that
  /// ||A B - C||_F <= bound for C = A B over the kept products, and norm_product =
  /// ||A||_F ||B||_F (the norm maps' square roots of sums of squared tile norms). Both come from
  /// the norm maps, that is from A and B rounded to the input format, and are reduced in double
  /// in a fixed order (the bound rounded up past its own rounding). Neither the rounding of the
  /// inputs nor that of the accumulation is included (rounding_floor). Waits for the device,
  /// once per call unless tau and the operands are those of the last call or search (then it
  /// returns what that found). Not to be called on one plan from several threads at once.
  error_bound_report error_bound(const ExecSpace& exec) const {
    constexpr const char* fn = "nearsparse::spamm::plan::error_bound";
    if (pending_ != nullptr) settle(exec, fn);
    if (!bound_known_) {
      const auto at = detail::error_bound_at(exec, a_norms_, b_norms_, tau_, scratch_, true);
      bound_.bound = at.bound;
      bound_.norm_product = at.norm_product;
      bound_known_ = true;
    }
    return bound_;
  }

 private:
  // set_tau and search_tau, naming `fn` in their errors (a non-finite A or B found by the
  // packing they wait for).
  void set_tau(const ExecSpace& exec, double tau, const char* fn) {
    require_nonnegative(fn, "tau", tau);
    tau_ = tau;
    bound_known_ = false;
    detail::count_kept_into(exec, a_norms_, b_norms_, tau_, work_,
                            word(detail::search_words::kept));
    settle(exec, fn);
  }

  search_report search_tau(const ExecSpace& exec, double target, const search_options& search,
                           const char* fn) {
    namespace ds = detail;
    ds::validate_search(fn, target, search);
    bound_known_ = false;  // every path below moves tau
    search_report result;
    result.target = target;
    const double total = geo_.tile_products();
    if (total == 0 || target >= 1.0) {
      set_tau(exec, 0.0, fn);
      result.valid_ratio = valid_ratio();
      result.converged = true;
      return result;
    }
    if (searches_in_one_launch(search)) {
      // Four launches and no wait between them: the mean's sum, B's rows sorted, the bisection
      // in one team, V at the tau it left on the device.
      ds::norm_product_sum_into(exec, a_norms_, b_norms_, double_word(ds::search_words::norm_sum));
      ds::sort_norm_rows(exec, b_norms_, sorted_b_);
      ds::search_tau_in_one_team(exec, a_norms_, geo_.nt, sorted_b_, target, search, status_);
      ds::count_kept_into(exec, a_norms_, b_norms_, ds::found_tau<memory_space>{status_}, work_,
                          word(ds::search_words::kept));
      settle(exec, fn);
      tau_ = ds::double_of(host_status_[ds::search_words::tau]);
      result.iterations = int(host_status_[ds::search_words::evaluations]);
    } else {
      settle(exec, fn);  // a non-finite A or B throws before the search starts
      ds::work_matrix<memory_space> none;
      const double average = ds::average_norm_product(exec, a_norms_, b_norms_);
      const auto found = ds::bisect_tau(target, search, average, [&](double tau) {
        return double(ds::count_kept(exec, a_norms_, b_norms_, tau, none)) / total;
      });
      set_tau(exec, found.tau, fn);
      result.iterations = found.iterations;
    }
    result.tau = tau_;
    result.valid_ratio = valid_ratio();
    result.converged = std::abs(result.valid_ratio - target) <= search.tolerance;
    return result;
  }

  search_report search_error(const ExecSpace& exec, double target_error,
                             const search_options& search, const char* fn) {
    detail::validate_error_search(fn, target_error, options_.precision, search);
    settle(exec, fn);  // a non-finite A or B throws before the search starts
    const double norm_product = detail::norm_product_from_maps(exec, a_norms_, b_norms_, scratch_);
    const auto found = detail::search_error_tau(
        target_error * norm_product, search.max_iterations, [&](double tau) {
          return detail::error_bound_at(exec, a_norms_, b_norms_, tau, scratch_);
        });
    set_tau(exec, found.tau, fn);
    bound_.bound = found.bound;
    bound_.norm_product = norm_product;
    bound_known_ = true;
    search_report result;
    result.tau = tau_;
    result.valid_ratio = valid_ratio();
    result.target = result.valid_ratio;
    result.iterations = found.evaluations;
    result.converged = found.converged;
    result.error_bound = bound_.relative();
    result.target_error = target_error;
    return result;
  }

 public:
  /// Whether search_tau with these options runs in one launch (search_tau_in_one_team) rather
  /// than with a launch and a wait per count (see spamm::search_launch).
  bool searches_in_one_launch(const search_options& search) const {
    switch (search.launch) {
      case search_launch::one_launch:
        return true;
      case search_launch::launch_per_count:
        return false;
      default:
        return !Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible &&
               geo_.tile_products() <= detail::one_team_search_max_products;
    }
  }

  /// C = alpha * A * B + beta * C over the kept tile products. C is M x N, float or double;
  /// with beta == 0, C is only written (NaN in C does not propagate).
  template <class CView>
  void multiply(const ExecSpace& exec, typename CView::const_value_type alpha,
                typename CView::const_value_type beta, const CView& c) const {
    detail::static_assert_output<ExecSpace, CView>();
    using c_value = typename CView::non_const_value_type;
    constexpr const char* fn = "nearsparse::spamm::plan::multiply";
    require_extents(fn, "C", c, geo_.m, geo_.n);
    require(std::isfinite(double(alpha)), fn, "alpha", "must be finite");
    require(std::isfinite(double(beta)), fn, "beta", "must be finite");
    if (geo_.m == 0 || geo_.n == 0) return;
    const detail::multiply_problem p = problem();
    if (geo_.k == 0) {  // no tiles of k: C = beta * C
      nearsparse::detail::for_each_element(exec, "nearsparse::spamm::scale_c", geo_.m, geo_.n,
                                           nearsparse::detail::second_index_contiguous(c),
                                           detail::scale_c_element<CView>{c, c_value(beta)});
      return;
    }
    detail::multiply(exec, fn, options_, p, c_value(alpha), c_value(beta), c);
  }

  /// Kept tile products of every output tile, listed on demand.
  kept_list<memory_space> kept_products(const ExecSpace& exec) const {
    return detail::list_kept(exec, a_norms_, b_norms_, tau_);
  }

  double tau() const { return tau_; }
  /// Kept tile products over all MT * KT * NT (0 for an empty product).
  /// After update(), these two wait first for the instance update() was given (see check).
  double valid_ratio() const {
    const double total = geo_.tile_products();
    return total > 0 ? double(kept_count()) / total : 0.0;
  }
  std::int64_t kept_count() const {
    check(pending_exec_);
    return kept_;
  }
  const work_matrix_type& work_matrix() const { return work_; }
  const norm_map_type& a_norms() const { return a_norms_; }
  const norm_map_type& b_norms() const { return b_norms_; }
  const spamm::options& options() const { return options_; }
  int rows() const { return geo_.m; }
  int cols() const { return geo_.n; }
  int inner() const { return geo_.k; }
  int tile() const { return geo_.tile; }
  /// Tiles per dimension: MT, NT, KT.
  int tiles_m() const { return geo_.mt; }
  int tiles_n() const { return geo_.nt; }
  int tiles_k() const { return geo_.kt; }
  /// Bytes the packed operands take on the device.
  std::size_t packed_bytes() const { return 8 * (a_pack_.extent(0) + b_pack_.extent(0)); }

  detail::multiply_problem problem() const {
    return detail::make_problem(options_, geo_, a_pack_.data(), b_pack_.data(), a_norms_.data(),
                                b_norms_.data(), tau_);
  }

 private:
  using raw_buffer = Kokkos::View<double*, memory_space>;
  using status_view = Kokkos::View<std::int64_t*, memory_space>;
  static std::size_t words(std::size_t bytes) { return (bytes + 7) / 8; }
  // Words of status_ past the search's (detail::search_words): non-finite values found in
  // A and in B.
  static constexpr int bad_a_word = detail::search_words::count;
  static constexpr int bad_b_word = bad_a_word + 1;
  static constexpr int status_words = bad_b_word + 1;

  // The plan's device storage, from the allocation cache: one wait for all of it when any was
  // reused (work queued on it may still run).
  void allocate(const ExecSpace& exec) {
    using nearsparse::detail::cached_view_taken;
    const int bytes = detail::storage_bytes(options_.precision);
    bool wait = false;
    a_pack_ = cached_view_taken<raw_buffer>(wait, "nearsparse::spamm::packed_A",
                                            words(std::size_t(geo_.mp) * geo_.kp * bytes));
    b_pack_ = cached_view_taken<raw_buffer>(wait, "nearsparse::spamm::packed_Bt",
                                            words(std::size_t(geo_.np) * geo_.kp * bytes));
    a_norms_ =
        cached_view_taken<norm_map_type>(wait, "nearsparse::spamm::A_normmap", geo_.mt, geo_.kt);
    b_norms_ =
        cached_view_taken<norm_map_type>(wait, "nearsparse::spamm::B_normmap", geo_.kt, geo_.nt);
    work_ = cached_view_taken<work_matrix_type>(wait, "nearsparse::spamm::V", geo_.mt, geo_.nt);
    status_ = cached_view_taken<status_view>(wait, "nearsparse::spamm::status", status_words);
    sorted_b_ = cached_view_taken<raw_buffer>(wait, "nearsparse::spamm::sorted_B_normmap",
                                              std::size_t(geo_.kt) * geo_.nt);
    if (wait) exec.fence();
  }

  // One word of status_ as a rank-0 View, where a reduction leaves its result.
  auto word(int w) const { return Kokkos::subview(status_, w); }
  Kokkos::View<double, memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>> double_word(
      int w) const {
    return Kokkos::View<double, memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
        reinterpret_cast<double*>(status_.data() + w));
  }

  // Queues the packing of an operand (its non-finite values counted into status_) and its norm
  // map; settle() reports what the count found.
  template <class View>
  void queue_operand(const ExecSpace& exec, const char* fn, const View& x, detail::operand which) {
    const bool is_a = which == detail::operand::a;
    void* dst = is_a ? a_pack_.data() : b_pack_.data();
    const auto bad = word(is_a ? bad_a_word : bad_b_word);
    detail::with_format(options_.precision, [&](auto fmt) {
      using Format = decltype(fmt);
      using storage = typename Format::storage;
      detail::pack_and_norms_queued<Format>(exec, fn, options_, x, which,
                                            static_cast<storage*>(dst), geo_, bad,
                                            is_a ? a_norms_ : b_norms_);
    });
  }

  // The one wait: takes status_ to the host, throws nearsparse::invalid_argument naming A or B
  // when the packing found non-finite values (naming update() when its operands are the ones
  // still unchecked), and takes the kept count. What update() left pending is cleared only
  // once its operands pass: until finite operands replace them, every call that waits throws.
  void settle(const ExecSpace& exec, const char* fn) const {
    if (pending_ != nullptr) fn = pending_;
    // Into a plain array: a Kokkos host View would be allocated and initialized (a parallel
    // region on the host) with every plan.
    Kokkos::deep_copy(
        exec,
        Kokkos::View<std::int64_t*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
            host_status_.data(), status_words),
        status_);
    exec.fence();
    const std::int64_t bad[2] = {host_status_[bad_a_word], host_status_[bad_b_word]};
    const char* names[2] = {"A", "B"};
    const int rows[2] = {geo_.m, geo_.k}, cols[2] = {geo_.k, geo_.n};
    for (int x = 0; x < 2; ++x)
      if (bad[x] != 0)
        nearsparse::detail::throw_invalid_argument(
            fn, names[x],
            nearsparse::detail::concat("(", rows[x], " x ", cols[x], ") holds ", bad[x],
                                       " non-finite value(s) (NaN or Inf)"));
    kept_ = host_status_[detail::search_words::kept];
    pending_ = nullptr;
  }

  spamm::options options_;
  detail::geometry geo_;
  raw_buffer a_pack_, b_pack_;
  norm_map_type a_norms_, b_norms_;
  work_matrix_type work_;
  status_view status_;
  raw_buffer sorted_b_;  // B's norm rows sorted, for a search in one launch
  // Device storage of the error bound's reductions, allocated at its first use; the bound at
  // tau_ for the current operands when bound_known_.
  mutable detail::error_bound_scratch<memory_space> scratch_;
  mutable error_bound_report bound_;
  mutable bool bound_known_ = false;
  // Written by settle(), which the const accessors call after an update().
  mutable std::array<std::int64_t, status_words> host_status_{};
  double tau_ = 0.0;
  mutable std::int64_t kept_ = 0;
  // The entry point whose queued work settle() has not yet checked (update), or nullptr.
  mutable const char* pending_ = nullptr;
  ExecSpace pending_exec_;
};

template <class ExecSpace, class AView, class BView>
plan(const ExecSpace&, const AView&, const BView&, const options&) -> plan<ExecSpace>;
template <class ExecSpace, class AView, class BView>
plan(const ExecSpace&, const AView&, const BView&) -> plan<ExecSpace>;

/// C = alpha * A * B + beta * C by SpAMM: builds a plan (packing, norm maps, tau or a tau
/// search), multiplies, and returns the tau and the valid ratio used, and with
/// options::target_error the error bound relative to ||A||_F ||B||_F (plan::error_bound). For
/// repeated products with the same A or B, keep a spamm::plan instead.
template <class ExecSpace, class AView, class BView, class CView>
multiply_report multiply(const ExecSpace& exec, typename CView::const_value_type alpha,
                         const AView& a, const BView& b, typename CView::const_value_type beta,
                         const CView& c, const options& opt = options{}) {
  constexpr const char* fn = "nearsparse::spamm::multiply";
  static_assert_matrix<ExecSpace, AView>();
  static_assert_matrix<ExecSpace, BView>();
  static_assert_matrix<ExecSpace, CView>();
  require_extent_match(fn, "B", b, 0, "A", a, 1);
  require_extents(fn, "C", c, a.extent(0), b.extent(1));
  require(std::isfinite(double(alpha)), fn, "alpha", "must be finite");
  require(std::isfinite(double(beta)), fn, "beta", "must be finite");
  plan<ExecSpace> p(detail::named_call{fn}, exec, a, b, opt);
  multiply_report report;
  report.tau = p.tau();
  report.valid_ratio = p.valid_ratio();
  // Known after a search for options::target_error; elsewhere it would cost a wait.
  if (opt.target_error > 0) report.error_bound = p.error_bound(exec).relative();
  p.multiply(exec, alpha, beta, c);
  return report;
}

}  // namespace nearsparse::spamm
