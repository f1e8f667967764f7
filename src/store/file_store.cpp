#include "zarrpp/store/file_store.hpp"

#include "zarrpp/store/local_path.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "../core/temp_names.hpp"
#include "named_locks.hpp"
#include "zarrpp/core/error.hpp"

namespace fs = std::filesystem;

namespace zarrpp {
namespace {

[[noreturn]] void sys_fail(const std::string& what, const fs::path& p, int err) {
  throw StoreError(what + " '" + p.string() + "': " + std::strerror(err));
}

struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  void reset(int f) {
    if (fd >= 0) ::close(fd);
    fd = f;
  }
};

bool is_internal_name(const std::string& name) { return name.rfind(".zarrpp-", 0) == 0; }

// Opens `rel` (relative to the directory `dirfd`) without ever leaving that directory:
// openat2(RESOLVE_BENEATH) where the kernel has it, else a component-by-component walk that
// refuses symlinks. Returns -1 with errno set; EXDEV/ELOOP mean "would leave the root".
// `no_symlinks`: refuse symlinks inside the root too (ELOOP): what writes and deletes go through.
int open_beneath(int dirfd, const std::string& rel, int flags, mode_t mode = 0, bool no_symlinks = false) {
  static std::atomic<bool> have_openat2{true};
  if (have_openat2.load(std::memory_order_relaxed)) {
    open_how how{};
    how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC);
    how.mode = (flags & O_CREAT) ? mode : 0;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | (no_symlinks ? RESOLVE_NO_SYMLINKS : 0);
    for (;;) {
      const long fd = ::syscall(SYS_openat2, dirfd, rel.c_str(), &how, sizeof how);
      if (fd >= 0) return static_cast<int>(fd);
      if (errno == EINTR || errno == EAGAIN) continue;
      if (errno != ENOSYS && errno != EPERM) return -1;
      break;
    }
    have_openat2 = false;
  }
  // Fallback: walk, refusing every symlink.
  int cur = ::dup(dirfd);
  if (cur < 0) return -1;
  std::size_t i = 0;
  for (;;) {
    const std::size_t j = rel.find('/', i);
    const std::string seg = rel.substr(i, j == std::string::npos ? std::string::npos : j - i);
    const bool last = j == std::string::npos;
    const int next =
        ::openat(cur, seg.c_str(), (last ? flags : (O_RDONLY | O_DIRECTORY)) | O_NOFOLLOW | O_CLOEXEC, mode);
    const int e = errno;
    ::close(cur);
    if (next < 0) {
      errno = e;
      return -1;
    }
    if (last) return next;
    cur = next;
    i = j + 1;
  }
}

bool escapes(int err) { return err == EXDEV || err == ELOOP; }

// Whether any component of root/dir is a symlink (listing and removal never go through one).
bool through_symlink(const fs::path& root, const std::string& dir) {
  fs::path p = root;
  std::size_t i = 0;
  while (i < dir.size()) {
    std::size_t j = dir.find('/', i);
    if (j == std::string::npos) j = dir.size();
    p /= dir.substr(i, j - i);
    std::error_code ec;
    if (fs::is_symlink(fs::symlink_status(p, ec))) return true;
    i = j + 1;
  }
  return false;
}

// The first symlink on the way from the root to root/rel ("" when there is none).
std::string first_symlink(const fs::path& root, const std::string& rel) {
  fs::path p = root;
  std::string at;
  for (std::size_t i = 0; i < rel.size();) {
    std::size_t j = rel.find('/', i);
    if (j == std::string::npos) j = rel.size();
    p /= rel.substr(i, j - i);
    at = rel.substr(0, j);
    std::error_code ec;
    if (fs::is_symlink(fs::symlink_status(p, ec))) return at;
    i = j + 1;
  }
  return "";
}

std::string link_target(const fs::path& p) {
  std::error_code ec;
  const auto t = fs::read_symlink(p, ec);
  return ec ? std::string("?") : t.string();
}

// Stores whose values are symlinks to elsewhere (git-annex, DataLad) land here, naming the link.
[[noreturn]] void escape_fail(const std::string& key, const fs::path& root) {
  const std::string link = first_symlink(root, key);
  if (link.empty())
    throw StoreError("store key '" + key + "' leads outside the store root '" + root.string() +
                     "' (through a symlink); refused");
  throw StoreError("'" + (root / link).string() + "' is a symlink leading outside the store root '" + root.string() +
                   "' (to '" + link_target(root / link) +
                   "'); zarrpp follows symlinks only inside the store (for git-annex or DataLad data, unlock the files "
                   "or copy them in with cp -L)");
}

// Writes and deletes never go through a symlink inside the root: its target may be shared by
// other keys (or lie outside), and would change with them.
[[noreturn]] void symlink_fail(const fs::path& root, const std::string& dir) {
  const std::string link = first_symlink(root, dir);
  if (link.empty()) escape_fail(dir, root);
  throw StoreError("'" + (root / link).string() + "' is a symlink (to '" + link_target(root / link) +
                   "'): zarrpp reads through symlinks inside the store but never writes or deletes through one, "
                   "since its target may be shared; replace the link by a real directory to write there");
}

// Splits "a/b/c" into ("a/b", "c").
std::pair<std::string, std::string> split_key(const std::string& key) {
  const auto slash = key.rfind('/');
  if (slash == std::string::npos) return {"", key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

Version version_of(const struct stat& st) {
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
         std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + ":" +
         std::to_string(st.st_ctim.tv_sec) + "." + std::to_string(st.st_ctim.tv_nsec);
}

// A directory, FIFO, socket or device where a stored value should be: an error, never a hang (the
// file was opened non-blocking) and never "missing".
void expect_regular(const struct stat& st, const fs::path& p) {
  if (S_ISREG(st.st_mode)) return;
  const char* what = S_ISDIR(st.st_mode)    ? "a directory"
                     : S_ISFIFO(st.st_mode) ? "a FIFO"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                     : S_ISCHR(st.st_mode)  ? "a character device"
                     : S_ISBLK(st.st_mode)  ? "a block device"
                                            : "not a regular file";
  throw StoreError("'" + p.string() + "' is " + what + ", not a stored value (a regular file)");
}

std::optional<VersionedBytes> read_fd(int fd, const fs::path& p, const ByteRange& range, std::uint64_t max_bytes) {
  Fd f(fd);
  struct stat st{};
  if (::fstat(f.fd, &st) != 0) sys_fail("cannot stat", p, errno);
  expect_regular(st, p);
  auto [b, e] = range.resolve(static_cast<std::uint64_t>(st.st_size));
  if (e - b > max_bytes)
    throw StoreError(ErrorCode::limit_exceeded, "'" + p.string() + "' holds " + std::to_string(e - b) +
                                                    " bytes, more than the " + std::to_string(max_bytes) + " expected");
  VersionedBytes out{Bytes(e - b), version_of(st)};
  std::size_t done = 0;
  while (done < out.bytes.size()) {
    const ssize_t n = ::pread(f.fd, out.bytes.data() + done, out.bytes.size() - done, static_cast<off_t>(b + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      sys_fail("cannot read", p, errno);
    }
    if (n == 0) break;  // truncated underneath us: return what exists
    done += static_cast<std::size_t>(n);
  }
  out.bytes.resize(done);
  return out;
}

std::atomic<std::uint64_t> g_tmp_counter{0};

}  // namespace

std::shared_ptr<FileStore> FileStore::open(const fs::path& root) { return open(root, Options{}); }

std::shared_ptr<FileStore> FileStore::open(const fs::path& root, Options options) {
  return std::make_shared<FileStore>(root, options);
}

FileStore::FileStore(fs::path root, Options options) : root_(std::move(root)), options_(options) {
  std::error_code ec;
  const auto st = fs::status(root_, ec);
  if (fs::exists(st) && !fs::is_directory(st)) {
    const char* what = fs::is_fifo(st)                                      ? "a FIFO"
                       : fs::is_regular_file(st)                            ? "a file"
                       : fs::is_socket(st)                                  ? "a socket"
                       : fs::is_character_file(st) || fs::is_block_file(st) ? "a device"
                                                                            : "not a directory";
    throw StoreError(ErrorCode::invalid_argument,
                     "'" + root_.string() + "' is " + what + ", not a directory (a Zarr store on disk is a directory)");
  }
  if (!fs::exists(st) && !options_.create)
    throw NotFoundError("store directory '" + root_.string() + "' does not exist");
  root_ = os_path(root_);  // "link/.." is where the OS goes, not the folder the text names
  (void)root_fd(false);    // opened now when it exists; otherwise made by the first write
}

FileStore::~FileStore() {
  if (const int fd = root_fd_.load(); fd >= 0) ::close(fd);
}

// Opening never creates anything: a missing root reads as an empty store and is created (with its
// parents) by the first write, so a mistyped path given for reading leaves no folder behind.
int FileStore::root_fd(bool create) const {
  if (const int fd = root_fd_.load(std::memory_order_acquire); fd >= 0) return fd;
  std::lock_guard lk(root_mu_);
  if (const int fd = root_fd_.load(std::memory_order_relaxed); fd >= 0) return fd;
  int fd = ::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT && create && !options_.create)
    throw NotFoundError("store directory '" + root_.string() + "' does not exist (any more)");
  if (fd < 0 && errno == ENOENT && create) {
    if (options_.read_only) throw StoreError(ErrorCode::read_only, "store " + describe() + " is read-only");
    std::error_code ec;
    fs::create_directories(root_, ec);
    if (ec) throw StoreError("cannot create store directory '" + root_.string() + "': " + ec.message());
    fd = ::open(root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  }
  if (fd < 0) {
    if (errno == ENOENT && !create) return -1;
    sys_fail("cannot open store directory", root_, errno);
  }
  struct stat st{};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    sys_fail("cannot stat store directory", root_, e);
  }
  locks_ = std::make_unique<detail::NamedLocks>(st, describe());
  root_fd_.store(fd, std::memory_order_release);
  return fd;
}

const detail::NamedLocks& FileStore::locks() const {
  (void)root_fd(true);
  return *locks_;
}

std::string FileStore::do_explain_absent() {
  return root_fd(false) < 0 ? "the directory '" + root_.string() + "' does not exist" : "";
}

int FileStore::open_dir(const std::string& dir, bool create) const {
  const int root = root_fd(create);
  if (root < 0) {
    errno = ENOENT;
    return -1;
  }
  if (dir.empty()) return ::dup(root);
  int fd = open_beneath(root, dir, O_RDONLY | O_DIRECTORY, 0, true);
  if (fd >= 0 || !create || errno != ENOENT) {
    if (fd < 0 && escapes(errno)) symlink_fail(root_, dir);
    return fd;
  }
  // Create missing directories one component at a time, each beneath the previous one.
  int cur = ::dup(root);
  std::size_t i = 0;
  for (;;) {
    const std::size_t j = dir.find('/', i);
    const std::string seg = dir.substr(i, j == std::string::npos ? std::string::npos : j - i);
    if (::mkdirat(cur, seg.c_str(), 0755) != 0 && errno != EEXIST) {
      const int e = errno;
      ::close(cur);
      sys_fail("cannot create directory", root_ / dir, e);
    }
    const int next = open_beneath(cur, seg, O_RDONLY | O_DIRECTORY, 0, true);
    const int e = errno;
    ::close(cur);
    if (next < 0) {
      if (escapes(e)) symlink_fail(root_, dir);
      sys_fail("cannot open directory", root_ / dir, e);
    }
    if (j == std::string::npos) return next;
    cur = next;
    i = j + 1;
  }
}

fs::path FileStore::path_of(const std::string& key) const {
  validate_key(key);
  return root_ / key;
}

using detail::host_tag;

// Temporary files of writes that were killed: a temp file is stale when it was made on this
// machine by a process that is gone and is more than a minute old, or when it is more than a day
// old whatever its name says (a writer on another machine sharing the folder).
void FileStore::sweep_stale_temps(int dir_fd, const std::string& dir) {
  {
    std::lock_guard lk(sweep_mu_);
    if (!swept_.insert(dir).second) return;
  }
  const int fd = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  DIR* dp = ::fdopendir(fd);
  if (!dp) {
    ::close(fd);
    return;
  }
  const auto now = ::time(nullptr);
  std::vector<std::string> stale;
  static const std::string kTmp = ".zarrpp-tmp-";
  while (const dirent* e = ::readdir(dp)) {
    const std::string n = e->d_name;
    if (n.compare(0, kTmp.size(), kTmp) != 0) continue;
    struct stat st{};
    if (::fstatat(dir_fd, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    const auto age = now - st.st_mtime;
    // Only a writer of this machine can be known dead by its process id.
    const bool dead = detail::made_by_dead_writer(std::string_view(n).substr(kTmp.size()));
    if ((dead && age > 60) || age > 24 * 3600) stale.push_back(n);
  }
  ::closedir(dp);
  for (const auto& n : stale) ::unlinkat(dir_fd, n.c_str(), 0);
}

void FileStore::write_atomic(const std::string& key, const Bytes& value, int dir_fd) {
  const auto [dir, name] = split_key(key);
  const fs::path p = root_ / key;
  const std::string tmp = ".zarrpp-tmp-" + host_tag() + "-" + detail::writer_tag() + "-" +
                          std::to_string(g_tmp_counter.fetch_add(1)) + "-" + name;
  Fd d(-1);
  int fd = -1;
  // A directory removed between opening it and creating the file in it (a node being removed
  // while another writer adds to it) is made again, a few times.
  for (int attempt = 0; fd < 0; ++attempt) {
    d.reset(attempt == 0 && dir_fd >= 0 ? ::dup(dir_fd) : open_dir(dir, true));
    if (d.fd < 0) sys_fail("cannot open directory", root_ / dir, errno);
    fd = ::openat(d.fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && !(errno == ENOENT && attempt < 3)) sys_fail("cannot create", root_ / dir / tmp, errno);
  }
  sweep_stale_temps(d.fd, dir);
  auto undo = [&](const char* what, int e) {
    ::close(fd);
    ::unlinkat(d.fd, tmp.c_str(), 0);
    sys_fail(what, p, e);
  };
  std::size_t done = 0;
  while (done < value.size()) {
    const ssize_t n = ::write(fd, value.data() + done, value.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      undo("cannot write", errno);
    }
    done += static_cast<std::size_t>(n);
  }
  if (options_.fsync && ::fsync(fd) != 0) undo("cannot fsync", errno);
  if (::close(fd) != 0) {
    const int e = errno;
    ::unlinkat(d.fd, tmp.c_str(), 0);
    sys_fail("cannot close", p, e);
  }
  if (::renameat(d.fd, tmp.c_str(), d.fd, name.c_str()) != 0) {
    const int e = errno;
    ::unlinkat(d.fd, tmp.c_str(), 0);
    sys_fail("cannot rename into place", p, e);
  }
  if (options_.fsync) ::fsync(d.fd);
}

// A key that is a symlink to nothing is there (it is listed) but holds no value: an error, never
// "missing" (which would read as the fill value).
void FileStore::broken_link_check(const std::string& key) const {
  // The first component that is missing: a symlink there (to a file or a folder) leads nowhere.
  for (std::size_t end = key.find('/');; end = key.find('/', end + 1)) {
    const std::string part = key.substr(0, end);
    struct stat st{};
    const int root = root_fd(false);
    if (root < 0) return;
    // The entry itself first: nothing there (the usual case of a missing key) costs one call.
    if (::fstatat(root, part.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return;
    if (S_ISLNK(st.st_mode) && ::fstatat(root, part.c_str(), &st, 0) != 0)
      throw StoreError("'" + (root_ / part).string() + "' is a symlink to nothing (to '" + link_target(root_ / part) +
                       "'), not a stored value" + (part == key ? "" : " (it holds '" + key + "')"));
    if (end == std::string::npos) return;
  }
}

int FileStore::open_for_read(const std::string& key) const {
  // Non-blocking: opening a FIFO for reading would otherwise wait for a writer forever.
  const int root = root_fd(false);
  if (root < 0) return -1;
  const int fd = open_beneath(root, key, O_RDONLY | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) {
      broken_link_check(key);
      return -1;
    }
    if (escapes(errno)) escape_fail(key, root_);
    sys_fail("cannot open", root_ / key, errno);
  }
  return fd;
}

std::optional<VersionedBytes> FileStore::do_get(const std::string& key, const ByteRange& range,
                                                std::uint64_t max_bytes) {
  const int fd = open_for_read(key);
  if (fd < 0) return std::nullopt;
  return read_fd(fd, root_ / key, range, max_bytes);
}

bool FileStore::do_get_streamed(const std::string& key, const ByteRange& range, std::size_t piece,
                                const PieceSink& sink) {
  const int fd0 = open_for_read(key);
  if (fd0 < 0) return false;
  Fd f(fd0);
  struct stat st{};
  if (::fstat(f.fd, &st) != 0) sys_fail("cannot stat", root_ / key, errno);
  expect_regular(st, root_ / key);
  const auto total = static_cast<std::uint64_t>(st.st_size);
  const auto [b, e] = range.resolve(total);
  // One small buffer per thread, reused: it stays in the CPU's cache between the kernel's copy
  // into it and the caller's copy out of it.
  thread_local Bytes buf;
  if (buf.size() < piece) buf.resize(piece);
  for (std::uint64_t off = b; off < e;) {
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(piece, e - off));
    std::size_t got = 0;
    while (got < want) {
      const ssize_t n = ::pread(f.fd, buf.data() + got, want - got, static_cast<off_t>(off + got));
      if (n < 0) {
        if (errno == EINTR) continue;
        sys_fail("cannot read", root_ / key, errno);
      }
      if (n == 0) break;
      got += static_cast<std::size_t>(n);
    }
    if (got > 0) sink(total, off, std::span<const std::uint8_t>(buf.data(), got));
    if (got < want) break;  // shorter than it was: the caller sees fewer bytes
    off += got;
  }
  return true;
}

// Every writer of a key holds its lock while it replaces the file: a conditional writer between
// checking the version and renaming its file into place, a plain one while renaming, so a write
// conditioned on what was read can never land over a newer value.
void FileStore::do_set(const std::string& key, const Bytes& value) {
  const auto made = missing_dirs(key);
  try {
    int dir_fd = -1;
    auto lk = locks().lock(lock_name("write", key, true, &dir_fd));
    Fd d(dir_fd);
    write_atomic(key, value, dir_fd);
  } catch (const Error&) {
    remove_dirs_made(made);
    throw;
  }
}

// The folders of a key that do not exist yet, deepest first (usually none: one open finds out).
std::vector<std::string> FileStore::missing_dirs(const std::string& key) const {
  std::vector<std::string> out;
  const int root = root_fd(true);
  for (std::string dir = split_key(key).first; !dir.empty(); dir = split_key(dir).first) {
    Fd d(open_beneath(root, dir, O_RDONLY | O_DIRECTORY | O_PATH, 0, true));
    if (d.fd >= 0 || errno != ENOENT) break;
    out.push_back(dir);
  }
  return out;
}

// A write that failed leaves no folder it made (a full disk must not fill up with empty folders,
// nor show them to listings); a folder someone else has put something in meanwhile stays.
void FileStore::remove_dirs_made(const std::vector<std::string>& made) const {
  for (const auto& dir : made) {
    const auto [parent, name] = split_key(dir);
    const int root = root_fd(false);
    Fd p(root < 0 ? -1 : parent.empty() ? ::dup(root) : open_beneath(root, parent, O_RDONLY | O_DIRECTORY, 0, true));
    if (p.fd < 0 || ::unlinkat(p.fd, name.c_str(), AT_REMOVEDIR) != 0) return;
  }
}

std::optional<Version> FileStore::current_version(const std::string& key) const {
  const int root = root_fd(false);
  if (root < 0) return std::nullopt;
  const int fd = open_beneath(root, key, O_RDONLY | O_PATH);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
    if (escapes(errno)) escape_fail(key, root_);
    sys_fail("cannot open", root_ / key, errno);
  }
  Fd f(fd);
  struct stat st{};
  if (::fstat(f.fd, &st) != 0) sys_fail("cannot stat", root_ / key, errno);
  expect_regular(st, root_ / key);
  return version_of(st);
}

bool FileStore::do_set_if(const std::string& key, const Bytes& value, const std::optional<Version>& expected) {
  const auto made = missing_dirs(key);
  try {
    int dir_fd = -1;
    auto lk = locks().lock(lock_name("write", key, true, &dir_fd));
    Fd d(dir_fd);
    if (current_version(key) != expected) {
      remove_dirs_made(made);
      return false;
    }
    write_atomic(key, value, dir_fd);
    return true;
  } catch (const Error&) {
    remove_dirs_made(made);
    throw;
  }
}

bool FileStore::do_erase_if(const std::string& key, const std::optional<Version>& expected) {
  if (root_fd(false) < 0) return !expected;  // nothing stored, nothing created
  auto lk = locks().lock(lock_name("write", key, false));
  const auto current = current_version(key);
  if (current != expected) return false;
  if (current) do_erase(key);
  return true;
}

void FileStore::do_erase(const std::string& key) {
  if (root_fd(false) < 0) return;
  auto lk = locks().lock(lock_name("write", key, false));
  const auto [dir, name] = split_key(key);
  Fd d(open_dir(dir, false));
  if (d.fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return;
    sys_fail("cannot open directory", root_ / dir, errno);
  }
  // A symlink is removed itself (never its target); an empty directory where a value would be
  // goes too, a directory holding anything is an error (it is not this key's to delete).
  if (::unlinkat(d.fd, name.c_str(), 0) == 0 || errno == ENOENT || errno == ENOTDIR) return;
  if (errno != EISDIR) sys_fail("cannot remove", root_ / key, errno);
  if (::unlinkat(d.fd, name.c_str(), AT_REMOVEDIR) == 0 || errno == ENOENT) return;
  if (errno == ENOTEMPTY || errno == EEXIST)
    throw StoreError("'" + (root_ / key).string() +
                     "' is a directory holding other files, not a stored value; not removed");
  sys_fail("cannot remove", root_ / key, errno);
}

void FileStore::do_erase_prefix(const std::string& prefix) {
  std::error_code ec;
  if (prefix.empty() || prefix.back() == '/') {
    const fs::path dir = prefix.empty() ? root_ : root_ / prefix.substr(0, prefix.size() - 1);
    if (!prefix.empty() && through_symlink(root_, prefix.substr(0, prefix.size() - 1)))
      throw StoreError("refusing to remove '" + prefix + "' through a symlink in store '" + root_.string() + "'");
    if (!fs::exists(dir, ec)) return;
    // Stops at the first failure, naming it (a later success must not hide it).
    auto remove = [&](const fs::path& p) {
      std::error_code e;
      fs::remove_all(p, e);
      if (e) throw StoreError("cannot remove '" + p.string() + "': " + e.message());
    };
    if (prefix.empty()) {
      std::error_code e;
      std::vector<fs::path> entries;
      for (const auto& entry : fs::directory_iterator(root_, e)) entries.push_back(entry.path());
      if (e) throw StoreError("cannot list '" + root_.string() + "': " + e.message());
      for (const auto& p : entries) remove(p);
    } else {
      remove(dir);
    }
    return;
  }
  for (const auto& k : do_list_prefix(prefix)) do_erase(k);
}

std::string FileStore::location() const {
  std::error_code ec;
  const auto c = fs::weakly_canonical(root_, ec);
  std::string out = (ec ? root_ : c).lexically_normal().string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

std::vector<std::string> FileStore::identity_chain(const std::string& path) const {
  std::string p = location();
  if (!path.empty()) {
    std::error_code ec;
    const auto c = fs::weakly_canonical(root_ / path, ec);
    p = (ec ? root_ / path : c).lexically_normal().string();
  }
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  std::vector<std::string> out;
  for (fs::path cur = p;; cur = cur.parent_path()) {
    struct stat st{};
    if (::stat(cur.c_str(), &st) == 0)
      out.push_back("file:" + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino));
    else
      out.push_back("path:" + cur.string());  // not made yet: only its own path can name it
    if (cur == cur.parent_path() || cur.empty()) break;
  }
  return out;
}

// A temporary with the bytes that will be written, beside the key (or, when its folder does not
// exist yet, in the deepest one that does), made and removed: a read-only or full file system, or
// a folder without write permission, fails here before the caller changes anything.
void FileStore::do_check_can_write(const std::string& key, const Bytes& probe) {
  // A store not made yet holds nothing a failed write could cost (and nothing is probed outside it).
  if (root_fd(false) < 0) return;
  auto [dir, name] = split_key(key);
  Fd d(open_dir(dir, false));
  while (d.fd < 0 && (errno == ENOENT || errno == ENOTDIR) && !dir.empty()) {
    dir = split_key(dir).first;
    d.reset(open_dir(dir, false));
  }
  const fs::path where = root_ / dir;
  if (d.fd < 0) sys_fail("cannot open directory", where, errno);
  const std::string tmp = ".zarrpp-tmp-" + host_tag() + "-" + detail::writer_tag() + "-" +
                          std::to_string(g_tmp_counter.fetch_add(1)) + "-probe";
  const int fd = ::openat(d.fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) sys_fail("cannot write in", where, errno);
  int err = 0;
  for (std::size_t done = 0; done < probe.size() && err == 0;) {
    const ssize_t n = ::write(fd, probe.data() + done, probe.size() - done);
    if (n < 0 && errno != EINTR) err = errno;
    if (n > 0) done += static_cast<std::size_t>(n);
  }
  if (err == 0 && options_.fsync && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  ::unlinkat(d.fd, tmp.c_str(), 0);
  if (err != 0) sys_fail("cannot write", root_ / key, err);
}

std::optional<Store::Parent> FileStore::parent() const {
  std::error_code ec;
  const fs::path real = fs::canonical(root_, ec);
  if (ec) throw StoreError("cannot resolve the store directory '" + root_.string() + "': " + ec.message());
  const fs::path up = real.parent_path();
  if (up == real || real.filename().empty()) return std::nullopt;  // the file system's root
  Parent p;
  p.store = FileStore::open(up, Options{.create = false, .fsync = options_.fsync, .read_only = options_.read_only});
  p.name = real.filename().string();
  return p;
}

void FileStore::do_prune_empty(const std::string& prefix) {
  std::string rel = prefix;
  while (!rel.empty() && rel.back() == '/') rel.pop_back();
  if (rel.empty()) return;  // never the root
  const auto [dir, name] = split_key(rel);
  Fd d(open_dir(dir, false));
  if (d.fd < 0) return;
  ::unlinkat(d.fd, name.c_str(), AT_REMOVEDIR);  // only if empty (ENOTEMPTY otherwise); never through a symlink
}

std::optional<std::uint64_t> FileStore::do_size(const std::string& key) {
  const int root = root_fd(false);
  if (root < 0) return std::nullopt;
  const int fd = open_beneath(root, key, O_RDONLY | O_PATH);
  if (fd < 0) {
    if (escapes(errno)) escape_fail(key, root_);
    return std::nullopt;
  }
  Fd f(fd);
  struct stat st{};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return static_cast<std::uint64_t>(st.st_size);
}

// Listing shows what reading sees. Regular files are values; in-root symlinks are followed (to a
// file: a value; to a directory: walked, a loop refused); everything else that stands where a value
// could be (a FIFO, socket or device, a symlink to nothing or out of the root, an empty directory)
// is listed too, so that reading it says what it is instead of the key being silently skipped.
FileStore::Entry FileStore::classify(int dir_fd, const std::string& name, const std::string& rel,
                                     unsigned char type) const {
  // readdir's type answers without a stat for files and folders (most entries).
  if (type == DT_REG) return Entry::value;
  if (type == DT_DIR) return Entry::directory;
  if (type != DT_LNK && type != DT_UNKNOWN) return Entry::other;
  struct stat st{};
  if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return Entry::gone;  // removed while listing
    sys_fail("cannot stat", root_ / rel, errno);
  }
  if (S_ISLNK(st.st_mode)) {
    const int fd = open_beneath(root_fd(false), rel, O_PATH);  // the root exists: it is being listed
    if (fd < 0) return Entry::other;                           // out of the root or to nothing: reading says which
    Fd f(fd);
    if (::fstat(fd, &st) != 0) return Entry::other;
  }
  if (S_ISREG(st.st_mode)) return Entry::value;
  return S_ISDIR(st.st_mode) ? Entry::directory : Entry::other;
}

// Opens the directory root/dir for listing (through in-root symlinks); -1 when it is missing.
int FileStore::open_listed_dir(const std::string& dir) const {
  const int root = root_fd(false);
  if (root < 0) return -1;
  const int fd = dir.empty() ? ::dup(root) : open_beneath(root, dir, O_RDONLY | O_DIRECTORY);
  if (fd >= 0) return fd;
  if (errno == ENOENT || errno == ENOTDIR) return -1;
  if (escapes(errno)) escape_fail(dir, root_);
  sys_fail("cannot list", root_ / dir, errno);
}

// The entries of an open directory (without ".", ".." and zarrpp's own files).
std::vector<std::pair<std::string, unsigned char>> FileStore::entries_of(int dir_fd, const std::string& dir) const {
  // A new open file description: a dup would share (and move) the directory offset of dir_fd.
  const int fd = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR* dp = fd < 0 ? nullptr : ::fdopendir(fd);
  if (!dp) {
    if (fd >= 0) ::close(fd);
    sys_fail("cannot list", root_ / dir, errno);
  }
  std::vector<std::pair<std::string, unsigned char>> names;
  errno = 0;
  while (const dirent* e = ::readdir(dp)) {
    std::string n = e->d_name;
    if (n != "." && n != ".." && !is_internal_name(n)) names.emplace_back(std::move(n), e->d_type);
  }
  const int err = errno;
  ::closedir(dp);
  if (err != 0) sys_fail("cannot list", root_ / dir, err);
  return names;
}

void FileStore::walk(const std::string& dir, const std::string& prefix, std::vector<std::string>& out,
                     std::vector<std::pair<dev_t, ino_t>>& open_dirs) const {
  Fd d(open_listed_dir(dir));
  if (d.fd < 0) return;
  struct stat st{};
  if (::fstat(d.fd, &st) != 0) sys_fail("cannot stat", root_ / dir, errno);
  const std::pair<dev_t, ino_t> id{st.st_dev, st.st_ino};
  if (std::find(open_dirs.begin(), open_dirs.end(), id) != open_dirs.end())
    throw StoreError("'" + (root_ / dir).string() +
                     "' is a symlink to a folder containing it (a loop); refusing to list it");
  open_dirs.push_back(id);
  const auto names = entries_of(d.fd, dir);
  if (names.empty() && !dir.empty() && dir.compare(0, prefix.size(), prefix) == 0)
    out.push_back(dir);  // an empty directory
  for (const auto& [name, type] : names) {
    const std::string rel = dir.empty() ? name : dir + "/" + name;
    const bool listed = rel.compare(0, prefix.size(), prefix) == 0;
    // Only what can hold keys under the prefix is visited.
    if (!listed && prefix.compare(0, rel.size() + 1, rel + "/") != 0) continue;
    switch (classify(d.fd, name, rel, type)) {
      case Entry::directory:
        walk(rel, prefix, out, open_dirs);
        break;
      case Entry::value:
      case Entry::other:
        if (listed) out.push_back(rel);
        break;
      case Entry::gone:
        break;
    }
  }
  open_dirs.pop_back();
}

std::vector<std::string> FileStore::do_list_prefix(const std::string& prefix) {
  // Walk the deepest directory the prefix names, then filter by the full prefix.
  const auto slash = prefix.rfind('/');
  const std::string dir_part = slash == std::string::npos ? "" : prefix.substr(0, slash);
  std::vector<std::string> out;
  std::vector<std::pair<dev_t, ino_t>> open_dirs;
  walk(dir_part, prefix, out, open_dirs);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

DirListing FileStore::do_list_dir(const std::string& prefix) {
  std::string p = prefix;
  if (!p.empty() && p.back() == '/') p.pop_back();
  DirListing out;
  Fd d(open_listed_dir(p));
  if (d.fd < 0) return out;
  for (const auto& [name, type] : entries_of(d.fd, p)) {
    switch (classify(d.fd, name, p.empty() ? name : p + "/" + name, type)) {
      case Entry::directory:
        out.prefixes.push_back(name);
        break;
      case Entry::value:
      case Entry::other:
        out.keys.push_back(name);
        break;
      case Entry::gone:
        break;
    }
  }
  std::sort(out.keys.begin(), out.keys.end());
  std::sort(out.prefixes.begin(), out.prefixes.end());
  return out;
}

std::unique_ptr<StoreLock> FileStore::do_lock(const std::string& key) {
  return locks().lock(lock_name("lock", key, false));
}

// "kind:<inode of the key's directory>/<file name>": the same for every store whose root reaches
// that directory (a store opened on a sub-folder of another's). A key whose directory does not
// exist (and is not to be created) has no file for anyone to change: named by root and key.
std::string FileStore::lock_name(const char* kind, const std::string& key, bool create_dir, int* dir_fd) const {
  const auto [dir, name] = split_key(key);
  Fd d(open_dir(dir, create_dir));
  struct stat st{};
  std::string out = std::string(kind) + ":root/" + key;
  if (d.fd >= 0 && ::fstat(d.fd, &st) == 0) out = std::string(kind) + ":" + std::to_string(st.st_ino) + "/" + name;
  if (dir_fd && d.fd >= 0) std::swap(*dir_fd, d.fd);  // the caller writes through it
  return out;
}

}  // namespace zarrpp
