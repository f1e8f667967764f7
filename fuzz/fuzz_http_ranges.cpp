// HTTP Content-Range and Content-Length handling: strict parsing (no overflow, A <= B < TOTAL) and
// take_range, which gives exactly the bytes asked for or a StoreError, whatever the server sends.
#include <cstdint>
#include <string>

#include "store/remote/byte_ranges.hpp"
#include "zarrpp/zarrpp.hpp"

using namespace zarrpp;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  // First bytes choose the request; then header text and body split at the first NUL.
  const std::uint8_t kind = data[0] % 4;
  const std::uint64_t x = data[1], y = data[2];
  const std::string rest(reinterpret_cast<const char*>(data + 3), size - 3);
  const auto nul = rest.find('\0');
  const std::string header = rest.substr(0, nul);
  const std::string body = nul == std::string::npos ? "" : rest.substr(nul + 1);

  std::uint64_t a = 0, b = 0;
  std::optional<std::uint64_t> total;
  if (detail::parse_content_range(header, a, b, total)) {
    if (a > b || (total && b >= *total)) __builtin_trap();
  }
  if (const auto n = detail::parse_content_length(header)) {
    if (header.empty() || header.find_first_not_of("0123456789") != std::string::npos) __builtin_trap();
    (void)n;
  }

  const ByteRange r = kind == 0   ? ByteRange::all()
                      : kind == 1 ? ByteRange::range(x, y)
                      : kind == 2 ? ByteRange::last(y)
                                  : ByteRange::from(x);
  for (long status : {200L, 206L, 416L}) {
    detail::HttpResponse resp;
    resp.status = status;
    resp.body.assign(body.begin(), body.end());
    resp.headers.emplace_back("content-range", header);
    try {
      const Bytes got = detail::take_range(resp, r, "fuzz");
      if (r.length && got.size() > *r.length) __builtin_trap();  // more than asked for
      if (r.kind == ByteRange::Kind::Suffix && got.size() > r.suffix) __builtin_trap();
      if (got.size() > body.size()) __builtin_trap();
    } catch (const Error&) {
    }
  }
  return 0;
}
