#pragma once
#include <map>
#include <mutex>
#include <shared_mutex>

#include "zarrpp/store/store.hpp"

namespace zarrpp {

// A thread-safe in-memory store.
class MemoryStore : public Store {
 public:
  static std::shared_ptr<MemoryStore> create() { return std::make_shared<MemoryStore>(); }

  std::optional<Bytes> get(const std::string& key, const ByteRange& range = ByteRange::all()) override;
  void set(const std::string& key, const Bytes& value) override;
  bool compare_and_set(const std::string& key, const std::optional<Bytes>& expected, const Bytes& value) override;
  void erase(const std::string& key) override;
  void erase_prefix(const std::string& prefix) override;
  bool exists(const std::string& key) override;
  std::optional<std::uint64_t> size(const std::string& key) override;
  std::vector<std::string> list_prefix(const std::string& prefix) override;
  DirListing list_dir(const std::string& prefix) override;
  std::unique_ptr<StoreLock> lock(const std::string& key) override;
  std::string describe() const override { return "memory"; }

 private:
  std::shared_mutex mu_;
  std::map<std::string, Bytes, std::less<>> data_;
  std::mutex locks_mu_;
  std::map<std::string, std::shared_ptr<std::mutex>> locks_;
};

}  // namespace zarrpp
