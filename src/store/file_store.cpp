#include "zarrpp/store/file_store.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <system_error>

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
};

bool is_internal_name(const std::string& name) { return name.rfind(".zarrpp-", 0) == 0; }

// Holds an flock(2) on a lock file; works between threads (each has its own open file
// description) and between processes.
class FileLock : public StoreLock {
 public:
  explicit FileLock(const fs::path& p) {
    std::error_code ec;
    fs::create_directories(p.parent_path(), ec);
    fd_ = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) sys_fail("cannot open lock file", p, errno);
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) {
        const int e = errno;
        ::close(fd_);
        sys_fail("cannot lock", p, e);
      }
    }
  }
  ~FileLock() override {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }

 private:
  int fd_ = -1;
};

fs::path lock_path(const fs::path& target, const char* kind) {
  return target.parent_path() / (std::string(".zarrpp-") + kind + "." + target.filename().string());
}

std::optional<Bytes> read_file(const fs::path& p, const ByteRange& range) {
  Fd f(::open(p.c_str(), O_RDONLY | O_CLOEXEC));
  if (f.fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
    sys_fail("cannot open", p, errno);
  }
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) sys_fail("cannot stat", p, errno);
  if (!S_ISREG(st.st_mode)) return std::nullopt;
  auto [b, e] = range.resolve(static_cast<std::uint64_t>(st.st_size));
  Bytes out(e - b);
  std::size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::pread(f.fd, out.data() + done, out.size() - done, static_cast<off_t>(b + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      sys_fail("cannot read", p, errno);
    }
    if (n == 0) break;  // truncated underneath us: return what exists
    done += static_cast<std::size_t>(n);
  }
  out.resize(done);
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
  if (options_.create) {
    fs::create_directories(root_, ec);
    if (ec) throw StoreError("cannot create store directory '" + root_.string() + "': " + ec.message());
  }
  if (!fs::is_directory(root_, ec))
    throw NotFoundError("store directory '" + root_.string() + "' does not exist");
  root_ = fs::absolute(root_, ec).lexically_normal();
}

fs::path FileStore::path_of(const std::string& key) const {
  validate_key(key);
  return root_ / key;
}

void FileStore::write_atomic(const fs::path& p, const Bytes& value) {
  const fs::path dir = p.parent_path();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw StoreError("cannot create directory '" + dir.string() + "': " + ec.message());
  const fs::path tmp = dir / (".zarrpp-tmp-" + std::to_string(::getpid()) + "-" +
                              std::to_string(g_tmp_counter.fetch_add(1)) + "-" + p.filename().string());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) sys_fail("cannot create", tmp, errno);
  std::size_t done = 0;
  while (done < value.size()) {
    const ssize_t n = ::write(fd, value.data() + done, value.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      sys_fail("cannot write", tmp, e);
    }
    done += static_cast<std::size_t>(n);
  }
  if (options_.fsync && ::fsync(fd) != 0) {
    const int e = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    sys_fail("cannot fsync", tmp, e);
  }
  if (::close(fd) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    sys_fail("cannot close", tmp, e);
  }
  if (::rename(tmp.c_str(), p.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    sys_fail("cannot rename into place", p, e);
  }
  if (options_.fsync) {
    Fd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (d.fd >= 0) ::fsync(d.fd);
  }
}

std::optional<Bytes> FileStore::get(const std::string& key, const ByteRange& range) {
  return read_file(path_of(key), range);
}

void FileStore::set(const std::string& key, const Bytes& value) { write_atomic(path_of(key), value); }

bool FileStore::compare_and_set(const std::string& key, const std::optional<Bytes>& expected,
                                const Bytes& value) {
  const auto p = path_of(key);
  FileLock lk(lock_path(p, "cas"));
  auto current = read_file(p, ByteRange::all());
  if (current.has_value() != expected.has_value()) return false;
  if (current && *current != *expected) return false;
  write_atomic(p, value);
  return true;
}

void FileStore::erase(const std::string& key) {
  const auto p = path_of(key);
  if (::unlink(p.c_str()) != 0 && errno != ENOENT && errno != ENOTDIR && errno != EISDIR)
    sys_fail("cannot remove", p, errno);
}

void FileStore::erase_prefix(const std::string& prefix) {
  validate_prefix(prefix);
  std::error_code ec;
  if (prefix.empty() || prefix.back() == '/') {
    const fs::path dir = prefix.empty() ? root_ : root_ / prefix.substr(0, prefix.size() - 1);
    if (!fs::exists(dir, ec)) return;
    if (prefix.empty()) {
      for (const auto& e : fs::directory_iterator(root_, ec)) fs::remove_all(e.path(), ec);
    } else {
      fs::remove_all(dir, ec);
    }
    if (ec) throw StoreError("cannot remove '" + dir.string() + "': " + ec.message());
    return;
  }
  for (const auto& k : list_prefix(prefix)) erase(k);
}

bool FileStore::exists(const std::string& key) {
  struct stat st {};
  const auto p = path_of(key);
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::vector<std::string> FileStore::list_prefix(const std::string& prefix) {
  validate_prefix(prefix);
  // Walk the deepest directory the prefix names, then filter by the full prefix.
  const auto slash = prefix.rfind('/');
  const std::string dir_part = slash == std::string::npos ? "" : prefix.substr(0, slash);
  const fs::path start = dir_part.empty() ? root_ : root_ / dir_part;
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(start, ec)) return out;
  fs::recursive_directory_iterator it(start, fs::directory_options::skip_permission_denied, ec), end;
  for (; it != end; it.increment(ec)) {
    if (ec) break;
    const auto name = it->path().filename().string();
    if (is_internal_name(name)) {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec)) continue;
    auto rel = it->path().lexically_relative(root_).generic_string();
    if (rel.compare(0, prefix.size(), prefix) == 0) out.push_back(std::move(rel));
  }
  std::sort(out.begin(), out.end());
  return out;
}

DirListing FileStore::list_dir(const std::string& prefix) {
  validate_prefix(prefix);
  std::string p = prefix;
  if (!p.empty() && p.back() == '/') p.pop_back();
  const fs::path dir = p.empty() ? root_ : root_ / p;
  DirListing out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const auto name = e.path().filename().string();
    if (is_internal_name(name)) continue;
    if (e.is_directory(ec)) out.prefixes.push_back(name);
    else if (e.is_regular_file(ec)) out.keys.push_back(name);
  }
  std::sort(out.keys.begin(), out.keys.end());
  std::sort(out.prefixes.begin(), out.prefixes.end());
  return out;
}

std::unique_ptr<StoreLock> FileStore::lock(const std::string& key) {
  return std::make_unique<FileLock>(lock_path(path_of(key), "lock"));
}

}  // namespace zarrpp
