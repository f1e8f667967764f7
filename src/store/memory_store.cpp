#include "zarrpp/store/memory_store.hpp"

#include <set>

namespace zarrpp {

namespace {
Bytes slice(const Bytes& v, const ByteRange& r) {
  auto [b, e] = r.resolve(v.size());
  return Bytes(v.begin() + static_cast<std::ptrdiff_t>(b), v.begin() + static_cast<std::ptrdiff_t>(e));
}
}  // namespace

std::optional<Bytes> MemoryStore::get(const std::string& key, const ByteRange& range) {
  validate_key(key);
  std::shared_lock lk(mu_);
  auto it = data_.find(key);
  if (it == data_.end()) return std::nullopt;
  if (range.kind == ByteRange::Kind::All) return it->second;
  return slice(it->second, range);
}

void MemoryStore::set(const std::string& key, const Bytes& value) {
  validate_key(key);
  std::unique_lock lk(mu_);
  data_[key] = value;
}

bool MemoryStore::compare_and_set(const std::string& key, const std::optional<Bytes>& expected,
                                  const Bytes& value) {
  validate_key(key);
  std::unique_lock lk(mu_);
  auto it = data_.find(key);
  if (expected) {
    if (it == data_.end() || it->second != *expected) return false;
    it->second = value;
  } else {
    if (it != data_.end()) return false;
    data_.emplace(key, value);
  }
  return true;
}

void MemoryStore::erase(const std::string& key) {
  validate_key(key);
  std::unique_lock lk(mu_);
  data_.erase(key);
}

void MemoryStore::erase_prefix(const std::string& prefix) {
  validate_prefix(prefix);
  std::unique_lock lk(mu_);
  auto it = data_.lower_bound(prefix);
  while (it != data_.end() && it->first.compare(0, prefix.size(), prefix) == 0) it = data_.erase(it);
}

bool MemoryStore::exists(const std::string& key) {
  validate_key(key);
  std::shared_lock lk(mu_);
  return data_.count(key) != 0;
}

std::optional<std::uint64_t> MemoryStore::size(const std::string& key) {
  validate_key(key);
  std::shared_lock lk(mu_);
  auto it = data_.find(key);
  if (it == data_.end()) return std::nullopt;
  return it->second.size();
}

std::vector<std::string> MemoryStore::list_prefix(const std::string& prefix) {
  validate_prefix(prefix);
  std::shared_lock lk(mu_);
  std::vector<std::string> out;
  for (auto it = data_.lower_bound(prefix);
       it != data_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it)
    out.push_back(it->first);
  return out;
}

DirListing MemoryStore::list_dir(const std::string& prefix_in) {
  validate_prefix(prefix_in);
  std::string prefix = prefix_in;
  if (!prefix.empty() && prefix.back() != '/') prefix += '/';
  std::shared_lock lk(mu_);
  DirListing out;
  std::set<std::string> dirs;
  for (auto it = data_.lower_bound(prefix);
       it != data_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
    const auto rest = it->first.substr(prefix.size());
    const auto slash = rest.find('/');
    if (slash == std::string::npos) out.keys.push_back(rest);
    else dirs.insert(rest.substr(0, slash));
  }
  out.prefixes.assign(dirs.begin(), dirs.end());
  return out;
}

std::unique_ptr<StoreLock> MemoryStore::lock(const std::string& key) {
  validate_key(key);
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
