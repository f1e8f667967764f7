#include "fault_transport.hpp"

#include <algorithm>

#include "store/remote/encoding.hpp"

namespace zarrpp::sim {

namespace {

thread_local std::uint64_t t_op = 0;
// Set on a transport's thread while an attempt's outcome is handed over: a retry the client starts
// from there belongs to the same operation.
thread_local const std::uint64_t* t_retry_op = nullptr;

Bytes text_bytes(std::string_view s) { return Bytes(s.begin(), s.end()); }

bool lease(const detail::HttpRequest& r) { return r.url.find(".zarrpp-lock.") != std::string::npos; }

bool conditional_put(const detail::HttpRequest& r) {
  return r.method == "PUT" && (header_of(r, "If-Match") || header_of(r, "If-None-Match"));
}

}  // namespace

std::uint64_t& current_op() { return t_op; }

const char* fault_name(Fault f) {
  switch (f) {
    case Fault::lost_after:
      return "reply lost after the change";
    case Fault::lost_before:
      return "request lost before the server";
    case Fault::server_error:
      return "5xx / SlowDown";
    case Fault::reset_mid_body:
      return "reset mid-body";
    case Fault::cut_body:
      return "truncated body";
    case Fault::over_long:
      return "over-long body";
    case Fault::etag_changed:
      return "ETag changed before the request";
    case Fault::stall:
      return "stall to the timeout";
    case Fault::conflict:
      return "409 conflict";
    case Fault::refused:
      return "connection refused";
    case Fault::count:
      break;
  }
  return "?";
}

FaultTransport::FaultTransport(ObjectServer& server, SimTime& time, FaultCounts& counts, FaultPlan plan,
                               std::uint64_t seed)
    : server_(server), time_(time), counts_(counts), plan_(plan), rng_(seed) {
  thread_ = std::thread([this] { run(); });
}

FaultTransport::~FaultTransport() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  for (auto& j : queue_) {
    detail::Exchange e;
    e.error = detail::TransferError::closed;
    e.error_text = "closed";
    j.done(std::move(e));
  }
}

void FaultTransport::start(std::shared_ptr<const detail::HttpRequest> req, detail::AttemptLimits limits,
                           Clock::time_point not_before, Done done) {
  const std::uint64_t op = t_retry_op ? *t_retry_op : t_op;
  {
    std::lock_guard lk(mu_);
    queue_.push_back({std::move(req), limits, std::max(not_before, hold_), std::move(done), op});
  }
  cv_.notify_all();
}

void FaultTransport::hold_until(Clock::time_point t) {
  std::lock_guard lk(mu_);
  hold_ = std::max(hold_, t);
}

void FaultTransport::run() {
  std::unique_lock lk(mu_);
  for (;;) {
    cv_.wait(lk, [&] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    auto it =
        std::min_element(queue_.begin(), queue_.end(), [](const Job& a, const Job& b) { return a.when < b.when; });
    if (const auto now = time_.now(); it->when > now) {  // a backoff: wait for its simulated time
      cv_.wait_for(lk, time_.real(it->when - now));
      continue;
    }
    Job j = std::move(*it);
    queue_.erase(it);
    lk.unlock();
    detail::Exchange e = attempt(j);
    t_retry_op = &j.op;
    j.done(std::move(e));
    t_retry_op = nullptr;
    lk.lock();
  }
}

Fault FaultTransport::pick(const detail::HttpRequest& req) {
  const bool get = req.method == "GET" && req.url.find('?') == std::string::npos;
  const bool ranged = get && header_of(req, "Range").has_value();
  for (;;) {
    const auto f = static_cast<Fault>(rng_() % static_cast<std::uint64_t>(Fault::count));
    if ((f == Fault::reset_mid_body || f == Fault::cut_body) && !get) continue;
    // Over-long: a ranged GET answered whole, or a body beyond the bound the client set (not on the
    // lease, which a waiter reads again and again: one such answer would fail every growth).
    if (f == Fault::over_long && !ranged && !(get && req.max_body > 0 && !lease(req))) continue;
    // Another tool rewriting an object with the same bytes: not the lease objects, which only
    // zarrpp writes (a rewrite there would keep a waiter from ever seeing the lease unrenewed).
    if (f == Fault::etag_changed && (req.url.find('?') != std::string::npos || req.method == "POST" || lease(req)))
      continue;
    if (f == Fault::conflict && (!conditional_put(req) || !plan_.conflicts)) continue;
    return f;
  }
}

detail::Exchange FaultTransport::attempt(const Job& j) {
  counts_.requests.fetch_add(1);
  const bool listing = j.req->method == "GET" && (j.req->url.find("list-type") != std::string::npos ||
                                                  j.req->url.find("comp=list") != std::string::npos);
  int lag = 0;
  if (listing && plan_.max_list_lag > 0 && rng_() % 4 == 0) {
    lag = static_cast<int>(1 + rng_() % static_cast<std::uint64_t>(plan_.max_list_lag));
    counts_.list_lags.fetch_add(1);
  }
  if (std::uniform_real_distribution<double>(0, 1)(rng_) >= plan_.rate) {
    detail::Exchange e;
    e.sends = 1;
    e.response = server_.handle(*j.req, j.op, lag);
    e.uploaded = j.req->body.size();
    e.downloaded = e.response.body.size();
    return e;
  }
  const Fault f = pick(*j.req);
  counts_.by_kind[static_cast<std::size_t>(f)].fetch_add(1);
  if (f == Fault::lost_after && conditional_put(*j.req)) counts_.lost_conditional_put_replies.fetch_add(1);
  return faulty(j, f);
}

detail::Exchange FaultTransport::faulty(const Job& j, Fault f) {
  const detail::HttpRequest& req = *j.req;
  detail::Exchange e;
  e.sends = 1;
  e.uploaded = req.body.size();
  auto broken = [&](detail::TransferError err, const char* text) {
    e.error = err;
    e.error_text = text;
    e.response = {};
    return e;
  };
  auto carried_out = [&] { return server_.handle(req, j.op, 0); };
  switch (f) {
    case Fault::lost_after:
      (void)carried_out();
      return broken(detail::TransferError::reset, "Connection reset by peer (simulated: reply lost)");
    case Fault::lost_before:
      return broken(detail::TransferError::reset, "Connection reset by peer (simulated: request lost)");
    case Fault::server_error:
      if (rng_() % 2) {
        e.response.status = 503;
        e.response.body = text_bytes("<Error><Code>SlowDown</Code></Error>");
        return e;
      }
      if (rng_() % 2) (void)carried_out();
      e.response.status = 500;
      e.response.body = text_bytes("<Error><Code>InternalError</Code></Error>");
      return e;
    case Fault::reset_mid_body:
    case Fault::cut_body: {
      const auto r = carried_out();
      e.downloaded = r.body.size() / 2 + 1;
      return f == Fault::cut_body ? broken(detail::TransferError::cut_body, "transfer closed with bytes remaining")
                                  : broken(detail::TransferError::reset, "Connection reset mid-body (simulated)");
    }
    case Fault::over_long: {
      if (!header_of(req, "Range")) {
        e.downloaded = req.max_body + 1;
        return broken(detail::TransferError::too_large, "the body exceeds the limit (simulated)");
      }
      detail::HttpRequest whole = req;  // a server that ignores Range
      std::erase_if(whole.headers, [](const std::string& h) { return h.rfind("Range:", 0) == 0; });
      e.response = server_.handle(whole, j.op, 0);
      e.downloaded = e.response.body.size();
      return e;
    }
    case Fault::etag_changed: {
      const std::string base = std::string("http://sim.invalid/") + ObjectServer::kBucket + "/";
      if (req.url.rfind(base, 0) == 0)
        (void)server_.touch(detail::percent_decode(std::string_view(req.url).substr(base.size()), "key"));
      e.response = server_.handle(req, j.op, 0);
      e.downloaded = e.response.body.size();
      return e;
    }
    case Fault::stall: {
      const auto bound = j.limits.stall.count() > 0 ? j.limits.stall : j.limits.total;
      time_.sleep_for(std::chrono::nanoseconds(bound) * static_cast<std::int64_t>(1 + rng_() % 8) / 8);
      if (rng_() % 2) (void)carried_out();
      return broken(detail::TransferError::timeout, "Operation too slow (simulated stall)");
    }
    case Fault::conflict:
      e.response.status = 409;
      e.response.body = text_bytes("<Error><Code>ConditionalRequestConflict</Code></Error>");
      return e;
    case Fault::refused:
      e.sends = 0;
      e.uploaded = 0;
      return broken(detail::TransferError::connect, "Connection refused (simulated)");
    case Fault::count:
      break;
  }
  return e;
}

}  // namespace zarrpp::sim
