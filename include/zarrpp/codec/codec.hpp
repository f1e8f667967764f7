#pragma once
// Typed codec configurations for the public API, and the pipeline that runs them.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "zarrpp/core/ndarray.hpp"
#include "zarrpp/metadata/metadata.hpp"

namespace zarrpp {
namespace codec {

enum class Endian { little, big };
// `bytes` (array -> bytes): C-order element bytes in the given byte order.
struct BytesCodec {
  Endian endian = Endian::little;
};
// `transpose` (array -> array): output dimension i is input dimension order[i].
struct Transpose {
  std::vector<std::int64_t> order;
};
// `gzip` (bytes -> bytes), RFC 1952.
struct Gzip {
  int level = 5;
};
// `zstd` (bytes -> bytes).
struct Zstd {
  int level = 0;
  bool checksum = false;
};
// `blosc` (bytes -> bytes), Blosc 1 frames. typesize 0 and shuffle Auto are resolved from the
// data type when the array is created, and the resolved values are written into zarr.json.
struct Blosc {
  enum class Shuffle { Auto, NoShuffle, Shuffle, BitShuffle };
  std::string cname = "lz4";
  int clevel = 5;
  Shuffle shuffle = Shuffle::Auto;
  int typesize = 0;
  int blocksize = 0;
};
// `crc32c` (bytes -> bytes): appends a CRC32C and verifies it on decode.
struct Crc32c {};
struct Sharding;

using Any = std::variant<BytesCodec, Transpose, Gzip, Zstd, Blosc, Crc32c, std::shared_ptr<Sharding>>;

// `sharding_indexed` (array -> bytes).
struct Sharding {
  enum class IndexLocation { start, end };
  std::vector<std::int64_t> chunk_shape;                     // inner chunk shape
  std::vector<Any> codecs = {BytesCodec{}};                  // inner pipeline
  std::vector<Any> index_codecs = {BytesCodec{}, Crc32c{}};  // must have a fixed size
  IndexLocation index_location = IndexLocation::end;
};

// The metadata form of a typed codec for arrays of `dtype` (automatic Blosc parameters resolved).
CodecMetadata to_metadata(const Any& c, const DataType& dtype);
std::vector<CodecMetadata> to_metadata(const std::vector<Any>& cs, const DataType& dtype);

}  // namespace codec

// CRC32C (Castagnoli), as the crc32c codec computes it.
std::uint32_t crc32c(std::span<const std::uint8_t> data);
// Incremental form: crc32c(a + b) == crc32c_finish(crc32c_update(crc32c_update(kCrc32cStart, a), b)).
inline constexpr std::uint32_t kCrc32cStart = 0xffffffffu;
std::uint32_t crc32c_update(std::uint32_t state, std::span<const std::uint8_t> data);
inline std::uint32_t crc32c_finish(std::uint32_t state) { return ~state; }

class CodecPipelineImpl;

// The decoded form of a chunk: its full shape, data type and fill value.
struct ChunkSpec {
  Shape shape;
  DataType dtype;
  Bytes fill_value;
  std::int64_t num_elements() const { return shape_size(shape); }
  std::size_t nbytes() const { return static_cast<std::size_t>(num_elements()) * dtype.size(); }
};

// A validated codec pipeline for one chunk spec. Chunks are handled decoded as C-order,
// native-endian element bytes.
class CodecPipeline {
 public:
  CodecPipeline();
  ~CodecPipeline();
  CodecPipeline(CodecPipeline&&) noexcept;
  CodecPipeline& operator=(CodecPipeline&&) noexcept;
  CodecPipeline(const CodecPipeline&);
  CodecPipeline& operator=(const CodecPipeline&);

  // Builds and validates a pipeline (order and count of codec kinds, every configuration);
  // resolves automatic parameters. Throws MetadataError / UnsupportedError.
  static CodecPipeline from_metadata(const std::vector<CodecMetadata>& codecs, const ChunkSpec& spec);
  // The pipeline as zarr.json codecs, with automatic parameters resolved.
  std::vector<CodecMetadata> to_metadata() const;

  Bytes encode(std::span<const std::uint8_t> chunk) const;
  // Decodes into `out` (exactly the chunk's nbytes). Throws CodecError on corrupt input.
  void decode(std::span<const std::uint8_t> encoded, std::span<std::uint8_t> out) const;
  // The encoded size when every codec's output size is fixed (e.g. bytes + crc32c).
  std::optional<std::size_t> encoded_size() const;
  const ChunkSpec& spec() const;

  const CodecPipelineImpl& impl() const { return *impl_; }

 private:
  std::unique_ptr<CodecPipelineImpl> impl_;
};

}  // namespace zarrpp
