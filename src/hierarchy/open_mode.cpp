// zarr-python's open modes, decided from one look at the path (include/zarrpp/hierarchy/open_mode.hpp).
#include "zarrpp/hierarchy/open_mode.hpp"

#include "zarrpp/core/error.hpp"
#include "zarrpp/hierarchy/group.hpp"

namespace zarrpp {

OpenMode parse_open_mode(std::string_view text) {
  if (text == "r") return OpenMode::r;
  if (text == "r+") return OpenMode::r_plus;
  if (text == "a") return OpenMode::a;
  if (text == "w") return OpenMode::w;
  if (text == "w-" || text == "x") return OpenMode::w_minus;
  throw ArgumentError("mode '" + std::string(text) + "' is not one of r, r+, a, w, w-, x");
}

OpenDecision decide_open(const StorePtr& store, const std::string& path, OpenMode mode, NodeType wanted) {
  using Step = OpenDecision::Step;
  if (mode == OpenMode::w) return {Step::replace, std::nullopt};
  const auto found = node_type(store, path);
  if (mode == OpenMode::w_minus) return {found ? Step::refuse : Step::create, found};
  if (found == wanted) return {Step::open, found};
  if (!found && mode == OpenMode::a) return {Step::create, found};
  return {Step::refuse, found};  // nothing there for r / r+, or a node of the other kind
}

}  // namespace zarrpp
