#pragma once
// The CUDA specialization of the augmented SpMMV (src/kpm/cuda_aug_spmmv.cpp), the paper's
// Figure 6: a group of G lanes per row (a power of two), each lane owning the columns r = g,
// g + G, ..., CPL of them (2 for 2 <= R <= 64, 4 up to 128, so G = R / CPL rounded up; the
// environment variable NEARSPARSE_KPM_CUDA_SHAPE="G,CPL" overrides the choice, for tuning on
// other GPUs); for CRS with G >= 4, and for G = 32 in both formats, a row's column indices and
// values are loaded G at a time by the group's lanes and broadcast with warp shuffles; R = G * CPL
// runs a kernel compiled for that R (NEARSPARSE_KPM_CUDA_FIXED=0 turns that off, for
// comparison); the dot products stay in registers across all the
// rows a lane visits, are reduced across the groups of a warp with shuffles and across the warps
// of a block in shared memory, and reach eta with one atomic per block and column. Row-major
// blocks with leading dimension R; CRS with int offsets or SELL-C-sigma. Each block walks chunks of
// consecutive rows whose length divides `period` (row_period.hpp);
// NEARSPARSE_KPM_CUDA_CHUNK=<rows> overrides the chunk length, for tuning.

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace nearsparse::kpm::detail {

struct cuda_aug_args {
  // Matrix: CRS when chunk_offsets is null, SELL-C-sigma otherwise.
  const int* row_map = nullptr;
  const std::int64_t* chunk_offsets = nullptr;
  const int* chunk_lengths = nullptr;
  int chunk_height = 1;
  const int* columns = nullptr;
  const void* values = nullptr;
  bool complex_values = true;
  // Blocks: in (rows of H's columns) and out, row-major with R columns.
  const void* in = nullptr;
  void* out = nullptr;
  int R = 1;
  int row_begin = 0, row_end = 0;
  double alpha = 1, beta = 0, gamma = 0;
  // Dot products: eta rows 2 step and 2 step + 1, leading dimension eta_ld; null: none.
  double* eta = nullptr;
  int eta_ld = 0;
  int step = 0;
  // The matrix's stencil period (row_period.hpp; 0: none): each block walks chunks of
  // consecutive rows whose length divides it, else chunks of one window of rows.
  int period = 0;
};

/// Largest R the CUDA kernel takes (4 columns per lane); wider blocks use the portable kernel.
inline constexpr int cuda_aug_max_columns = 128;

#ifdef KOKKOS_ENABLE_CUDA
/// Launches on exec's stream. R in [1, cuda_aug_max_columns].
void cuda_aug_spmmv(const Kokkos::Cuda& exec, const cuda_aug_args& args);
#endif

}  // namespace nearsparse::kpm::detail
