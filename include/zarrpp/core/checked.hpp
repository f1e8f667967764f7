#pragma once
/// @file
/// Checked int64 arithmetic: every shape, index and chunk computation goes through these so an
/// overflow is an error, never undefined behaviour.
#include <cstdint>
#include <span>
#include <string>

#include "zarrpp/core/error.hpp"

namespace zarrpp::checked {

/// @{
/// a + b, a - b, a * b; an overflow is a LimitError naming `what` was being computed.
inline std::int64_t add(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r)) throw LimitError(std::string("int64 overflow computing ") + what);
  return r;
}
inline std::int64_t sub(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) throw LimitError(std::string("int64 overflow computing ") + what);
  return r;
}
inline std::int64_t mul(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) throw LimitError(std::string("int64 overflow computing ") + what);
  return r;
}

/// @}
/// @{
/// Floor division and modulo with the result of % always in [0, d) for d > 0.
inline std::int64_t floor_div(std::int64_t a, std::int64_t d) {
  std::int64_t q = a / d;
  if ((a % d != 0) && ((a < 0) != (d < 0))) --q;
  return q;
}
inline std::int64_t floor_mod(std::int64_t a, std::int64_t d) {
  std::int64_t m = a % d;
  if (m != 0 && ((m < 0) != (d < 0))) m += d;
  return m;
}
/// @}

/// Product of a shape, refusing overflow.
inline std::int64_t product(std::span<const std::int64_t> v, const char* what) {
  std::int64_t p = 1;
  for (auto x : v) p = mul(p, x, what);
  return p;
}

/// The largest integer a JavaScript reader can hold exactly: writers refuse values past it.
inline constexpr std::int64_t kMaxSafeInteger = (std::int64_t{1} << 53) - 1;

}  // namespace zarrpp::checked
