#pragma once
// Shard indexes kept for an Array handle's life on a remote store, so that reading an inner chunk
// of a shard read before is one request (its range) instead of two (the index, then the range).
// Safe because every read of a shard's data is checked against the version its index came from:
// a shard replaced since (by anyone) fails that check, its index is forgotten and read again
// (ShardDecoder's Replaced). This handle's own writes and removals forget what they change.
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "../codec/chunk_codec.hpp"

namespace zarrpp {

class ShardIndexCache {
 public:
  // Bytes of indexes kept at most; when full, the cache starts over.
  static constexpr std::uint64_t kMaxBytes = std::uint64_t{16} << 20;

  std::optional<VersionedBytes> find(const std::string& key, const ByteRange& range) const;
  void keep(const std::string& key, const ByteRange& range, const VersionedBytes& index);
  void forget(const std::string& key);

 private:
  static std::string range_id(const ByteRange& range);
  mutable std::mutex mu_;
  std::map<std::string, std::map<std::string, VersionedBytes>> by_key_;  // key -> range -> index
  std::uint64_t bytes_ = 0;
};

// A stored shard whose index reads go through the cache (ChunkSource::read_index).
class IndexCachedChunk final : public ChunkSource {
 public:
  IndexCachedChunk(Store& store, std::string key, std::uint64_t max_bytes, ShardIndexCache& cache)
      : chunk_(store, std::move(key), max_bytes), cache_(cache) {}
  std::optional<VersionedBytes> read(const ByteRange& range) override { return chunk_.read(range); }
  std::optional<VersionedBytes> read_index(const ByteRange& range, bool& cached) override;
  void forget_index() override { cache_.forget(chunk_.key()); }
  std::optional<std::uint64_t> size() override { return chunk_.size(); }
  bool read_streamed(const ByteRange& range, std::size_t piece, const Store::PieceSink& sink) override {
    return chunk_.read_streamed(range, piece, sink);
  }
  bool streams_natively() const override { return chunk_.streams_natively(); }
  std::size_t reads_in_flight() const override { return chunk_.reads_in_flight(); }
  std::string describe() const override { return chunk_.describe(); }
  std::string explain_unreadable() const override { return chunk_.explain_unreadable(); }

 private:
  StoredChunk chunk_;
  ShardIndexCache& cache_;
};

}  // namespace zarrpp
