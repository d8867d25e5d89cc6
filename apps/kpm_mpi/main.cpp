// `nearsparse-kpm-mpi`: the density of states of a topological insulator over MPI processes.
// Each process builds only its rows, runs the augmented SpMMV on its default execution space, and
// exchanges the rows at its boundaries every step; rank 0 prints the result and writes the CSV.
//
//   mpiexec -n 4 nearsparse-kpm-mpi --nx 100 --ny 100 --nz 40 --moments 1000 --vectors 32
#include "arguments.hpp"
#include "mpi_program.hpp"

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/implementation.hpp>
#include <nearsparse/kpm.hpp>
#include <nearsparse/kpm/distributed.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cstdio>
#include <exception>
#include <string>
#include <type_traits>
#include <vector>

namespace {

const char* const usage =
    "Usage: mpiexec -n P nearsparse-kpm-mpi [options]\n"
    "  --nx, --ny, --nz N   sites (default 40 x 40 x 10)\n"
    "  --disorder W         on-site disorder (default 0)\n"
    "  --moments M          Chebyshev moments (default 512)\n"
    "  --vectors R          random start vectors (default 16)\n"
    "  --seed S             start vectors and disorder (default 1)\n"
    "  --weight W           this process's share of the rows, relative (default 1)\n"
    "  --transport T        automatic, host_staging or nccl: how GPU halos travel\n"
    "  --kernel K           automatic (default), portable or specialized (the CUDA kernel)\n"
    "  --csv FILE           density of states (default kpm_dos_mpi.csv; '' for none)\n"
    "  --help               this text\n";

/// The device a process runs on, so that a run shows one process per GPU.
template <class Exec>
std::string where(const Exec& exec) {
#ifdef KOKKOS_ENABLE_CUDA
  if constexpr (std::is_same_v<Exec, Kokkos::Cuda>)
    return "CUDA device " + std::to_string(exec.cuda_device());
#endif
  (void)exec;
  return Exec::name();
}

int run(int argc, char* argv[], int rank, int size) {
  namespace nk = nearsparse::kpm;
  std::vector<std::string> list(argv + 1, argv + argc);
  nearsparse::app::arguments args(list);
  if (args.flag("help")) {
    if (rank == 0) std::printf("%s", usage);
    return 0;
  }
  nk::topological_insulator ti;
  ti.nx = int(args.integer("nx", 40, 1, 1 << 16));
  ti.ny = int(args.integer("ny", 40, 1, 1 << 16));
  ti.nz = int(args.integer("nz", 10, 1, 1 << 16));
  ti.disorder = args.number("disorder", 0.0, 0, 1e6);
  ti.dot_potential = 0.1;
  ti.dot_period = 10;
  ti.dot_radius = 3;
  nk::moments_options o;
  o.num_moments = int(args.integer("moments", 512, 2, 1 << 24));
  o.num_vectors = int(args.integer("vectors", 16, 1, 1 << 16));
  o.seed = std::uint64_t(args.integer("seed", 1, 0, 1LL << 62));
  ti.seed = o.seed;
  o.implementation = nearsparse::parse_implementation(args.text("kernel", "automatic"),
                                                      "nearsparse-kpm-mpi", "--kernel");
  nk::distributed_rows_options share;
  share.weight = args.number("weight", 1.0, 0, 1e9);
  share.granule = 4;
  nk::distributed_options run_options;
  run_options.transport = nearsparse::parse_gpu_transport(args.text("transport", "automatic"));
  const std::string csv = args.text("csv", "kpm_dos_mpi.csv");
  args.finish();
  nk::validate(ti);

  const Kokkos::DefaultExecutionSpace exec;
  const auto [begin, end] = nk::distributed_rows(MPI_COMM_WORLD, ti.rows(), share);
  const auto rows = nk::assemble_rows(ti, begin, end);
  const auto bounds = nk::distributed_gershgorin_bounds(MPI_COMM_WORLD, rows, begin);
  const double lo = bounds.lower, hi = bounds.upper;
  const auto s = nk::scaling_for({lo, hi}, 0.01);
  if (rank == 0)
    std::printf(
        "kpm over %d MPI processes on %s: insulator %d x %d x %d (%lld rows), "
        "spectrum inside [%.4f, %.4f]\n",
        size, Kokkos::DefaultExecutionSpace::name(), ti.nx, ti.ny, ti.nz, (long long)ti.rows(), lo,
        hi);
  const auto r = nk::distributed_moments(MPI_COMM_WORLD, exec, rows, begin, s, o, run_options);
  for (int p = 0; p < size; ++p) {
    if (p == rank)
      std::printf(
          "  process %d on %s: rows [%lld, %lld), halo %d rows from %d neighbour(s), set-up "
          "%.3f s\n",
          rank, where(exec).c_str(), (long long)begin, (long long)end, r.halo, r.neighbours,
          r.setup_seconds);
    std::fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  if (rank != 0) return 0;
  const auto& m = r.moments;
  std::printf("  moments: %d x %d vectors in %.3f s, %.3f ms per step\n", m.num_moments,
              m.num_vectors, m.seconds, 1e3 * m.seconds / m.steps);
  const auto dos = nk::density_of_states(m);
  // The integral is N mu_0 = N by construction: shown, not checked. The checks that can fail:
  // the moments within |mu_n| <= 1 and the Jackson-damped density non-negative (kpm/checks.hpp).
  std::printf("  density of states integrates to %.6f for N = %lld\n", dos.integral(),
              (long long)m.rows);
  const auto mc = nk::check_moments(m);
  const auto dc = nk::check_density(dos, nk::damping::jackson);
  std::printf("  check: moments |mu_n| <= 1: largest %.6f at n = %d: %s\n", mc.largest,
              mc.at_moment, mc.bounded ? "OK" : "FAILED");
  std::printf("  check: density of states >= 0: lowest %.3g, largest %.4g: %s\n", dc.lowest,
              dc.highest, dc.non_negative ? "OK" : "FAILED");
  const bool ok = mc.bounded && dc.non_negative;
  if (!csv.empty()) {
    nk::write_csv(dos, csv);
    std::printf("  wrote %s\n", csv.c_str());
  }
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char* argv[]) {
  return nearsparse::app::mpi_main(argc, argv, "nearsparse-kpm-mpi", run);
}
