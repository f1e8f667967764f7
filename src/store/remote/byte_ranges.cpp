#include "byte_ranges.hpp"

#include <limits>
#include <tuple>

#include "zarrpp/core/error.hpp"

namespace zarrpp::detail {

// ---- byte ranges --------------------------------------------------------------------------------

RangePlan plan_range(const ByteRange& r) {
  RangePlan p;
  switch (r.kind) {
    case ByteRange::Kind::All:
      p.whole = true;
      return p;
    case ByteRange::Kind::FromOffset:
      if (r.length && *r.length == 0) {
        p.empty = true;
      } else if (!r.length && r.offset == 0) {
        p.whole = true;
      } else if (r.length && *r.length - 1 <= std::numeric_limits<std::uint64_t>::max() - r.offset) {
        p.header = "Range: bytes=" + std::to_string(r.offset) + "-" + std::to_string(r.offset + *r.length - 1);
      } else {
        p.header = "Range: bytes=" + std::to_string(r.offset) + "-";
      }
      return p;
    case ByteRange::Kind::Suffix:
      if (r.suffix == 0)
        p.empty = true;
      else
        p.header = "Range: bytes=-" + std::to_string(r.suffix);
      return p;
  }
  p.whole = true;
  return p;
}

namespace {
// A decimal number of at most 20 digits that fits in uint64.
bool number(std::string_view s, std::uint64_t& out) {
  if (s.empty() || s.size() > 20) return false;
  out = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    const std::uint64_t d = static_cast<std::uint64_t>(c - '0');
    if (out > (std::numeric_limits<std::uint64_t>::max() - d) / 10) return false;
    out = out * 10 + d;
  }
  return true;
}

Bytes slice(const Bytes& body, std::uint64_t b, std::uint64_t e) {
  return Bytes(body.begin() + static_cast<std::ptrdiff_t>(b), body.begin() + static_cast<std::ptrdiff_t>(e));
}

}  // namespace

bool parse_content_range(std::string_view v, std::uint64_t& a, std::uint64_t& b, std::optional<std::uint64_t>& total) {
  if (!v.starts_with("bytes ")) return false;
  v.remove_prefix(6);
  const std::size_t dash = v.find('-'), slash = v.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || dash > slash) return false;
  if (!number(v.substr(0, dash), a) || !number(v.substr(dash + 1, slash - dash - 1), b) || b < a) return false;
  const std::string_view t = v.substr(slash + 1);
  if (t == "*") {
    total.reset();
  } else {
    std::uint64_t n = 0;
    if (!number(t, n) || n <= b) return false;
    total = n;
  }
  return true;
}

std::optional<std::uint64_t> parse_content_length(std::string_view v) {
  std::uint64_t n = 0;
  if (!number(v, n)) return std::nullopt;
  return n;
}

std::uint64_t body_cap(const ByteRange& r, std::uint64_t max_bytes) {
  std::uint64_t cap = max_bytes == kNoLimit ? 0 : max_bytes;
  std::optional<std::uint64_t> len;
  if (r.kind == ByteRange::Kind::FromOffset && r.length) len = r.length;
  if (r.kind == ByteRange::Kind::Suffix) len = r.suffix;
  // A server that ignores Range sends the whole value, which is sliced: allow that for values up
  // to 64 MiB, so a small range never brings more.
  if (len) {
    const std::uint64_t ranged = std::max<std::uint64_t>(*len, std::uint64_t{64} << 20);
    if (cap == 0 || ranged < cap) cap = ranged;
  }
  return cap;
}

void check_unsatisfiable(const ByteRange& r, std::uint64_t size, const std::string& what) {
  const auto [b, e] = r.resolve(size);
  if (b < e)
    throw StoreError(what + "HTTP 416 Range Not Satisfiable for " + plan_range(r).header.substr(7) +
                     " of an object of " + std::to_string(size) +
                     " bytes, which holds that range; the answer is wrong, the data is not known to be damaged");
}

Bytes take_range(HttpResponse& resp, const ByteRange& r, const std::string& what) {
  if (resp.status != 206) {
    // The whole value (the server ignored Range, or none was sent).
    if (r.kind == ByteRange::Kind::All) return std::move(resp.body);
    const auto [b, e] = r.resolve(resp.body.size());
    return slice(resp.body, b, e);
  }
  const std::string* cr = resp.header("content-range");
  std::uint64_t a = 0, last = 0;
  std::optional<std::uint64_t> total;
  if (!cr || !parse_content_range(*cr, a, last, total))
    throw StoreError(what + "206 Partial Content with " +
                     (cr ? "an unreadable Content-Range '" + *cr + "'" : std::string("no Content-Range")));
  if (resp.body.size() != last - a + 1)
    throw StoreError(what + "Content-Range '" + *cr + "' announces " + std::to_string(last - a + 1) + " bytes, got " +
                     std::to_string(resp.body.size()));
  std::uint64_t want_b = a, want_e = last + 1;
  if (total) {
    std::tie(want_b, want_e) = r.resolve(*total);
  } else if (r.kind == ByteRange::Kind::FromOffset) {
    want_b = r.offset;
    if (r.length && want_b < want_e && *r.length < want_e - want_b) want_e = want_b + *r.length;
  } else if (r.kind == ByteRange::Kind::Suffix && want_e - want_b > r.suffix) {
    // Without the total, the last `suffix` bytes cannot be told apart in a longer range.
    throw StoreError(what + "asked for the last " + std::to_string(r.suffix) +
                     " bytes, the server sent Content-Range '" + *cr + "' (" + std::to_string(want_e - want_b) +
                     " bytes, total unknown)");
  }
  if (want_b >= want_e) return {};
  if (want_b < a || want_e > last + 1)
    throw StoreError(what + "asked for bytes " + std::to_string(want_b) + ".." + std::to_string(want_e) +
                     ", the server sent Content-Range '" + *cr + "'");
  return slice(resp.body, want_b - a, want_e - a);
}

std::optional<std::uint64_t> value_size_of(const HttpResponse& resp) {
  if (resp.status == 200) return resp.body.size();
  if (resp.status != 206) return std::nullopt;
  const std::string* cr = resp.header("content-range");
  std::uint64_t a = 0, last = 0;
  std::optional<std::uint64_t> total;
  if (!cr || !parse_content_range(*cr, a, last, total)) return std::nullopt;
  return total;
}

}  // namespace zarrpp::detail
