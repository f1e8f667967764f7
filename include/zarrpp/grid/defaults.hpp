#pragma once
// The grid a new array gets when its creator asks for "auto" (zarr-python 3's rules), decided
// once for the C++ API, the CLI (--chunks auto, --shards auto) and Python (chunks="auto",
// shards="auto").
#include <cstddef>
#include <cstdint>
#include <vector>

namespace zarrpp {

// Chunks of at most 1 MiB (`target_bytes`): the whole array, the longest dimension halved (rounding
// up) until the chunk fits; every chunk edge at least 1.
std::vector<std::int64_t> auto_chunks(const std::vector<std::int64_t>& shape, std::size_t itemsize,
                                      std::size_t target_bytes = std::size_t{1} << 20);
// Shards of two chunks along dimensions holding more than 8 chunks, one chunk elsewhere.
std::vector<std::int64_t> auto_shards(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& chunks);

}  // namespace zarrpp
