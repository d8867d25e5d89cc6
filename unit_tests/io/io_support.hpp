#pragma once
// Test support for nearsparse::io: a temporary directory, file helpers, and a reference Matrix
// Market parser written independently of the library's (line by line with a stringstream-free
// tokenizer and strtod, no threads, no blocks) that the fuzz and round-trip tests compare with.

#include <nearsparse/io/types.hpp>

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace nearsparse::test::io {

/// A fresh directory under $TMPDIR (or /tmp), removed with its files at the end.
class temp_dir {
 public:
  temp_dir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/nearsparse_io_XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (!mkdtemp(buffer.data())) throw std::runtime_error("mkdtemp failed");
    path_ = buffer.data();
  }
  ~temp_dir() {
    for (const auto& f : files_) std::remove(f.c_str());
    rmdir(path_.c_str());
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  /// The path of `name` in the directory (remembered for removal).
  std::string file(const std::string& name) {
    const std::string p = path_ + "/" + name;
    files_.push_back(p);
    return p;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::vector<std::string> files_;
};

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A matrix as the reference parser sees it: every element present in the file (symmetric
/// files expanded, duplicates summed), in a map.
struct reference_matrix {
  nearsparse::io::header file;
  std::map<std::pair<std::int64_t, std::int64_t>, std::complex<double>> entries;
};

namespace detail {

inline bool blank(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

inline std::vector<std::string> tokens(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : line) {
    if (blank(c)) {
      if (!cur.empty()) out.push_back(cur), cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

inline std::string lower(std::string s) {
  for (auto& c : s) c = char(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return s;
}

inline bool integer_token(const std::string& t, std::int64_t& v) {
  std::size_t k = 0;
  bool negative = false;
  if (k < t.size() && (t[k] == '+' || t[k] == '-')) negative = t[k++] == '-';
  if (k == t.size()) return false;
  long double acc = 0;
  for (; k < t.size(); ++k) {
    if (t[k] < '0' || t[k] > '9') return false;
    acc = acc * 10 + (t[k] - '0');
  }
  if (acc > 9.2e18L) return false;
  v = std::int64_t(negative ? -acc : acc);
  return true;
}

/// Decimal reals only: [+-](d+[.d*]|.d+)([eE][+-]d+)?, finite after conversion.
inline bool real_token(const std::string& t, double& v) {
  std::size_t k = 0;
  if (k < t.size() && (t[k] == '+' || t[k] == '-')) ++k;
  std::size_t digits = 0;
  while (k < t.size() && t[k] >= '0' && t[k] <= '9') ++k, ++digits;
  if (k < t.size() && t[k] == '.') {
    ++k;
    while (k < t.size() && t[k] >= '0' && t[k] <= '9') ++k, ++digits;
  }
  if (digits == 0) return false;
  if (k < t.size() && (t[k] == 'e' || t[k] == 'E')) {
    ++k;
    if (k < t.size() && (t[k] == '+' || t[k] == '-')) ++k;
    std::size_t e = 0;
    while (k < t.size() && t[k] >= '0' && t[k] <= '9') ++k, ++e;
    if (e == 0) return false;
  }
  if (k != t.size()) return false;
  v = std::strtod(t.c_str(), nullptr);
  return std::isfinite(v);
}

}  // namespace detail

/// Parses Matrix Market text; nothing for text the format (as the library documents it) refuses.
inline std::optional<reference_matrix> reference_parse(const std::string& text) {
  using namespace nearsparse::io;
  std::vector<std::string> lines;
  {
    std::string cur;
    for (char c : text) {
      if (c == '\n') {
        lines.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    if (!cur.empty()) lines.push_back(cur);
  }
  if (lines.empty()) return std::nullopt;
  reference_matrix m;
  header& h = m.file;
  const auto banner = detail::tokens(lines[0]);
  if (banner.size() != 5 || detail::lower(banner[0]) != "%%matrixmarket" ||
      detail::lower(banner[1]) != "matrix")
    return std::nullopt;
  const auto fmt = detail::lower(banner[2]), fld = detail::lower(banner[3]),
             sym = detail::lower(banner[4]);
  if (fmt == "coordinate")
    h.format = format::coordinate;
  else if (fmt == "array")
    h.format = format::array;
  else
    return std::nullopt;
  if (fld == "real")
    h.field = field::real;
  else if (fld == "integer")
    h.field = field::integer;
  else if (fld == "complex")
    h.field = field::complex;
  else if (fld == "pattern")
    h.field = field::pattern;
  else
    return std::nullopt;
  if (sym == "general")
    h.symmetry = symmetry::general;
  else if (sym == "symmetric")
    h.symmetry = symmetry::symmetric;
  else if (sym == "skew-symmetric")
    h.symmetry = symmetry::skew_symmetric;
  else if (sym == "hermitian")
    h.symmetry = symmetry::hermitian;
  else
    return std::nullopt;
  if (h.format == format::array && h.field == field::pattern) return std::nullopt;
  if (h.symmetry == symmetry::hermitian && h.field != field::complex) return std::nullopt;
  if (h.symmetry == symmetry::skew_symmetric && h.field == field::pattern) return std::nullopt;
  std::size_t at = 1;
  auto data_line = [&](const std::string& l) {
    const auto t = detail::tokens(l);
    return !t.empty() && t[0][0] != '%';
  };
  while (at < lines.size() && !data_line(lines[at])) ++at;
  if (at == lines.size()) return std::nullopt;
  const auto size = detail::tokens(lines[at++]);
  const std::size_t want = h.format == format::coordinate ? 3 : 2;
  if (size.size() != want) return std::nullopt;
  std::int64_t v[3] = {0, 0, 0};
  for (std::size_t k = 0; k < want; ++k)
    if (!detail::integer_token(size[k], v[k]) || v[k] < 0) return std::nullopt;
  h.rows = v[0];
  h.cols = v[1];
  if (h.rows > INT_MAX || h.cols > INT_MAX) return std::nullopt;
  if (h.symmetry != symmetry::general && h.rows != h.cols) return std::nullopt;
  const int values = h.field == field::pattern ? 0 : h.field == field::complex ? 2 : 1;
  std::int64_t declared = v[2];
  if (h.format == format::array) {
    const std::int64_t n = h.rows;
    declared = h.symmetry == symmetry::general          ? h.rows * h.cols
               : h.symmetry == symmetry::skew_symmetric ? n * (n - 1) / 2
                                                        : n * (n + 1) / 2;
  }
  h.entries = declared;
  std::int64_t count = 0, ai = h.symmetry == symmetry::skew_symmetric ? 1 : 0, aj = 0;
  for (; at < lines.size(); ++at) {
    if (!data_line(lines[at])) continue;
    const auto t = detail::tokens(lines[at]);
    std::int64_t i = 0, j = 0;
    std::size_t k = 0;
    if (h.format == format::coordinate) {
      if (t.size() != std::size_t(2 + values)) return std::nullopt;
      if (!detail::integer_token(t[0], i) || !detail::integer_token(t[1], j)) return std::nullopt;
      if (i < 1 || i > h.rows || j < 1 || j > h.cols) return std::nullopt;
      --i, --j;
      k = 2;
    } else {
      if (t.size() != std::size_t(values)) return std::nullopt;
      i = ai, j = aj;
      if (++ai >= h.rows) {
        ++aj;
        ai = h.symmetry == symmetry::general          ? 0
             : h.symmetry == symmetry::skew_symmetric ? aj + 1
                                                      : aj;
      }
    }
    double re = 1, im = 0;
    if (values >= 1) {
      if (h.field == field::integer) {
        std::int64_t x = 0;
        if (!detail::integer_token(t[k], x)) return std::nullopt;
        re = double(x);
      } else if (!detail::real_token(t[k], re)) {
        return std::nullopt;
      }
    }
    if (values == 2 && !detail::real_token(t[k + 1], im)) return std::nullopt;
    if (++count > declared) return std::nullopt;
    if (h.symmetry != symmetry::general && j > i) return std::nullopt;
    if (i == j && h.symmetry == symmetry::skew_symmetric && (re != 0 || im != 0))
      return std::nullopt;
    if (i == j && h.symmetry == symmetry::hermitian && im != 0) return std::nullopt;
    const std::complex<double> value(re, im);
    m.entries[{i, j}] += value;
    if (h.symmetry != symmetry::general && i != j) {
      const std::complex<double> back = h.symmetry == symmetry::symmetric   ? value
                                        : h.symmetry == symmetry::hermitian ? std::conj(value)
                                                                            : -value;
      m.entries[{j, i}] += back;
    }
  }
  if (count != declared) return std::nullopt;
  return m;
}

}  // namespace nearsparse::test::io
