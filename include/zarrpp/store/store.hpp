#pragma once
// Stores move bytes by key. They are dumb on purpose: crash-safe ordering, compare-and-swap of
// metadata and clean-up live in the array layer, built from these primitives.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zarrpp/core/ndarray.hpp"

namespace zarrpp {

// Which bytes of a value to get.
struct ByteRange {
  enum class Kind { All, FromOffset, Suffix };
  Kind kind = Kind::All;
  std::uint64_t offset = 0;                 // FromOffset
  std::optional<std::uint64_t> length;      // FromOffset: nullopt = to the end
  std::uint64_t suffix = 0;                 // Suffix: the last `suffix` bytes

  static ByteRange all() { return {}; }
  static ByteRange range(std::uint64_t offset, std::uint64_t length) {
    return {Kind::FromOffset, offset, length, 0};
  }
  static ByteRange from(std::uint64_t offset) { return {Kind::FromOffset, offset, std::nullopt, 0}; }
  static ByteRange last(std::uint64_t n) { return {Kind::Suffix, 0, std::nullopt, n}; }
  // The [begin, end) this range selects from a value of `size` bytes (clamped to it).
  std::pair<std::uint64_t, std::uint64_t> resolve(std::uint64_t size) const;
};

// Children directly under a prefix: keys (values stored there) and prefixes (deeper levels).
struct DirListing {
  std::vector<std::string> keys;      // names relative to the prefix
  std::vector<std::string> prefixes;  // names relative to the prefix, without the trailing '/'
};

// Held while an exclusive lock is owned; releases on destruction.
class StoreLock {
 public:
  virtual ~StoreLock() = default;
  // Throws ConflictError when the lock is no longer held (a lease that expired and was taken
  // over); local locks are held until destroyed and never throw.
  virtual void check() const {}
};

class Store {
 public:
  virtual ~Store() = default;

  // nullopt when the key does not exist.
  virtual std::optional<Bytes> get(const std::string& key, const ByteRange& range = ByteRange::all()) = 0;
  // Writes a whole value; readers see the old or the new value, never a mix.
  virtual void set(const std::string& key, const Bytes& value) = 0;
  // Sets `key` to `value` only if its current value equals `expected` (nullopt = must not exist).
  // Returns false, changing nothing, when it does not.
  virtual bool compare_and_set(const std::string& key, const std::optional<Bytes>& expected,
                               const Bytes& value) = 0;
  // Removes a key; removing a missing key is not an error.
  virtual void erase(const std::string& key) = 0;
  // Removes every key under prefix ("a/b/" removes "a/b/..."; "" removes everything).
  virtual void erase_prefix(const std::string& prefix) = 0;
  virtual bool exists(const std::string& key) = 0;
  // The size of a value in bytes, nullopt when the key does not exist. The default reads the
  // value; stores override it with something cheap (fstat, HEAD).
  virtual std::optional<std::uint64_t> size(const std::string& key);
  // Hands bytes `range` of a value to `sink` in order, in pieces of at most `piece` bytes that
  // start at multiples of `piece` from the range's start, through a small reused buffer (so a
  // large value is never held whole); sink(value_size, offset_in_value, bytes). Returns false
  // when the key does not exist; a value that ends early just delivers fewer bytes. The default
  // gets the range at once (and the size with size() when the range is partial).
  using PieceSink = std::function<void(std::uint64_t value_size, std::uint64_t offset, std::span<const std::uint8_t> bytes)>;
  virtual bool get_streamed(const std::string& key, const ByteRange& range, std::size_t piece, const PieceSink& sink);
  // Whether get_streamed is the store's own (reads pieces from the source and knows the value's
  // size without another request), so partial and streamed reads pay off.
  virtual bool streams_natively() const { return false; }
  // Every key starting with prefix, in sorted order.
  virtual std::vector<std::string> list_prefix(const std::string& prefix) = 0;
  // Immediate children of a directory-like prefix ("" = root, else ending in '/').
  virtual DirListing list_dir(const std::string& prefix) = 0;
  // An exclusive lock named by `key`, shared by every user of the same store (threads, and for
  // stores that can, processes). nullptr when the store cannot lock.
  virtual std::unique_ptr<StoreLock> lock(const std::string& key) = 0;
  // A short description for messages ("file:///data/x.zarr", "memory").
  virtual std::string describe() const = 0;
};

using StorePtr = std::shared_ptr<Store>;

// Validates a store key: relative, '/'-separated, no empty, "." or ".." segments, no backslash or
// NUL, no reserved ".zarrpp-" segments. Throws StoreError naming the key.
void validate_key(std::string_view key);
// Validates a list prefix: "" or a key, optionally with a trailing '/'.
void validate_prefix(std::string_view prefix);

}  // namespace zarrpp
