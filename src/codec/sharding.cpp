// `sharding_indexed` (array -> bytes): many inner chunks in one stored object, with an index of
// (offset, nbytes) per inner chunk. The partial decoder and encoder here are the only sharding
// implementation: whole-shard encode and decode run through them too.
#include <algorithm>
#include <cstring>
#include <map>

#include "../core/buffer_ops.hpp"
#include "../core/waiting_threads.hpp"
#include "roles.hpp"
#include "zarrpp/core/thread_pool.hpp"

namespace zarrpp {
namespace {

const char* const kName = "sharding_indexed";

[[noreturn]] void shard_fail(const std::string& why) { decode_fail(kName, why); }

std::vector<CodecMetadata> codec_list(const Json& cfg, const char* key) {
  if (!cfg.contains(key) || !cfg[key].is_array())
    config_fail(kName, std::string("\"") + key + "\" must be an array of codecs", cfg);
  std::vector<CodecMetadata> out;
  for (std::size_t i = 0; i < cfg[key].size(); ++i)
    out.push_back(
        CodecMetadata::from_json(cfg[key][i], std::string(kName) + "." + key + "[" + std::to_string(i) + "]"));
  return out;
}

// Where inner chunk i (C order) starts inside its shard.
Shape inner_start(std::size_t i, const Shape& per, const Shape& inner) {
  Shape idx(per.size());
  for (std::size_t d = per.size(); d-- > 0;) {
    idx[d] = static_cast<std::int64_t>(i % static_cast<std::size_t>(per[d])) * inner[d];
    i /= static_cast<std::size_t>(per[d]);
  }
  return idx;
}

class ShardingCodecImpl final : public ArrayToBytesCodec,
                                public ShardOperations,
                                public std::enable_shared_from_this<ShardingCodecImpl> {
 public:
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};
  struct Entry {
    std::uint64_t offset = kEmpty;
    std::uint64_t nbytes = kEmpty;
    bool empty() const { return offset == kEmpty && nbytes == kEmpty; }
  };

  ShardingCodecImpl(const Json& cfg, const ChunkSpec& shard_spec, bool complete) : spec_(shard_spec) {
    allowed_keys(kName, cfg, {"chunk_shape", "codecs", "index_codecs", "index_location"});
    const std::size_t r = shard_spec.shape.size();
    if (!cfg.contains("chunk_shape") || !cfg["chunk_shape"].is_array() || cfg["chunk_shape"].size() != r)
      config_fail(kName, "\"chunk_shape\" must be an array of " + std::to_string(r) + " integers", cfg);
    for (std::size_t d = 0; d < r; ++d) {
      const auto& e = cfg["chunk_shape"][d];
      if (!e.is_number_integer() || e.get<std::int64_t>() < 1)
        config_fail(kName, "\"chunk_shape\" entries must be integers >= 1", cfg);
      const auto c = e.get<std::int64_t>();
      if (shard_spec.shape[d] % c != 0)
        config_fail(kName,
                    "inner chunk_shape " + cfg["chunk_shape"].dump() + " must divide the shard shape " +
                        shape_str(shard_spec.shape),
                    cfg);
      layout_.unit_shape.push_back(c);
      layout_.units_per_shard.push_back(shard_spec.shape[d] / c);
    }
    if (cfg.contains("index_location")) {
      const auto& l = cfg["index_location"];
      if (l == "end")
        index_at_end_ = true;
      else if (l == "start")
        index_at_end_ = false;
      else
        config_fail(kName, "\"index_location\" must be \"start\" or \"end\"", cfg);
    }
    const ChunkSpec inner_spec{layout_.unit_shape, shard_spec.dtype, shard_spec.fill_value, shard_spec.heap};
    Shape ishape = layout_.units_per_shard;
    ishape.push_back(2);
    const ChunkSpec index_spec{ishape, DataType::uint64, Bytes(8, 0xff)};
    inner_ = complete ? CodecPipeline::create(codec_list(cfg, "codecs"), inner_spec)
                      : CodecPipeline::from_metadata(codec_list(cfg, "codecs"), inner_spec);
    index_ = complete ? CodecPipeline::create(codec_list(cfg, "index_codecs"), index_spec)
                      : CodecPipeline::from_metadata(codec_list(cfg, "index_codecs"), index_spec);
    const auto sz = index_.encoded_size();
    if (!sz) config_fail(kName, "\"index_codecs\" must have a fixed encoded size (e.g. bytes + crc32c)", cfg);
    index_size_ = *sz;
  }

  std::string name() const override { return kName; }
  Bytes encode(const ChunkSpec& spec, std::span<const std::uint8_t> data) const override;
  void decode(const ChunkSpec& spec, std::span<const std::uint8_t> encoded, std::span<std::uint8_t> out) const override;
  std::optional<std::size_t> encoded_size(const ChunkSpec&) const override { return std::nullopt; }
  std::size_t max_encoded_size(const ChunkSpec&) const override {
    return num_units() * pipeline_impl(inner_).max_encoded_size() + index_size_;
  }
  CodecMetadata to_metadata() const override {
    Json cfg = Json::object();
    cfg["chunk_shape"] = layout_.unit_shape;
    Json inner = Json::array(), index = Json::array();
    for (const auto& c : inner_.to_metadata()) inner.push_back(c.to_json());
    for (const auto& c : index_.to_metadata()) index.push_back(c.to_json());
    cfg["codecs"] = inner;
    cfg["index_codecs"] = index;
    cfg["index_location"] = index_at_end_ ? "end" : "start";
    return {kName, cfg};
  }
  std::unique_ptr<PartialDecoder> partial_decoder(ChunkSource& src, std::size_t concurrency) const override;
  std::unique_ptr<PartialEncoder> partial_encoder(ChunkSource& src, const EncodeOptions& o) const override;
  const UnitLayout& unit_layout() const override { return layout_; }
  const CodecPipeline& unit_pipeline() const override { return inner_; }
  const ShardOperations* shard_operations() const override { return this; }

  std::size_t num_units() const { return static_cast<std::size_t>(shape_size(layout_.units_per_shard)); }
  const CodecPipeline& inner() const { return inner_; }
  const ChunkSpec& spec() const { return spec_; }
  const UnitLayout& layout() const { return layout_; }
  bool index_at_end() const { return index_at_end_; }
  std::size_t index_size() const { return index_size_; }
  ByteRange index_range() const {
    return index_at_end_ ? ByteRange::last(index_size_) : ByteRange::range(0, index_size_);
  }

  // Decodes and validates the index bytes. shard_size, when known, bounds every entry.
  std::vector<Entry> decode_index(std::span<const std::uint8_t> index_bytes,
                                  std::optional<std::uint64_t> shard_size) const;
  // Builds a shard from each inner chunk's encoded bytes (nullopt = empty). No chunk -> {}.
  Bytes assemble(const std::vector<std::optional<Bytes>>& inner_encoded) const;

 private:
  ChunkSpec spec_;
  UnitLayout layout_;
  CodecPipeline inner_, index_;
  bool index_at_end_ = true;
  std::size_t index_size_ = 0;
};

std::vector<ShardingCodecImpl::Entry> ShardingCodecImpl::decode_index(std::span<const std::uint8_t> index_bytes,
                                                                      std::optional<std::uint64_t> shard_size) const {
  const std::size_t n = num_units();
  std::vector<std::uint64_t> raw(n * 2);
  if (index_bytes.size() != index_size_)
    shard_fail("shard index has " + std::to_string(index_bytes.size()) + " bytes, expected " +
               std::to_string(index_size_));
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
      const std::uint64_t data_end =
          index_at_end_ ? *shard_size - std::min<std::uint64_t>(*shard_size, index_size_) : *shard_size;
      if (end > data_end)
        shard_fail("index entry " + std::to_string(i) + " (offset " + std::to_string(e.offset) + ", nbytes " +
                   std::to_string(e.nbytes) + ") points outside the shard of " + std::to_string(*shard_size) +
                   " bytes");
    }
    used.emplace_back(e.offset, end);
    entries[i] = e;
  }
  std::sort(used.begin(), used.end());
  for (std::size_t i = 1; i < used.size(); ++i)
    if (used[i].first < used[i - 1].second)
      shard_fail("index entries overlap (bytes " + std::to_string(used[i].first) + ".." +
                 std::to_string(used[i - 1].second) + ")");
  return entries;
}

Bytes ShardingCodecImpl::assemble(const std::vector<std::optional<Bytes>>& inner) const {
  const std::size_t n = num_units();
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
  const Bytes index =
      index_.encode(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(raw.data()), raw.size() * 8));
  Bytes out;
  out.reserve(offset + (index_at_end_ ? index.size() : 0));
  if (!index_at_end_) out.insert(out.end(), index.begin(), index.end());
  for (const auto& c : inner)
    if (c) out.insert(out.end(), c->begin(), c->end());
  if (index_at_end_) out.insert(out.end(), index.begin(), index.end());
  return out;
}

// ---- reading: the index, then only the inner chunks asked for ------------------------------------

class ShardDecoder final : public PartialDecoder {
 public:
  ShardDecoder(std::shared_ptr<const ShardingCodecImpl> c, ChunkSource& src, std::size_t concurrency)
      : c_(std::move(c)), src_(src), concurrency_(concurrency) {}

  void read(std::span<const UnitRead> requests, UnitSink& sink) override {
    in_context(src_, [&] {
      // A shard replaced between reading its index and its data (its version changed) is read
      // again from its new index: the index of one shard never locates the bytes of another.
      for (int attempt = 1;; ++attempt) {
        try {
          return read_all(requests, sink);
        } catch (const Replaced&) {
          src_.forget_index();
          if (attempt == kReplacedAttempts)
            shard_fail("shard was replaced while being read, " + std::to_string(attempt) + " times in a row");
        }
      }
    });
  }

 private:
  struct Replaced {};
  static constexpr int kReplacedAttempts = 5;
  static constexpr std::size_t kMaxWaitingRanges = 128;

  void read_all(std::span<const UnitRead> requests, UnitSink& sink) {
    const auto& c = *c_;
    bool cached = false;
    auto index = src_.read_index(c.index_range(), cached);
    if (!index) {
      for (std::size_t i = 0; i < requests.size(); ++i) sink.missing(i);
      return;
    }
    check_decoded_size(pipeline_impl(c.inner()).spec, "read");
    if (index->bytes.size() != c.index_size())
      shard_fail("shard is too small for its " + std::to_string(c.index_size()) + "-byte index (truncated?)");
    // With the index at the end, only the shard's size shows where the data must stop (a range
    // running into the index would be misread silently): ask for it. At the start, a short read
    // of a range already shows truncation.
    std::optional<std::uint64_t> shard_size;
    if (c.index_at_end()) {
      shard_size = index->value_size ? index->value_size : src_.size();  // a remote read tells it
      if (!shard_size) shard_fail("shard disappeared while being read");
    }
    const auto entries = c.decode_index(index->bytes, shard_size);
    struct Need {
      std::size_t request;
      ShardingCodecImpl::Entry e;
    };
    std::vector<Need> needs;
    for (std::size_t i = 0; i < requests.size(); ++i) {
      if (requests[i].unit >= entries.size()) throw CodecError("internal: inner chunk index out of range");
      const auto& e = entries[requests[i].unit];
      if (e.empty())
        sink.missing(i);
      else
        needs.push_back({i, e});
    }
    // A kept index is believed only when a data read checks its version: one that says every
    // inner chunk asked for is empty is asked again (they may have been written since).
    if (cached && needs.empty()) throw Replaced{};
    std::sort(needs.begin(), needs.end(), [](const Need& a, const Need& b) { return a.e.offset < b.e.offset; });
    // Coalesce neighbouring inner chunks into one range request when the gap is small: 16 KiB,
    // or 1 MiB on a remote store (a round trip is worth more bytes than that).
    // Local files: ranges of about 1 MiB, so each stays in cache between reading and decoding;
    // remote stores: up to 8 MiB (a round trip is worth many bytes, but one huge range would
    // leave the other threads idle). The ranges are fetched concurrently, each decoded as it
    // arrives (its inner chunks shared out again when threads are free); on a remote store all at
    // once, on threads that wait for them (detail::run_waiting), within the store's limit.
    const std::size_t in_flight = src_.reads_in_flight();
    const std::uint64_t kGap = in_flight > 1 ? std::uint64_t{1} << 20 : 16 * 1024;
    const std::uint64_t max_range = src_.streams_natively() ? std::uint64_t{1} << 20
                                    : concurrency_ > 1      ? std::uint64_t{8} << 20
                                                            : UINT64_MAX;
    struct Range {
      std::size_t first, last;  // needs[first, last)
      std::uint64_t begin, end;
    };
    std::vector<Range> ranges;
    for (std::size_t i = 0; i < needs.size();) {
      std::size_t j = i + 1;
      std::uint64_t end = needs[i].e.offset + needs[i].e.nbytes;
      while (j < needs.size() && needs[j].e.offset <= end + kGap && end - needs[i].e.offset < max_range) {
        end = std::max(end, needs[j].e.offset + needs[j].e.nbytes);
        ++j;
      }
      ranges.push_back({i, j, needs[i].e.offset, end});
      i = j;
    }
    const auto each_range = [&](const std::function<void(std::size_t)>& fn) {
      if (in_flight > 1 && ranges.size() > 1)
        detail::run_waiting(ranges.size(), std::min<std::size_t>(in_flight, kMaxWaitingRanges), fn);
      else
        ThreadPool::global().parallel_for(ranges.size(), concurrency_, fn);
    };
    each_range([&](std::size_t r) {
      const Range& g = ranges[r];
      auto data = src_.read(ByteRange::range(g.begin, g.end - g.begin));
      if (data && !data->version.empty() && !index->version.empty() && data->version != index->version)
        throw Replaced{};
      // An index kept from an earlier read whose shard is gone or cut since: read it again.
      if (cached && (!data || data->bytes.size() != g.end - g.begin)) throw Replaced{};
      if (!data || data->bytes.size() != g.end - g.begin)
        shard_fail("index points outside the shard (bytes " + std::to_string(g.begin) + ".." + std::to_string(g.end) +
                   " requested, shard truncated or changed)");
      ThreadPool::global().parallel_for(g.last - g.first, concurrency_, [&](std::size_t k) {
        const auto& n = needs[g.first + k];
        const std::span<const std::uint8_t> enc(data->bytes.data() + (n.e.offset - g.begin), n.e.nbytes);
        decode_unit(pipeline_impl(c.inner()), enc, requests[n.request], n.request, sink);
      });
    });
  }

  std::shared_ptr<const ShardingCodecImpl> c_;
  ChunkSource& src_;
  std::size_t concurrency_;
};

// ---- writing: only the inner chunks written are re-encoded; the others keep their bytes --------

class ShardEncoder final : public PartialEncoder {
 public:
  ShardEncoder(std::shared_ptr<const ShardingCodecImpl> c, ChunkSource& src, const EncodeOptions& o)
      : c_(std::move(c)), src_(src), o_(o) {}

  PendingWrite prepare(std::span<const UnitWrite> writes, UnitBuilder& builder) override {
    return in_context(src_, [&] { return prepare_all(writes, builder); });
  }
  bool needs_old(std::span<const UnitWrite> writes, UnitBuilder& builder) override {
    std::vector<char> keep(c_->num_units(), 0);
    return survivors(writes, builder, touched_units(writes), keep);
  }

 private:
  // unit -> index into writes, -1 when untouched.
  std::vector<std::int64_t> touched_units(std::span<const UnitWrite> writes) const {
    const std::size_t n = c_->num_units();
    std::vector<std::int64_t> touched(n, -1);
    for (std::size_t w = 0; w < writes.size(); ++w) {
      if (writes[w].unit >= n) throw CodecError("internal: inner chunk index out of range");
      touched[writes[w].unit] = static_cast<std::int64_t>(w);
    }
    return touched;
  }
  // Which untouched units survive (asked once each, into keep), and whether anything needs the
  // old shard.
  static bool survivors(std::span<const UnitWrite> writes, UnitBuilder& builder,
                        const std::vector<std::int64_t>& touched, std::vector<char>& keep) {
    bool need_old = false;
    for (std::size_t u = 0; u < touched.size(); ++u) {
      if (touched[u] >= 0) {
        need_old = need_old || !writes[static_cast<std::size_t>(touched[u])].covered;
      } else {
        keep[u] = builder.keep_untouched(u) ? 1 : 0;
        need_old = need_old || keep[u];
      }
    }
    return need_old;
  }

  PendingWrite prepare_all(std::span<const UnitWrite> writes, UnitBuilder& builder) {
    const auto& c = *c_;
    check_decoded_size(pipeline_impl(c.inner()).spec, "write");
    const std::size_t n = c.num_units();
    const auto touched = touched_units(writes);
    std::vector<char> keep(n, 0);
    const bool need_old = survivors(writes, builder, touched, keep);
    PendingWrite out;
    std::optional<VersionedBytes> old;
    std::vector<ShardingCodecImpl::Entry> entries;
    if (need_old) {
      out.read_old = true;
      old = src_.read(ByteRange::all());
      if (old) {
        out.based_on = old->version;
        const auto& b = old->bytes;
        if (b.size() < c.index_size())
          shard_fail("shard of " + std::to_string(b.size()) + " bytes is too small for its index (truncated?)");
        const auto ib = c.index_at_end() ? std::span<const std::uint8_t>(b).subspan(b.size() - c.index_size())
                                         : std::span<const std::uint8_t>(b).first(c.index_size());
        entries = c.decode_index(ib, b.size());
      }
    }
    const auto& inner = pipeline_impl(c.inner());
    const ChunkSpec& ispec = inner.spec;
    std::vector<std::optional<Bytes>> encoded(n);
    ThreadPool::global().parallel_for(n, o_.concurrency, [&](std::size_t u) {
      const bool has_old = old && !entries[u].empty();
      const auto old_bytes = [&] {
        return std::span<const std::uint8_t>(old->bytes).subspan(entries[u].offset, entries[u].nbytes);
      };
      if (touched[u] < 0) {  // untouched: keep its encoded bytes exactly, or drop it
        if (keep[u] && has_old) {
          const auto b = old_bytes();
          encoded[u] = Bytes(b.begin(), b.end());
        }
        return;
      }
      const auto w = static_cast<std::size_t>(touched[u]);
      Bytes buf(ispec.nbytes());
      bool had_old = false;
      if (!writes[w].covered && has_old) {
        inner.decode(old_bytes(), buf);
        had_old = true;
      }
      if (!had_old && !writes[w].covered) fill_with(buf, ispec.fill_value);  // a covered unit gets every element
      builder.build(w, buf, had_old);
      if (!o_.write_empty && all_equal(buf, ispec.fill_value)) return;
      encoded[u] = inner.encode_owned(std::move(buf));
    });
    out.bytes = c.assemble(encoded);
    out.kind = out.bytes.empty() ? PendingWrite::Kind::erase : PendingWrite::Kind::set;
    if (out.kind == PendingWrite::Kind::erase && old && n > 0) {
      // For stores without conditional erase: a shard holding one inner chunk of the fill value.
      Bytes fill(ispec.nbytes());
      fill_with(fill, ispec.fill_value);
      std::vector<std::optional<Bytes>> one(n);
      one[0] = inner.encode_owned(std::move(fill));
      out.fill_encoded = c.assemble(one);
    }
    return out;
  }

  std::shared_ptr<const ShardingCodecImpl> c_;
  ChunkSource& src_;
  EncodeOptions o_;
};

std::unique_ptr<PartialDecoder> ShardingCodecImpl::partial_decoder(ChunkSource& src, std::size_t concurrency) const {
  return std::make_unique<ShardDecoder>(shared_from_this(), src, concurrency);
}

std::unique_ptr<PartialEncoder> ShardingCodecImpl::partial_encoder(ChunkSource& src, const EncodeOptions& o) const {
  return std::make_unique<ShardEncoder>(shared_from_this(), src, o);
}

// ---- whole shards, through the same decoder and encoder ------------------------------------------

Bytes ShardingCodecImpl::encode(const ChunkSpec& spec, std::span<const std::uint8_t> data) const {
  struct FromData final : UnitBuilder {
    const ShardingCodecImpl& c;
    const ChunkSpec& spec;
    std::span<const std::uint8_t> data;
    FromData(const ShardingCodecImpl& cc, const ChunkSpec& s, std::span<const std::uint8_t> d)
        : c(cc), spec(s), data(d) {}
    void build(std::size_t u, std::span<std::uint8_t> buf, bool) override {
      extract_box(data.data(), spec.shape, inner_start(u, c.layout().units_per_shard, c.layout().unit_shape),
                  c.layout().unit_shape, buf.data(), spec.dtype.size());
    }
    bool keep_untouched(std::size_t) override { return false; }
  } builder(*this, spec, data);
  std::vector<UnitWrite> writes(num_units());
  for (std::size_t u = 0; u < writes.size(); ++u) writes[u] = UnitWrite{u, true, nullptr};
  BytesChunk nothing(std::nullopt, "shard");
  ShardEncoder enc(shared_from_this(), nothing,
                   EncodeOptions{.write_empty = false, .concurrency = default_concurrency()});
  return enc.prepare(writes, builder).bytes;
}

void ShardingCodecImpl::decode(const ChunkSpec& spec, std::span<const std::uint8_t> encoded,
                               std::span<std::uint8_t> out) const {
  struct IntoOutput final : UnitSink {
    const ShardingCodecImpl& c;
    const ChunkSpec& spec;
    std::span<std::uint8_t> out;
    const std::vector<UnitRead>& reqs;
    IntoOutput(const ShardingCodecImpl& cc, const ChunkSpec& s, std::span<std::uint8_t> o,
               const std::vector<UnitRead>& r)
        : c(cc), spec(s), out(o), reqs(r) {}
    Shape start(std::size_t i) const {
      return inner_start(reqs[i].unit, c.layout().units_per_shard, c.layout().unit_shape);
    }
    void missing(std::size_t i) override {
      Scratch buf(pipeline_impl(c.inner()).spec.nbytes());
      fill_with(buf.span(), spec.fill_value);
      insert_box(buf.data(), c.layout().unit_shape, out.data(), spec.shape, start(i), spec.dtype.size());
    }
    void decoded(std::size_t i, std::int64_t, std::int64_t, const std::uint8_t* data) override {
      insert_box(data, c.layout().unit_shape, out.data(), spec.shape, start(i), spec.dtype.size());
    }
  };
  if (encoded.size() < index_size_)
    shard_fail("shard of " + std::to_string(encoded.size()) + " bytes is too small for its " +
               std::to_string(index_size_) + "-byte index (truncated?)");
  std::vector<UnitRead> reqs(num_units());
  for (std::size_t u = 0; u < reqs.size(); ++u) reqs[u].unit = u;
  IntoOutput sink(*this, spec, out, reqs);
  BytesChunk src(encoded, "shard");
  ShardDecoder(shared_from_this(), src, default_concurrency()).read(reqs, sink);
}

}  // namespace

CodecEntry sharding_codec_entry() {
  CodecEntry e{kName, codec::Role::array_to_bytes};
  e.make_a2b = [](const Json& cfg, const ChunkSpec& in) { return std::make_shared<ShardingCodecImpl>(cfg, in, false); };
  // Completing a sharding configuration completes its inner and index pipelines.
  e.complete = [](const Json& cfg, const ChunkSpec& in) {
    auto c = std::make_shared<ShardingCodecImpl>(cfg, in, true);
    return *c->to_metadata().configuration;
  };
  return e;
}

CodecMetadata codec::Sharding::to_metadata(const DataType& dtype) const {
  Json cfg = Json::object();
  cfg["chunk_shape"] = chunk_shape;
  Json inner = Json::array(), index = Json::array();
  for (const auto& c : codec::to_metadata(codecs, dtype)) inner.push_back(c.to_json());
  for (const auto& c : codec::to_metadata(index_codecs, DataType::uint64)) index.push_back(c.to_json());
  cfg["codecs"] = inner;
  cfg["index_codecs"] = index;
  cfg["index_location"] = index_location == IndexLocation::end ? "end" : "start";
  return {kName, cfg};
}

}  // namespace zarrpp
