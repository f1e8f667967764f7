#pragma once
// Inside the codec layer: one interface per codec role, the registry that finds a codec by name,
// and the pipeline that chains them. Chunks travel decoded as C-order native-endian bytes. Only
// files of src/codec/ include this; the array layer uses chunk_codec.hpp.
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chunk_codec.hpp"
#include "zarrpp/codec/codec.hpp"
#include "zarrpp/core/error.hpp"

namespace zarrpp {

class ShardOperations;

class ArrayToArrayCodec {
 public:
  virtual ~ArrayToArrayCodec() = default;
  virtual std::string name() const = 0;
  virtual ChunkSpec encoded_spec(const ChunkSpec& in) const = 0;
  virtual Bytes encode(const ChunkSpec& in, std::span<const std::uint8_t> data) const = 0;
  // `in` is the decoded spec; `data` is in the encoded spec's layout.
  virtual void decode(const ChunkSpec& in, std::span<const std::uint8_t> data, std::span<std::uint8_t> out) const = 0;
  virtual CodecMetadata to_metadata() const = 0;
};

class ArrayToBytesCodec {
 public:
  virtual ~ArrayToBytesCodec() = default;
  virtual std::string name() const = 0;
  virtual Bytes encode(const ChunkSpec& spec, std::span<const std::uint8_t> data) const = 0;
  virtual void decode(const ChunkSpec& spec, std::span<const std::uint8_t> encoded,
                      std::span<std::uint8_t> out) const = 0;
  virtual std::optional<std::size_t> encoded_size(const ChunkSpec& spec) const = 0;
  // An upper bound on the encoded size, to refuse decompression bombs.
  virtual std::size_t max_encoded_size(const ChunkSpec& spec) const = 0;
  virtual CodecMetadata to_metadata() const = 0;
  // Whether encoding is the identity on native C-order bytes (so it can be skipped).
  virtual bool native_identity() const { return false; }
  // Sharding's extra operations; nullptr for every other codec.
  virtual const ShardOperations* shard_operations() const { return nullptr; }
};

// What a codec that stores many units (inner chunks) in one object adds: reading and writing
// them partially, their layout and their own pipeline. Only sharding implements it.
class ShardOperations {
 public:
  virtual ~ShardOperations() = default;
  virtual std::unique_ptr<PartialDecoder> partial_decoder(ChunkSource&, std::size_t concurrency) const = 0;
  virtual std::unique_ptr<PartialEncoder> partial_encoder(ChunkSource&, const EncodeOptions&) const = 0;
  virtual const UnitLayout& unit_layout() const = 0;
  virtual const CodecPipeline& unit_pipeline() const = 0;
};

// The shard operations of a pipeline that is sharding alone (no codec before or after it, so
// units can be read and written in place); nullptr otherwise.
const ShardOperations* shard_operations(const CodecPipeline::Impl& p);

// Verifies a checksum trailer incrementally: fed the payload in order, then the trailer's bytes.
class TrailerCheck {
 public:
  virtual ~TrailerCheck() = default;
  virtual void update(std::span<const std::uint8_t> payload) = 0;
  // Throws CodecError when the trailer does not match what was fed.
  virtual void verify(std::span<const std::uint8_t> trailer) const = 0;
};

class BytesToBytesCodec {
 public:
  virtual ~BytesToBytesCodec() = default;
  virtual std::string name() const = 0;
  virtual Bytes encode(std::span<const std::uint8_t> in) const = 0;
  // Encodes a buffer the caller gives away (a checksum appends in place instead of copying).
  virtual Bytes encode_owned(Bytes&& in) const { return encode(in); }
  // Decodes into a buffer of at most max_out bytes; decoded output larger than that is an error.
  virtual Bytes decode(std::span<const std::uint8_t> in, std::size_t max_out) const = 0;
  // Decodes into `out`, which must be filled exactly; returns normally only if it was.
  virtual void decode_into(std::span<const std::uint8_t> in, std::span<std::uint8_t> out) const;
  // When the decoded bytes are a part of the input (a checksum: verified, then stripped), that
  // part, without copying; nullopt for codecs that transform.
  virtual std::optional<std::span<const std::uint8_t>> decode_view(std::span<const std::uint8_t>) const {
    return std::nullopt;
  }
  // Codecs that only append a checksum trailer: its size, and a checker fed the payload in
  // pieces (so a chunk can be verified while it streams in). 0 / nullptr for the others.
  virtual std::size_t trailer_size() const { return 0; }
  virtual std::unique_ptr<TrailerCheck> trailer_check() const { return nullptr; }
  virtual std::optional<std::size_t> encoded_size(std::size_t in) const = 0;
  virtual std::size_t max_encoded_size(std::size_t in) const = 0;
  virtual CodecMetadata to_metadata() const = 0;
  // The largest input the codec can encode (Blosc: 2 GB), nullopt when it has no limit.
  virtual std::optional<std::size_t> max_input() const { return std::nullopt; }
};

// ---- the registry --------------------------------------------------------------------------------

// One codec, as the registry knows it. Exactly one make_* is set, the one of its role.
struct CodecEntry {
  CodecEntry(std::string n, codec::Role r) : name(std::move(n)), role(r) {}
  std::string name;
  codec::Role role;
  // Validate a configuration strictly (as read from zarr.json) and build the codec for chunks of
  // `in` (the spec entering the codec). MetadataError names what is wrong.
  std::function<std::shared_ptr<const ArrayToArrayCodec>(const Json& cfg, const ChunkSpec& in)> make_a2a;
  std::function<std::shared_ptr<const ArrayToBytesCodec>(const Json& cfg, const ChunkSpec& in)> make_a2b;
  std::function<std::shared_ptr<const BytesToBytesCodec>(const Json& cfg, const ChunkSpec& in)> make_b2b;
  // When an array is created: fill in what a configuration leaves automatic (blosc's typesize
  // and shuffle), so zarr.json states it. Unset: the configuration is taken as given.
  std::function<Json(const Json& cfg, const ChunkSpec& in)> complete;
  // The configuration keys of the shorthand "name:v1:v2..." (CLI, Python), in order, each with
  // its default: the value used when it is not given, in the shorthand and when an array is
  // created (null: no default; `complete` resolves it or the codec does without).
  std::vector<std::pair<std::string, Json>> shorthand;
  // Its Zarr v2 identity. A compressor .zarray can state: the numcodecs id, numcodecs'
  // configuration (without "id") as this codec's for elements of `itemsize` bytes, and back.
  // numcodecs' filters need none: "numcodecs.<id>" is <id> with the same keys.
  struct V2Compressor {
    std::string id;
    std::function<Json(const Json& cfg, std::size_t itemsize)> from_v2;
    std::function<Json(const Json& cfg)> to_v2;
  };
  std::optional<V2Compressor> v2_compressor;
  // A serializer of a variable-length data type: which one. In Zarr v2 it is the object codec
  // (first filter of a "|O" array) of the same id.
  std::optional<DataType> holds;
};

// nullptr when no codec has that name.
const CodecEntry* find_codec(std::string_view name);
// The codec a Zarr v2 compressor id names (the first entry declaring it, so a native codec before
// its numcodecs alias); nullptr when none does.
const CodecEntry* find_v2_compressor(std::string_view id);
// The serializer of a variable-length data type; nullptr for other types.
const CodecEntry* find_serializer_of(const DataType& dtype);
// The ids find_v2_compressor knows, for messages ("blosc, zstd, ...").
std::string v2_compressor_ids();
const std::vector<CodecEntry>& codec_registry();

// Each codec's entry, defined in its own file.
CodecEntry bytes_codec_entry();
CodecEntry transpose_codec_entry();
CodecEntry gzip_codec_entry();
CodecEntry zstd_codec_entry();
CodecEntry blosc_codec_entry();
CodecEntry crc32c_codec_entry();
CodecEntry sharding_codec_entry();
CodecEntry vlen_utf8_codec_entry();
CodecEntry vlen_bytes_codec_entry();
// The numcodecs codecs ("numcodecs.<id>"), defined in numcodecs.cpp.
std::vector<CodecEntry> numcodecs_entries();
// numcodecs' Blosc configuration as the blosc codec's, for elements of `itemsize` bytes.
Json blosc_from_numcodecs(const Json& cfg, std::size_t itemsize);

// ---- helpers for codec configurations -----------------------------------------------------------

[[noreturn]] void config_fail(const std::string& codec, const std::string& why, const Json& cfg);
// Refuses keys other than `keys`.
void allowed_keys(const std::string& codec, const Json& cfg, std::initializer_list<const char*> keys);
// An integer in [lo, hi]; `def` when absent (required when nullopt).
std::int64_t config_int(const std::string& codec, const Json& cfg, const char* key, std::int64_t lo, std::int64_t hi,
                        std::optional<std::int64_t> def);
[[noreturn]] void decode_fail(const std::string& codec, const std::string& why);

// ---- the pipeline --------------------------------------------------------------------------------

struct CodecPipeline::Impl {
  ChunkSpec spec;
  std::vector<std::shared_ptr<const ArrayToArrayCodec>> a2a;
  std::vector<ChunkSpec> a2a_specs;  // spec entering each a2a codec
  ChunkSpec a2b_spec;
  std::shared_ptr<const ArrayToBytesCodec> a2b;
  std::vector<std::shared_ptr<const BytesToBytesCodec>> b2b;

  Bytes encode(std::span<const std::uint8_t> chunk) const;
  // Encodes a chunk buffer the caller gives away (no copy when encoding stores it as is).
  Bytes encode_owned(Bytes&& chunk) const;
  void decode(std::span<const std::uint8_t> encoded, std::span<std::uint8_t> out) const;
  // The decoded chunk as a part of `encoded` when decoding transforms nothing (native-endian
  // bytes, then only checksums, which are verified here); nullopt otherwise. Saves a copy.
  std::optional<std::span<const std::uint8_t>> decode_view(std::span<const std::uint8_t> encoded) const;
  // When an encoded chunk is the decoded bytes followed by at most one checksum trailer: its
  // size (0 or 4). Such chunks stream in slabs, and without a checksum can be read in part.
  std::optional<std::size_t> plain_trailer() const;
  // Whether encode(x) == x: the chunk can be stored as is.
  bool encodes_as_is() const;
  std::optional<std::size_t> encoded_size() const;
  std::size_t max_encoded_size() const;
};

// The pipeline's parts, for the codec layer's own files.
const CodecPipeline::Impl& pipeline_impl(const CodecPipeline& p);

// Decodes one unit's encoded bytes and hands it to the sink: into request r's direct target when
// it has one, else as a view of the stored bytes (uncompressed) or through a scratch buffer.
void decode_unit(const CodecPipeline::Impl& p, std::span<const std::uint8_t> encoded, const UnitRead& r, std::size_t i,
                 UnitSink& sink);

// Chunks are decoded whole into memory: sizes no machine can hold are refused with a clear
// LimitError ("cannot read: a chunk of shape ... exceeds zarrpp's limit of 4 GiB per decoded
// chunk") instead of a failed allocation. `what` is "read" or "write".
inline constexpr std::uint64_t kMaxDecodedChunk = std::uint64_t{4} << 30;
bool decoded_size_ok(const ChunkSpec& spec);
void check_decoded_size(const ChunkSpec& spec, const char* what);

// Runs f, naming the stored object in any CodecError it throws (and a cut response that brought
// its bytes, when the store finds one).
template <class F>
auto in_context(const ChunkSource& src, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const CodecError& e) {
    const std::string why = src.explain_unreadable();
    throw CodecError(e.code(), src.describe() + ": " + e.what() + (why.empty() ? "" : "; " + why));
  }
}

}  // namespace zarrpp
