#pragma once
/// @file
/// NumPy-style selections. Indexing is zero-based (index 0 is the array's lower bound); a negative
/// index counts from the end, as in NumPy.
#include <cstdint>
#include <optional>
#include <string_view>
#include <variant>
#include <vector>

namespace zarrpp {

/// start:stop:step with NumPy semantics (negative steps too). Missing start/stop mean "from the
/// beginning"/"to the end" in the step's direction.
struct Slice {
  std::optional<std::int64_t> start;  ///< the first index (nullopt: from the beginning)
  std::optional<std::int64_t> stop;   ///< one past the last (nullopt: to the end)
  std::int64_t step = 1;              ///< the step, not 0
};
/// `slice(start, stop, step)`, as Python's `start:stop:step`.
inline Slice slice(std::optional<std::int64_t> start = std::nullopt, std::optional<std::int64_t> stop = std::nullopt,
                   std::int64_t step = 1) {
  return Slice{start, stop, step};
}
/// ":" — the whole dimension.
inline const Slice all{};
/// "..." — as many ":" as needed.
struct Ellipsis {};
inline constexpr Ellipsis ellipsis{};  ///< "...", as a value

/// Per-dimension integer arrays (any order, repeats allowed on read) and boolean masks select
/// orthogonally (zarr-python's oindex).
using IndexArray = std::vector<std::int64_t>;
/// A mask along one dimension: true selects the index.
using BoolArray = std::vector<bool>;
/// What selects along one dimension: an index, a slice, `...`, an index array or a mask.
using DimSelector = std::variant<std::int64_t, Slice, Ellipsis, IndexArray, BoolArray>;
/// A selection: one entry per dimension (missing trailing dimensions mean ":").
using Selection = std::vector<DimSelector>;

/// Points for coordinate selection (zarr-python's vindex): coords[d][k] is the index of point k
/// along dimension d. All dimensions give the same number of points.
using Coordinates = std::vector<std::vector<std::int64_t>>;

/// Parses NumPy syntax: "0:3, ::2", "-1", "...", ":, 5", "[0,2,5], :". Throws SelectionError
/// naming the offending part.
Selection parse_selection(std::string_view text);

/// What NumPy-style indexing (plan_index, indexing.hpp) does with a selection on an
/// array of `ndim` dimensions; one rule for both front ends (docs/architecture.md, "Selections"):
///   coordinates   one index per dimension, integers and integer arrays only, at least one array:
///                 the arrays (integers broadcast) pair up into points, as NumPy and zarr-python do;
///   numpy_advanced several arrays otherwise, a multi-dimensional one (`multi_dimensional`: the
///                 selection's arrays stand for arrays of other than one dimension), or one array
///                 with integers not next to it: NumPy's advanced indexing, whose result differs
///                 from an orthogonal selection;
///   orthogonal    everything else (ints, slices, ..., one array or boolean mask): each dimension
///                 indexed on its own.
enum class SelectionKind {
  orthogonal,     ///< each dimension on its own
  coordinates,    ///< integer arrays paired into points
  numpy_advanced  ///< NumPy's advanced indexing with integers between
};
/// The kind of a selection on an array of `ndim` dimensions (see above).
SelectionKind selection_kind(const Selection& sel, std::size_t ndim, bool multi_dimensional = false);

}  // namespace zarrpp
