#pragma once
// Byte streams under the Matrix Market reader and writer: plain files through stdio, .gz files
// through zlib where the build has it (NEARSPARSE_HAVE_ZLIB, set on text_stream.cpp only).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace nearsparse::io::detail {

/// A file being read. Throws nearsparse::invalid_argument (missing or unreadable file, a
/// directory) or nearsparse::unsupported (a gzip file in a build without zlib) naming the file.
class input_stream {
 public:
  static std::unique_ptr<input_stream> open(const std::string& path, const char* function);
  virtual ~input_stream() = default;
  /// Up to `size` bytes into `buffer`; 0 at the end. Throws on a read error (a corrupt .gz).
  virtual std::size_t read(char* buffer, std::size_t size) = 0;
  /// Bytes of the file consumed so far (compressed bytes for .gz files).
  virtual std::uint64_t position() const = 0;
  /// The file's size on disk.
  std::uint64_t size() const { return size_; }
  /// True for .gz files: size() is then not the size of the text.
  virtual bool compressed() const { return false; }

 protected:
  std::uint64_t size_ = 0;
};

/// A file being written; .gz names are compressed. Throws nearsparse::invalid_argument when the
/// file cannot be created and nearsparse::runtime_error when a write fails.
class output_stream {
 public:
  static std::unique_ptr<output_stream> open(const std::string& path, int gzip_level,
                                             const char* function);
  virtual ~output_stream() = default;
  virtual void write(const char* data, std::size_t size) = 0;
  /// Flushes and closes; throws when that fails. The destructor closes without throwing.
  virtual void close() = 0;
};

/// True when the build reads and writes .gz files.
bool have_zlib();

}  // namespace nearsparse::io::detail
