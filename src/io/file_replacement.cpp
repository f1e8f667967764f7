// FileReplacement (file_replacement.hpp): a temporary beside the file, renamed over it when whole.
#include "zarrpp/io/file_replacement.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#include "../core/temp_names.hpp"
#include "zarrpp/core/error.hpp"

namespace zarrpp {

namespace {

// The temporaries not yet committed, for remove_unfinished_file_temporaries() (a signal handler):
// fixed slots, so the handler needs neither locks nor allocation.
struct TempSlot {
  std::atomic<bool> used{false};   // taken by a FileReplacement
  std::atomic<bool> ready{false};  // `path` is complete and names this process's file
  char path[4096] = {};
};
TempSlot g_temps[16];
std::atomic<unsigned> g_counter{0};

int register_temp(const std::filesystem::path& p) {
  const std::string& s = p.native();
  if (s.size() >= sizeof g_temps[0].path) return -1;
  for (int i = 0; i < 16; ++i) {
    bool expected = false;
    if (g_temps[i].used.load() || !g_temps[i].used.compare_exchange_strong(expected, true)) continue;
    std::memcpy(g_temps[i].path, s.c_str(), s.size() + 1);
    g_temps[i].ready.store(true, std::memory_order_release);
    return i;
  }
  return -1;  // more than 16 at once: only the destructor removes this one
}

// Temporaries named ".NAME.zarrpp-tmp-<host>-<pid>-<n>" beside `target` whose writer (a process of
// this machine) is gone, e.g. killed with SIGKILL: removed before writing NAME again.
void sweep_dead_writers(const std::filesystem::path& dir, const std::string& name) {
  const std::string marker = "." + name + ".zarrpp-tmp-";
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (n.compare(0, marker.size(), marker) != 0 || !e.is_regular_file(ec) || e.is_symlink(ec)) continue;
    if (detail::made_by_dead_writer(std::string_view(n).substr(marker.size()))) std::filesystem::remove(e.path(), ec);
  }
}

// The file a path names: itself, or what its chain of symbolic links ends at (which need not exist).
std::filesystem::path followed(std::filesystem::path p, const char* what) {
  for (int hops = 0; hops < 40; ++hops) {
    std::error_code ec;
    if (!std::filesystem::is_symlink(std::filesystem::symlink_status(p, ec))) return p;
    const auto to = std::filesystem::read_symlink(p, ec);
    if (ec) return p;
    p = to.is_absolute() ? to : p.parent_path() / to;
  }
  throw ArgumentError(std::string(what) + ": '" + p.string() + "' is a loop of symbolic links");
}

// The open descriptor a path names: "-" and /dev/stdout standard output, /dev/stderr, /dev/fd/N
// and /proc/self/fd/N (what a shell's pipe or redirection gave this process); -1 for other paths.
// Written through a copy of it: following such a name to "pipe:[...]" names no file.
int descriptor_named(const std::filesystem::path& path) {
  const std::string s = path.string();
  if (s == "-" || s == "/dev/stdout") return STDOUT_FILENO;
  if (s == "/dev/stderr") return STDERR_FILENO;
  for (const char* dir : {"/dev/fd/", "/proc/self/fd/"}) {
    const std::string d = dir;
    if (s.size() <= d.size() || s.compare(0, d.size(), d) != 0) continue;
    const std::string n = s.substr(d.size());
    if (n.size() > 6 || n.find_first_not_of("0123456789") != std::string::npos) return -1;
    const int fd = std::stoi(n);
    return ::fcntl(fd, F_GETFD) >= 0 ? fd : -1;
  }
  return -1;
}

}  // namespace

void remove_unfinished_file_temporaries() noexcept {
  for (auto& t : g_temps)
    if (t.ready.load(std::memory_order_acquire)) ::unlink(t.path);
}

struct FileReplacement::Impl {
  std::string what;              // the file's kind, for messages
  std::filesystem::path target;  // where the file ends up
  std::filesystem::path tmp;     // empty: writing in place
  int slot = -1;                 // in g_temps
  int fd = -1;
  bool done = false;

  // Also when the constructor fails after making the temporary (a full disk): no partial file.
  ~Impl() {
    if (fd >= 0) ::close(fd);
    if (!done && !tmp.empty()) ::unlink(tmp.c_str());
    release();
  }
  void release() {
    if (slot < 0) return;
    g_temps[slot].ready.store(false, std::memory_order_release);
    g_temps[slot].used.store(false);
    slot = -1;
  }
  [[noreturn]] void io_fail(const std::string& action, int e) const {
    throw StoreError(what + ": cannot " + action + " '" + target.string() + "': " + std::strerror(e));
  }
};

FileReplacement::FileReplacement(const std::filesystem::path& path, const char* what)
    : impl_(std::make_unique<Impl>()) {
  auto& m = *impl_;
  m.what = what;
  if (const int inherited = descriptor_named(path); inherited >= 0) {  // written in place, where it points
    m.target = path == "-" ? "standard output" : path;
    m.fd = ::fcntl(inherited, F_DUPFD_CLOEXEC, 0);
    if (m.fd < 0) m.io_fail("write", errno);
    return;
  }
  m.target = followed(path, what);
  struct stat st{};
  const bool exists = ::stat(m.target.c_str(), &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) throw ArgumentError(m.what + ": '" + path.string() + "' is a directory");
    // A FIFO, a terminal, /dev/stdout: written in place, in order.
    m.fd = ::open(m.target.c_str(), O_WRONLY | O_CLOEXEC);
    if (m.fd < 0) m.io_fail("open", errno);
    return;
  }
  // Beside the file it replaces, so the rename stays on one file system; the existing file's
  // permissions carry over.
  const auto dir = m.target.parent_path().empty() ? std::filesystem::path(".") : m.target.parent_path();
  sweep_dead_writers(dir, m.target.filename().string());
  m.tmp = dir / ("." + m.target.filename().string() + ".zarrpp-tmp-" + detail::host_tag() + "-" + detail::writer_tag() +
                 "-" + std::to_string(g_counter.fetch_add(1)));
  m.fd = ::open(m.tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (m.fd < 0) {
    const int e = errno;
    m.tmp.clear();
    m.io_fail("create a file beside", e);
  }
  m.slot = register_temp(m.tmp);  // only once the file is ours
  if (exists) (void)::fchmod(m.fd, st.st_mode & 07777);
}

FileReplacement::~FileReplacement() = default;  // Impl removes an unfinished temporary

void FileReplacement::write(std::span<const std::uint8_t> bytes) {
  auto& m = *impl_;
  const std::uint8_t* p = bytes.data();
  std::size_t n = bytes.size();
  while (n > 0) {
    const ssize_t w = ::write(m.fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) m.io_fail("write", errno);
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

int FileReplacement::descriptor() const { return impl_->fd; }

const std::filesystem::path& FileReplacement::target() const { return impl_->target; }

void FileReplacement::commit() {
  auto& m = *impl_;
  const int fd = m.fd;
  m.fd = -1;
  if (::close(fd) != 0) m.io_fail("write", errno);
  if (!m.tmp.empty() && ::rename(m.tmp.c_str(), m.target.c_str()) != 0) m.io_fail("replace", errno);
  m.done = true;
  m.release();
}

}  // namespace zarrpp
