#pragma once
// Temporary files carry "<host>-<writer>-" after their marker, so that a later process can tell a
// dead writer's leftovers from a live writer's work (file store chunks, zip files, `get --out`
// files). <writer> is "<pid>.<start>": the process id and its start time (clock ticks since boot),
// so a process id the system has given again to another process (pid_max may be 32768) does not
// keep a dead writer's files alive; "<pid>" alone (earlier versions) is still read.
#include <string>
#include <string_view>

namespace zarrpp::detail {

// This machine, in temporary file names (8 hex digits of its host name's hash).
const std::string& host_tag();
// This process in temporary file names: "<pid>.<start>" (computed again after a fork).
std::string writer_tag();
// Whether `tail` (what follows the marker in a temporary's name: "<host>-<writer>-...") names a
// process of this machine that is gone (no such process, or one that started at another time).
bool made_by_dead_writer(std::string_view tail);

}  // namespace zarrpp::detail
