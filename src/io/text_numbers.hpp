#pragma once
// Token scanning and number conversion for the Matrix Market text: integers with std::from_chars,
// reals with std::from_chars where the standard library has it for floating point (libstdc++ 11
// and newer; fast since 12) and strtod elsewhere. The token syntax is checked here first, so
// both paths accept exactly the same tokens: [+-]digits for integers and
// [+-](digits[.digits]|.digits)[(e|E)[+-]digits] for reals.

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <system_error>

namespace nearsparse::io::detail {

/// Separators inside a line: space, tab and carriage return (CRLF files).
inline bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

inline const char* skip_blanks(const char* p, const char* end) {
  while (p < end && is_blank(*p)) ++p;
  return p;
}

/// The end of the token at p (the next blank or end).
inline const char* token_end(const char* p, const char* end) {
  while (p < end && !is_blank(*p)) ++p;
  return p;
}

enum class number_status { ok, syntax, range, not_finite };

/// A decimal integer token [+-]digits.
inline number_status parse_integer(const char* p, const char* end, std::int64_t& out) {
  if (p < end && *p == '+') {
    ++p;
    if (p < end && (*p == '-' || *p == '+')) return number_status::syntax;
  }
  if (p == end) return number_status::syntax;
  const auto r = std::from_chars(p, end, out);
  if (r.ec == std::errc::result_out_of_range) return number_status::range;
  if (r.ec != std::errc() || r.ptr != end) return number_status::syntax;
  return number_status::ok;
}

/// True for nan, inf and infinity with any case and sign: reported as non-finite, not as syntax.
inline bool names_non_finite(const char* p, const char* end) {
  if (p < end && (*p == '+' || *p == '-')) ++p;
  std::string word(p, end);
  for (auto& c : word) c = char(c | 0x20);
  return word == "nan" || word == "inf" || word == "infinity";
}

/// Checks the syntax of a real token.
inline bool real_syntax(const char* p, const char* end) {
  if (p < end && (*p == '+' || *p == '-')) ++p;
  int digits = 0;
  while (p < end && *p >= '0' && *p <= '9') ++p, ++digits;
  if (p < end && *p == '.') {
    ++p;
    while (p < end && *p >= '0' && *p <= '9') ++p, ++digits;
  }
  if (digits == 0) return false;
  if (p < end && (*p == 'e' || *p == 'E')) {
    ++p;
    if (p < end && (*p == '+' || *p == '-')) ++p;
    int exp_digits = 0;
    while (p < end && *p >= '0' && *p <= '9') ++p, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  return p == end;
}

/// A real token; values that overflow double are out of range, those that underflow become
/// subnormal or zero.
inline number_status parse_real(const char* p, const char* end, double& out) {
  if (!real_syntax(p, end))
    return names_non_finite(p, end) ? number_status::not_finite : number_status::syntax;
  const char* q = *p == '+' ? p + 1 : p;
#if defined(__cpp_lib_to_chars) && __cpp_lib_to_chars >= 201611L
  const auto r = std::from_chars(q, end, out);
  if (r.ec == std::errc() && r.ptr == end) return number_status::ok;
#endif
  // strtod: the fallback, and the arbiter of out-of-range results (overflow or underflow).
  char local[128];
  std::string heap;
  const std::size_t n = std::size_t(end - q);
  const char* text = local;
  if (n < sizeof local) {
    std::memcpy(local, q, n);
    local[n] = '\0';
  } else {
    heap.assign(q, n);
    text = heap.c_str();
  }
  out = std::strtod(text, nullptr);
  return std::isfinite(out) ? number_status::ok : number_status::range;
}

/// Shortest text that reads back as the same value.
inline char* format_real(char* p, char* end, double v) {
#if defined(__cpp_lib_to_chars) && __cpp_lib_to_chars >= 201611L
  return std::to_chars(p, end, v).ptr;
#else
  const int n = std::snprintf(p, std::size_t(end - p), "%.17g", v);
  return p + n;
#endif
}

inline char* format_real(char* p, char* end, float v) {
#if defined(__cpp_lib_to_chars) && __cpp_lib_to_chars >= 201611L
  return std::to_chars(p, end, v).ptr;
#else
  const int n = std::snprintf(p, std::size_t(end - p), "%.9g", double(v));
  return p + n;
#endif
}

inline char* format_integer(char* p, char* end, std::int64_t v) {
  return std::to_chars(p, end, v).ptr;
}

}  // namespace nearsparse::io::detail
