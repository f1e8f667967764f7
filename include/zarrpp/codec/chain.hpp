#pragma once
/// @file
/// The one codec-chain builder: filters, a serializer, compressors, a checksum and shards, put in
/// the order Zarr v3 requires, with each codec's defaults from the registry. Array::create, the
/// CLI's create and copy, the Python binding and the benchmarks build every pipeline here.
#include <optional>
#include <string_view>
#include <vector>

#include "zarrpp/codec/codec.hpp"

namespace zarrpp {
namespace codec {

/// The parts of a pipeline, as zarr-python 3's create_array takes them.
struct ChainSpec {
  /// array -> array codecs, in order. A numcodecs filter that works on bytes (numcodecs.shuffle)
  /// is accepted here too, as zarr-python 2 states it, and goes after the serializer.
  std::vector<Any> filters = {};
  /// The array -> bytes codec; default: bytes (little endian), or vlen-utf8 / vlen-bytes for a
  /// string / bytes data type.
  std::optional<Any> serializer = std::nullopt;
  /// bytes -> bytes codecs, in order; nullopt: default_compressors().
  std::optional<std::vector<Any>> compressors = std::vector<Any>{};
  /// Append a crc32c checksum (after the compressors; nothing added when one is already last).
  bool crc32c = false;
  /// The shard shape, a multiple of the chunk shape: the chain is wrapped in sharding_indexed.
  OptionalShape shards = std::nullopt;
};

/// A built chain: the codecs, and the chunk shape of the grid (the shards when sharded).
struct Chain {
  std::vector<Any> codecs;  ///< the codecs in order
  Shape grid_chunks;        ///< the grid's chunk shape (the shard shape when sharded)
};

/// What "auto" compressors means: zstd with the registry's defaults (zarr-python 3's default).
std::vector<Any> default_compressors();

/// The chain for chunks of `chunks` elements of `dtype`. ArgumentError naming the part at fault:
/// a codec given in the wrong role ("compressors: 'bytes' is not a bytes -> bytes codec"), a
/// serializer that cannot hold the data type, shards of the wrong rank or not a multiple.
Chain build_chain(const ChainSpec& spec, const DataType& dtype, const Shape& chunks);

/// The parts of an existing pipeline (inside the shard when sharded): build_chain's inverse, with
/// a trailing crc32c as the `crc32c` flag. `grid_chunks` is the grid's chunk shape.
struct ChainParts {
  ChainSpec spec;  ///< the parts
  Shape chunks;    ///< the (inner) chunk shape
};
/// The parts of `codecs` (see ChainParts).
ChainParts split_chain(const std::vector<CodecMetadata>& codecs, const Shape& grid_chunks);

/// A codec's default configuration, from its registry entry ({"level": 0, "checksum": false} for
/// zstd); keys without a default (resolved from the data type) are left out. Empty for a codec
/// the registry does not know.
Json default_config(std::string_view name);

}  // namespace codec
}  // namespace zarrpp
