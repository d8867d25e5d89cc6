#pragma once
// SpAMM, the sparse approximate matrix multiply: options, the reusable plan, the one-call
// nearsparse::spamm, error measures and decay-matrix generators.

#include <nearsparse/spamm/decay_matrices.hpp>
#include <nearsparse/spamm/error.hpp>
#include <nearsparse/spamm/options.hpp>
#include <nearsparse/spamm/plan.hpp>
