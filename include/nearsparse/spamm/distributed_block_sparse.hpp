#pragma once
// Block-sparse SpAMM over MPI processes (builds with NEARSPARSE_ENABLE_MPI): C = alpha A B +
// beta C with A, B and C distributed by rows, one process per GPU (or per host space), and the
// matrix functions of spamm/block_sparse_functions.hpp (sp2, inverse_sqrt, sign) on matrices
// distributed so.
//
// What. Process p of the communicator holds a contiguous block of tile rows of A and C (the same
// rows of both) and a contiguous block of tile rows of B, each as a block_sparse_matrix of its
// own: A_p is (its rows) x K, B_p is (its rows of B) x N, C_p is (its rows) x N, with the blocks
// in rank order (process 0 the first rows). Every block but the last process's has a multiple of
// the tile as its rows. block_sparse_rows gives an even split; any other tile-aligned split works
// (C_p's rows follow A_p's, so a product can be fed back as the next A; with B's split equal to
// A's it can be fed back as the next B too: matrix powers, purification).
//
//   nearsparse::spamm::block_sparse_communicator<Exec> world(MPI_COMM_WORLD, exec);
//   auto [r0, r1] = world.rows(n, opt.tile);
//   auto A_p = nearsparse::spamm::row_block(exec, A, r0, r1);   // or build the rows directly
//   nearsparse::spamm::block_sparse_matrix<double, Exec> C_p(exec, r1 - r0, n, opt.tile);
//   auto report = world.multiply(exec, 1.0, A_p, A_p, 0.0, C_p, mopt);
//   report.product.error_bound;   // the bound of the whole product, as one process gives it
//
// How. C_p = alpha A_p B + beta C_p needs, of B, the tile rows k where A_p stores a tile in
// tile column k. Each process tells the owners of B's rows, for each such k, the largest norm
// of its tiles in column k (a = max_i ||A_p[i,k]||). The owner sends every tile B[k,j] of those
// rows as its column index and norm, and its values only where a product with it can be kept:
// a * ||B[k,j]|| >= tau (rounding is monotone, so this holds exactly when some kept product
// A[i,k] B[k,j] reads the tile). With tau = 0, or kept_tiles_only = false, every tile of those
// rows travels with its values. The process then runs the single-process multiply on its rows
// with the rows of B it received: the kept products, the candidates and the error bound of its
// tiles of C are those one process would find for the whole product, and so are the values (the
// same products in the same order). The drop rule of the options runs afterwards on every
// process with one threshold: relative to the Frobenius norm of the whole C, summed over the
// processes (so a tile within rounding of the threshold may fall either way, and the report's
// error bound and dropped norm, sums over the processes, agree with one process's to rounding).
//
// Memory. With more than one process, a process holds a copy of its own rows of B (made on the
// device) and, of the other processes' rows of B, those it needs with all their tiles' arrays;
// tiles whose values did not travel hold zeros and are never read (no kept product uses them).
// A process alone multiplies with B_p itself. The index arrays (8 bytes per tile row of B asked
// for, column index and norm, 12 bytes per tile, and 8 per tile whose values follow) go by MPI on
// the host; the values device to device (NCCL) or staged through the host
// (distributed_block_sparse_options::transport), once per call: no pattern is kept between
// calls, so every call is a whole call on new operands. The host work per call is O(tile rows of
// B + tiles of A_p + tiles of B_p), the indices and norms of A_p and B_p being read on the host.
//
// Matrix functions. sp2(world, exec, H_p, occupied, D_p, opts), inverse_sqrt(world, exec, S_p,
// Z_p, opts) and sign(world, exec, A_p, X_p, opts) run the single-process iterations (written
// once over their operations) on this process's rows: products through the communicator, sums
// row by row, and traces, Frobenius norms, Gershgorin bounds and the drop rules' thresholds over
// all processes, so every process takes the same branches and the report (the same on every
// process) is the one iteration's. The input's rows must form a square matrix.
//
// Errors. Arguments are checked on every process and a problem on one is raised on all (the
// failing process rethrows its own exception, the others nearsparse::runtime_error naming it),
// before any data moves; so are the options and scalars that must agree (tau, drop rule,
// implementation, alpha, beta; for the matrix functions their options and `occupied`), and a
// failure of the product on one process (a non-finite result, a device that cannot hold C).
// The communicator's constructor, multiply and the matrix functions are collective over the
// communicator; row_block is local, block_sparse_rows reads only the communicator's size and rank.

#include <nearsparse/config.hpp>

#if NEARSPARSE_ENABLE_MPI

#include <nearsparse/core/detail/broadcast_channel.hpp>
#include <nearsparse/core/detail/mpi.hpp>
#include <nearsparse/core/detail/peer_transfer.hpp>
#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/gpu_transport.hpp>
#include <nearsparse/spamm/block_sparse.hpp>
#include <nearsparse/spamm/block_sparse_algebra.hpp>
#include <nearsparse/spamm/block_sparse_functions.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace nearsparse::spamm {

/// Options of a block_sparse_communicator (the product has its own, block_sparse_multiply_options).
struct distributed_block_sparse_options {
  /// With tau > 0, a tile of B travels with its values only where a product kept at tau reads
  /// it (its index and norm always travel); false sends the values of every tile of the rows
  /// a process needs.
  bool kept_tiles_only = true;
  /// How the values move between processes (the indices always go by MPI on the host).
  gpu_transport transport = gpu_transport::automatic;
};

/// What one block_sparse_communicator::multiply did.
struct distributed_block_sparse_report {
  /// The whole product, summed over the processes (the same on every process): what one
  /// process multiplying the whole matrices would report, up to rounding of the sums.
  block_sparse_report product;
  /// This process: tiles of B received from other processes with their values, tiles received
  /// as index and norm only, and the bytes received (values and indices).
  std::int64_t tiles_received = 0;
  std::int64_t tiles_indexed_only = 0;
  std::int64_t bytes_received = 0;
  /// This process: the bytes the values of every tile of the rows of B it needs from other
  /// processes would take (what kept_tiles_only = false receives).
  std::int64_t bytes_of_whole_rows = 0;
  /// This process, seconds on the host clock (the call waits for its work at these points):
  /// checks, norms and indices exchanged, and B's rows assembled with the values received
  /// (exchange); the product of its rows and the drop rule (product).
  double exchange_seconds = 0.0;
  double product_seconds = 0.0;
};

namespace detail {

/// Rows [begin, end) of part p of `extent` split over `parts` in whole tiles, as even as tiles
/// allow.
inline std::pair<int, int> even_tile_rows(int extent, int tile, int parts, int p) {
  const std::int64_t tiles = (std::int64_t(extent) + tile - 1) / tile;
  auto edge = [&](int q) {
    return int(std::min<std::int64_t>(extent, tiles * q / parts * std::int64_t(tile)));
  };
  return {edge(p), p + 1 == parts ? extent : edge(p + 1)};
}

/// Raises on every process when any process failed. A failing process rethrows its own
/// exception; the others throw nearsparse::runtime_error naming the first failing process.
inline void collective_rethrow(MPI_Comm comm, const std::exception_ptr& failure, const char* fn) {
  int mine = failure ? 1 : 0, any = 0;
  nearsparse::detail::mpi_check(MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm), fn,
                                "MPI_Allreduce");
  if (!any) return;
  int first = failure ? nearsparse::detail::mpi_rank(comm) : nearsparse::detail::mpi_size(comm);
  nearsparse::detail::mpi_check(MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm), fn,
                                "MPI_Allreduce");
  if (failure) std::rethrow_exception(failure);
  throw nearsparse::runtime_error(nearsparse::detail::concat(
      fn, ": process ", first, " of ", nearsparse::detail::mpi_size(comm),
      " failed (its exception has the details)"));
}

/// The first row of every process's block of a matrix distributed by rows (P + 1 entries, the
/// last the total), this process's block holding `rows` x `cols` with tiles of `tile`. Raises the
/// same nearsparse::invalid_argument on every process, naming `argument`, unless all blocks have
/// the same columns and tile and every block but the last holds a whole number of tiles.
inline std::vector<long long> row_block_starts(MPI_Comm comm, const char* fn, const char* argument,
                                               int rows, int cols, int tile) {
  namespace nd = nearsparse::detail;
  const std::size_t P = std::size_t(nd::mpi_size(comm));
  const long long mine[3] = {rows, cols, tile};
  std::vector<long long> all(3 * P);
  nd::mpi_check(MPI_Allgather(mine, 3, MPI_LONG_LONG, all.data(), 3, MPI_LONG_LONG, comm), fn,
                "MPI_Allgather");
  std::vector<long long> start(P + 1, 0);
  for (std::size_t p = 0; p < P; ++p) {
    const long long* s = all.data() + 3 * p;
    if (s[2] != all[2])
      nd::throw_invalid_argument(fn, argument,
                                 nd::concat("has tile ", s[2], " on process ", p, " but ", all[2],
                                            " on process 0; every process must use one tile"));
    if (s[1] != all[1])
      nd::throw_invalid_argument(
          fn, argument,
          nd::concat("has ", s[1], " columns on process ", p, " but ", all[1],
                     " on process 0; every process holds whole rows of the matrix"));
    if (p + 1 < P && s[0] % s[2] != 0)
      nd::throw_invalid_argument(
          fn, argument,
          nd::concat("has ", s[0], " rows on process ", p, " of ", P,
                     "; every process but the last must hold a multiple of the tile ", s[2]));
    start[p + 1] = start[p] + s[0];
  }
  return start;
}

/// Runs f, and raises on every process when it threw on any (collective_rethrow).
template <class F>
void collectively(MPI_Comm comm, const char* fn, F&& f) {
  std::exception_ptr failure;
  try {
    f();
  } catch (...) {
    failure = std::current_exception();
  }
  collective_rethrow(comm, failure, fn);
}

/// Raises the same nearsparse::invalid_argument on every process, naming the first argument
/// whose value is not the same on all of them (the options of a collective call must agree).
/// One MPI_Allreduce for all the values.
inline void require_same_everywhere(
    MPI_Comm comm, const char* fn,
    std::initializer_list<std::pair<const char*, double>> arguments) {
  // The largest of each value and of its negation: value and -(smallest) per argument.
  std::vector<double> range;
  for (const auto& a : arguments) {
    range.push_back(a.second);
    range.push_back(-a.second);
  }
  nearsparse::detail::mpi_check(
      MPI_Allreduce(MPI_IN_PLACE, range.data(), int(range.size()), MPI_DOUBLE, MPI_MAX, comm), fn,
      "MPI_Allreduce");
  std::size_t i = 0;
  for (const auto& a : arguments) {
    const double most = range[2 * i], least = -range[2 * i + 1];
    ++i;
    if (most != least)
      nearsparse::detail::throw_invalid_argument(
          fn, a.first,
          nearsparse::detail::concat("differs between the processes (from ", least, " to ", most,
                                     "); every process must pass the same value"));
  }
}

/// The drop rule on a matrix distributed by rows: removes the tiles of this process's part m
/// below the threshold of (tolerance, relative), relative to the Frobenius norm of the whole
/// matrix; returns the sum of the squared norms removed here and their count in `dropped`.
/// Collective; a failure on one process (the compacted copy beyond the free device memory) is
/// raised on all.
template <class ExecSpace, class Scalar, class MemorySpace>
double drop_over_processes(MPI_Comm comm, const ExecSpace& exec,
                           block_sparse_parts<Scalar, MemorySpace>& m, double tolerance,
                           bool relative, std::int64_t& dropped, const char* fn) {
  std::int64_t bad = 0;
  double norm_sq = sum_of_squares(exec, m.norms, bad);
  nearsparse::detail::mpi_check(MPI_Allreduce(MPI_IN_PLACE, &norm_sq, 1, MPI_DOUBLE, MPI_SUM, comm),
                                fn, "MPI_Allreduce");
  double dropped_sq = 0.0;
  dropped = 0;
  collectively(comm, fn, [&] {
    dropped_sq = compact(exec, m, drop_threshold(tolerance, relative, norm_sq), dropped, fn);
  });
  return dropped_sq;
}

/// Copies tile src(t) of `from` to tile dst(t) of `to` (tt values each), t over the list.
template <class Scalar, class MemorySpace>
struct move_listed_tiles_kernel {
  Kokkos::View<const Scalar*, MemorySpace> from;
  Kokkos::View<Scalar*, MemorySpace> to;
  Kokkos::View<const std::int64_t*, MemorySpace> src, dst;
  std::int64_t tt = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t e) const {
    const std::int64_t t = e / tt, x = e % tt;
    to(dst(t) * tt + x) = from(src(t) * tt + x);
  }
};

/// to[dst[t]] = from[src[t]] for whole tiles of tt values, on exec.
template <class ExecSpace, class Scalar, class MemorySpace>
void move_listed_tiles(const ExecSpace& exec, const Kokkos::View<Scalar*, MemorySpace>& from,
                       const Kokkos::View<Scalar*, MemorySpace>& to,
                       const std::vector<std::int64_t>& src, const std::vector<std::int64_t>& dst,
                       std::int64_t tt) {
  const std::size_t n = src.size();
  if (n == 0) return;
  Kokkos::View<std::int64_t*, MemorySpace> lists(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing,
                         std::string("nearsparse::spamm::distributed_block_sparse::tile_lists")),
      2 * n);
  Kokkos::View<std::int64_t*, Kokkos::HostSpace> host(
      "nearsparse::spamm::distributed_block_sparse::tile_lists_host", 2 * n);
  std::copy(src.begin(), src.end(), host.data());
  std::copy(dst.begin(), dst.end(), host.data() + n);
  Kokkos::deep_copy(exec, lists, host);
  const auto s = Kokkos::subview(lists, std::make_pair(std::size_t(0), n));
  const auto d = Kokkos::subview(lists, std::make_pair(n, 2 * n));
  Kokkos::parallel_for("nearsparse::spamm::block_sparse_communicator::move_tiles",
                       Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<std::int64_t>>(
                           exec, 0, std::int64_t(n) * tt),
                       move_listed_tiles_kernel<Scalar, MemorySpace>{from, to, s, d, tt});
  exec.fence();  // the host lists go out of scope
}

/// A View's contents on the host (waits for exec).
template <class ExecSpace, class View>
std::vector<typename View::non_const_value_type> host_copy(const ExecSpace& exec, const View& v) {
  std::vector<typename View::non_const_value_type> out(v.extent(0));
  Kokkos::View<typename View::non_const_value_type*, Kokkos::HostSpace,
               Kokkos::MemoryTraits<Kokkos::Unmanaged>>
      h(out.data(), out.size());
  Kokkos::deep_copy(exec, h, v);
  exec.fence();
  return out;
}

/// A host vector in a new View of MemorySpace (waits for exec).
template <class MemorySpace, class ExecSpace, class T>
Kokkos::View<T*, MemorySpace> device_copy(const ExecSpace& exec, const char* label,
                                          const std::vector<T>& v) {
  Kokkos::View<T*, MemorySpace> d(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, std::string(label)), v.size());
  Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(v.data(),
                                                                                       v.size());
  Kokkos::deep_copy(exec, d, h);
  exec.fence();
  return d;
}

/// Bytes at `p`, appended to `out`.
template <class T>
void append_bytes(std::vector<char>& out, const T* p, std::size_t n) {
  const std::size_t at = out.size();
  out.resize(at + n * sizeof(T));
  if (n > 0) std::memcpy(out.data() + at, p, n * sizeof(T));
}

/// Reads n values of T from `in` at `at`, advancing `at`.
template <class T>
void read_bytes(const std::vector<char>& in, std::size_t& at, T* p, std::size_t n) {
  if (n > 0) std::memcpy(p, in.data() + at, n * sizeof(T));
  at += n * sizeof(T);
}

}  // namespace detail

/// This process's rows [begin, end) of a matrix of `rows` rows split over the processes of `comm`
/// in whole tiles of `tile`, as evenly as tiles allow (process 0 the first rows).
inline std::pair<int, int> block_sparse_rows(MPI_Comm comm, int rows, int tile) {
  constexpr const char* fn = "nearsparse::spamm::block_sparse_rows";
  require(rows >= 0, fn, "rows", nearsparse::detail::concat("is ", rows, "; it must be >= 0"));
  detail::require_block_sparse_tile(fn, "tile", tile);
  return detail::even_tile_rows(rows, tile, nearsparse::detail::mpi_size(comm),
                                nearsparse::detail::mpi_rank(comm));
}

/// Rows [row_begin, row_end) of m as a block-sparse matrix of their own ((row_end - row_begin) x
/// m.cols(), m's tile, its tiles copied). row_begin must be a multiple of the tile, and row_end
/// one too or m.rows(). The dropped norm of the result is m's (a bound for any of its parts).
template <class Scalar, class ExecSpace>
block_sparse_matrix<Scalar, ExecSpace> row_block(const ExecSpace& exec,
                                                 const block_sparse_matrix<Scalar, ExecSpace>& m,
                                                 int row_begin, int row_end) {
  constexpr const char* fn = "nearsparse::spamm::row_block";
  using memory_space = typename ExecSpace::memory_space;
  m.check_structure(fn, "m");
  const int tile = m.tile();
  require(row_begin >= 0 && row_begin <= row_end && row_end <= m.rows(), fn, "row_begin",
          nearsparse::detail::concat("and row_end are [", row_begin, ", ", row_end,
                                     "); they must lie in [0, ", m.rows(), "] (m is ",
                                     detail::describe(m), ")"));
  require(row_begin % tile == 0 && (row_end % tile == 0 || row_end == m.rows()), fn, "row_begin",
          nearsparse::detail::concat("and row_end are [", row_begin, ", ", row_end,
                                     "); both must be multiples of the tile ", tile,
                                     " (row_end may be m.rows() = ", m.rows(), ")"));
  const int t0 = row_begin / tile, t1 = (row_end + tile - 1) / tile;
  const auto row_map = detail::host_copy(exec, m.row_map());
  const std::int64_t p0 = row_map[std::size_t(t0)], p1 = row_map[std::size_t(t1)];
  std::vector<std::int64_t> local(std::size_t(t1 - t0) + 1);
  for (int i = t0; i <= t1; ++i) local[std::size_t(i - t0)] = row_map[std::size_t(i)] - p0;
  const std::size_t tt = std::size_t(tile) * std::size_t(tile);
  const auto tiles = std::make_pair(std::size_t(p0), std::size_t(p1));
  const auto values = std::make_pair(std::size_t(p0) * tt, std::size_t(p1) * tt);
  typename block_sparse_matrix<Scalar, ExecSpace>::parts_type parts;
  parts.rows = row_end - row_begin;
  parts.cols = m.cols();
  parts.tile = tile;
  parts.dropped_norm = m.dropped_norm();
  parts.row_map =
      detail::device_copy<memory_space>(exec, "nearsparse::spamm::block_sparse::row_map", local);
  detail::allocate_tiles(exec, parts, p1 - p0);
  Kokkos::deep_copy(exec, parts.cols_idx, Kokkos::subview(m.column_indices(), tiles));
  Kokkos::deep_copy(exec, parts.norms, Kokkos::subview(m.norms(), tiles));
  Kokkos::deep_copy(exec, parts.values, Kokkos::subview(m.values(), values));
  exec.fence();
  block_sparse_matrix<Scalar, ExecSpace> out;
  out.assign(parts, fn, "m");
  return out;
}

/// The processes of an MPI communicator multiplying block-sparse matrices distributed by rows
/// (see the top of this header). Holds the communicator and the channel the values travel on
/// (an NCCL communicator where the transport is NCCL): build it once and multiply many times.
/// The constructor and multiply are collective over the communicator (the other members only
/// read it); destroy it before MPI_Finalize.
template <class ExecSpace>
class block_sparse_communicator {
 public:
  using execution_space = ExecSpace;
  using memory_space = typename ExecSpace::memory_space;

  /// `exec` names the execution space the products will run on (its instance is passed to each
  /// call). The communicator is duplicated: the exchanges never meet the caller's messages.
  block_sparse_communicator(MPI_Comm comm, const ExecSpace& exec,
                            const distributed_block_sparse_options& options = {})
      : options_(options) {
    (void)exec;
    detail::require_same_everywhere(
        comm, fn_,
        {{"options.transport", double(options.transport)},
         {"options.kept_tiles_only", options.kept_tiles_only ? 1.0 : 0.0}});
    detail::collectively(comm, fn_, [&] {
      nearsparse::detail::resolve_transport<ExecSpace>(options.transport, fn_);
    });
    comm_ = std::make_shared<own_comm>();
    nearsparse::detail::mpi_check(MPI_Comm_dup(comm, &comm_->comm), fn_, "MPI_Comm_dup");
    channel_ = std::make_shared<nearsparse::detail::broadcast_channel<ExecSpace>>(
        comm_->comm, options.transport, fn_);
  }

  /// The communicator's own duplicate of the one it was built with.
  MPI_Comm comm() const { return comm_->comm; }
  int size() const { return nearsparse::detail::mpi_size(comm()); }
  int rank() const { return nearsparse::detail::mpi_rank(comm()); }
  /// How the values travel (automatic resolved).
  gpu_transport transport() const { return channel_->kind(); }
  const distributed_block_sparse_options& options() const { return options_; }

  /// This process's rows of a matrix of `rows` rows split evenly in whole tiles.
  std::pair<int, int> rows(int rows, int tile) const {
    return block_sparse_rows(comm(), rows, tile);
  }

  /// C_p = alpha * A_p * B + beta * C_p: A_p and C_p this process's rows of A and C, b_p its rows
  /// of B. The options are those of the single-process multiply; the relative drop rule takes
  /// its threshold from the whole C. C_p.dropped_norm() becomes the norm the drop rule removed
  /// from this process's rows plus |beta| times its previous value (beta != 0). C_p keeps its
  /// old arrays when anything fails on any process.
  template <class Scalar>
  distributed_block_sparse_report multiply(
      const ExecSpace& exec, typename block_sparse_matrix<Scalar, ExecSpace>::scalar_type alpha,
      const block_sparse_matrix<Scalar, ExecSpace>& a_p,
      const block_sparse_matrix<Scalar, ExecSpace>& b_p,
      typename block_sparse_matrix<Scalar, ExecSpace>::scalar_type beta,
      block_sparse_matrix<Scalar, ExecSpace>& c_p,
      const block_sparse_multiply_options& options = {}) {
    namespace nd = nearsparse::detail;
    const char* fn = fn_;
    const auto started = std::chrono::steady_clock::now();
    const int np = size(), me = rank();
    const std::size_t P = std::size_t(np);

    // Arguments, checked on every process and raised on all before anything moves.
    detail::collectively(comm(), fn, [&] {
      a_p.check_structure(fn, "A");
      b_p.check_structure(fn, "B");
      c_p.check_structure(fn, "C");
      require(b_p.tile() == a_p.tile() && c_p.tile() == a_p.tile(), fn, "B",
              nd::concat("and C have tiles ", b_p.tile(), " and ", c_p.tile(), ", but A (",
                         detail::describe(a_p), ") has tile ", a_p.tile()));
      require(c_p.rows() == a_p.rows() && c_p.cols() == b_p.cols(), fn, "C",
              nd::concat("has extents ", c_p.rows(), " x ", c_p.cols(), ", expected ", a_p.rows(),
                         " x ", b_p.cols(), " (this process's A is ", a_p.rows(), " x ", a_p.cols(),
                         ", its B ", b_p.rows(), " x ", b_p.cols(), ")"));
      require(std::isfinite(double(alpha)), fn, "alpha", "must be finite");
      require(std::isfinite(double(beta)), fn, "beta", "must be finite");
      require_nonnegative(fn, "options.tau", options.tau);
      require_nonnegative(fn, "options.drop_tolerance", options.drop_tolerance);
      detail::require_drop_rule(fn, "options.rule", options.rule);
      detail::require_block_sparse_implementation(exec, fn, "options.implementation",
                                                  options.implementation);
      const std::int64_t stored =
          detail::read_back(exec, b_p.row_map(), std::size_t(b_p.tile_rows()));
      require(stored == b_p.kept_tiles(), fn, "B",
              nd::concat("(", detail::describe(b_p), ") has a row_map ending at ", stored, " for ",
                         b_p.kept_tiles(), " stored tiles"));
    });
    // The options and scalars agree on every process (tau filters at the owners of B).
    detail::require_same_everywhere(comm(), fn,
                                    {{"options.tau", options.tau},
                                     {"options.drop_tolerance", options.drop_tolerance},
                                     {"options.rule", double(options.rule)},
                                     {"options.implementation", double(options.implementation)},
                                     {"alpha", double(alpha)},
                                     {"beta", double(beta)}});
    // The blocks must tile the whole matrices in rank order.
    const int tile = a_p.tile();
    detail::row_block_starts(comm(), fn, "A", a_p.rows(), a_p.cols(), tile);
    const std::vector<long long> b_start =
        detail::row_block_starts(comm(), fn, "B", b_p.rows(), b_p.cols(), tile);
    if (b_start[P] != a_p.cols())  // the same on every process
      nd::throw_invalid_argument(
          fn, "B",
          nd::concat("has ", b_start[P], " rows over the processes, but A has ", a_p.cols(),
                     " columns; they must be equal"));
    const std::int64_t tt = std::int64_t(tile) * tile;
    // kt_edge[p]: B's first tile row on process p; kt_edge[P]: B's tile rows.
    std::vector<int> kt_edge(P + 1, 0);
    for (std::size_t p = 0; p <= P; ++p) kt_edge[p] = int((b_start[p] + tile - 1) / tile);
    const int kt = kt_edge[P];
    const int my_kts = kt_edge[std::size_t(me) + 1] - kt_edge[std::size_t(me)];
    auto rows_of = [&](std::size_t p) { return kt_edge[p + 1] - kt_edge[p]; };

    // The operands are finite on every process.
    detail::collectively(comm(), fn, [&] {
      detail::require_product_operands_finite(exec, fn, a_p, b_p, beta != Scalar(0), c_p);
    });

    // B as this process's product reads it: B_p itself when one process holds all of B (nothing
    // moves); otherwise the rows it needs, assembled below.
    distributed_block_sparse_report report;
    typename block_sparse_matrix<Scalar, ExecSpace>::parts_type b = b_p.parts();
    if (np > 1) {
      b.rows = a_p.cols();
      b.cols = b_p.cols();
      b.tile = tile;
      // 1. Per tile column k of A_p: the largest norm of its tiles there, -1 where it has none;
      //    each owner of B's rows receives every process's values over its rows.
      std::vector<double> want(std::size_t(my_kts) * P);
      {
        std::vector<double> a_max(std::size_t(kt), -1.0);
        const auto cols = detail::host_copy(exec, a_p.column_indices());
        const auto norms = detail::host_copy(exec, a_p.norms());
        for (std::size_t t = 0; t < cols.size(); ++t)
          a_max[std::size_t(cols[t])] = std::max(a_max[std::size_t(cols[t])], norms[t]);
        std::vector<int> sc(P), sdp(P), rc(P), rdp(P);
        for (std::size_t p = 0; p < P; ++p) {
          sdp[p] = kt_edge[p];
          sc[p] = rows_of(p);
          rdp[p] = int(p) * my_kts;
          rc[p] = my_kts;
        }
        nd::mpi_check(MPI_Alltoallv(a_max.data(), sc.data(), sdp.data(), MPI_DOUBLE, want.data(),
                                    rc.data(), rdp.data(), MPI_DOUBLE, comm()),
                      fn, "MPI_Alltoallv");
      }

      // 2. For each other process r, the tiles of my rows of B it needs (indexed: every tile of
      //    a row k where A_r stores a tile in column k) and, by their place in that list, those
      //    whose values travel. This process's own rows stay on the device, whole.
      const bool filter = options_.kept_tiles_only && options.tau > 0;
      const auto b_row_map = detail::host_copy(exec, b_p.row_map());
      const auto b_cols = detail::host_copy(exec, b_p.column_indices());
      const auto b_norms = detail::host_copy(exec, b_p.norms());
      std::vector<std::vector<std::int64_t>> indexed(P), sent(P), row_counts(P);
      for (std::size_t r = 0; r < P; ++r) {
        row_counts[r].assign(std::size_t(my_kts), 0);
        if (int(r) == me) continue;
        for (int l = 0; l < my_kts; ++l) {
          const double am = want[r * std::size_t(my_kts) + std::size_t(l)];
          if (am < 0) continue;
          const std::int64_t q0 = b_row_map[std::size_t(l)], q1 = b_row_map[std::size_t(l) + 1];
          for (std::int64_t q = q0; q < q1; ++q) {
            if (!filter || am * b_norms[std::size_t(q)] >= options.tau)
              sent[r].push_back(std::int64_t(indexed[r].size()));
            indexed[r].push_back(q);
          }
          row_counts[r][std::size_t(l)] = q1 - q0;
        }
      }

      // 3. The indices by MPI on the host. To each other process r: its row counts over my rows
      //    of B, the column index and norm of each indexed tile, the positions of the tiles
      //    whose values follow.
      std::vector<std::int64_t> counts_out(2 * P), counts_in(2 * P);
      for (std::size_t r = 0; r < P; ++r) {
        counts_out[2 * r] = std::int64_t(indexed[r].size());
        counts_out[2 * r + 1] = std::int64_t(sent[r].size());
      }
      nd::mpi_check(
          MPI_Alltoall(counts_out.data(), 2, MPI_INT64_T, counts_in.data(), 2, MPI_INT64_T, comm()),
          fn, "MPI_Alltoall");
      std::vector<char> index_out, index_in;
      std::vector<int> so(P), sdp(P), ro(P), rdp(P);
      std::int64_t total_in = 0;
      for (std::size_t r = 0; r < P; ++r) {
        const std::size_t start = index_out.size();
        sdp[r] = int(start);
        rdp[r] = int(total_in);
        if (int(r) == me) continue;  // so[r] = ro[r] = 0
        std::vector<int> c(indexed[r].size());
        std::vector<double> nm(indexed[r].size());
        for (std::size_t t = 0; t < indexed[r].size(); ++t) {
          c[t] = b_cols[std::size_t(indexed[r][t])];
          nm[t] = b_norms[std::size_t(indexed[r][t])];
        }
        detail::append_bytes(index_out, row_counts[r].data(), row_counts[r].size());
        detail::append_bytes(index_out, c.data(), c.size());
        detail::append_bytes(index_out, nm.data(), nm.size());
        detail::append_bytes(index_out, sent[r].data(), sent[r].size());
        const std::int64_t in = std::int64_t(rows_of(r)) * std::int64_t(sizeof(std::int64_t)) +
                                counts_in[2 * r] * std::int64_t(sizeof(int) + sizeof(double)) +
                                counts_in[2 * r + 1] * std::int64_t(sizeof(std::int64_t));
        so[r] = int(std::min<std::size_t>(index_out.size() - start, 2147483647));
        ro[r] = int(std::min<std::int64_t>(in, 2147483647));
        total_in += in;
      }
      // MPI counts are int: the indices of one call must stay below 2 GiB per process.
      detail::collectively(comm(), fn, [&] {
        require(index_out.size() < std::size_t(2147483647) && total_in < 2147483647, fn, "B",
                nd::concat("needs ", index_out.size(), " bytes of tile indices sent and ", total_in,
                           " received on this process, beyond the 2 GiB one call moves; use "
                           "more processes"));
      });
      index_in.resize(std::size_t(total_in));
      nd::mpi_check(MPI_Alltoallv(index_out.data(), so.data(), sdp.data(), MPI_BYTE,
                                  index_in.data(), ro.data(), rdp.data(), MPI_BYTE, comm()),
                    fn, "MPI_Alltoallv");

      // 4. The rows of B this process needs, as one K x N block-sparse matrix in owner order:
      //    the other processes' parts from their messages (host), this process's rows whole
      //    from B_p (device to device).
      std::vector<std::int64_t> row_map(std::size_t(kt) + 1, 0);
      std::vector<int> cols;  // the other processes' parts
      std::vector<double> norms;
      std::vector<std::int64_t> seg(P + 1, 0);              // first tile of each owner's part
      std::vector<std::vector<std::int64_t>> positions(P);  // of the tiles whose values travel
      const std::size_t mine = std::size_t(me);
      const std::int64_t n_own = b_row_map[std::size_t(my_kts)];
      for (std::size_t s = 0; s < P; ++s) {
        if (s == mine) {
          for (int l = 0; l < my_kts; ++l)
            row_map[std::size_t(kt_edge[s] + l) + 1] =
                b_row_map[std::size_t(l) + 1] - b_row_map[std::size_t(l)];
          seg[s + 1] = seg[s] + n_own;
          continue;
        }
        std::size_t at = std::size_t(rdp[s]);
        const std::int64_t n_idx = counts_in[2 * s], n_val = counts_in[2 * s + 1];
        std::vector<std::int64_t> rc(std::size_t(rows_of(s)));
        detail::read_bytes(index_in, at, rc.data(), rc.size());
        for (std::size_t l = 0; l < rc.size(); ++l)
          row_map[std::size_t(kt_edge[s]) + l + 1] = rc[l];
        const std::size_t c0 = cols.size();
        cols.resize(c0 + std::size_t(n_idx));
        norms.resize(c0 + std::size_t(n_idx));
        detail::read_bytes(index_in, at, cols.data() + c0, std::size_t(n_idx));
        detail::read_bytes(index_in, at, norms.data() + c0, std::size_t(n_idx));
        positions[s].resize(std::size_t(n_val));
        detail::read_bytes(index_in, at, positions[s].data(), std::size_t(n_val));
        seg[s + 1] = seg[s] + n_idx;
        for (auto& x : positions[s]) x += seg[s];
        report.tiles_received += n_val;
        report.tiles_indexed_only += n_idx - n_val;
        report.bytes_received += ro[s] + n_val * tt * std::int64_t(sizeof(Scalar));
        report.bytes_of_whole_rows += n_idx * tt * std::int64_t(sizeof(Scalar));
      }
      for (int i = 0; i < kt; ++i) row_map[std::size_t(i) + 1] += row_map[std::size_t(i)];
      const std::int64_t n_b = seg[P];
      const std::int64_t own0 = seg[mine], own1 = seg[mine + 1];  // my rows' tiles in B

      std::int64_t n_send = 0, n_recv = 0;
      for (std::size_t r = 0; r < P; ++r) {
        if (r == mine) continue;
        n_send += std::int64_t(sent[r].size());
        n_recv += counts_in[2 * r + 1];
      }
      detail::collectively(comm(), fn, [&] {
        nd::require_fits<memory_space>(
            exec, fn, "B",
            nd::concat("(the ", n_b, " tiles of its own rows and the other rows its A reads, with ",
                       n_send, " tiles to send and ", n_recv, " to receive)"),
            std::size_t(n_b + n_send + n_recv) * std::size_t(tt) * sizeof(Scalar) +
                std::size_t(n_b) * (sizeof(int) + sizeof(double)),
            "; use more processes or a larger tau");
        b.row_map = detail::device_copy<memory_space>(
            exec, "nearsparse::spamm::block_sparse::row_map", row_map);
        detail::allocate_tiles(exec, b, n_b);
      });
      {
        // Index and norm: the parts before and after mine from the host, mine from B_p.
        using range = std::pair<std::size_t, std::size_t>;
        const range before{0, std::size_t(own0)};
        const range own{std::size_t(own0), std::size_t(own1)};
        const range after{std::size_t(own1), std::size_t(n_b)};
        const std::size_t after_host = std::size_t(own0);  // where `after` starts in cols/norms
        auto from_host = [&](const auto& device, const auto* host, const range& r) {
          using value = typename std::decay_t<decltype(device)>::non_const_value_type;
          if (r.second == r.first) return;
          Kokkos::View<const value*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(
              host, r.second - r.first);
          Kokkos::deep_copy(exec, Kokkos::subview(device, r), h);
        };
        from_host(b.cols_idx, cols.data(), before);
        from_host(b.norms, norms.data(), before);
        from_host(b.cols_idx, cols.data() + after_host, after);
        from_host(b.norms, norms.data() + after_host, after);
        Kokkos::deep_copy(exec, Kokkos::subview(b.cols_idx, own), b_p.column_indices());
        Kokkos::deep_copy(exec, Kokkos::subview(b.norms, own), b_p.norms());
        // Values: mine from B_p; the others' zero until the values that travel land (no kept
        // product reads the rest).
        const std::size_t t = std::size_t(tt);
        Kokkos::deep_copy(exec, Kokkos::subview(b.values, range(own.first * t, own.second * t)),
                          b_p.values());
        Kokkos::deep_copy(
            exec, Kokkos::subview(b.values, range(before.first * t, before.second * t)), Scalar(0));
        Kokkos::deep_copy(exec, Kokkos::subview(b.values, range(after.first * t, after.second * t)),
                          Scalar(0));
        exec.fence();  // the host arrays are read
      }
      {
        using values_view = Kokkos::View<Scalar*, memory_space>;
        values_view send, recv;
        detail::collectively(comm(), fn, [&] {
          send = values_view(
              Kokkos::view_alloc(exec, Kokkos::WithoutInitializing,
                                 std::string("nearsparse::spamm::block_sparse_communicator::send")),
              std::size_t(n_send * tt));
          recv = values_view(
              Kokkos::view_alloc(exec, Kokkos::WithoutInitializing,
                                 std::string("nearsparse::spamm::block_sparse_communicator::recv")),
              std::size_t(n_recv * tt));
        });
        std::vector<std::int64_t> src, dst, rsrc, rdst;
        std::vector<nd::peer_transfer> moves;
        std::int64_t s_at = 0, r_at = 0;
        for (std::size_t r = 0; r < P; ++r) {
          if (r == mine) continue;
          nd::peer_transfer m;
          m.peer = int(r);
          m.send = send.data() + s_at * tt;
          m.send_bytes = sent[r].size() * std::size_t(tt) * sizeof(Scalar);
          for (const auto pos : sent[r]) {
            src.push_back(indexed[r][std::size_t(pos)]);
            dst.push_back(s_at++);
          }
          m.recv = recv.data() + r_at * tt;
          m.recv_bytes = std::size_t(counts_in[2 * r + 1]) * std::size_t(tt) * sizeof(Scalar);
          for (const auto pos : positions[r]) {
            rsrc.push_back(r_at++);
            rdst.push_back(pos);
          }
          if (m.send_bytes > 0 || m.recv_bytes > 0) moves.push_back(m);
        }
        detail::move_listed_tiles(exec, b_p.values(), send, src, dst, tt);
        channel_->begin_round(exec);  // forgets the last call's transfers and staging slots
        const int ticket = channel_->start_exchange(exec, moves);
        channel_->finish(exec, ticket);
        detail::move_listed_tiles(exec, recv, b.values, rsrc, rdst, tt);
        exec.fence();  // the transfers are done before send and recv go
      }
    }
    const auto exchanged = std::chrono::steady_clock::now();
    report.exchange_seconds = std::chrono::duration<double>(exchanged - started).count();

    // 5. This process's rows of C, then the drop rule with the threshold of the whole C.
    typename block_sparse_matrix<Scalar, ExecSpace>::parts_type result;
    result.rows = c_p.rows();
    result.cols = c_p.cols();
    result.tile = tile;
    detail::product_counts counts;
    detail::collectively(comm(), fn, [&] {
      counts = detail::multiply_impl(exec, alpha, a_p.parts(), b, beta, c_p.parts(), options.tau,
                                     0.0, false, result, fn, options.implementation);
      exec.fence();
      require(counts.non_finite == 0, fn, "A",
              nd::concat("times B gives non-finite values in ", counts.non_finite,
                         " tiles of this process's rows of C (overflow)"));
    });
    std::int64_t tiles_dropped = 0;
    const double dropped_sq =
        detail::drop_over_processes(comm(), exec, result, options.drop_tolerance,
                                    options.rule == drop_rule::relative, tiles_dropped, fn);
    result.dropped_norm = std::sqrt(dropped_sq) +
                          (beta != Scalar(0) ? std::abs(double(beta)) * c_p.dropped_norm() : 0.0);
    // The report of the whole product.
    // Dropped: the exactly zero tiles the product removed, then those below the threshold.
    std::int64_t sums[4] = {counts.kept_products, counts.candidate_products,
                            counts.tiles_before_drop - counts.tiles_dropped - tiles_dropped,
                            counts.tiles_dropped + tiles_dropped};
    double squares[2] = {counts.bound_sq, dropped_sq};
    nd::mpi_check(MPI_Allreduce(MPI_IN_PLACE, sums, 4, MPI_INT64_T, MPI_SUM, comm()), fn,
                  "MPI_Allreduce");
    nd::mpi_check(MPI_Allreduce(MPI_IN_PLACE, squares, 2, MPI_DOUBLE, MPI_SUM, comm()), fn,
                  "MPI_Allreduce");
    report.product.kept_products = sums[0];
    report.product.candidate_products = sums[1];
    report.product.tiles_kept = sums[2];
    report.product.tiles_dropped = sums[3];
    report.product.error_bound = std::sqrt(squares[0]);
    report.product.dropped_norm = std::sqrt(squares[1]);
    c_p.assign(result, fn, "C");
    report.product_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - exchanged).count();
    return report;
  }

 private:
  static constexpr const char* fn_ = "nearsparse::spamm::block_sparse_communicator";
  /// A duplicated communicator, freed with the last copy of the object (unless MPI has ended).
  struct own_comm {
    MPI_Comm comm = MPI_COMM_NULL;
    ~own_comm() {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (comm != MPI_COMM_NULL && !finalized) MPI_Comm_free(&comm);
    }
  };
  std::shared_ptr<own_comm> comm_;
  distributed_block_sparse_options options_;
  std::shared_ptr<nearsparse::detail::broadcast_channel<ExecSpace>> channel_;
};

namespace detail {

/// The operations of the matrix functions' iterations (block_sparse_functions.hpp, over
/// whole_matrices on one process) on this process's rows of matrices distributed by rows:
/// products through the communicator, sums row by row with the drop rule over the whole sum,
/// traces, norms and Gershgorin bounds over all processes.
template <class Scalar, class ExecSpace>
struct row_block_matrices {
  using scalar = Scalar;
  using matrix = block_sparse_matrix<Scalar, ExecSpace>;
  block_sparse_communicator<ExecSpace>& world;
  ExecSpace exec;
  int row0 = 0;  ///< this process's first row (a multiple of the tile)
  const char* fn = "";

  matrix zero(const matrix& like) { return matrix(exec, like.rows(), like.cols(), like.tile()); }
  /// This process's rows of the identity.
  matrix identity(const matrix& like) {
    typename matrix::parts_type parts;
    parts.rows = like.rows();
    parts.cols = like.cols();
    parts.tile = like.tile();
    identity_impl(exec, parts, row0 / like.tile());
    matrix m;
    m.assign(parts, fn, "I");
    return m;
  }
  block_sparse_report multiply(const matrix& a, const matrix& b, matrix& c,
                               const block_sparse_multiply_options& o) {
    return world.multiply(exec, Scalar(1), a, b, Scalar(0), c, o).product;
  }
  /// c = alpha a + beta b on this process's rows, then the drop rule of `o` over the whole sum.
  block_sparse_add_report add(Scalar alpha, const matrix& a, Scalar beta, const matrix& b,
                              matrix& c, const block_sparse_add_options& o) {
    matrix sum;
    std::int64_t zero_tiles = 0;
    collectively(world.comm(), fn, [&] {
      zero_tiles =
          spamm::add(exec, alpha, a, beta, b, sum, block_sparse_add_options{}).tiles_dropped;
    });
    auto parts = sum.parts();
    std::int64_t dropped = 0;
    const double dropped_sq = drop_over_processes(world.comm(), exec, parts, o.drop_tolerance,
                                                  o.rule == drop_rule::relative, dropped, fn);
    parts.dropped_norm += std::sqrt(dropped_sq);
    std::int64_t counts[2] = {dropped + zero_tiles, parts.cols_idx.extent_int(0)};
    double removed = dropped_sq;
    nearsparse::detail::mpi_check(
        MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_INT64_T, MPI_SUM, world.comm()), fn,
        "MPI_Allreduce");
    nearsparse::detail::mpi_check(
        MPI_Allreduce(MPI_IN_PLACE, &removed, 1, MPI_DOUBLE, MPI_SUM, world.comm()), fn,
        "MPI_Allreduce");
    c.assign(parts, fn, "C");
    block_sparse_add_report report;
    report.tiles_dropped = counts[0];
    report.tiles_kept = counts[1];
    report.dropped_norm = std::sqrt(removed);
    return report;
  }
  double trace(const matrix& m) { return sum(trace_impl(exec, m.parts(), row0 / m.tile())); }
  std::int64_t tiles(const matrix& m) {
    std::int64_t n = m.kept_tiles();
    nearsparse::detail::mpi_check(
        MPI_Allreduce(MPI_IN_PLACE, &n, 1, MPI_INT64_T, MPI_SUM, world.comm()), fn,
        "MPI_Allreduce");
    return n;
  }
  double frobenius_norm(const matrix& m) {
    std::int64_t bad = 0;
    return std::sqrt(sum(sum_of_squares(exec, m.norms(), bad)));
  }
  spectral_bounds bounds(const matrix& m) {
    double b[2] = {std::numeric_limits<double>::infinity(),
                   -std::numeric_limits<double>::infinity()};
    if (m.rows() > 0) gershgorin_impl(exec, m.parts(), b[0], b[1], row0);
    b[1] = -b[1];
    nearsparse::detail::mpi_check(
        MPI_Allreduce(MPI_IN_PLACE, b, 2, MPI_DOUBLE, MPI_MIN, world.comm()), fn, "MPI_Allreduce");
    spectral_bounds out;
    out.lower = b[0];
    out.upper = -b[1];
    return out;
  }
  void fence() { exec.fence(); }

 private:
  double sum(double x) {
    nearsparse::detail::mpi_check(
        MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_SUM, world.comm()), fn, "MPI_Allreduce");
    return x;
  }
};

/// The checks of a distributed matrix function, on every process, raised on all: the options,
/// this process's rows of the input and of the output (same extents and tile, finite), and the
/// row blocks forming a square matrix. Returns this process's first row.
template <class Scalar, class ExecSpace>
int check_distributed_function(block_sparse_communicator<ExecSpace>& world, const ExecSpace& exec,
                               const char* fn, const char* in_name,
                               const block_sparse_matrix<Scalar, ExecSpace>& in,
                               const char* out_name,
                               const block_sparse_matrix<Scalar, ExecSpace>& out,
                               const block_sparse_function_options& options) {
  namespace nd = nearsparse::detail;
  collectively(world.comm(), fn, [&] {
    in.check_structure(fn, in_name);
    out.check_structure(fn, out_name);
    require(out.rows() == in.rows() && out.cols() == in.cols() && out.tile() == in.tile(), fn,
            out_name,
            nd::concat("(", describe(out), ") must have the extents and tile of ", in_name, " (",
                       describe(in), ") on every process"));
    check_function_options(fn, options);
    require_block_sparse_implementation(exec, fn, "options.implementation", options.implementation);
    check_function_input_finite(exec, fn, in_name, in);
  });
  // Every process takes the same branches only with the same options.
  MPI_Comm comm = world.comm();
  require_same_everywhere(comm, fn,
                          {{"options.tau", options.tau},
                           {"options.drop_tolerance", options.drop_tolerance},
                           {"options.residual_tolerance", options.residual_tolerance},
                           {"options.max_iterations", double(options.max_iterations)},
                           {"options.implementation", double(options.implementation)}});
  const std::vector<long long> start =
      row_block_starts(world.comm(), fn, in_name, in.rows(), in.cols(), in.tile());
  if (start.back() != in.cols())  // the same on every process
    nd::throw_invalid_argument(fn, in_name,
                               nd::concat("has ", start.back(), " rows over the processes and ",
                                          in.cols(), " columns; it must be square"));
  return int(start[std::size_t(world.rank())]);
}

}  // namespace detail

/// sp2 (spamm/block_sparse_functions.hpp) on H distributed by rows: h_p this process's rows of
/// H, d_p receives this process's rows of D (the extents and tile of h_p). The same iteration as
/// on one process, with the products through `world`, the traces, norms and bounds over all
/// processes, and the drop rules relative to the whole matrices; the report is the whole
/// iteration's, the same on every process. Collective.
template <class Scalar, class ExecSpace>
block_sparse_function_report sp2(block_sparse_communicator<ExecSpace>& world, const ExecSpace& exec,
                                 const block_sparse_matrix<Scalar, ExecSpace>& h_p,
                                 std::int64_t occupied, block_sparse_matrix<Scalar, ExecSpace>& d_p,
                                 const block_sparse_function_options& options = {}) {
  constexpr const char* fn = "nearsparse::spamm::sp2 (distributed)";
  const int row0 = detail::check_distributed_function(world, exec, fn, "H", h_p, "D", d_p, options);
  const int n = h_p.cols();
  // The same on every process, so all raise alike.
  detail::require_same_everywhere(world.comm(), fn, {{"occupied", double(occupied)}});
  require(occupied >= 0 && occupied <= std::int64_t(n), fn, "occupied",
          nearsparse::detail::concat("is ", occupied, "; it must lie in [0, ", n, "] for H of ", n,
                                     " x ", n));
  if (n == 0) {
    d_p.assign(block_sparse_matrix<Scalar, ExecSpace>(exec, h_p.rows(), 0, h_p.tile()).parts(), fn,
               "D");
    block_sparse_function_report report;
    report.converged = true;
    return report;
  }
  detail::row_block_matrices<Scalar, ExecSpace> ops{world, exec, row0, fn};
  return detail::sp2_iteration(ops, h_p, occupied, d_p, options, fn);
}

/// inverse_sqrt (spamm/block_sparse_functions.hpp) on S distributed by rows: s_p this process's
/// rows of S, z_p receives its rows of S^(-1/2). As sp2 above. Collective.
template <class Scalar, class ExecSpace>
block_sparse_function_report inverse_sqrt(block_sparse_communicator<ExecSpace>& world,
                                          const ExecSpace& exec,
                                          const block_sparse_matrix<Scalar, ExecSpace>& s_p,
                                          block_sparse_matrix<Scalar, ExecSpace>& z_p,
                                          const block_sparse_function_options& options = {}) {
  constexpr const char* fn = "nearsparse::spamm::inverse_sqrt (distributed)";
  const int row0 = detail::check_distributed_function(world, exec, fn, "S", s_p, "Z", z_p, options);
  if (s_p.cols() == 0) {
    z_p.assign(block_sparse_matrix<Scalar, ExecSpace>(exec, s_p.rows(), 0, s_p.tile()).parts(), fn,
               "Z");
    block_sparse_function_report report;
    report.converged = true;
    return report;
  }
  detail::row_block_matrices<Scalar, ExecSpace> ops{world, exec, row0, fn};
  return detail::inverse_sqrt_iteration(ops, s_p, z_p, options, fn);
}

/// sign (spamm/block_sparse_functions.hpp) on A distributed by rows: a_p this process's rows of
/// A, x_p receives its rows of sign(A). As sp2 above. Collective.
template <class Scalar, class ExecSpace>
block_sparse_function_report sign(block_sparse_communicator<ExecSpace>& world,
                                  const ExecSpace& exec,
                                  const block_sparse_matrix<Scalar, ExecSpace>& a_p,
                                  block_sparse_matrix<Scalar, ExecSpace>& x_p,
                                  const block_sparse_function_options& options = {}) {
  constexpr const char* fn = "nearsparse::spamm::sign (distributed)";
  const int row0 = detail::check_distributed_function(world, exec, fn, "A", a_p, "X", x_p, options);
  if (a_p.cols() == 0) {
    x_p.assign(block_sparse_matrix<Scalar, ExecSpace>(exec, a_p.rows(), 0, a_p.tile()).parts(), fn,
               "X");
    block_sparse_function_report report;
    report.converged = true;
    return report;
  }
  detail::row_block_matrices<Scalar, ExecSpace> ops{world, exec, row0, fn};
  return detail::sign_iteration(ops, a_p, x_p, options, fn);
}

}  // namespace nearsparse::spamm

#endif  // NEARSPARSE_ENABLE_MPI
