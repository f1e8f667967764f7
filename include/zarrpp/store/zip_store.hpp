#pragma once
/// @file
/// A store in one zip file, as zarr-python's ZipStore (and zarr-python 2's) keeps it: each key is a
/// member of the archive named by the key, its bytes stored (or deflated).
///
/// What a zip file allows: members are read in place, but a member cannot be replaced or removed
/// without writing the archive again. So writes (and erases) are staged beside the archive, in a
/// folder of files that reads see at once, and commit() writes the whole archive anew — the
/// members kept copied as they are stored, the staged ones added — to a temporary file renamed
/// over the old one. A crash or a failed commit leaves the previous archive whole (and the staged
/// values in their folder, named in the error). close() commits; so does the destructor, which
/// warns instead of throwing. An archive that names a member more than once (zarr-python appends a
/// member again when a key is overwritten) reads as the last one, as Python's zipfile reads it;
/// a commit keeps that one only.
///
/// One writer at a time, across processes: a writer takes an exclusive lock (flock) on the archive
/// before it reads what it will change — at its first change, or when the array layer asks for a
/// lock (growth, before it reads zarr.json) — and holds it until close(). Taking it, the writer
/// reads the archive again (another writer may have committed since it was opened; versions read
/// before then no longer match), and checks that the file it locked is still the one at the path
/// (a commit renames a new file over it). A second writer — another ZipStore in this process or in
/// another — waits for the lock up to Options::lock_timeout, then gets ConflictError. Readers need
/// no lock: each operation of a store with nothing staged sees the last commit (the file is checked,
/// and read again when another writer has replaced it). The path is resolved (absolute, through
/// symlinks) when the store is opened, and a commit keeps the archive's mode, owner, folders and
/// comment. A store inherited by a forked child refuses to write there, and never commits.
///
/// Temporaries beside the archive (a commit's new archive, libzip's copy of it, the staged values)
/// carry this machine's tag and the writer's process id; a writer taking the lock removes those
/// of writers that are gone (killed during or before a commit).
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "zarrpp/store/store.hpp"

struct zip;  ///< libzip's archive (zip_t)

namespace zarrpp {

/// A store in a zip file, as zarr-python's ZipStore writes one: read in place, written into a new
/// archive that replaces the file when the store is closed.
class ZipStore : public Store {
 public:
  /// How the archive is opened (zarr-python's ZipStore modes).
  enum class Mode {
    read,      ///< "r": the archive must exist; every write is refused
    write,     ///< "w": a new archive (an existing one is replaced at the first commit)
    append,    ///< "a": the archive's members, and more (made if missing)
    exclusive  ///< "x": a new archive; an existing file is an error
  };
  /// How members written into the archive are compressed.
  enum class Compression {
    stored,   ///< not compressed (zarr-python's default)
    deflated  ///< deflate
  };
  /// How to open the archive: read-only, or writable (and how new members are compressed).
  struct Options {
    Mode mode = Mode::read;                         ///< how the archive is opened
    Compression compression = Compression::stored;  ///< of the members written (zarr-python's default)
    /// How long a writer waits for another writer's lock on the archive before ConflictError (0:
    /// refuse at once). The other holds it from its first change until it closes its store.
    std::chrono::milliseconds lock_timeout{60000};
  };
  /// StoreError (not_found, already_exists, conflict, store_failure) naming the file and why.
  static std::shared_ptr<ZipStore> open(const std::filesystem::path& path, Options options);
  /// Parses "r", "w", "a", "x"; ArgumentError otherwise.
  static Mode parse_mode(const std::string& mode);
  ~ZipStore() override;
  ZipStore(const ZipStore&) = delete;
  ZipStore& operator=(const ZipStore&) = delete;

  /// Writes the staged changes into the archive (nothing when there are none). Readers of the file
  /// see the old archive or the new one, never a mix.
  void commit();
  /// commit(), then releases the archive and the lock; the store cannot be used after.
  void close();
  bool closed() const;  ///< whether close() was called (using the store again reopens it)
  const std::filesystem::path& path() const { return path_; }  ///< the zip file
  Mode mode() const { return options_.mode; }                  ///< how the archive was opened

  StoreCapabilities capabilities() const override;
  std::string describe() const override { return "zip://" + path_.string(); }
  std::string location() const override;

 protected:
  std::optional<VersionedBytes> do_get(const std::string& key, const ByteRange& range,
                                       std::uint64_t max_bytes) override;
  void do_set(const std::string& key, const Bytes& value) override;
  void do_erase(const std::string& key) override;
  std::vector<std::string> do_list_prefix(const std::string& prefix) override;
  DirListing do_list_dir(const std::string& prefix) override;
  std::optional<std::uint64_t> do_size(const std::string& key) override;
  bool do_set_if(const std::string& key, const Bytes& value, const std::optional<Version>& expected) override;
  bool do_erase_if(const std::string& key, const std::optional<Version>& expected) override;
  std::unique_ptr<StoreLock> do_lock(const std::string& key) override;

 public:
  struct State;  ///< the open archive, the staged changes and the lock (zip_store.cpp)
  ZipStore(std::filesystem::path path, Options options, std::unique_ptr<State> state);

 private:
  /// Under mu_: reopen a store used after close() (as zarr-python's stores reopen on use; "w" and
  /// "x" then keep what was written, as "a"), and what a key holds now.
  void ensure_open();
  std::optional<Version> version_of(const std::string& key) const;
  std::optional<std::uint64_t> size_of(const std::string& key) const;
  bool listed(const std::string& name) const;              ///< whether a member or staged name reads as a key now
  void stage(const std::string& key, const Bytes* value);  ///< null: erase
  void commit_locked();                                    ///< write_archive(), remembering whether it failed
  void write_archive();
  std::size_t fill_new_archive(::zip* out);
  void replace_archive(const std::filesystem::path& tmp, const std::string& kept);
  std::filesystem::path path_;
  Options options_;
  mutable std::mutex mu_;
  std::unique_ptr<State> state_;
  ProcessLocks locks_;
};

}  // namespace zarrpp
