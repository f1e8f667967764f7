// Conditional PUTs and DELETEs of the object stores, and finding out whether a server honours them.
#include <functional>

#include "../../core/retry.hpp"
#include "encoding.hpp"
#include "object_service.hpp"

namespace zarrpp::detail {

namespace {

// A server that rejects the header outright (400, 501) does not support it either.
bool unsupported(long s) { return s == 400 || s == 501; }

// Best effort: a leftover probe object is invisible to the store (reserved name).
struct ProbeCleanup {
  const ObjectService& s;
  const std::string& full;
  ~ProbeCleanup() {
    try {
      (void)s.perform(s.object_request("DELETE", full, {}, {}));
    } catch (const StoreError&) {
    }
  }
};

// After a request that may have been carried out unseen: whether `full` holds `value` now.
// UncertainWriteError when that cannot be read.
bool holds(const ObjectService& s, const std::string& full, const Bytes& value, const std::string& key,
           const std::string& store, const std::string& why) {
  try {
    const auto now = s.get_with_etag(full);
    return now && now->first == value;
  } catch (const StoreError& e) {
    throw UncertainWriteError(s.label() + " store " + store + ": whether the write of '" + key +
                              "' took effect is unknown (" + why + "; reading it back failed: " + e.what() + ")");
  }
}

// A write that reached the server and is not what is stored now.
UncertainWriteError may_still_take_effect(const std::string& why, const std::string& key) {
  return UncertainWriteError(why + "; '" + key +
                             "' does not hold this write now, but the request reached the server and may still "
                             "take effect");
}

ConditionalSupport probe_once(const ObjectService& s, const std::string& probe) {
  const std::string text = "zarrpp conditional-write probe";
  const Bytes body(text.begin(), text.end());
  ProbeCleanup cleanup{s, probe};  // even a refused or failed PUT may have created the object
  auto put = [&](const std::string& condition) {
    auto req = s.object_request("PUT", probe, body, {condition});
    auto resp = s.perform(req);
    return std::make_pair(std::move(req), std::move(resp));
  };
  ConditionalSupport c;
  auto [req1, first] = put("If-None-Match: *");
  if (unsupported(first.status)) return c;
  if ((first.status < 200 || first.status >= 300) && !s.condition_failed(first, false)) s.fail(req1, first);
  auto [req2, second] = put("If-None-Match: *");
  if (s.condition_failed(second, false))
    c.create_only = true;
  else if ((second.status < 200 || second.status >= 300) && !unsupported(second.status))
    s.fail(req2, second);
  auto [req3, third] = put("If-Match: \"00000000000000000000000000000000\"");
  if (s.condition_failed(third, true))
    c.replace = true;
  else if ((third.status < 200 || third.status >= 300) && !unsupported(third.status))
    s.fail(req3, third);
  // DELETE with a wrong If-Match: refused when honoured; a server that ignores it deletes the
  // probe. (Asked only of servers with conditional writes: without them nothing is erased
  // conditionally.)
  if (!(c.create_only && c.replace)) return c;
  const auto del = s.object_request("DELETE", probe, {}, {"If-Match: \"00000000000000000000000000000000\""});
  const auto fourth = s.perform(del);
  if (fourth.status != 404 && s.condition_failed(fourth, true))
    c.erase = true;
  else if (!(fourth.status >= 200 && fourth.status < 300) && fourth.status != 404 && !unsupported(fourth.status))
    s.fail(del, fourth);
  return c;
}

}  // namespace

ConditionalSupport ConditionalProbe::get(const ObjectService& s, const std::string& probe_prefix) {
  // One refusal may be a glitch (a proxy, a node being replaced): a server is taken not to
  // support conditional writes only when every probe of a round says so, and that finding is
  // asked again after kReprobeAfter, so a long-lived process recovers. Support, once seen, stays.
  constexpr int kRounds = 3;
  constexpr auto kReprobeAfter = std::chrono::minutes(5);
  auto complete = [](const ConditionalSupport& x) { return x.create_only && x.replace && x.erase; };
  std::lock_guard lk(mu_);
  if (known_ && (complete(*known_) || steady_now() - probed_at_ < kReprobeAfter)) return *known_;
  ConditionalSupport c = known_.value_or(ConditionalSupport{});
  Retry retry({.initial_delay = std::chrono::milliseconds(200),
               .max_delay = std::chrono::seconds(1),
               .deadline = std::chrono::milliseconds(0),
               .max_attempts = kRounds});
  do {
    const ConditionalSupport r = probe_once(s, probe_prefix + random_hex(16));
    c = {c.create_only || r.create_only, c.replace || r.replace, c.erase || r.erase};
  } while (!complete(c) && retry.next());
  known_ = c;
  probed_at_ = steady_now();
  return c;
}

bool put_if(const ObjectService& s, const std::string& full, const Bytes& value, const std::optional<Version>& expected,
            const std::string& key, const std::string& store) {
  if (expected && expected->empty())
    throw StoreError(s.label() + " store " + store + ": '" + key +
                     "' was read without an ETag, so a write conditioned on it cannot be made");
  auto req = s.object_request("PUT", full, value, {expected ? "If-Match: " + *expected : "If-None-Match: *"});
  req.extra_retry_statuses = s.conditional_retry_statuses();
  // When the request may have been carried out without this writer seeing the answer (a lost
  // reply, a re-send, a 5xx), what is stored now decides: the write took effect when it holds our
  // bytes. When it does not, the write may still be carried out later (a request the server holds):
  // that is said (UncertainWriteError), never taken as "not written".
  auto stored_is_ours = [&](const std::string& why) { return holds(s, full, value, key, store, why); };
  auto uncertain = [&](const std::string& why) { return may_still_take_effect(why, key); };
  HttpResponse resp;
  try {
    resp = s.perform(req);
  } catch (const HttpFailure& e) {
    if (!e.maybe_applied()) throw;
    if (stored_is_ours(e.what())) return true;
    throw uncertain(e.what());
  }
  if (resp.status >= 200 && resp.status < 300) return true;
  if (s.condition_failed(resp, expected.has_value())) {
    if (!resp.ambiguous) return false;
    // An earlier copy may have succeeded before its answer was lost: then the value is ours. When
    // another writer's value is there, no copy can take effect any more, but the first may have
    // landed and been built on: "not written" would have the caller apply its change again on
    // top of that writer's (found by the simulated object store), so that is said instead.
    const std::string why = s.failure_prefix(req, resp.attempts) + "the answer was HTTP " +
                            std::to_string(resp.status) + " to a request that may have been sent twice";
    if (stored_is_ours(why)) return true;
    throw SupersededWriteError(why + "; '" + key +
                               "' holds another writer's value now: this write may have taken effect before it "
                               "(and been built on), so it is not made again");
  }
  if (resp.ambiguous && resp.status >= 500) {
    const std::string why = s.failure_prefix(req, resp.attempts) + "HTTP " + std::to_string(resp.status);
    if (stored_is_ours(why)) return true;
    throw uncertain(why);
  }
  s.fail(req, resp);
  throw StoreError(s.failure_prefix(req, resp.attempts) + "HTTP " + std::to_string(resp.status));  // fail() throws
}

void put_plain(const ObjectService& s, const std::string& full, const Bytes& value, const std::string& key,
               const std::string& store) {
  const auto req = s.object_request("PUT", full, value, {});
  // Found by the simulated object store: a PUT that failed after an attempt reached the server (a
  // lost answer, then 503s) was reported as a plain failure while the value had been written.
  auto decide = [&](const std::string& why) {
    if (!holds(s, full, value, key, store, why)) throw may_still_take_effect(why, key);
  };
  HttpResponse resp;
  try {
    resp = s.perform(req);
  } catch (const HttpFailure& e) {
    if (!e.maybe_applied()) throw;
    return decide(e.what());
  }
  if (resp.status >= 200 && resp.status < 300) return;
  if (resp.ambiguous) return decide(s.failure_prefix(req, resp.attempts) + "HTTP " + std::to_string(resp.status));
  s.fail(req, resp);
}

bool delete_if(const ObjectService& s, const std::string& full, const Version& expected, const std::string& key,
               const std::string& store, const std::function<bool()>& exists) {
  if (expected.empty())
    throw StoreError(s.label() + " store " + store + ": '" + key +
                     "' was read without an ETag, so a delete conditioned on it cannot be made");
  auto req = s.object_request("DELETE", full, {}, {"If-Match: " + expected});
  req.extra_retry_statuses = s.conditional_retry_statuses();
  HttpResponse resp;
  try {
    resp = s.perform(req);
  } catch (const HttpFailure& e) {
    // The DELETE may have been carried out before the failure: gone now means gone as asked.
    if (!e.maybe_applied()) throw;
    if (!exists()) return true;
    throw UncertainWriteError(std::string(e.what()) + "; '" + key +
                              "' is still there, but the request reached the server and may still take effect");
  }
  if (resp.status >= 200 && resp.status < 300) return true;
  if (s.condition_failed(resp, true)) {
    // An earlier copy may have deleted it before its answer was lost (a server may then answer
    // 412 as well as 404): gone now means gone as asked.
    if (resp.ambiguous) return !exists();
    return false;
  }
  if (resp.ambiguous && resp.status >= 500) {
    if (!exists()) return true;
    throw UncertainWriteError(s.failure_prefix(req, resp.attempts) + "HTTP " + std::to_string(resp.status) + "; '" +
                              key + "' is still there, but the request reached the server and may still take effect");
  }
  s.fail(req, resp);
  throw StoreError(s.failure_prefix(req, resp.attempts) + "HTTP " + std::to_string(resp.status));  // fail() throws
}

}  // namespace zarrpp::detail
