// A TCP proxy on loopback that delays every byte by a fixed time each way, for the network
// benchmark (bench/bench_network.py): a round trip through it costs 2 × delay more, with no
// bandwidth limit, without slowing the rest of the shared machine as `tc netem` would.
//
//   zarrpp-latency-proxy LISTEN_PORT TARGET_PORT DELAY_MS MAX_SECONDS
//
// Prints "ready" once it listens; exits after MAX_SECONDS (a bound, so a forgotten proxy ends).
// One thread per connection moves bytes both ways, each piece sent DELAY_MS after it arrived.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Piece {
  Clock::time_point due;
  std::string bytes;
};

// Bytes read from one socket, waiting to be written to the other.
struct Direction {
  int from, to;
  std::deque<Piece> queue;
  bool closed = false;  // `from` reached its end
};

int connect_to(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Writes what is due; false when the peer is gone.
bool flush_due(Direction& d, Clock::time_point now) {
  while (!d.queue.empty() && d.queue.front().due <= now) {
    const std::string& b = d.queue.front().bytes;
    std::size_t off = 0;
    while (off < b.size()) {
      const ssize_t w = ::send(d.to, b.data() + off, b.size() - off, MSG_NOSIGNAL);
      if (w <= 0) return false;
      off += static_cast<std::size_t>(w);
    }
    d.queue.pop_front();
  }
  if (d.closed && d.queue.empty()) ::shutdown(d.to, SHUT_WR);
  return true;
}

void serve(int client, int target_port, std::chrono::milliseconds delay) {
  const int server = connect_to(target_port);
  if (server < 0) {
    ::close(client);
    return;
  }
  for (int fd : {client, server}) {
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  Direction dirs[2] = {{client, server, {}, false}, {server, client, {}, false}};
  std::vector<char> buf(1 << 16);
  for (;;) {
    const auto now = Clock::now();
    bool ok = true;
    for (auto& d : dirs) ok = ok && flush_due(d, now);
    if (!ok || (dirs[0].closed && dirs[1].closed && dirs[0].queue.empty() && dirs[1].queue.empty())) break;
    int timeout = 1000;
    for (auto& d : dirs)
      if (!d.queue.empty())
        timeout = std::min<int>(
            timeout,
            static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(d.queue.front().due - now).count()) +
                1);
    pollfd p[2] = {{client, static_cast<short>(dirs[0].closed ? 0 : POLLIN), 0},
                   {server, static_cast<short>(dirs[1].closed ? 0 : POLLIN), 0}};
    if (::poll(p, 2, std::max(timeout, 0)) < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::recv(dirs[i].from, buf.data(), buf.size(), 0);
      if (n <= 0)
        dirs[i].closed = true;
      else
        dirs[i].queue.push_back({Clock::now() + delay, std::string(buf.data(), static_cast<std::size_t>(n))});
    }
  }
  ::close(client);
  ::close(server);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s LISTEN_PORT TARGET_PORT DELAY_MS MAX_SECONDS\n", argv[0]);
    return 2;
  }
  const int listen_port = std::atoi(argv[1]), target_port = std::atoi(argv[2]);
  const auto delay = std::chrono::milliseconds(std::atoi(argv[3]));
  const int max_seconds = std::atoi(argv[4]);
  const int ls = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(listen_port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(ls, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(ls, 512) != 0) {
    std::perror("latency proxy: listen");
    return 1;
  }
  std::printf("ready\n");
  std::fflush(stdout);
  std::thread([max_seconds] {
    std::this_thread::sleep_for(std::chrono::seconds(max_seconds));
    std::_Exit(0);
  }).detach();
  for (;;) {
    const int c = ::accept(ls, nullptr, nullptr);
    if (c < 0) continue;
    std::thread(serve, c, target_port, delay).detach();
  }
}
