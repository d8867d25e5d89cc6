#pragma once
// Sizes of a SpAMM problem after internal padding, shared by the portable and CUDA kernels.
//
// A is packed row-major as Mp x Kp and B transposed, as Bt (Np x Kp), both in the storage type
// of the precision and zero-padded: every row of both is then a contiguous run of k, which the
// tensor-core fragments, 16-byte copies and host dot products all want. Mp and Np are multiples
// of the largest thread-block tile (128) so the CUDA kernels never test bounds when loading;
// Kp is a multiple of the tile, so a tile of k is a whole number of load steps.

#include <nearsparse/spamm/options.hpp>

#include <cstddef>

namespace nearsparse::spamm::detail {

inline constexpr int block_pad = 128;

struct geometry {
  int m = 0, n = 0, k = 0;     ///< the product's extents: A is m x k, B is k x n
  int tile = 64;               ///< LoNum
  int mt = 0, nt = 0, kt = 0;  ///< tiles per dimension (edge tiles may be partial)
  int mp = 0, np = 0, kp = 0;  ///< padded extents of the packed operands

  geometry() = default;
  geometry(int m_, int n_, int k_, int tile_) : m(m_), n(n_), k(k_), tile(tile_) {
    mt = (m + tile - 1) / tile;
    nt = (n + tile - 1) / tile;
    kt = (k + tile - 1) / tile;
    mp = (m + block_pad - 1) / block_pad * block_pad;
    np = (n + block_pad - 1) / block_pad * block_pad;
    kp = kt * tile;
  }
  double tile_products() const { return double(mt) * double(nt) * double(kt); }
};

/// Device pointers and parameters of one multiplication, independent of the user's View types.
struct multiply_problem {
  spamm::precision precision = spamm::precision::fp32;
  geometry geo;
  const void* a = nullptr;          ///< packed A, mp x kp
  const void* b = nullptr;          ///< packed B^T, np x kp
  const double* a_norms = nullptr;  ///< mt x kt, row-major
  const double* b_norms = nullptr;  ///< kt x nt, row-major
  double tau = 0.0;
  int stride = 1;  ///< load-balance stride s
};

}  // namespace nearsparse::spamm::detail
