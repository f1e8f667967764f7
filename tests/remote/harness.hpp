#pragma once
// The remote-store test harness: servers the tests start themselves on free loopback ports —
// nginx serving a temporary directory, a scripted in-process HTTP server for failures nginx
// cannot produce (resets, timeouts, 5xx, servers ignoring Range), and moto_server (S3, checked
// with boto3) — plus processes, ports and environment variables.
#include <arpa/inet.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "../common.hpp"
#include "core/xml_escape.hpp"
#include "store/remote/byte_ranges.hpp"
#include "store/remote/encoding.hpp"
#include "store/remote/http_client.hpp"
#include "store/remote/s3_responses.hpp"
#include "store/remote/xml.hpp"
#include "zarrpp/store/http_store.hpp"
#include "zarrpp/store/s3_store.hpp"
#include "zarrpp/store/url.hpp"
#include "zarrpp/zarrpp.hpp"

namespace zarrpp::test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// ---- processes, ports, temporary directories ----------------------------------------------------

inline int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
    throw std::runtime_error("cannot bind a port");
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

inline bool port_open(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

inline std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_text(const fs::path& p, const std::string& s) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << s;
}

inline std::string find_program(const std::string& name, const std::vector<std::string>& extra_dirs = {}) {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream ss(path);
    for (std::string d; std::getline(ss, d, ':');) dirs.push_back(d);
  }
  dirs.insert(dirs.end(), extra_dirs.begin(), extra_dirs.end());
  for (const auto& d : dirs) {
    const fs::path p = fs::path(d) / name;
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  }
  return "";
}

// A child process in its own process group (so everything it starts is stopped with it).
class Process {
 public:
  Process(const std::vector<std::string>& argv, const fs::path& log) {
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      ::setpgid(0, 0);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
      }
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execvp(args[0], args.data());
      ::_exit(127);
    }
    ::setpgid(pid_, pid_);
  }
  ~Process() { stop(); }
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  bool running() {
    if (pid_ <= 0) return false;
    int st = 0;
    if (::waitpid(pid_, &st, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    return true;
  }
  void stop() {
    if (pid_ <= 0) return;
    ::kill(-pid_, SIGTERM);
    for (int i = 0; i < 100; ++i) {
      int st = 0;
      if (::waitpid(pid_, &st, WNOHANG) == pid_) {
        ::kill(-pid_, SIGKILL);  // stragglers of the group
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(50ms);
    }
    ::kill(-pid_, SIGKILL);
    int st = 0;
    ::waitpid(pid_, &st, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
};

struct RunResult {
  int status = -1;
  std::string out, err;
};

// Runs a program to completion with extra environment variables; captures stdout and stderr.
inline RunResult run(const std::vector<std::string>& argv,
                     const std::vector<std::pair<std::string, std::string>>& env = {}) {
  TempDir t{"run"};
  const fs::path out = t.path() / "out", err = t.path() / "err";
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(o, 1);
    ::dup2(e, 2);
    for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  int st = 0;
  ::waitpid(pid, &st, 0);
  RunResult r;
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  r.out = read_text(out);
  r.err = read_text(err);
  return r;
}

inline void wait_for_port(int port, Process& p, const std::string& what, const fs::path& log,
                          std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!port_open(port)) {
    if (!p.running()) throw std::runtime_error(what + " exited at start-up; its log:\n" + read_text(log));
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error(what + " did not listen on port " + std::to_string(port) + " within " +
                               std::to_string(limit.count()) + " s; its log:\n" + read_text(log));
    std::this_thread::sleep_for(25ms);
  }
}

// A plain request with libcurl (for test plumbing: moto's control API, sentinels in nginx's log).
inline long raw_request(const std::string& method, const std::string& url, const std::string& body = "",
                        const std::string& content_type = "text/plain") {
  CURL* h = curl_easy_init();
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_TIMEOUT, 20L);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, +[](char*, std::size_t s, std::size_t n, void*) { return s * n; });
  struct curl_slist* hs = curl_slist_append(nullptr, ("Content-Type: " + content_type).c_str());
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hs);
  if (method == "POST") {
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  }
  const CURLcode rc = curl_easy_perform(h);
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(hs);
  curl_easy_cleanup(h);
  if (rc != CURLE_OK) throw std::runtime_error(method + " " + url + ": " + curl_easy_strerror(rc));
  return status;
}

// Fast retries for tests (failures should not take seconds).
inline RemoteOptions quick_net() {
  RemoteOptions n;
  n.max_attempts = 3;
  n.retry_initial_delay = 10ms;
  n.retry_max_delay = 50ms;
  n.connect_timeout = 2s;
  n.timeout = 20s;
  return n;
}

// ---- nginx ----------------------------------------------------------------------------------------

struct LogLine {
  std::string connection, method, uri, range, status;
};

class Nginx {
 public:
  Nginx() {
    const std::string bin = find_program("nginx", {"/usr/sbin", "/usr/local/sbin", "/usr/local/nginx/sbin"});
    if (bin.empty())
      throw std::runtime_error("nginx not found on PATH or in /usr/sbin (install the Debian package nginx-light)");
    port_ = free_port();
    root_ = dir_.path() / "data";
    fs::create_directories(root_);
    fs::create_directories(dir_.path() / "tmp");
    const std::string d = dir_.path().string();
    std::ostringstream conf;
    conf << "daemon off;\nworker_processes 1;\npid " << d << "/nginx.pid;\nerror_log " << d << "/error.log warn;\n";
    if (::geteuid() == 0) conf << "user root;\n";  // workers must read the 0700 temp directory
    conf << "events { worker_connections 256; }\n"
         << "http {\n"
         << "  types { application/json json; }\n  default_type application/octet-stream;\n"
         << "  log_format zarrpp '$connection $request_method \"$request_uri\" \"$http_range\" $status';\n"
         << "  access_log " << d << "/access.log zarrpp;\n"
         << "  client_body_temp_path " << d << "/tmp/body;\n  proxy_temp_path " << d << "/tmp/proxy;\n"
         << "  fastcgi_temp_path " << d << "/tmp/fastcgi;\n  uwsgi_temp_path " << d << "/tmp/uwsgi;\n"
         << "  scgi_temp_path " << d << "/tmp/scgi;\n"
         << "  keepalive_timeout 60s;\n  keepalive_requests 100000;\n"
         << "  server {\n    listen 127.0.0.1:" << port_ << ";\n    root " << root_.string() << ";\n"
         << "    location /forbidden/ { return 403; }\n  }\n}\n";
    write_text(dir_.path() / "nginx.conf", conf.str());
    const fs::path log = dir_.path() / "nginx.out";
    proc_ = std::make_unique<Process>(std::vector<std::string>{bin, "-p", d, "-c", d + "/nginx.conf"}, log);
    wait_for_port(port_, *proc_, "nginx", log, 10s);
  }
  ~Nginx() { proc_.reset(); }

  std::string url(const std::string& path = "") const {
    return "http://127.0.0.1:" + std::to_string(port_) + "/" + path;
  }
  const fs::path& root() const { return root_; }
  int port() const { return port_; }

  // The access log so far. A sentinel request marks the end: nginx logs after answering, so wait
  // until the sentinel line is there (one worker logs in order).
  std::vector<LogLine> log() {
    const std::string sentinel = "/__sentinel-" + std::to_string(++sentinels_);
    raw_request("GET", url(sentinel.substr(1)));
    std::vector<LogLine> out;
    for (int i = 0; i < 200; ++i) {
      out.clear();
      bool found = false;
      std::istringstream in(read_text(dir_.path() / "access.log"));
      for (std::string line; std::getline(in, line);) {
        LogLine l;
        std::istringstream ls(line);
        ls >> l.connection >> l.method >> std::quoted(l.uri) >> std::quoted(l.range) >> l.status;
        if (l.uri == sentinel) {
          found = true;
          break;
        }
        if (l.uri.rfind("/__sentinel-", 0) == 0) continue;
        out.push_back(l);
      }
      if (found) return out;
      std::this_thread::sleep_for(10ms);
    }
    throw std::runtime_error("nginx did not log the sentinel request");
  }
  // Requests logged so far (a mark), and those logged after a mark.
  std::size_t mark() { return log().size(); }
  std::vector<LogLine> since(std::size_t m) {
    auto l = log();
    l.erase(l.begin(), l.begin() + static_cast<std::ptrdiff_t>(std::min(m, l.size())));
    return l;
  }

 private:
  TempDir dir_{"server"};
  fs::path root_;
  int port_ = 0;
  int sentinels_ = 0;
  std::unique_ptr<Process> proc_;
};

class HttpStoreNginx : public ::testing::Test {
 protected:
  static void TearDownTestSuite() { server_.reset(); }
  void SetUp() override {
    if (!server_) {
      try {
        server_ = std::make_unique<Nginx>();
      } catch (const std::exception& e) {
        FAIL() << "cannot start nginx for the HttpStore tests: " << e.what();
      }
    }
  }
  Nginx& nginx() { return *server_; }
  static inline std::unique_ptr<Nginx> server_;
};

// ---- a scripted HTTP server for failures nginx cannot produce -------------------------------------

struct SeenRequest {
  std::string method, target, body;
  std::map<std::string, std::string> headers;  // lower-case names
};

struct Reply {
  int status = 200;
  std::string body{};
  std::vector<std::pair<std::string, std::string>> headers{};
  bool hang_up = false;                // close the connection without answering
  std::chrono::milliseconds delay{0};  // wait before answering
};

// A listening socket on 127.0.0.1 at a free port (set in `port`); throws naming `who`.
inline int listen_loopback(const char* who, int& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 64) != 0) {
    if (fd >= 0) ::close(fd);
    throw std::runtime_error(std::string(who) + ": cannot listen");
  }
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  port = ntohs(a.sin_port);
  return fd;
}

class ScriptedServer {
 public:
  using Handler = std::function<Reply(const SeenRequest&, int index)>;
  explicit ScriptedServer(Handler h) : handler_(std::move(h)) {
    listen_fd_ = listen_loopback("scripted server", port_);
    if (::pipe2(stop_pipe_, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~ScriptedServer() {
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
    for (auto& t : workers_) t.join();
    for (int fd : conns_) ::close(fd);
    ::close(listen_fd_);
    ::close(stop_pipe_[0]);
    ::close(stop_pipe_[1]);
  }
  ScriptedServer(const ScriptedServer&) = delete;
  ScriptedServer& operator=(const ScriptedServer&) = delete;

  std::string url(const std::string& path = "") const {
    return "http://127.0.0.1:" + std::to_string(port_) + "/" + path;
  }
  std::vector<SeenRequest> requests() const {
    std::lock_guard lk(mu_);
    return requests_;
  }

 private:
  void accept_loop() {
    for (;;) {
      pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_pipe_[0], POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0) continue;
      if (fds[1].revents) return;
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      std::lock_guard lk(mu_);
      conns_.push_back(fd);
      workers_.emplace_back([this, fd] { serve(fd); });
    }
  }

  void serve(int fd) {
    std::string buf;
    char chunk[4096];
    for (;;) {
      std::size_t end;
      while ((end = buf.find("\r\n\r\n")) == std::string::npos) {
        const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
        if (n <= 0) return;
        buf.append(chunk, static_cast<std::size_t>(n));
      }
      SeenRequest req;
      std::istringstream head(buf.substr(0, end));
      std::string line;
      std::getline(head, line);
      std::istringstream(line) >> req.method >> req.target;
      while (std::getline(head, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string name = line.substr(0, colon);
        for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        std::string value = line.substr(colon + 1);
        while (!value.empty() && value.front() == ' ') value.erase(value.begin());
        req.headers[name] = value;
      }
      buf.erase(0, end + 4);
      const std::size_t body_len = req.headers.count("content-length") ? std::stoul(req.headers["content-length"]) : 0;
      if (req.headers.count("expect")) {
        const std::string cont = "HTTP/1.1 100 Continue\r\n\r\n";
        ::send(fd, cont.data(), cont.size(), MSG_NOSIGNAL);
      }
      while (buf.size() < body_len) {
        const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
        if (n <= 0) return;
        buf.append(chunk, static_cast<std::size_t>(n));
      }
      req.body = buf.substr(0, body_len);
      buf.erase(0, body_len);
      int index;
      {
        std::lock_guard lk(mu_);
        requests_.push_back(req);
        index = static_cast<int>(requests_.size()) - 1;
      }
      const Reply r = handler_(req, index);
      if (r.delay.count() > 0) {
        std::unique_lock lk(mu_);
        if (cv_.wait_for(lk, r.delay, [this] { return stop_; })) return;
      }
      if (r.hang_up) {
        ::shutdown(fd, SHUT_RDWR);
        return;
      }
      std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " + detail::standard_reason(r.status) + "\r\n";
      out += "Content-Length: " + std::to_string(r.body.size()) + "\r\n";
      for (const auto& [k, v] : r.headers) out += k + ": " + v + "\r\n";
      out += "\r\n";
      if (req.method != "HEAD") out += r.body;
      if (::send(fd, out.data(), out.size(), MSG_NOSIGNAL) < 0) return;
    }
  }

  Handler handler_;
  int listen_fd_ = -1, port_ = 0;
  int stop_pipe_[2] = {-1, -1};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::vector<SeenRequest> requests_;
  std::vector<int> conns_;
  std::vector<std::thread> workers_;
  std::thread acceptor_;
};

// ---- moto ---------------------------------------------------------------------------------------

inline constexpr const char* kBucket = "zarrpp-test";

// Sets up IAM for the signature test while moto still accepts anything: a user with an access key,
// a role it may assume, and temporary (session) credentials from assuming it.
inline constexpr const char* kMotoSetup = R"PY(
import json, os, boto3
ep = os.environ["EP"]
kw = dict(endpoint_url=ep, region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing")
boto3.client("s3", **kw).create_bucket(Bucket=os.environ["BUCKET"])
iam = boto3.client("iam", **kw)
iam.create_user(UserName="zarrpp")
key = iam.create_access_key(UserName="zarrpp")["AccessKey"]
allow = lambda actions: json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": actions, "Resource": "*"}]})
iam.put_user_policy(UserName="zarrpp", PolicyName="s3", PolicyDocument=allow(["s3:*", "sts:AssumeRole"]))
trust = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}]})
role = iam.create_role(RoleName="zarrpp", AssumeRolePolicyDocument=trust)["Role"]
iam.put_role_policy(RoleName="zarrpp", PolicyName="s3", PolicyDocument=allow(["s3:*"]))
sts = boto3.client("sts", endpoint_url=ep, region_name="us-east-1", aws_access_key_id=key["AccessKeyId"], aws_secret_access_key=key["SecretAccessKey"])
c = sts.assume_role(RoleArn=role["Arn"], RoleSessionName="zarrpp-test")["Credentials"]
print(json.dumps({"ak": key["AccessKeyId"], "sk": key["SecretAccessKey"], "tak": c["AccessKeyId"], "tsk": c["SecretAccessKey"], "token": c["SessionToken"]}))
)PY";

class Moto {
 public:
  Moto() {
    const std::string bin = find_program("moto_server");
    if (bin.empty()) throw std::runtime_error("moto_server not found on PATH (pip install 'moto[server]')");
    port_ = free_port();
    endpoint_ = "http://127.0.0.1:" + std::to_string(port_);
    const fs::path log = dir_.path() / "moto.log";
    proc_ =
        std::make_unique<Process>(std::vector<std::string>{bin, "-H", "127.0.0.1", "-p", std::to_string(port_)}, log);
    wait_for_port(port_, *proc_, "moto_server", log, 60s);
    const auto creds = Json::parse(python(kMotoSetup));
    user_ak_ = creds["ak"];
    user_sk_ = creds["sk"];
    temp_ak_ = creds["tak"];
    temp_sk_ = creds["tsk"];
    token_ = creds["token"];
  }
  ~Moto() { proc_.reset(); }

  const std::string& endpoint() const { return endpoint_; }
  int port() const { return port_; }

  // Runs a boto3 script (s3 = a client on moto, B = the bucket); returns its stdout.
  std::string python(const std::string& body) const {
    const std::string script =
        "import json, os, sys, boto3\n"
        "s3 = boto3.client('s3', endpoint_url=os.environ['EP'], region_name='us-east-1', "
        "aws_access_key_id=os.environ['AK'], aws_secret_access_key=os.environ['SK'])\n"
        "B = os.environ['BUCKET']\n" +
        body;
    const auto r = run({"python3", "-c", script}, {{"EP", endpoint_},
                                                   {"BUCKET", kBucket},
                                                   {"AK", user_ak_.empty() ? "testing" : user_ak_},
                                                   {"SK", user_sk_.empty() ? "testing" : user_sk_},
                                                   {"AWS_EC2_METADATA_DISABLED", "true"},
                                                   {"AWS_CONFIG_FILE", "/dev/null"},
                                                   {"AWS_SHARED_CREDENTIALS_FILE", "/dev/null"}});
    if (r.status != 0)
      throw std::runtime_error("python3 (boto3) failed with status " + std::to_string(r.status) + ":\n" + r.err);
    return r.out;
  }

  // Switches moto's request authentication (signature and IAM checks) on or off.
  void require_signatures(bool on) const {
    const long s = raw_request("POST", endpoint_ + "/moto-api/reset-auth", on ? "0" : "inf");
    if (s != 200) throw std::runtime_error("moto reset-auth answered " + std::to_string(s));
  }

  S3Store::Options options(const std::string& prefix) const {
    S3Store::Options o;
    o.bucket = kBucket;
    o.prefix = prefix;
    o.endpoint = endpoint_;
    o.region = "us-east-1";
    o.access_key_id = user_ak_;
    o.secret_access_key = user_sk_;
    o.session_token = "";
    o.net = quick_net();
    return o;
  }
  const std::string& temp_access_key() const { return temp_ak_; }
  const std::string& temp_secret_key() const { return temp_sk_; }
  const std::string& session_token() const { return token_; }

 private:
  TempDir dir_{"server"};
  int port_ = 0;
  std::string endpoint_;
  std::string user_ak_, user_sk_, temp_ak_, temp_sk_, token_;
  std::unique_ptr<Process> proc_;
};

class S3StoreMoto : public ::testing::Test {
 protected:
  static void TearDownTestSuite() { server_.reset(); }
  void SetUp() override {
    if (!server_) {
      try {
        server_ = std::make_unique<Moto>();
      } catch (const std::exception& e) {
        FAIL() << "cannot start moto_server for the S3Store tests: " << e.what();
      }
    }
  }
  Moto& moto() { return *server_; }
  // A store rooted at a prefix of its own for each test.
  std::shared_ptr<S3Store> store(const std::string& name) {
    return S3Store::open(moto().options(std::string("t/") +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name() +
                                        (name.empty() ? "" : "/" + name)));
  }
  static inline std::unique_ptr<Moto> server_;
};

// Restores an environment variable on scope exit.
struct EnvVar {
  std::string name;
  std::optional<std::string> old;
  EnvVar(std::string n, const std::optional<std::string>& value) : name(std::move(n)) {
    if (const char* v = std::getenv(name.c_str())) old = v;
    if (value)
      ::setenv(name.c_str(), value->c_str(), 1);
    else
      ::unsetenv(name.c_str());
  }
  ~EnvVar() {
    if (old)
      ::setenv(name.c_str(), old->c_str(), 1);
    else
      ::unsetenv(name.c_str());
  }
};

inline NDArray iota_i32(const Shape& shape, std::int32_t start = 0) {
  NDArray a(DataType::int32, shape);
  auto* p = a.data<std::int32_t>();
  for (std::int64_t i = 0; i < a.size(); ++i) p[i] = start + static_cast<std::int32_t>(i);
  return a;
}

}  // namespace zarrpp::test
