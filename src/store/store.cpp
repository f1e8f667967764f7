#include "zarrpp/store/store.hpp"

#include "zarrpp/core/error.hpp"

namespace zarrpp {

std::pair<std::uint64_t, std::uint64_t> ByteRange::resolve(std::uint64_t size) const {
  switch (kind) {
    case Kind::All: return {0, size};
    case Kind::FromOffset: {
      const std::uint64_t b = std::min(offset, size);
      const std::uint64_t e = length ? (size - b < *length ? size : b + *length) : size;
      return {b, e};
    }
    case Kind::Suffix: return {size > suffix ? size - suffix : 0, size};
  }
  return {0, size};
}

std::optional<std::uint64_t> Store::size(const std::string& key) {
  auto v = get(key);
  if (!v) return std::nullopt;
  return v->size();
}

bool Store::get_streamed(const std::string& key, const ByteRange& range, std::size_t piece, const PieceSink& sink) {
  if (piece == 0) piece = 1;
  std::optional<Bytes> v;
  std::uint64_t total = 0, begin = 0;
  if (range.kind == ByteRange::Kind::All) {
    v = get(key);
    if (!v) return false;
    total = v->size();
  } else {
    const auto sz = size(key);
    if (!sz) return false;
    const auto [b, e] = range.resolve(*sz);
    v = get(key, ByteRange::range(b, e - b));
    if (!v) return false;
    total = *sz;
    begin = b;
  }
  const std::span<const std::uint8_t> all(*v);
  for (std::size_t off = 0; off < all.size(); off += piece)
    sink(total, begin + off, all.subspan(off, std::min(piece, all.size() - off)));
  return true;
}

void validate_key(std::string_view key) {
  auto bad = [&](const char* why) {
    std::string shown;
    for (char c : key) shown += (c == '\0') ? std::string("\\0") : std::string(1, c);
    throw StoreError("invalid store key '" + shown + "': " + why);
  };
  if (key.empty()) bad("empty key");
  if (key.front() == '/') bad("absolute paths are not allowed");
  if (key.find('\0') != std::string_view::npos) bad("NUL bytes are not allowed");
  if (key.find('\\') != std::string_view::npos) bad("backslashes are not allowed");
  std::size_t i = 0;
  for (;;) {
    const std::size_t j = key.find('/', i);
    const auto seg = key.substr(i, j == std::string_view::npos ? std::string_view::npos : j - i);
    if (seg.empty()) bad("empty path segments are not allowed");
    if (seg == "." || seg == "..") bad("'.' and '..' segments are not allowed");
    if (seg.substr(0, 8) == ".zarrpp-") bad("segments starting with '.zarrpp-' are reserved");
    if (j == std::string_view::npos) break;
    i = j + 1;
  }
}

void validate_prefix(std::string_view prefix) {
  if (prefix.empty()) return;
  if (prefix.back() == '/') prefix.remove_suffix(1);
  validate_key(prefix);
}

}  // namespace zarrpp
