// The Matrix Market reader: the header line by line, then the entries in blocks of text (the
// next block read on a thread of its own while the current one is parsed), each block cut at
// line ends into one piece per thread, the pieces parsed in parallel into buffers of their own
// and handed, in file order, to a sink (the host CRS collector or the dense scatter). The host
// CRS collector builds the rows with a counting sort split over threads by rows.
// Every check that needs the line (syntax, ranges, the triangle, finiteness) runs in the parse;
// counts are checked as the pieces are handed on, so the first error in file order is reported.

#include "text_numbers.hpp"
#include "text_stream.hpp"
#include "threads.hpp"

#include <nearsparse/core/errors.hpp>
#include <nearsparse/io/detail/matrix_market_core.hpp>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace nearsparse::io {

const char* to_string(format f) {
  return f == format::coordinate ? "coordinate" : "array";
}
const char* to_string(field f) {
  switch (f) {
    case field::real:
      return "real";
    case field::integer:
      return "integer";
    case field::complex:
      return "complex";
    case field::pattern:
      return "pattern";
  }
  return "?";
}
const char* to_string(symmetry s) {
  switch (s) {
    case symmetry::general:
      return "general";
    case symmetry::symmetric:
      return "symmetric";
    case symmetry::skew_symmetric:
      return "skew-symmetric";
    case symmetry::hermitian:
      return "hermitian";
  }
  return "?";
}

namespace detail {

namespace {

using nearsparse::detail::concat;

template <class Scalar>
struct scalar_info {
  static constexpr bool complex = false;
  static constexpr double limit = double(std::numeric_limits<Scalar>::max());
  static constexpr const char* name = std::is_same_v<Scalar, float> ? "float" : "double";
};
template <class T>
struct scalar_info<Kokkos::complex<T>> {
  static constexpr bool complex = true;
  static constexpr double limit = double(std::numeric_limits<T>::max());
  static constexpr const char* name =
      std::is_same_v<T, float> ? "Kokkos::complex<float>" : "Kokkos::complex<double>";
};

/// A token for a message: at most 40 characters, control bytes as \xNN.
std::string shown(const char* p, const char* end) {
  std::string out;
  const char* stop = end - p > 40 ? p + 40 : end;
  for (; p < stop; ++p) {
    const auto c = static_cast<unsigned char>(*p);
    if (c >= 32 && c < 127) {
      out += char(c);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", unsigned(c));
      out += hex;
    }
  }
  if (stop != end) out += "...";
  return out;
}

[[noreturn]] void fail(const std::string& path, std::int64_t line, const std::string& what) {
  throw nearsparse::invalid_argument(
      concat("nearsparse::io: '", path, "' line ", line, ": ", what));
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string_view> split_tokens(std::string_view line) {
  std::vector<std::string_view> out;
  const char* p = line.data();
  const char* end = p + line.size();
  while (true) {
    p = skip_blanks(p, end);
    if (p == end) break;
    const char* e = token_end(p, end);
    out.emplace_back(p, std::size_t(e - p));
    p = e;
  }
  return out;
}

/// Lines, then blocks of whole lines, out of an input stream. While a block is parsed, a
/// thread of its own reads the text after it into a second buffer, so that reading (and, for .gz
/// files, inflating) overlaps the parse.
class block_reader {
 public:
  block_reader(const std::string& path, std::size_t block, const char* function)
      : in_(input_stream::open(path, function)) {
    // No larger than a plain file needs; uninitialized (a block is tens of MB).
    std::size_t size = std::max<std::size_t>(block, 64);
    if (!in_->compressed())
      size = std::min<std::size_t>(size, std::max<std::uint64_t>(in_->size(), 64));
    grow(size + 1);
  }
  block_reader(const block_reader&) = delete;
  block_reader& operator=(const block_reader&) = delete;
  ~block_reader() {
    if (fetch_.joinable()) fetch_.join();
  }

  input_stream& stream() { return *in_; }
  /// Bytes of the file consumed up to the end of the last block returned.
  std::uint64_t position() const { return position_; }
  bool at_end() const { return !fetch_.joinable() && begin_ == end_ && eof_; }
  /// Frees the buffers once the text is all parsed (before the rows are built, when memory
  /// peaks).
  void release() {
    if (fetch_.joinable()) fetch_.join();
    buffer_.reset();
    spare_.reset();
    size_ = spare_size_ = begin_ = end_ = spare_end_ = 0;
    eof_ = true;
  }

  /// The next line without its '\n'; false at the end. Valid until the next call.
  bool next_line(std::string_view& line) {
    while (true) {
      const char* b = buffer_.get() + begin_;
      const char* nl = static_cast<const char*>(std::memchr(b, '\n', end_ - begin_));
      if (nl) {
        line = std::string_view(b, std::size_t(nl - b));
        begin_ = std::size_t(nl - buffer_.get()) + 1;
        return true;
      }
      if (eof_) {
        if (begin_ == end_) return false;
        line = std::string_view(b, end_ - begin_);
        begin_ = end_;
        return true;
      }
      refill();
    }
  }

  /// The next run of whole lines (the last line of the file may lack its '\n'); empty at the
  /// end. Valid until the next call, which may already be reading the text that follows.
  std::pair<const char*, const char*> next_block() {
    take_fetched();
    while (true) {
      if (!eof_ && (begin_ > 0 || end_ < capacity())) refill();
      const char* b = buffer_.get() + begin_;
      const char* e = buffer_.get() + end_;
      position_ = in_->position();
      if (eof_) {
        begin_ = end_;
        return {b, e};
      }
      const char* last = e;
      while (last > b && last[-1] != '\n') --last;
      if (last > b) {
        begin_ = std::size_t(last - buffer_.get());
        start_fetch();
        return {b, last};
      }
      // One line fills the whole buffer: make room.
      grow(2 * size_);
    }
  }

 private:
  std::size_t capacity() const { return size_ - 1; }
  void grow(std::size_t size) {
    std::unique_ptr<char[]> bigger(new char[size]);
    if (end_ > 0) std::memcpy(bigger.get(), buffer_.get(), end_);
    buffer_ = std::move(bigger);
    size_ = size;
  }
  /// Fills buffer[end, capacity) from the stream; returns the new end.
  std::size_t fill(char* buffer, std::size_t end, std::size_t capacity, bool& eof) {
    while (end < capacity && !eof) {
      const std::size_t got = in_->read(buffer + end, capacity - end);
      if (got == 0) eof = true;
      end += got;
    }
    buffer[end] = '\0';
    return end;
  }
  void refill() {
    if (begin_ > 0) {
      std::memmove(buffer_.get(), buffer_.get() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    if (end_ == capacity()) grow(2 * size_);
    end_ = fill(buffer_.get(), end_, capacity(), eof_);
  }
  /// Starts reading the text after the current block (its unfinished last line first) into
  /// the spare buffer.
  void start_fetch() {
    if (spare_size_ < size_) {
      spare_.reset(new char[size_]);
      spare_size_ = size_;
    }
    const std::size_t tail = end_ - begin_;
    std::memcpy(spare_.get(), buffer_.get() + begin_, tail);
    begin_ = end_;
    spare_end_ = tail;
    spare_eof_ = false;
    fetch_error_ = nullptr;
    fetch_ = std::thread([this] {
      try {
        spare_end_ = fill(spare_.get(), spare_end_, spare_size_ - 1, spare_eof_);
      } catch (...) {
        fetch_error_ = std::current_exception();
      }
    });
  }
  /// Waits for the text being read and makes it the current buffer.
  void take_fetched() {
    if (!fetch_.joinable()) return;
    fetch_.join();
    if (fetch_error_) std::rethrow_exception(fetch_error_);
    std::swap(buffer_, spare_);
    std::swap(size_, spare_size_);
    begin_ = 0;
    end_ = spare_end_;
    eof_ = spare_eof_;
  }

  std::unique_ptr<input_stream> in_;
  std::unique_ptr<char[]> buffer_, spare_;
  std::size_t size_ = 0, spare_size_ = 0;
  std::size_t begin_ = 0, end_ = 0, spare_end_ = 0;
  bool eof_ = false, spare_eof_ = false;
  std::uint64_t position_ = 0;
  std::thread fetch_;
  std::exception_ptr fetch_error_;
};

/// An allocator whose value-less construction leaves trivial values uninitialized (resize does
/// not clear memory that is written next anyway).
template <class T>
struct uninitialized_allocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = uninitialized_allocator<U>;
  };
  uninitialized_allocator() = default;
  template <class U>
  uninitialized_allocator(const uninitialized_allocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

/// Asks for transparent huge pages under a large array about to be filled: far fewer page
/// faults, which the first (serial) touch of fresh memory otherwise spends much of its time in.
/// Only a hint; nothing happens where it is not supported.
inline void advise_huge_pages(const void* data, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t huge = std::uintptr_t(1) << 21;
  if (!data || bytes < 2 * huge) return;
  const auto begin = (reinterpret_cast<std::uintptr_t>(data) + huge - 1) & ~(huge - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(huge - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data, (void)bytes;
#endif
}

struct parsed_header {
  header h;
  std::int64_t lines = 0;  ///< lines up to and including the size line
};

std::int64_t stored_values(const header& h) {
  const std::int64_t n = h.rows;
  switch (h.symmetry) {
    case symmetry::general:
      return h.rows * h.cols;
    case symmetry::skew_symmetric:
      return n * (n - 1) / 2;
    default:
      return n * (n + 1) / 2;
  }
}

parsed_header parse_header(block_reader& reader, const std::string& path) {
  parsed_header out;
  header& h = out.h;
  std::string_view line;
  if (!reader.next_line(line))
    fail(path, 1,
         "the file is empty; expected the banner '%%MatrixMarket matrix <format> <field> "
         "<symmetry>'");
  out.lines = 1;
  const auto banner = split_tokens(line);
  const char* shape = "'%%MatrixMarket matrix <format> <field> <symmetry>'";
  if (banner.empty() || lower(banner[0]) != "%%matrixmarket")
    fail(path, 1,
         concat("bad banner '", shown(line.data(), line.data() + line.size()),
                "'; a Matrix Market file starts with ", shape));
  if (banner.size() < 5)
    fail(path, 1,
         concat("bad banner '", shown(line.data(), line.data() + line.size()), "'; expected ",
                shape));
  if (banner.size() > 5)
    fail(path, 1,
         concat("bad banner: unexpected '",
                shown(banner[5].data(), banner[5].data() + banner[5].size()),
                "' after the symmetry; expected ", shape));
  auto show = [](std::string_view t) { return shown(t.data(), t.data() + t.size()); };
  if (lower(banner[1]) != "matrix")
    fail(path, 1, concat("unsupported object '", show(banner[1]), "'; only 'matrix' is read"));
  const std::string fmt = lower(banner[2]), fld = lower(banner[3]), sym = lower(banner[4]);
  if (fmt == "coordinate")
    h.format = format::coordinate;
  else if (fmt == "array")
    h.format = format::array;
  else
    fail(path, 1,
         concat("unsupported format '", show(banner[2]), "'; expected coordinate or array"));
  if (fld == "real")
    h.field = field::real;
  else if (fld == "integer")
    h.field = field::integer;
  else if (fld == "complex")
    h.field = field::complex;
  else if (fld == "pattern")
    h.field = field::pattern;
  else
    fail(path, 1,
         concat("unsupported field '", show(banner[3]),
                "'; expected real, integer, complex or pattern"));
  if (sym == "general")
    h.symmetry = symmetry::general;
  else if (sym == "symmetric")
    h.symmetry = symmetry::symmetric;
  else if (sym == "skew-symmetric")
    h.symmetry = symmetry::skew_symmetric;
  else if (sym == "hermitian")
    h.symmetry = symmetry::hermitian;
  else
    fail(path, 1,
         concat("unsupported symmetry '", show(banner[4]),
                "'; expected general, symmetric, skew-symmetric or hermitian"));
  if (h.format == format::array && h.field == field::pattern)
    fail(path, 1, "the pattern field needs the coordinate format (an array file stores values)");
  if (h.symmetry == symmetry::hermitian && h.field != field::complex)
    fail(path, 1, concat("hermitian symmetry needs the complex field, not ", to_string(h.field)));
  if (h.symmetry == symmetry::skew_symmetric && h.field == field::pattern)
    fail(path, 1, "skew-symmetric symmetry cannot go with the pattern field");

  // Comments and blank lines, then the size line.
  while (true) {
    if (!reader.next_line(line))
      fail(path, out.lines,
           concat("the file ends before the size line (",
                  h.format == format::coordinate ? "rows columns entries" : "rows columns", ")"));
    ++out.lines;
    const char* p = skip_blanks(line.data(), line.data() + line.size());
    if (p == line.data() + line.size() || *p == '%') continue;
    break;
  }
  const auto sizes = split_tokens(line);
  const std::size_t want = h.format == format::coordinate ? 3 : 2;
  const char* names =
      h.format == format::coordinate ? "rows, columns and entries" : "rows and columns";
  if (sizes.size() != want)
    fail(path, out.lines,
         concat("the size line '", shown(line.data(), line.data() + line.size()), "' must hold ",
                want, " integers (", names, ")"));
  std::int64_t v[3] = {0, 0, 0};
  for (std::size_t k = 0; k < want; ++k) {
    const auto t = sizes[k];
    const auto status = parse_integer(t.data(), t.data() + t.size(), v[k]);
    if (status != number_status::ok || v[k] < 0)
      fail(path, out.lines,
           concat("the size line '", shown(line.data(), line.data() + line.size()), "' must hold ",
                  want, " non-negative integers (", names, "); '", show(t), "' is not one"));
  }
  h.rows = v[0];
  h.cols = v[1];
  if (h.rows > INT_MAX || h.cols > INT_MAX)
    fail(path, out.lines,
         concat("the matrix is ", h.rows, " x ", h.cols,
                "; rows and columns must each be below 2^31"));
  if (h.symmetry != symmetry::general && h.rows != h.cols)
    fail(path, out.lines,
         concat("a ", to_string(h.symmetry), " matrix must be square, but the size line says ",
                h.rows, " x ", h.cols));
  h.entries = h.format == format::coordinate ? v[2] : stored_values(h);
  return out;
}

struct body_spec {
  header h;
  double limit;  ///< largest magnitude the destination holds
  int values;    ///< values per entry: 0 (pattern), 1 or 2 (complex)
};

/// The output of one piece of text.
struct piece {
  const char* begin = nullptr;
  const char* end = nullptr;
  std::vector<std::int32_t> rows, cols;
  std::vector<double> values;
  std::int64_t lines = 0;    ///< line ends passed
  std::int64_t entries = 0;  ///< entries parsed
  std::int64_t error_line = -1;
  std::string error;
  void reset(const char* b, const char* e) {
    begin = b;
    end = e;
    rows.clear();
    cols.clear();
    values.clear();
    lines = entries = 0;
    error_line = -1;
    error.clear();
  }
};

bool is_data_line(const char* p, const char* le) {
  p = skip_blanks(p, le);
  return p < le && *p != '%';
}

/// Local index (0-based) of the line that holds data line k of [b, e).
std::int64_t locate_entry(const char* b, const char* e, std::int64_t k) {
  std::int64_t line = 0;
  while (b < e) {
    const char* nl = static_cast<const char*>(std::memchr(b, '\n', std::size_t(e - b)));
    const char* le = nl ? nl : e;
    if (is_data_line(b, le) && k-- == 0) return line;
    ++line;
    b = nl ? nl + 1 : e;
  }
  return line;
}

const char* field_words(const body_spec& s) {
  switch (s.values) {
    case 0:
      return "no value (pattern)";
    case 1:
      return s.h.field == field::integer ? "one integer value" : "one real value";
    default:
      return "two values (real and imaginary part)";
  }
}

/// Parses one value token; returns an error message or an empty string.
std::string parse_value(const body_spec& s, const char* p, const char* e, double& out) {
  if (s.h.field == field::integer) {
    std::int64_t v = 0;
    const auto status = parse_integer(p, e, v);
    if (status == number_status::syntax)
      return concat("'", shown(p, e), "' is not an integer (the field is integer)");
    if (status == number_status::range)
      return concat("integer '", shown(p, e), "' is out of range");
    out = double(v);
    return {};
  }
  const auto status = parse_real(p, e, out);
  if (status == number_status::syntax) return concat("'", shown(p, e), "' is not a number");
  if (status == number_status::not_finite)
    return concat("value '", shown(p, e), "' is not finite (NaN and Inf are refused)");
  if (status == number_status::range)
    return concat("value '", shown(p, e), "' is out of the range of double");
  if (std::fabs(out) > s.limit)
    return concat("value '", shown(p, e), "' is out of the range of float");
  return {};
}

std::string parse_index(const char* p, const char* e, const char* what, std::int64_t bound,
                        std::int64_t& out) {
  const auto status = parse_integer(p, e, out);
  if (status == number_status::syntax)
    return concat(what, " index '", shown(p, e), "' is not an integer");
  if (status == number_status::range || out < 1 || out > bound)
    return concat(what, " index ", shown(p, e), " is outside 1..", bound);
  return {};
}

/// The common case of an index: 1 to 18 digits followed by a blank or the line's end, in range.
/// Advances p past it; false (p unchanged) for anything else, which parse_index then reports.
inline bool fast_index(const char*& p, const char* le, std::int64_t bound, std::int64_t& out) {
  const char* q = p;
  std::uint64_t v = 0;
  while (q < le && static_cast<unsigned>(*q - '0') < 10u) v = v * 10 + unsigned(*q++ - '0');
  const auto digits = q - p;
  if (digits < 1 || digits > 18 || (q < le && !is_blank(*q)) || v < 1 || v > std::uint64_t(bound))
    return false;
  out = std::int64_t(v);
  p = q;
  return true;
}

/// The common case of a real value: a token std::from_chars reads whole, finite and within the
/// destination's range (the token syntax parse_real accepts, less the leading '+'). Advances p.
inline bool fast_real(const char*& p, const char* le, double limit, double& out) {
#if defined(__cpp_lib_to_chars) && __cpp_lib_to_chars >= 201611L
  const auto r = std::from_chars(p, le, out);
  if (r.ec != std::errc() || (r.ptr < le && !is_blank(*r.ptr)) || !(std::fabs(out) <= limit))
    return false;
  p = r.ptr;
  return true;
#else
  (void)p, (void)le, (void)limit, (void)out;
  return false;
#endif
}

/// Parses [piece.begin, piece.end): coordinate entries or array values.
void parse_piece(piece& pc, const body_spec& s) {
  const bool coordinate = s.h.format == format::coordinate;
  const symmetry sym = s.h.symmetry;
  const char* p = pc.begin;
  const char* end = pc.end;
  auto error = [&](std::string message) {
    pc.error_line = pc.lines;
    pc.error = std::move(message);
  };
  while (p < end) {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', std::size_t(end - p)));
    const char* le = nl ? nl : end;
    const char* q = skip_blanks(p, le);
    if (q < le && *q != '%') {
      std::int64_t i = 0, j = 0;
      if (coordinate) {
        if (!fast_index(q, le, s.h.rows, i)) {
          const char* e = token_end(q, le);
          auto m = parse_index(q, e, "row", s.h.rows, i);
          if (!m.empty()) return error(m);
          q = e;
        }
        q = skip_blanks(q, le);
        if (q == le) return error("the entry ends after the row index; expected a column index");
        if (!fast_index(q, le, s.h.cols, j)) {
          const char* e = token_end(q, le);
          auto m = parse_index(q, e, "column", s.h.cols, j);
          if (!m.empty()) return error(m);
          q = e;
        }
        q = skip_blanks(q, le);
        if (sym != symmetry::general && j > i)
          return error(concat("entry (", i, ", ", j, ") is above the diagonal; a ", to_string(sym),
                              " file stores the lower triangle only"));
      }
      double v[2] = {1.0, 0.0};
      for (int k = 0; k < s.values; ++k) {
        if (q == le)
          return error(concat("the entry ends after ",
                              k == 0 ? (coordinate ? "the indices" : "0 values") : "the real part",
                              "; a ", to_string(s.h.field), " entry holds ", field_words(s)));
        if (s.h.field != field::integer && fast_real(q, le, s.limit, v[k])) {
          q = skip_blanks(q, le);
          continue;
        }
        const char* e = token_end(q, le);
        auto m = parse_value(s, q, e, v[k]);
        if (!m.empty()) return error(m);
        q = skip_blanks(e, le);
      }
      if (q < le)
        return error(concat("unexpected '", shown(q, token_end(q, le)), "' after the entry; a ",
                            to_string(s.h.field), " entry holds ", field_words(s)));
      if (coordinate && i == j) {
        if (sym == symmetry::skew_symmetric && (v[0] != 0 || v[1] != 0))
          return error(concat("diagonal entry (", i, ", ", i,
                              ") is nonzero; a skew-symmetric matrix has a zero diagonal"));
        if (sym == symmetry::hermitian && v[1] != 0)
          return error(concat("diagonal entry (", i, ", ", i, ") has imaginary part ", v[1],
                              "; a Hermitian matrix has a real diagonal"));
      }
      if (coordinate) {
        pc.rows.push_back(std::int32_t(i - 1));
        pc.cols.push_back(std::int32_t(j - 1));
      }
      for (int k = 0; k < s.values; ++k) pc.values.push_back(v[k]);
      ++pc.entries;
    }
    if (!nl) break;
    ++pc.lines;
    p = nl + 1;
  }
}

/// Where the next array value goes: column by column, the lower triangle for the symmetric kinds.
struct array_cursor {
  std::int64_t rows = 0, cols = 0;
  symmetry sym = symmetry::general;
  std::int64_t i = 0, j = 0;
  void start(const header& h) {
    rows = h.rows;
    cols = h.cols;
    sym = h.symmetry;
    j = 0;
    i = sym == symmetry::skew_symmetric ? 1 : 0;
  }
  void advance() {
    if (++i >= rows) {
      ++j;
      i = sym == symmetry::general ? 0 : (sym == symmetry::skew_symmetric ? j + 1 : j);
    }
  }
};

/// Reads the file's body block by block and hands the parsed pieces to `consume(pieces, n)` in
/// file order.
template <class Consume>
void parse_body(block_reader& reader, const std::string& path, const parsed_header& ph,
                const body_spec& spec, const read_options& options, Consume&& consume) {
  const header& h = ph.h;
  const int threads = thread_count(options.threads);
  const std::size_t min_piece =
      std::min<std::size_t>(1 << 18, std::max<std::size_t>(16, options.block_bytes / 4));
  std::vector<piece> pieces(std::size_t(std::max(threads, 1)));
  std::int64_t line_base = ph.lines + 1;  // number of the first line of the block
  std::int64_t total = 0;
  array_cursor cursor;
  cursor.start(h);
  const auto report = [&] {
    if (!options.progress) return;
    progress p;
    p.bytes_done = reader.position();
    p.bytes_total = reader.stream().size();
    p.entries_done = total;
    p.entries_total = h.entries;
    options.progress(p);
  };
  bool last_had_newline = true;
  while (!reader.at_end()) {
    const auto [b, e] = reader.next_block();
    if (b == e) break;
    last_had_newline = e[-1] == '\n';
    // One piece per thread, of at least min_piece bytes, each cut after a '\n'.
    const std::size_t bytes = std::size_t(e - b);
    const int count = int(
        std::max<std::size_t>(1, std::min<std::size_t>(std::size_t(threads), bytes / min_piece)));
    const char* at = b;
    for (int t = 0; t < count; ++t) {
      const char* stop = t + 1 == count ? e : b + bytes * std::size_t(t + 1) / std::size_t(count);
      if (stop < at) stop = at;
      if (stop < e) {
        const char* nl = static_cast<const char*>(std::memchr(stop, '\n', std::size_t(e - stop)));
        stop = nl ? nl + 1 : e;
      }
      pieces[std::size_t(t)].reset(at, stop);
      at = stop;
    }
    run_parallel(count, [&](int t) { parse_piece(pieces[std::size_t(t)], spec); });
    for (int t = 0; t < count; ++t) {
      piece& pc = pieces[std::size_t(t)];
      if (pc.entries > h.entries - total)
        fail(path, line_base + locate_entry(pc.begin, pc.end, h.entries - total),
             concat("more entries than the ", h.entries, " the size line declares"));
      if (pc.error_line >= 0) fail(path, line_base + pc.error_line, pc.error);
      if (h.format == format::array) {
        // Array values get their positions here, in order.
        pc.rows.resize(std::size_t(pc.entries));
        pc.cols.resize(std::size_t(pc.entries));
        for (std::int64_t k = 0; k < pc.entries; ++k) {
          pc.rows[std::size_t(k)] = std::int32_t(cursor.i);
          pc.cols[std::size_t(k)] = std::int32_t(cursor.j);
          if (h.symmetry == symmetry::hermitian && cursor.i == cursor.j &&
              pc.values[std::size_t(2 * k + 1)] != 0)
            fail(path, line_base + locate_entry(pc.begin, pc.end, k),
                 concat("diagonal value (", cursor.i + 1, ", ", cursor.j + 1,
                        ") has imaginary part ", pc.values[std::size_t(2 * k + 1)],
                        "; a Hermitian matrix has a real diagonal"));
          cursor.advance();
        }
      }
      total += pc.entries;
      line_base += pc.lines;
    }
    consume(pieces.data(), count);
    report();
  }
  if (total < h.entries) {
    const std::int64_t last = last_had_newline ? line_base - 1 : line_base;
    fail(path, std::max<std::int64_t>(last, 1),
         concat("the file ends after ", total, " of the ", h.entries,
                " entries the size line declares (truncated, or a wrong count)"));
  }
}

template <class Scalar>
body_spec spec_for(const std::string& path, const header& h) {
  if (h.field == field::complex && !scalar_info<Scalar>::complex)
    fail(path, 1,
         concat("the file holds complex values (", to_string(h.field), " ", to_string(h.symmetry),
                "), which a ", scalar_info<Scalar>::name,
                " destination cannot take; read it into a Kokkos::complex one"));
  body_spec s;
  s.h = h;
  s.limit = scalar_info<Scalar>::limit;
  s.values = h.field == field::pattern ? 0 : (h.field == field::complex ? 2 : 1);
  return s;
}

template <class Scalar>
Scalar value_at(const piece& pc, std::size_t k, int values) {
  if constexpr (scalar_info<Scalar>::complex) {
    using real = typename Scalar::value_type;
    if (values == 2) return Scalar(real(pc.values[2 * k]), real(pc.values[2 * k + 1]));
    if (values == 1) return Scalar(real(pc.values[k]), real(0));
    return Scalar(real(1), real(0));
  } else {
    return values == 1 ? Scalar(pc.values[k]) : Scalar(1);
  }
}

template <class Scalar>
Scalar mirrored(const Scalar& v, symmetry s) {
  if (s == symmetry::skew_symmetric) return -v;
  if constexpr (scalar_info<Scalar>::complex) {
    if (s == symmetry::hermitian) return Kokkos::conj(v);
  }
  return v;
}

/// Entries to reserve room for: the declared count, but never more than a plain file can hold
/// (an entry takes at least 2 bytes, "1\n"), nor more than `cap_unknown` for a .gz file.
std::size_t reservation(block_reader& reader, const header& h, std::size_t cap_unknown) {
  const auto& in = reader.stream();
  const std::uint64_t want = std::uint64_t(h.entries);
  if (in.compressed()) return std::size_t(std::min<std::uint64_t>(want, cap_unknown));
  return std::size_t(std::min<std::uint64_t>(want, in.size() / 2 + 1));
}

}  // namespace

header read_header(const std::string& path) {
  block_reader reader(path, 1 << 16, "nearsparse::io::read_header");
  return parse_header(reader, path).h;
}

void check_dense_size(const std::string& path, const header& h, std::size_t scalar_bytes) {
  const auto cells = double(h.rows) * double(h.cols) * double(scalar_bytes);
  if (cells > double(std::numeric_limits<std::ptrdiff_t>::max() / 2))
    throw nearsparse::invalid_argument(concat("nearsparse::io::read_dense: '", path, "' is ",
                                              h.rows, " x ", h.cols,
                                              ", too large for a dense matrix"));
  if (h.format != format::array) return;
  // An array file declares its size by its extents alone: refuse one far too short for them
  // before the dense matrix is allocated (every value takes at least 2 bytes, "1\n").
  block_reader reader(path, 1 << 16, "nearsparse::io::read_dense");
  const parsed_header ph = parse_header(reader, path);
  const auto& in = reader.stream();
  if (!in.compressed() && std::uint64_t(ph.h.entries) > in.size() / 2 + 1)
    fail(path, ph.lines,
         concat("the size line declares ", ph.h.rows, " x ", ph.h.cols, " (", ph.h.entries,
                " values), but the file has only ", in.size(), " bytes"));
}

template <class Scalar>
host_crs<Scalar> read_host_crs(const std::string& path, const read_options& options) {
  block_reader reader(path, options.block_bytes, "nearsparse::io::read");
  const parsed_header ph = parse_header(reader, path);
  const header& h = ph.h;
  const body_spec spec = spec_for<Scalar>(path, h);
  const int threads = thread_count(options.threads);

  // The file's entries, in file order; left uninitialized as they grow, since the parallel copy
  // that fills them is also what first touches their memory.
  std::vector<std::int32_t, uninitialized_allocator<std::int32_t>> ri, ci;
  std::vector<Scalar, uninitialized_allocator<Scalar>> vi;
  const std::size_t reserve = reservation(reader, h, std::size_t(1) << 22);
  ri.reserve(reserve);
  ci.reserve(reserve);
  vi.reserve(reserve);
  advise_huge_pages(ri.data(), reserve * sizeof(std::int32_t));
  advise_huge_pages(ci.data(), reserve * sizeof(std::int32_t));
  advise_huge_pages(vi.data(), reserve * sizeof(Scalar));
  parse_body(reader, path, ph, spec, options, [&](piece* pieces, int count) {
    std::size_t at = ri.size(), add = 0;
    for (int t = 0; t < count; ++t) add += std::size_t(pieces[t].entries);
    ri.resize(at + add);
    ci.resize(at + add);
    vi.resize(at + add);
    std::vector<std::size_t> starts(static_cast<std::size_t>(count));
    for (int t = 0; t < count; ++t) {
      starts[std::size_t(t)] = at;
      at += std::size_t(pieces[t].entries);
    }
    run_parallel(count, [&](int t) {
      const piece& pc = pieces[t];
      const std::size_t s0 = starts[std::size_t(t)], n = std::size_t(pc.entries);
      if (n == 0) return;
      std::memcpy(ri.data() + s0, pc.rows.data(), n * sizeof(std::int32_t));
      std::memcpy(ci.data() + s0, pc.cols.data(), n * sizeof(std::int32_t));
      for (std::size_t k = 0; k < n; ++k) vi[s0 + k] = value_at<Scalar>(pc, k, spec.values);
    });
  });
  reader.release();

  // Compressed rows: count (both triangles for the symmetric kinds), place in file order, then
  // sort each row by column (stable, so duplicates are summed in file order).
  host_crs<Scalar> out;
  out.path = path;
  out.file = h;
  out.rows = h.rows;
  out.cols = h.cols;
  const bool mirror = h.symmetry != symmetry::general;
  const std::size_t n = ri.size();
  const std::size_t nrows = std::size_t(h.rows);
  out.row_offsets.assign(nrows + 1, 0);
  // A counting sort with the rows split over threads: each thread passes over all the entries in
  // file order and takes those of its rows, so every row holds its entries in file order
  // whatever the thread count, with no memory beyond one cursor a row.
  const int parts = int(
      std::min<std::size_t>(std::size_t(std::max(threads, 1)), std::max<std::size_t>(1, n >> 16)));
  const auto take = [&](std::size_t r0, std::size_t r1, auto&& place) {
    const std::size_t width = r1 - r0;
    for (std::size_t k = 0; k < n; ++k) {
      const auto r = std::size_t(ri[k]), c = std::size_t(ci[k]);
      if (r - r0 < width) place(r, c, k, false);
      if (mirror && r != c && c - r0 < width) place(c, r, k, true);
    }
  };
  run_parallel(parts, [&](int t) {
    std::int64_t* length = out.row_offsets.data() + 1;
    take(nrows * std::size_t(t) / std::size_t(parts),
         nrows * std::size_t(t + 1) / std::size_t(parts),
         [&](std::size_t r, std::size_t, std::size_t, bool) { ++length[r]; });
  });
  for (std::size_t i = 0; i < nrows; ++i) out.row_offsets[i + 1] += out.row_offsets[i];
  const std::size_t total = std::size_t(out.row_offsets.back());
  out.columns.reserve(total);
  out.values.reserve(total);
  advise_huge_pages(out.columns.data(), total * sizeof(std::int32_t));
  advise_huge_pages(out.values.data(), total * sizeof(Scalar));
  out.columns.resize(total);
  out.values.resize(total);
  {
    // Rows split by entry count for the placement.
    std::vector<std::size_t> bound(std::size_t(parts) + 1, nrows);
    bound[0] = 0;
    for (int t = 1; t < parts; ++t)
      bound[std::size_t(t)] =
          std::size_t(std::lower_bound(out.row_offsets.begin(), out.row_offsets.end() - 1,
                                       std::int64_t(total * std::size_t(t) / std::size_t(parts))) -
                      out.row_offsets.begin());
    std::vector<std::int64_t> cursor(out.row_offsets.begin(), out.row_offsets.end() - 1);
    run_parallel(parts, [&](int t) {
      take(bound[std::size_t(t)], bound[std::size_t(t) + 1],
           [&](std::size_t r, std::size_t c, std::size_t k, bool mirrored_entry) {
             const auto at = std::size_t(cursor[r]++);
             out.columns[at] = std::int32_t(c);
             out.values[at] = mirrored_entry ? mirrored(vi[k], h.symmetry) : vi[k];
           });
    });
  }
  decltype(ri)().swap(ri);
  decltype(ci)().swap(ci);
  decltype(vi)().swap(vi);

  std::vector<std::int64_t> length(std::size_t(h.rows));
  const int workers =
      int(std::min<std::int64_t>(threads, std::max<std::int64_t>(1, h.rows / 1024)));
  bool any_duplicate = false;
  std::vector<char> duplicates(std::size_t(std::max(workers, 1)), 0);
  run_parallel(workers, [&](int t) {
    const std::size_t r0 = std::size_t(h.rows) * std::size_t(t) / std::size_t(workers);
    const std::size_t r1 = std::size_t(h.rows) * std::size_t(t + 1) / std::size_t(workers);
    std::vector<std::pair<std::int32_t, std::int64_t>> order;
    std::vector<Scalar> scratch;
    for (std::size_t i = r0; i < r1; ++i) {
      const std::int64_t b = out.row_offsets[i], e = out.row_offsets[i + 1];
      bool sorted = true;
      for (std::int64_t k = b + 1; k < e && sorted; ++k)
        sorted = out.columns[std::size_t(k - 1)] < out.columns[std::size_t(k)];
      if (sorted) {
        length[i] = e - b;
        continue;
      }
      order.clear();
      for (std::int64_t k = b; k < e; ++k) order.emplace_back(out.columns[std::size_t(k)], k);
      std::stable_sort(order.begin(), order.end(),
                       [](const auto& x, const auto& y) { return x.first < y.first; });
      scratch.clear();
      std::int64_t w = b;
      for (std::size_t k = 0; k < order.size(); ++k) {
        const Scalar v = out.values[std::size_t(order[k].second)];
        if (k > 0 && order[k].first == order[k - 1].first) {
          scratch.back() += v;
          duplicates[std::size_t(t)] = 1;
        } else {
          scratch.push_back(v);
          out.columns[std::size_t(w++)] = order[k].first;
        }
      }
      for (std::size_t k = 0; k < scratch.size(); ++k) out.values[std::size_t(b) + k] = scratch[k];
      length[i] = std::int64_t(scratch.size());
    }
  });
  for (char d : duplicates) any_duplicate |= d != 0;
  if (any_duplicate) {
    std::int64_t w = 0;
    for (std::size_t i = 0; i < std::size_t(h.rows); ++i) {
      const std::int64_t b = out.row_offsets[i];
      out.row_offsets[i] = w;
      for (std::int64_t k = 0; k < length[i]; ++k, ++w) {
        out.columns[std::size_t(w)] = out.columns[std::size_t(b + k)];
        out.values[std::size_t(w)] = out.values[std::size_t(b + k)];
      }
    }
    out.row_offsets.back() = w;
    out.columns.resize(std::size_t(w));
    out.values.resize(std::size_t(w));
  }
  return out;
}

template <class Scalar>
void read_host_dense(const std::string& path, const read_options& options, const header& expected,
                     Scalar* data, std::ptrdiff_t rs, std::ptrdiff_t cs) {
  block_reader reader(path, options.block_bytes, "nearsparse::io::read_dense");
  const parsed_header ph = parse_header(reader, path);
  const header& h = ph.h;
  if (h.rows != expected.rows || h.cols != expected.cols || h.format != expected.format ||
      h.field != expected.field || h.symmetry != expected.symmetry || h.entries != expected.entries)
    throw nearsparse::invalid_argument(
        concat("nearsparse::io::read_dense: '", path, "' changed while it was read"));
  const body_spec spec = spec_for<Scalar>(path, h);
  const bool mirror = h.symmetry != symmetry::general;
  parse_body(reader, path, ph, spec, options, [&](piece* pieces, int count) {
    for (int t = 0; t < count; ++t) {
      const piece& pc = pieces[t];
      for (std::size_t k = 0; k < std::size_t(pc.entries); ++k) {
        const std::ptrdiff_t i = pc.rows[k], j = pc.cols[k];
        const Scalar v = value_at<Scalar>(pc, k, spec.values);
        data[i * rs + j * cs] += v;
        if (mirror && i != j) data[j * rs + i * cs] += mirrored(v, h.symmetry);
      }
    }
  });
}

template <class Scalar>
std::optional<std::pair<std::int64_t, std::int64_t>> hermitian_mismatch(const host_crs<Scalar>& m) {
  if (m.rows != m.cols) return std::make_pair(std::int64_t(0), std::int64_t(0));
  auto find = [&](std::int64_t row, std::int32_t col) -> const Scalar* {
    const auto b = m.columns.begin() + m.row_offsets[std::size_t(row)];
    const auto e = m.columns.begin() + m.row_offsets[std::size_t(row) + 1];
    const auto it = std::lower_bound(b, e, col);
    if (it == e || *it != col) return nullptr;
    return &m.values[std::size_t(it - m.columns.begin())];
  };
  for (std::int64_t i = 0; i < m.rows; ++i)
    for (std::int64_t k = m.row_offsets[std::size_t(i)]; k < m.row_offsets[std::size_t(i) + 1];
         ++k) {
      const std::int32_t j = m.columns[std::size_t(k)];
      const Scalar v = m.values[std::size_t(k)];
      const Scalar* w = find(j, std::int32_t(i));
      const Scalar back = w ? mirrored(*w, symmetry::hermitian) : Scalar(0);
      if (!(v == back)) return std::make_pair(i, std::int64_t(j));
    }
  return std::nullopt;
}

#define NEARSPARSE_IO_READ(S)                                                                  \
  template host_crs<S> read_host_crs<S>(const std::string&, const read_options&);              \
  template void read_host_dense<S>(const std::string&, const read_options&, const header&, S*, \
                                   std::ptrdiff_t, std::ptrdiff_t);                            \
  template std::optional<std::pair<std::int64_t, std::int64_t>> hermitian_mismatch<S>(         \
      const host_crs<S>&);
NEARSPARSE_IO_READ(double)
NEARSPARSE_IO_READ(float)
NEARSPARSE_IO_READ(Kokkos::complex<double>)
NEARSPARSE_IO_READ(Kokkos::complex<float>)
#undef NEARSPARSE_IO_READ

}  // namespace detail

}  // namespace nearsparse::io
