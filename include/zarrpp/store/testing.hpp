#pragma once
// Store wrappers for tests: one records every operation, one fails the Nth operation.
#include <atomic>
#include <mutex>

#include "zarrpp/store/store.hpp"

namespace zarrpp {

struct StoreOp {
  enum class Kind { Get, Set, CompareAndSet, Erase, ErasePrefix, Exists, ListPrefix, ListDir, Lock, Size };
  Kind kind;
  std::string key;
  ByteRange range;  // for Get
};
std::string to_string(StoreOp::Kind k);

// Records every operation passed to the wrapped store.
class RecordingStore : public Store {
 public:
  explicit RecordingStore(StorePtr inner) : inner_(std::move(inner)) {}
  std::vector<StoreOp> ops() const;
  void clear();
  // Keys of the given kinds of operation, in order (duplicates kept).
  std::vector<std::string> keys(std::initializer_list<StoreOp::Kind> kinds) const;

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
  std::string describe() const override { return "recording(" + inner_->describe() + ")"; }

 private:
  void record(StoreOp::Kind k, const std::string& key, ByteRange r = ByteRange::all());
  StorePtr inner_;
  mutable std::mutex mu_;
  std::vector<StoreOp> ops_;
};

// Fails (throws StoreError) at the Nth operation (0-based) that is not a lock, then works again.
// With `fail_forever`, every operation from the Nth on fails.
class FaultyStore : public Store {
 public:
  FaultyStore(StorePtr inner, std::int64_t fail_at, bool fail_forever = false)
      : inner_(std::move(inner)), fail_at_(fail_at), forever_(fail_forever) {}
  std::int64_t operations() const { return count_.load(); }
  bool fired() const { return fired_.load(); }

  std::optional<Bytes> get(const std::string& key, const ByteRange& range = ByteRange::all()) override;
  void set(const std::string& key, const Bytes& value) override;
  bool compare_and_set(const std::string& key, const std::optional<Bytes>& expected, const Bytes& value) override;
  void erase(const std::string& key) override;
  void erase_prefix(const std::string& prefix) override;
  bool exists(const std::string& key) override;
  std::optional<std::uint64_t> size(const std::string& key) override;
  std::vector<std::string> list_prefix(const std::string& prefix) override;
  DirListing list_dir(const std::string& prefix) override;
  std::unique_ptr<StoreLock> lock(const std::string& key) override { return inner_->lock(key); }
  std::string describe() const override { return "faulty(" + inner_->describe() + ")"; }

 private:
  void step(const char* op, const std::string& key);
  StorePtr inner_;
  std::int64_t fail_at_;
  bool forever_;
  std::atomic<std::int64_t> count_{0};
  std::atomic<bool> fired_{false};
};

}  // namespace zarrpp
