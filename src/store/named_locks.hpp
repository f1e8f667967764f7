#pragma once
// Exclusive locks by name for one local directory tree, between the threads and processes of this
// machine, that leave nothing in the user's folders: byte ranges (F_OFD_SETLKW) of one lock file per
// directory, kept in $ZARRPP_LOCK_DIR (default /tmp/zarrpp-locks) and named by the directory's device
// and inode. A name maps to a one-byte range at a 62-bit hash of it; a thread that already holds a
// range takes it again without waiting (so two names that hash alike cannot deadlock their own
// thread). Locks are released by the thread that took them.
#include <sys/stat.h>

#include <memory>
#include <string>

#include "zarrpp/store/store.hpp"

namespace zarrpp::detail {

class NamedLocks {
 public:
  // `root` is the directory the names belong to (its identity names the lock file).
  NamedLocks(const struct stat& root, std::string describe_root);
  std::unique_ptr<StoreLock> lock(const std::string& name) const;
  const std::string& path() const { return path_; }

 private:
  std::string dir_;            // the folder of lock files
  std::string path_;           // the lock file
  std::string describe_root_;  // for messages
};

}  // namespace zarrpp::detail
