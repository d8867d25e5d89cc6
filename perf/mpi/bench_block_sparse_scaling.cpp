// `nearsparse_bench_block_sparse_mpi`: strong and weak scaling of block-sparse SpAMM over MPI
// processes, one per GPU (spamm/distributed_block_sparse.hpp): C = A A with A distributed by
// rows, B = A (the same local blocks), the whole call world.multiply(exec, 1, A_p, A_p, 0, C_p)
// as an iteration pays it (indices and tiles of B exchanged, the product of the local rows, the
// drop rule with the threshold of the whole C).
//
//   mpiexec -n 4 nearsparse_bench_block_sparse_mpi --case chain --n 2097152 --precision fp64
//       --kokkos-num-devices=4
//   mpiexec -n 4 nearsparse_bench_block_sparse_mpi --case chain --n 524288 --weak ...
//
// Matrices (spamm/sparse_models.hpp, as perf/bench_block_sparse.cpp): chain =
// overlap_chain_crs(N, 0.1, 1e-6), the band |i - j| <= 138; lattice = overlap_lattice_crs(nx, ny,
// nz, 3.0, 1e-6), L1 distance <= 4, with nx = ny = 64 and nz = N / 4096 from --n, or --lattice
// NX,NY,NZ. Each process builds only its rows [r0, r1) (block_sparse_rows: an even split in whole
// tiles) as an (r1 - r0) x N CRS matrix from the library's row generator, then from_crs with drop
// tolerance 0 (the tiles holding a nonzero, as the whole matrix would have them). --weak grows the
// matrix with the processes: N per process (the chain's N, or the lattice's nz, times P).
//
// tau. --tau X is relative: the absolute tau of the options is X times the largest norm product
// of A's tiles, (max_t ||A_t||_F)^2 (over all processes); it does not change with N, so a weak
// scaling run keeps the same fraction of products. --tau-absolute gives it directly.
//
// Timing: --warmup whole calls (the first NCCL transfer between a pair of processes connects),
// then --repeats whole calls, each between barriers with a fresh zero C_p made before it; the
// figure is the median over calls of the slowest process's time, and so are the exchange and
// product seconds of the report (each the largest over the processes). With one process the
// single-process spamm::multiply of the same matrices is timed as well (single_ms).
//
// --function sp2: the density matrix of the cubic-lattice Hamiltonian (--case cubic,
// spamm::cubic_lattice_crs's rows: hopping 1, staggered on-site +-delta) by the distributed
// sp2 with half the states occupied, tau = drop tolerance = --tau (absolute here), until the
// residual ||X^2 - X||_F / sqrt(N / 2) is at most --residual-tolerance; one timed call after
// --warmup products H H (NCCL connects on the first). Prints the steps, the time per step and the
// memory of D; with one process a call the device cannot hold is refused with its sizes.
//
// Check (automatic at N <= 20000, --check / --no-check): every process also builds the whole
// matrix and runs the single-process spamm::multiply with the same options; kept and candidate
// products, C's stored tiles and the report's tiles of C kept and dropped must match exactly,
// ||C||_F (summed over the processes) and the error bound to 1e-10 relative, and every process's
// C_p must equal the single-process C's rows (same tiles, values to 1e-10 of ||C||_F). Prints
// "OK" or "FAILED ..."; at large sizes the counts and ||C||_F are printed (and in the CSV) so that
// runs on different P can be compared.

#include "arguments.hpp"
#include "mpi_program.hpp"
#include "support/harness.hpp"

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/gpu_transport.hpp>
#include <nearsparse/core/implementation.hpp>
#include <nearsparse/spamm/block_sparse.hpp>
#include <nearsparse/spamm/block_sparse_functions.hpp>
#include <nearsparse/spamm/distributed_block_sparse.hpp>
#include <nearsparse/spamm/sparse_models.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace spamm = nearsparse::spamm;
using exec_t = Kokkos::DefaultExecutionSpace;
using memory_t = exec_t::memory_space;

constexpr const char* program = "nearsparse_bench_block_sparse_mpi";
// The models of perf/bench_block_sparse.cpp.
constexpr double chain_alpha = 0.1, lattice_alpha = 3.0, model_cutoff = 1e-6;
// The automatic check runs up to this N (every process builds and multiplies the whole matrix).
constexpr long check_limit = 20000;
// Largest extent of a block-sparse matrix (spamm/block_sparse.hpp).
constexpr long max_extent = 2147483647L - 256;

const char* const usage =
    "Usage: mpiexec -n P nearsparse_bench_block_sparse_mpi [options] [--kokkos-num-devices=G]\n"
    "C = A A by block-sparse SpAMM over P processes, A distributed by rows (B = A).\n"
    "  --function F         multiply (C = A A, default) or sp2 (the density matrix of --case\n"
    "                       cubic, half filled)\n"
    "  --case C             chain, lattice or cubic (default chain; cubic: the Hamiltonian of\n"
    "                       spamm::cubic_lattice_crs, for --function sp2, --lattice NX,NY,NZ)\n"
    "                       chain: overlap_chain_crs(N, 0.1, 1e-6), the band |i - j| <= 138\n"
    "                       lattice: overlap_lattice_crs(nx, ny, nz, 3.0, 1e-6), L1 distance <= 4\n"
    "  --n N                chain: sites (default 65536); lattice: 64 x 64 x (N / 4096) sites,\n"
    "                       N a multiple of 4096 (default 65536)\n"
    "  --lattice NX,NY,NZ   lattice extents instead of --n (site index x + NX (y + NY z))\n"
    "  --weak               weak scaling: N (chain) or NZ (lattice) is per process, the matrix\n"
    "                       has P times as many rows\n"
    "  --precision P        fp64 or fp32 (default fp64)\n"
    "  --tile T             tile edge 8, 16, 32, 64 or 128 (default 32)\n"
    "  --tau X              relative tau (default 1e-10): the product A[i,k] A[k,j] is kept when\n"
    "                       ||A[i,k]|| ||A[k,j]|| >= X (max_t ||A_t||_F)^2; 0 keeps every product\n"
    "  --tau-absolute X     the absolute tau of the options instead of --tau\n"
    "  --drop X             drop tolerance on C's tiles, relative to ||C||_F (default 0)\n"
    "  --repeats R          timed whole calls (default 10)\n"
    "  --warmup W           untimed whole calls before them (default 2)\n"
    "  --no-kept-tiles-only send the values of every tile of the rows of B a process needs\n"
    "                       (default: only tiles a kept product reads)\n"
    "  --transport T        automatic, host_staging or nccl (default automatic)\n"
    "  --implementation I   automatic, portable or specialized tile products (default automatic)\n"
    "  --check              compare with the single-process multiply of the whole matrix (on\n"
    "                       every process); automatic at N <= 20000\n"
    "  --no-check           never compare\n"
    "  --csv FILE           append one line per run, after a header line when FILE is new\n"
    "  sp2 only: --delta D (staggered on-site energy, default 8), --residual-tolerance R\n"
    "            (default 1e-6), --max-iterations K (default 100); --tau is absolute for sp2\n"
    "            (default 1e-7) and is the drop tolerance too\n"
    "  --help               this text\n"
    "Timing: the median over the calls of the slowest process's time between barriers.\n";

/// What the command line asks for (the same on every process).
struct config {
  bool sp2 = false;    // --function sp2
  bool cubic = false;  // --case cubic (sp2's Hamiltonian)
  double delta = 8.0, residual_tolerance = 1e-6;
  int max_iterations = 100;
  bool lattice = false;
  long n = 0;                   // the whole matrix's rows
  long nx = 0, ny = 0, nz = 0;  // lattice extents (of the whole matrix)
  bool weak = false;
  bool fp64 = true;
  int tile = 32;
  double tau_relative = 1e-10;
  double tau_absolute = -1;  // < 0: from tau_relative
  double drop = 0;
  int repeats = 10, warmup = 2;
  bool kept_tiles_only = true;
  nearsparse::gpu_transport transport = nearsparse::gpu_transport::automatic;
  nearsparse::implementation implementation = nearsparse::implementation::automatic;
  bool check = false;
  std::string csv;
};

[[noreturn]] void bad_option(const std::string& name, const std::string& problem) {
  throw nearsparse::invalid_argument("option '--" + name + "' " + problem);
}

/// "NX,NY,NZ": three positive integers.
std::vector<long> parse_extents(const std::string& text) {
  std::vector<long> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    char* end = nullptr;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 1 || v > max_extent)
      out.push_back(-1);
    else
      out.push_back(long(v));
  }
  if (out.size() != 3 || *std::min_element(out.begin(), out.end()) < 1)
    bad_option("lattice", "expects three positive integers NX,NY,NZ, got '" + text + "'");
  return out;
}

config parse(nearsparse::app::arguments& args, int size) {
  config c;
  const std::string function = args.text("function", "multiply");
  if (function != "multiply" && function != "sp2")
    bad_option("function", "must be multiply or sp2, got '" + function + "'");
  c.sp2 = function == "sp2";
  const std::string kase = args.text("case", c.sp2 ? "cubic" : "chain");
  if (kase != "chain" && kase != "lattice" && kase != "cubic")
    bad_option("case", "must be chain, lattice or cubic, got '" + kase + "'");
  if ((kase == "cubic") != c.sp2)
    bad_option("case", "cubic goes with --function sp2, and sp2 with --case cubic");
  c.cubic = kase == "cubic";
  c.lattice = kase == "lattice" || c.cubic;
  c.delta = args.number("delta", 8.0, -1e300, 1e300);
  c.residual_tolerance = args.number("residual-tolerance", 1e-6, 0, 1.0);
  c.max_iterations = int(args.integer("max-iterations", 100, 1, 100000));
  const long long n_arg = args.integer("n", -1, 1, max_extent);
  const std::string lattice_text = args.text("lattice", "");
  c.weak = args.flag("weak");
  const std::string precision = args.text("precision", "fp64");
  if (precision != "fp64" && precision != "fp32")
    bad_option("precision", "must be fp64 or fp32, got '" + precision + "'");
  c.fp64 = precision == "fp64";
  c.tile = int(args.integer("tile", 32, 8, 128));
  if (!spamm::detail::valid_block_sparse_tile(c.tile))
    bad_option("tile", "must be 8, 16, 32, 64 or 128, got " + std::to_string(c.tile));
  c.tau_relative =
      args.number("tau", c.sp2 ? 1e-7 : 1e-10, 0, std::numeric_limits<double>::infinity());
  c.tau_absolute = args.number("tau-absolute", -1, 0, std::numeric_limits<double>::infinity());
  c.drop = args.number("drop", 0, 0, std::numeric_limits<double>::infinity());
  c.repeats = int(args.integer("repeats", 10, 1, 100000));
  c.warmup = int(args.integer("warmup", 2, 0, 100000));
  c.kept_tiles_only = !args.flag("no-kept-tiles-only");
  const std::string transport = args.text("transport", "automatic");
  try {
    c.transport = nearsparse::parse_gpu_transport(transport, "--transport");
  } catch (const std::exception&) {
    bad_option("transport", "must be automatic, host_staging or nccl, got '" + transport + "'");
  }
  const std::string implementation = args.text("implementation", "automatic");
  try {
    c.implementation =
        nearsparse::parse_implementation(implementation, program, "--implementation");
  } catch (const std::exception&) {
    bad_option("implementation",
               "must be automatic, portable or specialized, got '" + implementation + "'");
  }
  const bool check = args.flag("check"), no_check = args.flag("no-check");
  if (check && no_check) bad_option("check", "and --no-check exclude each other");
  c.csv = args.text("csv", "");
  args.finish();

  const long procs = c.weak ? long(size) : 1L;
  if (!c.lattice) {
    if (!lattice_text.empty()) bad_option("lattice", "needs --case lattice");
    const long per = n_arg > 0 ? long(n_arg) : 65536L;
    if (per > max_extent / procs)
      bad_option("n", "gives " + std::to_string(per) + " x " + std::to_string(procs) +
                          " sites; at most " + std::to_string(max_extent) + " in all");
    c.n = per * procs;
  } else {
    if (!lattice_text.empty() && n_arg > 0) bad_option("lattice", "and --n exclude each other");
    if (!lattice_text.empty()) {
      const auto e = parse_extents(lattice_text);
      c.nx = e[0];
      c.ny = e[1];
      c.nz = e[2];
    } else {
      const long n = n_arg > 0 ? long(n_arg) : 65536L;
      if (n % 4096 != 0)
        bad_option("n", "is " + std::to_string(n) +
                            "; a lattice of 64 x 64 x (N / 4096) sites needs a multiple of "
                            "4096 (or give --lattice NX,NY,NZ)");
      c.nx = c.ny = 64;
      c.nz = n / 4096;
    }
    const double sites = double(c.nx) * double(c.ny) * double(c.nz) * double(procs);
    if (sites > double(max_extent))
      bad_option(lattice_text.empty() ? "n" : "lattice",
                 "gives " + nearsparse::detail::concat(sites) + " sites; at most " +
                     std::to_string(max_extent) + " in all");
    c.nz *= procs;
    c.n = c.nx * c.ny * c.nz;
  }
  c.check = !c.sp2 && (check || (!no_check && c.n <= check_limit));
  if (c.sp2 && check) bad_option("check", "applies to --function multiply");
  return c;
}

// ---------------------------------------------------------------------------------------------
// The local rows of the model matrices.

/// Rows first + i of the generator `rows`, as row i (columns unchanged: the whole matrix's).
template <class Rows>
struct offset_rows {
  Rows rows;
  long first;
  KOKKOS_INLINE_FUNCTION int count(long i) const { return rows.count(first + i); }
  template <class Entries, class Values>
  KOKKOS_INLINE_FUNCTION void fill(long i, long p, const Entries& entries,
                                   const Values& values) const {
    rows.fill(first + i, p, entries, values);
  }
};

/// The entries of rows [0, n) of a generator.
template <class Rows>
struct count_entries {
  Rows rows;
  KOKKOS_INLINE_FUNCTION void operator()(const long i, std::int64_t& s) const {
    s += rows.count(i);
  }
};

/// The row generators of the whole matrices (sparse_models.hpp: the same entries, row by row).
spamm::detail::overlap_chain_rows chain_rows(const config& c) {
  return {c.n, spamm::detail::overlap_radius(chain_alpha, model_cutoff, c.n - 1), chain_alpha};
}

spamm::detail::overlap_lattice_rows lattice_rows(const config& c) {
  return {c.nx, c.ny, c.nz,
          spamm::detail::overlap_radius(lattice_alpha, model_cutoff, c.nx + c.ny + c.nz - 3),
          lattice_alpha};
}

spamm::detail::cubic_lattice_rows cubic_rows(const config& c) {
  return {c.nx, c.ny, c.nz, 1.0, c.delta, 0.0, 1};
}

/// Entries of rows [r0, r1) of the case's matrix.
template <class Rows>
std::int64_t entries_of(const exec_t& exec, const Rows& rows, long r0, long r1) {
  std::int64_t nnz = 0;
  if (r1 > r0)
    Kokkos::parallel_reduce("nearsparse::perf::block_sparse_mpi::count",
                            Kokkos::RangePolicy<exec_t, Kokkos::IndexType<long>>(exec, 0, r1 - r0),
                            count_entries<offset_rows<Rows>>{{rows, r0}}, nnz);
  exec.fence();
  return nnz;
}

std::int64_t local_entries(const exec_t& exec, const config& c, long r0, long r1) {
  if (c.cubic) return entries_of(exec, cubic_rows(c), r0, r1);
  return c.lattice ? entries_of(exec, lattice_rows(c), r0, r1)
                   : entries_of(exec, chain_rows(c), r0, r1);
}

/// Rows [r0, r1) x N of the case's matrix in CRS form (nnz entries, counted before).
template <class Scalar, class Rows>
nearsparse::crs_matrix<Scalar, exec_t> rows_crs(const exec_t& exec, const Rows& rows, long n,
                                                long r0, long r1, std::int64_t nnz) {
  const auto square = spamm::detail::build_model_crs<Scalar>(
      exec, "nearsparse::perf::block_sparse_mpi::rows", r1 - r0, nnz, offset_rows<Rows>{rows, r0});
  return nearsparse::crs_matrix<Scalar, exec_t>("nearsparse::perf::block_sparse_mpi::rows",
                                                int(r1 - r0), int(n), int(nnz), square.values,
                                                square.graph.row_map, square.graph.entries);
}

/// Rows [r0, r1) of the case's matrix as a block-sparse matrix (tiles holding a nonzero).
template <class Scalar>
spamm::block_sparse_matrix<Scalar, exec_t> build_rows(const exec_t& exec, const config& c, long r0,
                                                      long r1, std::int64_t nnz) {
  spamm::block_sparse_options opt;
  opt.tile = c.tile;
  opt.drop_tolerance = 0;  // only exact zeros: the same tiles as the whole matrix's
  if (c.cubic)
    return spamm::from_crs(exec, rows_crs<Scalar>(exec, cubic_rows(c), c.n, r0, r1, nnz), opt);
  if (c.lattice)
    return spamm::from_crs(exec, rows_crs<Scalar>(exec, lattice_rows(c), c.n, r0, r1, nnz), opt);
  return spamm::from_crs(exec, rows_crs<Scalar>(exec, chain_rows(c), c.n, r0, r1, nnz), opt);
}

// ---------------------------------------------------------------------------------------------
// Reductions over tile arrays.

struct sum_of_squares_kernel {
  Kokkos::View<const double*, memory_t> v;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k, double& s) const {
    s += v(k) * v(k);
  }
};

struct max_kernel {
  Kokkos::View<const double*, memory_t> v;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k, double& m) const {
    if (v(k) > m) m = v(k);
  }
};

template <class Scalar>
struct squared_difference_kernel {
  Kokkos::View<const Scalar*, memory_t> x, y;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t k, double& s) const {
    const double d = double(x(k)) - double(y(k));
    s += d * d;
  }
};

using range = Kokkos::RangePolicy<exec_t, Kokkos::IndexType<std::int64_t>>;

/// Sum of squared tile norms (||M||_F^2) of this process's matrix.
template <class Scalar>
double norm_squared(const exec_t& exec, const spamm::block_sparse_matrix<Scalar, exec_t>& m) {
  double s = 0;
  const std::int64_t n = m.kept_tiles();
  if (n > 0)
    Kokkos::parallel_reduce("nearsparse::perf::block_sparse_mpi::norm", range(exec, 0, n),
                            sum_of_squares_kernel{m.norms()}, s);
  exec.fence();
  return s;
}

template <class Scalar>
double largest_norm(const exec_t& exec, const spamm::block_sparse_matrix<Scalar, exec_t>& m) {
  double s = 0;
  const std::int64_t n = m.kept_tiles();
  if (n > 0)
    Kokkos::parallel_reduce("nearsparse::perf::block_sparse_mpi::max", range(exec, 0, n),
                            max_kernel{m.norms()}, Kokkos::Max<double>(s));
  exec.fence();
  return s;
}

template <class View>
std::vector<typename View::non_const_value_type> on_host(const View& v) {
  const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  return std::vector<typename View::non_const_value_type>(h.data(), h.data() + h.extent(0));
}

/// ||x - y||_F^2 when x and y have the same tiles, -1 otherwise.
template <class Scalar>
double squared_distance(const exec_t& exec, const spamm::block_sparse_matrix<Scalar, exec_t>& x,
                        const spamm::block_sparse_matrix<Scalar, exec_t>& y) {
  if (x.rows() != y.rows() || x.cols() != y.cols() || x.kept_tiles() != y.kept_tiles() ||
      on_host(x.row_map()) != on_host(y.row_map()) ||
      on_host(x.column_indices()) != on_host(y.column_indices()))
    return -1;
  double s = 0;
  const std::int64_t n = std::int64_t(x.values().extent(0));
  if (n > 0)
    Kokkos::parallel_reduce("nearsparse::perf::block_sparse_mpi::distance", range(exec, 0, n),
                            squared_difference_kernel<Scalar>{x.values(), y.values()}, s);
  exec.fence();
  return s;
}

// ---------------------------------------------------------------------------------------------

double max_over(double x) {
  MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return x;
}

double sum_over(double x) {
  MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return x;
}

bool relative_match(double a, double b, double tol) {
  return std::abs(a - b) <= tol * std::max({std::abs(a), std::abs(b), 1e-300});
}

void progress(int rank, const char* text) {
  if (rank != 0) return;
  std::fprintf(stderr, "[block-sparse-mpi] %s\n", text);
  std::fflush(stderr);
}

struct check_result {
  bool ran = false, ok = true;
  std::string detail;
};

/// Every process: the whole matrix, the single-process multiply, and the comparisons.
template <class Scalar>
check_result check_against_single(const exec_t& exec, const config& c,
                                  const spamm::block_sparse_multiply_options& mopt,
                                  const spamm::distributed_block_sparse_report& report,
                                  const spamm::block_sparse_matrix<Scalar, exec_t>& c_p,
                                  double c_norm, std::int64_t c_stored, int r0, int r1) {
  check_result out;
  out.ran = true;
  const std::int64_t nnz = local_entries(exec, c, 0, c.n);
  if (nnz > std::numeric_limits<int>::max())
    throw nearsparse::invalid_argument(
        nearsparse::detail::concat(program, ": the check needs the whole matrix in CRS form, ", nnz,
                                   " entries, beyond int; run with --no-check"));
  const auto a = build_rows<Scalar>(exec, c, 0, c.n, nnz);
  spamm::block_sparse_matrix<Scalar, exec_t> whole(exec, a.rows(), a.cols(), a.tile());
  const auto single = spamm::multiply(exec, Scalar(1), a, a, Scalar(0), whole, mopt);
  const double single_norm = std::sqrt(norm_squared(exec, whole));
  // This process's rows of the single-process C against its C_p.
  const auto rows = spamm::row_block(exec, whole, r0, r1);
  double d = squared_distance(exec, c_p, rows);
  const int mismatched = d < 0 ? 1 : 0;
  int mismatched_any = mismatched;
  MPI_Allreduce(MPI_IN_PLACE, &mismatched_any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  d = sum_over(d < 0 ? 0.0 : d);
  const double value_diff = std::sqrt(d) / std::max(single_norm, 1e-300);
  const auto& p = report.product;
  std::ostringstream why;
  if (p.kept_products != single.kept_products)
    why << " kept products " << p.kept_products << " vs " << single.kept_products << ";";
  if (p.candidate_products != single.candidate_products)
    why << " candidate products " << p.candidate_products << " vs " << single.candidate_products
        << ";";
  if (c_stored != whole.kept_tiles())
    why << " stored tiles of C " << c_stored << " vs " << whole.kept_tiles() << ";";
  if (p.tiles_kept != single.tiles_kept)
    why << " report's tiles of C kept " << p.tiles_kept << " vs " << single.tiles_kept << ";";
  if (p.tiles_dropped != single.tiles_dropped)
    why << " tiles dropped " << p.tiles_dropped << " vs " << single.tiles_dropped << ";";
  if (!relative_match(c_norm, single_norm, 1e-10))
    why << " ||C||_F " << c_norm << " vs " << single_norm << ";";
  if (!relative_match(p.error_bound, single.error_bound, 1e-10))
    why << " error bound " << p.error_bound << " vs " << single.error_bound << ";";
  if (mismatched_any)
    why << " the tiles of C_p differ from the single-process C's rows on some process;";
  else if (!(value_diff <= 1e-10))
    why << " ||C_p - C rows||_F / ||C||_F = " << value_diff << ";";
  out.ok = why.str().empty();
  std::ostringstream line;
  line.precision(12);
  why.precision(12);
  line << "single process: kept " << single.kept_products << ", candidates "
       << single.candidate_products << ", tiles of C " << single.tiles_kept << " (stored "
       << whole.kept_tiles() << "), dropped " << single.tiles_dropped << ", ||C||_F " << single_norm
       << ", error bound " << single.error_bound
       << "; values: ||C_p - C rows||_F / ||C||_F = " << value_diff;
  out.detail = out.ok ? line.str() : why.str() + " (" + line.str() + ")";
  return out;
}

/// --function sp2: one timed distributed sp2 of H (this process's rows h_p), after c.warmup
/// products H H; prints the iteration and its time, or the refusal of a call that does not fit.
template <class Scalar>
int run_sp2(spamm::block_sparse_communicator<exec_t>& world,
            const spamm::block_sparse_matrix<Scalar, exec_t>& h_p, const config& c, int rank,
            int size, const std::string& model, double t_build) {
  const exec_t exec;
  spamm::block_sparse_function_options fopt;
  fopt.tau = c.tau_absolute >= 0 ? c.tau_absolute : c.tau_relative;
  fopt.drop_tolerance = fopt.tau;
  fopt.residual_tolerance = c.residual_tolerance;
  fopt.max_iterations = c.max_iterations;
  fopt.implementation = c.implementation;
  const std::int64_t occupied = c.n / 2;
  if (rank == 0) {
    std::fprintf(stderr, "[block-sparse-mpi] sp2: warm-up %d product(s) H H\n", c.warmup);
    std::fflush(stderr);
  }
  spamm::block_sparse_multiply_options mopt;
  mopt.tau = fopt.tau;
  mopt.implementation = c.implementation;
  for (int w = 0; w < c.warmup; ++w) {
    spamm::block_sparse_matrix<Scalar, exec_t> h2(exec, h_p.rows(), h_p.cols(), h_p.tile());
    world.multiply(exec, Scalar(1), h_p, h_p, Scalar(0), h2, mopt);
  }
  progress(rank, "sp2: one timed call");
  spamm::block_sparse_matrix<Scalar, exec_t> d_p(exec, h_p.rows(), h_p.cols(), h_p.tile());
  spamm::block_sparse_function_report r;
  exec.fence();
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = std::chrono::steady_clock::now();
  try {
    r = spamm::sp2(world, exec, h_p, occupied, d_p, fopt);
  } catch (const std::exception& e) {
    // Raised on every process (collectively): rank 0 prints what the failing process said.
    if (rank == 0)
      std::printf("sp2 on %d process(es), %s, N = %ld, %s: refused: %s\n", size, model.c_str(), c.n,
                  c.fp64 ? "fp64" : "fp32", e.what());
    std::fflush(stdout);
    return 3;
  }
  exec.fence();
  const double seconds =
      max_over(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  const double d_bytes = max_over(double(d_p.memory_bytes()));
  const double h_bytes = max_over(double(h_p.memory_bytes()));
  std::int64_t d_tiles = d_p.kept_tiles();
  MPI_Allreduce(MPI_IN_PLACE, &d_tiles, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf(
        "sp2 on %d process(es), %s, transport %s: %s, N = %ld, %s, tile %d, tau = drop = %g, "
        "occupied %lld, build %.1f ms\n",
        size, exec_t::name(), nearsparse::to_string(world.transport()), model.c_str(), c.n,
        c.fp64 ? "fp64" : "fp32", c.tile, fopt.tau, (long long)occupied, 1e3 * t_build);
    std::printf("  step  branch     tiles(X)   kept products  residual      trace\n");
    for (const auto& st : r.steps)
      std::printf("  %4d  %-7s %11lld %15lld  %.3e  %.6f\n", st.iteration, st.step,
                  (long long)st.tiles, (long long)st.kept_products, st.residual, st.trace);
    std::printf("%-3s %-10s %10s %-4s %4s %10s %6s %9s %10s %9s %12s %9s %9s %5s %5s\n", "P",
                "function", "N", "prec", "tile", "total_s", "steps", "ms/step", "residual",
                "trace-occ", "D_tiles", "H_MB", "D_MB", "conv", "stag");
    std::printf(
        "%-3d %-10s %10ld %-4s %4d %10.3f %6d %9.1f %10.3e %9.2e %12lld %9.1f %9.1f %5d %5d\n",
        size, "sp2", c.n, c.fp64 ? "fp64" : "fp32", c.tile, seconds, r.iterations,
        1e3 * seconds / std::max(1, r.iterations), r.residual, r.trace - double(occupied),
        (long long)d_tiles, h_bytes / 1e6, d_bytes / 1e6, int(r.converged), int(r.stagnated));
    std::printf("    error_bound_sum %.3e, dropped_norm_sum %.3e, Gershgorin [%g, %g]\n",
                r.error_bound_sum, r.dropped_norm_sum, r.bounds.lower, r.bounds.upper);
    std::fflush(stdout);
  }
  return 0;
}

template <class Scalar>
int run_case(const config& c, int rank, int size) {
  const exec_t exec;
  const char* precision = c.fp64 ? "fp64" : "fp32";
  spamm::distributed_block_sparse_options dopt;
  dopt.kept_tiles_only = c.kept_tiles_only;
  dopt.transport = c.transport;
  std::unique_ptr<spamm::block_sparse_communicator<exec_t>> world;
  try {
    // Refusals (an nccl transport without NCCL) are raised on every process alike.
    world = std::make_unique<spamm::block_sparse_communicator<exec_t>>(MPI_COMM_WORLD, exec, dopt);
  } catch (const nearsparse::invalid_argument& e) {
    if (rank == 0) std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 2;
  }
  // Not a structured binding: the lambdas below capture them (C++17).
  const std::pair<int, int> rows = world->rows(int(c.n), c.tile);
  const int r0 = rows.first, r1 = rows.second;

  // The rows of this process in CRS form must fit int: checked on every process alike.
  const std::int64_t nnz = local_entries(exec, c, r0, r1);
  {
    std::int64_t most = nnz;
    MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    if (most > std::numeric_limits<int>::max()) {
      if (rank == 0)
        std::fprintf(stderr,
                     "%s: option '--n' gives a process %lld entries in its rows; the CRS form "
                     "they are built in counts entries with int (at most %d): use more "
                     "processes or a smaller N\n",
                     program, (long long)most, std::numeric_limits<int>::max());
      return 2;
    }
  }
  std::string model;
  if (c.cubic)
    model = nearsparse::detail::concat("cubic Hamiltonian ", c.nx, " x ", c.ny, " x ", c.nz,
                                       ", delta ", c.delta);
  else if (c.lattice)
    model = nearsparse::detail::concat("lattice ", c.nx, " x ", c.ny, " x ", c.nz,
                                       " (L1 distance <= ", lattice_rows(c).r, ")");
  else
    model = nearsparse::detail::concat("chain (band |i - j| <= ", chain_rows(c).r, ")");
  if (rank == 0) {
    std::fprintf(stderr,
                 "[block-sparse-mpi] building A: %s, N = %ld, %s, tile %d; process 0 holds "
                 "rows [%d, %d), %lld entries\n",
                 model.c_str(), c.n, precision, c.tile, r0, r1, (long long)nnz);
    std::fflush(stderr);
  }
  spamm::block_sparse_matrix<Scalar, exec_t> a_p;
  exec.fence();
  MPI_Barrier(MPI_COMM_WORLD);
  const auto built0 = std::chrono::steady_clock::now();
  spamm::detail::collectively(MPI_COMM_WORLD, program,
                              [&] { a_p = build_rows<Scalar>(exec, c, r0, r1, nnz); });
  const double t_build =
      max_over(std::chrono::duration<double>(std::chrono::steady_clock::now() - built0).count());

  if (c.sp2) return run_sp2(*world, a_p, c, rank, size, model, t_build);
  const double a_max = max_over(largest_norm(exec, a_p));
  spamm::block_sparse_multiply_options mopt;
  mopt.tau = c.tau_absolute >= 0 ? c.tau_absolute : c.tau_relative * a_max * a_max;
  mopt.drop_tolerance = c.drop;
  mopt.rule = spamm::drop_rule::relative;
  mopt.implementation = c.implementation;

  spamm::block_sparse_matrix<Scalar, exec_t> c_p;
  spamm::distributed_block_sparse_report report;
  auto fresh_c = [&] {
    c_p = spamm::block_sparse_matrix<Scalar, exec_t>();  // the old C goes first
    c_p = spamm::block_sparse_matrix<Scalar, exec_t>(exec, r1 - r0, int(c.n), c.tile);
  };
  // One whole call between barriers: the slowest process's seconds, exchange and product.
  auto whole_call = [&](double* t) {
    fresh_c();
    exec.fence();
    MPI_Barrier(MPI_COMM_WORLD);
    const auto t0 = std::chrono::steady_clock::now();
    report = world->multiply(exec, Scalar(1), a_p, a_p, Scalar(0), c_p, mopt);
    exec.fence();
    t[0] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    t[1] = report.exchange_seconds;
    t[2] = report.product_seconds;
    MPI_Allreduce(MPI_IN_PLACE, t, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  };
  if (rank == 0) {
    std::fprintf(stderr, "[block-sparse-mpi] warm-up: %d whole call(s), tau %.6g\n", c.warmup,
                 mopt.tau);
    std::fflush(stderr);
  }
  double t[3];
  for (int w = 0; w < c.warmup; ++w) whole_call(t);
  if (rank == 0) {
    std::fprintf(stderr, "[block-sparse-mpi] measuring: %d whole call(s)\n", c.repeats);
    std::fflush(stderr);
  }
  std::vector<double> t_whole, t_exchange, t_product;
  for (int r = 0; r < c.repeats; ++r) {
    whole_call(t);
    t_whole.push_back(t[0]);
    t_exchange.push_back(t[1]);
    t_product.push_back(t[2]);
  }
  const double whole = nearsparse::perf::median(t_whole);
  const double exchange = nearsparse::perf::median(t_exchange);
  const double product = nearsparse::perf::median(t_product);

  // One process: the single-process multiply of the same matrices, for the strong scaling.
  double single = 0;
  if (size == 1) {
    progress(rank, "measuring the single-process multiply");
    auto call = [&] {
      fresh_c();
      exec.fence();
      const auto t0 = std::chrono::steady_clock::now();
      spamm::multiply(exec, Scalar(1), a_p, a_p, Scalar(0), c_p, mopt);
      exec.fence();
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    };
    for (int w = 0; w < c.warmup; ++w) call();
    std::vector<double> ts;
    for (int r = 0; r < c.repeats; ++r) ts.push_back(call());
    single = nearsparse::perf::median(ts);
    whole_call(t);  // C_p from the distributed call again, for the figures below
  }

  // The figures over the processes.
  const double c_norm = std::sqrt(sum_over(norm_squared(exec, c_p)));
  // C's stored tiles (the report's tiles_kept should say the same).
  std::int64_t c_stored = c_p.kept_tiles();
  MPI_Allreduce(MPI_IN_PLACE, &c_stored, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  const double recv_max = max_over(double(report.bytes_received));
  const double recv_mean = sum_over(double(report.bytes_received)) / size;
  const double rows_max = max_over(double(report.bytes_of_whole_rows));
  const double rows_mean = sum_over(double(report.bytes_of_whole_rows)) / size;
  const double tiles_received_max = max_over(double(report.tiles_received));
  const double indexed_only_max = max_over(double(report.tiles_indexed_only));
  const double a_bytes = max_over(double(a_p.memory_bytes()));
  const double c_bytes = max_over(double(c_p.memory_bytes()));
  const auto& p = report.product;
  const double flops = double(p.kept_products) * 2.0 * double(c.tile) * c.tile * c.tile;

  check_result check;
  if (c.check) {
    progress(rank, "checking against the single-process multiply of the whole matrix");
    spamm::detail::collectively(MPI_COMM_WORLD, program, [&] {
      check = check_against_single<Scalar>(exec, c, mopt, report, c_p, c_norm, c_stored, r0, r1);
    });
  }

  if (rank == 0) {
    char single_text[32] = "-";  // measured with one process only
    if (size == 1) std::snprintf(single_text, sizeof single_text, "%.3f", 1e3 * single);
    std::printf(
        "block-sparse spamm on %d process(es), %s, transport %s: %s, N = %ld%s, %s, tile %d, "
        "tau %.6g (%s), drop %g, kept tiles only %d, build %.1f ms\n",
        size, exec_t::name(), nearsparse::to_string(world->transport()), model.c_str(), c.n,
        c.weak ? " (weak: grows with P)" : "", precision, c.tile, mopt.tau,
        c.tau_absolute >= 0
            ? "absolute"
            : nearsparse::detail::concat(c.tau_relative, " x max tile norm^2 ", a_max * a_max)
                  .c_str(),
        c.drop, int(c.kept_tiles_only), 1e3 * t_build);
    std::printf(
        "%-3s %-7s %10s %-4s %4s %10s %9s %9s %9s %8s %9s %9s %9s %12s %12s %6s %10s "
        "%9s %8s %8s %6s\n",
        "P", "case", "N", "prec", "tile", "whole_ms", "exch_ms", "prod_ms", "single_ms", "GF/s",
        "recv_MB", "recv_avg", "rows_MB", "kept", "candidates", "ratio", "c_tiles", "err_bound",
        "A_MB", "C_MB", "check");
    std::printf(
        "%-3d %-7s %10ld %-4s %4d %10.3f %9.3f %9.3f %9s %8.1f %9.2f %9.2f %9.2f %12lld "
        "%12lld %6.4f %10lld %9.3g %8.1f %8.1f %6s\n",
        size, c.lattice ? "lattice" : "chain", c.n, precision, c.tile, 1e3 * whole, 1e3 * exchange,
        1e3 * product, single_text, flops / whole * 1e-9, recv_max / 1e6, recv_mean / 1e6,
        rows_max / 1e6, (long long)p.kept_products, (long long)p.candidate_products,
        p.valid_ratio(), (long long)c_stored, p.error_bound, a_bytes / 1e6, c_bytes / 1e6,
        check.ran ? (check.ok ? "OK" : "FAILED") : "-");
    std::printf(
        "    ||C||_F %.12g; report: tiles of C kept %lld, dropped %lld; tiles received (max over "
        "processes) %.0f with values, %.0f as index only\n",
        c_norm, (long long)p.tiles_kept, (long long)p.tiles_dropped, tiles_received_max,
        indexed_only_max);
    if (check.ran)
      std::printf("    check %s: %s\n", check.ok ? "OK" : "FAILED", check.detail.c_str());
    if (!c.csv.empty()) {
      if (FILE* f = std::fopen(c.csv.c_str(), "a")) {
        std::fseek(f, 0, SEEK_END);
        if (std::ftell(f) == 0)  // a new file: its columns first
          std::fputs(
              "procs,case,n,nx,ny,nz,weak,precision,tile,tau_relative,tau,drop,kept_tiles_only,"
              "transport,repeats,whole_ms,exchange_ms,product_ms,single_ms,gflops,recv_max_MB,"
              "recv_mean_MB,whole_rows_max_MB,whole_rows_mean_MB,tiles_received_max,"
              "tiles_indexed_only_max,kept_products,candidate_products,valid_ratio,c_tiles,"
              "report_tiles_kept,report_tiles_dropped,error_bound,c_norm,a_max_MB,c_max_MB,build_"
              "ms,checked,ok\n",
              f);
        std::fprintf(
            f,
            "%d,%s,%ld,%ld,%ld,%ld,%d,%s,%d,%.6g,%.9g,%.6g,%d,%s,%d,%.6f,%.6f,%.6f,%.6f,"
            "%.3f,%.3f,%.3f,%.3f,%.3f,%.0f,%.0f,%lld,%lld,%.6f,%lld,%lld,%lld,%.9g,%.15g,%.3f,"
            "%.3f,%.3f,%d,%d\n",
            size, c.lattice ? "lattice" : "chain", c.n, c.nx, c.ny, c.nz, int(c.weak), precision,
            c.tile, c.tau_absolute >= 0 ? -1.0 : c.tau_relative, mopt.tau, c.drop,
            int(c.kept_tiles_only), nearsparse::to_string(world->transport()), c.repeats,
            1e3 * whole, 1e3 * exchange, 1e3 * product, 1e3 * single, flops / whole * 1e-9,
            recv_max / 1e6, recv_mean / 1e6, rows_max / 1e6, rows_mean / 1e6, tiles_received_max,
            indexed_only_max, (long long)p.kept_products, (long long)p.candidate_products,
            p.valid_ratio(), (long long)c_stored, (long long)p.tiles_kept,
            (long long)p.tiles_dropped, p.error_bound, c_norm, a_bytes / 1e6, c_bytes / 1e6,
            1e3 * t_build, int(check.ran), int(!check.ran || check.ok));
        std::fclose(f);
      } else {
        std::fprintf(stderr, "%s: cannot open --csv file '%s'\n", program, c.csv.c_str());
      }
    }
    std::fflush(stdout);
  }
  return check.ok ? 0 : 1;
}

int run(int argc, char* argv[], int rank, int size) {
  std::vector<std::string> list(argv + 1, argv + argc);
  nearsparse::app::arguments args(list);
  if (args.flag("help")) {
    if (rank == 0) std::printf("%s", usage);
    return 0;
  }
  config c;
  try {
    // The same arguments on every process: every process refuses them alike, rank 0 says why.
    c = parse(args, size);
  } catch (const std::exception& e) {
    if (rank == 0) std::fprintf(stderr, "%s: %s (see --help)\n", program, e.what());
    return 2;
  }
  return c.fp64 ? run_case<double>(c, rank, size) : run_case<float>(c, rank, size);
}

}  // namespace

int main(int argc, char* argv[]) {
  return nearsparse::app::mpi_main(argc, argv, program, run);
}
