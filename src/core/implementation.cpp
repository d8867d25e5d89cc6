// Names of the implementation choice and the one rule that resolves it.
#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/core/detail/enum_names.hpp>
#include <nearsparse/core/implementation.hpp>

namespace nearsparse {
namespace {

constexpr detail::enum_name<implementation> implementation_names[] = {
    {implementation::automatic, "automatic"},
    {implementation::portable, "portable"},
    {implementation::specialized, "specialized"}};

}  // namespace

const char* to_string(implementation choice) {
  return detail::enum_to_string(implementation_names, choice);
}

implementation parse_implementation(const std::string& name, const char* function,
                                    const char* argument) {
  return detail::enum_from_string(implementation_names, name, function, argument);
}

namespace detail {

void require_valid(const char* function, const char* argument, implementation choice) {
  if (!enum_is_valid(implementation_names, choice))
    throw_invalid_argument(
        function, argument,
        concat("is ", static_cast<int>(choice), "; it must be automatic, portable or specialized"));
}

bool take_specialized(const char* function, implementation choice, bool available,
                      const char* execution_space, const char* reason) {
  switch (choice) {
    case implementation::portable:
      return false;
    case implementation::automatic:
      return available;
    case implementation::specialized:
      if (!available)
        throw unsupported(concat(function,
                                 ": implementation::specialized was asked for, but there is no "
                                 "specialized path for this call on execution space ",
                                 execution_space, reason ? " (" : "", reason ? reason : "",
                                 reason ? ")" : ""));
      return true;
  }
  throw_invalid_argument(
      function, "implementation",
      concat("is ", static_cast<int>(choice), "; it must be automatic, portable or specialized"));
}

}  // namespace detail
}  // namespace nearsparse
