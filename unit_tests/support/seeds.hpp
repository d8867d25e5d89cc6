#pragma once
// Fresh random inputs for every run, reproducible on demand: the base seed comes from
// NEARSPARSE_TEST_SEED when set, otherwise from std::random_device, and is printed at start.

#include <cstdint>

namespace nearsparse::test {

/// The run's base seed.
std::uint64_t base_seed();

/// A new seed for one input of one test: distinct on every call within a run, derived from the
/// base seed so a run can be replayed. Tests report it with INFO so a failure shows it.
std::uint64_t fresh_seed();

}  // namespace nearsparse::test
