// Huge-page advice for the host memory of products' C values
// (include/nearsparse/diagonal/detail/plan_outputs.hpp).

#include <nearsparse/diagonal/detail/plan_outputs.hpp>

#include <cstddef>
#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace nearsparse::diagonal::detail {

void advise_huge_pages(void* data, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t huge = std::uintptr_t(2) << 20;
  const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t begin = (at + huge - 1) & ~(huge - 1);
  const std::uintptr_t end = (at + bytes) & ~(huge - 1);
  // Advice only: where it fails (transparent huge pages off) the memory keeps ordinary pages.
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

}  // namespace nearsparse::diagonal::detail
