#pragma once
// Matrix Market files in the nearsparse program: reads and writes that print their progress
// when the file is large, and the extent checks of two operands read from files.

#include <nearsparse/core/errors.hpp>
#include <nearsparse/io.hpp>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

namespace nearsparse::app {

/// Files from this size on print their progress at every tenth.
constexpr std::uint64_t progress_bytes = std::uint64_t(32) << 20;

/// Read options whose progress callback prints "  reading FILE: 40 % (56 of 141 MB)" at every
/// tenth of a large file.
inline nearsparse::io::read_options read_options_for(const std::string& path) {
  nearsparse::io::read_options o;
  auto last = std::make_shared<int>(-1);
  o.progress = [path, last](const nearsparse::io::progress& p) {
    if (p.bytes_total < progress_bytes) return;
    const int tenth = int(10 * p.bytes_done / p.bytes_total);
    if (tenth == *last) return;
    *last = tenth;
    std::printf("  reading %s: %3d %% (%.0f of %.0f MB)\n", path.c_str(), 10 * tenth,
                double(p.bytes_done) * 1e-6, double(p.bytes_total) * 1e-6);
    std::fflush(stdout);
  };
  return o;
}

/// Write options whose progress callback prints at every tenth of a large matrix.
inline nearsparse::io::write_options write_options_for(const std::string& path) {
  nearsparse::io::write_options o;
  auto last = std::make_shared<int>(-1);
  o.progress = [path, last](const nearsparse::io::progress& p) {
    if (p.entries_total < (std::int64_t(1) << 22) || p.entries_total == 0) return;
    const int tenth = int(10 * p.entries_done / p.entries_total);
    if (tenth == *last) return;
    *last = tenth;
    std::printf("  writing %s: %3d %%\n", path.c_str(), 10 * tenth);
    std::fflush(stdout);
  };
  return o;
}

/// Throws nearsparse::invalid_argument naming both files and their extents unless A (a_rows x
/// a_cols, from a_file) times B can be formed: A's columns must equal B's rows.
inline void require_product_extents(const char* command, const std::string& a_file,
                                    std::int64_t a_rows, std::int64_t a_cols,
                                    const std::string& b_file, std::int64_t b_rows,
                                    std::int64_t b_cols) {
  if (a_cols == b_rows) return;
  throw nearsparse::invalid_argument(nearsparse::detail::concat(
      command, ": A ('", a_file, "', ", a_rows, " x ", a_cols, ") and B ('", b_file, "', ", b_rows,
      " x ", b_cols, ") cannot be multiplied: A has ", a_cols, " columns but B has ", b_rows,
      " rows"));
}

}  // namespace nearsparse::app
