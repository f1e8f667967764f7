#pragma once
/// @file
/// What a node of a Zarr hierarchy is.

namespace zarrpp {

/// What a node of a hierarchy is.
enum class NodeType {
  Array,  ///< an array
  Group   ///< a group
};

}  // namespace zarrpp
