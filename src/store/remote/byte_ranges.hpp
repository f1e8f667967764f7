#pragma once
// Byte ranges over HTTP: the Range header a ByteRange needs, and the bytes a response carries
// for it (Content-Range checked, servers that ignore Range sliced).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "http_client.hpp"
#include "zarrpp/store/store.hpp"

namespace zarrpp::detail {

struct RangePlan {
  bool whole = false;  // no Range header
  bool empty = false;  // zero bytes asked for: only existence matters
  std::string header;  // "Range: bytes=..." otherwise
};
RangePlan plan_range(const ByteRange& r);
// The requested bytes from a 2xx response to a request made with plan_range(r): slices a 200
// (server ignored Range) and checks a 206's Content-Range. Throws
// StoreError prefixed with `what` when the server sent other bytes than asked for.
Bytes take_range(HttpResponse& resp, const ByteRange& r, const std::string& what);
// The whole value's size as a 2xx response to a GET shows it (a 206's Content-Range total, a
// 200's body), before take_range takes the body; nullopt when it does not.
std::optional<std::uint64_t> value_size_of(const HttpResponse& resp);

// A 416 answer to a ranged GET is only believed for a range the object really cannot satisfy:
// `size` is the object's size (from a HEAD). Throws StoreError prefixed with `what`, naming the
// answer, when the range was satisfiable.
void check_unsatisfiable(const ByteRange& r, std::uint64_t size, const std::string& what);

// The most body bytes a GET for `r` may bring: the range's length when it has one, and at most
// max_bytes; 0 (the client's default cap) when neither bounds it.
std::uint64_t body_cap(const ByteRange& r, std::uint64_t max_bytes);
// Parses "bytes A-B/TOTAL" or "bytes A-B/*" strictly (decimal, no overflow, A <= B < TOTAL).
bool parse_content_range(std::string_view v, std::uint64_t& a, std::uint64_t& b, std::optional<std::uint64_t>& total);
// Parses a Content-Length value strictly (decimal digits only, within uint64); nullopt when it
// is not one.
std::optional<std::uint64_t> parse_content_length(std::string_view v);

}  // namespace zarrpp::detail
