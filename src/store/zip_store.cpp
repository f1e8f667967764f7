// ZipStore: a zip archive read through libzip, with writes staged in files beside it until a
// commit writes the archive anew (see zip_store.hpp for why).
#include "zarrpp/store/zip_store.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>

#include "../core/temp_names.hpp"
#include "../core/test_pause.hpp"
#include "../core/time_source.hpp"
#include "zarrpp/core/error.hpp"
#include "zarrpp/core/warning.hpp"

namespace zarrpp {

namespace fs = std::filesystem;

namespace {

// An archive with no members: the end-of-central-directory record alone.
constexpr std::array<char, 22> kEmptyArchive = {'P', 'K', 5, 6};

std::string errno_text() { return std::strerror(errno); }

[[noreturn]] void fail(const fs::path& path, const std::string& what, ErrorCode code = ErrorCode::store_failure) {
  const std::string message = "zip store " + path.string() + ": " + what;
  if (code == ErrorCode::not_found) throw NotFoundError(message);
  if (code == ErrorCode::conflict) throw ConflictError(message);
  throw StoreError(code, message);
}

// What a writer's temporaries beside the archive start with: its commits' new archives
// (".NAME.zarrpp-new-<host>-<pid>.<start>-XXXXXX", and libzip's own ".NAME.zarrpp-new-...-XXXXXX.YYYYYY"
// that zip_close writes first) and its staged values (".NAME.zarrpp-staged-<host>-<pid>-XXXXXX"),
// so the next writer can tell a dead writer's leftovers (sweep_dead_writers).
std::string temp_marker(const fs::path& path, const char* what) {
  std::string name = path.filename().string();
  if (name.size() > 120) {  // a long name, shortened so the temporaries' names stay within NAME_MAX
    std::uint32_t h = 2166136261u;
    for (const char c : name) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
    char tag[16];
    std::snprintf(tag, sizeof tag, "~%08x", h);
    name = name.substr(0, 100) + tag;
  }
  return "." + name + "." + what + "-";
}
std::string temp_template(const fs::path& path, const char* what) {
  return (path.parent_path() / (temp_marker(path, what) + detail::host_tag() + "-" + detail::writer_tag() + "-XXXXXX"))
      .string();
}

// A temporary file beside `path` (same file system, so it can be renamed over it).
fs::path temp_beside(const fs::path& path, const char* what) {
  std::string tmpl = temp_template(path, what);
  const int fd = mkstemp(tmpl.data());
  if (fd < 0) fail(path, "cannot make a temporary file beside it: " + errno_text());
  ::close(fd);
  return tmpl;
}

// Removes the commit temporaries and staged folders that writers of this machine left beside the
// archive when they died (killed during a commit, or before it). Called by a writer holding the
// archive's lock: no live writer of this archive can be making them then. Returns what it removed.
std::vector<fs::path> sweep_dead_writers(const fs::path& path) {
  std::vector<fs::path> gone;
  std::error_code ec;
  fs::directory_iterator it(path.parent_path(), ec);
  if (ec) return gone;
  const std::string markers[] = {temp_marker(path, "zarrpp-new"), temp_marker(path, "zarrpp-staged")};
  for (const auto& entry : it) {
    const std::string name = entry.path().filename().string();
    for (const auto& m : markers) {
      if (name.compare(0, m.size(), m) != 0 || !detail::made_by_dead_writer(std::string_view(name).substr(m.size())))
        continue;
      if (entry.is_symlink(ec)) break;  // never ours
      fs::remove_all(entry.path(), ec);
      if (!ec) gone.push_back(entry.path());
      break;
    }
  }
  return gone;
}

void fsync_path(const fs::path& p, bool directory) {
  const int fd = ::open(p.c_str(), (directory ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

// An exclusive lock (flock) on the file that is at `path` when the lock is taken, waiting up to
// `wait` for another holder; -1 with errno (EWOULDBLOCK: still held by another after `wait`).
// A commit renames a new file over the path while its writer holds the old one's lock, so a lock
// taken on what the path named before is no lock: it is dropped and taken again on the new file.
int lock_file(const fs::path& path, std::chrono::milliseconds wait) {
  const auto deadline = detail::steady_now() + wait;
  auto pause = std::chrono::milliseconds(1);
  for (;;) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      struct stat held{}, now{};
      if (::fstat(fd, &held) == 0 && ::stat(path.c_str(), &now) == 0 && held.st_dev == now.st_dev &&
          held.st_ino == now.st_ino)
        return fd;
      ::close(fd);  // replaced meanwhile: lock the file there now
      continue;
    }
    const int e = errno;
    ::close(fd);
    const auto now = detail::steady_now();
    if (e != EWOULDBLOCK || now >= deadline) {
      errno = e;
      return -1;
    }
    detail::sleep_for(std::min<std::chrono::steady_clock::duration>(pause, deadline - now));
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

// The process's umask, read without changing it (umask(2) would, for every thread at once).
mode_t current_umask() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("Umask:", 0) == 0) return static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
  return 022;
}

// Makes an empty archive at `path` unless a file is there; false when one was.
bool make_empty_archive(const fs::path& path) {
  if (fs::exists(fs::symlink_status(path))) return false;
  const fs::path tmp = temp_beside(path, "zarrpp-new");
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(kEmptyArchive.data(), kEmptyArchive.size());
    if (!out.flush()) {
      fs::remove(tmp);
      fail(path, "cannot write an empty archive: " + errno_text());
    }
  }
  ::chmod(tmp.c_str(), 0666 & ~current_umask());  // as a file made by open(2), not mkstemp's 0600
  const bool made = ::link(tmp.c_str(), path.c_str()) == 0;
  const int e = errno;
  fs::remove(tmp);
  if (!made && e != EEXIST) fail(path, std::string("cannot create it: ") + std::strerror(e));
  if (made) fsync_path(path.parent_path(), true);
  return made;
}

// The archive's path made absolute, through symlinks: a later chdir or a symlinked archive must
// not make a commit replace another file.
fs::path resolved(const fs::path& path) {
  std::error_code ec;
  const fs::path abs = fs::absolute(path, ec);
  if (ec) return path;
  const fs::path canon = fs::weakly_canonical(abs, ec);
  return ec ? abs : canon;
}

// Which file a path names now (a commit by another writer renames a new one over it).
struct FileId {
  dev_t dev = 0;
  ino_t ino = 0;
  timespec mtime{};
  off_t size = 0;
  bool operator==(const FileId& o) const {
    return dev == o.dev && ino == o.ino && mtime.tv_sec == o.mtime.tv_sec && mtime.tv_nsec == o.mtime.tv_nsec &&
           size == o.size;
  }
};
FileId file_id(const struct stat& st) { return {st.st_dev, st.st_ino, st.st_mtim, st.st_size}; }

}  // namespace

struct ZipStore::State {
  zip_t* archive = nullptr;                                  // the committed archive (read-only)
  FileId archive_id;                                         // the file it was read from
  std::map<std::string, zip_uint64_t, std::less<>> members;  // name -> its last entry
  std::map<std::string, zip_uint64_t, std::less<>> folders;  // "a/" entries: no keys, kept by commits
  std::uint64_t commits = 0;                                 // part of a member's version
  struct Staged {
    std::optional<fs::path> file;  // nullopt: erased
    std::uint64_t size = 0;
    std::uint64_t generation = 0;
  };
  std::map<std::string, Staged, std::less<>> staged;
  fs::path staging_dir;  // made by the first staged write
  std::uint64_t next_generation = 1;
  bool rewrite = false;  // commit even with nothing staged ("w" over an existing archive)
  bool open = false;
  int lock_fd = -1;
  pid_t owner = ::getpid();    // a forked child shares the lock and the staged files: it must not write
  bool commit_failed = false;  // reported to the caller: the destructor tries again only after
                               // new changes

  ~State() { release(); }
  bool forked() const { return ::getpid() != owner; }
  void release() {
    if (archive) zip_discard(archive);
    archive = nullptr;
    members.clear();
    folders.clear();
    if (lock_fd >= 0) ::close(lock_fd);
    lock_fd = -1;
    open = false;
  }
  // Reads the archive's directory from one open file (never a name looked up twice: a commit
  // renaming a new archive over it in between must not be seen half).
  void read_archive(const fs::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      fail(path, "cannot be opened: " + errno_text(),
           errno == ENOENT ? ErrorCode::not_found : ErrorCode::store_failure);
    struct stat st{};
    ::fstat(fd, &st);
    int err = 0;
    zip_t* za = zip_fdopen(fd, 0, &err);  // takes the descriptor
    if (!za) {
      ::close(fd);
      zip_error_t ze;
      zip_error_init_with_code(&ze, err);
      const std::string why = zip_error_strerror(&ze);
      zip_error_fini(&ze);
      fail(path, "cannot be read as a zip archive: " + why);
    }
    if (archive) zip_discard(archive);
    archive = za;
    archive_id = file_id(st);
    members.clear();
    folders.clear();
    const zip_int64_t n = zip_get_num_entries(za, 0);
    for (zip_int64_t i = 0; i < n; ++i) {
      // Names as the zip specification (and Python's zipfile) reads them: UTF-8 when flagged,
      // else code page 437.
      const char* name = zip_get_name(za, static_cast<zip_uint64_t>(i), ZIP_FL_ENC_STRICT);
      if (!name || !*name) continue;
      auto& into = name[std::strlen(name) - 1] == '/' ? folders : members;  // folders are no keys
      into[name] = static_cast<zip_uint64_t>(i);                            // the last one wins
    }
  }
  // A reader (nothing staged, no lock) follows the file: after another writer's commit it reads
  // the new archive.
  void follow(const fs::path& path) {
    if (lock_fd >= 0 || rewrite || !staged.empty()) return;
    struct stat st{};
    if (::stat(path.c_str(), &st) != 0 || file_id(st) == archive_id) return;
    read_archive(path);
    ++commits;
  }
  // Before the first change, and before a writer reads what it will change (ZipStore::lock): the
  // writer's lock, then the archive as it is now (another writer may have committed since it was
  // opened; versions read before then no longer match), then the leftovers of writers that died.
  void lock_for_writing(const fs::path& path, std::chrono::milliseconds wait) {
    if (forked())
      fail(path, "this ZipStore was opened in another process (before a fork); open the file again in this one",
           ErrorCode::conflict);
    if (lock_fd >= 0) return;
    if (::access(path.c_str(), W_OK) != 0 || ::access(path.parent_path().c_str(), W_OK) != 0)
      fail(path, "cannot be written: no permission to replace it (" + errno_text() + ")", ErrorCode::read_only);
    lock_fd = lock_file(path, wait);
    if (lock_fd < 0)
      fail(path,
           errno == EWOULDBLOCK
               ? "another writer (a ZipStore in this or another process) held it for " + std::to_string(wait.count()) +
                     " ms; one writer at a time: it holds the file until it closes its store"
               : "cannot be opened: " + errno_text(),
           errno == EWOULDBLOCK ? ErrorCode::conflict : ErrorCode::store_failure);
    if (!rewrite) {
      read_archive(path);
      ++commits;
    }
    sweep_dead_writers(path);
  }
  void drop_staging() {
    if (forked()) return;  // the parent's
    staged.clear();
    if (!staging_dir.empty()) {
      std::error_code ec;
      fs::remove_all(staging_dir, ec);
      staging_dir.clear();
    }
  }
};

ZipStore::Mode ZipStore::parse_mode(const std::string& mode) {
  if (mode == "r") return Mode::read;
  if (mode == "w") return Mode::write;
  if (mode == "a") return Mode::append;
  if (mode == "x") return Mode::exclusive;
  throw ArgumentError("zip store mode '" + mode + "': expected r, w, a or x");
}

ZipStore::ZipStore(fs::path path, Options options, std::unique_ptr<State> state)
    : path_(std::move(path)), options_(options), state_(std::move(state)) {}

// Opens (or reopens after close(): "w" and "x" then keep what was written, as "a").
static void open_state(ZipStore::State& st, const fs::path& path, ZipStore::Mode mode) {
  using Mode = ZipStore::Mode;
  if (mode == Mode::read) {
    if (!fs::is_regular_file(path)) fail(path, "no zip file there", ErrorCode::not_found);
    st.read_archive(path);
    st.open = true;
    return;
  }
  const bool made = make_empty_archive(path);
  if (mode == Mode::exclusive && !made) fail(path, "a file is there already (mode 'x')", ErrorCode::already_exists);
  if (mode == Mode::write && !made)
    st.rewrite = true;  // "w": the old members are not this store's, and go at the first commit
  else
    st.read_archive(path);
  st.open = true;
}

std::shared_ptr<ZipStore> ZipStore::open(const fs::path& path, Options options) {
  auto st = std::make_unique<State>();
  const fs::path where = resolved(path);
  open_state(*st, where, options.mode);
  return std::make_shared<ZipStore>(where, options, std::move(st));
}

ZipStore::~ZipStore() {
  // A forked child: the changes and the lock are the parent's. A failed commit was reported, and
  // its staged values are kept where the error said.
  if (state_->forked() || state_->commit_failed) return;
  try {
    close();
  } catch (const std::exception& e) {
    warn(std::string("a zip store was dropped without close() and its last changes could not be written: ") + e.what());
  }
}

bool ZipStore::closed() const {
  std::lock_guard lk(mu_);
  return !state_->open;
}

StoreCapabilities ZipStore::capabilities() const {
  const bool w = options_.mode != Mode::read;
  return {.writable = w,
          .listing = true,
          .conditional_writes = w,
          .conditional_erase = w,
          .locking = w,
          .native_streaming = false};
}

std::string ZipStore::location() const { return "zip://" + path_.string(); }

void ZipStore::ensure_open() {
  if (!state_->open)
    open_state(*state_, path_, options_.mode == Mode::read ? Mode::read : Mode::append);
  else
    state_->follow(path_);
}

std::optional<Version> ZipStore::version_of(const std::string& key) const {
  if (auto s = state_->staged.find(key); s != state_->staged.end()) {
    if (!s->second.file) return std::nullopt;
    return "s" + std::to_string(s->second.generation);
  }
  if (state_->rewrite) return std::nullopt;
  if (auto m = state_->members.find(key); m != state_->members.end())
    return "m" + std::to_string(state_->commits) + "." + std::to_string(m->second);
  return std::nullopt;
}

namespace {

Bytes read_staged(const fs::path& archive, const fs::path& file, std::uint64_t b, std::uint64_t e) {
  Bytes out(e - b);
  std::ifstream in(file, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(b));
  if (!in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(out.size())))
    fail(archive, "cannot read the staged value " + file.string());
  return out;
}

std::string member_name(zip_t* za, zip_uint64_t idx) {
  const char* name = zip_get_name(za, idx, ZIP_FL_ENC_STRICT);
  return name ? name : "#" + std::to_string(idx);
}

// ", compressed with NAME (method N), which ... cannot decode" when libzip cannot decode the
// member's method; "" otherwise.
std::string method_clause(zip_t* za, zip_uint64_t idx) {
  zip_stat_t zs;
  zip_stat_init(&zs);
  if (zip_stat_index(za, idx, 0, &zs) != 0 || !(zs.valid & ZIP_STAT_COMP_METHOD)) return "";
  if (zip_compression_method_supported(zs.comp_method, 0)) return "";
  static const std::map<int, const char*> names = {
      {1, "Shrink"},     {6, "Implode"}, {9, "Deflate64"}, {12, "bzip2"}, {14, "LZMA"},
      {93, "Zstandard"}, {95, "XZ"},     {97, "WavPack"},  {98, "PPMd"},  {99, "AES encryption"}};
  const auto n = names.find(zs.comp_method);
  return ", compressed with " + std::string(n == names.end() ? "an unknown method" : n->second) + " (zip method " +
         std::to_string(zs.comp_method) + "), which this build of libzip cannot decode (recompress it with deflate " +
         "or store it)";
}

Bytes read_member(const fs::path& archive, zip_t* za, zip_uint64_t idx, std::uint64_t b, std::uint64_t e) {
  zip_file_t* f = zip_fopen_index(za, idx, 0);
  if (!f)
    fail(archive,
         "cannot open member '" + member_name(za, idx) + "'" + method_clause(za, idx) + ": " + zip_strerror(za));
  Bytes out(e - b);
  const auto close_fail = [&](const std::string& what) {
    const std::string why = zip_file_strerror(f);
    zip_fclose(f);
    fail(archive, what + ": " + why, ErrorCode::corrupt_data);
  };
  zip_stat_t zs;
  zip_stat_init(&zs);
  const bool stored =
      zip_stat_index(za, idx, 0, &zs) == 0 && (zs.valid & ZIP_STAT_COMP_METHOD) && zs.comp_method == ZIP_CM_STORE;
  if (b > 0 && (!stored || zip_fseek(f, static_cast<zip_int64_t>(b), SEEK_SET) != 0)) {
    // Compressed members cannot seek: read up to the start.
    Bytes skip(std::min<std::uint64_t>(b, 1 << 20));
    for (std::uint64_t left = b; left > 0;) {
      const zip_int64_t n = zip_fread(f, skip.data(), std::min<std::uint64_t>(left, skip.size()));
      if (n <= 0) close_fail("a member ends early");
      left -= static_cast<std::uint64_t>(n);
    }
  }
  for (std::uint64_t got = 0; got < out.size();) {
    const zip_int64_t n = zip_fread(f, out.data() + got, out.size() - got);
    if (n < 0) close_fail("a member cannot be read");
    if (n == 0) close_fail("a member ends early");
    got += static_cast<std::uint64_t>(n);
  }
  if (b == 0 && e == zs.size) {  // the whole member: one more read finds its end and checks its CRC
    std::uint8_t probe = 0;
    if (zip_fread(f, &probe, 1) != 0) close_fail("a member does not match its checksum or size");
  }
  zip_fclose(f);
  return out;
}

}  // namespace

std::optional<VersionedBytes> ZipStore::do_get(const std::string& key, const ByteRange& range,
                                               std::uint64_t max_bytes) {
  std::lock_guard lk(mu_);
  ensure_open();
  const auto version = version_of(key);
  if (!version) return std::nullopt;
  const auto size = *size_of(key);
  const auto [b, e] = range.resolve(size);
  if (e - b > max_bytes)
    fail(path_,
         "'" + key + "' holds " + std::to_string(e - b) + " bytes, more than the " + std::to_string(max_bytes) +
             " expected",
         ErrorCode::limit_exceeded);
  if (auto s = state_->staged.find(key); s != state_->staged.end())
    return VersionedBytes{read_staged(path_, *s->second.file, b, e), *version};
  return VersionedBytes{read_member(path_, state_->archive, state_->members.at(key), b, e), *version};
}

std::optional<std::uint64_t> ZipStore::size_of(const std::string& key) const {
  if (!version_of(key)) return std::nullopt;
  if (auto s = state_->staged.find(key); s != state_->staged.end()) return s->second.size;
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(state_->archive, state_->members.at(key), 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE))
    fail(path_, "cannot read the size of '" + key + "': " + zip_strerror(state_->archive));
  return st.size;
}

std::optional<std::uint64_t> ZipStore::do_size(const std::string& key) {
  std::lock_guard lk(mu_);
  ensure_open();
  return size_of(key);
}

void ZipStore::stage(const std::string& key, const Bytes* value) {
  auto& st = *state_;
  st.commit_failed = false;
  st.lock_for_writing(path_, options_.lock_timeout);
  State::Staged next{std::nullopt, 0, st.next_generation++};
  if (value) {
    if (st.staging_dir.empty()) {
      std::string tmpl = temp_template(path_, "zarrpp-staged");
      if (!mkdtemp(tmpl.data())) fail(path_, "cannot make a folder beside it for the values written: " + errno_text());
      st.staging_dir = tmpl;
    }
    next.file = st.staging_dir / std::to_string(next.generation);
    next.size = value->size();
    std::ofstream out(*next.file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(value->data()), static_cast<std::streamsize>(value->size()));
    if (!out.flush()) {
      std::error_code ec;
      fs::remove(*next.file, ec);
      fail(path_, "cannot write '" + key + "' to " + next.file->string() + ": " + errno_text());
    }
  }
  auto it = st.staged.find(key);
  if (it != st.staged.end() && it->second.file) {
    std::error_code ec;
    fs::remove(*it->second.file, ec);
  }
  const bool in_archive = !st.rewrite && st.members.count(key) > 0;
  if (!value && !in_archive) {
    if (it != st.staged.end()) st.staged.erase(it);  // nothing to hide in the archive
    return;
  }
  st.staged[key] = std::move(next);
}

void ZipStore::do_set(const std::string& key, const Bytes& value) {
  std::lock_guard lk(mu_);
  ensure_open();
  stage(key, &value);
}

void ZipStore::do_erase(const std::string& key) {
  std::lock_guard lk(mu_);
  ensure_open();
  stage(key, nullptr);
}

bool ZipStore::do_set_if(const std::string& key, const Bytes& value, const std::optional<Version>& expected) {
  std::lock_guard lk(mu_);
  ensure_open();
  state_->lock_for_writing(path_,
                           options_.lock_timeout);  // compared with the archive as it is now, not as it was opened
  if (version_of(key) != expected) return false;
  stage(key, &value);
  return true;
}

bool ZipStore::do_erase_if(const std::string& key, const std::optional<Version>& expected) {
  std::lock_guard lk(mu_);
  ensure_open();
  state_->lock_for_writing(path_, options_.lock_timeout);
  const auto now = version_of(key);
  if (!expected) return !now;
  if (now != expected) return false;
  stage(key, nullptr);
  return true;
}

namespace {

// The names of `names` (a map sorted by name) starting with `prefix`, found by binary search: a
// listing costs what its result costs, not the archive's size.
template <class Map>
auto with_prefix(const Map& names, const std::string& prefix) {
  struct Range {
    typename Map::const_iterator b, e;
    auto begin() const { return b; }
    auto end() const { return e; }
  };
  std::string past = prefix;  // the least string after every one starting with prefix
  while (!past.empty() && static_cast<unsigned char>(past.back()) == 0xff) past.pop_back();
  if (past.empty()) return Range{names.lower_bound(prefix), names.end()};
  past.back() = static_cast<char>(static_cast<unsigned char>(past.back()) + 1);
  return Range{names.lower_bound(prefix), names.lower_bound(past)};
}

bool valid_key(const std::string& k) {
  try {
    validate_key(k);  // a member no key can name (an absolute path, "..") is not listed
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace

// Whether key `name` reads as a value now: a member not hidden by a staged change or a rewrite,
// or a staged value; and one a key can name.
bool ZipStore::listed(const std::string& name) const {
  const auto& st = *state_;
  if (auto s = st.staged.find(name); s != st.staged.end()) return s->second.file.has_value() && valid_key(name);
  return !st.rewrite && st.members.count(name) > 0 && valid_key(name);
}

std::vector<std::string> ZipStore::do_list_prefix(const std::string& prefix) {
  std::lock_guard lk(mu_);
  ensure_open();
  std::set<std::string> keys;
  if (!state_->rewrite)
    for (const auto& [name, idx] : with_prefix(state_->members, prefix))
      if (listed(name)) keys.insert(name);
  for (const auto& [name, s] : with_prefix(state_->staged, prefix))
    if (listed(name)) keys.insert(name);
  return {keys.begin(), keys.end()};
}

// The children of `prefix`: each deeper level is found once, by a key in it that reads, and the
// names below it are skipped by binary search.
DirListing ZipStore::do_list_dir(const std::string& prefix_in) {
  const std::string prefix = prefix_in.empty() || prefix_in.back() == '/' ? prefix_in : prefix_in + "/";
  std::lock_guard lk(mu_);
  ensure_open();
  std::set<std::string> keys, dirs;
  const auto scan = [&](const auto& names) {
    for (auto it = names.lower_bound(prefix); it != names.end() && it->first.compare(0, prefix.size(), prefix) == 0;) {
      const std::string rest = it->first.substr(prefix.size());
      const std::size_t slash = rest.find('/');
      if (slash == std::string::npos) {
        if (listed(it->first)) keys.insert(rest);
        ++it;
        continue;
      }
      const std::string child = rest.substr(0, slash);
      const std::string below = prefix + child + "/";
      if (!dirs.count(child))
        for (const auto& [name, v] : with_prefix(names, below))
          if (listed(name)) {
            dirs.insert(child);
            break;
          }
      it = names.lower_bound(prefix + child + "0");  // '0' follows '/': past everything below
    }
  };
  if (!state_->rewrite) scan(state_->members);
  scan(state_->staged);
  return {{keys.begin(), keys.end()}, {dirs.begin(), dirs.end()}};
}

// The key's lock among the threads sharing this store, then the archive's writer lock: taken
// before the caller reads what it will change (growth reads zarr.json after this), so no other
// writer, in this process or another, can change the archive between that read and the commit.
std::unique_ptr<StoreLock> ZipStore::do_lock(const std::string& key) {
  if (options_.mode == Mode::read) throw ConflictError("zip store " + path_.string() + " is read-only: no locks");
  auto held = locks_.lock(key);
  std::lock_guard lk(mu_);
  ensure_open();
  state_->lock_for_writing(path_, options_.lock_timeout);
  return held;
}

namespace {

// Adds `name` to `out` from `src`; throws with libzip's reason.
void add_member(zip_t* out, const fs::path& path, const std::string& name, zip_source_t* src, int method,
                std::optional<time_t> mtime) {
  if (!src) fail(path, "cannot write '" + name + "': " + zip_strerror(out));
  const zip_int64_t idx = zip_file_add(out, name.c_str(), src, ZIP_FL_ENC_GUESS);
  if (idx < 0) {
    zip_source_free(src);
    fail(path, "cannot write '" + name + "': " + zip_strerror(out));
  }
  const auto i = static_cast<zip_uint64_t>(idx);
  if ((method >= 0 && zip_set_file_compression(out, i, method, 0) != 0) ||
      (mtime && zip_file_set_mtime(out, i, *mtime, 0) != 0))
    fail(path, "cannot write '" + name + "': " + zip_strerror(out));
}

}  // namespace

void ZipStore::commit() {
  std::lock_guard lk(mu_);
  commit_locked();
}

// Writes the archive's kept members (and folders, and its comment) and the staged values into
// the new archive `out`; the number of entries written.
std::size_t ZipStore::fill_new_archive(zip_t* out) {
  auto& st = *state_;
  std::size_t count = 0;
  auto copy = [&](const std::string& name, zip_uint64_t idx) {
    zip_stat_t zs;
    zip_stat_init(&zs);
    zip_stat_index(st.archive, idx, 0, &zs);
    const bool stored = (zs.valid & ZIP_STAT_COMP_METHOD) && zs.comp_method == ZIP_CM_STORE;
    // The member's bytes as they are stored: never decompressed and compressed again (libzip
    // would deflate a stored member unless told to keep it stored).
    add_member(out, path_, name, zip_source_zip(out, st.archive, idx, ZIP_FL_COMPRESSED, 0, -1),
               stored ? ZIP_CM_STORE : -1,
               (zs.valid & ZIP_STAT_MTIME) ? std::optional<time_t>(zs.mtime) : std::nullopt);
    ++count;
  };
  if (!st.rewrite) {
    for (const auto& [name, idx] : st.folders) copy(name, idx);
    for (const auto& [name, idx] : st.members)
      if (!st.staged.count(name)) copy(name, idx);
    int len = 0;
    if (const char* comment = zip_get_archive_comment(st.archive, &len, ZIP_FL_ENC_RAW); comment && len > 0)
      zip_set_archive_comment(out, comment, static_cast<zip_uint16_t>(len));
  }
  const int method = options_.compression == Compression::deflated ? ZIP_CM_DEFLATE : ZIP_CM_STORE;
  for (const auto& [name, v] : st.staged) {
    if (!v.file) continue;
    add_member(out, path_, name, zip_source_file(out, v.file->c_str(), 0, -1), method, std::nullopt);
    ++count;
  }
  return count;
}

void ZipStore::commit_locked() {
  try {
    write_archive();
    state_->commit_failed = false;
  } catch (...) {
    state_->commit_failed = true;
    throw;
  }
}

void ZipStore::write_archive() {
  auto& st = *state_;
  if (!st.open || (st.staged.empty() && !st.rewrite)) return;
  st.lock_for_writing(path_, options_.lock_timeout);
  const fs::path tmp = temp_beside(path_, "zarrpp-new");
  const auto cleanup = [&] {
    std::error_code ec;
    fs::remove(tmp, ec);
  };
  const std::string kept =
      st.staging_dir.empty() ? "" : " (the values written are kept in " + st.staging_dir.string() + ")";
  int err = 0;
  zip_t* out = zip_open(tmp.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  if (!out) {
    cleanup();
    fail(path_, "cannot write a new archive beside it" + kept);
  }
  std::size_t count = 0;
  try {
    count = fill_new_archive(out);
    if (zip_close(out) != 0) fail(path_, std::string("cannot write the new archive: ") + zip_strerror(out));
  } catch (const StoreError& e) {
    zip_discard(out);
    cleanup();
    throw StoreError(e.code(), e.what() + kept);
  }
  if (count == 0) {  // libzip writes no file for an archive without entries
    std::ofstream empty(tmp, std::ios::binary | std::ios::trunc);
    empty.write(kEmptyArchive.data(), kEmptyArchive.size());
    if (!empty.flush()) {
      cleanup();
      fail(path_, "cannot write the new archive: " + errno_text() + kept);
    }
  }
  replace_archive(tmp, kept);
  st.rewrite = false;
  st.drop_staging();
  ++st.commits;
  st.read_archive(path_);
}

// Renames the new archive `tmp` over the old one, with the old one's permissions and owner, and
// moves the writer's lock to it.
void ZipStore::replace_archive(const fs::path& tmp, const std::string& kept) {
  auto& st = *state_;
  struct stat old{};
  if (::stat(path_.c_str(), &old) == 0) {
    ::chmod(tmp.c_str(), old.st_mode & 07777);
    if (::chown(tmp.c_str(), old.st_uid, old.st_gid) != 0) {
      // Not the owner (and not root): the archive becomes this user's, with the same mode.
    }
  }
  fsync_path(tmp, false);
  detail::test_pause("zip.commit");
  // The lock moves with the file: taken on the new archive before it replaces the old one.
  const int lock = lock_file(tmp, std::chrono::milliseconds(0));
  if (lock < 0 || ::rename(tmp.c_str(), path_.c_str()) != 0) {
    const std::string why = errno_text();
    if (lock >= 0) ::close(lock);
    std::error_code ec;
    fs::remove(tmp, ec);
    fail(path_, "cannot replace the archive: " + why + kept);
  }
  fsync_path(path_.parent_path(), true);
  if (st.lock_fd >= 0) ::close(st.lock_fd);
  st.lock_fd = lock;
}

void ZipStore::close() {
  std::lock_guard lk(mu_);  // one hold: a write from another thread lands before the commit or after the close
  commit_locked();
  state_->drop_staging();
  state_->release();
}

}  // namespace zarrpp
