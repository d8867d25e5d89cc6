#pragma once
// Host-side checks of the TLR products: conforming shapes and tilings, valid batches, and tile
// kinds a low-rank C tile can absorb.

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/tile_grid.hpp>

#include <cstddef>
#include <vector>

namespace nearsparse::tlr {

/// One product of a batch: C tile c += A tile a * B tile b (tiles numbered column by column in
/// each matrix's tile grid).
struct tile_triple {
  int a = 0, b = 0, c = 0;
};

namespace detail {

/// What the checks need to know of an operand.
struct operand_shape {
  const char* name;
  tile_grid grid;
  const std::vector<int>* dense_slots;  // null: every tile dense (a dense C)
};

/// A (m x k) times B (k x n) into C (m x n), all with the same tile size.
void check_product_shapes(const char* function, const operand_shape& a, const operand_shape& b,
                          const operand_shape& c);

/// Every triple names existing tiles whose extents conform, no C tile appears twice, and (when C
/// is low rank somewhere) no low-rank C tile receives the product of two dense tiles.
void check_batch(const char* function, const operand_shape& a, const operand_shape& b,
                 const operand_shape& c, const std::vector<tile_triple>& batch);

/// For the TLR-GEMM driver with a TLR C: no low-rank tile C(i, j) has a k with A(i, k) and B(k, j)
/// both dense (their product has full rank).
void check_lowrank_targets(const char* function, const operand_shape& a, const operand_shape& b,
                           const operand_shape& c);

}  // namespace detail
}  // namespace nearsparse::tlr
