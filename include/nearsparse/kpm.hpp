#pragma once
// Kernel Polynomial Method: CRS and SELL-C-sigma matrices, the topological-insulator and
// cubic-lattice Hamiltonians, spectral bounds, Chebyshev moments by the naive, augmented-SpMV and
// augmented-SpMMV algorithms, damping kernels and the density of states, and runs that split the
// rows between a GPU and the CPU.

#include <nearsparse/kpm/chebyshev_moments.hpp>
#include <nearsparse/kpm/checks.hpp>
#include <nearsparse/kpm/crs.hpp>
#include <nearsparse/kpm/distributed.hpp>
#include <nearsparse/kpm/dos.hpp>
#include <nearsparse/kpm/hamiltonians.hpp>
#include <nearsparse/kpm/moments.hpp>
#include <nearsparse/kpm/scaling.hpp>
#include <nearsparse/kpm/sell_matrix.hpp>
#include <nearsparse/kpm/spectral_bounds.hpp>
#include <nearsparse/kpm/split.hpp>
#include <nearsparse/kpm/spmv.hpp>
