// How much memory reading a JSON document and using it may take, and a check that it can be had
// before the document is built (metadata.hpp, check_memory_for_document).
//
// An ordered_json holds each value in a 16-byte slot; arrays and objects and strings also hold a
// heap block each (about 64 bytes with malloc's overhead, plus a string's characters). A command
// holds several copies of a document's attributes at once (the parsed document, the array's
// metadata, a proposal, what it prints) and nlohmann's teardown of an array or object allocates
// a stack of its size; so what one copy takes is counted kCopies times. Measured on documents of
// a million small values (docs/reliability.md, "Large metadata"): the worst command (append, four
// reads of zarr.json) took 6 to 9 such copies.
#include <sys/mman.h>

#include <cstdint>

#include "zarrpp/core/error.hpp"
#include "zarrpp/metadata/metadata.hpp"

namespace zarrpp {

namespace {

constexpr std::uint64_t kCopies = 12;
constexpr std::uint64_t kCheckedFrom = 64 << 10;  // smaller ones need at most about 8 MiB: not checked

}  // namespace

std::uint64_t document_memory_bound(std::string_view text) {
  std::uint64_t values = 1, blocks = 0, string_bytes = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      ++string_bytes;
      continue;
    }
    if (c == '"') {
      in_string = true;
      ++blocks;  // a string's own block (a key's too: an object's entry)
    } else if (c == ',') {
      ++values;
    } else if (c == '[' || c == '{') {
      ++values;
      ++blocks;
    }
  }
  const std::uint64_t one_copy = values * 16 + blocks * 64 + string_bytes;
  return kCopies * one_copy + 2 * text.size();
}

void check_memory_for_document(std::string_view text, const std::string& where) {
  if (text.size() < kCheckedFrom) return;
  const std::uint64_t need = document_memory_bound(text);
  // Address space asked of the kernel directly (no page is touched, and no allocator's own limits
  // or reports are involved): what a process under a limit (ulimit -v) or the system's overcommit
  // rules would refuse later, in the middle of building or tearing down the document, is refused
  // here instead.
  void* p = need > SIZE_MAX ? MAP_FAILED
                            : ::mmap(nullptr, static_cast<std::size_t>(need), PROT_READ | PROT_WRITE,
                                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    throw LimitError("out of memory: " + where + " is " + std::to_string(text.size()) +
                     " bytes of JSON, which may take up to " + std::to_string(need >> 20) +
                     " MiB of memory to read and use, more than this process can have");
  ::munmap(p, static_cast<std::size_t>(need));
}

}  // namespace zarrpp
