#pragma once
#include <filesystem>
#include <mutex>

#include "zarrpp/store/store.hpp"

namespace zarrpp {

// A directory on the local file system. Every set is atomic (temp file + rename), so readers never
// see half a value; compare_and_set and lock() hold flock(2) locks, safe across processes. All
// access resolves beneath the root (openat2 RESOLVE_BENEATH): a key can never reach a file outside
// it, not even through a symlink; symlinks are not listed.
class FileStore : public Store {
 public:
  struct Options {
    bool create = true;  // create the root directory if missing
    bool fsync = false;  // fsync files and directories on every set (durability across power loss)
  };
  // Opens (by default creating) the store rooted at `root`.
  static std::shared_ptr<FileStore> open(const std::filesystem::path& root);
  static std::shared_ptr<FileStore> open(const std::filesystem::path& root, Options options);
  FileStore(std::filesystem::path root, Options options);
  ~FileStore() override;
  FileStore(const FileStore&) = delete;
  FileStore& operator=(const FileStore&) = delete;

  const std::filesystem::path& root() const { return root_; }
  // Where a key lives on disk (after validating it).
  std::filesystem::path path_of(const std::string& key) const;

  std::optional<Bytes> get(const std::string& key, const ByteRange& range = ByteRange::all()) override;
  bool get_streamed(const std::string& key, const ByteRange& range, std::size_t piece, const PieceSink& sink) override;
  bool streams_natively() const override { return true; }
  void set(const std::string& key, const Bytes& value) override;
  bool compare_and_set(const std::string& key, const std::optional<Bytes>& expected, const Bytes& value) override;
  void erase(const std::string& key) override;
  void erase_prefix(const std::string& prefix) override;
  bool exists(const std::string& key) override;
  std::optional<std::uint64_t> size(const std::string& key) override;
  std::vector<std::string> list_prefix(const std::string& prefix) override;
  DirListing list_dir(const std::string& prefix) override;
  std::unique_ptr<StoreLock> lock(const std::string& key) override;
  std::string describe() const override { return "file://" + root_.string(); }

 private:
  void write_atomic(const std::string& key, const Bytes& value);
  std::optional<Bytes> read_key(const std::string& key, const ByteRange& range) const;
  // The key's file opened for reading, or -1 when it does not exist; other failures throw.
  int open_for_read(const std::string& key) const;
  std::unique_ptr<StoreLock> lock_file(const std::string& key, const char* kind);
  int open_dir(const std::string& dir, bool create) const;  // -1 with errno when missing
  std::filesystem::path root_;
  int root_fd_ = -1;
  Options options_;
};

}  // namespace zarrpp
