#pragma once
/// @file
/// Pictures of an array: its chunk map and a slice of its values as SVG (what `zarrpp show --svg`, Python's
/// `Array._repr_html_` and the growth guide's figures draw).
#include <string>

#include "zarrpp/array/array.hpp"

namespace zarrpp {

/// How to draw a chunk map.
struct ChunkMapOptions {
  int size =
      400;  ///< pixels of the grid's longer side, 16 to 8192 (the shorter keeps the proportion, at least size / 8)
  int max_cells = 40;  ///< cells along a side (1 to 500) before consecutive chunks are drawn as one cell
};

/// The chunk map of an array as a standalone SVG document: its domain in coordinates (chunks
/// before coordinate 0 left of or above it, coordinate 0 marked), the grid of stored objects
/// (shards when sharded, their inner chunks as thin lines) for regular, regular_bounded and
/// rectilinear grids, which objects are stored (filled) and where edge chunks pass the domain
/// (hatched), with the coordinates of the domain's bounds on the axes and a legend.
/// The last two dimensions are drawn (a 1-d array as one row); a cell of an array with more
/// dimensions stands for the chunks along the others, shaded by the share of them stored, and so
/// does a cell of `per` consecutive chunks when a side has more than `max_cells`. Each cell is a
/// `<rect>` of class "cell" and "stored", "empty" or "some" (and "edge" where it passes the
/// domain), with a `<title>` naming its chunks and coordinates. Lists the stored objects once.
std::string chunk_map_svg(const Array& array, const ChunkMapOptions& options = {});

/// How to draw a slice.
struct SliceImageOptions {
  int max_pixels =
      1024;             ///< elements along a side (1 to 4096) before the selection is strided down to at most this many
  bool coords = false;  ///< the selection's indices are coordinates of the domain (Array::coords())
};

/// A 2-d selection of a numeric array (slices and integers, e.g. "0, :, ::2") as a standalone SVG
/// document: the values in the viridis colour map from their least to their greatest (NaN grey),
/// a colour bar, the coordinates on the axes and the selection's path, data type and range in the
/// title. A side longer than `max_pixels` is read with a larger step (said in the title), so a
/// picture of a huge array holds at most max_pixels² values (though it reads every chunk they lie
/// in). The raster is a PNG inside the SVG.
/// ArgumentError when the selection does not leave two dimensions or has index arrays or masks;
/// UnsupportedError for data types that are not real numbers.
std::string slice_image_svg(const Array& array, const Selection& selection, const SliceImageOptions& options = {});

}  // namespace zarrpp
