#include "named_locks.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <utility>

#include "zarrpp/core/error.hpp"

namespace zarrpp::detail {

namespace {

std::string lock_dir() {
  if (const char* d = std::getenv("ZARRPP_LOCK_DIR"); d && *d) return d;
  return "/tmp/zarrpp-locks";
}

std::uint64_t hash_name(const std::string& s) {  // FNV-1a, 64 bits
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h & ((std::uint64_t{1} << 62) - 1);
}

// The ranges this thread holds: (lock file, offset) -> how many times.
using Held = std::map<std::pair<std::string, std::uint64_t>, int>;
Held& held() {
  thread_local Held h;
  return h;
}

// Each thread opens a lock file once and keeps it: its own open file description, so its ranges
// exclude every other thread's and process's (OFD locks belong to the description).
// A child made by fork() inherits the descriptors, and with them the parent's open file
// descriptions: it must open its own (and holds none of the parent's ranges).
struct ThreadFds {
  pid_t pid = ::getpid();
  std::map<std::string, int> fds;
  ~ThreadFds() {
    for (const auto& [p, fd] : fds) ::close(fd);  // releases anything still locked
  }
};
ThreadFds& thread_fds() {
  thread_local ThreadFds t;
  if (t.pid != ::getpid()) {
    for (const auto& [p, fd] : t.fds) ::close(fd);  // the parent's description stays open in the parent
    t.fds.clear();
    held().clear();
    t.pid = ::getpid();
  }
  return t;
}

class RangeLock final : public StoreLock {
 public:
  RangeLock(int fd, std::pair<std::string, std::uint64_t> key) : fd_(fd), key_(std::move(key)) {}
  ~RangeLock() override {
    // A forked child unwinding its parent's lock must not release it (the description is shared).
    if (pid_ != ::getpid()) return;
    auto& h = held();
    auto it = h.find(key_);
    if (it != h.end() && --it->second > 0) return;  // still held by an outer lock of this thread
    if (it != h.end()) h.erase(it);
    struct flock fl{};
    fl.l_type = F_UNLCK;
    fl.l_whence = SEEK_SET;
    fl.l_start = static_cast<off_t>(key_.second);
    fl.l_len = 1;
    ::fcntl(fd_, F_OFD_SETLK, &fl);
  }

 private:
  int fd_;
  std::pair<std::string, std::uint64_t> key_;
  pid_t pid_ = ::getpid();
};

// The lock file at `path` in `dir`, opened read-write; made (with `dir`) when missing. Created only
// when missing: with fs.protected_regular, opening another user's file in a sticky folder with
// O_CREAT fails even though it exists. -1 with errno on failure.
int open_lock_file(const std::string& dir, const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  if (fd >= 0 || errno != ENOENT) return fd;
  if (::mkdir(dir.c_str(), 0777) == 0) ::chmod(dir.c_str(), 01777);  // shared by every user, like /tmp
  fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
  if (fd < 0 && errno == EEXIST) fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  return fd;
}

}  // namespace

NamedLocks::NamedLocks(const struct stat& root, std::string describe_root)
    : dir_(lock_dir()), describe_root_(std::move(describe_root)) {
  // The folder and the file are made by the first lock taken, not here: opening a store to read
  // it writes nothing. One lock file per file system: names carry the identity (inode) of the directory a key's file
  // is in, so two stores opened on overlapping folders lock the same file under the same name,
  // and a process keeps one descriptor per file system and thread, however many stores it opens.
  path_ = dir_ + "/dev-" + std::to_string(root.st_dev);
}

std::unique_ptr<StoreLock> NamedLocks::lock(const std::string& name) const {
  std::pair<std::string, std::uint64_t> key{path_, hash_name(name)};
  auto& fds = thread_fds().fds;
  auto& h = held();
  auto f = fds.find(path_);
  if (f == fds.end()) {
    const int nfd = open_lock_file(dir_, path_);
    if (nfd < 0)
      throw StoreError("cannot lock '" + name + "' of " + describe_root_ + ": cannot open the lock file '" + path_ +
                       "': " + std::strerror(errno) + " (set ZARRPP_LOCK_DIR to a writable folder)");
    ::fchmod(nfd, 0666);  // other users' processes lock the same store too (fails harmlessly if not ours)
    f = fds.emplace(path_, nfd).first;
  }
  const int fd = f->second;
  if (auto it = h.find(key); it != h.end()) {
    ++it->second;
    return std::make_unique<RangeLock>(fd, std::move(key));
  }
  struct flock fl{};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = static_cast<off_t>(key.second);
  fl.l_len = 1;
  while (::fcntl(fd, F_OFD_SETLKW, &fl) != 0) {
    if (errno == EINTR) continue;
    const int e = errno;
    throw StoreError("cannot lock '" + name + "' of " + describe_root_ + " (lock file '" + path_ +
                     "'): " + std::strerror(e));
  }
  h.emplace(key, 1);
  return std::make_unique<RangeLock>(fd, std::move(key));
}

}  // namespace zarrpp::detail
