#pragma once
// What a chunk grid becomes when its array's domain moves (prepend, append, resize): growth's
// grid arithmetic, on metadata alone.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "zarrpp/metadata/metadata.hpp"

namespace zarrpp {

// The grid growth in front needs: `regular` becomes `regular_bounded`, `rectilinear` becomes
// `rectilinear_bounded`, both with the domain and chunk 0 where they were (at 0).
ArrayMetadata as_bounded(const ArrayMetadata& in);
// A rectilinear_bounded dimension `d` stated as a bare size, listed instead: the chunks that
// cover its domain (at least one), where they are.
void list_dimension(ChunkGridMetadata& g, const Shape& shape, std::size_t d);
// Fits a rectilinear grid's listed chunks to the domain in `m` (its new lower bound and shape):
// chunks are added where the domain passes them (one chunk for the rest, or `chunk_size` pieces
// along `axis`; whole inner chunks of `inner`, the shards' inner chunk shape, empty when not
// sharded), and on `rectilinear_bounded` chunks wholly outside are dropped, keeping one; a domain
// moved clear of every listed chunk gets a list of its own. A `rectilinear` grid keeps every
// size, as zarr-python does. Other grids are left as they are.
void fit_runs(ArrayMetadata& m, const Shape& inner, std::size_t axis = SIZE_MAX, std::int64_t chunk_size = 0);
// `g` unbounded when every lower bound, origin and first chunk is 0 (`rectilinear_bounded` reads
// then as `rectilinear`, `regular_bounded` as `regular`, which more readers know).
ChunkGridMetadata unbounded_if_at_zero(ChunkGridMetadata g);

}  // namespace zarrpp
