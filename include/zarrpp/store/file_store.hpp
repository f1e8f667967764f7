#pragma once
#include <sys/types.h>
#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "zarrpp/store/store.hpp"

namespace zarrpp {

namespace detail {
class NamedLocks;
}

/// A directory on the local file system. Every set is atomic (temp file + rename), so readers never
/// see half a value. Writers of a key, and lock(), hold byte-range locks (F_OFD_SETLKW) on one lock
/// file per store root kept outside it ($ZARRPP_LOCK_DIR, default /tmp/zarrpp-locks), safe across
/// threads and processes of one machine, so writes conditioned on a version are atomic and nothing
/// is left in the user's folders. All access resolves beneath the root (openat2 RESOLVE_BENEATH): a
/// key can never reach a file outside it, not even through a symlink. A directory, FIFO or device
/// where a value should be is an error (never a hang, never "missing"). Symlinks inside the root
/// are followed for reading and listing; nothing is written or deleted through one (erasing a key
/// that is a symlink removes the link, never its target). Listing shows every entry reading can
/// see, FIFOs, symlinks out of the root or to nothing and empty directories included, so no
/// operation silently skips them.
class FileStore : public Store {
 public:
  /// How to open the folder (read-only, or writable).
  struct Options {
    /// true: a missing root directory is made (with its parents) by the first write, and reads see
    /// an empty store until then (a first write that fails leaves the folder, empty); false:
    /// opening fails when the root does not exist.
    bool create = true;
    bool fsync = false;      ///< fsync files and directories on every set (durability across power loss)
    bool read_only = false;  ///< refuse every write (StoreError read_only)
  };
  /// @{
  /// Opens the store rooted at `root`. Opening never creates anything: with Options::create (the
  /// default) a missing root is made by the first write (Array::create, Group::create, set).
  static std::shared_ptr<FileStore> open(const std::filesystem::path& root);
  static std::shared_ptr<FileStore> open(const std::filesystem::path& root, Options options);
  /// @}
  /// Use open(); public for std::make_shared.
  FileStore(std::filesystem::path root, Options options);
  ~FileStore() override;
  FileStore(const FileStore&) = delete;
  FileStore& operator=(const FileStore&) = delete;

  const std::filesystem::path& root() const { return root_; }  ///< the folder

  /// Where a key lives on disk (after validating it).
  std::filesystem::path path_of(const std::string& key) const;

  StoreCapabilities capabilities() const override {
    return {.writable = !options_.read_only,
            .listing = true,
            .conditional_writes = true,
            .conditional_erase = true,
            .locking = true,
            .native_streaming = true};
  }
  std::string describe() const override { return "file://" + root_.string(); }
  std::string location() const override;
  std::vector<std::string> identity_chain(const std::string& path) const override;
  /// A FileStore on the real parent of the canonical root (symlinks in the root's path resolved
  /// first, so the walk goes up where the files are), with this store's fsync and read_only.
  std::optional<Parent> parent() const override;

 protected:
  /// Versions name the file a key's value lives in (device, inode, size, modification and change
  /// times): every write renames a new file into place, so a new value is a new version.
  std::optional<VersionedBytes> do_get(const std::string& key, const ByteRange& range,
                                       std::uint64_t max_bytes) override;
  bool do_get_streamed(const std::string& key, const ByteRange& range, std::size_t piece,
                       const PieceSink& sink) override;
  void do_set(const std::string& key, const Bytes& value) override;
  bool do_set_if(const std::string& key, const Bytes& value, const std::optional<Version>& expected) override;
  bool do_erase_if(const std::string& key, const std::optional<Version>& expected) override;
  void do_erase(const std::string& key) override;
  void do_erase_prefix(const std::string& prefix) override;
  void do_prune_empty(const std::string& prefix) override;
  std::optional<std::uint64_t> do_size(const std::string& key) override;
  std::vector<std::string> do_list_prefix(const std::string& prefix) override;
  DirListing do_list_dir(const std::string& prefix) override;
  std::unique_ptr<StoreLock> do_lock(const std::string& key) override;
  void do_check_can_write(const std::string& key, const Bytes& probe) override;
  std::string do_explain_absent() override;

 private:
  /// dir_fd: the key's directory, already open (or -1).
  void write_atomic(const std::string& key, const Bytes& value, int dir_fd = -1);
  /// The key's file opened for reading, or -1 when it does not exist; other failures throw.
  int open_for_read(const std::string& key) const;
  void broken_link_check(const std::string& key) const;
  std::vector<std::string> missing_dirs(const std::string& key) const;
  void remove_dirs_made(const std::vector<std::string>& made) const;
  /// Listing (see do_list_prefix).
  enum class Entry { value, directory, other, gone };
  Entry classify(int dir_fd, const std::string& name, const std::string& rel, unsigned char type) const;
  int open_listed_dir(const std::string& dir) const;
  std::vector<std::pair<std::string, unsigned char>> entries_of(int dir_fd, const std::string& dir) const;
  void walk(const std::string& dir, const std::string& prefix, std::vector<std::string>& out,
            std::vector<std::pair<dev_t, ino_t>>& open_dirs) const;
  std::optional<Version> current_version(const std::string& key) const;
  int open_dir(const std::string& dir, bool create) const;  ///< -1 with errno when missing

  /// The lock name of a key; with dir_fd, also the key's directory opened (the caller closes it).
  std::string lock_name(const char* kind, const std::string& key, bool create_dir, int* dir_fd = nullptr) const;
  /// The root directory, opened the first time it is found (-1 while it does not exist; create:
  /// make it first), and the locks named by its identity.
  int root_fd(bool create) const;
  const detail::NamedLocks& locks() const;  ///< makes the root: only writers lock
  std::filesystem::path root_;
  Options options_;
  mutable std::mutex root_mu_;
  mutable std::atomic<int> root_fd_{-1};
  mutable std::unique_ptr<detail::NamedLocks> locks_;  ///< set before root_fd_

  /// Directories whose stale temporary files this store has already swept (once each).
  void sweep_stale_temps(int dir_fd, const std::string& dir);
  std::mutex sweep_mu_;
  std::set<std::string> swept_;
};

}  // namespace zarrpp
