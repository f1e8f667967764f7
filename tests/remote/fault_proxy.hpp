#pragma once
// A fault-injecting HTTP proxy for the remote-store tests: it sits on a loopback port between a
// store and a real server (moto, nginx), forwards every request, and lets a test decide per
// request what goes wrong: the connection dropped before the request is forwarded or after the
// server carried it out (the reply lost), a 5xx or other status instead of the server's answer,
// a body cut short or a Content-Length that lies, an ETag changed or dropped, a stall. It only
// listens on 127.0.0.1 and holds at most a bounded number of connections.
#include <list>

#include "harness.hpp"

namespace zarrpp::test {

struct Fault {
  enum class Kind {
    pass,              // forward, answer with the server's reply
    refuse,            // close the connection before forwarding (the request never reaches the server)
    lose_reply,        // forward (the server carries it out), then close without answering
    status,            // answer `status` without forwarding
    cut_body,          // forward; send the headers and half the body, then close
    short_length,      // forward; announce and send only half the body (a complete-looking reply)
    drop_etag,         // forward; remove the ETag header
    change_etag,       // forward; replace the ETag with another value
    stall,             // forward nothing, answer nothing for `stall` (then close)
    strip_conditions,  // forward without If-Match and If-None-Match (a server or proxy that drops them)
  };
  Kind kind = Kind::pass;
  int status = 0;
  std::chrono::milliseconds stall{0};
  std::function<void()> then{};  // run after forwarding, before the reply is sent or lost

  bool injected() const { return kind != Kind::pass; }
};

inline const char* to_string(Fault::Kind k) {
  switch (k) {
    case Fault::Kind::pass:
      return "pass";
    case Fault::Kind::refuse:
      return "refuse";
    case Fault::Kind::lose_reply:
      return "lose_reply";
    case Fault::Kind::status:
      return "status";
    case Fault::Kind::cut_body:
      return "cut_body";
    case Fault::Kind::short_length:
      return "short_length";
    case Fault::Kind::drop_etag:
      return "drop_etag";
    case Fault::Kind::change_etag:
      return "change_etag";
    case Fault::Kind::stall:
      return "stall";
    case Fault::Kind::strip_conditions:
      return "strip_conditions";
  }
  return "?";
}

class FaultProxy {
 public:
  // Decides what happens to the index-th request the proxy sees (counting from 0).
  using Rule = std::function<Fault(const SeenRequest&, int index)>;

  FaultProxy(int upstream_port, Rule rule) : upstream_(upstream_port), rule_(std::move(rule)) {
    listen_fd_ = listen_loopback("fault proxy", port_);
    if (::pipe2(stop_pipe_, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~FaultProxy() {
    {
      std::lock_guard lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    (void)!::write(stop_pipe_[1], "x", 1);
    acceptor_.join();
    {
      std::lock_guard lk(mu_);
      for (int fd : conns_) ::shutdown(fd, SHUT_RDWR);
    }
    for (auto& w : workers_) w.thread.join();
    ::close(listen_fd_);
    ::close(stop_pipe_[0]);
    ::close(stop_pipe_[1]);
  }
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  void set_rule(Rule r) {
    std::lock_guard lk(mu_);
    rule_ = std::move(r);
  }
  // Requests seen, with the fault each one got.
  std::vector<std::pair<SeenRequest, Fault::Kind>> seen() const {
    std::lock_guard lk(mu_);
    return seen_;
  }
  std::size_t injected() const {
    std::lock_guard lk(mu_);
    return injected_;
  }
  std::map<std::string, std::size_t> injected_by_kind() const {
    std::lock_guard lk(mu_);
    return by_kind_;
  }
  std::size_t requests() const {
    std::lock_guard lk(mu_);
    return static_cast<std::size_t>(count_);
  }
  // Whether seen() keeps the requests (a long run does not).
  void keep_requests(bool keep) {
    std::lock_guard lk(mu_);
    keep_ = keep;
  }

 private:
  static constexpr std::size_t kMaxConnections = 256;
  static constexpr std::size_t kMaxMessage = std::size_t{256} << 20;

  void accept_loop() {
    for (;;) {
      pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0) continue;
      if (fds[1].revents) return;
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      // Threads of closed connections are joined here, so a long run holds only live ones.
      for (auto it = workers_.begin(); it != workers_.end();) {
        if (!it->done->load()) {
          ++it;
          continue;
        }
        it->thread.join();
        it = workers_.erase(it);
      }
      std::lock_guard lk(mu_);
      if (conns_.size() >= kMaxConnections) {
        ::close(fd);
        continue;
      }
      conns_.insert(fd);
      auto done = std::make_shared<std::atomic<bool>>(false);
      workers_.push_back({std::thread([this, fd, done] {
                            serve(fd);
                            {
                              std::lock_guard g(mu_);
                              conns_.erase(fd);
                            }
                            ::close(fd);
                            *done = true;
                          }),
                          done});
    }
  }

  static bool recv_more(int fd, std::string& buf) {
    char chunk[65536];
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buf.append(chunk, static_cast<std::size_t>(n));
    return buf.size() <= kMaxMessage;
  }
  static bool send_all(int fd, const std::string& s) {
    std::size_t off = 0;
    while (off < s.size()) {
      const ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += static_cast<std::size_t>(n);
    }
    return true;
  }
  static std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  }

  // One HTTP message head: its first line and headers (names as sent, in order).
  struct Head {
    std::string first;
    std::vector<std::pair<std::string, std::string>> headers;
    const std::string* get(const std::string& lower_name) const {
      for (const auto& [k, v] : headers)
        if (lower(k) == lower_name) return &v;
      return nullptr;
    }
    void erase(const std::string& lower_name) {
      std::erase_if(headers, [&](const auto& h) { return lower(h.first) == lower_name; });
    }
    void set(const std::string& name, const std::string& value) {
      erase(lower(name));
      headers.emplace_back(name, value);
    }
    std::string text() const {
      std::string out = first + "\r\n";
      for (const auto& [k, v] : headers) out += k + ": " + v + "\r\n";
      return out + "\r\n";
    }
  };
  static Head parse_head(const std::string& text) {
    Head h;
    std::istringstream in(text);
    std::string line;
    std::getline(in, line);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    h.first = line;
    while (std::getline(in, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      const auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.erase(value.begin());
      h.headers.emplace_back(line.substr(0, colon), value);
    }
    return h;
  }

  // Reads one message head from fd (buffered in buf); false when the peer closed.
  static bool read_head(int fd, std::string& buf, Head& head) {
    std::size_t end;
    while ((end = buf.find("\r\n\r\n")) == std::string::npos)
      if (!recv_more(fd, buf)) return false;
    head = parse_head(buf.substr(0, end));
    buf.erase(0, end + 4);
    return true;
  }

  struct Upstream {
    Head head;
    std::string body;
  };

  // Sends the request to the server on a connection of its own and reads the whole reply.
  std::optional<Upstream> forward(const Head& req_head, const std::string& body, bool head_request) const {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<std::uint16_t>(upstream_));
    struct Closer {
      int fd;
      ~Closer() { ::close(fd); }
    } closer{fd};
    if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return std::nullopt;
    // Bounded: a wedged server must not hold a proxy thread (and the test) for ever.
    const timeval limit{.tv_sec = 30, .tv_usec = 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
    Head h = req_head;
    h.erase("expect");  // the proxy already answered 100 Continue and holds the whole body
    h.set("Connection", "close");
    if (!send_all(fd, h.text() + body)) return std::nullopt;
    std::string buf;
    Upstream up;
    do {
      if (!read_head(fd, buf, up.head)) return std::nullopt;
    } while (up.head.first.find(" 100 ") != std::string::npos);
    const int status = std::atoi(up.head.first.substr(up.head.first.find(' ') + 1).c_str());
    const bool no_body = head_request || status == 204 || status == 304;
    const std::string* cl = up.head.get("content-length");
    const std::string* te = up.head.get("transfer-encoding");
    if (no_body) return up;
    if (te && lower(*te).find("chunked") != std::string::npos) {
      for (;;) {  // de-chunk: the proxy always answers with a Content-Length
        std::size_t eol;
        while ((eol = buf.find("\r\n")) == std::string::npos)
          if (!recv_more(fd, buf)) return std::nullopt;
        const std::size_t n = std::stoul(buf.substr(0, eol), nullptr, 16);
        buf.erase(0, eol + 2);
        while (buf.size() < n + 2)
          if (!recv_more(fd, buf)) return std::nullopt;
        up.body += buf.substr(0, n);
        buf.erase(0, n + 2);
        if (n == 0) break;
      }
      up.head.erase("transfer-encoding");
      up.head.set("Content-Length", std::to_string(up.body.size()));
      return up;
    }
    if (cl) {
      const std::size_t n = std::stoul(*cl);
      while (buf.size() < n)
        if (!recv_more(fd, buf)) return std::nullopt;
      up.body = buf.substr(0, n);
      return up;
    }
    while (recv_more(fd, buf)) {
    }
    up.body = buf;
    up.head.set("Content-Length", std::to_string(up.body.size()));
    return up;
  }

  Fault decide(const SeenRequest& r) {
    std::lock_guard lk(mu_);
    const int index = count_++;
    Fault f = rule_ ? rule_(r, index) : Fault{};
    if (keep_) seen_.emplace_back(r, f.kind);
    if (f.injected()) {
      ++injected_;
      ++by_kind_[to_string(f.kind)];
    }
    return f;
  }

  void serve(int fd) {
    std::string buf;
    for (;;) {
      Head head;
      if (!read_head(fd, buf, head)) return;
      SeenRequest req;
      std::istringstream(head.first) >> req.method >> req.target;
      for (const auto& [k, v] : head.headers) req.headers[lower(k)] = v;
      const std::size_t body_len = req.headers.count("content-length") ? std::stoul(req.headers["content-length"]) : 0;
      if (req.headers.count("expect") && !send_all(fd, "HTTP/1.1 100 Continue\r\n\r\n")) return;
      while (buf.size() < body_len)
        if (!recv_more(fd, buf)) return;
      req.body = buf.substr(0, body_len);
      buf.erase(0, body_len);
      const Fault f = decide(req);
      using K = Fault::Kind;
      if (f.kind == K::refuse) return (void)::shutdown(fd, SHUT_RDWR);
      if (f.kind == K::stall) {
        std::unique_lock lk(mu_);
        cv_.wait_for(lk, f.stall, [this] { return stop_; });
        return (void)::shutdown(fd, SHUT_RDWR);
      }
      if (f.kind == K::status) {
        const std::string body = "<Error><Code>Injected</Code><Message>injected by the fault proxy</Message></Error>";
        const std::string out = "HTTP/1.1 " + std::to_string(f.status) + " " + detail::standard_reason(f.status) +
                                "\r\nContent-Type: application/xml\r\nContent-Length: " + std::to_string(body.size()) +
                                "\r\n\r\n" + (req.method == "HEAD" ? std::string() : body);
        if (!send_all(fd, out)) return;
        continue;
      }
      Head sent = head;
      if (f.kind == K::strip_conditions) {
        sent.erase("if-match");
        sent.erase("if-none-match");
      }
      auto up = forward(sent, req.body, req.method == "HEAD");
      if (f.then) f.then();
      if (!up || f.kind == K::lose_reply) return (void)::shutdown(fd, SHUT_RDWR);
      std::string body = std::move(up->body);
      switch (f.kind) {
        case K::cut_body: {
          const std::string out = up->head.text() + body.substr(0, body.size() / 2);
          send_all(fd, out);
          return (void)::shutdown(fd, SHUT_RDWR);
        }
        case K::short_length:
          body.resize(body.size() / 2);
          up->head.set("Content-Length", std::to_string(body.size()));
          break;
        case K::drop_etag:
          up->head.erase("etag");
          break;
        case K::change_etag:
          up->head.set("ETag", "\"0123456789abcdef0123456789abcdef\"");
          break;
        default:
          break;
      }
      up->head.erase("connection");
      if (!send_all(fd, up->head.text() + (req.method == "HEAD" ? std::string() : body))) return;
    }
  }

  int upstream_;
  Rule rule_;
  int listen_fd_ = -1, port_ = 0;
  int stop_pipe_[2] = {-1, -1};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::vector<std::pair<SeenRequest, Fault::Kind>> seen_;
  std::size_t injected_ = 0;
  int count_ = 0;
  bool keep_ = true;
  std::map<std::string, std::size_t> by_kind_;
  std::set<int> conns_;
  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::list<Worker> workers_;  // touched by the acceptor thread only (and the destructor after it)
  std::thread acceptor_;
};

}  // namespace zarrpp::test
