#pragma once
/// @file
/// Local paths as the operating system means them, and paths that go into a zip file.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace zarrpp {

/// `path` as the operating system resolves it: absolute, without "." or repeated separators, and
/// each ".." taken after following the symbolic links before it, as open() and `ls` do (with
/// `link -> real/deep`, "link/../b.zarr" is "real/b.zarr", not "./b.zarr"). The parts after the
/// last ".." stay as written: a symbolic link there is kept, not replaced by its target. When the
/// OS cannot walk to the last ".." (a missing folder or a dangling link before it), the path is
/// returned as written (absolute), so using it fails as the OS fails.
std::filesystem::path os_path(const std::filesystem::path& path);

/// Where a path that is a zip file, or goes inside one ("data.zip/group/array"), points.
struct ZipPath {
  std::filesystem::path archive;  ///< the zip file (an os_path)
  std::string inner;              ///< the folder inside it, '/'-separated ("" for its root)
  bool new_archive = false;       ///< the archive does not exist yet
  /// Folders above a new archive that do not exist yet, outermost first (made before it).
  std::vector<std::filesystem::path> missing_dirs;
};

/// The zip file `path` is or goes inside: the first part of it (of its os_path) that is a regular
/// file, whatever its name. With `allow_new`, when no part is a file, the first part that does not
/// exist and ends in ".zip" is a new archive ("out/new.zip/array", as zarr-python 2 opens such
/// paths). nullopt: the path does not go into a zip file.
std::optional<ZipPath> find_zip_path(const std::filesystem::path& path, bool allow_new);

}  // namespace zarrpp
