#pragma once
/// @file
/// Writing a local file so that readers see the old file or the new one, never a partial one: what
/// `npy::Writer` (get --out) and the CLI's pictures write through.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>

namespace zarrpp {

/// A file written whole and then put in place. A regular file (new or existing) is written under a
/// temporary name (".NAME.zarrpp-tmp-<host>-<pid>-<n>", created exclusively, never through a link)
/// beside the file it replaces and renamed over it by commit(): until then, and if anything fails,
/// the old file is untouched and no partial file remains (the temporary is removed on every error
/// path, and by remove_unfinished_temporaries() on a signal). A symbolic link named as the path
/// stays a link: the file it points to (also one that does not exist yet) is replaced, keeping its
/// permissions. Anything else that exists there (a FIFO, /dev/stdout) is written in place; a
/// directory is refused (ArgumentError). The path "-" is standard output, written in place (a
/// failed write, e.g. a full disk, is a StoreError as for a file); so are /dev/stdout,
/// /dev/stderr, /dev/fd/N and /proc/self/fd/N, which name what the descriptor is (a pipe too).
class FileReplacement {
 public:
  /// Starts writing `path` (`what` names the file's kind in messages, e.g. ".npy").
  FileReplacement(const std::filesystem::path& path, const char* what);
  ~FileReplacement();  ///< without commit(): removes the temporary file
  FileReplacement(const FileReplacement&) = delete;
  FileReplacement& operator=(const FileReplacement&) = delete;
  /// Appends bytes (StoreError naming the file when the write fails, e.g. a full disk).
  void write(std::span<const std::uint8_t> bytes);
  /// The open file's descriptor, for a child process to write into (its output ends in this file).
  int descriptor() const;
  /// Closes the file and puts it in place (StoreError when that fails; the old file is then kept).
  void commit();
  /// The file that commit() replaces (a link's target when the path is a symbolic link).
  const std::filesystem::path& target() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Removes the temporary files of FileReplacements that have not committed. Async-signal-safe: for a
/// program's SIGINT/SIGTERM handler (the CLI's), so an interrupted command leaves no partial file. A
/// FileReplacement also removes, before it starts, temporaries of the same file left by processes of
/// this machine that are gone (killed with SIGKILL).
void remove_unfinished_file_temporaries() noexcept;

}  // namespace zarrpp
