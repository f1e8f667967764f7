// sharding_indexed: many inner chunks in one stored object, with an index of (offset, nbytes).
#include <algorithm>
#include <cstring>

#include "codec_impl.hpp"
#include "zarrpp/core/thread_pool.hpp"

namespace zarrpp {
namespace {
[[noreturn]] void cfg_fail(const std::string& why, const Json& cfg) {
  throw MetadataError("codec sharding_indexed: " + why + " (configuration " + cfg.dump() + ")");
}
[[noreturn]] void shard_fail(const std::string& why) { throw CodecError("codec sharding_indexed: " + why); }

std::vector<CodecMetadata> codec_list(const Json& cfg, const char* key) {
  if (!cfg.contains(key) || !cfg[key].is_array()) cfg_fail(std::string("\"") + key + "\" must be an array of codecs", cfg);
  std::vector<CodecMetadata> out;
  for (std::size_t i = 0; i < cfg[key].size(); ++i)
    out.push_back(CodecMetadata::from_json(cfg[key][i], std::string("sharding_indexed.") + key + "[" + std::to_string(i) + "]"));
  return out;
}

// Where inner chunk i (C order) starts inside its shard.
Shape inner_start(std::size_t i, const Shape& cps, const Shape& inner) {
  Shape idx(cps.size());
  for (std::size_t d = cps.size(); d-- > 0;) {
    idx[d] = static_cast<std::int64_t>(i % static_cast<std::size_t>(cps[d])) * inner[d];
    i /= static_cast<std::size_t>(cps[d]);
  }
  return idx;
}
}  // namespace

ShardingCodec::ShardingCodec(const Json& cfg, const ChunkSpec& shard_spec) : config_(cfg) {
  for (auto it = cfg.begin(); it != cfg.end(); ++it)
    if (it.key() != "chunk_shape" && it.key() != "codecs" && it.key() != "index_codecs" && it.key() != "index_location")
      cfg_fail("unexpected configuration key \"" + it.key() + "\"", cfg);
  const std::size_t r = shard_spec.shape.size();
  if (!cfg.contains("chunk_shape") || !cfg["chunk_shape"].is_array() || cfg["chunk_shape"].size() != r)
    cfg_fail("\"chunk_shape\" must be an array of " + std::to_string(r) + " integers", cfg);
  for (std::size_t d = 0; d < r; ++d) {
    const auto& e = cfg["chunk_shape"][d];
    if (!e.is_number_integer() || e.get<std::int64_t>() < 1) cfg_fail("\"chunk_shape\" entries must be integers >= 1", cfg);
    const auto c = e.get<std::int64_t>();
    if (shard_spec.shape[d] % c != 0)
      cfg_fail("inner chunk_shape " + cfg["chunk_shape"].dump() + " must divide the shard shape " +
                   shape_str(shard_spec.shape), cfg);
    inner_shape_.push_back(c);
    cps_.push_back(shard_spec.shape[d] / c);
  }
  if (cfg.contains("index_location")) {
    const auto& l = cfg["index_location"];
    if (l == "end") index_at_end_ = true;
    else if (l == "start") index_at_end_ = false;
    else cfg_fail("\"index_location\" must be \"start\" or \"end\"", cfg);
  }
  inner_ = CodecPipeline::from_metadata(codec_list(cfg, "codecs"), ChunkSpec{inner_shape_, shard_spec.dtype, shard_spec.fill_value});
  Shape ishape = cps_;
  ishape.push_back(2);
  index_ = CodecPipeline::from_metadata(codec_list(cfg, "index_codecs"),
                                        ChunkSpec{ishape, DataType::uint64, Bytes(8, 0xff)});
  const auto sz = index_.encoded_size();
  if (!sz) cfg_fail("\"index_codecs\" must have a fixed encoded size (e.g. bytes + crc32c)", cfg);
  index_size_ = *sz;
}

std::size_t ShardingCodec::max_encoded_size(const ChunkSpec&) const {
  return num_inner() * inner_.impl().max_encoded_size() + index_size_;
}

CodecMetadata ShardingCodec::to_metadata() const {
  Json cfg = Json::object();
  cfg["chunk_shape"] = inner_shape_;
  Json inner = Json::array(), index = Json::array();
  for (const auto& c : inner_.to_metadata()) inner.push_back(c.to_json());
  for (const auto& c : index_.to_metadata()) index.push_back(c.to_json());
  cfg["codecs"] = inner;
  cfg["index_codecs"] = index;
  cfg["index_location"] = index_at_end_ ? "end" : "start";
  return {"sharding_indexed", cfg};
}

std::vector<ShardingCodec::Entry> ShardingCodec::decode_index(std::span<const std::uint8_t> index_bytes,
                                                              std::optional<std::uint64_t> shard_size) const {
  const std::size_t n = num_inner();
  std::vector<std::uint64_t> raw(n * 2);
  if (index_bytes.size() != index_size_)
    shard_fail("shard index has " + std::to_string(index_bytes.size()) + " bytes, expected " + std::to_string(index_size_));
  index_.decode(index_bytes, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(raw.data()), raw.size() * 8));
  std::vector<Entry> entries(n);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> used;
  const std::uint64_t data_begin = index_at_end_ ? 0 : index_size_;
  for (std::size_t i = 0; i < n; ++i) {
    Entry e{raw[2 * i], raw[2 * i + 1]};
    if (e.empty()) continue;
    if (e.offset == kEmpty || e.nbytes == kEmpty)
      shard_fail("index entry " + std::to_string(i) + " is half empty (offset " + std::to_string(e.offset) +
                 ", nbytes " + std::to_string(e.nbytes) + ")");
    std::uint64_t end;
    if (__builtin_add_overflow(e.offset, e.nbytes, &end))
      shard_fail("index entry " + std::to_string(i) + " overflows (offset " + std::to_string(e.offset) + ", nbytes " +
                 std::to_string(e.nbytes) + ")");
    if (e.offset < data_begin) shard_fail("index entry " + std::to_string(i) + " points into the shard index");
    if (shard_size) {
      const std::uint64_t data_end = index_at_end_ ? *shard_size - std::min<std::uint64_t>(*shard_size, index_size_) : *shard_size;
      if (end > data_end)
        shard_fail("index entry " + std::to_string(i) + " (offset " + std::to_string(e.offset) + ", nbytes " +
                   std::to_string(e.nbytes) + ") points outside the shard of " + std::to_string(*shard_size) + " bytes");
    }
    used.emplace_back(e.offset, end);
    entries[i] = e;
  }
  std::sort(used.begin(), used.end());
  for (std::size_t i = 1; i < used.size(); ++i)
    if (used[i].first < used[i - 1].second)
      shard_fail("index entries overlap (bytes " + std::to_string(used[i].first) + ".." + std::to_string(used[i - 1].second) + ")");
  return entries;
}

Bytes ShardingCodec::assemble(const std::vector<std::optional<Bytes>>& inner) const {
  const std::size_t n = num_inner();
  if (inner.size() != n) throw CodecError("internal: wrong number of inner chunks for a shard");
  std::vector<std::uint64_t> raw(n * 2, kEmpty);
  std::uint64_t offset = index_at_end_ ? 0 : index_size_;
  bool any = false;
  for (std::size_t i = 0; i < n; ++i) {
    if (!inner[i]) continue;
    any = true;
    raw[2 * i] = offset;
    raw[2 * i + 1] = inner[i]->size();
    offset += inner[i]->size();
  }
  if (!any) return {};
  const Bytes index = index_.encode(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(raw.data()), raw.size() * 8));
  Bytes out;
  out.reserve(offset + (index_at_end_ ? index.size() : 0));
  if (!index_at_end_) out.insert(out.end(), index.begin(), index.end());
  for (const auto& c : inner)
    if (c) out.insert(out.end(), c->begin(), c->end());
  if (index_at_end_) out.insert(out.end(), index.begin(), index.end());
  return out;
}

Bytes ShardingCodec::encode(const ChunkSpec& spec, std::span<const std::uint8_t> data) const {
  const std::size_t n = num_inner();
  const std::size_t es = spec.dtype.size();
  const std::size_t inner_bytes = static_cast<std::size_t>(shape_size(inner_shape_)) * es;
  std::vector<std::optional<Bytes>> encoded(n);
  ThreadPool::global().parallel_for(n, default_concurrency(), [&](std::size_t i) {
    const Shape idx = inner_start(i, cps_, inner_shape_);
    Bytes buf(inner_bytes);
    extract_box(data.data(), spec.shape, idx, inner_shape_, buf.data(), es);
    if (all_equal(buf, spec.fill_value)) return;
    encoded[i] = inner_.encode(buf);
  });
  return assemble(encoded);
}

void ShardingCodec::decode(const ChunkSpec& spec, std::span<const std::uint8_t> encoded, std::span<std::uint8_t> out) const {
  if (encoded.size() < index_size_)
    shard_fail("shard of " + std::to_string(encoded.size()) + " bytes is too small for its " + std::to_string(index_size_) +
               "-byte index (truncated?)");
  const auto index_bytes = index_at_end_ ? encoded.subspan(encoded.size() - index_size_) : encoded.first(index_size_);
  const auto entries = decode_index(index_bytes, encoded.size());
  const std::size_t es = spec.dtype.size();
  const std::size_t inner_bytes = static_cast<std::size_t>(shape_size(inner_shape_)) * es;
  ThreadPool::global().parallel_for(entries.size(), default_concurrency(), [&](std::size_t i) {
    const Shape idx = inner_start(i, cps_, inner_shape_);
    Bytes buf(inner_bytes);
    if (entries[i].empty()) {
      fill_with(buf, spec.fill_value);
    } else {
      inner_.decode(encoded.subspan(entries[i].offset, entries[i].nbytes), buf);
    }
    insert_box(buf.data(), inner_shape_, out.data(), spec.shape, idx, es);
  });
}

}  // namespace zarrpp
