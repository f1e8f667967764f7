#pragma once
/// @file
/// The grid a new array gets when its creator asks for "auto" (zarr-python 3's rules), decided
/// once for the C++ API, the CLI (--chunks auto, --shards auto) and Python (chunks="auto",
/// shards="auto").
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "zarrpp/core/dtype.hpp"

namespace zarrpp {

/// zarr-python 3's chunks="auto" (h5py's rule as zarr-python adapted it): a target size of 256 KiB
/// times 2^log10(array size in MiB), kept within [128 KiB, max_bytes]; the dimensions are halved in
/// turn (rounding up), first to last, until the chunk is below the target or within half of it, and
/// below max_bytes. Every edge is at least 1. zarr-python's max_bytes is 64 MiB, and 1 MiB for the
/// inner chunks of a sharded array (`kShardedInnerChunkMaxBytes`).
inline constexpr std::size_t kAutoChunkMaxBytes = std::size_t{64} << 20;
inline constexpr std::size_t kShardedInnerChunkMaxBytes = std::size_t{1}
                                                          << 20;  ///< max_bytes of a shard's inner chunks
/// The chunk shape "auto" gives an array of `shape` whose elements take `itemsize` bytes (see above).
std::vector<std::int64_t> auto_chunks(const std::vector<std::int64_t>& shape, std::size_t itemsize,
                                      std::size_t max_bytes = kAutoChunkMaxBytes);
/// zarr-python 3's shards="auto": two chunks along dimensions holding more than 8 chunks, one
/// elsewhere; with `target_bytes` (zarr.config's array.target_shard_size_bytes), the same number n
/// of chunks along every dimension, the largest with n^ndim chunks within the target and n chunks
/// within each dimension of the array (at least 1).
std::vector<std::int64_t> auto_shards(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& chunks,
                                      std::size_t itemsize = 1, std::optional<std::size_t> target_bytes = std::nullopt);

/// The element size the "auto" rules take for `t`: its size, except that a variable-length
/// element (string, bytes) counts one byte, as zarr-python 3 sizes a type without a fixed size.
std::size_t auto_item_size(const DataType& t);
/// chunks="auto" for an array of `t`: auto_chunks at auto_item_size(t), within 64 MiB, or 1 MiB
/// when the chunks are a shard's inner chunks (`sharded`). What every front end asks.
std::vector<std::int64_t> auto_chunks(const std::vector<std::int64_t>& shape, const DataType& t, bool sharded);
/// shards="auto" for an array of `t` chunked by `chunks` (auto_shards at auto_item_size(t)).
std::vector<std::int64_t> auto_shards(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& chunks,
                                      const DataType& t, std::optional<std::size_t> target_bytes);

}  // namespace zarrpp
