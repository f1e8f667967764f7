// Reading and writing a chunk that is one unit (not sharded): streamed slabs for uncompressed
// chunks on stores that stream (checksums verified on the way), zero-copy views of uncompressed
// bytes, decoding straight into the caller's memory, and the whole-chunk decoder for the rest.
// Shards have their own partial decoder and encoder (sharding.cpp).
#include <algorithm>
#include <cstring>

#include "../core/buffer_ops.hpp"
#include "roles.hpp"

namespace zarrpp {

// ---- sources ----------------------------------------------------------------------------------------

bool ChunkSource::read_streamed(const ByteRange& range, std::size_t piece, const Store::PieceSink& sink) {
  if (piece == 0) piece = 1;
  std::uint64_t total = 0, begin = 0;
  std::optional<VersionedBytes> v;
  if (range.kind == ByteRange::Kind::All) {
    v = read(range);
    if (!v) return false;
    total = v->bytes.size();
  } else {
    const auto sz = size();
    if (!sz) return false;
    const auto [b, e] = range.resolve(*sz);
    v = read(ByteRange::range(b, e - b));
    if (!v) return false;
    total = *sz;
    begin = b;
  }
  const std::span<const std::uint8_t> all(v->bytes);
  for (std::size_t off = 0; off < all.size(); off += piece)
    sink(total, begin + off, all.subspan(off, std::min(piece, all.size() - off)));
  return true;
}

std::optional<VersionedBytes> BytesChunk::read(const ByteRange& range) {
  if (!bytes_) return std::nullopt;
  const auto [b, e] = range.resolve(bytes_->size());
  return VersionedBytes{
      Bytes(bytes_->begin() + static_cast<std::ptrdiff_t>(b), bytes_->begin() + static_cast<std::ptrdiff_t>(e)), ""};
}

std::optional<std::uint64_t> BytesChunk::size() {
  if (!bytes_) return std::nullopt;
  return bytes_->size();
}

void check_chunks_writable(const CodecPipeline& pipeline) {
  const auto& p = pipeline_impl(pipeline);
  if (const ShardOperations* shards = shard_operations(p)) return check_chunks_writable(shards->unit_pipeline());
  if (!decoded_size_ok(p.spec))
    throw LimitError("a chunk of shape " + shape_str(p.spec.shape) + " of " + p.spec.dtype.name() +
                     " exceeds zarrpp's limit of 4 GiB per decoded chunk; choose smaller chunks");
  std::size_t in = p.a2b->max_encoded_size(p.a2b_spec);
  for (const auto& c : p.b2b) {
    if (const auto lim = c->max_input(); lim && in > *lim)
      throw LimitError("codec " + c->name() + " cannot encode a chunk of shape " + shape_str(p.spec.shape) + " of " +
                       p.spec.dtype.name() + ": up to " + std::to_string(in) + " bytes reach it, its limit is " +
                       std::to_string(*lim) + "; choose smaller chunks");
    in = c->max_encoded_size(in);
  }
}

std::uint64_t max_stored_size(const CodecPipeline& pipeline) {
  const auto& p = pipeline_impl(pipeline);
  if (const ShardOperations* shards = shard_operations(p)) {
    // Every inner chunk at its largest, plus the index and some slack for its layout.
    std::uint64_t units = 1;
    for (auto n : shards->unit_layout().units_per_shard)
      if (__builtin_mul_overflow(units, static_cast<std::uint64_t>(n), &units)) return kNoLimit;
    // Doubled: other writers may leave unused space in a shard (the format allows it).
    const std::uint64_t inner_max = max_stored_size(shards->unit_pipeline());
    std::uint64_t total = 0;
    if (inner_max > kNoLimit / 4 || __builtin_mul_overflow(units, 2 * (inner_max + 16), &total)) return kNoLimit;
    return total > kNoLimit - (std::uint64_t{64} << 20) ? kNoLimit : total + (std::uint64_t{64} << 20);
  }
  if (!decoded_size_ok(p.spec)) return kNoLimit;  // refused when decoded, with its own message
  return static_cast<std::uint64_t>(p.max_encoded_size()) + 4096;
}

bool decoded_size_ok(const ChunkSpec& spec) {
  std::int64_t n = 1;
  for (auto d : spec.shape)
    if (__builtin_mul_overflow(n, d, &n)) return false;
  std::uint64_t bytes;
  return !__builtin_mul_overflow(static_cast<std::uint64_t>(n), spec.dtype.size(), &bytes) && bytes <= kMaxDecodedChunk;
}

void check_decoded_size(const ChunkSpec& spec, const char* what) {
  if (!decoded_size_ok(spec))
    throw LimitError(std::string("cannot ") + what + ": a chunk of shape " + shape_str(spec.shape) + " and data type " +
                     spec.dtype.name() + " exceeds zarrpp's limit of 4 GiB per decoded chunk");
}

void decode_unit(const CodecPipeline::Impl& p, std::span<const std::uint8_t> enc, const UnitRead& r, std::size_t i,
                 UnitSink& sink) {
  const std::size_t nbytes = p.spec.nbytes();
  const std::int64_t slabs = p.spec.shape.empty() ? 1 : p.spec.shape[0];
  // Uncompressed: straight from the stored bytes (checksums verified in place).
  if (const auto v = p.decode_view(enc)) {
    if (!r.direct) return sink.decoded(i, 0, slabs, v->data());
    if (nbytes) std::memcpy(r.direct, v->data(), nbytes);
    return;
  }
  if (r.direct) return p.decode(enc, std::span<std::uint8_t>(r.direct, nbytes));
  Scratch buf(nbytes);
  p.decode(enc, buf.span());
  sink.decoded(i, 0, slabs, buf.data());
}

namespace {

using Impl = CodecPipeline::Impl;

// ---- decoding -----------------------------------------------------------------------------------------

class ChunkDecoder final : public PartialDecoder {
 public:
  ChunkDecoder(const Impl& p, ChunkSource& src) : p_(p), src_(src) {}

  void read(std::span<const UnitRead> requests, UnitSink& sink) override {
    for (std::size_t i = 0; i < requests.size(); ++i)
      in_context(src_, [&] {
        if (!streamed(requests[i], i, sink)) whole(requests[i], i, sink);
      });
  }

 private:
  // Uncompressed chunks (native bytes, at most a checksum after them) are read in pieces of whole
  // dimension-0 slabs through a small buffer that stays in cache, each piece handed on as it
  // arrives: one pass over memory, like memcpy, instead of reading the whole chunk and copying it
  // again. Without a checksum only the slabs the read touches are read. False when the chunk or
  // the request does not qualify.
  bool streamed(const UnitRead& r, std::size_t i, UnitSink& sink) {
    const auto trailer = p_.plain_trailer();
    const ChunkSpec& spec = p_.spec;
    if (!trailer || !r.slabs || spec.shape.empty() || !src_.streams_natively() || !decoded_size_ok(spec)) return false;
    std::uint64_t slab = spec.dtype.size();
    for (std::size_t d = 1; d < spec.shape.size(); ++d) slab *= static_cast<std::uint64_t>(spec.shape[d]);
    const std::uint64_t payload = spec.nbytes(), expected = payload + *trailer;
    if (slab == 0 || payload == 0) return false;
    const std::uint64_t per = std::max<std::uint64_t>(1, (std::uint64_t{256} << 10) / slab);
    const std::size_t piece = static_cast<std::size_t>(per * slab);
    const std::uint64_t first = static_cast<std::uint64_t>(r.first_slab) * slab;
    const std::uint64_t want_end = *trailer ? expected : static_cast<std::uint64_t>(r.end_slab) * slab;
    const ByteRange range = *trailer ? ByteRange::all() : ByteRange::range(first, want_end - first);
    const auto check = *trailer ? p_.b2b[0]->trailer_check() : nullptr;
    std::uint8_t stored_trailer[16] = {};
    std::uint64_t next = *trailer ? 0 : first;  // the next byte expected
    const bool found =
        src_.read_streamed(range, piece, [&](std::uint64_t total, std::uint64_t off, std::span<const std::uint8_t> b) {
          if (total != expected)
            decode_fail(p_.a2b->name(), "expected " + std::to_string(expected) + " bytes for a chunk of shape " +
                                            shape_str(spec.shape) + " and data type " + spec.dtype.name() +
                                            (*trailer ? " (plus its " + p_.b2b[0]->name() + ")" : "") + ", got " +
                                            std::to_string(total));
          if (off != next) throw StoreError("internal: pieces of " + src_.describe() + " arrived out of order");
          next = off + b.size();
          // The trailer's bytes (when the piece runs into it) are kept for the check, not handed on.
          for (std::uint64_t k = std::max(off, payload); k < off + b.size(); ++k)
            stored_trailer[k - payload] = b[k - off];
          const std::uint64_t pend = std::min<std::uint64_t>(off + b.size(), payload);
          if (pend <= off) return;
          const auto data = b.first(static_cast<std::size_t>(pend - off));
          if (check) check->update(data);
          // The slabs [a, e) of this piece that the read wants.
          const auto z0 = static_cast<std::int64_t>(off / slab), z1 = static_cast<std::int64_t>(pend / slab);
          const std::int64_t a = std::max(z0, r.first_slab), e = std::min(z1, r.end_slab);
          if (a < e) sink.decoded(i, a, e, data.data() + static_cast<std::size_t>(a - z0) * slab);
        });
    if (!found) {
      sink.missing(i);
      return true;
    }
    if (next != want_end)
      decode_fail(p_.a2b->name(), "chunk ended after " + std::to_string(next) + " of " + std::to_string(expected) +
                                      " bytes (truncated while being read?)");
    if (check) check->verify(std::span<const std::uint8_t>(stored_trailer, *trailer));
    return true;
  }

  void whole(const UnitRead& r, std::size_t i, UnitSink& sink) {
    auto bytes = src_.read(ByteRange::all());
    if (!bytes) return sink.missing(i);
    check_decoded_size(p_.spec, "read");
    decode_unit(p_, bytes->bytes, r, i, sink);
  }

  const Impl& p_;
  ChunkSource& src_;
};

// ---- encoding ---------------------------------------------------------------------------------------

class ChunkEncoder final : public PartialEncoder {
 public:
  ChunkEncoder(const Impl& p, ChunkSource& src, const EncodeOptions& o) : p_(p), src_(src), o_(o) {}

  PendingWrite prepare(std::span<const UnitWrite> writes, UnitBuilder& builder) override {
    if (writes.size() != 1 || writes[0].unit != 0)
      throw CodecError("internal: a chunk that is not sharded has one unit, 0");
    check_decoded_size(p_.spec, "write");
    return in_context(src_, [&] { return prepare_one(writes[0], builder); });
  }
  bool needs_old(std::span<const UnitWrite> writes, UnitBuilder&) override {
    return !writes.empty() && !writes[0].covered;
  }

 private:
  PendingWrite prepare_one(const UnitWrite& w, UnitBuilder& builder) {
    const ChunkSpec& spec = p_.spec;
    const std::size_t nbytes = spec.nbytes();
    PendingWrite out;
    if (w.covered && w.direct) {  // complete in the caller's memory: encode from there
      const std::span<const std::uint8_t> data(w.direct, nbytes);
      if (!o_.write_empty && all_equal(data, spec.fill_value)) {
        out.kind = PendingWrite::Kind::erase;
      } else {
        out.kind = PendingWrite::Kind::set;
        out.bytes = p_.encode(data);
      }
      return out;
    }
    Bytes buf;
    buf.reserve(nbytes + 16);  // room for a checksum appended in place
    buf.resize(nbytes);
    bool had_old = false;
    if (!w.covered) {
      out.read_old = true;
      if (auto old = src_.read(ByteRange::all())) {
        out.based_on = std::move(old->version);
        p_.decode(old->bytes, buf);
        had_old = true;
      }
    }
    // A covered unit gets every element from the builder: filling it first would be wasted.
    if (!had_old && !w.covered) fill_with(buf, spec.fill_value);
    builder.build(0, buf, had_old);
    if (!o_.write_empty && all_equal(buf, spec.fill_value)) {
      out.kind = PendingWrite::Kind::erase;
      if (had_old) out.fill_encoded = p_.encode_owned(std::move(buf));
    } else {
      out.kind = PendingWrite::Kind::set;
      out.bytes = p_.encode_owned(std::move(buf));  // uncompressed: the buffer itself, no copy
    }
    return out;
  }

  const Impl& p_;
  ChunkSource& src_;
  EncodeOptions o_;
};

}  // namespace

std::unique_ptr<PartialDecoder> partial_decoder(const CodecPipeline& pipeline, ChunkSource& source,
                                                std::size_t concurrency) {
  const auto& p = pipeline_impl(pipeline);
  if (const ShardOperations* shards = shard_operations(p)) return shards->partial_decoder(source, concurrency);
  return std::make_unique<ChunkDecoder>(p, source);
}

std::unique_ptr<PartialEncoder> partial_encoder(const CodecPipeline& pipeline, ChunkSource& source,
                                                const EncodeOptions& options) {
  const auto& p = pipeline_impl(pipeline);
  if (const ShardOperations* shards = shard_operations(p)) return shards->partial_encoder(source, options);
  return std::make_unique<ChunkEncoder>(p, source, options);
}

}  // namespace zarrpp
