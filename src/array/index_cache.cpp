// Shard indexes kept for a handle's life (see index_cache.hpp).
#include "index_cache.hpp"

namespace zarrpp {

std::string ShardIndexCache::range_id(const ByteRange& range) {
  return std::to_string(static_cast<int>(range.kind)) + ":" + std::to_string(range.offset) + ":" +
         (range.length ? std::to_string(*range.length) : "end") + ":" + std::to_string(range.suffix);
}

std::optional<VersionedBytes> ShardIndexCache::find(const std::string& key, const ByteRange& range) const {
  std::lock_guard lk(mu_);
  const auto k = by_key_.find(key);
  if (k == by_key_.end()) return std::nullopt;
  const auto r = k->second.find(range_id(range));
  if (r == k->second.end()) return std::nullopt;
  return r->second;
}

void ShardIndexCache::keep(const std::string& key, const ByteRange& range, const VersionedBytes& index) {
  std::lock_guard lk(mu_);
  if (bytes_ + index.bytes.size() > kMaxBytes) {
    by_key_.clear();
    bytes_ = 0;
  }
  auto& slot = by_key_[key][range_id(range)];
  bytes_ = bytes_ - slot.bytes.size() + index.bytes.size();
  slot = index;
}

void ShardIndexCache::forget(const std::string& key) {
  std::lock_guard lk(mu_);
  const auto k = by_key_.find(key);
  if (k == by_key_.end()) return;
  for (const auto& [range, index] : k->second) bytes_ -= index.bytes.size();
  by_key_.erase(k);
}

std::optional<VersionedBytes> IndexCachedChunk::read_index(const ByteRange& range, bool& cached) {
  if (auto hit = cache_.find(chunk_.key(), range)) {
    cached = true;
    return hit;
  }
  cached = false;
  auto index = chunk_.read(range);
  // Only an index with a version can be checked against its data later.
  if (index && !index->version.empty()) cache_.keep(chunk_.key(), range, *index);
  return index;
}

}  // namespace zarrpp
