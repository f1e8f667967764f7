#include "test_pause.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

namespace zarrpp::detail {

void test_pause(const char* point) noexcept {
  static const std::string setting = [] {
    const char* v = std::getenv("ZARRPP_TEST_PAUSE");
    return std::string(v ? v : "");
  }();
  if (setting.empty()) return;
  const auto colon = setting.find(':');
  if (colon == std::string::npos || setting.compare(0, colon, point) != 0) return;
  const std::string flag = setting.substr(colon + 1) + "/" + point + "." + std::to_string(::getpid());
  const int fd = ::open(flag.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  ::close(fd);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (::access(flag.c_str(), F_OK) == 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

}  // namespace zarrpp::detail
