#pragma once
// The one rule for `...` in a selection, for every vocabulary that holds one (the CLI's Selection,
// Python's IndexExpr): at most one.
#include <algorithm>
#include <cstddef>
#include <variant>

#include "zarrpp/core/error.hpp"
#include "zarrpp/select/selection.hpp"

namespace zarrpp {

// How many `...` the items hold (0 or 1); SelectionError (invalid_index) for more.
template <class Items>
std::size_t ellipses_in(const Items& items) {
  const auto n =
      std::count_if(items.begin(), items.end(), [](const auto& x) { return std::holds_alternative<Ellipsis>(x); });
  if (n > 1) throw SelectionError(ErrorCode::invalid_index, "a selection can have only one ellipsis (...)");
  return static_cast<std::size_t>(n);
}

}  // namespace zarrpp
