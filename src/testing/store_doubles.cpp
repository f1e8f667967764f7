#include "zarrpp/testing/store_doubles.hpp"

#include "zarrpp/core/error.hpp"

namespace zarrpp {

std::string to_string(StoreOp::Kind k) {
  switch (k) {
    case StoreOp::Kind::Get:
      return "get";
    case StoreOp::Kind::GetStreamed:
      return "get_streamed";
    case StoreOp::Kind::Set:
      return "set";
    case StoreOp::Kind::SetIf:
      return "set_if";
    case StoreOp::Kind::Erase:
      return "erase";
    case StoreOp::Kind::EraseIf:
      return "erase_if";
    case StoreOp::Kind::ErasePrefix:
      return "erase_prefix";
    case StoreOp::Kind::ListPrefix:
      return "list_prefix";
    case StoreOp::Kind::ListDir:
      return "list_dir";
    case StoreOp::Kind::Lock:
      return "lock";
    case StoreOp::Kind::Size:
      return "size";
  }
  return "?";
}

// ---- RecordingStore ---------------------------------------------------------------------------------

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

std::optional<VersionedBytes> RecordingStore::do_get(const std::string& key, const ByteRange& range,
                                                     std::uint64_t max_bytes) {
  record(StoreOp::Kind::Get, key, range);
  return StoreWrapper::do_get(key, range, max_bytes);
}
bool RecordingStore::do_get_streamed(const std::string& key, const ByteRange& range, std::size_t piece,
                                     const PieceSink& sink) {
  record(StoreOp::Kind::GetStreamed, key, range);
  return StoreWrapper::do_get_streamed(key, range, piece, sink);
}
void RecordingStore::do_set(const std::string& key, const Bytes& value) {
  record(StoreOp::Kind::Set, key);
  StoreWrapper::do_set(key, value);
}
bool RecordingStore::do_set_if(const std::string& key, const Bytes& value, const std::optional<Version>& expected) {
  record(StoreOp::Kind::SetIf, key);
  return StoreWrapper::do_set_if(key, value, expected);
}
bool RecordingStore::do_erase_if(const std::string& key, const std::optional<Version>& expected) {
  record(StoreOp::Kind::EraseIf, key);
  return StoreWrapper::do_erase_if(key, expected);
}
void RecordingStore::do_erase(const std::string& key) {
  record(StoreOp::Kind::Erase, key);
  StoreWrapper::do_erase(key);
}
void RecordingStore::do_erase_prefix(const std::string& prefix) {
  record(StoreOp::Kind::ErasePrefix, prefix);
  StoreWrapper::do_erase_prefix(prefix);
}
std::optional<std::uint64_t> RecordingStore::do_size(const std::string& key) {
  record(StoreOp::Kind::Size, key);
  return StoreWrapper::do_size(key);
}
std::vector<std::string> RecordingStore::do_list_prefix(const std::string& prefix) {
  record(StoreOp::Kind::ListPrefix, prefix);
  return StoreWrapper::do_list_prefix(prefix);
}
DirListing RecordingStore::do_list_dir(const std::string& prefix) {
  record(StoreOp::Kind::ListDir, prefix);
  return StoreWrapper::do_list_dir(prefix);
}
std::unique_ptr<StoreLock> RecordingStore::do_lock(const std::string& key) {
  record(StoreOp::Kind::Lock, key);
  return StoreWrapper::do_lock(key);
}

// ---- FaultyStore ------------------------------------------------------------------------------------

void FaultyStore::step(const char* op, const std::string& key) {
  const auto n = count_.fetch_add(1);
  if (n == fail_at_ || (forever_ && n > fail_at_)) {
    fired_ = true;
    throw StoreError(std::string("injected fault at operation ") + std::to_string(n) + " (" + op + " '" + key + "')");
  }
}
std::optional<VersionedBytes> FaultyStore::do_get(const std::string& key, const ByteRange& range,
                                                  std::uint64_t max_bytes) {
  step("get", key);
  return StoreWrapper::do_get(key, range, max_bytes);
}
bool FaultyStore::do_get_streamed(const std::string& key, const ByteRange& range, std::size_t piece,
                                  const PieceSink& sink) {
  step("get_streamed", key);
  return StoreWrapper::do_get_streamed(key, range, piece, sink);
}
void FaultyStore::do_set(const std::string& key, const Bytes& value) {
  step("set", key);
  StoreWrapper::do_set(key, value);
}
bool FaultyStore::do_set_if(const std::string& key, const Bytes& value, const std::optional<Version>& expected) {
  step("set_if", key);
  return StoreWrapper::do_set_if(key, value, expected);
}
bool FaultyStore::do_erase_if(const std::string& key, const std::optional<Version>& expected) {
  step("erase_if", key);
  return StoreWrapper::do_erase_if(key, expected);
}
void FaultyStore::do_erase(const std::string& key) {
  step("erase", key);
  StoreWrapper::do_erase(key);
}
void FaultyStore::do_erase_prefix(const std::string& prefix) {
  step("erase_prefix", prefix);
  StoreWrapper::do_erase_prefix(prefix);
}
std::optional<std::uint64_t> FaultyStore::do_size(const std::string& key) {
  step("size", key);
  return StoreWrapper::do_size(key);
}
std::vector<std::string> FaultyStore::do_list_prefix(const std::string& prefix) {
  step("list_prefix", prefix);
  return StoreWrapper::do_list_prefix(prefix);
}
DirListing FaultyStore::do_list_dir(const std::string& prefix) {
  step("list_dir", prefix);
  return StoreWrapper::do_list_dir(prefix);
}

}  // namespace zarrpp
