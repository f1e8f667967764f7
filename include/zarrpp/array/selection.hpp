#pragma once
// NumPy-style selections. Indexing is zero-based (index 0 is the array's lower bound); a negative
// index counts from the end, as in NumPy.
#include <cstdint>
#include <optional>
#include <string_view>
#include <variant>
#include <vector>

namespace zarrpp {

// start:stop:step with NumPy semantics (negative steps too). Missing start/stop mean "from the
// beginning"/"to the end" in the step's direction.
struct Slice {
  std::optional<std::int64_t> start;
  std::optional<std::int64_t> stop;
  std::int64_t step = 1;
};
inline Slice slice(std::optional<std::int64_t> start = std::nullopt, std::optional<std::int64_t> stop = std::nullopt,
                   std::int64_t step = 1) {
  return Slice{start, stop, step};
}
// ":" — the whole dimension.
inline const Slice all{};
// "..." — as many ":" as needed.
struct Ellipsis {};
inline constexpr Ellipsis ellipsis{};

// Per-dimension integer arrays (any order, repeats allowed on read) and boolean masks select
// orthogonally (zarr-python's oindex).
using IndexArray = std::vector<std::int64_t>;
using BoolArray = std::vector<bool>;
using DimSelector = std::variant<std::int64_t, Slice, Ellipsis, IndexArray, BoolArray>;
// A selection: one entry per dimension (missing trailing dimensions mean ":").
using Selection = std::vector<DimSelector>;

// Points for coordinate selection (zarr-python's vindex): coords[d][k] is the index of point k
// along dimension d. All dimensions give the same number of points.
using Coordinates = std::vector<std::vector<std::int64_t>>;

// Parses NumPy syntax: "0:3, ::2", "-1", "...", ":, 5", "[0,2,5], :". Throws SelectionError
// naming the offending part.
Selection parse_selection(std::string_view text);

}  // namespace zarrpp
