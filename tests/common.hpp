#pragma once
// Helpers every test file shares: bytes from text, temporary directories, and catching zarrpp's
// errors to check their kind, code and message.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <string>

#include "zarrpp/testing/store_doubles.hpp"
#include "zarrpp/zarrpp.hpp"

// ZARRPP_TEST_ASAN is 1 when the tests run under AddressSanitizer: GCC defines
// __SANITIZE_ADDRESS__, clang answers __has_feature (the sanitizer build uses clang).
#if defined(__SANITIZE_ADDRESS__)
#define ZARRPP_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ZARRPP_TEST_ASAN 1
#endif
#endif
#ifndef ZARRPP_TEST_ASAN
#define ZARRPP_TEST_ASAN 0
#endif

namespace zarrpp::test {

inline Bytes B(const std::string& s) { return Bytes(s.begin(), s.end()); }
inline std::string S(const Bytes& b) { return std::string(b.begin(), b.end()); }

// A fresh directory under the system's temporary folder, removed on destruction unless the test
// failed or ZARRPP_TEST_KEEP is set (then it is kept to look at, and its path printed).
class TempDir {
 public:
  explicit TempDir(const std::string& name = "t") {
    std::string tmpl = (std::filesystem::temp_directory_path() / ("zarrpp-" + name + "-XXXXXX")).string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed for " + tmpl);
    path_ = tmpl;
  }
  ~TempDir() {
    if (::testing::Test::HasFailure() || std::getenv("ZARRPP_TEST_KEEP") != nullptr) {
      std::fprintf(stderr, "kept %s\n", path_.string().c_str());
      return;
    }
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& rel) const { return path_ / rel; }

 private:
  std::filesystem::path path_;
};

// What a call threw: whether it threw a zarrpp::Error at all, its code and message.
struct Caught {
  bool thrown = false;
  ErrorCode code = ErrorCode::invalid_argument;
  std::string what;
  bool has(const std::string& part) const { return what.find(part) != std::string::npos; }
};
template <class F>
Caught catch_error(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return {true, e.code(), e.what()};
  }
  return {};
}

// Runs f, expecting it to throw E with a message containing every one of `parts`.
template <class E, class F>
void expect_throw_with(F&& f, std::initializer_list<std::string> parts, const std::string& where = "") {
  try {
    f();
    ADD_FAILURE() << "expected an exception " << where;
  } catch (const E& e) {
    const std::string msg = e.what();
    for (const auto& p : parts)
      EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg << " " << where;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what() << " " << where;
  }
}

// The same, also checking the error's code.
template <class E, class F>
void expect_error(F&& f, ErrorCode code, std::initializer_list<std::string> parts, const std::string& where = "") {
  try {
    f();
    ADD_FAILURE() << "expected an exception " << where;
  } catch (const E& e) {
    EXPECT_EQ(e.code(), code) << to_string(e.code()) << " is not " << to_string(code) << ": " << e.what() << " "
                              << where;
    const std::string msg = e.what();
    for (const auto& p : parts)
      EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg << " " << where;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what() << " " << where;
  }
}

}  // namespace zarrpp::test
