// The Matrix Market writer: checks the values against the field and symmetry asked for, then
// formats the entries in tasks (a range of rows or columns each, into a buffer of its own) on
// several threads while the calling thread writes the finished buffers in order.

#include "text_numbers.hpp"
#include "text_stream.hpp"
#include "threads.hpp"

#include <nearsparse/core/errors.hpp>
#include <nearsparse/io/detail/matrix_market_core.hpp>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace nearsparse::io::detail {

namespace {

using nearsparse::detail::concat;
using nearsparse::detail::throw_invalid_argument;

template <class Scalar>
struct parts {
  static constexpr bool complex = false;
  using real = Scalar;
  static real re(Scalar v) { return v; }
  static real im(Scalar) { return real(0); }
};
template <class T>
struct parts<Kokkos::complex<T>> {
  static constexpr bool complex = true;
  using real = T;
  static real re(const Kokkos::complex<T>& v) { return v.real(); }
  static real im(const Kokkos::complex<T>& v) { return v.imag(); }
};

template <class Scalar>
Scalar mirrored(const Scalar& v, symmetry s) {
  if (s == symmetry::skew_symmetric) return -v;
  if constexpr (parts<Scalar>::complex) {
    if (s == symmetry::hermitian) return Kokkos::conj(v);
  }
  return v;
}

/// The field written, after checking it fits the options.
template <class Scalar>
field chosen_field(const char* fn, const write_options& o, format f) {
  const field out = o.field ? *o.field : (parts<Scalar>::complex ? field::complex : field::real);
  if (f == format::array && out == field::pattern)
    throw_invalid_argument(fn, "options.field",
                           "is pattern, which the array format cannot store; write the "
                           "coordinate format or another field");
  if (o.symmetry == symmetry::hermitian && out != field::complex)
    throw_invalid_argument(
        fn, "options.symmetry",
        concat("is hermitian, which needs the complex field, not ", to_string(out)));
  if (o.symmetry == symmetry::skew_symmetric && out == field::pattern)
    throw_invalid_argument(fn, "options.symmetry",
                           "is skew-symmetric, which cannot go with the pattern field");
  return out;
}

/// Throws unless v can be written in field f.
template <class Scalar>
void check_value(const char* fn, const Scalar& v, field f, std::int64_t i, std::int64_t j) {
  const double re = double(parts<Scalar>::re(v)), im = double(parts<Scalar>::im(v));
  if (!std::isfinite(re) || !std::isfinite(im))
    throw_invalid_argument(fn, "A",
                           concat("has a non-finite value at (", i, ", ", j,
                                  ") (0-based); Matrix Market files hold finite values only"));
  if ((f == field::real || f == field::integer) && im != 0)
    throw_invalid_argument(fn, "A",
                           concat("has a complex value at (", i, ", ", j, ") (0-based), which the ",
                                  to_string(f), " field cannot hold"));
  if (f == field::integer && (re != std::floor(re) || std::fabs(re) >= 9.2e18))
    throw_invalid_argument(fn, "A",
                           concat("has the value ", re, " at (", i, ", ", j,
                                  ") (0-based), which the integer field cannot hold"));
}

/// Longest text of one entry: two indices and two values.
constexpr std::size_t max_line = 2 * 21 + 2 * 32 + 4;

template <class Scalar>
char* put_entry(char* p, std::int64_t i, std::int64_t j, bool indices, const Scalar& v, field f) {
  char* end = p + max_line;
  if (indices) {
    p = format_integer(p, end, i + 1);
    *p++ = ' ';
    p = format_integer(p, end, j + 1);
  }
  using real = typename parts<Scalar>::real;
  if (f != field::pattern) {
    if (indices) *p++ = ' ';
    if (f == field::integer) {
      p = format_integer(p, end, std::int64_t(parts<Scalar>::re(v)));
    } else {
      p = format_real(p, end, real(parts<Scalar>::re(v)));
      if (f == field::complex) {
        *p++ = ' ';
        p = format_real(p, end, real(parts<Scalar>::im(v)));
      }
    }
  }
  *p++ = '\n';
  return p;
}

void write_header(output_stream& out, format fm, field f, symmetry s, const std::string& comment,
                  std::int64_t rows, std::int64_t cols, std::int64_t entries) {
  std::string text =
      concat("%%MatrixMarket matrix ", to_string(fm), " ", to_string(f), " ", to_string(s), "\n");
  std::size_t at = 0;
  while (!comment.empty() && at <= comment.size()) {
    const std::size_t nl = std::min(comment.find('\n', at), comment.size());
    text += "%" + comment.substr(at, nl - at) + "\n";
    at = nl + 1;
  }
  text += fm == format::coordinate ? concat(rows, " ", cols, " ", entries, "\n")
                                   : concat(rows, " ", cols, "\n");
  out.write(text.data(), text.size());
}

/// Text of one task: grown to the longest text the task can take, never initialized, kept from
/// task to task.
class text_buffer {
 public:
  /// Room for `size` bytes; the previous text is dropped.
  char* room(std::size_t size) {
    if (size > capacity_) {
      data_.reset();
      data_.reset(new char[size]);
      capacity_ = size;
    }
    size_ = 0;
    return data_.get();
  }
  void finish(const char* end) { size_ = std::size_t(end - data_.get()); }
  const char* data() const { return data_.get(); }
  std::size_t size() const { return size_; }

 private:
  std::unique_ptr<char[]> data_;
  std::size_t capacity_ = 0, size_ = 0;
};

/// Formats tasks 0 .. count-1 (format(task, buffer) puts the task's text in the buffer) and
/// writes them in order: `threads` formatting threads take the tasks in turn, each into one of a
/// ring of 2 * threads buffers, while the calling thread writes the buffers in task order and
/// reports progress, so formatting and writing overlap.
template <class Format>
void write_tasks(output_stream& out, const write_options& o, std::int64_t count,
                 std::int64_t entries, const std::vector<std::int64_t>& task_entries,
                 Format&& format) {
  if (count <= 0) return;
  const int threads = int(std::min<std::int64_t>(thread_count(o.threads), count));
  const std::int64_t slots = std::min<std::int64_t>(2 * std::int64_t(threads), count);
  std::vector<text_buffer> buffers(static_cast<std::size_t>(slots));
  std::vector<std::int64_t> ready(static_cast<std::size_t>(slots), -1);  // task in each buffer
  std::int64_t written = 0;                                              // tasks written
  bool stop = false;
  std::exception_ptr error;
  std::mutex mutex;
  std::condition_variable changed;

  const auto formatter = [&](int t) {
    try {
      for (std::int64_t task = t; task < count; task += threads) {
        const auto slot = std::size_t(task % slots);
        {
          std::unique_lock<std::mutex> lock(mutex);
          changed.wait(lock, [&] { return stop || written > task - slots; });
          if (stop) return;
        }
        format(task, buffers[slot]);
        {
          std::lock_guard<std::mutex> lock(mutex);
          ready[slot] = task;
        }
        changed.notify_all();
      }
    } catch (...) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (!error) error = std::current_exception();
        stop = true;
      }
      changed.notify_all();
    }
  };
  std::vector<std::thread> workers;
  workers.reserve(std::size_t(threads));
  const auto halt = [&] {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stop = true;
    }
    changed.notify_all();
    for (auto& w : workers) w.join();
    workers.clear();
  };
  try {
    for (int t = 0; t < threads; ++t) workers.emplace_back(formatter, t);
    std::int64_t done = 0;
    for (std::int64_t task = 0; task < count; ++task) {
      const auto slot = std::size_t(task % slots);
      {
        std::unique_lock<std::mutex> lock(mutex);
        changed.wait(lock, [&] { return stop || ready[slot] == task; });
        if (stop) break;
      }
      out.write(buffers[slot].data(), buffers[slot].size());
      done += task_entries[std::size_t(task)];
      {
        std::lock_guard<std::mutex> lock(mutex);
        written = task + 1;
      }
      changed.notify_all();
      if (o.progress) {
        progress p;
        p.entries_done = done;
        p.entries_total = entries;
        o.progress(p);
      }
    }
  } catch (...) {
    halt();
    throw;
  }
  halt();
  if (error) std::rethrow_exception(error);
}

/// Entries (or dense values) per task: about 1 MB of text, 3.5 MB of buffer.
constexpr std::int64_t task_size = std::int64_t(1) << 15;

}  // namespace

template <class Scalar>
void write_host_dense(const std::string& path, std::int64_t rows, std::int64_t cols,
                      const Scalar* data, const write_options& o) {
  const char* fn = "nearsparse::io::write_dense";
  const format fm = o.format;
  const field f = chosen_field<Scalar>(fn, o, fm);
  const symmetry s = o.symmetry;
  const auto at = [&](std::int64_t i, std::int64_t j) -> const Scalar& {
    return data[std::size_t(i) + std::size_t(j) * std::size_t(rows)];
  };
  if (s != symmetry::general && rows != cols)
    throw_invalid_argument(
        fn, "A",
        concat("is ", rows, " x ", cols, ", but a ", to_string(s), " file needs a square matrix"));
  // The first row of column j that is written.
  const auto first_row = [&](std::int64_t j) {
    return s == symmetry::general ? 0 : (s == symmetry::skew_symmetric ? j + 1 : j);
  };
  std::int64_t entries = 0;
  for (std::int64_t j = 0; j < cols; ++j)
    for (std::int64_t i = 0; i < rows; ++i) {
      const Scalar& v = at(i, j);
      check_value(fn, v, f, i, j);
      if (s != symmetry::general && !(at(j, i) == mirrored(v, s)))
        throw_invalid_argument(fn, "A",
                               concat("is not ", to_string(s), ": elements (", i, ", ", j,
                                      ") and (", j, ", ", i, ") (0-based) do not match"));
      if (i >= first_row(j) && (fm == format::array || !(v == Scalar(0)))) ++entries;
    }
  auto out = output_stream::open(path, o.gzip_level, fn);
  write_header(*out, fm, f, s, o.comment, rows, cols, entries);
  // Tasks: runs of columns of about task_size values.
  const std::int64_t per_task =
      std::max<std::int64_t>(1, task_size / std::max<std::int64_t>(rows, 1));
  const std::int64_t count = cols == 0 ? 0 : (cols + per_task - 1) / per_task;
  std::vector<std::int64_t> task_entries(std::size_t(count), 0);
  const bool coordinate = fm == format::coordinate;
  write_tasks(*out, o, count, entries, task_entries, [&](std::int64_t task, text_buffer& b) {
    const std::int64_t j0 = task * per_task, j1 = std::min(cols, j0 + per_task);
    char* p = b.room(std::size_t(j1 - j0) * std::size_t(rows) * max_line);
    for (std::int64_t j = j0; j < j1; ++j)
      for (std::int64_t i = first_row(j); i < rows; ++i) {
        const Scalar& v = at(i, j);
        if (coordinate && v == Scalar(0)) continue;
        p = put_entry(p, i, j, coordinate, v, f);
      }
    b.finish(p);
  });
  out->close();
}

template <class Scalar>
void write_host_crs(const std::string& path, const host_crs<Scalar>& m, const write_options& o) {
  const char* fn = "nearsparse::io::write_crs";
  const field f = chosen_field<Scalar>(fn, o, format::coordinate);
  const symmetry s = o.symmetry;
  const std::int64_t rows = m.rows, cols = m.cols;
  const std::int64_t nnz = std::int64_t(m.values.size());
  if (rows < 0 || cols < 0 || rows > std::numeric_limits<int>::max() ||
      cols > std::numeric_limits<int>::max())
    throw_invalid_argument(fn, "A",
                           concat("is ", rows, " x ", cols, "; extents must be in 0..2^31-1"));
  if (std::int64_t(m.row_offsets.size()) != rows + 1 || m.row_offsets.front() != 0 ||
      m.row_offsets.back() != nnz || std::int64_t(m.columns.size()) != nnz)
    throw_invalid_argument(fn, "A",
                           concat("(", rows, " x ", cols, ") has ", m.row_offsets.size(),
                                  " row offsets, ", m.columns.size(), " columns and ", nnz,
                                  " values; the offsets must run from 0 to the entry count"));
  for (std::int64_t i = 0; i < rows; ++i) {
    if (m.row_offsets[std::size_t(i)] > m.row_offsets[std::size_t(i) + 1])
      throw_invalid_argument(fn, "A", concat("has row offsets that decrease at row ", i));
    for (std::int64_t k = m.row_offsets[std::size_t(i)]; k < m.row_offsets[std::size_t(i) + 1];
         ++k) {
      const std::int64_t j = m.columns[std::size_t(k)];
      if (j < 0 || j >= cols)
        throw_invalid_argument(fn, "A",
                               concat("has column ", j, " in row ", i, ", outside 0..", cols - 1));
      check_value(fn, m.values[std::size_t(k)], f, i, j);
    }
  }
  const host_crs<Scalar>* src = &m;
  host_crs<Scalar> sorted;
  if (s != symmetry::general) {
    if (rows != cols)
      throw_invalid_argument(fn, "A",
                             concat("is ", rows, " x ", cols, ", but a ", to_string(s),
                                    " file needs a square matrix"));
    // Sorted rows with duplicates summed, then every element checked against its mirror.
    sorted.rows = rows;
    sorted.cols = cols;
    sorted.row_offsets.assign(std::size_t(rows) + 1, 0);
    std::vector<std::pair<std::int32_t, Scalar>> row;
    for (std::int64_t i = 0; i < rows; ++i) {
      row.clear();
      for (std::int64_t k = m.row_offsets[std::size_t(i)]; k < m.row_offsets[std::size_t(i) + 1];
           ++k)
        row.emplace_back(m.columns[std::size_t(k)], m.values[std::size_t(k)]);
      std::stable_sort(row.begin(), row.end(),
                       [](const auto& x, const auto& y) { return x.first < y.first; });
      for (std::size_t k = 0; k < row.size(); ++k) {
        if (k > 0 && row[k].first == row[k - 1].first) {
          sorted.values.back() += row[k].second;
        } else {
          sorted.columns.push_back(row[k].first);
          sorted.values.push_back(row[k].second);
        }
      }
      sorted.row_offsets[std::size_t(i) + 1] = std::int64_t(sorted.values.size());
    }
    const auto find = [&](std::int64_t r, std::int32_t c) -> Scalar {
      const auto b = sorted.columns.begin() + sorted.row_offsets[std::size_t(r)];
      const auto e = sorted.columns.begin() + sorted.row_offsets[std::size_t(r) + 1];
      const auto it = std::lower_bound(b, e, c);
      return it == e || *it != c ? Scalar(0)
                                 : sorted.values[std::size_t(it - sorted.columns.begin())];
    };
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t k = sorted.row_offsets[std::size_t(i)];
           k < sorted.row_offsets[std::size_t(i) + 1]; ++k) {
        const std::int32_t j = sorted.columns[std::size_t(k)];
        if (!(find(j, std::int32_t(i)) == mirrored(sorted.values[std::size_t(k)], s)))
          throw_invalid_argument(fn, "A",
                                 concat("is not ", to_string(s), ": elements (", i, ", ", j,
                                        ") and (", j, ", ", i, ") (0-based) do not match"));
      }
    src = &sorted;
  }
  const host_crs<Scalar>& a = *src;
  const auto kept = [&](std::int64_t i, std::int64_t j) {
    return s == symmetry::general || j < i || (j == i && s != symmetry::skew_symmetric);
  };
  std::int64_t entries = 0;
  if (s == symmetry::general) {
    entries = std::int64_t(a.values.size());
  } else {
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t k = a.row_offsets[std::size_t(i)]; k < a.row_offsets[std::size_t(i) + 1];
           ++k)
        entries += kept(i, a.columns[std::size_t(k)]);
  }
  auto out = output_stream::open(path, o.gzip_level, fn);
  write_header(*out, format::coordinate, f, s, o.comment, rows, cols, entries);
  // Tasks: runs of rows of about task_size entries.
  std::vector<std::int64_t> starts{0}, task_entries;
  for (std::int64_t i = 0; i < rows; ++i) {
    if (a.row_offsets[std::size_t(i) + 1] - a.row_offsets[std::size_t(starts.back())] >=
            task_size ||
        i + 1 == rows) {
      task_entries.push_back(a.row_offsets[std::size_t(i) + 1] -
                             a.row_offsets[std::size_t(starts.back())]);
      starts.push_back(i + 1);
    }
  }
  const auto count = std::int64_t(task_entries.size());
  write_tasks(*out, o, count, entries, task_entries, [&](std::int64_t task, text_buffer& b) {
    const std::int64_t r0 = starts[std::size_t(task)], r1 = starts[std::size_t(task) + 1];
    char* p = b.room(std::size_t(task_entries[std::size_t(task)]) * max_line);
    for (std::int64_t i = r0; i < r1; ++i)
      for (std::int64_t k = a.row_offsets[std::size_t(i)]; k < a.row_offsets[std::size_t(i) + 1];
           ++k) {
        const std::int64_t j = a.columns[std::size_t(k)];
        if (kept(i, j)) p = put_entry(p, i, j, true, a.values[std::size_t(k)], f);
      }
    b.finish(p);
  });
  out->close();
}

#define NEARSPARSE_IO_WRITE(S)                                                                \
  template void write_host_dense<S>(const std::string&, std::int64_t, std::int64_t, const S*, \
                                    const write_options&);                                    \
  template void write_host_crs<S>(const std::string&, const host_crs<S>&, const write_options&);
NEARSPARSE_IO_WRITE(double)
NEARSPARSE_IO_WRITE(float)
NEARSPARSE_IO_WRITE(Kokkos::complex<double>)
NEARSPARSE_IO_WRITE(Kokkos::complex<float>)
#undef NEARSPARSE_IO_WRITE

}  // namespace nearsparse::io::detail
