#pragma once
// What the object stores (S3, Azure Blob) share above their own dialects: writes conditioned on an
// ETag (If-Match, If-None-Match: *) with lost replies handled, finding out whether a server honours
// those conditions, and the growth lease made of them. Each store describes its service through
// ObjectService: how a request is built and signed, which answers mean "the condition failed".
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "../../core/time_source.hpp"
#include "http_client.hpp"
#include "zarrpp/store/store.hpp"

namespace zarrpp::detail {

inline std::string random_hex(std::size_t n) {
  thread_local std::mt19937_64 rng{random_seed()};
  std::string out;
  static constexpr char digits[] = "0123456789abcdef";
  for (std::size_t i = 0; i < n; ++i) out += digits[rng() & 15];
  return out;
}

// One object service's dialect; `full` names are object names inside the container or bucket.
class ObjectService {
 public:
  virtual ~ObjectService() = default;
  // A request on the object `full` (method GET, HEAD, PUT, DELETE), with `headers` added, ready to
  // perform (signed, when the service signs per request).
  virtual HttpRequest object_request(const char* method, const std::string& full, std::span<const std::uint8_t> body,
                                     std::vector<std::string> headers) const = 0;
  virtual HttpResponse perform(const HttpRequest& req) const = 0;
  // The whole object and its ETag, or nullopt when it does not exist.
  virtual std::optional<std::pair<Bytes, std::string>> get_with_etag(const std::string& full) const = 0;
  // Whether `resp` says a conditional PUT's or DELETE's condition did not hold (`replacing`: it
  // had If-Match, so a missing object fails the condition too).
  virtual bool condition_failed(const HttpResponse& resp, bool replacing) const = 0;
  // Statuses retried for conditional requests besides the transient ones (S3's 409
  // ConditionalRequestConflict).
  virtual std::vector<long> conditional_retry_statuses() const = 0;
  // Throws StoreError naming the request and the service's error.
  [[noreturn]] virtual void fail(const HttpRequest& req, const HttpResponse& resp) const = 0;
  virtual std::string failure_prefix(const HttpRequest& req, int attempts) const = 0;
  virtual std::string label() const = 0;  // "S3", "Azure"
};

// ---- names (object_names.cpp) ----
// The object names of a listing of `root` + `prefix` as store keys: relative to `root` ("" or
// "prefix/"), under `prefix`, valid store keys only; sorted, each once.
std::vector<std::string> keys_under(const std::vector<std::string>& names, const std::string& root,
                                    const std::string& prefix);
// A delimited listing of `full` (= root + prefix, ending in '/') as the store's DirListing: the
// names and common prefixes directly under it that make valid keys of `prefix`.
DirListing dir_of(const std::vector<std::string>& names, const std::vector<std::string>& prefixes,
                  const std::string& full, const std::string& prefix);
// The lease object of a key: ".zarrpp-lock.NAME" beside it (invisible to listings: not a valid key).
std::string lease_key(const std::string& key);
// An environment variable's value; nullopt when unset or empty.
std::optional<std::string> env_value(const char* name);

// Which conditions the server honours.
struct ConditionalSupport {
  bool create_only = false;  // If-None-Match: * on PUT
  bool replace = false;      // If-Match on PUT
  bool erase = false;        // If-Match on DELETE
};

// What a server honours, probed with an object named `probe_prefix` + random (PUT twice with
// If-None-Match: *, once with a wrong If-Match, a DELETE with a wrong If-Match) and remembered:
// a server is taken not to honour them only when three rounds say so, asked again after five
// minutes; support, once seen, stays.
class ConditionalProbe {
 public:
  ConditionalSupport get(const ObjectService& s, const std::string& probe_prefix);

 private:
  std::mutex mu_;
  std::optional<ConditionalSupport> known_;
  SteadyTime probed_at_{};
};

// A PUT of `value` to `full` only if it holds the version `expected` (nullopt: only if absent).
// True when written; false when the condition did not hold. A request that may have been carried
// out unseen is decided by what is stored now; UncertainWriteError when that cannot be known.
// `key` and `store` name the write in messages.
bool put_if(const ObjectService& s, const std::string& full, const Bytes& value, const std::optional<Version>& expected,
            const std::string& key, const std::string& store);
// A PUT of `value` to `full` with no condition. A request that may have been carried out unseen is
// decided by what is stored now: done when it holds these bytes; UncertainWriteError otherwise (it
// may still take effect), never a plain failure that reads as "not written".
void put_plain(const ObjectService& s, const std::string& full, const Bytes& value, const std::string& key,
               const std::string& store);
// A DELETE of `full` only if it holds `expected`; `exists` asks whether it is there now.
bool delete_if(const ObjectService& s, const std::string& full, const Version& expected, const std::string& key,
               const std::string& store, const std::function<bool()>& exists);

// The lease of an object store's lock(): an object next to the key (".zarrpp-lock.NAME") created
// with If-None-Match: * and renewed with If-Match from a background thread (see s3_store.hpp).
struct LeaseSettings {
  std::string store;  // the store's description, for messages
  std::chrono::milliseconds ttl{30000}, timeout{600000};
  // Whether the server honours If-Match on DELETE. Without it the lease is released by a
  // conditional PUT marking it released: a DELETE re-sent after a lost answer would delete the
  // next holder's lease.
  bool conditional_erase = true;
};
std::unique_ptr<StoreLock> take_lease(const ObjectService& s, const std::string& full, const std::string& what,
                                      const LeaseSettings& settings);

}  // namespace zarrpp::detail
