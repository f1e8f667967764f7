#include "zarrpp/store/memory_store.hpp"

#include "zarrpp/core/error.hpp"

namespace zarrpp {

std::optional<VersionedBytes> MemoryStore::do_get(const std::string& key, const ByteRange& range,
                                                  std::uint64_t max_bytes) {
  std::shared_lock lk(mu_);
  auto it = data_.find(key);
  if (it == data_.end()) return std::nullopt;
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
  std::unique_lock lk(mu_);
  data_[key] = Entry{value, next_generation_++};
}

bool MemoryStore::do_set_if(const std::string& key, const Bytes& value, const std::optional<Version>& expected) {
  std::unique_lock lk(mu_);
  auto it = data_.find(key);
  if (expected) {
    if (it == data_.end() || std::to_string(it->second.generation) != *expected) return false;
    it->second = Entry{value, next_generation_++};
  } else {
    if (it != data_.end()) return false;
    data_.emplace(key, Entry{value, next_generation_++});
  }
  return true;
}

bool MemoryStore::do_erase_if(const std::string& key, const std::optional<Version>& expected) {
  std::unique_lock lk(mu_);
  auto it = data_.find(key);
  if (!expected) return it == data_.end();
  if (it == data_.end() || std::to_string(it->second.generation) != *expected) return false;
  data_.erase(it);
  return true;
}

void MemoryStore::do_erase(const std::string& key) {
  std::unique_lock lk(mu_);
  data_.erase(key);
}

void MemoryStore::do_erase_prefix(const std::string& prefix) {
  std::unique_lock lk(mu_);
  auto it = data_.lower_bound(prefix);
  while (it != data_.end() && it->first.compare(0, prefix.size(), prefix) == 0) it = data_.erase(it);
}

std::optional<std::uint64_t> MemoryStore::do_size(const std::string& key) {
  std::shared_lock lk(mu_);
  auto it = data_.find(key);
  if (it == data_.end()) return std::nullopt;
  return it->second.bytes.size();
}

std::vector<std::string> MemoryStore::do_list_prefix(const std::string& prefix) {
  std::shared_lock lk(mu_);
  std::vector<std::string> out;
  for (auto it = data_.lower_bound(prefix); it != data_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it)
    out.push_back(it->first);
  return out;
}

std::unique_ptr<StoreLock> MemoryStore::do_lock(const std::string& key) {
  std::shared_ptr<std::mutex> m;
  {
    std::lock_guard lk(locks_mu_);
    auto& slot = locks_[key];
    if (!slot) slot = std::make_shared<std::mutex>();
    m = slot;
  }
  struct Held : StoreLock {
    std::shared_ptr<std::mutex> m;
    explicit Held(std::shared_ptr<std::mutex> mm) : m(std::move(mm)) { m->lock(); }
    ~Held() override { m->unlock(); }
  };
  return std::make_unique<Held>(std::move(m));
}

}  // namespace zarrpp
