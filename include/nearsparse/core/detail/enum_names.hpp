#pragma once
// One way to turn an enumeration into its name and back: a table of {value, name} pairs per
// enumeration, kept next to the function that uses it. Parsing is case-insensitive and its
// error lists the accepted names.

#include <nearsparse/core/errors.hpp>

#include <cctype>
#include <cstddef>
#include <string>
#include <utility>

namespace nearsparse::detail {

template <class Enum>
using enum_name = std::pair<Enum, const char*>;

/// `text` in lower case (ASCII), for the case-insensitive names of enumerations and backends.
inline std::string to_lower(std::string text) {
  for (char& ch : text) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return text;
}

/// The name of `value` in `table`, or "unknown".
template <class Enum, std::size_t N>
const char* enum_to_string(const enum_name<Enum> (&table)[N], Enum value) {
  for (const auto& entry : table)
    if (entry.first == value) return entry.second;
  return "unknown";
}

/// The value named `name` (case-insensitive) in `table`. Throws nearsparse::invalid_argument
/// "<function>: argument '<argument>' is '<name>'; expected a, b or c" otherwise.
template <class Enum, std::size_t N>
Enum enum_from_string(const enum_name<Enum> (&table)[N], const std::string& name,
                      const char* function, const char* argument) {
  const std::string lower = to_lower(name);
  for (const auto& entry : table)
    if (lower == entry.second) return entry.first;
  std::string expected;
  for (std::size_t i = 0; i < N; ++i) {
    if (i > 0) expected += i + 1 == N ? " or " : ", ";
    expected += table[i].second;
  }
  throw_invalid_argument(function, argument, "is '" + name + "'; expected " + expected);
}

/// True when `value` is one of the table's values (a cast integer may not be).
template <class Enum, std::size_t N>
bool enum_is_valid(const enum_name<Enum> (&table)[N], Enum value) {
  for (const auto& entry : table)
    if (entry.first == value) return true;
  return false;
}

}  // namespace nearsparse::detail
