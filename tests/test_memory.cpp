// Memory for outputs: which pages big blocks ask for, and reads into fresh caller buffers.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "zarrpp/zarrpp.hpp"

using namespace zarrpp;

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kPlainAlloc = true;  // big blocks come from operator new under a sanitizer
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
constexpr bool kPlainAlloc = true;
#else
constexpr bool kPlainAlloc = false;
#endif
#else
constexpr bool kPlainAlloc = false;
#endif

// The VmFlags line of the mapping holding p (/proc/self/smaps).
std::string vm_flags(const void* p) {
  std::ifstream f("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(f, line);) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream s(line);
    if (line.find("VmFlags:") == 0) {
      if (inside) return line;
    } else if (s >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = lo <= at && at < hi;
    }
  }
  return "";
}

// Big blocks, cached (64 MiB) or not (300 MiB), map huge pages as ZARRPP_HUGE_PAGES says; in a
// fresh process each, since the choice is made once.
void exit_with_huge_page_flags(const char* setting) {
  ::setenv("ZARRPP_HUGE_PAGES", setting, 1);
  const bool want_huge = std::strcmp(setting, "1") == 0;
  for (const std::int64_t mib : {64, 300}) {
    const NDArray a = NDArray::uninitialized(DataType::uint8, {mib << 20});  // not touched
    const std::string flags = vm_flags(a.raw_data());
    const bool huge = flags.find(" hg") != std::string::npos, no_huge = flags.find(" nh") != std::string::npos;
    if (want_huge ? (!huge || no_huge) : (!no_huge || huge)) std::exit(1);
  }
  std::exit(0);
}

// Whether this kernel takes MADV_HUGEPAGE and shows it in smaps (not so without THP support, or
// in sandboxes whose /proc lacks VmFlags).
bool huge_page_flags_visible() {
  constexpr std::size_t n = std::size_t{4} << 20;
  void* p = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return false;
  const bool ok = ::madvise(p, n, MADV_HUGEPAGE) == 0 && vm_flags(p).find(" hg") != std::string::npos;
  ::munmap(p, n);
  return ok;
}

}  // namespace

TEST(Memory, BigBlocksAskForHugePagesAsConfigured) {
  if (kPlainAlloc) GTEST_SKIP() << "sanitizer build: blocks come from operator new";
  if (!huge_page_flags_visible()) GTEST_SKIP() << "no transparent huge pages, or smaps shows no VmFlags";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(exit_with_huge_page_flags("1"), ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(exit_with_huge_page_flags("0"), ::testing::ExitedWithCode(0), "");
}

// read_into maps in the pages of a fresh caller buffer before filling it (whole pages inside it):
// a buffer that starts and ends inside a page is filled exactly, its neighbours left as they were.
TEST(Memory, ReadIntoAnUnalignedFreshBufferKeepsItsNeighbours) {
  auto z = Array::create(MemoryStore::create(),
                         ArraySpec{.shape = {64, 256, 256}, .chunks = {16, 128, 128}, .dtype = DataType::uint16});
  std::vector<std::uint16_t> data(64 * 256 * 256);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint16_t>(i * 7 + 3);
  z.write({}, NDView::c_order(data.data(), DataType::uint16, z.shape()));
  const std::size_t n = data.size() * 2, pad = 4096 + 1234;
  std::unique_ptr<std::uint8_t[]> raw(new std::uint8_t[n + 2 * pad]);  // fresh: new[], as NumPy and C++ users do
  std::memset(raw.get(), 0xA5, pad);
  std::memset(raw.get() + pad + n, 0x5A, pad);
  for (const std::size_t threads : {std::size_t{1}, std::size_t{2}}) {
    z.set_concurrency(threads);
    z.read_into({}, NDView::c_order(raw.get() + pad, DataType::uint16, z.shape()));
    EXPECT_EQ(std::memcmp(raw.get() + pad, data.data(), n), 0);
    for (std::size_t i = 0; i < pad; ++i) {
      ASSERT_EQ(raw[i], 0xA5) << i;
      ASSERT_EQ(raw[pad + n + i], 0x5A) << i;
    }
  }
}
