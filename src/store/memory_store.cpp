#include "zarrpp/store/memory_store.hpp"

#include "zarrpp/core/error.hpp"

namespace zarrpp {

MemoryStore::MemoryStore() : state_(std::make_shared<State>()) {}

namespace {

struct NamedStores {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<MemoryStore>> stores;
};
NamedStores& named_stores() {
  static NamedStores n;
  return n;
}

}  // namespace

std::shared_ptr<MemoryStore> MemoryStore::named(const std::string& name) {
  auto& n = named_stores();
  const std::lock_guard lock(n.mu);
  auto& s = n.stores[name];
  if (!s) s = create();
  return s;
}

bool MemoryStore::forget_named(const std::string& name) {
  auto& n = named_stores();
  const std::lock_guard lock(n.mu);
  return n.stores.erase(name) > 0;
}

std::shared_ptr<MemoryStore> MemoryStore::with_read_only(bool read_only) const {
  return std::shared_ptr<MemoryStore>(new MemoryStore(state_, read_only));
}

std::optional<VersionedBytes> MemoryStore::do_get(const std::string& key, const ByteRange& range,
                                                  std::uint64_t max_bytes) {
  std::shared_lock lk(state_->mu);
  auto it = state_->data.find(key);
  if (it == state_->data.end()) return std::nullopt;
  const Bytes& v = it->second.bytes;
  const auto [b, e] = range.resolve(v.size());
  if (e - b > max_bytes)
    throw StoreError(ErrorCode::limit_exceeded, "'" + key + "' in memory holds " + std::to_string(e - b) +
                                                    " bytes, more than the " + std::to_string(max_bytes) + " expected");
  VersionedBytes out{Bytes(), std::to_string(it->second.generation)};
  if (range.kind == ByteRange::Kind::All) {
    out.bytes = v;
  } else {
    out.bytes.assign(v.begin() + static_cast<std::ptrdiff_t>(b), v.begin() + static_cast<std::ptrdiff_t>(e));
  }
  return out;
}

void MemoryStore::do_set(const std::string& key, const Bytes& value) {
  std::unique_lock lk(state_->mu);
  state_->data[key] = Entry{value, state_->next_generation++};
}

bool MemoryStore::do_set_if(const std::string& key, const Bytes& value, const std::optional<Version>& expected) {
  std::unique_lock lk(state_->mu);
  auto it = state_->data.find(key);
  if (expected) {
    if (it == state_->data.end() || std::to_string(it->second.generation) != *expected) return false;
    it->second = Entry{value, state_->next_generation++};
  } else {
    if (it != state_->data.end()) return false;
    state_->data.emplace(key, Entry{value, state_->next_generation++});
  }
  return true;
}

bool MemoryStore::do_erase_if(const std::string& key, const std::optional<Version>& expected) {
  std::unique_lock lk(state_->mu);
  auto it = state_->data.find(key);
  if (!expected) return it == state_->data.end();
  if (it == state_->data.end() || std::to_string(it->second.generation) != *expected) return false;
  state_->data.erase(it);
  return true;
}

void MemoryStore::do_erase(const std::string& key) {
  std::unique_lock lk(state_->mu);
  state_->data.erase(key);
}

void MemoryStore::do_erase_prefix(const std::string& prefix) {
  std::unique_lock lk(state_->mu);
  auto it = state_->data.lower_bound(prefix);
  while (it != state_->data.end() && it->first.compare(0, prefix.size(), prefix) == 0) it = state_->data.erase(it);
}

std::optional<std::uint64_t> MemoryStore::do_size(const std::string& key) {
  std::shared_lock lk(state_->mu);
  auto it = state_->data.find(key);
  if (it == state_->data.end()) return std::nullopt;
  return it->second.bytes.size();
}

std::vector<std::string> MemoryStore::do_list_prefix(const std::string& prefix) {
  std::shared_lock lk(state_->mu);
  std::vector<std::string> out;
  for (auto it = state_->data.lower_bound(prefix);
       it != state_->data.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it)
    out.push_back(it->first);
  return out;
}

std::unique_ptr<StoreLock> MemoryStore::do_lock(const std::string& key) { return state_->locks.lock(key); }

}  // namespace zarrpp
