#pragma once
// Internal codec interfaces. Chunks travel decoded as C-order native-endian bytes.
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "zarrpp/codec/codec.hpp"
#include "zarrpp/core/error.hpp"
#include "zarrpp/store/store.hpp"

namespace zarrpp {

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
  virtual void decode(const ChunkSpec& spec, std::span<const std::uint8_t> encoded, std::span<std::uint8_t> out) const = 0;
  virtual std::optional<std::size_t> encoded_size(const ChunkSpec& spec) const = 0;
  // An upper bound on the encoded size, to refuse decompression bombs.
  virtual std::size_t max_encoded_size(const ChunkSpec& spec) const = 0;
  virtual CodecMetadata to_metadata() const = 0;
};

class BytesToBytesCodec {
 public:
  virtual ~BytesToBytesCodec() = default;
  virtual std::string name() const = 0;
  virtual Bytes encode(std::span<const std::uint8_t> in) const = 0;
  // Decodes into a buffer of at most max_out bytes; decoded output larger than that is an error.
  virtual Bytes decode(std::span<const std::uint8_t> in, std::size_t max_out) const = 0;
  // Decodes into `out`, which must be filled exactly; returns normally only if it was.
  virtual void decode_into(std::span<const std::uint8_t> in, std::span<std::uint8_t> out) const;
  // When the decoded bytes are a part of the input (a checksum: verified, then stripped), that
  // part, without copying; nullopt for codecs that transform.
  virtual std::optional<std::span<const std::uint8_t>> decode_view(std::span<const std::uint8_t>) const { return std::nullopt; }
  // Encodes a buffer the caller gives away (a checksum appends in place instead of copying).
  virtual Bytes encode_owned(Bytes&& in) const { return encode(in); }
  virtual std::optional<std::size_t> encoded_size(std::size_t in) const = 0;
  virtual std::size_t max_encoded_size(std::size_t in) const = 0;
  virtual CodecMetadata to_metadata() const = 0;
};

class ShardingCodec;

class CodecPipelineImpl {
 public:
  ChunkSpec spec;
  std::vector<std::shared_ptr<const ArrayToArrayCodec>> a2a;
  std::vector<ChunkSpec> a2a_specs;  // spec entering each a2a codec; back() -> the a2b spec
  ChunkSpec a2b_spec;
  std::shared_ptr<const ArrayToBytesCodec> a2b;
  std::vector<std::shared_ptr<const BytesToBytesCodec>> b2b;

  Bytes encode(std::span<const std::uint8_t> chunk) const;
  void decode(std::span<const std::uint8_t> encoded, std::span<std::uint8_t> out) const;
  // The decoded chunk as a part of `encoded` when decoding transforms nothing (native-endian
  // bytes, then only checksums, which are verified here); nullopt otherwise. Saves a copy.
  std::optional<std::span<const std::uint8_t>> decode_view(std::span<const std::uint8_t> encoded) const;
  // When the encoded chunk is the decoded bytes followed by at most one crc32c: the trailer's size
  // (0 or 4). Such chunks can be read in pieces, and without a checksum, in part.
  std::optional<std::size_t> plain_trailer() const;
  // Whether encode(x) == x (native-endian bytes and nothing else): the chunk can be stored as is.
  bool encodes_as_is() const;
  std::optional<std::size_t> encoded_size() const;
  std::size_t max_encoded_size() const;
  // The sharding codec when the pipeline is just [sharding_indexed] (so shards can be read and
  // written partially); nullptr otherwise.
  const ShardingCodec* sharding() const;
};

// sharding_indexed: an array->bytes codec that also offers partial access for the array layer.
class ShardingCodec : public ArrayToBytesCodec {
 public:
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};
  struct Entry {
    std::uint64_t offset = kEmpty;
    std::uint64_t nbytes = kEmpty;
    bool empty() const { return offset == kEmpty && nbytes == kEmpty; }
  };

  ShardingCodec(const Json& configuration, const ChunkSpec& shard_spec);
  std::string name() const override { return "sharding_indexed"; }
  Bytes encode(const ChunkSpec& spec, std::span<const std::uint8_t> data) const override;
  void decode(const ChunkSpec& spec, std::span<const std::uint8_t> encoded, std::span<std::uint8_t> out) const override;
  std::optional<std::size_t> encoded_size(const ChunkSpec&) const override { return std::nullopt; }
  std::size_t max_encoded_size(const ChunkSpec& spec) const override;
  CodecMetadata to_metadata() const override;

  const Shape& inner_shape() const { return inner_shape_; }
  const Shape& chunks_per_shard() const { return cps_; }
  std::size_t num_inner() const { return static_cast<std::size_t>(shape_size(cps_)); }
  const CodecPipeline& inner() const { return inner_; }
  bool index_at_end() const { return index_at_end_; }
  std::size_t index_size() const { return index_size_; }
  ByteRange index_range() const {
    return index_at_end_ ? ByteRange::last(index_size_) : ByteRange::range(0, index_size_);
  }
  // Decodes and validates the index bytes. shard_size, when known, bounds every entry.
  std::vector<Entry> decode_index(std::span<const std::uint8_t> index_bytes,
                                  std::optional<std::uint64_t> shard_size) const;
  // Builds a shard from each inner chunk's encoded bytes (nullopt = empty). Empty shard -> {}.
  Bytes assemble(const std::vector<std::optional<Bytes>>& inner_encoded) const;

 private:
  Shape inner_shape_, cps_;
  CodecPipeline inner_, index_;
  bool index_at_end_ = true;
  std::size_t index_size_ = 0;
  Json config_;
};

// Copies the box [start, start+shape) of a C-order array `src` (src_shape) into a C-order array
// `dst` of shape `shape`, or the reverse. Element size in bytes.
void extract_box(const std::uint8_t* src, const Shape& src_shape, const Shape& start, const Shape& shape,
                 std::uint8_t* dst, std::size_t esize);
void insert_box(const std::uint8_t* src, const Shape& shape, std::uint8_t* dst, const Shape& dst_shape,
                const Shape& start, std::size_t esize);
// Whether every element equals the fill value.
bool all_equal(std::span<const std::uint8_t> data, std::span<const std::uint8_t> value);
void fill_with(std::span<std::uint8_t> data, std::span<const std::uint8_t> value);

}  // namespace zarrpp
