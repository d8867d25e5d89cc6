#pragma once
// One part of a row-distributed KPM recurrence on one execution space: its local matrix, its
// vector blocks (owned rows, then the halo), the gather of the rows other parts need, and its
// share of the dot products. Used by the split (two spaces, one process) and the MPI runs.

#include <nearsparse/kpm/crs.hpp>
#include <nearsparse/kpm/detail/aligned_block.hpp>
#include <nearsparse/kpm/detail/aug_spmmv.hpp>
#include <nearsparse/kpm/detail/matrix_rows.hpp>
#include <nearsparse/kpm/detail/partition.hpp>
#include <nearsparse/kpm/detail/start_vectors.hpp>
#include <nearsparse/kpm/hamiltonians.hpp>
#include <nearsparse/kpm/scaling.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace nearsparse::kpm::detail {

/// Host copy of any CRS matrix's rows, as host_crs.
template <class Crs>
host_crs<typename Crs::non_const_value_type> host_rows(const Crs& h) {
  using scalar = typename Crs::non_const_value_type;
  auto rm = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), h.graph.row_map);
  auto en = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), h.graph.entries);
  auto va = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), h.values);
  host_crs<scalar> out;
  out.rows = h.numRows();
  out.cols = h.numCols();
  out.row_map.assign(rm.data(), rm.data() + rm.extent(0));
  if (out.row_map.empty()) out.row_map.push_back(0);
  out.columns.assign(en.data(), en.data() + en.extent(0));
  out.values.assign(va.data(), va.data() + va.extent(0));
  return out;
}

template <class Scalar>
host_crs<Scalar> row_range(const host_crs<Scalar>& h, std::int64_t b, std::int64_t e) {
  host_crs<Scalar> out;
  out.rows = e - b;
  out.cols = h.cols;
  const int lo = h.row_map[std::size_t(b)], hi = h.row_map[std::size_t(e)];
  for (std::int64_t i = b; i <= e; ++i) out.row_map.push_back(h.row_map[std::size_t(i)] - lo);
  out.columns.assign(h.columns.begin() + lo, h.columns.begin() + hi);
  out.values.assign(h.values.begin() + lo, h.values.begin() + hi);
  return out;
}

/// dst(k, r) = src(idx(k), r): rows of a vector block gathered into a send buffer.
template <class Dst, class Src, class Idx>
struct gather_halo_kernel {
  Dst dst;
  Src src;
  Idx idx;

  KOKKOS_INLINE_FUNCTION void operator()(const int k, const int r) const {
    dst(k, r) = src(idx(k), r);
  }
};

/// One part of a distributed recurrence on Exec, vector blocks in BlockMem.
template <class Exec, class Scalar, class BlockMem = typename Exec::memory_space>
struct device_part {
  using mem = typename Exec::memory_space;
  using block = Kokkos::View<Scalar**, Kokkos::LayoutRight, BlockMem>;
  Exec exec;
  int n_local = 0, n_halo = 0, n_send_rows = 0, R = 0;
  bool interior_needs_halo = false;
  crs_matrix<Scalar, Exec> h;
  // The vector blocks (512-byte aligned rows, aligned_block.hpp); in and out view them and swap.
  using vectors = typename aligned_block<Scalar, BlockMem>::view_type;
  aligned_block<Scalar, BlockMem> first, second;
  vectors in, out;
  block send_buffer;
  Kokkos::View<int*, mem> send_index;  // concatenated over target parts
  std::vector<int> send_offsets;       // P + 1
  std::vector<int> recv_offsets;       // P + 1
  Kokkos::View<double**, Kokkos::LayoutRight, mem> eta;
  aug_settings settings;  ///< the kernel dispatch's choice, for every step

  device_part(const Exec& e, const local_part<Scalar>& p, int vectors, int steps,
              std::uint64_t seed, const aug_settings& kernel_settings)
      : exec(e),
        n_local(p.n_local),
        n_halo(p.n_halo),
        n_send_rows(p.n_send_rows),
        R(vectors),
        recv_offsets(p.recv_offsets),
        settings(kernel_settings) {
    h = to_device<Scalar>(exec, p.matrix);
    const auto total = std::size_t(n_local + n_halo);
    first = aligned_block<Scalar, BlockMem>("nearsparse::kpm::V", total, std::size_t(R));
    second = aligned_block<Scalar, BlockMem>("nearsparse::kpm::W", total, std::size_t(R));
    in = first.view;
    out = second.view;
    eta = Kokkos::View<double**, Kokkos::LayoutRight, mem>(std::string("nearsparse::kpm::eta"),
                                                           std::size_t(2 * steps), std::size_t(R));
    send_offsets.assign(1, 0);
    std::vector<int> index;
    for (const auto& list : p.send_rows) {
      index.insert(index.end(), list.begin(), list.end());
      send_offsets.push_back(int(index.size()));
    }
    send_index = Kokkos::View<int*, mem>(std::string("nearsparse::kpm::send_index"), index.size());
    auto hs = Kokkos::create_mirror_view(send_index);
    for (std::size_t k = 0; k < index.size(); ++k) hs(k) = index[k];
    Kokkos::deep_copy(exec, send_index, hs);
    send_buffer = block(std::string("nearsparse::kpm::send_buffer"), index.size(), std::size_t(R));
    // Start vectors of the owned rows and of the halo, by global row.
    Kokkos::View<std::int64_t*, mem> global(std::string("nearsparse::kpm::global_rows"), total);
    auto hg = Kokkos::create_mirror_view(global);
    for (int i = 0; i < n_local; ++i) hg(i) = p.row_begin + p.local_to_global[std::size_t(i)];
    for (int k = 0; k < n_halo; ++k) hg(n_local + k) = p.halo_global[std::size_t(k)];
    Kokkos::deep_copy(exec, global, hg);
    fill_start_vectors(exec, in, int(total), seed, 0, 0, global, true);
    exec.fence();
  }

  void compute(int row_begin, int row_end, int step, const scaling& s) {
    compute(row_begin, row_end, step, s, in, out);
  }

  /// Rows [row_begin, row_end) of the step after this one (reads `out`, writes `in`): only for
  /// rows without halo columns, which need nothing the other parts have not sent yet.
  void compute_next(int row_begin, int row_end, int step, const scaling& s) {
    compute(row_begin, row_end, step, s, out, in);
  }

  void compute(int row_begin, int row_end, int step, const scaling& s, const vectors& from,
               const vectors& to) {
    const aug_coefficients c = step == 0 ? aug_coefficients{s.a, -s.a * s.b, 0.0}
                                         : aug_coefficients{2 * s.a, -2 * s.a * s.b, -1.0};
    aug_spmmv(exec, "nearsparse::kpm::aug_spmmv", rows_of(h), row_begin, row_end, from, to, c, true,
              eta, step, settings);
  }

  /// send_buffer(k, :) = out(send_index(k), :).
  void gather() {
    const int count = int(send_index.extent(0)), cols = R;
    if (count == 0) return;
    // A two-dimensional range over rows of R entries, as in fill_start_vectors.
    Kokkos::parallel_for(
        "nearsparse::kpm::gather_halo",
        Kokkos::MDRangePolicy<Exec, Kokkos::Rank<2>>(exec, {0, 0}, {count, cols}),
        gather_halo_kernel<block, vectors, Kokkos::View<int*, mem>>{send_buffer, out, send_index});
  }

  /// Where part q's rows for this part land: the halo rows from q of the output block.
  Scalar* halo_destination(int q) const {
    return out.data() + std::size_t(n_local + recv_offsets[std::size_t(q)]) * R;
  }
  Scalar* send_source(int q) const {
    return send_buffer.data() + std::size_t(send_offsets[std::size_t(q)]) * R;
  }
  std::size_t send_bytes(int q) const {
    return std::size_t(send_offsets[std::size_t(q) + 1] - send_offsets[std::size_t(q)]) * R *
           sizeof(Scalar);
  }
};

}  // namespace nearsparse::kpm::detail
