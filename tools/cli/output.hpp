#pragma once
// Where a command's output goes: files that must not land inside the data being read, and
// standard output, whose failure (a full disk, /dev/full) must fail the command.
#include <string>

#include <zarrpp/zarrpp.hpp>

namespace zarrpp::cli {

// Before anything is read: refuses (ArgumentError naming `option`) an output FILE that is a
// directory, lies in a directory that does not exist, lies inside the local array `z` (its folder,
// or its zip file), or would replace a Zarr document (zarr.json, .zarray, .zgroup, .zattrs,
// .zmetadata) of any node. Links are followed as the write would follow them. "-" (standard
// output) passes.
void check_output(const std::string& file, const char* option, const Array& z);

// Sends std::cout through a buffer of its own that remembers why a write to standard output
// failed (errno is gone by the time the command ends). Called once, first thing in main.
void check_standard_output();

// Flushes standard output and says whether everything written there arrived: "" when it did,
// else why not (errno's text), for a one-line error and a non-zero exit.
std::string finish_standard_output();

}  // namespace zarrpp::cli
