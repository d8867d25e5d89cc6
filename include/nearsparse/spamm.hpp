#pragma once
// SpAMM, the sparse approximate matrix multiply (namespace nearsparse::spamm): options, the
// reusable plan, the one-call spamm::multiply, error measures, decay-matrix generators and, in
// builds with NEARSPARSE_ENABLE_MPI, the distributed plan.

#include <nearsparse/spamm/decay_matrices.hpp>
#include <nearsparse/spamm/distributed.hpp>
#include <nearsparse/spamm/error.hpp>
#include <nearsparse/spamm/options.hpp>
#include <nearsparse/spamm/plan.hpp>
