#include "zarrpp/store/testing.hpp"

#include "zarrpp/core/error.hpp"

namespace zarrpp {

std::string to_string(StoreOp::Kind k) {
  switch (k) {
    case StoreOp::Kind::Get: return "get";
    case StoreOp::Kind::Set: return "set";
    case StoreOp::Kind::CompareAndSet: return "compare_and_set";
    case StoreOp::Kind::Erase: return "erase";
    case StoreOp::Kind::ErasePrefix: return "erase_prefix";
    case StoreOp::Kind::Exists: return "exists";
    case StoreOp::Kind::ListPrefix: return "list_prefix";
    case StoreOp::Kind::ListDir: return "list_dir";
    case StoreOp::Kind::Lock: return "lock";
    case StoreOp::Kind::Size: return "size";
  }
  return "?";
}

void RecordingStore::record(StoreOp::Kind k, const std::string& key, ByteRange r) {
  std::lock_guard lk(mu_);
  ops_.push_back({k, key, r});
}
std::vector<StoreOp> RecordingStore::ops() const {
  std::lock_guard lk(mu_);
  return ops_;
}
void RecordingStore::clear() {
  std::lock_guard lk(mu_);
  ops_.clear();
}
std::vector<std::string> RecordingStore::keys(std::initializer_list<StoreOp::Kind> kinds) const {
  std::lock_guard lk(mu_);
  std::vector<std::string> out;
  for (const auto& op : ops_)
    for (auto k : kinds)
      if (op.kind == k) out.push_back(op.key);
  return out;
}

std::optional<Bytes> RecordingStore::get(const std::string& key, const ByteRange& range) {
  record(StoreOp::Kind::Get, key, range);
  return inner_->get(key, range);
}
void RecordingStore::set(const std::string& key, const Bytes& value) {
  record(StoreOp::Kind::Set, key);
  inner_->set(key, value);
}
bool RecordingStore::compare_and_set(const std::string& key, const std::optional<Bytes>& e, const Bytes& v) {
  record(StoreOp::Kind::CompareAndSet, key);
  return inner_->compare_and_set(key, e, v);
}
void RecordingStore::erase(const std::string& key) {
  record(StoreOp::Kind::Erase, key);
  inner_->erase(key);
}
void RecordingStore::erase_prefix(const std::string& prefix) {
  record(StoreOp::Kind::ErasePrefix, prefix);
  inner_->erase_prefix(prefix);
}
bool RecordingStore::exists(const std::string& key) {
  record(StoreOp::Kind::Exists, key);
  return inner_->exists(key);
}
std::optional<std::uint64_t> RecordingStore::size(const std::string& key) {
  record(StoreOp::Kind::Size, key);
  return inner_->size(key);
}
std::vector<std::string> RecordingStore::list_prefix(const std::string& prefix) {
  record(StoreOp::Kind::ListPrefix, prefix);
  return inner_->list_prefix(prefix);
}
DirListing RecordingStore::list_dir(const std::string& prefix) {
  record(StoreOp::Kind::ListDir, prefix);
  return inner_->list_dir(prefix);
}
std::unique_ptr<StoreLock> RecordingStore::lock(const std::string& key) {
  record(StoreOp::Kind::Lock, key);
  return inner_->lock(key);
}

void FaultyStore::step(const char* op, const std::string& key) {
  const auto n = count_.fetch_add(1);
  if (n == fail_at_ || (forever_ && n > fail_at_)) {
    fired_ = true;
    throw StoreError(std::string("injected fault at operation ") + std::to_string(n) + " (" + op + " '" + key + "')");
  }
}
std::optional<Bytes> FaultyStore::get(const std::string& key, const ByteRange& range) {
  step("get", key);
  return inner_->get(key, range);
}
void FaultyStore::set(const std::string& key, const Bytes& value) {
  step("set", key);
  inner_->set(key, value);
}
bool FaultyStore::compare_and_set(const std::string& key, const std::optional<Bytes>& e, const Bytes& v) {
  step("compare_and_set", key);
  return inner_->compare_and_set(key, e, v);
}
void FaultyStore::erase(const std::string& key) {
  step("erase", key);
  inner_->erase(key);
}
void FaultyStore::erase_prefix(const std::string& prefix) {
  step("erase_prefix", prefix);
  inner_->erase_prefix(prefix);
}
bool FaultyStore::exists(const std::string& key) {
  step("exists", key);
  return inner_->exists(key);
}
std::optional<std::uint64_t> FaultyStore::size(const std::string& key) {
  step("size", key);
  return inner_->size(key);
}
std::vector<std::string> FaultyStore::list_prefix(const std::string& prefix) {
  step("list_prefix", prefix);
  return inner_->list_prefix(prefix);
}
DirListing FaultyStore::list_dir(const std::string& prefix) {
  step("list_dir", prefix);
  return inner_->list_dir(prefix);
}

}  // namespace zarrpp
