#pragma once
/// @file
/// Stores move bytes by key. They are dumb on purpose: crash-safe ordering, compare-and-swap of
/// metadata and clean-up live in the array layer, built from these primitives.
///
/// Store's public methods are not virtual: each validates its key once and calls the protected
/// do_* method a store implements. What a store can do is declared by capabilities(), so callers
/// ask before relying on locks, conditional writes or listings.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "zarrpp/core/ndarray.hpp"

namespace zarrpp {

/// Which bytes of a value to get.
struct ByteRange {
  /// Which part of the value.
  enum class Kind {
    All,         ///< the whole value
    FromOffset,  ///< from `offset`, `length` bytes or to the end
    Suffix       ///< the last `suffix` bytes
  };
  Kind kind = Kind::All;                ///< which part
  std::uint64_t offset = 0;             ///< FromOffset
  std::optional<std::uint64_t> length;  ///< FromOffset: nullopt = to the end
  std::uint64_t suffix = 0;             ///< Suffix: the last `suffix` bytes

  static ByteRange all() { return {}; }  ///< the whole value

  /// `length` bytes from `offset`.
  static ByteRange range(std::uint64_t offset, std::uint64_t length) { return {Kind::FromOffset, offset, length, 0}; }
  /// From `offset` to the end.
  static ByteRange from(std::uint64_t offset) { return {Kind::FromOffset, offset, std::nullopt, 0}; }
  static ByteRange last(std::uint64_t n) { return {Kind::Suffix, 0, std::nullopt, n}; }  ///< the last `n` bytes

  /// The [begin, end) this range selects from a value of `size` bytes (clamped to it).
  std::pair<std::uint64_t, std::uint64_t> resolve(std::uint64_t size) const;
};

/// Children directly under a prefix: keys (values stored there) and prefixes (deeper levels).
struct DirListing {
  std::vector<std::string> keys;      ///< names relative to the prefix
  std::vector<std::string> prefixes;  ///< names relative to the prefix, without the trailing '/'
};

/// An opaque token naming one version of a stored value (an ETag, a generation): it changes
/// whenever the value's bytes do (a rewrite of the same bytes may keep it, as S3's ETag does), so a
/// write conditioned on it replaces exactly the value that was read.
using Version = std::string;

/// A condition a write or an erase must meet, checked by the store atomically with the change
/// (TensorStore's generation conditions): none, or "the key's current version is `version`", where
/// no version means "the key does not exist". A write built from what was read is made with
/// `if_equal(version read)`, so it replaces exactly that value or changes nothing.
struct WriteOptions {
  /// What must hold for a conditional write: the key's current version, or that it is absent.
  struct Condition {
    std::optional<Version> version;  ///< nullopt: the key must not exist
  };
  std::optional<Condition> condition;  ///< nullopt: unconditional

  /// Write only if the key's version is `version` (nullopt: only if the key does not exist).
  static WriteOptions if_equal(const std::optional<Version>& version) { return {Condition{version}}; }
  bool conditional() const { return condition.has_value(); }  ///< whether a condition is set
};

/// A value read together with its version. With a byte range, `bytes` holds the range and
/// `version` names the whole value it came from.
struct VersionedBytes {
  Bytes bytes;      ///< the value (or the range asked for)
  Version version;  ///< the version of the whole value
  /// The whole value's size, when the read learned it on the way (a remote store's Content-Range),
  /// so a caller that needs it asks no second time; nullopt: ask size().
  std::optional<std::uint64_t> value_size = std::nullopt;
};

/// What a store can do.
struct StoreCapabilities {
  bool writable = true;             ///< set/erase work (false: they throw StoreError read_only)
  bool listing = true;              ///< list_prefix/list_dir work
  bool conditional_writes = false;  ///< conditional sets (and compare_and_set) are atomic
  bool conditional_erase = false;   ///< conditional erases are atomic (see Store::confirm_capabilities)
  bool locking = false;             ///< lock() gives an exclusive lock
  bool native_streaming = false;    ///< get_streamed reads pieces from the source itself and knows
                                    ///< the value's size without another request
  bool uncertain_writes = false;    ///< a write's answer can be lost on the way (a network store), so a
                                    ///< conditional write refused or failed may still be one of this
                                    ///< writer's that took effect; false: a refusal means not written
  std::size_t reads_in_flight = 0;  ///< reads started with start_get run this many at once without a
                                    ///< thread each (a remote store's request limit); 0: start_get
                                    ///< reads when waited on, in the waiting thread
};

/// A read begun by Store::start_get.
class PendingGet {
 public:
  virtual ~PendingGet() = default;
  /// What get_versioned(key, ByteRange::all(), max_bytes) returns (or throws), waiting for it if
  /// needed; called once.
  virtual std::optional<VersionedBytes> wait() = 0;
};

/// Held while an exclusive lock is owned; releases on destruction.
class StoreLock {
 public:
  virtual ~StoreLock() = default;
  /// Throws ConflictError when the lock is no longer held (a lease that expired and was taken
  /// over); local locks are held until destroyed and never throw.
  virtual void check() const {}
};

/// Exclusive locks by key within this process: the locks of stores that only this process writes
/// (memory, a zip file's one writer).
class ProcessLocks {
 public:
  std::unique_ptr<StoreLock> lock(const std::string& key);  ///< waits for, then holds, the lock of `key`

 private:
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<std::mutex>> locks_;
};

/// No bound on the bytes a read may return (remote stores still apply RemoteOptions' cap).
inline constexpr std::uint64_t kNoLimit = UINT64_MAX;

/// Keys to byte values: what every store (memory, folder, zip, HTTP, S3, a prefix of another)
/// offers — whole and ranged reads, atomic writes, conditional writes where the store can, and
/// listing.
class Store {
 public:
  virtual ~Store() = default;

  // ---- reading ----
  /// nullopt when the key does not exist. A value (or range) of more than `max_bytes` bytes is a
  /// StoreError (limit_exceeded), found before it is read whole: a hostile file or server cannot
  /// make zarrpp allocate what it claims.
  std::optional<Bytes> get(const std::string& key, const ByteRange& range = ByteRange::all(),
                           std::uint64_t max_bytes = kNoLimit);
  /// The same, with the value's version (for a write conditioned on it).
  std::optional<VersionedBytes> get_versioned(const std::string& key, const ByteRange& range = ByteRange::all(),
                                              std::uint64_t max_bytes = kNoLimit);
  /// Begins reading a whole value, as get_versioned(key, ByteRange::all(), max_bytes) would; the
  /// result comes from wait(). A store with capabilities().reads_in_flight starts the request at
  /// once and keeps many such reads on the wire; others read when waited on. Dropping the
  /// PendingGet abandons the read (a request on the wire finishes, its answer unused).
  std::unique_ptr<PendingGet> start_get(const std::string& key, std::uint64_t max_bytes = kNoLimit);
  /// The size of a value in bytes, nullopt when the key does not exist.
  std::optional<std::uint64_t> size(const std::string& key);
  bool exists(const std::string& key) { return size(key).has_value(); }  ///< whether the key holds a value

  /// @{
  /// Hands bytes `range` of a value to `sink` in order, in pieces of at most `piece` bytes that
  /// start at multiples of `piece` from the range's start, through a small reused buffer (so a
  /// large value is never held whole); sink(value_size, offset_in_value, bytes). Returns false
  /// when the key does not exist; a value that ends early just delivers fewer bytes.
  using PieceSink =
      std::function<void(std::uint64_t value_size, std::uint64_t offset, std::span<const std::uint8_t> bytes)>;
  bool get_streamed(const std::string& key, const ByteRange& range, std::size_t piece, const PieceSink& sink);
  /// @}

  // ---- writing ----
  /// Writes a whole value; readers see the old or the new value, never a mix. With a condition,
  /// writes only if it holds and returns false, changing nothing, when it does not; a condition
  /// needs capabilities().conditional_writes (without it: ConflictError, nothing written).
  bool set(const std::string& key, const Bytes& value, const WriteOptions& options = {});
  /// Removes a key; removing a missing key is not an error. With a condition, as set(); erasing on
  /// the condition "does not exist" changes nothing and tells whether the key is absent. A
  /// conditional erase needs capabilities().conditional_erase (confirm_capabilities() to be sure).
  bool erase(const std::string& key, const WriteOptions& options = {});
  /// Sets `key` to `value` only if its current value equals `expected` (nullopt = must not exist).
  /// Built on get_versioned + a conditional set; returns false, changing nothing, when it does not.
  bool compare_and_set(const std::string& key, const std::optional<Bytes>& expected, const Bytes& value);
  /// Removes every key under prefix ("a/b/" removes "a/b/..."; "" removes everything).
  void erase_prefix(const std::string& prefix);
  /// Removes what a store keeps for the directory-like prefix "a/b/" when it holds nothing any more
  /// (an empty directory of a local store); only that one, never the root. Nothing for stores
  /// without such things.
  void prune_empty(const std::string& prefix);

  // ---- listing ----
  /// Every key starting with prefix, in sorted order.
  std::vector<std::string> list_prefix(const std::string& prefix);
  /// Immediate children of a directory-like prefix ("" = root, else ending in '/').
  DirListing list_dir(const std::string& prefix);

  // ---- locking ----
  /// An exclusive lock named by `key`, shared by every user of the same store (threads, and for
  /// stores that can, processes). Throws ConflictError when the store cannot lock.
  std::unique_ptr<StoreLock> lock(const std::string& key);

  /// What the store can do, as far as it is known without a request (a remote store may assume).
  virtual StoreCapabilities capabilities() const = 0;
  /// The same, confirmed: a store that must ask its server (an S3 store's conditional writes and
  /// deletes) asks it here once and remembers the answer. Callers choosing between two ways of
  /// doing something ask this rather than trying one and catching its failure.
  virtual StoreCapabilities confirm_capabilities() { return capabilities(); }
  /// A short description for messages ("file:///data/x.zarr", "memory").
  virtual std::string describe() const = 0;
  /// Where the store's keys live, canonically (a resolved directory path, a bucket and prefix):
  /// two stores with the same location hold the same keys, and "L/k" is key k of location L.
  virtual std::string location() const { return describe(); }
  /// What the folder holding the keys under `path` ("" the root, "a/b" a node) is, then what each
  /// folder above it is, up to the file system's or the service's root: innermost first. Two
  /// places are one node when their first entries are equal, and one lies inside the other when
  /// the other's first entry is in its chain. A local store names folders by device and inode (so
  /// bind mounts, symlinks and ".." are seen through) and a folder that does not exist yet by its
  /// path; other stores by their normalised URL (scheme and host in lower case, no default port,
  /// no repeated or trailing '/', unreserved %-escapes decoded).
  virtual std::vector<std::string> identity_chain(const std::string& path) const;
  /// Before replacing `key`: throws StoreError when a value could not be written there now (a
  /// read-only or full file system, a folder without write permission), so a caller can stop
  /// before it deletes anything. Writes `probe` (the bytes it will write) to a temporary beside
  /// the key and removes it; stores that cannot know ahead (remote ones) do nothing.
  void check_can_write(const std::string& key, const Bytes& probe);
  /// Called after bytes just read for `key` failed to decode: why they may not be what is stored,
  /// when the store can tell (a remote store: the response that brought them carried fewer bytes
  /// than the object holds, so it was cut in transit), as a clause naming the response; "" when
  /// it finds no such cause. Never throws; a remote store makes one request (HEAD) to find out.
  std::string explain_unreadable(const std::string& key) noexcept;
  /// Called when a node was not found: a clause saying why nothing can be there when the store
  /// knows (a local store whose directory does not exist); "" otherwise. Never throws.
  std::string explain_absent() noexcept;

  struct Parent;
  /// The store rooted at the folder that holds this store's root, and the root's name in it: how the
  /// array layer finds the hierarchy a store opened on one of its nodes belongs to (to keep that
  /// hierarchy's consolidated metadata current). nullopt when there is nothing to reach: the file
  /// system's root, a memory store, a remote store (see parent_unseen). Opened with this store's
  /// options (never creating anything); StoreError when the folder cannot be opened.
  virtual std::optional<Parent> parent() const;
  /// Whether keys can exist above this store's root that parent() does not reach: a remote store
  /// opened below its bucket's root. Consolidated metadata there goes unchecked (and is warned of).
  virtual bool parent_unseen() const { return false; }

 protected:
  /// @{
  /// What a store implements (docs/architecture.md, "Adding a store"): the public operations above
  /// call these after checking keys and permissions, so keys reaching them are valid
  /// (validate_key) and prefixes valid (validate_prefix). do_get reads a value or a range of it,
  /// refusing more than `max_bytes` before reading them (the base checks again after); do_set
  /// writes a whole value atomically for readers; do_erase removes one (a missing key is no error);
  /// do_list_prefix lists the keys under a prefix.
  virtual std::optional<VersionedBytes> do_get(const std::string& key, const ByteRange& range,
                                               std::uint64_t max_bytes) = 0;
  virtual void do_set(const std::string& key, const Bytes& value) = 0;
  virtual void do_erase(const std::string& key) = 0;
  virtual std::vector<std::string> do_list_prefix(const std::string& prefix) = 0;
  /// @}
  /// @{
  /// What a store may implement, with these defaults: size by reading the value; streaming by
  /// reading the range at once; conditional sets and erases throw (no conditional writes);
  /// erase_prefix by listing and erasing each key; pruning empty folders does nothing; list_dir
  /// from list_prefix; lock throws (no locking); every write may go ahead (do_check_can_write);
  /// no explanation of an unreadable or absent key ("").
  virtual std::optional<std::uint64_t> do_size(const std::string& key);
  /// Default: a PendingGet that calls get_versioned when waited on.
  virtual std::unique_ptr<PendingGet> do_start_get(const std::string& key, std::uint64_t max_bytes);
  virtual bool do_get_streamed(const std::string& key, const ByteRange& range, std::size_t piece,
                               const PieceSink& sink);
  virtual bool do_set_if(const std::string& key, const Bytes& value, const std::optional<Version>& expected);
  virtual bool do_erase_if(const std::string& key, const std::optional<Version>& expected);
  virtual void do_erase_prefix(const std::string& prefix);
  virtual void do_prune_empty(const std::string&) {}
  virtual DirListing do_list_dir(const std::string& prefix);
  virtual std::unique_ptr<StoreLock> do_lock(const std::string& key);
  virtual void do_check_can_write(const std::string&, const Bytes&) {}
  virtual std::string do_explain_unreadable(const std::string&) { return ""; }
  virtual std::string do_explain_absent() { return ""; }
  /// @}

 private:
  void check_writable(const char* op, const std::string& key) const;
  void check_listing(const std::string& prefix) const;
};

/// Stores are shared: arrays, groups and wrappers hold them by this pointer.
using StorePtr = std::shared_ptr<Store>;

/// Store::parent()'s answer: the parent folder's store and this store's root's name in it.
struct Store::Parent {
  StorePtr store;    ///< rooted at the parent folder
  std::string name;  ///< this store's root in it (one path segment)
};

/// A store that passes every operation to another one: the base of test wrappers (recording,
/// fault injection) that override the operations they watch and call the base for the rest.
class StoreWrapper : public Store {
 public:
  explicit StoreWrapper(StorePtr inner);            ///< wraps `inner`
  const StorePtr& inner() const { return inner_; }  ///< the wrapped store
  std::string location() const override { return inner_->location(); }
  std::vector<std::string> identity_chain(const std::string& path) const override {
    return inner_->identity_chain(path);
  }
  StoreCapabilities capabilities() const override { return inner_->capabilities(); }
  StoreCapabilities confirm_capabilities() override { return inner_->confirm_capabilities(); }
  /// The inner store's (unwrapped: a wrapper that must watch the parent too overrides this).
  std::optional<Parent> parent() const override { return inner_->parent(); }
  bool parent_unseen() const override { return inner_->parent_unseen(); }

 protected:
  std::optional<VersionedBytes> do_get(const std::string& key, const ByteRange& range,
                                       std::uint64_t max_bytes) override;
  void do_set(const std::string& key, const Bytes& value) override;
  void do_erase(const std::string& key) override;
  std::vector<std::string> do_list_prefix(const std::string& prefix) override;
  std::optional<std::uint64_t> do_size(const std::string& key) override;
  bool do_get_streamed(const std::string& key, const ByteRange& range, std::size_t piece,
                       const PieceSink& sink) override;
  bool do_set_if(const std::string& key, const Bytes& value, const std::optional<Version>& expected) override;
  bool do_erase_if(const std::string& key, const std::optional<Version>& expected) override;
  void do_erase_prefix(const std::string& prefix) override;
  void do_prune_empty(const std::string& prefix) override;
  DirListing do_list_dir(const std::string& prefix) override;
  std::unique_ptr<StoreLock> do_lock(const std::string& key) override;
  void do_check_can_write(const std::string& key, const Bytes& probe) override { inner_->check_can_write(key, probe); }
  std::string do_explain_unreadable(const std::string& key) override { return inner_->explain_unreadable(key); }
  std::string do_explain_absent() override { return inner_->explain_absent(); }

 private:
  StorePtr inner_;
};

/// Validates a store key: relative, '/'-separated, no empty, "." or ".." segments, no backslash or
/// NUL, no reserved ".zarrpp-" segments. Throws StoreError (invalid_key) naming the key.
void validate_key(std::string_view key);
/// Validates a list prefix: "" or a key, optionally with a trailing '/'.
void validate_prefix(std::string_view prefix);
/// A URL in the form identity_chain compares (see there).
std::string normalize_url(std::string_view url);

}  // namespace zarrpp
