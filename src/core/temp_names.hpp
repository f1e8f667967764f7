#pragma once
// Temporary files carry "<host>-<pid>-" after their marker, so that a later process can tell a
// dead writer's leftovers from a live writer's work (file store chunks, `get --out` files).
#include <string>
#include <string_view>

namespace zarrpp::detail {

// This machine, in temporary file names (8 hex digits of its host name's hash).
const std::string& host_tag();
// Whether `tail` (what follows the marker in a temporary's name: "<host>-<pid>-...") names a
// process of this machine that is gone.
bool made_by_dead_writer(std::string_view tail);

}  // namespace zarrpp::detail
