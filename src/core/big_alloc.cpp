// Large buffers: a per-thread cache of blocks in power-of-two size classes, mapped with
// transparent huge pages (see detail::big_allocate in ndarray.hpp).
#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "zarrpp/core/ndarray.hpp"
#include "zarrpp/core/thread_pool.hpp"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14
#endif

#if defined(__SANITIZE_ADDRESS__)
#define ZARRPP_PLAIN_ALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define ZARRPP_PLAIN_ALLOC 1
#endif
#endif

namespace zarrpp::detail {

namespace {

// Under a sanitizer every block comes from operator new (so the sanitizer sees it), and none of
// the cache below exists: clang warns about unused constants, and the fuzz build treats that as
// an error, so they live inside the same #ifndef as their users.
#ifndef ZARRPP_PLAIN_ALLOC
constexpr std::size_t kHuge = std::size_t{2} << 20;           // a transparent huge page
constexpr std::size_t kBigCacheMax = std::size_t{256} << 20;  // larger blocks are not cached
constexpr std::size_t kCachePerThread = std::size_t{256} << 20;
constexpr int kClasses = 64;

std::size_t class_size(std::size_t bytes) { return std::bit_ceil(bytes); }

// Whether this machine is a virtual machine whose balloon device takes back freed memory (virtio
// free page reporting, VIRTIO_BALLOON_F_REPORTING = feature bit 5): the guest hands every free
// block of 2 MiB or more to the host, which discards it, so a huge page asked for later is one
// the host must back again — 5-20x the cost of faulting in small pages, which come from the
// guest's fragments the host still backs (docs/benchmarks.md, "Fresh memory"). Read once.
bool freed_memory_reported() noexcept {
  try {  // (an allocation must not fail because sysfs could not be listed)
    std::error_code ec;
    for (const auto& d : std::filesystem::directory_iterator("/sys/bus/virtio/drivers/virtio_balloon", ec)) {
      std::ifstream f(d.path() / "features");
      std::string bits;
      if (f >> bits && bits.size() > 5 && bits[5] == '1') return true;
    }
  } catch (...) {
  }
  return false;
}

// Blocks get huge pages unless freed memory is reported to a host: there every new block's first
// use would cost more than huge pages save, and that is every block of a short process (the CLI's
// slab buffers) and every block above the cache's limit. ZARRPP_HUGE_PAGES=0 or 1 overrides that
// (benchmarks compare both).
bool huge_pages() {
  static const bool yes = [] {
    const char* v = std::getenv("ZARRPP_HUGE_PAGES");
    if (v && std::strcmp(v, "0") == 0) return false;
    if (v && std::strcmp(v, "1") == 0) return true;
    return !freed_memory_reported();
  }();
  return yes;
}

void* map_block(std::size_t size) {
  // Huge-page aligned, so the kernel can back the block with 2 MiB pages.
  const std::size_t align = size >= kHuge ? kHuge : 4096;
  const std::size_t len = size + align;
  void* raw = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto base = reinterpret_cast<std::uintptr_t>(raw);
  const auto start = (base + align - 1) & ~(std::uintptr_t{align} - 1);
  if (start > base) ::munmap(raw, start - base);
  const auto end = start + size, raw_end = base + len;
  if (raw_end > end) ::munmap(reinterpret_cast<void*>(end), raw_end - end);
  if (size >= kHuge) ::madvise(reinterpret_cast<void*>(start), size, huge_pages() ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  return reinterpret_cast<void*>(start);
}

struct ThreadCache {
  std::array<std::vector<void*>, kClasses> free;
  std::size_t cached = 0;
  ~ThreadCache() {
    for (int c = 0; c < kClasses; ++c)
      for (void* p : free[c]) ::munmap(p, std::size_t{1} << c);
  }
};
// Thread-local buffers elsewhere may be destroyed after this thread's cache: the cache lives on
// the heap, and once its owner is gone, blocks go straight back to the kernel.
thread_local ThreadCache* t_cache = nullptr;
thread_local bool t_dead = false;
struct CacheOwner {
  ~CacheOwner() {
    delete t_cache;
    t_cache = nullptr;
    t_dead = true;
  }
};
thread_local CacheOwner t_owner;

ThreadCache* cache() {
  if (t_dead) return nullptr;
  if (!t_cache) {
    t_cache = new (std::nothrow) ThreadCache;
    [[maybe_unused]] volatile auto* owner = &t_owner;  // constructs the owner, which frees the cache at thread exit
  }
  return t_cache;
}
#endif

}  // namespace

void* big_allocate(std::size_t bytes) {
#ifdef ZARRPP_PLAIN_ALLOC
  return ::operator new(bytes);
#else
  const std::size_t size = class_size(bytes);
  if (size <= kBigCacheMax) {
    if (ThreadCache* c = cache()) {
      auto& list = c->free[std::countr_zero(size)];
      if (!list.empty()) {
        void* p = list.back();
        list.pop_back();
        c->cached -= size;
        return p;
      }
    }
  }
  return map_block(size);
#endif
}

void big_deallocate(void* p, std::size_t bytes) noexcept {
#ifdef ZARRPP_PLAIN_ALLOC
  ::operator delete(p, bytes);
#else
  const std::size_t size = class_size(bytes);
  ThreadCache* c = size <= kBigCacheMax ? cache() : nullptr;
  if (c && c->cached + size <= kCachePerThread) {
    try {
      c->free[std::countr_zero(size)].push_back(p);
      c->cached += size;
      return;
    } catch (...) {
      // no room to remember it: give it back
    }
  }
  ::munmap(p, size);
#endif
}

void prefault(void* p, std::size_t bytes, std::size_t concurrency) noexcept {
  constexpr std::size_t kMin = std::size_t{4} << 20;    // below this, faulting during the fill is as cheap
  constexpr std::size_t kGrain = std::size_t{2} << 20;  // parts end on huge-page boundaries
  if (!p || bytes < kMin) return;
  // Whole pages inside the buffer: a page it shares with a neighbour is faulted by the fill.
  const auto begin = (reinterpret_cast<std::uintptr_t>(p) + 4095) & ~std::uintptr_t{4095};
  const auto end = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~std::uintptr_t{4095};
  const std::size_t parts = std::max<std::size_t>(1, std::min(concurrency, (end - begin) / kGrain));
  try {
    std::vector<std::uintptr_t> cut(parts + 1);
    cut[0] = begin;
    cut[parts] = end;
    for (std::size_t i = 1; i < parts; ++i) {
      const auto c = (begin + (end - begin) / parts * i) & ~std::uintptr_t{kGrain - 1};
      cut[i] = std::max(c, cut[i - 1]);
    }
    auto populate = [&](std::size_t i) {
      const auto a = cut[i], b = cut[i + 1];
      if (b > a)
        ::madvise(reinterpret_cast<void*>(a), b - a,
                  MADV_POPULATE_WRITE);  // an old kernel says EINVAL: the fill faults instead
    };
    ThreadPool::global().parallel_for(parts, parts, populate);
  } catch (...) {
    // No memory for the cuts or a thread failing to start: the fill will fault the pages in.
  }
}

namespace {
// Whether p lies in private anonymous memory (new[], malloc, NumPy's arrays): not a file mapping,
// whose pages a prefault would read in and dirty ahead of the fill.
bool private_anonymous(std::uintptr_t at) {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::string perms, offset, dev;
    unsigned long long inode = 1;
    std::istringstream in(line);
    if (!(in >> std::hex >> lo >> dash >> hi >> perms >> offset >> dev >> std::dec >> inode)) return false;
    if (lo <= at && at < hi) return perms.size() == 4 && perms[1] == 'w' && perms[3] == 'p' && inode == 0;
  }
  return false;
}
}  // namespace

void prefault_if_fresh(void* p, std::size_t bytes, std::size_t concurrency) noexcept {
  constexpr std::size_t kMin = std::size_t{4} << 20;
  if (!p || bytes < kMin) return;
  const auto first = (reinterpret_cast<std::uintptr_t>(p) + 4095) & ~std::uintptr_t{4095};
  unsigned char resident = 1;
  // A buffer whose first whole page is mapped in was used before: nothing to gain.
  if (::mincore(reinterpret_cast<void*>(first), 4096, &resident) != 0 || (resident & 1)) return;
  try {
    if (!private_anonymous(first)) return;
  } catch (...) {
    return;
  }
  prefault(p, bytes, concurrency);
}

}  // namespace zarrpp::detail
