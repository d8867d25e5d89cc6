// Matrix Market reading and writing speed, in MB of text per second, on a coordinate real file
// the benchmark writes itself (about 150 MB: a random sparse 2^20 x 2^20 matrix with ~4 million
// entries, values with 17 significant digits) in $TMPDIR (or /tmp), removed at exit. The read is
// the whole of read_host_crs (parse, checks, assembly of sorted compressed rows) from the page
// cache; the write formats and writes the same matrix. The argument is the thread count
// (read_options::threads, write_options::threads): 1 and 2, and 0 for the default, which
// follows OMP_NUM_THREADS.
//
//   io.read_coordinate   nearsparse::io::read_host_crs<double>
//   io.write_coordinate  nearsparse::io::write_host_crs<double>
#include "support/harness.hpp"

#include <nearsparse/io.hpp>

#include <benchmark/benchmark.h>

#include <Kokkos_Core.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

namespace nio = nearsparse::io;
using nearsparse::perf::pick;

/// The benchmark's matrix and its file, made on first use and removed at exit.
struct io_fixture {
  std::string dir, path;
  nio::host_crs<double> matrix;
  std::uint64_t bytes = 0;

  io_fixture() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/nearsparse_bench_XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    if (!mkdtemp(buffer.data())) return;
    dir = buffer.data();
    path = dir + "/bench.mtx";
    const std::int64_t n = pick<std::int64_t>(1 << 20, 1 << 12);
    const int per_row = 4;
    std::mt19937_64 rng(2024);
    std::uniform_int_distribution<std::int32_t> col(0, std::int32_t(n - 1));
    std::uniform_real_distribution<double> value(-1, 1);
    matrix.rows = matrix.cols = n;
    matrix.row_offsets.assign(std::size_t(n) + 1, 0);
    std::vector<std::int32_t> row;
    for (std::int64_t i = 0; i < n; ++i) {
      row.clear();
      for (int k = 0; k < per_row; ++k) row.push_back(col(rng));
      std::sort(row.begin(), row.end());
      row.erase(std::unique(row.begin(), row.end()), row.end());
      for (auto c : row) {
        matrix.columns.push_back(c);
        matrix.values.push_back(value(rng));
      }
      matrix.row_offsets[std::size_t(i) + 1] = std::int64_t(matrix.values.size());
    }
    nio::write_host_crs(path, matrix);
    if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
      std::fseek(f, 0, SEEK_END);
      bytes = std::uint64_t(std::ftell(f));
      std::fclose(f);
    }
  }
  ~io_fixture() {
    if (!path.empty()) std::remove(path.c_str());
    if (!path.empty()) std::remove((path + ".out").c_str());
    if (!dir.empty()) rmdir(dir.c_str());
  }
};

io_fixture& fixture() {
  static io_fixture f;
  return f;
}

/// The benchmark's thread count: its argument, or the default where that is 0.
int threads_of(const benchmark::State& state) {
  return int(state.range(0));
}

template <class F>
void timed(benchmark::State& state, F&& f, double bytes) {
  std::vector<double> seconds;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    f();
    const double t =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    state.SetIterationTime(t);
    seconds.push_back(t);
  }
  const double t = nearsparse::perf::median(seconds);
  state.counters["MB/s"] = bytes / t * 1e-6;
  state.counters["MB"] = bytes * 1e-6;
  state.counters["threads"] =
      threads_of(state) > 0 ? threads_of(state) : Kokkos::DefaultHostExecutionSpace().concurrency();
}

void bench_read(benchmark::State& state) {
  auto& f = fixture();
  if (f.bytes == 0) return state.SkipWithError("cannot write the benchmark's file");
  std::size_t entries = 0;
  nio::read_options o;
  o.threads = threads_of(state);
  timed(
      state, [&] { entries = nio::read_host_crs<double>(f.path, o).values.size(); },
      double(f.bytes));
  if (entries != f.matrix.values.size()) state.SkipWithError("wrong entry count");
}

void bench_write(benchmark::State& state) {
  auto& f = fixture();
  if (f.bytes == 0) return state.SkipWithError("cannot write the benchmark's file");
  nio::write_options o;
  o.threads = threads_of(state);
  timed(
      state, [&] { nio::write_host_crs(f.path + ".out", f.matrix, o); }, double(f.bytes));
}

const bool registered = [] {
  benchmark::RegisterBenchmark("io.read_coordinate", bench_read)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->Iterations(pick<long>(5, 1))
      ->ArgName("threads")
      ->Arg(1)
      ->Arg(2)
      ->Arg(0);
  benchmark::RegisterBenchmark("io.write_coordinate", bench_write)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->Iterations(pick<long>(5, 1))
      ->ArgName("threads")
      ->Arg(1)
      ->Arg(2)
      ->Arg(0);
  return true;
}();

}  // namespace
