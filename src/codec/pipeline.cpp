// The codec pipeline: array -> array codecs, one array -> bytes codec, bytes -> bytes codecs,
// built from zarr.json through the registry, encoding and decoding whole chunks.
#include <algorithm>
#include <cstring>

#include "roles.hpp"

namespace zarrpp {

void BytesToBytesCodec::decode_into(std::span<const std::uint8_t> in, std::span<std::uint8_t> out) const {
  const Bytes b = decode(in, out.size());
  if (b.size() != out.size())
    decode_fail(name(), "decoded " + std::to_string(b.size()) + " bytes, expected " + std::to_string(out.size()));
  if (!b.empty()) std::memcpy(out.data(), b.data(), b.size());
}

const CodecPipeline::Impl& pipeline_impl(const CodecPipeline& p) { return *p.impl_; }

// ---- whole chunks -----------------------------------------------------------------------------------

Bytes CodecPipeline::Impl::encode(std::span<const std::uint8_t> chunk) const {
  Bytes cur;
  std::span<const std::uint8_t> in = chunk;
  for (std::size_t i = 0; i < a2a.size(); ++i) {
    cur = a2a[i]->encode(a2a_specs[i], in);
    in = cur;
  }
  // Native-endian `bytes` is the identity: hand the chunk straight to the first bytes codec.
  const bool identity = a2b->native_identity() && !b2b.empty();
  Bytes b = identity ? b2b[0]->encode(in) : a2b->encode(a2b_spec, in);
  for (std::size_t i = identity ? 1 : 0; i < b2b.size(); ++i) b = b2b[i]->encode_owned(std::move(b));
  return b;
}

Bytes CodecPipeline::Impl::encode_owned(Bytes&& chunk) const {
  if (!a2a.empty() || !a2b->native_identity()) return encode(chunk);
  // The chunk's bytes are what `bytes` stores: each bytes codec takes them over.
  Bytes b = std::move(chunk);
  for (const auto& c : b2b) b = c->encode_owned(std::move(b));
  return b;
}

std::optional<std::size_t> CodecPipeline::Impl::plain_trailer() const {
  if (!a2a.empty() || !a2b->native_identity() || b2b.size() > 1) return std::nullopt;
  if (b2b.empty()) return 0;
  if (const auto t = b2b[0]->trailer_size(); t > 0 && b2b[0]->trailer_check()) return t;
  return std::nullopt;
}

bool CodecPipeline::Impl::encodes_as_is() const { return a2a.empty() && b2b.empty() && a2b->native_identity(); }

std::optional<std::span<const std::uint8_t>> CodecPipeline::Impl::decode_view(
    std::span<const std::uint8_t> encoded) const {
  if (!a2a.empty() || !a2b->native_identity()) return std::nullopt;
  std::span<const std::uint8_t> in = encoded;
  for (std::size_t i = b2b.size(); i-- > 0;) {
    auto v = b2b[i]->decode_view(in);
    if (!v) return std::nullopt;
    in = *v;
  }
  if (in.size() != spec.nbytes()) return std::nullopt;  // decode() reports it with the details
  return in;
}

void CodecPipeline::Impl::decode(std::span<const std::uint8_t> encoded, std::span<std::uint8_t> out) const {
  if (out.size() != spec.nbytes()) throw CodecError("internal: decode buffer has the wrong size");
  // Upper bounds of every stage's output, from the array->bytes size up.
  std::vector<std::size_t> bound(b2b.size() + 1);
  bound[0] = a2b->max_encoded_size(a2b_spec);
  for (std::size_t i = 0; i < b2b.size(); ++i) bound[i + 1] = b2b[i]->max_encoded_size(bound[i]);
  const auto fixed = a2b->encoded_size(a2b_spec);
  // Fast path: the last decode writes straight into `out` when nothing else stands between.
  const bool direct = a2a.empty() && fixed && *fixed == out.size() && a2b->native_identity();
  Bytes cur;
  std::span<const std::uint8_t> in = encoded;
  std::size_t views = b2b.size();  // trailing checksums are verified and stripped without copying
  while (views > 0) {
    auto v = b2b[views - 1]->decode_view(in);
    if (!v) break;
    in = *v;
    --views;
  }
  for (std::size_t i = views; i-- > 0;) {
    if (i == 0 && direct) {
      b2b[0]->decode_into(in, out);
      return;
    }
    if (i == 0 && fixed) {
      Bytes next(*fixed);
      b2b[0]->decode_into(in, next);
      cur = std::move(next);
    } else {
      cur = b2b[i]->decode(in, bound[i]);
    }
    in = cur;
  }
  if (a2a.empty()) {
    a2b->decode(a2b_spec, in, out);
    return;
  }
  Bytes arr(a2b_spec.nbytes());
  a2b->decode(a2b_spec, in, arr);
  for (std::size_t i = a2a.size(); i-- > 0;) {
    Bytes prev(a2a_specs[i].nbytes());
    a2a[i]->decode(a2a_specs[i], arr, i == 0 ? out : std::span<std::uint8_t>(prev));
    if (i == 0) return;
    arr = std::move(prev);
  }
}

std::optional<std::size_t> CodecPipeline::Impl::encoded_size() const {
  auto s = a2b->encoded_size(a2b_spec);
  for (const auto& c : b2b) {
    if (!s) return std::nullopt;
    s = c->encoded_size(*s);
  }
  return s;
}

std::size_t CodecPipeline::Impl::max_encoded_size() const {
  std::size_t s = a2b->max_encoded_size(a2b_spec);
  for (const auto& c : b2b) s = c->max_encoded_size(s);
  return s;
}

// ---- building -------------------------------------------------------------------------------------

CodecPipeline::CodecPipeline() : impl_(std::make_unique<Impl>()) {}
CodecPipeline::~CodecPipeline() = default;
CodecPipeline::CodecPipeline(CodecPipeline&&) noexcept = default;
CodecPipeline& CodecPipeline::operator=(CodecPipeline&&) noexcept = default;
CodecPipeline::CodecPipeline(const CodecPipeline& o) : impl_(std::make_unique<Impl>(*o.impl_)) {}
CodecPipeline& CodecPipeline::operator=(const CodecPipeline& o) {
  impl_ = std::make_unique<Impl>(*o.impl_);
  return *this;
}

namespace {

const Json kEmptyConfig = Json::object();
const Json& config_of(const CodecMetadata& m) { return m.configuration ? *m.configuration : kEmptyConfig; }

// A new array's configuration: the keys left out take the registry's defaults, then the codec
// resolves what depends on the data type.
Json completed(const CodecEntry& e, const Json& given, const ChunkSpec& in) {
  Json cfg = given;
  if (cfg.is_object())
    for (const auto& [key, def] : e.shorthand)
      if (!def.is_null() && (!cfg.contains(key) || cfg[key].is_null())) cfg[key] = def;
  return e.complete ? e.complete(cfg, in) : cfg;
}

void build(CodecPipeline::Impl& im, const std::vector<CodecMetadata>& codecs, const ChunkSpec& spec, bool complete) {
  im.spec = spec;
  if (codecs.empty()) throw MetadataError("codecs: at least one codec (an array -> bytes codec) is required");
  ChunkSpec cur = spec;
  int stage = 0;  // 0: array->array, 1: after array->bytes
  for (std::size_t i = 0; i < codecs.size(); ++i) {
    const auto& m = codecs[i];
    const std::string where = "codecs[" + std::to_string(i) + "] (" + m.name + ")";
    const CodecEntry* e = find_codec(m.name);
    if (!e) throw UnsupportedError(where + ": unknown codec \"" + m.name + "\"; zarrpp cannot decode this array");
    const Json cfg = complete ? completed(*e, config_of(m), cur) : config_of(m);
    switch (e->role) {
      case codec::Role::array_to_array: {
        if (stage != 0)
          throw MetadataError(where + ": an array -> array codec must come before the array -> bytes codec");
        auto c = e->make_a2a(cfg, cur);
        im.a2a.push_back(c);
        im.a2a_specs.push_back(cur);
        cur = c->encoded_spec(cur);
        break;
      }
      case codec::Role::array_to_bytes:
        if (stage != 0) throw MetadataError(where + ": only one array -> bytes codec is allowed");
        im.a2b = e->make_a2b(cfg, cur);
        im.a2b_spec = cur;
        stage = 1;
        break;
      case codec::Role::bytes_to_bytes:
        if (stage != 1)
          throw MetadataError(where + ": a bytes -> bytes codec must come after the array -> bytes codec");
        im.b2b.push_back(e->make_b2b(cfg, cur));
        break;
    }
  }
  if (!im.a2b) throw MetadataError("codecs: exactly one array -> bytes codec (e.g. \"bytes\") is required");
}

}  // namespace

CodecPipeline CodecPipeline::from_metadata(const std::vector<CodecMetadata>& codecs, const ChunkSpec& spec) {
  CodecPipeline p;
  build(*p.impl_, codecs, spec, false);
  return p;
}

CodecPipeline CodecPipeline::create(const std::vector<CodecMetadata>& codecs, const ChunkSpec& spec) {
  CodecPipeline p;
  build(*p.impl_, codecs, spec, true);
  return p;
}

std::vector<CodecMetadata> CodecPipeline::to_metadata() const {
  std::vector<CodecMetadata> out;
  for (const auto& c : impl_->a2a) out.push_back(c->to_metadata());
  out.push_back(impl_->a2b->to_metadata());
  for (const auto& c : impl_->b2b) out.push_back(c->to_metadata());
  return out;
}

Bytes CodecPipeline::encode(std::span<const std::uint8_t> chunk) const { return impl_->encode(chunk); }
void CodecPipeline::decode(std::span<const std::uint8_t> e, std::span<std::uint8_t> out) const {
  impl_->decode(e, out);
}
std::optional<std::size_t> CodecPipeline::encoded_size() const { return impl_->encoded_size(); }
const ChunkSpec& CodecPipeline::spec() const { return impl_->spec; }

std::optional<Shape> CodecPipeline::inner_chunk_shape() const {
  const auto l = unit_layout(*this);
  if (!l) return std::nullopt;
  return l->unit_shape;
}

std::optional<std::vector<CodecMetadata>> CodecPipeline::inner_codecs() const {
  const ShardOperations* shards = shard_operations(*impl_);
  if (!shards) return std::nullopt;
  return shards->unit_pipeline().to_metadata();
}

const ShardOperations* shard_operations(const CodecPipeline::Impl& p) {
  return p.a2a.empty() && p.b2b.empty() ? p.a2b->shard_operations() : nullptr;
}

std::optional<UnitLayout> unit_layout(const CodecPipeline& p) {
  const ShardOperations* shards = shard_operations(pipeline_impl(p));
  if (!shards) return std::nullopt;
  return shards->unit_layout();
}

// ---- typed configurations -----------------------------------------------------------------------

namespace codec {

CodecMetadata to_metadata(const Any& any, const DataType& dtype) {
  return std::visit(
      [&](const auto& c) -> CodecMetadata {
        using T = std::decay_t<decltype(c)>;
        if constexpr (std::is_same_v<T, CodecMetadata>) {
          return c;
        } else if constexpr (std::is_same_v<T, std::shared_ptr<Sharding>>) {
          if (!c) throw ArgumentError("codec sharding: null configuration");
          return c->to_metadata(dtype);
        } else {
          return c.to_metadata(dtype);
        }
      },
      any);
}

std::vector<CodecMetadata> to_metadata(const std::vector<Any>& cs, const DataType& dtype) {
  std::vector<CodecMetadata> out;
  for (const auto& c : cs) out.push_back(to_metadata(c, dtype));
  return out;
}

}  // namespace codec
}  // namespace zarrpp
