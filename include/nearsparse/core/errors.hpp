#pragma once
// The exceptions nearsparse throws, and the helpers that build their messages.
//
// Host-side checks at every entry point throw one of these with a message that names the
// function, the argument and the extents involved, for instance
//   nearsparse::spamm: argument 'B' has extents 5 x 2, but its extent(0) must equal
//   extent(1) of 'A' (A is 3 x 4)
// Device code checks its own invariants with KOKKOS_ASSERT, which Kokkos compiles in for debug
// builds (Kokkos_ENABLE_DEBUG).

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace nearsparse {

/// An argument is wrong: extents that do not match, a negative tolerance, non-finite values, a
/// rank larger than its tile, an invalid matrix.
class invalid_argument : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// The request is valid but this build cannot serve it: a backend or precision that is not
/// compiled in, or a device that lacks a feature.
class unsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A computation failed on valid input: an iteration that did not converge, a vendor library
/// that reported an error.
class runtime_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {

template <class... Parts>
std::string concat(Parts&&... parts) {
  std::ostringstream out;
  (out << ... << std::forward<Parts>(parts));
  return out.str();
}

/// "3 x 4" for a rank-2 view, "7" for a rank-1 view, "2 x 3 x 4" and so on.
template <class View>
std::string extents_string(const View& view) {
  std::ostringstream out;
  for (unsigned r = 0; r < View::rank; ++r) {
    if (r > 0) out << " x ";
    out << view.extent(r);
  }
  if (View::rank == 0) out << "scalar";
  return out.str();
}

/// Throws nearsparse::invalid_argument("<function>: argument '<argument>' <problem>").
[[noreturn]] void throw_invalid_argument(const char* function, const char* argument,
                                         const std::string& problem);

}  // namespace detail

/// Throws nearsparse::invalid_argument naming the function and the argument unless `condition`.
inline void require(bool condition, const char* function, const char* argument,
                    const std::string& problem) {
  if (!condition) detail::throw_invalid_argument(function, argument, problem);
}

}  // namespace nearsparse
