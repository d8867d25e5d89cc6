#pragma once
// Test cases instantiated once per execution space, each instance named and tagged by its space,
// so a filter selects the instances of one backend:
//   nearsparse_test_spamm '[Cuda]'        the CUDA instances only
//   nearsparse_test_spamm '~[Serial]'     all but the Serial ones
// (Catch2 2.13's TEMPLATE_LIST_TEST_CASE names its instances "- 0", "- 1" and gives all of them
// the same tags.)
//
//   NEARSPARSE_SPACE_TEST_CASE("name", "[tags]") { ... TestType ... }
//       one instance per space of nearsparse::enabled_execution_spaces, named "name - <Space>"
//       and tagged [<Space>] (Space::name(): Cuda, OpenMP, Serial)
//   NEARSPARSE_SPACE_LIST_TEST_CASE("name", "[tags]", list) { ... TestType ... }
//       the same over the types of a std::tuple: execution spaces, or std::pair<Space1, Space2>
//       (named "name - Space1+Space2", tagged with both spaces)

#include <nearsparse/core/execution_spaces.hpp>

#include <catch2/catch.hpp>

#include <string>
#include <tuple>
#include <utility>

namespace nearsparse::test {

/// The spaces a test type runs on: "Cuda", or "Cuda+OpenMP" for a pair; and their tags.
template <class T>
struct space_label {
  static std::string name() { return T::name(); }
  static std::string tags() { return "[" + name() + "]"; }
};
template <class First, class Second>
struct space_label<std::pair<First, Second>> {
  static std::string name() {
    return space_label<First>::name() + "+" + space_label<Second>::name();
  }
  static std::string tags() { return space_label<First>::tags() + space_label<Second>::tags(); }
};

/// Registers Test::template run<T> for every T of the tuple List as "name - <space>" with the
/// space's tags added.
template <class Test, class List>
struct space_test_registrar;
template <class Test, class... Types>
struct space_test_registrar<Test, std::tuple<Types...>> {
  space_test_registrar(const char* name, const char* tags, const Catch::SourceLineInfo& line) {
    (add<Types>(name, tags, line), ...);
  }

 private:
  template <class T>
  static void add(const char* name, const char* tags, const Catch::SourceLineInfo& line) {
    const std::string full_name = std::string(name) + " - " + space_label<T>::name();
    const std::string full_tags = std::string(tags) + space_label<T>::tags();
    Catch::AutoReg(Catch::makeTestInvoker(&Test::template run<T>), line, Catch::StringRef(),
                   Catch::NameAndTags{full_name, full_tags});
  }
};

}  // namespace nearsparse::test

#define NEARSPARSE_SPACE_TEST_CASE_IMPL(function, registrar, variable, name, tags, list) \
  template <class TestType>                                                              \
  static void function();                                                                \
  namespace {                                                                            \
  struct registrar {                                                                     \
    template <class T>                                                                   \
    static void run() {                                                                  \
      function<T>();                                                                     \
    }                                                                                    \
  };                                                                                     \
  const ::nearsparse::test::space_test_registrar<registrar, list> variable(              \
      name, tags, CATCH_INTERNAL_LINEINFO);                                              \
  }                                                                                      \
  template <class TestType>                                                              \
  static void function()

#define NEARSPARSE_SPACE_LIST_TEST_CASE(name, tags, list)                                         \
  NEARSPARSE_SPACE_TEST_CASE_IMPL(INTERNAL_CATCH_UNIQUE_NAME(nearsparse_space_test_),             \
                                  INTERNAL_CATCH_UNIQUE_NAME(nearsparse_space_registrar_),        \
                                  INTERNAL_CATCH_UNIQUE_NAME(nearsparse_space_registered_), name, \
                                  tags, list)

#define NEARSPARSE_SPACE_TEST_CASE(name, tags) \
  NEARSPARSE_SPACE_LIST_TEST_CASE(name, tags, ::nearsparse::enabled_execution_spaces)
