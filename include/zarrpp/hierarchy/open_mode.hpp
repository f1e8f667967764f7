#pragma once
/// @file
/// zarr-python's open modes ("r", "r+", "a", "w", "w-", "x"), decided once for every front end.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "zarrpp/metadata/node_type.hpp"
#include "zarrpp/store/store.hpp"

namespace zarrpp {

/// How a node is opened: "r" and "r+" open one that exists (read-only, read-write), "a" opens it
/// or creates one, "w" creates one replacing whatever is there, "w-" (also spelled "x") creates one
/// where nothing is.
enum class OpenMode : std::uint8_t {
  r,       ///< "r": an existing node, read-only
  r_plus,  ///< "r+": an existing node, read-write
  a,       ///< "a": an existing node, or a new one
  w,       ///< "w": a new node, replacing what is there
  w_minus  ///< "w-" or "x": a new node where nothing is
};

/// `text` as an OpenMode; ArgumentError naming the modes otherwise.
OpenMode parse_open_mode(std::string_view text);

/// What opening a node of kind `wanted` in a mode does, decided from one look at what is there.
struct OpenDecision {
  /// The step to take.
  enum class Step : std::uint8_t {
    open,     ///< open the node that is there
    create,   ///< create a node (nothing is there)
    replace,  ///< create a node, replacing what may be there (mode "w"; the store was not asked)
    refuse    ///< the mode does not allow it: `found` says what is there (nothing, or the other kind)
  };
  Step step = Step::refuse;       ///< the step
  std::optional<NodeType> found;  ///< what is at the path (for refuse; unset for replace)
};

/// The one reading of an open mode: `decide_open(store, path, mode, wanted)` looks at the path once
/// (not at all for "w") and says whether to open, create, replace or refuse.
OpenDecision decide_open(const StorePtr& store, const std::string& path, OpenMode mode, NodeType wanted);

}  // namespace zarrpp
