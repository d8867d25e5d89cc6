// The implementation choice: its names, and the one rule every family's dispatch applies.
#include <nearsparse/core/detail/dispatch.hpp>
#include <nearsparse/core/detail/enum_names.hpp>
#include <nearsparse/core/implementation.hpp>

#include <catch2/catch.hpp>

using Catch::Matchers::Contains;
using nearsparse::implementation;

TEST_CASE("implementation names round-trip and parse case-insensitively", "[core][dispatch]") {
  for (auto choice :
       {implementation::automatic, implementation::portable, implementation::specialized})
    CHECK(nearsparse::parse_implementation(nearsparse::to_string(choice)) == choice);
  CHECK(nearsparse::parse_implementation("Portable") == implementation::portable);
  CHECK_THROWS_AS(nearsparse::parse_implementation("fastest", "nearsparse::x", "--kernel"),
                  nearsparse::invalid_argument);
  CHECK_THROWS_WITH(nearsparse::parse_implementation("fastest", "nearsparse::x", "--kernel"),
                    "nearsparse::x: argument '--kernel' is 'fastest'; expected automatic, "
                    "portable or specialized");
  CHECK(std::string(nearsparse::to_string(static_cast<implementation>(42))) == "unknown");
}

TEST_CASE("take_specialized: automatic follows availability, portable never, specialized or throw",
          "[core][dispatch]") {
  using nearsparse::detail::take_specialized;
  CHECK(take_specialized("f", implementation::automatic, true, "Cuda"));
  CHECK_FALSE(take_specialized("f", implementation::automatic, false, "OpenMP"));
  CHECK_FALSE(take_specialized("f", implementation::portable, true, "Cuda"));
  CHECK_FALSE(take_specialized("f", implementation::portable, false, "OpenMP"));
  CHECK(take_specialized("f", implementation::specialized, true, "Cuda"));
  CHECK_THROWS_AS(
      take_specialized("nearsparse::fam::op", implementation::specialized, false, "OpenMP"),
      nearsparse::unsupported);
  CHECK_THROWS_WITH(
      take_specialized("nearsparse::fam::op", implementation::specialized, false, "OpenMP",
                       "tiles of 48"),
      Contains("nearsparse::fam::op") && Contains("OpenMP") && Contains("tiles of 48"));
  CHECK_THROWS_AS(
      take_specialized("nearsparse::fam::op", static_cast<implementation>(7), true, "Cuda"),
      nearsparse::invalid_argument);
}

namespace {
enum class colour { red, green, blue };
constexpr nearsparse::detail::enum_name<colour> colour_names[] = {
    {colour::red, "red"}, {colour::green, "green"}, {colour::blue, "blue"}};
}  // namespace

TEST_CASE("enum name tables convert both ways and list the accepted names", "[core][dispatch]") {
  using namespace nearsparse::detail;
  CHECK(std::string(enum_to_string(colour_names, colour::green)) == "green");
  CHECK(enum_from_string(colour_names, "BLUE", "f", "c") == colour::blue);
  CHECK(enum_is_valid(colour_names, colour::red));
  CHECK_FALSE(enum_is_valid(colour_names, static_cast<colour>(9)));
  CHECK_THROWS_WITH(enum_from_string(colour_names, "mauve", "nearsparse::paint", "colour"),
                    "nearsparse::paint: argument 'colour' is 'mauve'; expected red, green or blue");
}

TEST_CASE("require_valid refuses a value outside the enumeration", "[core][dispatch]") {
  using nearsparse::detail::require_valid;
  CHECK_NOTHROW(require_valid("f", "options.implementation", implementation::specialized));
  CHECK_THROWS_WITH(
      require_valid("nearsparse::fam::op", "options.implementation",
                    static_cast<implementation>(5)),
      "nearsparse::fam::op: argument 'options.implementation' is 5; it must be automatic, portable "
      "or specialized");
}
