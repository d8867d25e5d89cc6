#include "text_stream.hpp"

#include <nearsparse/core/errors.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

#if NEARSPARSE_HAVE_ZLIB
#include <zlib.h>
#endif

namespace nearsparse::io::detail {

namespace {

using nearsparse::detail::concat;

bool ends_with_gz(const std::string& path) {
  return path.size() >= 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
}

#if !NEARSPARSE_HAVE_ZLIB
[[noreturn]] void no_zlib(const char* function, const std::string& path) {
  throw nearsparse::unsupported(concat(function, ": '", path,
                                       "' is gzip-compressed, but this build has no zlib "
                                       "(configure with NEARSPARSE_ENABLE_ZLIB=ON and zlib "
                                       "installed, or decompress the file first)"));
}
#endif

class plain_input final : public input_stream {
 public:
  plain_input(std::FILE* file, std::uint64_t size) : file_(file) { size_ = size; }
  ~plain_input() override { std::fclose(file_); }
  std::size_t read(char* buffer, std::size_t size) override {
    const std::size_t got = std::fread(buffer, 1, size, file_);
    if (got < size && std::ferror(file_))
      throw nearsparse::runtime_error(
          concat("nearsparse::io: reading failed: ", std::strerror(errno)));
    position_ += got;
    return got;
  }
  std::uint64_t position() const override { return position_; }

 private:
  std::FILE* file_;
  std::uint64_t position_ = 0;
};

class plain_output final : public output_stream {
 public:
  plain_output(std::FILE* file, std::string path, const char* function)
      : file_(file), path_(std::move(path)), function_(function) {}
  ~plain_output() override {
    if (file_) std::fclose(file_);
  }
  void write(const char* data, std::size_t size) override {
    if (size > 0 && std::fwrite(data, 1, size, file_) != size)
      throw nearsparse::runtime_error(
          concat(function_, ": writing '", path_, "' failed: ", std::strerror(errno)));
  }
  void close() override {
    std::FILE* f = file_;
    file_ = nullptr;
    if (std::fclose(f) != 0)
      throw nearsparse::runtime_error(
          concat(function_, ": writing '", path_, "' failed: ", std::strerror(errno)));
  }

 private:
  std::FILE* file_;
  std::string path_;
  const char* function_;
};

#if NEARSPARSE_HAVE_ZLIB
class gzip_input final : public input_stream {
 public:
  gzip_input(gzFile file, std::uint64_t size, std::string path)
      : file_(file), path_(std::move(path)) {
    size_ = size;
    gzbuffer(file_, 1u << 20);
  }
  ~gzip_input() override { gzclose(file_); }
  std::size_t read(char* buffer, std::size_t size) override {
    std::size_t total = 0;
    while (total < size) {
      const unsigned ask = unsigned(std::min<std::size_t>(size - total, 1u << 30));
      const int got = gzread(file_, buffer + total, ask);
      if (got < 0) {
        int code = 0;
        const char* message = gzerror(file_, &code);
        throw nearsparse::invalid_argument(
            concat("nearsparse::io: '", path_, "' is not a valid gzip file: ", message));
      }
      if (got == 0) break;
      total += std::size_t(got);
    }
    return total;
  }
  bool compressed() const override { return true; }
  std::uint64_t position() const override {
    const auto at = gzoffset(file_);
    return at < 0 ? 0 : std::uint64_t(at);
  }

 private:
  gzFile file_;
  std::string path_;
};

class gzip_output final : public output_stream {
 public:
  gzip_output(gzFile file, std::string path, const char* function)
      : file_(file), path_(std::move(path)), function_(function) {
    gzbuffer(file_, 1u << 20);
  }
  ~gzip_output() override {
    if (file_) gzclose(file_);
  }
  void write(const char* data, std::size_t size) override {
    while (size > 0) {
      const unsigned chunk = unsigned(std::min<std::size_t>(size, 1u << 30));
      if (gzwrite(file_, data, chunk) != int(chunk)) {
        int code = 0;
        throw nearsparse::runtime_error(
            concat(function_, ": writing '", path_, "' failed: ", gzerror(file_, &code)));
      }
      data += chunk;
      size -= chunk;
    }
  }
  void close() override {
    gzFile f = file_;
    file_ = nullptr;
    if (gzclose(f) != Z_OK)
      throw nearsparse::runtime_error(concat(function_, ": writing '", path_, "' failed"));
  }

 private:
  gzFile file_;
  std::string path_;
  const char* function_;
};
#endif

}  // namespace

bool have_zlib() {
#if NEARSPARSE_HAVE_ZLIB
  return true;
#else
  return false;
#endif
}

std::unique_ptr<input_stream> input_stream::open(const std::string& path, const char* function) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    throw nearsparse::invalid_argument(
        concat(function, ": cannot open '", path, "': ", std::strerror(errno)));
  if (S_ISDIR(info.st_mode))
    throw nearsparse::invalid_argument(
        concat(function, ": cannot read '", path, "': it is a directory"));
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (!file)
    throw nearsparse::invalid_argument(
        concat(function, ": cannot open '", path, "': ", std::strerror(errno)));
  unsigned char magic[2] = {0, 0};
  const std::size_t got = std::fread(magic, 1, 2, file);
  const bool gzip = got == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  const auto size = std::uint64_t(info.st_size);
  if (!gzip) {
    std::rewind(file);
    return std::make_unique<plain_input>(file, size);
  }
  std::fclose(file);
#if NEARSPARSE_HAVE_ZLIB
  gzFile gz = gzopen(path.c_str(), "rb");
  if (!gz)
    throw nearsparse::invalid_argument(
        concat(function, ": cannot open '", path, "': ", std::strerror(errno)));
  return std::make_unique<gzip_input>(gz, size, path);
#else
  no_zlib(function, path);
#endif
}

std::unique_ptr<output_stream> output_stream::open(const std::string& path, int gzip_level,
                                                   const char* function) {
  if (ends_with_gz(path)) {
#if NEARSPARSE_HAVE_ZLIB
    if (gzip_level < 1 || gzip_level > 9)
      nearsparse::detail::throw_invalid_argument(function, "options.gzip_level",
                                                 concat("must be in 1..9, got ", gzip_level));
    const std::string mode = "wb" + std::to_string(gzip_level);
    gzFile gz = gzopen(path.c_str(), mode.c_str());
    if (!gz)
      throw nearsparse::invalid_argument(
          concat(function, ": cannot create '", path, "': ", std::strerror(errno)));
    return std::make_unique<gzip_output>(gz, path, function);
#else
    no_zlib(function, path);
#endif
  }
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (!file)
    throw nearsparse::invalid_argument(
        concat(function, ": cannot create '", path, "': ", std::strerror(errno)));
  return std::make_unique<plain_output>(file, path, function);
}

}  // namespace nearsparse::io::detail

namespace nearsparse::io {
bool gzip_supported() {
  return detail::have_zlib();
}
}  // namespace nearsparse::io
