#pragma once
#include <atomic>
#include <map>
#include <mutex>
#include <shared_mutex>

#include "zarrpp/store/store.hpp"

namespace zarrpp {

// A thread-safe in-memory store. Versions are generation numbers: every write of a key gives
// it a new one.
class MemoryStore : public Store {
 public:
  static std::shared_ptr<MemoryStore> create() { return std::make_shared<MemoryStore>(); }

  StoreCapabilities capabilities() const override {
    return {.writable = true,
            .listing = true,
            .conditional_writes = true,
            .conditional_erase = true,
            .locking = true,
            .native_streaming = false};
  }
  std::string describe() const override { return "memory"; }
  std::string location() const override { return "memory:" + std::to_string(reinterpret_cast<std::uintptr_t>(this)); }

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
  std::shared_mutex mu_;
  std::map<std::string, Entry, std::less<>> data_;
  std::uint64_t next_generation_ = 1;  // under mu_
  std::mutex locks_mu_;
  std::map<std::string, std::shared_ptr<std::mutex>> locks_;
};

}  // namespace zarrpp
