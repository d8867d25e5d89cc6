#pragma once
// Tile low-rank matrices: the TLR format with per-tile ranks, compression from dense (randomized or
// exact SVD), batched GEMM-LLD and GEMM-LLL, the TLR-GEMM driver, and Hilbert and exponential
// covariance test matrices.

#include <nearsparse/tlr/batched_svd.hpp>
#include <nearsparse/tlr/compression.hpp>
#include <nearsparse/tlr/gemm.hpp>
#include <nearsparse/tlr/generators.hpp>
#include <nearsparse/tlr/options.hpp>
#include <nearsparse/tlr/tlr_matrix.hpp>
