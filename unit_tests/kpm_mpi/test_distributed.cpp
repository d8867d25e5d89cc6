// Distributed KPM over MPI: every process builds only its rows, and the moments equal those of a
// single-process run to rounding, for equal and unequal row shares and for rows per process that
// cut through z layers. Runs under mpiexec with 1, 2 and 4 processes (OpenMP backend in CI).

#include "../kpm/kpm_reference.hpp"
#include "support/mpi_support.hpp"

#include <nearsparse/core/errors.hpp>
#include <nearsparse/kpm.hpp>
#include <nearsparse/kpm/distributed.hpp>

#include <catch2/catch.hpp>

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstdlib>
#include <random>

namespace nk = nearsparse::kpm;
using Catch::Matchers::Contains;

using nearsparse::test::shared_seed;

TEST_CASE("distributed moments equal single-process moments", "[kpm][mpi]") {
  using exec_t = Kokkos::DefaultExecutionSpace;
  const exec_t exec;
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const auto seed = shared_seed();
  INFO("rank " << rank << " of " << size << ", seed " << seed);
  const auto p = nearsparse::test::kpm::insulator(5, 3, 7, seed, 1.5);  // 420 rows
  const auto h = nk::make_topological_insulator(exec, p);
  const auto s = nk::scaling_for(nk::gershgorin_bounds(exec, h), 0.01);
  nk::moments_options o;
  o.num_moments = 50;
  o.num_vectors = 5;
  o.seed = seed;
  const auto single = nk::moments(exec, h, s, o);
  // The last: process 0 takes no rows (where another process can take them).
  for (double weight : {1.0, 1.0 + rank, rank == 0 && size > 1 ? 0.0 : 1.0}) {
    for (std::int64_t granule : {1, 4}) {
      INFO("weight " << weight << ", granule " << granule);
      const auto [b, e] = nk::distributed_rows(MPI_COMM_WORLD, p.rows(), {weight, granule});
      const auto rows = nk::assemble_rows(p, b, e);
      const auto r = nk::distributed_moments(MPI_COMM_WORLD, exec, rows, b, s, o);
      // CHECK, not REQUIRE: a process that left the loop would leave the others waiting.
      CHECK(r.bounds.size() == std::size_t(size) + 1);
      if (e > b && e - b < p.rows()) CHECK(r.halo > 0);
      CHECK(r.moments.nonzeros == h.nnz());
      for (std::size_t n = 0; n < single.mu.size(); ++n)
        CHECK(r.moments.mu[n] == Approx(single.mu[n]).margin(1e-12));
    }
  }
  {
    // On a GPU the default moves the boundary rows through NCCL where built; host staging must
    // give the same moments. Asking for NCCL where it cannot serve is an error.
    const auto [b, e] = nk::distributed_rows(MPI_COMM_WORLD, p.rows());
    const auto rows = nk::assemble_rows(p, b, e);
    if (!nearsparse::detail::host_accessible_v<exec_t>) {
      const auto r = nk::distributed_moments(MPI_COMM_WORLD, exec, rows, b, s, o,
                                             {nearsparse::gpu_transport::host_staging});
      for (std::size_t n = 0; n < single.mu.size(); ++n)
        CHECK(r.moments.mu[n] == Approx(single.mu[n]).margin(1e-12));
    }
    if (!nearsparse::detail::nccl_capable_v<exec_t>)
      CHECK_THROWS_WITH(nk::distributed_moments(MPI_COMM_WORLD, exec, rows, b, s, o,
                                                {nearsparse::gpu_transport::nccl}),
                        Contains("NCCL"));
  }
  // Row blocks that do not tile the matrix are refused on every process alike.
  const auto [b, e] = nk::distributed_rows(MPI_COMM_WORLD, p.rows());
  const auto rows = nk::assemble_rows(p, b, e);
  REQUIRE_THROWS_WITH(nk::distributed_moments(MPI_COMM_WORLD, exec, rows, b + 1, s, o),
                      Contains("row_begin"));
  nk::moments_options zero = o;
  zero.num_vectors = 0;
  REQUIRE_THROWS_WITH(nk::distributed_moments(MPI_COMM_WORLD, exec, rows, b, s, zero),
                      Contains("num_vectors"));
}
