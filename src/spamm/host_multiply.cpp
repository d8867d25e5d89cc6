// The SpAMM multiplication on the host (Kokkos::OpenMP and Kokkos::Serial): the kept tile
// products through the host BLAS, accumulating in the packed type. The host BLAS packs both
// operands of every gemm into its own panels, which costs as much as the multiply-adds of one
// tile product, so tile products are merged into as few, as large gemms as the kept set allows:
// a rectangle of C tiles that all keep the same k is one gemm per run of consecutive kept k (a
// dense product: one gemm per block of C), and a tile row whose tiles keep different k is swept
// k by k where that makes fewer gemms. Only kept tile products are computed. Inside the parallel
// region OpenBLAS runs each gemm on the calling thread.
#include <nearsparse/core/detail/host_blas.hpp>
#include <nearsparse/spamm/detail/multiply.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <type_traits>

namespace nearsparse::spamm::detail {

bool host_spamm_available() {
  return nearsparse::detail::host_blas::available();
}

const char* host_spamm_unavailable_reason() {
  return host_spamm_available() ? nullptr : "this build has no host BLAS (OpenBLAS)";
}

namespace {

namespace blas = nearsparse::detail::host_blas;

// Where a block's gemms write: straight into C (row-major with leading dimension ld, or C^T
// row-major where C is column-major), or into a buffer of the packed type.
enum class target { row_major_c, column_major_c, buffer };

template <class T, class CT>
target target_of(const geometry& g, std::size_t s0, std::size_t s1) {
  if (!std::is_same<T, CT>::value) return target::buffer;
  const std::size_t most = std::size_t(INT_MAX);
  if (s1 == 1 && s0 >= std::size_t(g.n) && s0 <= most) return target::row_major_c;
  if (s0 == 1 && s1 >= std::size_t(g.m) && s1 <= most) return target::column_major_c;
  return target::buffer;
}

/// Rows of C a block of tile rows aims at: a gemm this tall packs each panel of B^T once for
/// that many rows, as a large gemm does.
inline constexpr int block_rows_target = 512;

/// The most bytes of the buffer one thread uses where C is not written directly.
inline constexpr std::size_t buffer_bytes_max = std::size_t(1) << 22;

/// Blocks per thread: enough for the dynamic schedule to even out blocks of unequal work.
inline constexpr int blocks_per_thread = 8;

// The units of the schedule: blocks of br x bc tiles of C. As tall as block_rows_target and as
// wide as C, halved (the larger side first) until every thread has blocks_per_thread of them,
// and where C goes through a buffer until the buffer fits buffer_bytes_max.
struct block_shape {
  int br = 1, bc = 1;
};

inline block_shape block_shape_of(const geometry& g, int threads, std::size_t buffer_value_size,
                                  host_grouping grouping) {
  block_shape s;
  // per_tile: every 1 x 1 block is one item, one gemm per run of kept k; automatic is merged.
  if (grouping == host_grouping::per_tile) return s;
  s.br = std::max(1, std::min(g.mt, block_rows_target / g.tile));
  s.bc = g.nt;
  const long wanted = long(blocks_per_thread) * std::max(threads, 1);
  const auto halve = [&] {
    if (s.bc > 1 && (s.bc >= s.br || s.br == 1)) {
      s.bc = (s.bc + 1) / 2;
    } else {
      s.br = (s.br + 1) / 2;
    }
  };
  while ((s.br > 1 || s.bc > 1) &&
         long((g.mt + s.br - 1) / s.br) * ((g.nt + s.bc - 1) / s.bc) < wanted)
    halve();
  const std::size_t tile_bytes = std::size_t(g.tile) * g.tile * buffer_value_size;
  while ((s.br > 1 || s.bc > 1) && std::size_t(s.br) * s.bc * tile_bytes > buffer_bytes_max)
    halve();
  return s;
}

/// Tiles of C one sweep item spans at most.
inline constexpr int sweep_width_max = 64;

// Which tile products are kept: A(ti, k) B(k, tj) where the product of their norms is >= tau.
struct kept_test {
  const double* an;
  const double* bn;
  double tau;
  int kt, nt;

  bool operator()(int ti, int tj, int k) const {
    return an[std::size_t(ti) * kt + k] * bn[std::size_t(k) * nt + tj] >= tau;
  }
  // Whether tiles (ti, tj) and (ui, uj) keep the same k.
  bool same(int ti, int tj, int ui, int uj) const {
    for (int k = 0; k < kt; ++k)
      if ((*this)(ti, tj, k) != (*this)(ui, uj, k)) return false;
    return true;
  }
  // Runs of consecutive k that tile (ti, tj) keeps; `count` is set to the kept k.
  int runs(int ti, int tj, int& count) const {
    int r = 0;
    count = 0;
    for (int k = 0; k < kt; ++k) {
      if (!(*this)(ti, tj, k)) continue;
      ++count;
      if (k == 0 || !(*this)(ti, tj, k - 1)) ++r;
    }
    return r;
  }
  // Whether tiles [tj, uj) of tile row ti that keep k are the ones that keep l.
  bool same_tiles(int ti, int tj, int uj, int k, int l) const {
    for (int j = tj; j < uj; ++j)
      if ((*this)(ti, j, k) != (*this)(ti, j, l)) return false;
    return true;
  }
  // Whether some tile of [tj, uj) in tile row ti keeps k.
  bool any(int ti, int tj, int uj, int k) const {
    for (int j = tj; j < uj; ++j)
      if ((*this)(ti, j, k)) return true;
    return false;
  }
};

// One work item: tiles [ti, ui) x [tj, uj) of C. A group: all of them keep the same k, one gemm
// per run of consecutive kept k over the whole rectangle (A's panels of consecutive tile rows and
// B^T's of consecutive tile columns are consecutive rows of the packed operands, so the
// rectangle's rows of each are a plain submatrix with leading dimension kp). A sweep (one tile
// row, the tiles keeping different k): one gemm per run of consecutive k kept by the same tiles,
// over each run of consecutive tiles among them, so a band of kept products shares its panels of
// A across tiles as a group does.
struct work_item {
  int ti = 0, ui = 0, tj = 0, uj = 0;
  bool sweep = false;
};

// The gemms of one tile row [tj, uj) as a sweep makes them.
inline int sweep_gemms(const kept_test& kept, int ti, int tj, int uj) {
  int gemms = 0;
  for (int k = 0; k < kept.kt;) {
    if (!kept.any(ti, tj, uj, k)) {
      ++k;
      continue;
    }
    for (int j = tj; j < uj;) {
      if (!kept(ti, j, k)) {
        ++j;
        continue;
      }
      ++gemms;
      while (j < uj && kept(ti, j, k)) ++j;
    }
    int end = k + 1;
    while (end < kept.kt && kept.same_tiles(ti, tj, uj, k, end)) ++end;
    k = end;
  }
  return gemms;
}

// The work items of block `block` (br x bc tiles of C), each passed to `run` in turn. A block
// whose tiles all keep the same k is one group; otherwise each tile row of it, in spans of at
// most sweep_width_max tiles, goes as groups of consecutive tiles that keep the same k or as one
// sweep, whichever makes fewer gemms.
template <class Run>
void block_items(const geometry& g, const kept_test& kept, int br, int bc, int block,
                 const Run& run) {
  const int blocks_c = (g.nt + bc - 1) / bc;
  const int ti0 = block / blocks_c * br, tj0 = block % blocks_c * bc;
  const int ti1 = std::min(ti0 + br, g.mt), tj1 = std::min(tj0 + bc, g.nt);
  bool uniform = true;
  for (int ti = ti0; ti < ti1 && uniform; ++ti)
    for (int tj = ti == ti0 ? tj0 + 1 : tj0; tj < tj1 && uniform; ++tj)
      uniform = kept.same(ti0, tj0, ti, tj);
  if (uniform) {
    run(work_item{ti0, ti1, tj0, tj1, false});
    return;
  }
  int kept_k = 0;
  for (int ti = ti0; ti < ti1; ++ti)
    for (int cj = tj0; cj < tj1; cj += sweep_width_max) {
      const int cj1 = std::min(cj + sweep_width_max, tj1);
      int group_gemms = 0, groups = 0;
      for (int tj = cj; tj < cj1;) {
        int uj = tj + 1;
        while (uj < cj1 && kept.same(ti, tj, ti, uj)) ++uj;
        group_gemms += kept.runs(ti, tj, kept_k);
        ++groups;
        tj = uj;
      }
      if (groups > 1 && sweep_gemms(kept, ti, cj, cj1) < group_gemms) {
        run(work_item{ti, ti + 1, cj, cj1, true});
        continue;
      }
      for (int tj = cj; tj < cj1;) {
        int uj = tj + 1;
        while (uj < cj1 && kept.same(ti, tj, ti, uj)) ++uj;
        run(work_item{ti, ti + 1, tj, uj, false});
        tj = uj;
      }
    }
}

// C = alpha * sum over kept k of A(ti, k) B(k, tj) + beta * C; a and b are the packed operands as
// T values (float or double). Threads take blocks dynamically and run each block's work items as
// they find them, so the gemms start at once: nothing is listed, allocated or waited for before
// them. The same tile products as one gemm per tile and run of kept k.
template <class Exec, class T, class CT>
void multiply_tiles(const Exec& exec, host_grouping grouping, const multiply_problem& p, const T* a,
                    const T* b, CT alpha, CT beta, CT* c, std::size_t s0, std::size_t s1) {
  const geometry g = p.geo;
  if (g.mt == 0 || g.nt == 0) return;
  const int tile = g.tile, kt = g.kt, m = g.m, n = g.n;
  const std::size_t kp = std::size_t(g.kp);
  const kept_test kept{p.a_norms, p.b_norms, p.tau, g.kt, g.nt};
  const target where = target_of<T, CT>(g, s0, s1);
  const block_shape shape =
      block_shape_of(g, exec.concurrency(), where == target::buffer ? sizeof(T) : 0, grouping);
  const int br = shape.br, bc = shape.bc;
  const int blocks = (g.mt + br - 1) / br * ((g.nt + bc - 1) / bc);

  using policy = Kokkos::TeamPolicy<Exec, Kokkos::Schedule<Kokkos::Dynamic>>;
  using member = typename policy::member_type;
  using buffer_view = Kokkos::View<T*, typename Exec::scratch_memory_space,
                                   Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  const int buffer_size = where == target::buffer ? br * bc * tile * tile : 0;
  policy work(exec, blocks, 1);
  work.set_chunk_size(1);
  work.set_scratch_size(1, Kokkos::PerTeam(buffer_view::shmem_size(buffer_size)));
  // Each BLAS call is one tile's (or block's) work, sized for one core: on one thread even where
  // this kernel runs outside a parallel region (host_blas::thread_scope).
  const blas::thread_scope one_thread(1);
  Kokkos::parallel_for("nearsparse::spamm::multiply", work, [=](const member& team) {
    buffer_view buffer(team.team_scratch(1), buffer_size);
    block_items(g, kept, br, bc, team.league_rank(), [&](const work_item& item) {
      const int r0 = item.ti * tile, c0 = item.tj * tile;
      const int rows = std::min(item.ui * tile, m) - r0, cols = std::min(item.uj * tile, n) - c0;
      const T* a_panel = a + std::size_t(r0) * kp;
      CT* c_item = c + std::size_t(r0) * s0 + std::size_t(c0) * s1;
      // out (+)= A(rows, k run) B(k run, tiles [tj, uj)): columns from (tj - item.tj) * tile of the
      // item's buffer, or of C; `first`: C = beta C (the buffer: = 0) before adding.
      const auto gemm = [&](int tj, int uj, int k, int end, bool first) {
        const int inner = (end - k) * tile;
        const int from = (tj - item.tj) * tile, width = std::min(uj * tile, n) - tj * tile;
        const std::size_t k0 = std::size_t(k) * tile;
        const T* b_panel = b + std::size_t(tj) * tile * kp;
        if (where == target::buffer) {
          blas::gemm(blas::order::row_major, blas::op::none, blas::op::transpose, rows, width,
                     inner, T(1), a_panel + k0, int(kp), b_panel + k0, int(kp), first ? T(0) : T(1),
                     buffer.data() + from, cols);
          return;
        }
        // Into C itself: every gemm scales its part by alpha, the first also C by beta (OpenBLAS
        // writes beta = 0 without reading C).
        const T scale = static_cast<T>(alpha), keep = first ? static_cast<T>(beta) : T(1);
        if (where == target::row_major_c) {
          blas::gemm(blas::order::row_major, blas::op::none, blas::op::transpose, rows, width,
                     inner, scale, a_panel + k0, int(kp), b_panel + k0, int(kp), keep,
                     reinterpret_cast<T*>(c_item + from), int(s0));
        } else {  // C^T = B^T A^T, row-major with leading dimension s1
          blas::gemm(blas::order::row_major, blas::op::none, blas::op::transpose, width, rows,
                     inner, scale, b_panel + k0, int(kp), a_panel + k0, int(kp), keep,
                     reinterpret_cast<T*>(c_item + std::size_t(from) * s1), int(s1));
        }
      };
      // Tiles [tj, uj) of the item after their gemms: C = alpha * sum + beta * C from the buffer,
      // or C = beta * C where the tiles kept nothing; beta = 0 only writes, so NaN in C does not
      // propagate.
      const auto finish = [&](int tj, int uj, bool touched) {
        if (where != target::buffer && touched) return;
        const int from = (tj - item.tj) * tile, width = std::min(uj * tile, n) - tj * tile;
        for (int r = 0; r < rows; ++r) {
          CT* c_row = c_item + std::size_t(r) * s0 + std::size_t(from) * s1;
          const T* sum = buffer.data() + std::size_t(r) * cols + from;
          for (int col = 0; col < width; ++col) {
            const CT value = touched ? alpha * static_cast<CT>(sum[col]) : CT(0);
            CT& out = c_row[std::size_t(col) * s1];
            out = beta == CT(0) ? value : value + beta * out;
          }
        }
      };
      if (!item.sweep) {
        bool first = true;
        for (int k = 0; k < kt;) {
          if (!kept(item.ti, item.tj, k)) {
            ++k;
            continue;
          }
          int end = k + 1;
          while (end < kt && kept(item.ti, item.tj, end)) ++end;
          gemm(item.tj, item.uj, k, end, first);
          first = false;
          k = end;
        }
        finish(item.tj, item.uj, !first);
        return;
      }
      // A sweep: the first k each tile keeps (kt where none) tells where its first gemm sets it.
      const int ti = item.ti;
      int first_k[sweep_width_max];
      for (int j = item.tj; j < item.uj; ++j) {
        int k = 0;
        while (k < kt && !kept(ti, j, k)) ++k;
        first_k[j - item.tj] = k;
      }
      for (int k = 0; k < kt;) {
        if (!kept.any(ti, item.tj, item.uj, k)) {
          ++k;
          continue;
        }
        int end = k + 1;
        while (end < kt && kept.same_tiles(ti, item.tj, item.uj, k, end)) ++end;
        // Runs of tiles keeping k, split where the tiles' first kept k starts or stops being k.
        for (int j = item.tj; j < item.uj;) {
          if (!kept(ti, j, k)) {
            ++j;
            continue;
          }
          const bool first = first_k[j - item.tj] == k;
          int uj = j + 1;
          while (uj < item.uj && kept(ti, uj, k) && (first_k[uj - item.tj] == k) == first) ++uj;
          gemm(j, uj, k, end, first);
          j = uj;
        }
        k = end;
      }
      for (int j = item.tj; j < item.uj;) {
        const bool touched = first_k[j - item.tj] < kt;
        int uj = j + 1;
        while (uj < item.uj && (first_k[uj - item.tj] < kt) == touched) ++uj;
        finish(j, uj, touched);
        j = uj;
      }
    });
  });
}

// The packed operands of a 16-bit format decoded to float, rows m (A) and n (B^T) of kp values:
// the host BLAS has no half-precision product with float accumulation. Decoding is exact.
template <class Format, class Exec>
void decode_rows(const Exec& exec, const typename Format::storage* packed, int rows, std::size_t kp,
                 float* out) {
  Kokkos::parallel_for("nearsparse::spamm::decode", Kokkos::RangePolicy<Exec>(exec, 0, rows),
                       [=](const int r) {
                         const typename Format::storage* in = packed + std::size_t(r) * kp;
                         float* row = out + std::size_t(r) * kp;
                         for (std::size_t t = 0; t < kp; ++t) row[t] = Format::decode(in[t]);
                       });
}

template <class Exec, class CT>
void host_multiply_any(const Exec& exec, host_grouping grouping, const multiply_problem& p,
                       CT alpha, CT beta, CT* c, std::size_t s0, std::size_t s1) {
  if (p.geo.m == 0 || p.geo.n == 0) return;
  with_format(p.precision, [&](auto fmt) {
    using Format = decltype(fmt);
    using storage = typename Format::storage;
    if constexpr (std::is_same<storage, float>::value || std::is_same<storage, double>::value) {
      multiply_tiles(exec, grouping, p, static_cast<const storage*>(p.a),
                     static_cast<const storage*>(p.b), alpha, beta, c, s0, s1);
    } else {
      const std::size_t kp = std::size_t(p.geo.kp);
      Kokkos::View<float*, typename Exec::memory_space> a_f(
          Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "nearsparse::spamm::A_float"),
          std::size_t(p.geo.m) * kp);
      Kokkos::View<float*, typename Exec::memory_space> b_f(
          Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "nearsparse::spamm::Bt_float"),
          std::size_t(p.geo.n) * kp);
      decode_rows<Format>(exec, static_cast<const storage*>(p.a), p.geo.m, kp, a_f.data());
      decode_rows<Format>(exec, static_cast<const storage*>(p.b), p.geo.n, kp, b_f.data());
      multiply_tiles(exec, grouping, p, a_f.data(), b_f.data(), alpha, beta, c, s0, s1);
      exec.fence();  // before the decoded operands are freed
    }
  });
}

}  // namespace

#ifdef KOKKOS_ENABLE_OPENMP
void host_multiply(const Kokkos::OpenMP& exec, const options& opt, const multiply_problem& p,
                   float alpha, float beta, float* c, std::size_t s0, std::size_t s1) {
  host_multiply_any(exec, opt.host_grouping, p, alpha, beta, c, s0, s1);
}
void host_multiply(const Kokkos::OpenMP& exec, const options& opt, const multiply_problem& p,
                   double alpha, double beta, double* c, std::size_t s0, std::size_t s1) {
  host_multiply_any(exec, opt.host_grouping, p, alpha, beta, c, s0, s1);
}
#endif

#ifdef KOKKOS_ENABLE_SERIAL
void host_multiply(const Kokkos::Serial& exec, const options& opt, const multiply_problem& p,
                   float alpha, float beta, float* c, std::size_t s0, std::size_t s1) {
  host_multiply_any(exec, opt.host_grouping, p, alpha, beta, c, s0, s1);
}
void host_multiply(const Kokkos::Serial& exec, const options& opt, const multiply_problem& p,
                   double alpha, double beta, double* c, std::size_t s0, std::size_t s1) {
  host_multiply_any(exec, opt.host_grouping, p, alpha, beta, c, s0, s1);
}
#endif

}  // namespace nearsparse::spamm::detail
