// Remote stores against real servers the tests start themselves on free loopback ports:
//  - HttpStore against nginx serving a temporary directory (and a scripted in-process server for
//    failures nginx cannot be made to produce: resets, timeouts, 5xx, servers ignoring Range);
//  - S3Store against moto_server, cross-checked with boto3, with moto's signature verification
//    switched on for one test;
//  - open_store(url) for every URL form.
#include <arpa/inet.h>
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

#include "store/byte_ranges.hpp"
#include "store/encoding.hpp"
#include "store/http_client.hpp"
#include "store/s3_responses.hpp"
#include "store/xml.hpp"
#include "zarrpp/zarrpp.hpp"
#include "zarrpp/store/http_store.hpp"
#include "zarrpp/store/s3_store.hpp"
#include "zarrpp/store/url.hpp"

using namespace zarrpp;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

Bytes B(const std::string& s) { return Bytes(s.begin(), s.end()); }
std::string S(const Bytes& b) { return std::string(b.begin(), b.end()); }

// Runs f, expecting it to throw E with a message containing every one of `parts`.
template <class E, class F>
void expect_throw_with(F&& f, std::initializer_list<std::string> parts, const std::string& where = "") {
  try {
    f();
    ADD_FAILURE() << "expected an exception " << where;
  } catch (const E& e) {
    const std::string msg = e.what();
    for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg << " " << where;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what() << " " << where;
  }
}

// ---- processes, ports, temporary directories ----------------------------------------------------

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) throw std::runtime_error("cannot bind a port");
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

bool port_open(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "zarrpp-remote-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_text(const fs::path& p, const std::string& s) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << s;
}

std::string find_program(const std::string& name, const std::vector<std::string>& extra_dirs = {}) {
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
RunResult run(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& env = {}) {
  TempDir t;
  const fs::path out = t.path / "out", err = t.path / "err";
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

void wait_for_port(int port, Process& p, const std::string& what, const fs::path& log, std::chrono::seconds limit) {
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
long raw_request(const std::string& method, const std::string& url, const std::string& body = "",
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
RemoteOptions quick_net() {
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
    root_ = dir_.path / "data";
    fs::create_directories(root_);
    fs::create_directories(dir_.path / "tmp");
    const std::string d = dir_.path.string();
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
    write_text(dir_.path / "nginx.conf", conf.str());
    const fs::path log = dir_.path / "nginx.out";
    proc_ = std::make_unique<Process>(std::vector<std::string>{bin, "-p", d, "-c", d + "/nginx.conf"}, log);
    wait_for_port(port_, *proc_, "nginx", log, 10s);
  }
  ~Nginx() { proc_.reset(); }

  std::string url(const std::string& path = "") const {
    return "http://127.0.0.1:" + std::to_string(port_) + "/" + path;
  }
  const fs::path& root() const { return root_; }

  // The access log so far. A sentinel request marks the end: nginx logs after answering, so wait
  // until the sentinel line is there (one worker logs in order).
  std::vector<LogLine> log() {
    const std::string sentinel = "/__sentinel-" + std::to_string(++sentinels_);
    raw_request("GET", url(sentinel.substr(1)));
    std::vector<LogLine> out;
    for (int i = 0; i < 200; ++i) {
      out.clear();
      bool found = false;
      std::istringstream in(read_text(dir_.path / "access.log"));
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
  TempDir dir_;
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
  static std::unique_ptr<Nginx> server_;
};
std::unique_ptr<Nginx> HttpStoreNginx::server_;

// ---- a scripted HTTP server for failures nginx cannot produce -------------------------------------

struct SeenRequest {
  std::string method, target, body;
  std::map<std::string, std::string> headers;  // lower-case names
};

struct Reply {
  int status = 200;
  std::string body{};
  std::vector<std::pair<std::string, std::string>> headers{};
  bool hang_up = false;                   // close the connection without answering
  std::chrono::milliseconds delay{0};     // wait before answering
};

class ScriptedServer {
 public:
  using Handler = std::function<Reply(const SeenRequest&, int index)>;
  explicit ScriptedServer(Handler h) : handler_(std::move(h)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(listen_fd_, 64) != 0)
      throw std::runtime_error("scripted server: cannot listen");
    socklen_t len = sizeof a;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
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

  std::string url(const std::string& path = "") const { return "http://127.0.0.1:" + std::to_string(port_) + "/" + path; }
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

constexpr const char* kBucket = "zarrpp-test";

// Sets up IAM for the signature test while moto still accepts anything: a user with an access key,
// a role it may assume, and temporary (session) credentials from assuming it.
constexpr const char* kMotoSetup = R"PY(
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
    const fs::path log = dir_.path / "moto.log";
    proc_ = std::make_unique<Process>(std::vector<std::string>{bin, "-H", "127.0.0.1", "-p", std::to_string(port_)}, log);
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
    const auto r = run({"python3", "-c", script},
                       {{"EP", endpoint_}, {"BUCKET", kBucket}, {"AK", user_ak_.empty() ? "testing" : user_ak_},
                        {"SK", user_sk_.empty() ? "testing" : user_sk_}, {"AWS_EC2_METADATA_DISABLED", "true"},
                        {"AWS_CONFIG_FILE", "/dev/null"}, {"AWS_SHARED_CREDENTIALS_FILE", "/dev/null"}});
    if (r.status != 0) throw std::runtime_error("python3 (boto3) failed with status " + std::to_string(r.status) + ":\n" + r.err);
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
  TempDir dir_;
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
    return S3Store::open(moto().options(std::string("t/") + ::testing::UnitTest::GetInstance()->current_test_info()->name() +
                                        (name.empty() ? "" : "/" + name)));
  }
  static std::unique_ptr<Moto> server_;
};
std::unique_ptr<Moto> S3StoreMoto::server_;

// Restores an environment variable on scope exit.
struct EnvVar {
  std::string name;
  std::optional<std::string> old;
  EnvVar(std::string n, const std::optional<std::string>& value) : name(std::move(n)) {
    if (const char* v = std::getenv(name.c_str())) old = v;
    if (value) ::setenv(name.c_str(), value->c_str(), 1);
    else ::unsetenv(name.c_str());
  }
  ~EnvVar() {
    if (old) ::setenv(name.c_str(), old->c_str(), 1);
    else ::unsetenv(name.c_str());
  }
};

NDArray iota_i32(const Shape& shape, std::int32_t start = 0) {
  NDArray a(DataType::int32, shape);
  auto* p = a.data<std::int32_t>();
  for (std::int64_t i = 0; i < a.size(); ++i) p[i] = start + static_cast<std::int32_t>(i);
  return a;
}

}  // namespace

// =================================================================================================
// Internals: hashes, encodings, XML, ranges
// =================================================================================================

TEST(RemoteInternals, HashesMatchKnownVectorsAndPython) {
  EXPECT_EQ(detail::sha256_hex(detail::as_bytes("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(detail::sha256_hex(detail::as_bytes("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(detail::sha256_hex(detail::as_bytes("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(detail::sha256_hex(detail::as_bytes(std::string(1000000, 'a'))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Content-MD5 is base64 of the digest.
  EXPECT_EQ(detail::md5_base64(detail::as_bytes("")), "1B2M2Y8AsgTpgAmY7PhCfg==");
  EXPECT_EQ(detail::md5_base64(detail::as_bytes("The quick brown fox jumps over the lazy dog")), "nhB9nTcrtoJr2B01QqQZ1g==");
  // Every padding case (lengths 0..200) against Python's hashlib.
  const auto r = run({"python3", "-c",
                      "import base64, hashlib\n"
                      "for n in range(201):\n"
                      "  d = bytes((i * 7 + 3) % 256 for i in range(n))\n"
                      "  print(hashlib.sha256(d).hexdigest(), base64.b64encode(hashlib.md5(d).digest()).decode())\n"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::istringstream in(r.out);
  for (int n = 0; n <= 200; ++n) {
    std::string sha, md;
    in >> sha >> md;
    Bytes d(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) d[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>((i * 7 + 3) % 256);
    EXPECT_EQ(detail::sha256_hex(d), sha) << n;
    EXPECT_EQ(detail::md5_base64(d), md) << n;
  }
  EXPECT_EQ(detail::base64(detail::as_bytes("")), "");
  EXPECT_EQ(detail::base64(detail::as_bytes("f")), "Zg==");
  EXPECT_EQ(detail::base64(detail::as_bytes("fo")), "Zm8=");
  EXPECT_EQ(detail::base64(detail::as_bytes("foo")), "Zm9v");
  EXPECT_EQ(detail::base64(detail::as_bytes("foobar")), "Zm9vYmFy");
}

TEST(RemoteInternals, UrlEncoding) {
  EXPECT_EQ(detail::percent_encode("a/b c+d%e~f.g-h_i", true), "a/b%20c%2Bd%25e~f.g-h_i");
  EXPECT_EQ(detail::percent_encode("a/b", false), "a%2Fb");
  EXPECT_EQ(detail::percent_encode("\xc3\xa9&=?#", true), "%C3%A9%26%3D%3F%23");
  EXPECT_EQ(detail::percent_decode("a%20b%2fc", "x"), "a b/c");
  expect_throw_with<StoreError>([] { detail::percent_decode("a%2", "the URL 'u'"); }, {"the URL 'u'", "malformed percent-escape"});
  expect_throw_with<StoreError>([] { detail::percent_decode("a%zz", "u"); }, {"'%zz'"});
  EXPECT_EQ(detail::canonical_query({{"prefix", "a b/"}, {"list-type", "2"}, {"continuation-token", "x+y=="}}),
            "continuation-token=x%2By%3D%3D&list-type=2&prefix=a%20b%2F");
}

TEST(RemoteInternals, XmlReaderDecodesAndRejects) {
  std::vector<std::pair<std::string, std::string>> seen;
  detail::parse_xml(
      "<?xml version=\"1.0\"?>\n<!-- c --><s3:R xmlns:s3=\"u\" a='>/'><K>a&amp;b&lt;c&gt;&quot;&apos;&#65;&#x263A;</K>"
      "<E/><C><![CDATA[<raw&>]]></C><N><K>in</K></N></s3:R>",
      [&](const std::vector<std::string>& path, std::string& text) {
        std::string p;
        for (const auto& s : path) p += "/" + s;
        seen.emplace_back(p, text);
      });
  const std::vector<std::pair<std::string, std::string>> want = {{"/R/K", "a&b<c>\"'A\xe2\x98\xba"},
                                                                 {"/R/E", ""},
                                                                 {"/R/C", "<raw&>"},
                                                                 {"/R/N/K", "in"},
                                                                 {"/R/N", ""},
                                                                 {"/R", ""}};
  EXPECT_EQ(seen, want);
  auto bad = [](const std::string& x, const std::string& why) {
    try {
      detail::parse_xml(x, [](const std::vector<std::string>&, std::string&) {});
      ADD_FAILURE() << x;
    } catch (const ArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  bad("<a><b></a>", "mismatched tag");
  bad("<a>", "no element found");
  bad("<a>&bogus;</a>", "undefined entity");
  bad("<a>&#xD800;</a>", "invalid character number");
  bad("<!DOCTYPE a [<!ENTITY x 'y'>]><a>&x;</a>", "document type");
  bad("", "no element found");
  bad("<a/><b/>", "junk after document element");
  // A handler's failure stops the parse and is reported.
  expect_throw_with<ArgumentError>(
      [] { detail::parse_xml("<a><b/></a>", [](const std::vector<std::string>&, std::string&) { throw ArgumentError("stop here"); }); },
      {"stop here"});
  EXPECT_EQ(detail::xml_escape("a&<>\"'\r"), "a&amp;&lt;&gt;&quot;&apos;&#13;");
}

TEST(RemoteInternals, S3ResponsesParseIntoStructs) {
  const auto err = detail::parse_s3_error("<Error><Code>NoSuchKey</Code><Message>gone &amp; lost</Message></Error>");
  EXPECT_EQ(err.code, "NoSuchKey");
  EXPECT_EQ(err.message, "gone & lost");
  EXPECT_EQ(detail::parse_s3_error("<html>proxy error</htm>").code, "");  // not XML: no code
  const auto page = detail::parse_s3_list_page(
      "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><IsTruncated>true</IsTruncated>"
      "<Contents><Key>a/zarr.json</Key></Contents><Contents><Key>a/c/0</Key></Contents>"
      "<CommonPrefixes><Prefix>b/</Prefix></CommonPrefixes><NextContinuationToken>t1</NextContinuationToken>"
      "</ListBucketResult>");
  EXPECT_EQ(page.keys, (std::vector<std::string>{"a/zarr.json", "a/c/0"}));
  EXPECT_EQ(page.prefixes, (std::vector<std::string>{"b/"}));
  EXPECT_TRUE(page.truncated);
  EXPECT_EQ(page.next, std::optional<std::string>("t1"));
  expect_throw_with<ArgumentError>([] { detail::parse_s3_list_page("<Other/>"); }, {"not a ListBucketResult"});
  expect_throw_with<ArgumentError>([] { detail::parse_s3_list_page("<ListBucketResult>"); }, {"no element found"});
  const auto failed = detail::parse_s3_delete_result(
      "<DeleteResult><Deleted><Key>x</Key></Deleted><Error><Key>y</Key><Code>AccessDenied</Code>"
      "<Message>no</Message></Error></DeleteResult>");
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].key, "y");
  EXPECT_EQ(failed[0].code, "AccessDenied");
  EXPECT_EQ(failed[0].message, "no");
}

TEST(RemoteInternals, ContentLengthsAreParsedStrictly) {
  EXPECT_EQ(detail::parse_content_length("0"), std::optional<std::uint64_t>(0));
  EXPECT_EQ(detail::parse_content_length("18446744073709551615"), std::optional<std::uint64_t>(~std::uint64_t{0}));
  for (const char* bad : {"", "-1", "1e3", " 5", "5 ", "18446744073709551616", "0x10", "12a"})
    EXPECT_FALSE(detail::parse_content_length(bad).has_value()) << bad;
}

TEST(RemoteInternals, RangesFromResponses) {
  auto resp = [](long status, const std::string& body, const std::string& content_range = "") {
    detail::HttpResponse r;
    r.status = status;
    r.body = B(body);
    if (!content_range.empty()) r.headers.emplace_back("content-range", content_range);
    return r;
  };
  EXPECT_EQ(detail::plan_range(ByteRange::all()).whole, true);
  EXPECT_EQ(detail::plan_range(ByteRange::from(0)).whole, true);
  EXPECT_EQ(detail::plan_range(ByteRange::range(2, 3)).header, "Range: bytes=2-4");
  EXPECT_EQ(detail::plan_range(ByteRange::from(7)).header, "Range: bytes=7-");
  EXPECT_EQ(detail::plan_range(ByteRange::last(4)).header, "Range: bytes=-4");
  EXPECT_TRUE(detail::plan_range(ByteRange::last(0)).empty);
  EXPECT_TRUE(detail::plan_range(ByteRange::range(5, 0)).empty);
  EXPECT_EQ(detail::plan_range(ByteRange::range(5, ~std::uint64_t{0})).header, "Range: bytes=5-");
  // 200 with the whole value: sliced.
  auto r = resp(200, "0123456789");
  EXPECT_EQ(S(detail::take_range(r, ByteRange::range(2, 3), "")), "234");
  r = resp(200, "0123456789");
  EXPECT_EQ(S(detail::take_range(r, ByteRange::last(3), "")), "789");
  // 206: checked against Content-Range.
  r = resp(206, "234", "bytes 2-4/10");
  EXPECT_EQ(S(detail::take_range(r, ByteRange::range(2, 3), "")), "234");
  r = resp(206, "0123456789", "bytes 0-9/10");  // more than asked for
  EXPECT_EQ(S(detail::take_range(r, ByteRange::last(4), "")), "6789");
  r = resp(206, "789", "bytes 7-9/*");
  EXPECT_EQ(S(detail::take_range(r, ByteRange::last(3), "")), "789");
  r = resp(416, "");
  EXPECT_EQ(S(detail::take_range(r, ByteRange::from(20), "")), "");
  r = resp(206, "345", "bytes 3-5/10");
  expect_throw_with<StoreError>([&] { detail::take_range(r, ByteRange::range(2, 3), "GET x: "); },
                                {"GET x: ", "asked for bytes 2..5", "bytes 3-5/10"});
  r = resp(206, "34", "bytes 3-5/10");
  expect_throw_with<StoreError>([&] { detail::take_range(r, ByteRange::range(3, 3), ""); }, {"announces 3 bytes, got 2"});
  r = resp(206, "345");
  expect_throw_with<StoreError>([&] { detail::take_range(r, ByteRange::range(3, 3), ""); }, {"no Content-Range"});
}

// =================================================================================================
// HttpStore against nginx
// =================================================================================================

TEST_F(HttpStoreNginx, GetsRangesAndMissingKeys) {
  write_text(nginx().root() / "r" / "k", "0123456789");
  write_text(nginx().root() / "r" / "empty", "");
  write_text(nginx().root() / "r" / "dir" / "x", "x");
  auto s = HttpStore::open(nginx().url("r/"));  // a trailing '/' is ignored
  EXPECT_EQ(s->url(), nginx().url("r"));
  EXPECT_EQ(s->url_of("dir/x"), nginx().url("r/dir/x"));
  EXPECT_EQ(s->get("k"), B("0123456789"));
  EXPECT_EQ(s->get("k", ByteRange::range(2, 3)), B("234"));
  EXPECT_EQ(s->get("k", ByteRange::range(8, 100)), B("89"));
  EXPECT_EQ(s->get("k", ByteRange::range(20, 5)), B(""));  // 416 → empty
  EXPECT_EQ(s->get("k", ByteRange::range(10, 1)), B(""));
  EXPECT_EQ(s->get("k", ByteRange::range(3, 0)), B(""));
  EXPECT_EQ(s->get("k", ByteRange::from(7)), B("789"));
  EXPECT_EQ(s->get("k", ByteRange::from(0)), B("0123456789"));
  EXPECT_EQ(s->get("k", ByteRange::from(10)), B(""));
  EXPECT_EQ(s->get("k", ByteRange::last(4)), B("6789"));
  EXPECT_EQ(s->get("k", ByteRange::last(40)), B("0123456789"));
  EXPECT_EQ(s->get("k", ByteRange::last(0)), B(""));
  EXPECT_EQ(s->get("empty"), B(""));
  EXPECT_EQ(s->get("empty", ByteRange::last(3)), B(""));
  EXPECT_EQ(s->get("empty", ByteRange::range(0, 3)), B(""));
  for (const auto& r : {ByteRange::all(), ByteRange::range(1, 2), ByteRange::from(3), ByteRange::last(4), ByteRange::last(0)})
    EXPECT_FALSE(s->get("missing", r).has_value());
  EXPECT_TRUE(s->exists("k"));
  EXPECT_TRUE(s->exists("empty"));
  EXPECT_FALSE(s->exists("missing"));
  EXPECT_FALSE(s->exists("nested/missing"));
  // A directory is not a key (nginx redirects "dir" to "dir/", then forbids listing it).
  EXPECT_FALSE(s->exists("dir"));
  EXPECT_FALSE(s->get("dir").has_value());
  EXPECT_EQ(s->get("dir/x"), B("x"));

  // Ranges went out as Range headers and nginx answered 206 / 416.
  const auto log = nginx().log();
  auto find = [&](const std::string& range) {
    for (const auto& l : log)
      if (l.uri == "/r/k" && l.range == range) return l.status;
    return std::string("not requested");
  };
  EXPECT_EQ(find("bytes=2-4"), "206");
  EXPECT_EQ(find("bytes=-4"), "206");
  EXPECT_EQ(find("bytes=7-"), "206");
  EXPECT_EQ(find("bytes=20-24"), "416");
}

TEST_F(HttpStoreNginx, KeysArePercentEncoded) {
  const std::string key = "odd/sp ace+plus%pct&amp=eq\xc3\xa9";
  write_text(nginx().root() / "enc" / key, "found");
  auto s = HttpStore::open(nginx().url("enc"));
  EXPECT_EQ(s->get(key), B("found"));
  const auto log = nginx().log();
  ASSERT_FALSE(log.empty());
  EXPECT_EQ(log.back().uri, "/enc/odd/sp%20ace%2Bplus%25pct%26amp%3Deq%C3%A9");
}

TEST_F(HttpStoreNginx, ForbiddenIsAnErrorNotAMissingKey) {
  auto s = HttpStore::open(nginx().url("forbidden"), {.headers = {}, .follow_redirects = true, .net = quick_net()});
  const auto m = nginx().mark();
  expect_throw_with<StoreError>([&] { s->get("x"); }, {"HTTP GET", nginx().url("forbidden/x"), "403 Forbidden"});
  expect_throw_with<StoreError>([&] { s->get("x", ByteRange::last(3)); }, {"403"});
  expect_throw_with<StoreError>([&] { s->exists("x"); }, {"HTTP HEAD", "403"});
  // 403 is not retried.
  EXPECT_EQ(nginx().since(m).size(), 3u);
}

TEST_F(HttpStoreNginx, IsReadOnlyAndCannotList) {
  auto s = HttpStore::open(nginx().url("ro"));
  const auto m = nginx().mark();
  const auto caps = s->capabilities();
  EXPECT_FALSE(caps.writable || caps.listing || caps.conditional_writes || caps.locking);
  auto code_of = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      return e.code();
    }
    return ErrorCode::invalid_argument;
  };
  expect_throw_with<StoreError>([&] { s->set("a", B("x")); }, {"read-only", "write", "'a'", nginx().url("ro")});
  EXPECT_EQ(code_of([&] { s->set("a", B("x")); }), ErrorCode::read_only);
  expect_throw_with<StoreError>([&] { s->compare_and_set("a", std::nullopt, B("x")); }, {"read-only", "write"});
  expect_throw_with<StoreError>([&] { s->set_if("a", B("x"), std::nullopt); }, {"read-only", "write"});
  expect_throw_with<StoreError>([&] { s->erase("a"); }, {"read-only", "erase"});
  expect_throw_with<StoreError>([&] { s->erase_prefix("a/"); }, {"read-only", "erase", "'a/'"});
  expect_throw_with<StoreError>([&] { s->list_prefix(""); }, {"cannot list", "prefix ''"});
  expect_throw_with<StoreError>([&] { s->list_dir("a/"); }, {"cannot list", "prefix 'a/'"});
  expect_throw_with<ConflictError>([&] { s->lock("a/zarr.json"); }, {"cannot lock"});
  // Keys are validated before anything else.
  expect_throw_with<StoreError>([&] { s->get("../etc/passwd"); }, {"invalid store key"});
  expect_throw_with<StoreError>([&] { s->set("a//b", B("x")); }, {"invalid store key"});
  expect_throw_with<StoreError>([&] { s->exists("/abs"); }, {"invalid store key"});
  expect_throw_with<StoreError>([&] { s->list_prefix("../"); }, {"invalid store key"});
  EXPECT_TRUE(nginx().since(m).empty());  // none of this reached the server
}

TEST_F(HttpStoreNginx, ReadsArraysAndGroupsWrittenByFileStore) {
  const fs::path dir = nginx().root() / "zarr" / "data.zarr";
  {
    auto fsstore = FileStore::open(dir);
    auto g = Group::create(fsstore, "", {{"title", "served by nginx"}});
    auto a = g.create_array("plain", {.shape = {10, 7}, .chunks = {4, 3}, .dtype = DataType::int32, .fill_value = Json(-1),
                                      .compressor = codec::Zstd{.level = 3}});
    a.write({slice(0, 9), all}, iota_i32({9, 7}));
    g.create_group("sub").create_array("f", {.shape = {5}, .chunks = {2}, .dtype = DataType::float64}).write(
        {}, NDArray::from_vector<double>({5}, {0.5, 1.5, 2.5, 3.5, 4.5}));
  }
  auto opened = open_store(nginx().url("zarr/data.zarr"));
  EXPECT_NE(dynamic_cast<HttpStore*>(opened.get()), nullptr);
  const auto root = Group::open(opened);
  EXPECT_EQ(root.attributes()["title"], "served by nginx");
  const auto a = root.open_array("plain");
  EXPECT_EQ(a.shape(), (Shape{10, 7}));
  auto got = a.read();
  auto want = iota_i32({10, 7});
  for (std::int64_t j = 0; j < 7; ++j) want.data<std::int32_t>()[9 * 7 + j] = -1;  // the unwritten row: fill value
  EXPECT_EQ(got, want);
  EXPECT_EQ(a.read({2, slice(1, 4)}).to_vector<std::int32_t>(), (std::vector<std::int32_t>{15, 16, 17}));
  EXPECT_EQ(Array::open(opened, "sub/f").read().to_vector<double>(), (std::vector<double>{0.5, 1.5, 2.5, 3.5, 4.5}));
  expect_throw_with<NotFoundError>([&] { Array::open(opened, "nope"); }, {"nope"});
  // Writing through the HTTP store is refused.
  auto ro = Array::open(opened, "plain");
  EXPECT_THROW(ro.write({0, 0}, NDArray::full<std::int32_t>({}, 5)), StoreError);
}

TEST_F(HttpStoreNginx, ShardedReadFetchesTheIndexThenOnlyTheInnerChunk) {
  const fs::path dir = nginx().root() / "sharded.zarr";
  {
    auto a = Array::create(FileStore::open(dir), {.shape = {16, 16}, .chunks = {4, 4}, .dtype = DataType::int32,
                                                   .compressor = codec::Zstd{.level = 1}, .crc32c = true,
                                                   .shards = Shape{16, 16}});
    a.write({}, iota_i32({16, 16}));
  }
  auto store = HttpStore::open(nginx().url("sharded.zarr"));
  const auto m = nginx().mark();
  const auto a = Array::open(store);
  const auto part = a.read({slice(4, 8), slice(8, 12)});  // exactly inner chunk (1, 2)
  std::vector<std::int32_t> want;
  for (int i = 4; i < 8; ++i)
    for (int j = 8; j < 12; ++j) want.push_back(i * 16 + j);
  EXPECT_EQ(part.to_vector<std::int32_t>(), want);
  const auto log = nginx().since(m);
  ASSERT_EQ(log.size(), 4u) << "requests: zarr.json, the shard index, the shard's size, the inner chunk";
  EXPECT_EQ(log[0].method, "GET");
  EXPECT_EQ(log[0].uri, "/sharded.zarr/zarr.json");
  EXPECT_EQ(log[0].range, "-");
  EXPECT_EQ(log[1].method, "GET");
  EXPECT_EQ(log[1].uri, "/sharded.zarr/c/0/0");
  EXPECT_EQ(log[1].range, "bytes=-260");  // 16 inner chunks x (offset, nbytes) x 8 bytes + crc32c
  EXPECT_EQ(log[1].status, "206");
  // The size bounds the index entries (an entry reaching into the index would be misread).
  EXPECT_EQ(log[2].method, "HEAD");
  EXPECT_EQ(log[2].uri, "/sharded.zarr/c/0/0");
  EXPECT_EQ(log[3].method, "GET");
  EXPECT_EQ(log[3].uri, "/sharded.zarr/c/0/0");
  EXPECT_EQ(log[3].status, "206");
  std::uint64_t b = 0, e = 0;
  ASSERT_EQ(std::sscanf(log[3].range.c_str(), "bytes=%lu-%lu", &b, &e), 2) << log[3].range;
  EXPECT_LT(e - b + 1, fs::file_size(dir / "c" / "0" / "0") / 4) << "only one of 16 inner chunks is fetched";
}

TEST_F(HttpStoreNginx, ReusesConnectionsAndSendsTheRootQuery) {
  for (int i = 0; i < 5; ++i) write_text(nginx().root() / "reuse" / std::to_string(i), std::to_string(i));
  auto s = HttpStore::open(nginx().url("reuse?token=abc%20def"));
  EXPECT_EQ(s->describe(), nginx().url("reuse") + "?...");  // the query may hold secrets
  EXPECT_EQ(s->url_of("3"), nginx().url("reuse/3?token=abc%20def"));
  const auto m = nginx().mark();
  for (int round = 0; round < 2; ++round)
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(s->get(std::to_string(i)), B(std::to_string(i)));
      EXPECT_TRUE(s->exists(std::to_string(i)));
    }
  const auto log = nginx().since(m);
  ASSERT_EQ(log.size(), 20u);
  for (const auto& l : log) {
    EXPECT_EQ(l.connection, log[0].connection) << "a new connection for " << l.method << " " << l.uri;
    EXPECT_NE(l.uri.find("?token=abc%20def"), std::string::npos) << l.uri;
  }
}

TEST_F(HttpStoreNginx, ConcurrentReadersEachGetTheirValue) {
  for (int i = 0; i < 32; ++i) write_text(nginx().root() / "conc" / std::to_string(i), std::string(1000 + i, 'a' + i % 26));
  auto s = HttpStore::open(nginx().url("conc"));
  std::atomic<int> bad{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&, t] {
      for (int r = 0; r < 3; ++r)
        for (int i = t; i < 32; i += 4) {
          const auto v = s->get(std::to_string(i), ByteRange::last(10));
          if (!v || *v != B(std::string(10, 'a' + i % 26))) ++bad;
        }
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(bad.load(), 0);
}

// =================================================================================================
// HttpStore against a scripted server: retries, timeouts, odd servers
// =================================================================================================

TEST(HttpStoreScripted, RetriesTransientStatusesWithBackoff) {
  ScriptedServer srv([](const SeenRequest&, int n) {
    if (n < 2) return Reply{.status = n == 0 ? 503 : 502, .body = "busy"};
    return Reply{.status = 200, .body = "ok"};
  });
  auto net = quick_net();
  net.retry_initial_delay = 40ms;
  auto s = HttpStore::open(srv.url("root"), {.headers = {}, .follow_redirects = true, .net = net});
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(s->get("k"), B("ok"));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 40ms) << "backoff: at least half of 40ms + half of 80ms";
  EXPECT_EQ(srv.requests().size(), 3u);

  ScriptedServer down([](const SeenRequest&, int) { return Reply{.status = 503}; });
  net.max_attempts = 2;
  net.retry_initial_delay = 5ms;
  auto d = HttpStore::open(down.url(), {.headers = {}, .follow_redirects = true, .net = net});
  expect_throw_with<StoreError>([&] { d->get("a/b"); }, {"HTTP GET", down.url("a/b"), "after 2 attempts", "503"});
  EXPECT_EQ(down.requests().size(), 2u);
}

TEST(HttpStoreScripted, RetriesResetConnectionsAndHonoursRetryAfter) {
  ScriptedServer srv([](const SeenRequest&, int n) {
    if (n == 0) return Reply{.hang_up = true};
    if (n == 1) return Reply{.status = 429, .headers = {{"Retry-After", "1"}}};
    return Reply{.status = 200, .body = "fine"};
  });
  auto net = quick_net();
  net.retry_max_delay = 150ms;  // caps the server's Retry-After: 1 s
  auto s = HttpStore::open(srv.url(), {.headers = {}, .follow_redirects = true, .net = net});
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(s->get("k"), B("fine"));
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(took, 75ms);
  EXPECT_LT(took, 900ms);
  EXPECT_EQ(srv.requests().size(), 3u);
}

TEST(HttpStoreScripted, TimesOutAndReportsIt) {
  ScriptedServer srv([](const SeenRequest&, int) { return Reply{.status = 200, .body = "late", .delay = 3s}; });
  auto net = quick_net();
  net.timeout = 200ms;
  net.max_attempts = 2;
  auto s = HttpStore::open(srv.url(), {.headers = {}, .follow_redirects = true, .net = net});
  const auto t0 = std::chrono::steady_clock::now();
  expect_throw_with<StoreError>([&] { s->get("slow"); }, {"HTTP GET", srv.url("slow"), "after 2 attempts", "Timeout"});
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  EXPECT_EQ(srv.requests().size(), 2u);
}

TEST(HttpStoreScripted, ConnectionRefusedIsAStoreError) {
  const int port = free_port();  // nothing listens there
  auto net = quick_net();
  net.max_attempts = 2;
  auto s = HttpStore::open("http://127.0.0.1:" + std::to_string(port) + "/x", {.headers = {}, .follow_redirects = true, .net = net});
  expect_throw_with<StoreError>([&] { s->get("k"); }, {"HTTP GET", "127.0.0.1:" + std::to_string(port), "after 2 attempts",
                                                       "connect"});
}

TEST(HttpStoreScripted, ServersIgnoringRangeAreSliced) {
  ScriptedServer srv([](const SeenRequest& r, int) {
    if (r.target == "/k") return Reply{.status = 200, .body = "0123456789"};
    if (r.target == "/partial") return Reply{.status = 206, .body = "789", .headers = {{"Content-Range", "bytes 7-9/*"}}};
    if (r.target == "/wrong") return Reply{.status = 206, .body = "012", .headers = {{"Content-Range", "bytes 0-2/10"}}};
    return Reply{.status = 404};
  });
  auto s = HttpStore::open(srv.url());
  EXPECT_EQ(s->get("k", ByteRange::range(2, 3)), B("234"));
  EXPECT_EQ(s->get("k", ByteRange::last(3)), B("789"));
  EXPECT_EQ(s->get("k", ByteRange::from(20)), B(""));
  EXPECT_EQ(s->get("partial", ByteRange::last(3)), B("789"));
  expect_throw_with<StoreError>([&] { s->get("wrong", ByteRange::range(5, 2)); }, {"asked for bytes 5..7", "bytes 0-2/10"});
  EXPECT_FALSE(s->get("missing").has_value());
  const auto reqs = srv.requests();
  ASSERT_GE(reqs.size(), 3u);
  EXPECT_EQ(reqs[0].headers.at("range"), "bytes=2-4");
  EXPECT_EQ(reqs[1].headers.at("range"), "bytes=-3");
  EXPECT_EQ(reqs[2].headers.at("range"), "bytes=20-");
}

TEST(HttpStoreScripted, SendsConfiguredHeadersAndFallsBackWithoutHead) {
  ScriptedServer srv([](const SeenRequest& r, int) {
    if (r.method == "HEAD") return Reply{.status = 405};
    if (r.target == "/k") return Reply{.status = 206, .body = "0", .headers = {{"Content-Range", "bytes 0-0/10"}}};
    if (r.target == "/base/forbidden") return Reply{.status = 403};
    return Reply{.status = 404};
  });
  HttpStore::Options o;
  o.headers = {{"Authorization", "Bearer s3cret"}, {"X-Extra", "1"}};
  auto s = HttpStore::open(srv.url(), o);
  EXPECT_TRUE(s->exists("k"));
  EXPECT_FALSE(s->exists("nope"));
  const auto reqs = srv.requests();
  ASSERT_EQ(reqs.size(), 4u);
  for (const auto& r : reqs) {
    EXPECT_EQ(r.headers.at("authorization"), "Bearer s3cret");
    EXPECT_EQ(r.headers.at("x-extra"), "1");
  }
  EXPECT_EQ(reqs[1].method, "GET");
  EXPECT_EQ(reqs[1].headers.at("range"), "bytes=0-0");
  // Credentials in the URL become a Basic Authorization header and stay out of messages.
  const std::string with_user = "http://us%40er:p%3Ass@" + srv.url().substr(7) + "base";
  auto u = HttpStore::open(with_user);
  EXPECT_EQ(u->describe(), srv.url("base"));
  EXPECT_EQ(u->url_of("k"), srv.url("base/k"));
  try {
    u->get("forbidden");
    ADD_FAILURE() << "403 must throw";
  } catch (const StoreError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(srv.url("base/forbidden")), std::string::npos) << msg;
    EXPECT_EQ(msg.find("p%3Ass"), std::string::npos) << msg;
  }
  const auto last = srv.requests().back();
  EXPECT_EQ(last.target, "/base/forbidden");
  EXPECT_EQ(last.headers.at("authorization"), "Basic " + detail::base64(detail::as_bytes("us@er:p:ss")));
  expect_throw_with<StoreError>([&] { HttpStore::open(srv.url(), {.headers = {{"Bad Name", "x"}}}); }, {"invalid header name 'Bad Name'"});
  expect_throw_with<StoreError>([&] { HttpStore::open(srv.url(), {.headers = {{"X", "a\r\nInjected: 1"}}}); }, {"line break"});
}

TEST(HttpStoreScripted, RejectsUnusableUrlsAndOptions) {
  expect_throw_with<StoreError>([] { HttpStore::open("ftp://example.com/x"); }, {"'ftp://example.com/x'", "http:// or https://"});
  expect_throw_with<StoreError>([] { HttpStore::open("http://"); }, {"'http://'"});
  expect_throw_with<StoreError>([] { HttpStore::open("not a url"); }, {"'not a url'"});
  expect_throw_with<StoreError>([] { HttpStore::open("http://h/x#frag"); }, {"fragment"});
  HttpStore::Options o;
  o.net.max_attempts = 0;
  expect_throw_with<StoreError>([&] { HttpStore::open("http://127.0.0.1/x", o); }, {"max_attempts"});
  o.net.max_attempts = 1;
  o.net.timeout = -1ms;
  expect_throw_with<StoreError>([&] { HttpStore::open("http://127.0.0.1/x", o); }, {"timeout must not be negative"});
}

// An S3 server that ignores If-None-Match / If-Match: compare_and_set must refuse, not race.
TEST(HttpStoreScripted, S3ServerIgnoringConditionalWritesIsDetected) {
  ScriptedServer srv([](const SeenRequest& r, int) {
    if (r.method == "PUT") return Reply{.status = 200, .headers = {{"ETag", "\"abc\""}}};
    if (r.method == "DELETE") return Reply{.status = 204};
    return Reply{.status = 404};
  });
  S3Store::Options o;
  o.bucket = "b";
  o.prefix = "root";
  o.endpoint = srv.url();
  o.access_key_id = "AKIDEXAMPLE";
  o.secret_access_key = "secret";
  o.session_token = "";
  auto s = S3Store::open(o);
  expect_throw_with<ConflictError>([&] { s->compare_and_set("zarr.json", std::nullopt, B("{}")); },
                                   {"does not support conditional writes", "If-None-Match", "'zarr.json'"});
  EXPECT_FALSE(s->supports_conditional_writes());  // probed once, remembered
  auto reqs = srv.requests();
  ASSERT_EQ(reqs.size(), 4u);
  EXPECT_EQ(reqs[0].method, "PUT");
  EXPECT_EQ(reqs[0].headers.at("if-none-match"), "*");
  EXPECT_EQ(reqs[0].target.rfind("/b/root/.zarrpp-probe-", 0), 0u) << reqs[0].target;
  EXPECT_EQ(reqs[1].headers.at("if-none-match"), "*");
  EXPECT_EQ(reqs[2].headers.count("if-match"), 1u);
  EXPECT_EQ(reqs[3].method, "DELETE");
  EXPECT_EQ(reqs[3].target, reqs[0].target);
  // Requests are signed, with the payload hash S3 requires.
  EXPECT_EQ(reqs[0].headers.at("authorization").rfind("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/", 0), 0u);
  EXPECT_EQ(reqs[0].headers.at("x-amz-content-sha256"), detail::sha256_hex(detail::as_bytes("zarrpp conditional-write probe")));
  EXPECT_EQ(reqs[0].headers.count("x-amz-date"), 1u);

  o.conditional_writes = ConditionalWrites::Off;
  auto off = S3Store::open(o);
  expect_throw_with<ConflictError>([&] { off->compare_and_set("k", B("a"), B("b")); },
                                   {"does not support conditional writes", "If-Match", "switched off"});
  EXPECT_EQ(srv.requests().size(), 4u);  // no request at all
  // Without conditional writes there is no lease either: growth refuses (see ArraysThroughAnS3Url).
  EXPECT_FALSE(off->capabilities().locking);
  expect_throw_with<ConflictError>([&] { s->lock("a/zarr.json"); }, {"cannot lock", "conditional PUTs"});
  expect_throw_with<ConflictError>([&] { off->lock("a/zarr.json"); }, {"cannot lock"});
  EXPECT_EQ(srv.requests().size(), 4u);
}

// =================================================================================================
// open_store
// =================================================================================================

TEST(OpenStore, EveryUrlForm) {
  TempDir t;
  const fs::path d = t.path / "a b";
  auto f = open_store("file://" + (t.path / "a%20b").string());
  ASSERT_NE(dynamic_cast<FileStore*>(f.get()), nullptr);
  EXPECT_EQ(dynamic_cast<FileStore*>(f.get())->root(), d);
  EXPECT_TRUE(fs::is_directory(d));
  auto l = open_store("file://localhost" + d.string());
  EXPECT_EQ(dynamic_cast<FileStore*>(l.get())->root(), d);
  auto p = open_store(d.string());
  EXPECT_EQ(dynamic_cast<FileStore*>(p.get())->root(), d);
  OpenStoreOptions no_create;
  no_create.file.create = false;
  EXPECT_THROW(open_store((t.path / "missing").string(), no_create), NotFoundError);

  auto h = open_store("https://example.com/data/x.zarr/");
  ASSERT_NE(dynamic_cast<HttpStore*>(h.get()), nullptr);
  EXPECT_EQ(h->describe(), "https://example.com/data/x.zarr");

  OpenStoreOptions so;
  so.s3.endpoint = "http://127.0.0.1:1";
  so.s3.anonymous = true;
  auto s = open_store("s3://bucket/path/in/bucket", so);
  auto* s3 = dynamic_cast<S3Store*>(s.get());
  ASSERT_NE(s3, nullptr);
  EXPECT_EQ(s3->bucket(), "bucket");
  EXPECT_EQ(s3->prefix(), "path/in/bucket");
  EXPECT_EQ(s3->url_of("zarr.json"), "http://127.0.0.1:1/bucket/path/in/bucket/zarr.json");
  EXPECT_EQ(s->describe(), "s3://bucket/path/in/bucket (endpoint http://127.0.0.1:1)");
  auto whole = open_store("s3://bucket", so);
  EXPECT_EQ(dynamic_cast<S3Store*>(whole.get())->url_of("a/b"), "http://127.0.0.1:1/bucket/a/b");

  expect_throw_with<StoreError>([] { open_store("gs://bucket/x"); }, {"unsupported URL scheme 'gs'", "'gs://bucket/x'"});
  expect_throw_with<StoreError>([&] { open_store("s3://", so); }, {"names no bucket"});
  expect_throw_with<StoreError>([&] { open_store("s3:///x", so); }, {"names no bucket"});
  expect_throw_with<StoreError>([&] { open_store("s3://b/x?versionId=1", so); }, {"no query"});
  expect_throw_with<StoreError>([&] { open_store("s3://b/../x", so); }, {"invalid prefix '../x'"});
  expect_throw_with<StoreError>([] { open_store("file://server/share"); }, {"another host ('server')"});
  expect_throw_with<StoreError>([] { open_store("file:relative"); }, {"not a usable file URL"});
  expect_throw_with<StoreError>([] { open_store(""); }, {"empty URL"});
}

TEST(OpenStore, S3SettingsComeFromTheEnvironment) {
  EnvVar ep("AWS_ENDPOINT_URL", "http://127.0.0.1:9/");
  EnvVar eps3("AWS_ENDPOINT_URL_S3", std::nullopt);
  EnvVar region("AWS_REGION", "eu-west-3");
  EnvVar dregion("AWS_DEFAULT_REGION", "ignored-1");
  EnvVar ak("AWS_ACCESS_KEY_ID", "AKIAENV");
  EnvVar sk("AWS_SECRET_ACCESS_KEY", std::nullopt);
  expect_throw_with<StoreError>([] { open_store("s3://b/p"); }, {"access key id is set but no secret access key"});
  EnvVar sk2("AWS_SECRET_ACCESS_KEY", "secret");
  auto s = open_store("s3://b/p");
  auto* s3 = dynamic_cast<S3Store*>(s.get());
  EXPECT_EQ(s3->endpoint(), "http://127.0.0.1:9");
  EXPECT_EQ(s3->region(), "eu-west-3");
  {
    EnvVar special("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:10");
    EnvVar noregion("AWS_REGION", std::nullopt);
    auto s2 = S3Store::open({.bucket = "b"});
    EXPECT_EQ(s2->endpoint(), "http://127.0.0.1:10");
    EXPECT_EQ(s2->region(), "ignored-1");
  }
  EnvVar noep("AWS_ENDPOINT_URL", std::nullopt);
  auto aws = S3Store::open({.bucket = "b", .region = "ap-south-1"});
  EXPECT_EQ(aws->endpoint(), "https://s3.ap-south-1.amazonaws.com");
  expect_throw_with<StoreError>([] { S3Store::open({.bucket = ""}); }, {"no bucket"});
  expect_throw_with<StoreError>([] { S3Store::open({.bucket = "a/b"}); }, {"invalid bucket name 'a/b'"});
  expect_throw_with<StoreError>([] { S3Store::open({.bucket = "b", .region = "us east"}); }, {"invalid region 'us east'"});
  expect_throw_with<StoreError>([] { S3Store::open({.bucket = "b", .endpoint = "ftp://x"}); }, {"endpoint", "'ftp://x'"});
  expect_throw_with<StoreError>([] { S3Store::open({.bucket = "b", .list_page_size = 0}); }, {"list_page_size must be 1..1000"});
}

// =================================================================================================
// S3Store against moto
// =================================================================================================

TEST_F(S3StoreMoto, BehavesLikeEveryOtherStore) {
  auto s = store("");
  // get / set / erase / exists
  EXPECT_FALSE(s->get("a/b").has_value());
  EXPECT_FALSE(s->exists("a/b"));
  s->set("a/b", B("hello"));
  EXPECT_TRUE(s->exists("a/b"));
  EXPECT_EQ(s->get("a/b"), B("hello"));
  s->set("a/b", B(""));
  EXPECT_EQ(s->get("a/b"), B(""));
  s->erase("a/b");
  EXPECT_FALSE(s->exists("a/b"));
  EXPECT_NO_THROW(s->erase("a/b"));
  EXPECT_FALSE(s->exists("a"));
  // ranges
  s->set("k", B("0123456789"));
  EXPECT_EQ(s->get("k", ByteRange::range(2, 3)), B("234"));
  EXPECT_EQ(s->get("k", ByteRange::range(8, 100)), B("89"));
  EXPECT_EQ(s->get("k", ByteRange::range(20, 5)), B(""));
  EXPECT_EQ(s->get("k", ByteRange::range(4, 0)), B(""));
  EXPECT_EQ(s->get("k", ByteRange::from(7)), B("789"));
  EXPECT_EQ(s->get("k", ByteRange::from(10)), B(""));
  EXPECT_EQ(s->get("k", ByteRange::last(4)), B("6789"));
  EXPECT_EQ(s->get("k", ByteRange::last(40)), B("0123456789"));
  EXPECT_FALSE(s->get("missing", ByteRange::last(4)).has_value());
  EXPECT_FALSE(s->get("missing", ByteRange::range(0, 0)).has_value());
  s->set("e", B(""));
  EXPECT_EQ(s->get("e", ByteRange::last(3)), B(""));
  // compare_and_set
  EXPECT_TRUE(s->supports_conditional_writes());
  EXPECT_TRUE(s->compare_and_set("m", std::nullopt, B("v1")));
  EXPECT_FALSE(s->compare_and_set("m", std::nullopt, B("v2")));
  EXPECT_EQ(s->get("m"), B("v1"));
  EXPECT_FALSE(s->compare_and_set("m", B("other"), B("v2")));
  EXPECT_EQ(s->get("m"), B("v1"));
  EXPECT_TRUE(s->compare_and_set("m", B("v1"), B("v2")));
  EXPECT_EQ(s->get("m"), B("v2"));
  EXPECT_FALSE(s->compare_and_set("never", B("x"), B("y")));
  EXPECT_FALSE(s->exists("never"));
  // listing and prefix erase
  s->erase_prefix("");
  for (const char* k : {"zarr.json", "a/zarr.json", "a/c/0/0", "a/c/0/1", "a/c/-1/0", "ab/x", "b/zarr.json"}) s->set(k, B(k));
  EXPECT_EQ(s->list_prefix("a/"), (std::vector<std::string>{"a/c/-1/0", "a/c/0/0", "a/c/0/1", "a/zarr.json"}));
  EXPECT_EQ(s->list_prefix("a/c/0/"), (std::vector<std::string>{"a/c/0/0", "a/c/0/1"}));
  EXPECT_EQ(s->list_prefix("a"), (std::vector<std::string>{"a/c/-1/0", "a/c/0/0", "a/c/0/1", "a/zarr.json", "ab/x"}));
  EXPECT_EQ(s->list_prefix("").size(), 7u);
  EXPECT_TRUE(s->list_prefix("nope/").empty());
  auto root = s->list_dir("");
  EXPECT_EQ(root.keys, (std::vector<std::string>{"zarr.json"}));
  EXPECT_EQ(root.prefixes, (std::vector<std::string>{"a", "ab", "b"}));
  auto a = s->list_dir("a/");
  EXPECT_EQ(a.keys, (std::vector<std::string>{"zarr.json"}));
  EXPECT_EQ(a.prefixes, (std::vector<std::string>{"c"}));
  EXPECT_EQ(s->list_dir("a").prefixes, (std::vector<std::string>{"c"}));
  s->erase_prefix("a/");
  EXPECT_TRUE(s->list_prefix("a/").empty());
  EXPECT_TRUE(s->exists("ab/x"));
  s->erase_prefix("");
  EXPECT_TRUE(s->list_prefix("").empty());
  // hostile keys and locks
  for (const char* k : {"../x", "a/../../x", "/etc/passwd", "a//b", "a/./b", "", "a/", "a\\b", "..", ".", "a/.zarrpp-lock.x"}) {
    EXPECT_THROW(s->set(k, B("x")), StoreError) << k;
    EXPECT_THROW(s->get(k), StoreError) << k;
    EXPECT_THROW(s->erase(k), StoreError) << k;
    EXPECT_THROW(s->exists(k), StoreError) << k;
  }
  EXPECT_THROW(s->list_prefix("../"), StoreError);
  EXPECT_THROW(s->erase_prefix("../"), StoreError);
  EXPECT_THROW(s->lock("../zarr.json"), StoreError);
  { auto lk = s->lock("zarr.json"); ASSERT_NE(lk, nullptr); EXPECT_NO_THROW(lk->check()); }
  // The conditional-write probe left nothing behind.
  const auto names = Json::parse(moto().python(
      "print(json.dumps([o['Key'] for o in s3.list_objects_v2(Bucket=B, Prefix='t/BehavesLikeEveryOtherStore/').get('Contents', [])]))"));
  EXPECT_TRUE(names.empty()) << names.dump();
}

TEST_F(S3StoreMoto, Boto3SeesWhatZarrppWroteAndViceVersa) {
  auto s = store("x");
  const std::vector<std::string> keys = {"plain", "sp ace/k", "plus+sign", "pct%20lit", "amp&lt;<gt>\"q'", "uni\xc3\xa9\xe2\x82\xac",
                                         "tilde~-._", "eq=semi;colon:at@", "deep/er/key"};
  for (const auto& k : keys) s->set(k, B("value of " + k));
  Bytes big(3 * 1024 * 1024 + 17);  // > 1 MiB: curl sends Expect: 100-continue
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::uint8_t>(i * 31 + i / 4096);
  s->set("big", big);
  const auto out = Json::parse(moto().python(R"PY(
objs = s3.list_objects_v2(Bucket=B, Prefix="t/Boto3SeesWhatZarrppWroteAndViceVersa/x/")["Contents"]
res = {"keys": sorted(o["Key"] for o in objs)}
res["values"] = {o["Key"]: s3.get_object(Bucket=B, Key=o["Key"])["Body"].read().decode("latin-1") for o in objs if not o["Key"].endswith("/big")}
import hashlib
res["big"] = hashlib.sha256(s3.get_object(Bucket=B, Key="t/Boto3SeesWhatZarrppWroteAndViceVersa/x/big")["Body"].read()).hexdigest()
res["ctype"] = s3.head_object(Bucket=B, Key="t/Boto3SeesWhatZarrppWroteAndViceVersa/x/plain")["ContentType"]
s3.put_object(Bucket=B, Key="t/Boto3SeesWhatZarrppWroteAndViceVersa/x/from boto3/v", Body=b"\x00\x01binary\xff")
s3.put_object(Bucket=B, Key="t/Boto3SeesWhatZarrppWroteAndViceVersa/x/folder/", Body=b"")
print(json.dumps(res))
)PY"));
  std::vector<std::string> want;
  for (const auto& k : keys) want.push_back("t/Boto3SeesWhatZarrppWroteAndViceVersa/x/" + k);
  want.push_back("t/Boto3SeesWhatZarrppWroteAndViceVersa/x/big");
  std::sort(want.begin(), want.end());
  EXPECT_EQ(out["keys"].get<std::vector<std::string>>(), want);
  for (const auto& k : keys) {
    const std::string latin1 = [&] {
      std::string r;
      for (unsigned char c : "value of " + k) r += c < 0x80 ? std::string(1, static_cast<char>(c))
                                                             : std::string{static_cast<char>(0xC0 | (c >> 6)), static_cast<char>(0x80 | (c & 0x3F))};
      return r;
    }();
    EXPECT_EQ(out["values"]["t/Boto3SeesWhatZarrppWroteAndViceVersa/x/" + k].get<std::string>(), latin1) << k;
  }
  EXPECT_EQ(out["big"], detail::sha256_hex(big));
  EXPECT_EQ(out["ctype"], "application/octet-stream");
  EXPECT_EQ(s->get("big"), big);
  EXPECT_EQ(s->get("big", ByteRange::range(1024 * 1024, 5)), Bytes(big.begin() + 1024 * 1024, big.begin() + 1024 * 1024 + 5));
  // What boto3 wrote, zarrpp reads; the "folder/" marker is no key but shows as a directory.
  const std::string bin("\x00\x01" "binary\xff", 9);
  EXPECT_EQ(s->get("from boto3/v"), B(bin));
  auto listed = s->list_prefix("");
  EXPECT_EQ(listed.size(), keys.size() + 2);
  EXPECT_TRUE(std::is_sorted(listed.begin(), listed.end()));
  EXPECT_EQ(std::count(listed.begin(), listed.end(), "folder/"), 0);
  const auto top = s->list_dir("");
  EXPECT_EQ(top.prefixes, (std::vector<std::string>{"deep", "folder", "from boto3", "sp ace"}));
  EXPECT_EQ(std::count(top.keys.begin(), top.keys.end(), "amp&lt;<gt>\"q'"), 1);
  EXPECT_TRUE(s->list_dir("folder/").keys.empty());
  // erase_prefix removes everything under the root, markers included.
  s->erase_prefix("");
  const auto left = moto().python(
      "print(len(s3.list_objects_v2(Bucket=B, Prefix='t/Boto3SeesWhatZarrppWroteAndViceVersa/x/').get('Contents', [])))");
  EXPECT_EQ(left, "0\n");
}

TEST_F(S3StoreMoto, ListingPaginatesAndErasesInBulk) {
  auto o = moto().options("t/paging");
  o.list_page_size = 2;
  auto s = S3Store::open(o);
  std::vector<std::string> keys;
  for (int i = 0; i < 9; ++i) keys.push_back("d" + std::to_string(i % 3) + "/k" + std::to_string(i) + (i == 4 ? "&<>\"'" : ""));
  keys.push_back("top");
  for (const auto& k : keys) s->set(k, B(k));
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(s->list_prefix(""), keys);
  EXPECT_EQ(s->list_prefix("d1/"), (std::vector<std::string>{"d1/k1", "d1/k4&<>\"'", "d1/k7"}));
  const auto root = s->list_dir("");
  EXPECT_EQ(root.prefixes, (std::vector<std::string>{"d0", "d1", "d2"}));
  EXPECT_EQ(root.keys, (std::vector<std::string>{"top"}));
  // A sibling prefix sharing the root's name is not part of the store.
  auto sib = S3Store::open(moto().options("t/paging-sibling"));
  sib->set("k", B("x"));
  s->erase_prefix("d");  // string prefix: d0/, d1/, d2/
  EXPECT_EQ(s->list_prefix(""), (std::vector<std::string>{"top"}));
  s->erase_prefix("");
  EXPECT_TRUE(s->list_prefix("").empty());
  EXPECT_EQ(sib->get("k"), B("x"));
}

TEST_F(S3StoreMoto, SignaturesAreVerifiedByTheServer) {
  struct Auth {
    const Moto& m;
    explicit Auth(const Moto& mm) : m(mm) { m.require_signatures(true); }
    ~Auth() {
      try {
        m.require_signatures(false);
      } catch (const std::exception&) {
      }
    }
  };
  auto s = store("signed");
  Auth on(moto());
  // Every kind of request, signed with the IAM user's key: moto recomputes each signature.
  Bytes big(1500 * 1024);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::uint8_t>(i % 251);
  s->set("big", big);
  for (int i = 0; i < 5; ++i) s->set("dir/k" + std::to_string(i), B(std::to_string(i)));
  s->set("sp ace", B("space"));
  EXPECT_EQ(s->get("big", ByteRange::range(1000, 3)), Bytes(big.begin() + 1000, big.begin() + 1003));
  EXPECT_EQ(s->get("big", ByteRange::last(2)), Bytes(big.end() - 2, big.end()));
  EXPECT_EQ(s->get("sp ace"), B("space"));
  EXPECT_TRUE(s->exists("dir/k1"));
  EXPECT_FALSE(s->exists("dir/none"));
  // Listing: moto checks signatures against the *decoded* query string, so it rejects every
  // correctly encoded '/' in a query (boto3's requests too): list flat names at the bucket root.
  auto flat_options = moto().options("");
  flat_options.list_page_size = 2;  // continuation tokens in the signed query
  auto flat = S3Store::open(flat_options);
  for (int i = 0; i < 5; ++i) flat->set("sigflat-" + std::to_string(i), B("f"));
  EXPECT_EQ(flat->list_prefix("sigflat-").size(), 5u);
  flat->erase_prefix("sigflat-");  // DeleteObjects: a signed POST with Content-MD5
  EXPECT_TRUE(flat->list_prefix("sigflat-").empty());
  EXPECT_TRUE(s->compare_and_set("cas", std::nullopt, B("1")));
  EXPECT_TRUE(s->compare_and_set("cas", B("1"), B("2")));
  EXPECT_FALSE(s->compare_and_set("cas", B("1"), B("3")));
  s->erase("sp ace");
  EXPECT_FALSE(s->exists("sp ace"));

  // Temporary credentials need their session token (x-amz-security-token).
  auto t = moto().options("t/SignaturesAreVerifiedByTheServer/signed");
  t.access_key_id = moto().temp_access_key();
  t.secret_access_key = moto().temp_secret_key();
  t.session_token = moto().session_token();
  EXPECT_EQ(S3Store::open(t)->get("cas"), B("2"));
  t.session_token = "not-the-token";
  expect_throw_with<StoreError>([&] { S3Store::open(t)->get("cas"); }, {"S3 GET", "HTTP 400", "InvalidToken"});

  auto wrong = moto().options("t/SignaturesAreVerifiedByTheServer/signed");
  wrong.secret_access_key = "not-the-secret";
  expect_throw_with<StoreError>([&] { S3Store::open(wrong)->get("cas"); },
                                {"S3 GET", "/zarrpp-test/t/SignaturesAreVerifiedByTheServer/signed/cas", "HTTP 403",
                                 "SignatureDoesNotMatch"});
  expect_throw_with<StoreError>([&] { S3Store::open(wrong)->set("x", B("1")); }, {"S3 PUT", "SignatureDoesNotMatch"});
  auto anon = moto().options("t/SignaturesAreVerifiedByTheServer/signed");
  anon.anonymous = true;
  expect_throw_with<StoreError>([&] { S3Store::open(anon)->get("cas"); }, {"HTTP 403", "the request was unsigned"});
}

TEST_F(S3StoreMoto, ArraysThroughAnS3Url) {
  EnvVar ep("AWS_ENDPOINT_URL", moto().endpoint());
  EnvVar eps3("AWS_ENDPOINT_URL_S3", std::nullopt);
  EnvVar region("AWS_REGION", "us-east-1");
  EnvVar ak("AWS_ACCESS_KEY_ID", "testing");
  EnvVar sk("AWS_SECRET_ACCESS_KEY", "testing");
  EnvVar tok("AWS_SESSION_TOKEN", std::nullopt);
  const std::string url = std::string("s3://") + kBucket + "/t/ArraysThroughAnS3Url/data.zarr";
  {
    auto opened = open_store(url);
    auto g = Group::create(opened, "", {{"k", 1}});
    auto a = g.create_array("plain", {.shape = {12, 5}, .chunks = {5, 5}, .dtype = DataType::int32,
                                      .compressor = codec::Zstd{.level = 1}});
    a.write({}, iota_i32({12, 5}));
    auto sh = g.create_array("sharded", {.shape = {8, 8}, .chunks = {2, 2}, .dtype = DataType::uint16, .shards = Shape{4, 8}});
    NDArray v(DataType::uint16, {8, 8});
    for (int i = 0; i < 64; ++i) v.data<std::uint16_t>()[i] = static_cast<std::uint16_t>(i * 3);
    sh.write({}, v);
    g.update_attributes({{"updated", true}});  // compare-and-set on zarr.json, no lock needed
    // Growth holds a lease (conditional PUTs); metadata-only changes need no lock.
    a.prepend(NDArray::full<std::int32_t>({5, 5}, 7));
    a.append(NDArray::full<std::int32_t>({3, 5}, 8));
    a.resize({17, 5});  // drops the appended rows again
    a.update_attributes({{"x", 1}});
    EXPECT_EQ(Array::open(opened, "plain").attributes()["x"], 1);
    EXPECT_EQ(a.domain(), (Domain{{-5, 12}, {0, 5}}));
    EXPECT_EQ(a.read({slice(0, 5)}), NDArray::full<std::int32_t>({5, 5}, 7));
    EXPECT_EQ(a.read({slice(5, 17)}), iota_i32({12, 5}));
    // A server without conditional writes has no lease: growth refuses clearly, nothing written.
    auto o = moto().options("t/ArraysThroughAnS3Url/data.zarr");
    o.conditional_writes = ConditionalWrites::Off;
    auto nolock = Array::open(S3Store::open(o), "plain");
    expect_throw_with<ConflictError>([&] { nolock.prepend(NDArray::full<std::int32_t>({5, 5}, 9)); }, {"cannot lock", "s3://"});
    expect_throw_with<ConflictError>([&] { nolock.append(NDArray::full<std::int32_t>({5, 5}, 9)); }, {"cannot lock"});
    a.resize_domain({{0, 12}, {0, 5}});  // back to the original rows; chunk c/-1/0 goes
    EXPECT_EQ(a.shape(), (Shape{12, 5}));
  }
  // A fresh store (new connections, nothing cached) reads it all back.
  auto opened = open_store(url);
  const auto g = Group::open(opened);
  EXPECT_EQ(g.attributes()["k"], 1);
  EXPECT_EQ(g.attributes()["updated"], true);
  EXPECT_EQ((g.children()), (std::vector<Group::Child>{{"plain", NodeType::Array}, {"sharded", NodeType::Array}}));
  const auto a = g.open_array("plain");
  EXPECT_EQ(a.shape(), (Shape{12, 5}));
  EXPECT_EQ(a.read(), iota_i32({12, 5}));
  EXPECT_EQ(a.nchunks_stored(), 3);
  const auto sh = g.open_array("sharded");
  EXPECT_EQ(sh.read({slice(2, 4), slice(6, 8)}).to_vector<std::uint16_t>(), (std::vector<std::uint16_t>{66, 69, 90, 93}));
  // boto3 sees the layout Zarr v3 prescribes.
  const auto out = Json::parse(moto().python(R"PY(
p = "t/ArraysThroughAnS3Url/data.zarr/"
keys = sorted(o["Key"][len(p):] for o in s3.list_objects_v2(Bucket=B, Prefix=p)["Contents"])
meta = json.loads(s3.get_object(Bucket=B, Key=p + "plain/zarr.json")["Body"].read())
print(json.dumps({"keys": keys, "node_type": meta["node_type"], "shape": meta["shape"]}))
)PY"));
  EXPECT_EQ(out["keys"].get<std::vector<std::string>>(),
            (std::vector<std::string>{"plain/c/0/0", "plain/c/1/0", "plain/c/2/0", "plain/zarr.json", "sharded/c/0/0",
                                      "sharded/c/1/0", "sharded/zarr.json", "zarr.json"}));
  EXPECT_EQ(out["node_type"], "array");
  EXPECT_EQ(out["shape"], Json::parse("[12, 5]"));
  remove_node(opened, "sharded");
  EXPECT_EQ(Group::open(opened).children(), (std::vector<Group::Child>{{"plain", NodeType::Array}}));
}

TEST_F(S3StoreMoto, LeasesExcludeExpireAndCanBeLost) {
  using namespace std::chrono_literals;
  auto o = moto().options("t/Leases");
  o.lock_ttl = 400ms;
  auto s1 = S3Store::open(o), s2 = S3Store::open(o);
  auto lease_objects = [&] {
    return Json::parse(moto().python(
        "print(json.dumps(sorted(o['Key'] for o in s3.list_objects_v2(Bucket=B, Prefix='t/Leases/').get('Contents', []))))"));
  };
  // Exclusion: s2 waits while s1 holds (and renews) the lease, for several times its ttl.
  auto l1 = s1->lock("a/zarr.json");
  ASSERT_NE(l1, nullptr);
  std::atomic<bool> got{false};
  std::thread waiter([&] {
    auto l2 = s2->lock("a/zarr.json");
    got = true;
    l2->check();
  });
  std::this_thread::sleep_for(1500ms);
  EXPECT_FALSE(got) << "a renewed lease must not be taken over";
  EXPECT_NO_THROW(l1->check());
  EXPECT_EQ(lease_objects(), Json::parse(R"(["t/Leases/a/.zarrpp-lock.zarr.json"])"));
  EXPECT_TRUE(s1->list_prefix("").empty()) << "lease objects are not store keys";
  const auto t0 = std::chrono::steady_clock::now();
  l1.reset();
  waiter.join();
  EXPECT_TRUE(got);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s) << "a released lease is free at once";
  EXPECT_TRUE(lease_objects().empty()) << "released leases are deleted";

  // A waiter gives up after lock_timeout, naming the holder.
  auto impatient_opts = o;
  impatient_opts.lock_timeout = 300ms;
  auto impatient = S3Store::open(impatient_opts);
  {
    auto held = s1->lock("b/zarr.json");
    expect_throw_with<ConflictError>([&] { impatient->lock("b/zarr.json"); }, {"could not lock 'b/zarr.json'", "held by", "pid"});
  }

  // A crashed holder's lease (never renewed) is taken over after its own ttl.
  moto().python("s3.put_object(Bucket=B, Key='t/Leases/c/.zarrpp-lock.zarr.json', "
                "Body=b'{\"owner\": \"crashed\", \"ttl_ms\": 300, \"renewal\": 0}')");
  const auto t1 = std::chrono::steady_clock::now();
  {
    auto l3 = s1->lock("c/zarr.json");
    const auto took = std::chrono::steady_clock::now() - t1;
    EXPECT_GE(took, 300ms);
    EXPECT_LT(took, 5s);
  }

  // A holder whose lease is overwritten (taken over) notices at its next renewal: check() throws.
  auto l4 = s1->lock("d/zarr.json");
  moto().python("s3.put_object(Bucket=B, Key='t/Leases/d/.zarrpp-lock.zarr.json', Body=b'{\"owner\": \"someone else\"}')");
  std::this_thread::sleep_for(500ms);
  expect_throw_with<ConflictError>([&] { l4->check(); }, {"lock on 'd/zarr.json' was lost", "took it over"});
  l4.reset();  // must not delete the other holder's lease
  EXPECT_EQ(moto().python("print(s3.get_object(Bucket=B, Key='t/Leases/d/.zarrpp-lock.zarr.json')['Body'].read().decode())"),
            "{\"owner\": \"someone else\"}\n");
  EXPECT_THROW(S3Store::open([&] { auto x = o; x.lock_ttl = 1ms; return x; }()), StoreError);
}

// Issue "remote stores": prepend on S3 writes only the new chunks and zarr.json, and reads no
// existing chunk when the new rows fill whole chunks.
TEST_F(S3StoreMoto, PrependWritesOnlyTheNewChunksAndMetadata) {
  using K = StoreOp::Kind;
  auto rec = std::make_shared<RecordingStore>(store(""));
  auto a = Array::create(rec, "ts", {.shape = {8, 6}, .chunks = {4, 3}, .dtype = DataType::int32, .compressor = codec::Zstd{.level = 1}});
  a.write({}, iota_i32({8, 6}));
  rec->clear();
  a.prepend(NDArray::full<std::int32_t>({4, 6}, -1));
  EXPECT_EQ(rec->keys({K::Set}), (std::vector<std::string>{"ts/c/-1/0", "ts/c/-1/1"}));
  EXPECT_EQ(rec->keys({K::SetIf}), (std::vector<std::string>{"ts/zarr.json"}));
  EXPECT_EQ(rec->keys({K::Erase, K::ErasePrefix}), std::vector<std::string>{});
  for (const auto& k : rec->keys({K::Get})) EXPECT_EQ(k, "ts/zarr.json") << "no existing chunk is read";
  EXPECT_EQ(rec->keys({K::Lock}), (std::vector<std::string>{"ts/zarr.json"}));
  EXPECT_EQ(Array::open(store(""), "ts").read({slice(0, 5), slice(0, 2)}).to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{-1, -1, -1, -1, -1, -1, -1, -1, 0, 1}));
}

#ifdef ZARRPP_EXAMPLE_DISTRIBUTED
// Issue "remote stores", distributed use: processes write disjoint regions of one S3 array and
// grow it at both ends concurrently; the example checks the result and so do we, independently.
TEST_F(S3StoreMoto, ProcessesWriteAndGrowOneArrayTogether) {
  const auto o = moto().options("");
  const std::string url = std::string("s3://") + kBucket + "/t/Distributed/series.zarr";
  const auto r = run({ZARRPP_EXAMPLE_DISTRIBUTED, url, "4", "5"},
                     {{"AWS_ENDPOINT_URL", moto().endpoint()}, {"AWS_REGION", "us-east-1"},
                      {"AWS_ACCESS_KEY_ID", *o.access_key_id}, {"AWS_SECRET_ACCESS_KEY", *o.secret_access_key}});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("complete: 4 workers, 20 growth steps"), std::string::npos) << r.out;
  // Independently: 4 blocks of 16 rows plus 20 growth steps of 4 rows, around domain row 0.
  const auto a = Array::open(S3Store::open(moto().options("t/Distributed")), "series.zarr");
  EXPECT_EQ(a.shape(), (Shape{4 * 16 + 20 * 4, 32}));
  const auto d = a.domain();
  EXPECT_EQ(d[0].exclusive_max - d[0].inclusive_min, 144);
  EXPECT_LT(d[0].inclusive_min, 0);
  EXPECT_GT(d[0].exclusive_max, 64);
  const auto v = a.read<std::int32_t>();
  std::set<std::int32_t> tags;
  for (std::int64_t row = 0; row < 144; ++row) tags.insert(v.data<std::int32_t>()[row * 32] / 100);
  EXPECT_EQ(tags.size(), 144u) << "every row is a different write";
  EXPECT_EQ(v.data<std::int32_t>()[-d[0].inclusive_min * 32] / 100, 1'000'000) << "worker 0's block starts at domain row 0";
  // No lease is left behind.
  const auto names = Json::parse(moto().python(
      "print(json.dumps([o['Key'] for o in s3.list_objects_v2(Bucket=B, Prefix='t/Distributed/').get('Contents', []) if 'lock' in o['Key']]))"));
  EXPECT_TRUE(names.empty()) << names.dump();
}
#endif

TEST_F(S3StoreMoto, ErrorsNameWhatWentWrong) {
  auto o = moto().options("t/errors");
  o.bucket = "no-such-bucket";
  auto missing = S3Store::open(o);
  expect_throw_with<StoreError>([&] { missing->get("k"); }, {"S3 GET", "no-such-bucket", "404", "NoSuchBucket"});
  expect_throw_with<StoreError>([&] { missing->set("k", B("v")); }, {"S3 PUT", "NoSuchBucket"});
  expect_throw_with<StoreError>([&] { missing->list_prefix(""); }, {"S3 GET", "list-type=2", "NoSuchBucket"});
  expect_throw_with<StoreError>([&] { missing->erase("k"); }, {"S3 DELETE", "NoSuchBucket"});

  auto down = moto().options("t/errors");
  down.endpoint = "http://127.0.0.1:" + std::to_string(free_port());
  down.net.max_attempts = 2;
  expect_throw_with<StoreError>([&] { S3Store::open(down)->get("k"); }, {"S3 GET", down.endpoint.value(), "after 2 attempts"});

  auto s = store("");
  expect_throw_with<StoreError>([&] { s->get("a/../b"); }, {"invalid store key 'a/../b'"});
  expect_throw_with<StoreError>([&] { s->list_dir("/x"); }, {"invalid store key"});
}
