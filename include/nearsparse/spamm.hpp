#pragma once
// SpAMM, the sparse approximate matrix multiply (namespace nearsparse::spamm): options, the
// reusable plan, the one-call spamm::multiply, error targets and measures, decay-matrix and model
// Hamiltonian generators, the matrix functions on SpAMM (SP2 purification, inverse square root,
// sign), block-sparse (block-CSR) matrices with their multiply, algebra (add, identity, trace,
// norms, Gershgorin bounds) and SP2 purification and, in builds with NEARSPARSE_ENABLE_MPI, the
// distributed plan.

#include <nearsparse/spamm/block_sparse.hpp>
#include <nearsparse/spamm/block_sparse_algebra.hpp>
#include <nearsparse/spamm/block_sparse_functions.hpp>
#include <nearsparse/spamm/decay_matrices.hpp>
#include <nearsparse/spamm/distributed.hpp>
#include <nearsparse/spamm/distributed_block_sparse.hpp>
#include <nearsparse/spamm/error.hpp>
#include <nearsparse/spamm/matrix_functions.hpp>
#include <nearsparse/spamm/model_matrices.hpp>
#include <nearsparse/spamm/options.hpp>
#include <nearsparse/spamm/plan.hpp>
#include <nearsparse/spamm/sparse_models.hpp>
