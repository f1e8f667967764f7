#pragma once
/// @file
/// NumPy-style index expressions understood once, for every front end: Python's z[...], z.oindex,
/// z.vindex, z.get_mask_selection and z.coords[...], and the CLI's SELECTION strings. An expression
/// is planned against the array's shape (one metadata snapshot) into an IndexPlan, which
/// Array::read / Array::write run. The rules are NumPy's and zarr-python's; docs/architecture.md,
/// "Selections", lists them and where zarr-python deliberately differs from NumPy.
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "zarrpp/core/ndarray.hpp"
#include "zarrpp/select/selection.hpp"

namespace zarrpp {

/// An index array of any number of dimensions (NumPy's advanced indices), values in C order.
struct IndexTensor {
  Shape shape;                       ///< its shape
  std::vector<std::int64_t> values;  ///< the indices, in C order
};
/// A boolean array of any number of dimensions (a mask), values (0 or 1) in C order.
struct MaskTensor {
  Shape shape;                       ///< its shape
  std::vector<std::uint8_t> values;  ///< 0 or 1 per element, in C order
};
/// One item of an index expression: an integer, a slice, `...`, an index array or a mask.
using IndexItem = std::variant<std::int64_t, Slice, Ellipsis, IndexTensor, MaskTensor>;
/// An index expression as Python writes one between brackets (plan_index plans it).
using IndexExpr = std::vector<IndexItem>;

/// Which indexing the expression is written for.
enum class IndexMode {
  numpy,       ///< z[...]: NumPy's rules (with zarr-python's deviations)
  basic,       ///< get/set_basic_selection: integers, slices and Ellipsis only
  orthogonal,  ///< z.oindex[...]: each dimension indexed on its own
  vindex,      ///< z.vindex[...]: integer arrays broadcast into points, or one mask
  mask,        ///< get/set_mask_selection: one boolean array of the array's shape
  blocks,      ///< z.blocks[...]: integers, step-1 slices and Ellipsis counting chunks (shards)
};

/// A selection planned against an array's shape (or domain): what Array::read and Array::write
/// take for every kind of selection (NumPy, orthogonal, vindex, mask, blocks).
struct IndexPlan {
  /// What kind of selection the plan is.
  enum class Kind {
    orthogonal,  ///< `selection`, read and written as it is
    points,      ///< `points`, one per element of a result of shape `shape`
    mask,        ///< `mask` (the array's shape): its true elements, in C order
    gather,      ///< NumPy advanced indexing: the box `selection`, then `gather` picks from it
    blocks,      ///< `selection` in units of stored objects (shards)
  };
  Kind kind = Kind::orthogonal;      ///< the kind of selection
  Selection selection;               ///< orthogonal, gather (the box) and blocks
  Coordinates points;                ///< points: one coordinate per dimension per element
  MaskTensor mask;                   ///< mask
  std::vector<std::int64_t> gather;  ///< per result element (C order), its flat position in the box
  Shape shape;                       ///< the result's shape (points, mask and gather)
  bool scalar = false;               ///< integers in every dimension: one element (Python: a scalar)
  bool advanced = false;             ///< NumPy advanced indexing (gather, or its points): read-only
  bool coords = false;               ///< indices are coordinates of the domain (Array::Coords)
  /// The shape of the array the plan was made for (plan_index states it, except in coordinates):
  /// Array::read and Array::write refuse the plan (ConflictError) when the array's shape is no
  /// longer that, rather than resolve its indices against another shape. None: resolved against
  /// the shape the array has when the plan runs (a plan made by hand).
  std::optional<Shape> planned_shape = std::nullopt;
};

/// Plans `expr` on an array of `shape`. With `coords`, indices are coordinates of the domain (no
/// counting from the end; the Coords reader checks them against the domain). SelectionError
/// (index_out_of_bounds, invalid_selection) naming the offending part otherwise.
IndexPlan plan_index(const IndexExpr& expr, const Shape& shape, IndexMode mode, bool coords = false);
/// A parsed selection (the CLI's strings; 1-d index arrays and masks) as an index expression.
IndexExpr index_expr(const Selection& sel);

}  // namespace zarrpp
