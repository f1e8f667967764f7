#include "zarrpp/store/store.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>

#include "zarrpp/core/error.hpp"

namespace zarrpp {

std::pair<std::uint64_t, std::uint64_t> ByteRange::resolve(std::uint64_t size) const {
  switch (kind) {
    case Kind::All:
      return {0, size};
    case Kind::FromOffset: {
      const std::uint64_t b = std::min(offset, size);
      const std::uint64_t e = length ? (size - b < *length ? size : b + *length) : size;
      return {b, e};
    }
    case Kind::Suffix:
      return {size > suffix ? size - suffix : 0, size};
  }
  return {0, size};
}

// ---- the public face: validate once, then the store's own operation -----------------------------

void check_size_limit(const Store& store, const std::string& key, std::uint64_t size, std::uint64_t max_bytes) {
  if (size > max_bytes)
    throw StoreError(ErrorCode::limit_exceeded, "'" + key + "' in " + store.describe() + " holds " +
                                                    std::to_string(size) + " bytes, more than the " +
                                                    std::to_string(max_bytes) + " expected");
}

std::optional<Store::Parent> Store::parent() const { return std::nullopt; }

std::optional<Bytes> Store::get(const std::string& key, const ByteRange& range, std::uint64_t max_bytes) {
  auto v = get_versioned(key, range, max_bytes);
  if (!v) return std::nullopt;
  return std::move(v->bytes);
}

std::optional<VersionedBytes> Store::get_versioned(const std::string& key, const ByteRange& range,
                                                   std::uint64_t max_bytes) {
  validate_key(key);
  auto v = do_get(key, range, max_bytes);
  if (v) check_size_limit(*this, key, v->bytes.size(), max_bytes);
  return v;
}

namespace {
// A read done when waited on, in the waiting thread.
class DeferredGet final : public PendingGet {
 public:
  DeferredGet(Store& store, std::string key, std::uint64_t max_bytes)
      : store_(store), key_(std::move(key)), max_bytes_(max_bytes) {}
  std::optional<VersionedBytes> wait() override { return store_.get_versioned(key_, ByteRange::all(), max_bytes_); }

 private:
  Store& store_;
  std::string key_;
  std::uint64_t max_bytes_;
};

// A store's own started read, checked against the limit as get_versioned checks.
class CheckedGet final : public PendingGet {
 public:
  CheckedGet(Store& store, std::string key, std::uint64_t max_bytes, std::unique_ptr<PendingGet> inner)
      : store_(store), key_(std::move(key)), max_bytes_(max_bytes), inner_(std::move(inner)) {}
  std::optional<VersionedBytes> wait() override {
    auto v = inner_->wait();
    if (v) check_size_limit(store_, key_, v->bytes.size(), max_bytes_);
    return v;
  }

 private:
  Store& store_;
  std::string key_;
  std::uint64_t max_bytes_;
  std::unique_ptr<PendingGet> inner_;
};
}  // namespace

std::unique_ptr<PendingGet> Store::start_get(const std::string& key, std::uint64_t max_bytes) {
  validate_key(key);
  return std::make_unique<CheckedGet>(*this, key, max_bytes, do_start_get(key, max_bytes));
}

std::unique_ptr<PendingGet> Store::do_start_get(const std::string& key, std::uint64_t max_bytes) {
  return std::make_unique<DeferredGet>(*this, key, max_bytes);
}

std::optional<std::uint64_t> Store::size(const std::string& key) {
  validate_key(key);
  return do_size(key);
}

bool Store::get_streamed(const std::string& key, const ByteRange& range, std::size_t piece, const PieceSink& sink) {
  validate_key(key);
  return do_get_streamed(key, range, piece == 0 ? 1 : piece, sink);
}

void Store::check_writable(const char* op, const std::string& key) const {
  if (!capabilities().writable)
    throw StoreError(ErrorCode::read_only, "store " + describe() + " is read-only: cannot " + op + " '" + key + "'");
}

bool Store::set(const std::string& key, const Bytes& value, const WriteOptions& options) {
  validate_key(key);
  check_writable("write", key);
  if (options.condition) return do_set_if(key, value, options.condition->version);
  do_set(key, value);
  return true;
}

bool Store::compare_and_set(const std::string& key, const std::optional<Bytes>& expected, const Bytes& value) {
  validate_key(key);
  check_writable("write", key);
  // Without conditional writes, do_set_if refuses (naming the reason) before anything is read.
  if (!capabilities().conditional_writes)
    return do_set_if(key, value, expected ? std::optional<Version>(Version()) : std::nullopt);
  if (!expected) return do_set_if(key, value, std::nullopt);
  auto cur = do_get(key, ByteRange::all(), kNoLimit);
  if (!cur || cur->bytes != *expected) return false;
  return do_set_if(key, value, cur->version);
}

bool Store::erase(const std::string& key, const WriteOptions& options) {
  validate_key(key);
  check_writable("erase", key);
  // "Only if it does not exist" changes nothing either way: no atomic step is needed to answer it.
  if (options.condition && !options.condition->version) return !do_size(key).has_value();
  if (options.condition) return do_erase_if(key, options.condition->version);
  do_erase(key);
  return true;
}

void Store::erase_prefix(const std::string& prefix) {
  validate_prefix(prefix);
  check_writable("erase", prefix);
  do_erase_prefix(prefix);
}

void Store::prune_empty(const std::string& prefix) {
  validate_prefix(prefix);
  check_writable("erase", prefix);
  do_prune_empty(prefix);
}

void Store::check_listing(const std::string& prefix) const {
  if (!capabilities().listing) throw StoreError("store " + describe() + " cannot list keys (prefix '" + prefix + "')");
}

std::vector<std::string> Store::list_prefix(const std::string& prefix) {
  validate_prefix(prefix);
  check_listing(prefix);
  return do_list_prefix(prefix);
}

DirListing Store::list_dir(const std::string& prefix) {
  validate_prefix(prefix);
  check_listing(prefix);
  return do_list_dir(prefix);
}

void Store::check_can_write(const std::string& key, const Bytes& probe) {
  validate_key(key);
  check_writable("write", key);
  do_check_can_write(key, probe);
}

std::vector<std::string> Store::identity_chain(const std::string& path) const {
  std::string at = normalize_url(path.empty() ? location() : location() + "/" + path);
  // The authority ends the chain: "s3://host/bucket/a" -> "s3://host/bucket" -> "s3://host".
  const auto scheme = at.find("://");
  const std::size_t floor = scheme == std::string::npos ? at.find(':') + 1 : at.find('/', scheme + 3);
  std::vector<std::string> out{at};
  for (auto slash = at.rfind('/');
       slash != std::string::npos && floor != std::string::npos && slash >= floor && slash > 0;
       slash = at.rfind('/', slash - 1)) {
    out.push_back(at.substr(0, slash));
    if (slash == 0) break;
  }
  return out;
}

std::string normalize_url(std::string_view url) {
  auto lower = [](std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  std::string out;
  const auto scheme_end = url.find("://");
  std::string_view rest = url;
  if (scheme_end != std::string_view::npos) {
    const std::string scheme = lower(std::string(url.substr(0, scheme_end)));
    rest = url.substr(scheme_end + 3);
    const auto slash = rest.find('/');
    std::string host = lower(std::string(rest.substr(0, slash)));
    for (const auto& [s, port] :
         {std::pair<const char*, const char*>{"http", ":80"}, {"https", ":443"}, {"s3", ":443"}})
      if (scheme == s && host.size() > std::strlen(port) && host.ends_with(port))
        host.resize(host.size() - std::strlen(port));
    out = scheme + "://" + host;
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  }
  // The path: %-escapes of unreserved characters decoded, repeated and trailing '/' dropped.
  auto unreserved = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' || c == '~';
  };
  auto hex = [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                                                       : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10;
  };
  for (std::size_t i = 0; i < rest.size(); ++i) {
    char c = rest[i];
    if (c == '%' && i + 2 < rest.size() && std::isxdigit(static_cast<unsigned char>(rest[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(rest[i + 2]))) {
      const char d = static_cast<char>(hex(rest[i + 1]) * 16 + hex(rest[i + 2]));
      if (unreserved(d)) {
        c = d;
        i += 2;
      }
    }
    if (c == '/' && !out.empty() && out.back() == '/') continue;
    out += c;
  }
  while (out.size() > 1 && out.back() == '/' && !out.ends_with("://")) out.pop_back();
  return out;
}

std::string Store::explain_unreadable(const std::string& key) noexcept {
  try {
    return do_explain_unreadable(key);
  } catch (...) {
    return "";  // an explanation that cannot be had is no explanation
  }
}

std::string Store::explain_absent() noexcept {
  try {
    return do_explain_absent();
  } catch (...) {
    return "";
  }
}

std::unique_ptr<StoreLock> Store::lock(const std::string& key) {
  validate_key(key);
  if (!capabilities().locking) throw ConflictError("store " + describe() + " cannot lock '" + key + "'");
  return do_lock(key);
}

// ---- defaults -------------------------------------------------------------------------------------

std::optional<std::uint64_t> Store::do_size(const std::string& key) {
  auto v = do_get(key, ByteRange::all(), kNoLimit);
  if (!v) return std::nullopt;
  return v->bytes.size();
}

bool Store::do_get_streamed(const std::string& key, const ByteRange& range, std::size_t piece, const PieceSink& sink) {
  std::optional<VersionedBytes> v;
  std::uint64_t total = 0, begin = 0;
  if (range.kind == ByteRange::Kind::All) {
    v = do_get(key, range, kNoLimit);
    if (!v) return false;
    total = v->bytes.size();
  } else {
    const auto sz = do_size(key);
    if (!sz) return false;
    const auto [b, e] = range.resolve(*sz);
    v = do_get(key, ByteRange::range(b, e - b), kNoLimit);
    if (!v) return false;
    total = *sz;
    begin = b;
  }
  const std::span<const std::uint8_t> all(v->bytes);
  for (std::size_t off = 0; off < all.size(); off += piece)
    sink(total, begin + off, all.subspan(off, std::min(piece, all.size() - off)));
  return true;
}

bool Store::do_set_if(const std::string& key, const Bytes&, const std::optional<Version>&) {
  throw ConflictError("store " + describe() + " has no conditional writes, so a write of '" + key +
                      "' conditioned on what was read cannot be atomic");
}

bool Store::do_erase_if(const std::string& key, const std::optional<Version>&) {
  throw ConflictError("store " + describe() + " has no conditional writes, so erasing '" + key +
                      "' only if it is what was read cannot be atomic");
}

void Store::do_erase_prefix(const std::string& prefix) {
  for (const auto& k : do_list_prefix(prefix)) do_erase(k);
}

DirListing Store::do_list_dir(const std::string& prefix_in) {
  std::string prefix = prefix_in;
  if (!prefix.empty() && prefix.back() != '/') prefix += '/';
  DirListing out;
  std::set<std::string> dirs;
  for (const auto& k : do_list_prefix(prefix)) {
    const auto rest = k.substr(prefix.size());
    const auto slash = rest.find('/');
    if (slash == std::string::npos)
      out.keys.push_back(rest);
    else
      dirs.insert(rest.substr(0, slash));
  }
  out.prefixes.assign(dirs.begin(), dirs.end());
  std::sort(out.keys.begin(), out.keys.end());
  return out;
}

std::unique_ptr<StoreLock> Store::do_lock(const std::string& key) {
  throw ConflictError("store " + describe() + " cannot lock '" + key + "'");
}

// ---- StoreWrapper ---------------------------------------------------------------------------------

std::unique_ptr<StoreLock> ProcessLocks::lock(const std::string& key) {
  std::shared_ptr<std::mutex> m;
  {
    std::lock_guard lk(mu_);
    auto& slot = locks_[key];
    if (!slot) slot = std::make_shared<std::mutex>();
    m = slot;
  }
  struct Held : StoreLock {
    std::shared_ptr<std::mutex> m;
    explicit Held(std::shared_ptr<std::mutex> mm) : m(std::move(mm)) { m->lock(); }
    ~Held() override { m->unlock(); }
  };
  return std::make_unique<Held>(std::move(m));
}

StoreWrapper::StoreWrapper(StorePtr inner) : inner_(std::move(inner)) {
  if (!inner_) throw ArgumentError("StoreWrapper: no store to wrap");
}
std::optional<VersionedBytes> StoreWrapper::do_get(const std::string& key, const ByteRange& range,
                                                   std::uint64_t max_bytes) {
  return inner_->get_versioned(key, range, max_bytes);
}
void StoreWrapper::do_set(const std::string& key, const Bytes& value) { inner_->set(key, value); }
void StoreWrapper::do_erase(const std::string& key) { inner_->erase(key); }
std::vector<std::string> StoreWrapper::do_list_prefix(const std::string& prefix) { return inner_->list_prefix(prefix); }
std::optional<std::uint64_t> StoreWrapper::do_size(const std::string& key) { return inner_->size(key); }
bool StoreWrapper::do_get_streamed(const std::string& key, const ByteRange& range, std::size_t piece,
                                   const PieceSink& sink) {
  return inner_->get_streamed(key, range, piece, sink);
}
bool StoreWrapper::do_set_if(const std::string& key, const Bytes& value, const std::optional<Version>& expected) {
  return inner_->set(key, value, WriteOptions::if_equal(expected));
}
bool StoreWrapper::do_erase_if(const std::string& key, const std::optional<Version>& expected) {
  return inner_->erase(key, WriteOptions::if_equal(expected));
}
void StoreWrapper::do_erase_prefix(const std::string& prefix) { inner_->erase_prefix(prefix); }
void StoreWrapper::do_prune_empty(const std::string& prefix) { inner_->prune_empty(prefix); }
DirListing StoreWrapper::do_list_dir(const std::string& prefix) { return inner_->list_dir(prefix); }
std::unique_ptr<StoreLock> StoreWrapper::do_lock(const std::string& key) { return inner_->lock(key); }

// ---- keys -------------------------------------------------------------------------------------------

void validate_key(std::string_view key) {
  auto bad = [&](const char* why) {
    std::string shown;
    for (char c : key) shown += (c == '\0') ? std::string("\\0") : std::string(1, c);
    throw StoreError(ErrorCode::invalid_key, "invalid store key '" + shown + "': " + why);
  };
  if (key.empty()) bad("empty key");
  if (key.front() == '/') bad("absolute paths are not allowed");
  if (key.find('\0') != std::string_view::npos) bad("NUL bytes are not allowed");
  if (key.find('\\') != std::string_view::npos) bad("backslashes are not allowed");
  std::size_t i = 0;
  for (;;) {
    const std::size_t j = key.find('/', i);
    const auto seg = key.substr(i, j == std::string_view::npos ? std::string_view::npos : j - i);
    if (seg.empty()) bad("empty path segments are not allowed");
    if (seg == "." || seg == "..") bad("'.' and '..' segments are not allowed");
    if (seg.substr(0, 8) == ".zarrpp-") bad("segments starting with '.zarrpp-' are reserved");
    if (j == std::string_view::npos) break;
    i = j + 1;
  }
}

void validate_prefix(std::string_view prefix) {
  if (prefix.empty()) return;
  if (prefix.back() == '/') prefix.remove_suffix(1);
  validate_key(prefix);
}

}  // namespace zarrpp
