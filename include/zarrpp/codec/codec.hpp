#pragma once
/// @file
/// Codecs: typed configurations for the public API, codecs by name (the registry), and the
/// pipeline that encodes and decodes whole chunks.
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "zarrpp/core/ndarray.hpp"
#include "zarrpp/metadata/metadata.hpp"

namespace zarrpp {
namespace codec {

// Each codec's defaults, zarr-python 3's. The structs below and the registry entries (the CLI's
// shorthand, Python's codec classes, what a key left out means when an array is created) take
// them from here.
namespace defaults {
inline constexpr int zstd_level = 0;                     ///< zstd's own default level (3): the same bytes, stated as 0
inline constexpr bool zstd_checksum = false;             ///< zstd: no frame checksum
inline constexpr int gzip_level = 5;                     ///< gzip's level
inline constexpr std::string_view blosc_cname = "zstd";  ///< blosc's inner compressor
inline constexpr int blosc_clevel = 5;                   ///< blosc's level
inline constexpr int blosc_blocksize = 0;                ///< blosc's block size (0: automatic)
}  // namespace defaults

/// The byte order multi-byte elements are stored in.
enum class Endian {
  little,  ///< least significant byte first
  big      ///< most significant byte first
};
/// `bytes` (array -> bytes): C-order element bytes in the given byte order.
struct BytesCodec {
  Endian endian = Endian::little;                          ///< the stored byte order
  CodecMetadata to_metadata(const DataType& dtype) const;  ///< its zarr.json entry for arrays of `dtype`
};
/// `transpose` (array -> array): output dimension i is input dimension order[i].
struct Transpose {
  std::vector<std::int64_t> order;                         ///< the permutation of the dimensions
  CodecMetadata to_metadata(const DataType& dtype) const;  ///< its zarr.json entry for arrays of `dtype`
};
/// `gzip` (bytes -> bytes), RFC 1952.
struct Gzip {
  int level = defaults::gzip_level;                        ///< 0 to 9
  CodecMetadata to_metadata(const DataType& dtype) const;  ///< its zarr.json entry for arrays of `dtype`
};
/// `zstd` (bytes -> bytes).
struct Zstd {
  int level = defaults::zstd_level;                        ///< zstd's level (0: its default)
  bool checksum = defaults::zstd_checksum;                 ///< add zstd's frame checksum
  CodecMetadata to_metadata(const DataType& dtype) const;  ///< its zarr.json entry for arrays of `dtype`
};
/// `blosc` (bytes -> bytes), Blosc 1 frames. typesize 0 and shuffle Auto are resolved from the
/// data type when the array is created, and the resolved values are written into zarr.json.
struct Blosc {
  /// How Blosc reorders bytes before compressing.
  enum class Shuffle {
    Auto,       ///< bit-shuffle for 1-byte types, byte-shuffle otherwise
    NoShuffle,  ///< "noshuffle"
    Shuffle,    ///< "shuffle": bytes
    BitShuffle  ///< "bitshuffle": bits
  };
  std::string cname{defaults::blosc_cname};                ///< the inner compressor (lz4, zstd, blosclz, ...)
  int clevel = defaults::blosc_clevel;                     ///< its level, 0 to 9
  Shuffle shuffle = Shuffle::Auto;                         ///< the byte reordering
  int typesize = 0;                                        ///< element size for shuffling (0: the data type's)
  int blocksize = defaults::blosc_blocksize;               ///< block size (0: automatic)
  CodecMetadata to_metadata(const DataType& dtype) const;  ///< its zarr.json entry for arrays of `dtype`
};
/// `crc32c` (bytes -> bytes): appends a CRC32C and verifies it on decode.
struct Crc32c {
  CodecMetadata to_metadata(const DataType& dtype) const;  ///< its zarr.json entry for arrays of `dtype`
};
struct Sharding;

/// A codec: one of the typed configurations above, or any codec by name and configuration
/// (CodecMetadata, e.g. {"zstd", {{"level", 3}}}), as the registry knows it.
using Any = std::variant<BytesCodec, Transpose, Gzip, Zstd, Blosc, Crc32c, std::shared_ptr<Sharding>, CodecMetadata>;

/// `sharding_indexed` (array -> bytes).
struct Sharding {
  /// Where a shard's index lies.
  enum class IndexLocation {
    start,  ///< before the chunks
    end     ///< after the chunks (zarr-python's default)
  };
  std::vector<std::int64_t> chunk_shape;                     ///< inner chunk shape
  std::vector<Any> codecs = {BytesCodec{}};                  ///< inner pipeline
  std::vector<Any> index_codecs = {BytesCodec{}, Crc32c{}};  ///< must have a fixed size
  IndexLocation index_location = IndexLocation::end;         ///< where the index lies
  CodecMetadata to_metadata(const DataType& dtype) const;    ///< its zarr.json entry for arrays of `dtype`
};

/// @{
/// The metadata form of a codec for arrays of `dtype`. Automatic parameters are resolved when the
/// array is created (see CodecPipeline::create).
CodecMetadata to_metadata(const Any& c, const DataType& dtype);
std::vector<CodecMetadata> to_metadata(const std::vector<Any>& cs, const DataType& dtype);
/// @}

// ---- codecs by name (the registry) ----
/// Where a codec sits in a chain.
enum class Role {
  array_to_array,  ///< a filter (transpose, numcodecs filters)
  array_to_bytes,  ///< the serializer (bytes, vlen, sharding)
  bytes_to_bytes   ///< compressors and checksums
};
/// A codec zarrpp knows: its name and its role in a chain.
struct Info {
  std::string name;  ///< the codec's name in zarr.json
  Role role;         ///< where it sits in a chain
};
/// Every codec zarrpp can encode and decode.
std::vector<Info> known();
/// The role of a codec by name; nullopt when zarrpp does not know it.
std::optional<Role> role_of(std::string_view name);
/// A codec from its shorthand "NAME[:V1[:V2...]]": the values fill the codec's configuration keys
/// in order ("zstd:3" -> level 3; "blosc:lz4:5:bitshuffle" -> cname, clevel, shuffle), the keys
/// not given take their shorthand defaults. Numbers and true/false are JSON, the rest strings.
/// Throws ArgumentError naming the codec and the known ones.
CodecMetadata from_shorthand(std::string_view text);
/// The configuration keys of a codec's shorthand, in order ("" when it has none).
std::vector<std::string> shorthand_keys(std::string_view name);

// ---- Zarr v2 (numcodecs) filters and compressors ----
/// The codecs that decode a v2 array's chunks: transpose for order "F", the filters as
/// numcodecs.* codecs, bytes in the array's byte order, the compressor. UnsupportedError naming a
/// filter or compressor zarrpp does not implement.
std::vector<CodecMetadata> from_v2(const Json& compressor, const Json& filters, const DataType& dtype, bool big_endian,
                                   char order, std::size_t rank);
/// And back: what .zarray states for a codec chain; UnsupportedError naming a codec that has no
/// v2 form (sharding, crc32c, a transpose other than "F" order).
using V2Chain = ArrayMetadata::V2Form;
V2Chain to_v2(const std::vector<CodecMetadata>& codecs, const DataType& dtype, std::size_t rank);  ///< see above
/// A Zarr v2 array from its .zarray and .zattrs (null when absent): the fields as the metadata
/// layer reads them, the codecs and an object array's data type (named by its object codec) as
/// this layer does. MetadataError / UnsupportedError naming the field or codec.
ArrayMetadata from_v2_document(const Json& zarray, const Json& zattrs);
/// Makes (v3-form) metadata a Zarr v2 array: its codecs must have v2 equivalents (UnsupportedError
/// naming the codec otherwise), stated as .zarray states them, and the codecs become what a v2
/// reader decodes (e.g. blosc's typesize as numcodecs infers it). On v2 metadata it re-derives
/// compressor, filters, order and byte order from the codecs.
ArrayMetadata as_v2(const ArrayMetadata& m);

}  // namespace codec

/// Whether `s` is well-formed UTF-8 (what a "string" element must be).
bool is_valid_utf8(std::string_view s);

/// CRC32C (Castagnoli), as the crc32c codec computes it.
std::uint32_t crc32c(std::span<const std::uint8_t> data);
/// Incremental form: crc32c(a + b) == crc32c_finish(crc32c_update(crc32c_update(kCrc32cStart, a), b)).
inline constexpr std::uint32_t kCrc32cStart = 0xffffffffu;
/// @{
/// CRC32C in steps: start from kCrc32cStart, update with each piece, finish.
std::uint32_t crc32c_update(std::uint32_t state, std::span<const std::uint8_t> data);
inline std::uint32_t crc32c_finish(std::uint32_t state) { return ~state; }
/// @}

/// The strings of one read or write of a variable-length ("string" / "bytes") array. Its elements
/// are held in memory as 8-byte indices into this heap (index 0: the fill value), so chunks move
/// through the engine like fixed-size elements; the vlen-utf8/vlen-bytes codecs turn indices into
/// stored bytes and back. Thread-safe.
class VlenHeap {
 public:
  explicit VlenHeap(std::string fill);  ///< a heap whose index 0 is `fill`, the fill value
  /// Appends the strings; returns the index of the first.
  std::uint64_t add(std::vector<std::string>&& values);
  /// The string at each index (CodecError for an index the heap does not hold).
  std::vector<const std::string*> get(std::span<const std::uint64_t> indices) const;
  std::size_t size() const;  ///< strings held

 private:
  mutable std::mutex mu_;
  std::deque<std::string> items_;  ///< references stay valid as it grows
};

/// The decoded form of a chunk: its full shape, data type and fill value.
struct ChunkSpec {
  Shape shape;       ///< the chunk's shape (elements per dimension)
  DataType dtype;    ///< the elements' type
  Bytes fill_value;  ///< one element's bytes: the fill value
  /// Variable-length data types: the heap of the read or write under way (nullptr otherwise, and
  /// for pipelines that only describe the array).
  std::shared_ptr<VlenHeap> heap = nullptr;
  std::int64_t num_elements() const { return shape_size(shape); }  ///< elements in the chunk
  std::size_t nbytes() const {
    return static_cast<std::size_t>(num_elements()) * dtype.size();
  }  ///< the decoded chunk's size in bytes
};

/// A validated codec pipeline for one chunk spec. Chunks are handled decoded as C-order,
/// native-endian element bytes.
class CodecPipeline {
 public:
  /// An empty pipeline; create() gives a usable one.
  CodecPipeline();
  ~CodecPipeline();
  CodecPipeline(CodecPipeline&&) noexcept;
  CodecPipeline& operator=(CodecPipeline&&) noexcept;
  CodecPipeline(const CodecPipeline&);
  CodecPipeline& operator=(const CodecPipeline&);

  /// Builds and validates a pipeline as read from zarr.json (order and count of codec kinds,
  /// every configuration, strictly). Throws MetadataError / UnsupportedError.
  static CodecPipeline from_metadata(const std::vector<CodecMetadata>& codecs, const ChunkSpec& spec);
  /// The same for a new array: automatic parameters (blosc's typesize and shuffle) are resolved
  /// first, so to_metadata() states them.
  static CodecPipeline create(const std::vector<CodecMetadata>& codecs, const ChunkSpec& spec);
  /// The pipeline as zarr.json codecs.
  std::vector<CodecMetadata> to_metadata() const;

  /// Encodes a chunk (exactly spec().nbytes() bytes, C order) into its stored form.
  Bytes encode(std::span<const std::uint8_t> chunk) const;
  /// Decodes into `out` (exactly the chunk's nbytes). Throws CodecError on corrupt input.
  void decode(std::span<const std::uint8_t> encoded, std::span<std::uint8_t> out) const;
  /// The encoded size when every codec's output size is fixed (e.g. bytes + crc32c).
  std::optional<std::size_t> encoded_size() const;
  const ChunkSpec& spec() const;  ///< the chunk spec the pipeline was built for
  /// @{
  /// With sharding_indexed as the pipeline: the inner chunk shape and the inner pipeline's codecs;
  /// nullopt otherwise.
  std::optional<Shape> inner_chunk_shape() const;
  std::optional<std::vector<CodecMetadata>> inner_codecs() const;
  /// @}

  struct Impl;  ///< the codec layer's; opaque here

 private:
  friend const Impl& pipeline_impl(const CodecPipeline& p);
  std::unique_ptr<Impl> impl_;
};

}  // namespace zarrpp
