// Fuzzing the reader: valid files corrupted at random (bytes changed, the text cut, lines deleted
// or repeated, counts changed, tokens inserted) must give nearsparse::invalid_argument naming the
// file and a line, or the matrix the independent reference parser (io_support.hpp) reads from the
// same text. Seeded (NEARSPARSE_TEST_SEED replays a run), bounded in count and time.

#include "io/io_support.hpp"
#include "support/seeds.hpp"

#include <nearsparse/core/errors.hpp>
#include <nearsparse/io.hpp>

#include <catch2/catch.hpp>

#include <Kokkos_Core.hpp>

#include <chrono>
#include <random>
#include <string>
#include <vector>

namespace nio = nearsparse::io;
using nearsparse::test::io::reference_parse;
using nearsparse::test::io::temp_dir;
using nearsparse::test::io::write_text;
using cplx = Kokkos::complex<double>;

namespace {

/// Valid files to start from: each format, field and symmetry.
std::vector<std::string> seed_files(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> idx(1, 6), small(-20, 20);
  std::uniform_real_distribution<double> u(-10, 10);
  std::vector<std::string> out;
  const char* kinds[][3] = {{"coordinate", "real", "general"},
                            {"coordinate", "integer", "symmetric"},
                            {"coordinate", "complex", "hermitian"},
                            {"coordinate", "pattern", "general"},
                            {"coordinate", "real", "skew-symmetric"},
                            {"coordinate", "complex", "general"},
                            {"array", "real", "general"},
                            {"array", "real", "symmetric"},
                            {"array", "complex", "hermitian"}};
  for (const auto& k : kinds) {
    const std::string format = k[0], field = k[1], sym = k[2];
    const bool square = sym != "general";
    const int rows = 6, cols = square ? 6 : 5;
    std::string body;
    int count = 0;
    auto value = [&](bool diagonal) {
      if (field == "pattern") return std::string();
      if (field == "integer") return " " + std::to_string(small(rng));
      char text[96];
      if (field == "complex")
        std::snprintf(text, sizeof text, " %.6g %.6g", u(rng),
                      diagonal && sym == "hermitian" ? 0.0 : u(rng));
      else
        std::snprintf(text, sizeof text, " %.17g", u(rng));
      return std::string(text);
    };
    if (format == "coordinate") {
      for (int e = 0; e < 12; ++e) {
        int i = idx(rng), j = std::min(idx(rng), cols);
        if (square && j > i) std::swap(i, j);
        if (sym == "skew-symmetric" && i == j) continue;
        body += std::to_string(i) + " " + std::to_string(j) + value(i == j) + "\n";
        ++count;
      }
    } else {
      for (int j = 0; j < cols; ++j)
        for (int i = square ? j : 0; i < rows; ++i) {
          const std::string v = value(i == j);
          body += v.substr(1) + "\n";
        }
    }
    std::string text = "%%MatrixMarket matrix " + format + " " + field + " " + sym +
                       "\n% seed file\n" + std::to_string(rows) + " " + std::to_string(cols);
    if (format == "coordinate") text += " " + std::to_string(count);
    out.push_back(text + "\n" + body);
  }
  return out;
}

std::string mutate(std::string text, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> kind(0, 6);
  auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n)(rng); };
  auto lines = [&] {
    std::vector<std::size_t> starts{0};
    for (std::size_t k = 0; k < text.size(); ++k)
      if (text[k] == '\n') starts.push_back(k + 1);
    return starts;
  };
  const char interesting[] = "0123456789 \n\t\r-+.eE%xNnIi\0";
  switch (kind(rng)) {
    case 0:  // change a byte
      if (!text.empty()) {
        const std::size_t at = pick(text.size() - 1);
        text[at] = pick(3) == 0 ? char(pick(255)) : interesting[pick(sizeof interesting - 2)];
      }
      break;
    case 1:  // cut the text
      text.resize(pick(text.size()));
      break;
    case 2: {  // delete a line
      const auto s = lines();
      const std::size_t l = pick(s.size() - 1);
      const std::size_t b = s[l], e = l + 1 < s.size() ? s[l + 1] : text.size();
      text.erase(b, e - b);
      break;
    }
    case 3: {  // repeat a line
      const auto s = lines();
      const std::size_t l = pick(s.size() - 1);
      const std::size_t b = s[l], e = l + 1 < s.size() ? s[l + 1] : text.size();
      text.insert(e, text.substr(b, e - b));
      break;
    }
    case 4: {  // change a count on the size line (the first line after the comments)
      const auto s = lines();
      if (s.size() < 3) break;
      const std::size_t b = s[2], e = s.size() > 3 ? s[3] : text.size();
      std::string line = text.substr(b, e - b);
      const std::size_t last = line.find_last_of("0123456789");
      if (last == std::string::npos) break;
      const char* replacements[] = {"0", "1", "7", "12", "13", "99999999999", "-1", "2147483648"};
      line.replace(last, 1, replacements[pick(7)]);
      text.replace(b, e - b, line);
      break;
    }
    case 5: {  // insert a token
      const char* tokens[] = {" 1", " nan", " inf", " 1e999", " x", " 0", "\n", "\n%c\n", " 3 3"};
      text.insert(pick(text.size()), tokens[pick(8)]);
      break;
    }
    default:  // swap two bytes
      if (text.size() > 1) std::swap(text[pick(text.size() - 1)], text[pick(text.size() - 1)]);
      break;
  }
  return text;
}

template <class Scalar>
bool equal_to_reference(const nio::host_crs<Scalar>& m,
                        const nearsparse::test::io::reference_matrix& ref) {
  if (m.rows != ref.file.rows || m.cols != ref.file.cols) return false;
  if (std::size_t(m.values.size()) != ref.entries.size()) return false;
  for (std::int64_t i = 0; i < m.rows; ++i)
    for (auto k = m.row_offsets[std::size_t(i)]; k < m.row_offsets[std::size_t(i) + 1]; ++k) {
      const auto it = ref.entries.find({i, m.columns[std::size_t(k)]});
      if (it == ref.entries.end()) return false;
      cplx v;
      if constexpr (std::is_same_v<Scalar, double>)
        v = cplx(m.values[std::size_t(k)], 0);
      else
        v = m.values[std::size_t(k)];
      if (!(v == cplx(it->second.real(), it->second.imag()))) return false;
    }
  return true;
}

}  // namespace

TEST_CASE("randomly corrupted files: the exception or the reference parser's matrix", "[io]") {
  temp_dir dir;
  const auto seed = nearsparse::test::fresh_seed();
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  const auto seeds = seed_files(rng);
  for (const auto& s : seeds) REQUIRE(reference_parse(s));
  const std::string path = dir.file("fuzz.mtx");
  const auto start = std::chrono::steady_clock::now();
  int runs = 0, refused = 0, disagreements = 0;
  for (; runs < 2000; ++runs) {
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(20)) break;
    std::string text = seeds[std::size_t(runs) % seeds.size()];
    const int rounds = 1 + int(rng() % 3);
    for (int r = 0; r < rounds; ++r) text = mutate(text, rng);
    write_text(path, text);
    const auto ref = reference_parse(text);
    nio::read_options o;
    const std::size_t blocks[] = {64, 100, 4096, std::size_t(1) << 20};
    o.block_bytes = blocks[rng() % 4];
    o.threads = 1 + int(rng() % 3);
    const bool as_real = runs % 2 == 0;
    INFO("run " << runs << ", threads " << o.threads << ", block " << o.block_bytes
                << (as_real ? ", double" : ", complex") << ", text:\n"
                << text);
    try {
      if (as_real) {
        const auto m = nio::read_host_crs<double>(path, o);
        REQUIRE(ref);
        REQUIRE(ref->file.field != nio::field::complex);
        REQUIRE(equal_to_reference(m, *ref));
      } else {
        const auto m = nio::read_host_crs<cplx>(path, o);
        REQUIRE(ref);
        REQUIRE(equal_to_reference(m, *ref));
      }
    } catch (const nearsparse::invalid_argument& e) {
      ++refused;
      const std::string what = e.what();
      REQUIRE(what.find("'" + path + "' line ") != std::string::npos);
      // The reference takes what the library refuses only for a complex file read as real.
      if (ref && !(as_real && ref->file.field == nio::field::complex)) {
        ++disagreements;
        FAIL_CHECK("the reference parser accepts what the library refuses: " << what);
      }
    }
  }
  INFO(runs << " runs, " << refused << " refused");
  CHECK(runs >= 200);
  CHECK(disagreements == 0);
}
