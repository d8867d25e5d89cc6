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
// (a whole spamm() call in a loop) allocate and free nothing. On a GPU the bisection of a tau
// search of up to 2^19 norm products runs in one launch (search_tau_in_one_team); a larger one,
// or one on the host, counts with the whole device once per step (spamm_search_launch).
//
//   nearsparse::spamm_options opt;
//   opt.precision = nearsparse::spamm_precision::fp16;
//   opt.target_valid_ratio = 0.10;
//   nearsparse::spamm_plan plan(exec, A, B, opt);  // pack, get-norm, tau search
//   plan.multiply(exec, 1.0f, 0.0f, C);            // C = A B over the kept 10 % of tile pairs
//   plan.valid_ratio(); plan.work_matrix();        // what was kept

#include <nearsparse/core/detail/scalar_traits.hpp>
#include <nearsparse/core/detail/view_cache.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/view_checks.hpp>
#include <nearsparse/spamm/detail/geometry.hpp>
#include <nearsparse/spamm/detail/kept_products.hpp>
#include <nearsparse/spamm/detail/multiply.hpp>
#include <nearsparse/spamm/detail/norms.hpp>
#include <nearsparse/spamm/detail/pack.hpp>
#include <nearsparse/spamm/detail/tau_search.hpp>
#include <nearsparse/spamm/options.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace nearsparse {

namespace detail::spamm {

/// Throws nearsparse::invalid_argument for options no plan can use.
void validate_options(const char* function, const spamm_options& options);
void validate_search(const char* function, double target, const spamm_search_options& search);

/// Element types A and B may hold: any real type convertible to double (float, double, the
/// integer types, Kokkos' half_t).
template <class T>
inline constexpr bool is_real_input_v =
    !is_kokkos_complex<std::remove_cv_t<T>>::value && std::is_constructible<double, T>::value;

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

/// The device pointers and parameters of one product under `options`.
inline multiply_problem make_problem(const spamm_options& options, const geometry& geo,
                                     const void* a, const void* b, const double* a_norms,
                                     const double* b_norms, double tau) {
  multiply_problem p;
  p.precision = options.precision;
  p.geo = geo;
  p.a = a;
  p.b = b;
  p.a_norms = a_norms;
  p.b_norms = b_norms;
  p.tau = tau;
  p.stride = options.load_balance_stride;
  return p;
}

/// C = alpha * A * B + beta * C over the kept tile products of `p`, on the kernel `kernel` asks
/// for (the portable team kernel, or the backend's own where it has one).
template <class ExecSpace, class CView>
void run_multiply(const ExecSpace& exec, spamm_kernel kernel, const multiply_problem& p,
                  typename CView::non_const_value_type alpha,
                  typename CView::non_const_value_type beta, const CView& c) {
  if (kernel == spamm_kernel::portable) {
    multiply_portable(exec, p, alpha, beta, c);
  } else {
    multiply(exec, p, alpha, beta, c, kernel != spamm_kernel::mma_sync);
  }
}

}  // namespace detail::spamm

/// Kept tile products as lists per output tile (see detail::spamm::kept_list).
template <class MemorySpace>
using spamm_kept_products = detail::spamm::kept_list<MemorySpace>;

template <class ExecSpace>
class spamm_plan {
 public:
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;
  /// Tile norms: A's is MT x KT, B's is KT x NT.
  using norm_map_type = detail::spamm::norm_map<memory_space>;
  /// V(i, j): kept tile products of output tile (i, j), MT x NT.
  using work_matrix_type = detail::spamm::work_matrix<memory_space>;

  template <class AView, class BView>
  spamm_plan(const ExecSpace& exec, const AView& a, const BView& b,
             const spamm_options& options = spamm_options{})
      : options_(options) {
    detail::spamm::static_assert_operands<ExecSpace, AView, BView>();
    constexpr const char* fn = "nearsparse::spamm";
    detail::spamm::validate_options(fn, options);
    require_extent_match(fn, "B", b, 0, "A", a, 1);
    constexpr std::size_t limit = std::numeric_limits<int>::max() - detail::spamm::block_pad;
    require(a.extent(0) <= limit && a.extent(1) <= limit && b.extent(1) <= limit, fn, "A",
            detail::concat("and B (", detail::extents_string(a), " times ",
                           detail::extents_string(b), ") exceed the supported extent ", limit));
    geo_ = detail::spamm::geometry(static_cast<int>(a.extent(0)), static_cast<int>(b.extent(1)),
                                   static_cast<int>(a.extent(1)), options.tile);
    allocate(exec);
    queue_operand(exec, a, detail::spamm::operand::a);
    queue_operand(exec, b, detail::spamm::operand::b);
    if (options.target_valid_ratio > 0) {
      search_tau(exec, options.target_valid_ratio, options.search);
    } else {
      set_tau(exec, options.tau);
    }
  }

  /// Replaces A by a matrix of the same extents (packing and norms again; tau kept).
  template <class AView>
  void update_a(const ExecSpace& exec, const AView& a) {
    static_assert_matrix<ExecSpace, AView>();
    require_extents("nearsparse::spamm_plan::update_a", "A", a, geo_.m, geo_.k);
    queue_operand(exec, a, detail::spamm::operand::a);
    set_tau(exec, tau_);
  }

  /// Replaces B by a matrix of the same extents: for a power A^p, pass each product back in.
  template <class BView>
  void update_b(const ExecSpace& exec, const BView& b) {
    static_assert_matrix<ExecSpace, BView>();
    require_extents("nearsparse::spamm_plan::update_b", "B", b, geo_.k, geo_.n);
    queue_operand(exec, b, detail::spamm::operand::b);
    set_tau(exec, tau_);
  }

  /// Sets the threshold and recomputes V and the valid ratio.
  void set_tau(const ExecSpace& exec, double tau) {
    require_nonnegative("nearsparse::spamm_plan::set_tau", "tau", tau);
    tau_ = tau;
    detail::spamm::count_kept_into(exec, a_norms_, b_norms_, tau_, work_,
                                   word(detail::spamm::search_words::kept));
    settle(exec);
  }

  /// Finds the tau whose valid ratio is closest to `target` (0 < target <= 1), sets it, and
  /// returns what was found.
  spamm_search_result search_tau(const ExecSpace& exec, double target,
                                 const spamm_search_options& search = spamm_search_options{}) {
    namespace ds = detail::spamm;
    ds::validate_search("nearsparse::spamm_plan::search_tau", target, search);
    spamm_search_result result;
    result.target = target;
    const double total = geo_.tile_products();
    if (total == 0 || target >= 1.0) {
      set_tau(exec, 0.0);
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
      settle(exec);
      tau_ = ds::double_of(host_status_[ds::search_words::tau]);
      result.iterations = int(host_status_[ds::search_words::evaluations]);
    } else {
      settle(exec);  // a non-finite A or B throws before the search starts
      ds::work_matrix<memory_space> none;
      const double average = ds::average_norm_product(exec, a_norms_, b_norms_);
      const auto found = ds::bisect_tau(target, search, average, [&](double tau) {
        return double(ds::count_kept(exec, a_norms_, b_norms_, tau, none)) / total;
      });
      set_tau(exec, found.tau);
      result.iterations = found.iterations;
    }
    result.tau = tau_;
    result.valid_ratio = valid_ratio();
    result.converged = std::abs(result.valid_ratio - target) <= search.tolerance;
    return result;
  }

  /// Whether search_tau with these options runs in one launch (search_tau_in_one_team) rather
  /// than with a launch and a wait per count (see spamm_search_launch).
  bool searches_in_one_launch(const spamm_search_options& search) const {
    switch (search.launch) {
      case spamm_search_launch::one_launch:
        return true;
      case spamm_search_launch::launch_per_count:
        return false;
      default:
        return !Kokkos::SpaceAccessibility<Kokkos::HostSpace, memory_space>::accessible &&
               geo_.tile_products() <= detail::spamm::one_team_search_max_products;
    }
  }

  /// C = alpha * A * B + beta * C over the kept tile products. C is M x N, float or double;
  /// with beta == 0, C is only written (NaN in C does not propagate).
  template <class CView>
  void multiply(const ExecSpace& exec, typename CView::const_value_type alpha,
                typename CView::const_value_type beta, const CView& c) const {
    detail::spamm::static_assert_output<ExecSpace, CView>();
    using c_value = typename CView::non_const_value_type;
    constexpr const char* fn = "nearsparse::spamm";
    require_extents(fn, "C", c, geo_.m, geo_.n);
    require(std::isfinite(double(alpha)), fn, "alpha", "must be finite");
    require(std::isfinite(double(beta)), fn, "beta", "must be finite");
    if (geo_.m == 0 || geo_.n == 0) return;
    const detail::spamm::multiply_problem p = problem();
    if (geo_.k == 0) {  // no tiles of k: C = beta * C
      Kokkos::parallel_for(
          "nearsparse::spamm::scale_c",
          Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<2>>(exec, {0, 0}, {geo_.m, geo_.n}),
          KOKKOS_LAMBDA(const int i, const int j) {
            c(i, j) = beta == c_value(0) ? c_value(0) : beta * c(i, j);
          });
      return;
    }
    detail::spamm::run_multiply(exec, options_.kernel, p, c_value(alpha), c_value(beta), c);
  }

  /// Kept tile products of every output tile, listed on demand.
  spamm_kept_products<memory_space> kept_products(const ExecSpace& exec) const {
    return detail::spamm::list_kept(exec, a_norms_, b_norms_, tau_);
  }

  double tau() const { return tau_; }
  /// Kept tile products over all MT * KT * NT (0 for an empty product).
  double valid_ratio() const {
    const double total = geo_.tile_products();
    return total > 0 ? double(kept_) / total : 0.0;
  }
  std::int64_t kept_count() const { return kept_; }
  const work_matrix_type& work_matrix() const { return work_; }
  const norm_map_type& a_norms() const { return a_norms_; }
  const norm_map_type& b_norms() const { return b_norms_; }
  const spamm_options& options() const { return options_; }
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

  detail::spamm::multiply_problem problem() const {
    return detail::spamm::make_problem(options_, geo_, a_pack_.data(), b_pack_.data(),
                                       a_norms_.data(), b_norms_.data(), tau_);
  }

 private:
  using raw_buffer = Kokkos::View<double*, memory_space>;
  using status_view = Kokkos::View<std::int64_t*, memory_space>;
  static std::size_t words(std::size_t bytes) { return (bytes + 7) / 8; }
  // Words of status_ past the search's (detail::spamm::search_words): non-finite values found in
  // A and in B.
  static constexpr int bad_a_word = detail::spamm::search_words::count;
  static constexpr int bad_b_word = bad_a_word + 1;
  static constexpr int status_words = bad_b_word + 1;

  // The plan's device storage, from the allocation cache: one wait for all of it when any was
  // reused (work queued on it may still run).
  void allocate(const ExecSpace& exec) {
    using detail::cached_view_taken;
    const int bytes = detail::spamm::storage_bytes(options_.precision);
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
  void queue_operand(const ExecSpace& exec, const View& x, detail::spamm::operand which) {
    const bool is_a = which == detail::spamm::operand::a;
    void* dst = is_a ? a_pack_.data() : b_pack_.data();
    const auto bad = word(is_a ? bad_a_word : bad_b_word);
    detail::spamm::with_format(options_.precision, [&](auto fmt) {
      using Format = decltype(fmt);
      using storage = typename Format::storage;
      detail::spamm::pack_operand_into<Format>(exec, x, !is_a, static_cast<storage*>(dst),
                                               is_a ? geo_.mp : geo_.np, geo_.kp,
                                               options_.check_finite, bad);
    });
    if (options_.kernel == spamm_kernel::portable) {
      detail::spamm::compute_norms_portable(exec, options_.precision, dst, geo_, which,
                                            is_a ? a_norms_ : b_norms_);
    } else {
      detail::spamm::compute_norms(exec, options_.precision, dst, geo_, which,
                                   is_a ? a_norms_ : b_norms_);
    }
  }

  // The one wait: takes status_ to the host, throws nearsparse::invalid_argument naming A or B
  // when the packing found non-finite values, and takes the kept count.
  void settle(const ExecSpace& exec) {
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
        detail::throw_invalid_argument("nearsparse::spamm", names[x],
                                       detail::concat("(", rows[x], " x ", cols[x], ") holds ",
                                                      bad[x], " non-finite value(s) (NaN or Inf)"));
    kept_ = host_status_[detail::spamm::search_words::kept];
  }

  spamm_options options_;
  detail::spamm::geometry geo_;
  raw_buffer a_pack_, b_pack_;
  norm_map_type a_norms_, b_norms_;
  work_matrix_type work_;
  status_view status_;
  raw_buffer sorted_b_;  // B's norm rows sorted, for a search in one launch
  std::array<std::int64_t, status_words> host_status_{};
  double tau_ = 0.0;
  std::int64_t kept_ = 0;
};

template <class ExecSpace, class AView, class BView>
spamm_plan(const ExecSpace&, const AView&, const BView&, const spamm_options&)
    -> spamm_plan<ExecSpace>;
template <class ExecSpace, class AView, class BView>
spamm_plan(const ExecSpace&, const AView&, const BView&) -> spamm_plan<ExecSpace>;

/// What one spamm call used.
struct spamm_summary {
  double tau = 0.0;
  double valid_ratio = 0.0;
};

/// C = alpha * A * B + beta * C by SpAMM: builds a plan (packing, norm maps, tau or a tau
/// search), multiplies, and returns the tau and valid ratio used. For repeated products with
/// the same A or B, keep a spamm_plan instead.
template <class ExecSpace, class AView, class BView, class CView>
spamm_summary spamm(const ExecSpace& exec, typename CView::const_value_type alpha, const AView& a,
                    const BView& b, typename CView::const_value_type beta, const CView& c,
                    const spamm_options& options = spamm_options{}) {
  static_assert_matrix<ExecSpace, AView>();
  static_assert_matrix<ExecSpace, BView>();
  static_assert_matrix<ExecSpace, CView>();
  require_extent_match("nearsparse::spamm", "B", b, 0, "A", a, 1);
  require_extents("nearsparse::spamm", "C", c, a.extent(0), b.extent(1));
  spamm_plan<ExecSpace> plan(exec, a, b, options);
  plan.multiply(exec, alpha, beta, c);
  return {plan.tau(), plan.valid_ratio()};
}

}  // namespace nearsparse
