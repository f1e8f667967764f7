#pragma once
#include <atomic>
#include <map>
#include <mutex>
#include <shared_mutex>

#include "zarrpp/store/store.hpp"

namespace zarrpp {

/// A thread-safe in-memory store. Versions are generation numbers: every write of a key gives
/// it a new one.
class MemoryStore : public Store {
 public:
  /// An empty store (create() gives it shared).
  MemoryStore();
  static std::shared_ptr<MemoryStore> create() { return std::make_shared<MemoryStore>(); }  ///< a new empty store
  /// The process-wide store of that name (what "memory://NAME" opens): made empty on first use,
  /// then the same keys and values every time until forget_named(name).
  static std::shared_ptr<MemoryStore> named(const std::string& name);
  /// Drops the named store (stores already opened keep its data); whether there was one.
  static bool forget_named(const std::string& name);

  /// Another store over the same keys and values (zarr-python's with_read_only): writes through one
  /// are seen by the other; a read-only view refuses every write (StoreError read_only).
  std::shared_ptr<MemoryStore> with_read_only(bool read_only) const;
  bool read_only() const { return read_only_; }  ///< whether writes are refused
  /// Whether `other` holds the same keys and values (is this store or a view of it).
  bool shares_data_with(const MemoryStore& other) const { return state_ == other.state_; }

  StoreCapabilities capabilities() const override {
    return {.writable = !read_only_,
            .listing = true,
            .conditional_writes = true,
            .conditional_erase = true,
            .locking = true,
            .native_streaming = false};
  }
  std::string describe() const override { return "memory"; }
  std::string location() const override {
    return "memory:" + std::to_string(reinterpret_cast<std::uintptr_t>(state_.get()));
  }

 protected:
  std::optional<VersionedBytes> do_get(const std::string& key, const ByteRange& range,
                                       std::uint64_t max_bytes) override;
  void do_set(const std::string& key, const Bytes& value) override;
  bool do_set_if(const std::string& key, const Bytes& value, const std::optional<Version>& expected) override;
  bool do_erase_if(const std::string& key, const std::optional<Version>& expected) override;
  void do_erase(const std::string& key) override;
  void do_erase_prefix(const std::string& prefix) override;
  std::optional<std::uint64_t> do_size(const std::string& key) override;
  std::vector<std::string> do_list_prefix(const std::string& prefix) override;
  std::unique_ptr<StoreLock> do_lock(const std::string& key) override;

 private:
  struct Entry {
    Bytes bytes;
    std::uint64_t generation = 0;
  };
  /// The keys, values and locks, shared by a store and its views.
  struct State {
    std::shared_mutex mu;
    std::map<std::string, Entry, std::less<>> data;
    std::uint64_t next_generation = 1;  ///< under mu
    ProcessLocks locks;
  };
  MemoryStore(std::shared_ptr<State> state, bool read_only) : state_(std::move(state)), read_only_(read_only) {}
  std::shared_ptr<State> state_;
  bool read_only_ = false;
};

}  // namespace zarrpp
