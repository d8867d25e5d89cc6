#pragma once
// The dispatch spine shared by every family.
//
// A public entry point checks its arguments and calls one detail function per operation. The
// generic detail function is a template on the execution space that runs the portable kernels.
// A backend with a specialized path adds an overload of that detail function for its execution
// space, declared in the family's detail/ header (under the backend's KOKKOS_ENABLE_* guard) and
// defined in src/<family>/. The overload resolves the options' `implementation` with
// take_specialized() and calls the portable template when it declines, so adding a backend
// touches one declaration and one source file.

#include <nearsparse/core/errors.hpp>
#include <nearsparse/core/implementation.hpp>

namespace nearsparse::detail {

/// Whether an operation takes its specialized path.
///   choice     the options' implementation field
///   available  whether a specialized path exists for this execution space and serves this
///              request (a precision, a tile size, a memory space it supports)
/// Returns true for automatic and specialized when available, false for portable and for
/// automatic when not available. Throws nearsparse::unsupported for specialized when not
/// available, naming `function`, the execution space and, when given, `reason`. Throws
/// nearsparse::invalid_argument for a value outside the enumeration.
bool take_specialized(const char* function, implementation choice, bool available,
                      const char* execution_space, const char* reason = nullptr);

/// take_specialized for an execution space with no specialized path for this operation.
template <class ExecSpace>
bool take_specialized_none(const char* function, implementation choice,
                           const char* reason = nullptr) {
  return take_specialized(function, choice, false, ExecSpace::name(), reason);
}

/// Throws nearsparse::invalid_argument naming `function` and `argument` unless `choice` is one
/// of the enumeration's values. Every family's options validation calls it, so a bad value is
/// refused even by a call that has nothing to do (an empty product).
void require_valid(const char* function, const char* argument, implementation choice);

}  // namespace nearsparse::detail
