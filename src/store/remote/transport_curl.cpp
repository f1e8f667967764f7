// The libcurl transport: libcurl's multi interface driven by one thread per store, so the number
// of requests on the wire is the store's in-flight limit, not its number of threads. Each attempt
// is one easy handle; handles are reused, connections kept alive in the multi handle's cache.
#include <curl/curl.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "byte_ranges.hpp"
#include "transport.hpp"
#include "zarrpp/core/error.hpp"

#if LIBCURL_VERSION_NUM < 0x075000
#error "zarrpp's remote stores need libcurl 7.80 or newer (CURLOPT_AWS_SIGV4, CURLOPT_PREREQFUNCTION)"
#endif

namespace zarrpp::detail {

namespace {

void global_init() {
  static const CURLcode rc = curl_global_init(CURL_GLOBAL_DEFAULT);
  if (rc != CURLE_OK) throw StoreError(std::string("cannot initialise libcurl: ") + curl_easy_strerror(rc));
}

TransferError classify(CURLcode rc, bool too_large) {
  if (too_large) return TransferError::too_large;
  switch (rc) {
    case CURLE_OK:
      return TransferError::none;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_SSL_CONNECT_ERROR:
      return TransferError::connect;
    case CURLE_OPERATION_TIMEDOUT:
      return TransferError::timeout;
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return TransferError::reset;
    case CURLE_PARTIAL_FILE:
      return TransferError::cut_body;
    default:
      return TransferError::other;
  }
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::string trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return std::string(s);
}

// One attempt on the wire: the request, what has arrived, and what libcurl needs kept alive.
struct Transfer {
  std::shared_ptr<const HttpRequest> req;
  AttemptLimits limits;
  Transport::Clock::time_point not_before;
  Transport::Done done;
  CURL* handle = nullptr;
  curl_slist* headers = nullptr;
  Exchange ex;
  std::uint64_t cap = 0;  // the most body bytes accepted
  bool head = false;      // HEAD: Content-Length describes a body that will not come
  bool too_large = false;
  char errbuf[CURL_ERROR_SIZE] = {};
};

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  auto& body = t->ex.response.body;
  if (body.size() + size * n > t->cap) {  // a server sending more than could be right
    t->too_large = true;
    return 0;  // aborts the transfer
  }
  body.insert(body.end(), reinterpret_cast<const std::uint8_t*>(data),
              reinterpret_cast<const std::uint8_t*>(data) + size * n);
  return size * n;
}

std::size_t on_header(char* data, std::size_t size, std::size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  auto& r = t->ex.response;
  const std::string_view line(data, size * n);
  if (line.starts_with("HTTP/")) {
    // A new response (after a redirect or a 100 Continue): start over.
    r.headers.clear();
    r.body.clear();
    const std::size_t sp1 = line.find(' ');
    const std::size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
    r.reason = sp2 == std::string_view::npos ? "" : trim(line.substr(sp2 + 1));
    return size * n;
  }
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) return size * n;
  std::string name = trim(line.substr(0, colon));
  std::transform(name.begin(), name.end(), name.begin(),
                 [](char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); });
  std::string value = trim(line.substr(colon + 1));
  if (name == "content-length" && !t->head) {
    const auto len = parse_content_length(value);
    if (len && *len > t->cap) {  // announced too large: stop before it comes
      t->too_large = true;
      return 0;
    }
    // Reserve for the body, within reason (the length is only a hint here).
    if (len && *len <= (std::uint64_t{1} << 30)) r.body.reserve(static_cast<std::size_t>(*len));
  }
  r.headers.emplace_back(std::move(name), std::move(value));
  return size * n;
}

// Called by libcurl every time the request is about to go out on a connection.
int on_send(void* user, char*, char*, int, int) {
  ++static_cast<Transfer*>(user)->ex.sends;
  return CURL_PREREQFUNC_OK;
}

class CurlTransport;

// Every live transport, so that a fork (Python's multiprocessing, a DataLoader's workers) happens
// while no transport's lock is held: the child then finds each lock free and starts over.
struct ForkGuard {
  std::mutex mu;
  std::set<CurlTransport*> live;
  static ForkGuard& get() {
    static auto* const g = [] {
      auto* guard = new ForkGuard;  // never destroyed: forks may come during exit
      ::pthread_atfork(&prepare, &resume, &resume);
      return guard;
    }();
    return *g;
  }
  static void prepare();
  static void resume();
};

class CurlTransport final : public Transport {
 public:
  explicit CurlTransport(CurlTransportOptions o) : o_(std::move(o)) {
    global_init();
    o_.max_in_flight = std::max<std::size_t>(o_.max_in_flight, 1);
    auto& g = ForkGuard::get();
    std::lock_guard lk(g.mu);
    g.live.insert(this);
  }

  ~CurlTransport() override {
    {
      auto& g = ForkGuard::get();
      std::lock_guard lk(g.mu);
      g.live.erase(this);
    }
    shut_down();
  }

  std::mutex& lock_for_fork() { return mu_; }

  void start(std::shared_ptr<const HttpRequest> req, AttemptLimits limits, Clock::time_point not_before,
             Done done) override {
    auto t = std::make_unique<Transfer>();
    t->req = std::move(req);
    t->limits = limits;
    t->not_before = not_before;
    t->done = std::move(done);
    {
      std::lock_guard lk(mu_);
      if (!stopping_) {
        if (pid_ != ::getpid()) reset_after_fork();
        waiting_.push_back(std::move(t));
        if (!thread_.joinable()) {
          multi_ = curl_multi_init();
          curl_multi_setopt(multi_, CURLMOPT_MAXCONNECTS, static_cast<long>(o_.max_in_flight + o_.max_connections));
          thread_ = std::thread([this] { run(); });
        } else {
          curl_multi_wakeup(multi_);
        }
        return;
      }
    }
    close(*t);
  }

  void hold_until(Clock::time_point t) override {
    std::lock_guard lk(mu_);
    hold_ = std::max(hold_, t);
  }

  std::size_t in_flight() const override { return active_count_.load(); }
  std::size_t most_in_flight() const override { return most_.load(); }

 private:
  static void close(Transfer& t) {
    t.ex.error = TransferError::closed;
    t.ex.error_text = "the store was closed while the request waited";
    t.done(std::move(t.ex));
  }

  // A forked child inherits the state but not the thread: it starts over (the parent's
  // transfers are the parent's).
  void reset_after_fork() {
    if (thread_.joinable()) thread_.detach();
    // The parent's transfers, handles and multi handle are never completed or cleaned up here;
    // kept reachable from a static, so a leak checker in the child does not report them.
    static auto* const left = new std::vector<std::unique_ptr<Transfer>>;
    for (auto& t : waiting_) left->push_back(std::move(t));
    for (auto& [h, t] : active_) left->push_back(std::move(t));
    waiting_.clear();
    active_.clear();
    static auto* const handles = new std::vector<void*>;
    handles->push_back(multi_);
    for (CURL* h : idle_) handles->push_back(h);
    multi_ = nullptr;
    idle_.clear();
    pid_ = ::getpid();
  }

  void shut_down() {
    {
      std::lock_guard lk(mu_);
      stopping_ = true;
      if (multi_ && thread_.joinable()) curl_multi_wakeup(multi_);
    }
    if (thread_.joinable() && pid_ == ::getpid()) thread_.join();
    for (auto& t : waiting_) close(*t);
    waiting_.clear();
    for (CURL* h : idle_) curl_easy_cleanup(h);
    if (multi_ && pid_ == ::getpid()) curl_multi_cleanup(multi_);
  }

  CURL* take_handle() {
    if (!idle_.empty()) {
      CURL* h = idle_.back();
      idle_.pop_back();
      return h;
    }
    return curl_easy_init();
  }

  void configure(Transfer& t) {
    CURL* h = t.handle;
    const HttpRequest& req = *t.req;
    curl_easy_reset(h);
    t.head = req.method == "HEAD";
    t.cap = req.max_body ? req.max_body : std::numeric_limits<std::uint64_t>::max();
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, t.errbuf);
    curl_easy_setopt(h, CURLOPT_URL, req.url.c_str());
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    // HTTP/1.1 only: the lost-reply guarantees are tested on it (docs/reliability.md, section 8).
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
    curl_easy_setopt(h, CURLOPT_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
    curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(t.limits.connect.count()));
    if (t.limits.total.count() > 0) curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(t.limits.total.count()));
    if (t.limits.stall.count() > 0) {
      curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
      curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, static_cast<long>((t.limits.stall.count() + 999) / 1000));
    }
    if (o_.max_connections == 0) curl_easy_setopt(h, CURLOPT_FORBID_REUSE, 1L);
    if (!o_.user_agent.empty()) curl_easy_setopt(h, CURLOPT_USERAGENT, o_.user_agent.c_str());
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, o_.verify_tls ? 1L : 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, o_.verify_tls ? 2L : 0L);
    if (!o_.ca_file.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, o_.ca_file.c_str());
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, req.follow_redirects ? 1L : 0L);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
    configure_method(t);
    for (const auto& hd : req.headers) {
      curl_slist* next = curl_slist_append(t.headers, hd.c_str());
      if (!next) throw std::bad_alloc();
      t.headers = next;
    }
    // No waiting for "100 Continue" (libcurl asks for it before a large body): the go-ahead costs
    // a round trip on every large PUT, and object stores answer the request anyway. (Removing the
    // Expect header instead breaks libcurl's SigV4 signature, which would sign it as empty.)
    curl_easy_setopt(h, CURLOPT_EXPECT_100_TIMEOUT_MS, 0L);
    if (t.headers) curl_easy_setopt(h, CURLOPT_HTTPHEADER, t.headers);
    if (!req.aws_sigv4.empty()) {
      curl_easy_setopt(h, CURLOPT_AWS_SIGV4, req.aws_sigv4.c_str());
      curl_easy_setopt(h, CURLOPT_USERNAME, req.username.c_str());
      curl_easy_setopt(h, CURLOPT_PASSWORD, req.password.c_str());
    }
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &t);
    // Every send is counted: libcurl re-sends a request by itself when a reused connection dies
    // before answering.
    const bool counted = curl_easy_setopt(h, CURLOPT_PREREQFUNCTION, on_send) == CURLE_OK &&
                         curl_easy_setopt(h, CURLOPT_PREREQDATA, &t) == CURLE_OK;
    // A runtime libcurl without the callback cannot count: requests that change something get a
    // fresh connection, which libcurl never re-sends on, and count as sent once.
    if (!counted) {
      t.ex.sends = 1;
      if (req.method != "GET" && req.method != "HEAD") curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, 1L);
    }
  }

  static void configure_method(Transfer& t) {
    static const char empty_body[1] = {0};
    CURL* h = t.handle;
    const HttpRequest& req = *t.req;
    if (req.method == "GET") {
      curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    } else if (req.method == "HEAD") {
      curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    } else if (req.method == "PUT" || req.method == "POST") {
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
      curl_easy_setopt(h, CURLOPT_POSTFIELDS,
                       req.body.empty() ? empty_body : reinterpret_cast<const char*>(req.body.data()));
      if (req.method == "PUT") curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "PUT");
    } else {
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, req.method.c_str());
    }
  }

  // Moves waiting transfers whose time has come onto the wire, up to the limit. Returns how long
  // until the next waiting one may start (or a second when none waits for time).
  long admit(std::vector<std::unique_ptr<Transfer>>& failed) {
    long wait_ms = 1000;
    const auto now = Clock::now();
    for (auto it = waiting_.begin(); it != waiting_.end() && active_.size() < o_.max_in_flight;) {
      const auto when = std::max((*it)->not_before, hold_);
      if (when > now) {
        wait_ms =
            std::min<long>(wait_ms, std::chrono::duration_cast<std::chrono::milliseconds>(when - now).count() + 1);
        ++it;
        continue;
      }
      std::unique_ptr<Transfer> t = std::move(*it);
      it = waiting_.erase(it);
      try {
        t->handle = take_handle();
        if (!t->handle) throw std::bad_alloc();
        configure(*t);
      } catch (const std::bad_alloc&) {
        t->ex.error = TransferError::other;
        t->ex.error_text = "out of memory setting up the request";
        failed.push_back(std::move(t));
        continue;
      }
      curl_multi_add_handle(multi_, t->handle);
      CURL* h = t->handle;
      active_.emplace(h, std::move(t));
    }
    active_count_ = active_.size();
    most_ = std::max(most_.load(), active_.size());
    return wait_ms;
  }

  // Fills in what a finished transfer did and takes it off the wire.
  std::unique_ptr<Transfer> finish(CURL* h, CURLcode rc) {
    auto node = active_.extract(h);
    std::unique_ptr<Transfer> t = std::move(node.mapped());
    curl_multi_remove_handle(multi_, h);
    Exchange& ex = t->ex;
    ex.error = classify(rc, t->too_large);
    if (ex.error != TransferError::none)
      ex.error_text = std::string(curl_easy_strerror(rc)) + (t->errbuf[0] ? std::string(" (") + t->errbuf + ")" : "");
    curl_easy_getinfo(h, CURLINFO_REDIRECT_COUNT, &ex.redirects);
    curl_off_t up = 0, down = 0, retry_after = 0;
    curl_easy_getinfo(h, CURLINFO_SIZE_UPLOAD_T, &up);
    curl_easy_getinfo(h, CURLINFO_SIZE_DOWNLOAD_T, &down);
    curl_easy_getinfo(h, CURLINFO_RETRY_AFTER, &retry_after);
    ex.uploaded = static_cast<std::uint64_t>(std::max<curl_off_t>(up, 0));
    ex.downloaded = static_cast<std::uint64_t>(std::max<curl_off_t>(down, 0));
    ex.retry_after = std::chrono::seconds(std::clamp<curl_off_t>(retry_after, 0, 86'400));
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    ex.response.status = ex.error == TransferError::none ? status : 0;
    char* effective = nullptr;
    if (curl_easy_getinfo(h, CURLINFO_EFFECTIVE_URL, &effective) == CURLE_OK && effective)
      ex.response.effective_url = effective;
    // Unhook what lives in the transfer before the handle is reused.
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, static_cast<curl_slist*>(nullptr));
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, static_cast<char*>(nullptr));
    curl_easy_setopt(h, CURLOPT_PREREQDATA, static_cast<void*>(nullptr));
    curl_slist_free_all(t->headers);
    t->headers = nullptr;
    t->handle = nullptr;
    // A handle whose transfer failed may hold a broken connection: not kept.
    if (rc == CURLE_OK && idle_.size() < o_.max_in_flight)
      idle_.push_back(h);
    else
      curl_easy_cleanup(h);
    return t;
  }

  void run() {
    std::vector<std::unique_ptr<Transfer>> done;
    for (;;) {
      long wait_ms;
      {
        std::lock_guard lk(mu_);
        if (stopping_) break;
        wait_ms = admit(done);
      }
      for (auto& t : done) t->done(std::move(t->ex));
      done.clear();
      int running = 0;
      curl_multi_perform(multi_, &running);
      int left = 0;
      {
        std::lock_guard lk(mu_);
        while (CURLMsg* m = curl_multi_info_read(multi_, &left))
          if (m->msg == CURLMSG_DONE) done.push_back(finish(m->easy_handle, m->data.result));
        active_count_ = active_.size();
      }
      if (!done.empty()) {
        for (auto& t : done) t->done(std::move(t->ex));
        done.clear();
        continue;  // admit the next ones at once
      }
      curl_multi_poll(multi_, nullptr, 0, static_cast<int>(wait_ms), nullptr);
    }
    // Shut down: what is on the wire is abandoned and reported closed.
    {
      std::lock_guard lk(mu_);
      for (auto& [h, t] : active_) {
        curl_multi_remove_handle(multi_, h);
        curl_slist_free_all(t->headers);
        curl_easy_cleanup(h);
        done.push_back(std::move(t));
      }
      active_.clear();
      active_count_ = 0;
    }
    for (auto& t : done) close(*t);
  }

  CurlTransportOptions o_;
  std::mutex mu_;
  bool stopping_ = false;
  pid_t pid_ = ::getpid();
  CURLM* multi_ = nullptr;
  std::thread thread_;
  std::deque<std::unique_ptr<Transfer>> waiting_;
  std::map<CURL*, std::unique_ptr<Transfer>> active_;
  std::vector<CURL*> idle_;
  Clock::time_point hold_{};
  std::atomic<std::size_t> active_count_{0}, most_{0};
};

void ForkGuard::prepare() {
  auto& g = get();
  g.mu.lock();
  for (CurlTransport* t : g.live) t->lock_for_fork().lock();
}

void ForkGuard::resume() {
  auto& g = get();
  for (CurlTransport* t : g.live) t->lock_for_fork().unlock();
  g.mu.unlock();
}

}  // namespace

std::shared_ptr<Transport> make_curl_transport(CurlTransportOptions options) {
  return std::make_shared<CurlTransport>(std::move(options));
}

}  // namespace zarrpp::detail
