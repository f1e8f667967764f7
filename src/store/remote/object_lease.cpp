// The object stores' lock: a lease made of conditional PUTs (see s3_store.hpp).
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "../../core/retry.hpp"
#include "object_service.hpp"

namespace zarrpp::detail {

namespace {

class Lease : public StoreLock {
 public:
  Lease(const ObjectService& service, std::string full, std::string what, LeaseSettings settings)
      : im_(service), full_(std::move(full)), what_(std::move(what)), settings_(std::move(settings)) {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0) host[0] = 0;
    owner_ = random_hex(16);
    about_ = std::string(host) + " pid " + std::to_string(::getpid());
    ttl_ = settings_.ttl;
  }

  ~Lease() override {
    {
      std::lock_guard lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (heartbeat_.joinable()) heartbeat_.join();
    if (lost_) return;
    try {
      // Delete only our own lease (checked by ETag). A server that ignores If-Match on DELETE
      // would carry out a copy re-sent after a lost answer on the next holder's lease (found by
      // the simulated object store): there the lease is marked released by a PUT on our ETag.
      const auto cur = im_.get_with_etag(full_);
      if (!cur || cur->second != etag_) return;
      if (!settings_.conditional_erase) {
        released_ = true;
        const std::string text = body();
        const Bytes value(text.begin(), text.end());
        (void)im_.perform(im_.object_request("PUT", full_, value, {"If-Match: " + etag_}));
        return;  // 2xx or 412: in every case the lease is no longer ours
      }
      const auto resp = im_.perform(im_.object_request("DELETE", full_, {}, {"If-Match: " + etag_}));
      (void)resp;  // 2xx, 404 or 412: in every case the lease is no longer ours
    } catch (const StoreError&) {
      // Unreachable server: the lease expires by itself after lock_ttl.
    }
  }

  void acquire() {
    std::string seen_etag, seen_text;
    SteadyTime seen_since{};
    std::chrono::milliseconds seen_ttl = ttl_;
    // Asked again soon at first, then less often, and at least four times per lease of the holder.
    Retry retry({.initial_delay = std::chrono::milliseconds(10),
                 .max_delay = std::chrono::milliseconds(500),
                 .deadline = settings_.timeout,
                 .max_attempts = settings_.timeout.count() == 0 ? 1 : 0});
    for (;;) {
      if (try_put(seen_etag.empty() ? std::nullopt : std::optional<std::string>{})) break;
      const auto cur = im_.get_with_etag(full_);
      // Our own create took effect after all: renew it at once, so the lease's time counts from a
      // PUT whose sending time is known.
      if (cur && owner_of(cur->first) == owner_ && !cur->second.empty() && try_put(cur->second)) break;
      // A lease its holder marked released is free: take it over at once.
      if (cur && !cur->second.empty() && released(cur->first) && try_put(cur->second)) break;
      if (cur) {
        if (cur->second.empty())
          throw StoreError(im_.label() + " GET of '" + full_ +
                           "': the response has no ETag, so the lease cannot be checked");
        if (cur->second != seen_etag) {  // a new holder, or the holder renewed
          seen_etag = cur->second;
          seen_text = std::string(cur->first.begin(), cur->first.end());
          seen_since = steady_now();
          seen_ttl = ttl_of(seen_text);
        } else if (steady_now() - seen_since > seen_ttl) {
          // Not renewed within its lease: the holder is gone. Take over (only one waiter can).
          if (try_put(seen_etag)) break;
        }
      }
      retry.cap_delay(std::max<std::chrono::microseconds>(seen_ttl / 4, std::chrono::milliseconds(10)));
      if (!retry.next())
        throw ConflictError(im_.label() + " store " + settings_.store + ": could not lock " + what_ + " within " +
                            std::to_string(settings_.timeout.count()) + " ms; it is held by " +
                            (seen_text.empty() ? std::string("another process") : seen_text));
    }
    renewed_ = put_sent_;
    heartbeat_ = std::thread([this] { heartbeat(); });
  }

  void check() const override {
    if (lost_)
      throw ConflictError(im_.label() + " store " + settings_.store + ": the lock on " + what_ + " was lost (" +
                          lost_why_ + "); nothing more is changed under it");
    if (steady_now() - renewed_.load() > ttl_)
      throw ConflictError(im_.label() + " store " + settings_.store + ": the lock on " + what_ +
                          " was not renewed within " + std::to_string(ttl_.count()) +
                          " ms and may have been taken over; nothing more is changed under it");
  }

 private:
  std::string body() const {
    nlohmann::json j{{"zarrpp_lock", what_},
                     {"owner", owner_},
                     {"holder", about_},
                     {"ttl_ms", ttl_.count()},
                     {"renewal", renewals_}};
    if (released_) j["released"] = true;
    return j.dump();
  }

  // Whether a lease object says its holder released it.
  static bool released(const Bytes& bytes) {
    const auto j = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, /*allow_exceptions=*/false);
    return j.is_object() && j.contains("released") && j["released"].is_boolean() && j["released"].get<bool>();
  }

  // The ttl a lease object states (a waiter honours the holder's ttl); ours when unreadable.
  std::chrono::milliseconds ttl_of(const std::string& text) const {
    const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && j.contains("ttl_ms") && j["ttl_ms"].is_number_integer()) {
      const auto v = j["ttl_ms"].get<long long>();
      if (v >= 40 && v <= 24LL * 3600 * 1000) return std::chrono::milliseconds(v);
    }
    return ttl_;
  }

  // The owner token a lease object names ("" when unreadable).
  static std::string owner_of(const Bytes& bytes) {
    const auto j = nlohmann::json::parse(bytes.begin(), bytes.end(), nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && j.contains("owner") && j["owner"].is_string()) return j["owner"].get<std::string>();
    return "";
  }

  // Whether the lease object now stored is exactly `value`, the one this PUT sent (a PUT of ours
  // took effect though its answer was lost or said otherwise): then its ETag becomes ours. Exact
  // bytes, not just our owner token: an earlier object of ours (a renewal that did not land) must
  // not pass for a renewal that did.
  bool stored_is(const Bytes& value) {
    const auto cur = im_.get_with_etag(full_);
    if (!cur || cur->first != value || cur->second.empty()) return false;
    etag_ = cur->second;
    return true;
  }

  // PUT our lease: create it (no `match`) or replace the object with ETag *match. True when ours;
  // then put_sent_ is when that PUT went out, which is no later than any waiter saw it (so the
  // lease's time is counted from there, never from when its answer arrived).
  bool try_put(const std::optional<std::string>& match) {
    const std::string text = body();
    const Bytes value(text.begin(), text.end());
    auto req =
        im_.object_request("PUT", full_, value, {match ? "If-Match: " + *match : std::string("If-None-Match: *")});
    req.extra_retry_statuses = im_.conditional_retry_statuses();
    put_sent_ = steady_now();
    HttpResponse resp;
    try {
      resp = im_.perform(req);
    } catch (const HttpFailure& e) {
      // The PUT may have taken effect before the failure: what is stored decides.
      if (e.maybe_applied() && stored_is(value)) return true;
      throw;
    }
    if (resp.status >= 200 && resp.status < 300) {
      const std::string* e = resp.header("etag");
      if (e && !e->empty()) {
        etag_ = *e;
        return true;
      }
      if (stored_is(value)) return true;
      throw StoreError(im_.label() + " PUT of '" + full_ + "': the response has no ETag, so the lease cannot be held");
    }
    if (im_.condition_failed(resp, match.has_value())) {
      // An earlier copy may have succeeded before its answer was lost (or libcurl re-sent it).
      return resp.ambiguous && stored_is(value);
    }
    // A 5xx after the PUT may have been carried out: it counts if it is what is stored.
    if (resp.ambiguous && resp.status >= 500 && stored_is(value)) return true;
    im_.fail(req, resp);
    throw StoreError(im_.failure_prefix(req, resp.attempts) + "HTTP " + std::to_string(resp.status));  // fail() throws
  }

  void heartbeat() {
    const auto period = std::max(ttl_ / 4, std::chrono::milliseconds(10));
    std::unique_lock lk(mu_);
    while (!stop_) {
      wait_until(cv_, lk, steady_now() + period, [&] { return stop_; });
      if (stop_) return;
      lk.unlock();
      try {
        ++renewals_;
        if (try_put(etag_)) {
          renewed_ = put_sent_;
        } else {
          lost_why_ =
              "another process took it over after it was not renewed for " + std::to_string(ttl_.count()) + " ms";
          lost_ = true;
          return;
        }
      } catch (const std::exception& e) {
        // Keep trying until the lease runs out; check() reports an expired lease.
        if (steady_now() - renewed_.load() > ttl_) {
          lost_why_ = std::string("renewing it failed: ") + e.what();
          lost_ = true;
          return;
        }
      }
      lk.lock();
    }
  }

  const ObjectService& im_;
  std::string full_, what_;
  LeaseSettings settings_;
  std::string owner_, about_;
  std::chrono::milliseconds ttl_{};
  std::string etag_;  // of our current lease object; written before the heartbeat starts, then only by it
  std::uint64_t renewals_ = 0;
  bool released_ = false;  // the body marks the lease released (set when releasing it)
  SteadyTime put_sent_{};  // when the latest PUT of ours went out
  std::atomic<SteadyTime> renewed_{};
  std::atomic<bool> lost_{false};
  std::string lost_why_;  // written before lost_ is set
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread heartbeat_;
};

}  // namespace

std::unique_ptr<StoreLock> take_lease(const ObjectService& s, const std::string& full, const std::string& what,
                                      const LeaseSettings& settings) {
  auto lease = std::make_unique<Lease>(s, full, what, settings);
  lease->acquire();
  return lease;
}

}  // namespace zarrpp::detail
