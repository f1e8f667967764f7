// `vlen-utf8` and `vlen-bytes` (array -> bytes): variable-length elements as numcodecs' VLenUTF8 /
// VLenBytes store them, which zarr-python 3 uses for its "string" and "bytes" data types and
// zarr-python 2 as the filter of object arrays: the element count as 4 little-endian bytes, then
// per element (C order) its length as 4 little-endian bytes and its bytes.
#include <algorithm>
#include <cstring>

#include "roles.hpp"

namespace zarrpp {

VlenHeap::VlenHeap(std::string fill) { items_.push_back(std::move(fill)); }

std::uint64_t VlenHeap::add(std::vector<std::string>&& values) {
  std::lock_guard lk(mu_);
  const std::uint64_t first = items_.size();
  for (auto& v : values) items_.push_back(std::move(v));
  return first;
}

std::vector<const std::string*> VlenHeap::get(std::span<const std::uint64_t> indices) const {
  std::vector<const std::string*> out(indices.size());
  std::lock_guard lk(mu_);
  for (std::size_t i = 0; i < indices.size(); ++i) {
    if (indices[i] >= items_.size())
      throw CodecError("variable-length element index " + std::to_string(indices[i]) +
                       " is not in this operation's strings");
    out[i] = &items_[indices[i]];
  }
  return out;
}

std::size_t VlenHeap::size() const {
  std::lock_guard lk(mu_);
  return items_.size();
}

namespace {

// Stored bytes per chunk are bounded (a hostile or corrupt chunk cannot make a decoder allocate
// without limit): 64 MiB plus 4 KiB per element, at most the decoded-chunk limit.
std::size_t vlen_bound(const ChunkSpec& spec) {
  const auto n = static_cast<std::uint64_t>(std::max<std::int64_t>(spec.num_elements(), 0));
  return static_cast<std::size_t>(std::min<std::uint64_t>(kMaxDecodedChunk, (std::uint64_t{64} << 20) + 4096 * n + 4));
}

// Whether `s` is well-formed UTF-8 (no overlongs, surrogates or values past U+10FFFF).
bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  while (i < s.size()) {
    const unsigned c = p[i];
    std::size_t n;
    std::uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      n = 1;
      cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      n = 2;
      cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      n = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    for (std::size_t k = 1; k <= n; ++k) {
      if (i + k >= s.size() || (p[i + k] & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (p[i + k] & 0x3f);
    }
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff))
      return false;
    i += n + 1;
  }
  return true;
}

class VlenCodec final : public ArrayToBytesCodec {
 public:
  VlenCodec(const char* name, bool utf8, const Json& cfg, const ChunkSpec& spec) : name_(name), utf8_(utf8) {
    allowed_keys(name_, cfg, {});
    const DataType want = utf8 ? DataType::string_t : DataType::bytes_t;
    if (!(spec.dtype == want))
      config_fail(name_, "encodes the data type " + want.name() + ", not " + spec.dtype.name(), cfg);
  }
  std::string name() const override { return name_; }
  Bytes encode(const ChunkSpec& spec, std::span<const std::uint8_t> data) const override {
    const auto& heap = need_heap(spec);
    const std::size_t n = data.size() / 8;
    std::vector<std::uint64_t> idx(n);
    if (n) std::memcpy(idx.data(), data.data(), n * 8);
    const auto items = heap.get(idx);
    std::size_t total = 4;
    for (const auto* s : items) {
      if (s->size() > 0xffffffffu)
        throw CodecError(name_ + ": an element of " + std::to_string(s->size()) + " bytes exceeds the format's 4 GiB");
      total += 4 + s->size();
    }
    Bytes out(total);
    auto put32 = [&](std::size_t at, std::uint64_t v) {
      for (int k = 0; k < 4; ++k) out[at + static_cast<std::size_t>(k)] = static_cast<std::uint8_t>(v >> (8 * k));
    };
    put32(0, n);
    std::size_t at = 4;
    for (const auto* s : items) {
      put32(at, s->size());
      if (!s->empty()) std::memcpy(out.data() + at + 4, s->data(), s->size());
      at += 4 + s->size();
    }
    return out;
  }
  void decode(const ChunkSpec& spec, std::span<const std::uint8_t> enc, std::span<std::uint8_t> out) const override {
    auto& heap = need_heap(spec);
    const auto n = static_cast<std::size_t>(spec.num_elements());
    auto get32 = [&](std::size_t at) {
      std::uint32_t v = 0;
      for (int k = 0; k < 4; ++k) v |= static_cast<std::uint32_t>(enc[at + static_cast<std::size_t>(k)]) << (8 * k);
      return v;
    };
    if (enc.size() < 4) decode_fail(name_, "truncated: no element count");
    if (get32(0) != n)
      decode_fail(name_, "holds " + std::to_string(get32(0)) + " elements, the chunk has " + std::to_string(n));
    if (out.size() != n * 8) throw CodecError("internal: vlen decode buffer has the wrong size");
    std::vector<std::string> items;
    items.reserve(n);
    std::size_t at = 4;
    for (std::size_t i = 0; i < n; ++i) {
      if (enc.size() - at < 4) decode_fail(name_, "truncated at element " + std::to_string(i));
      const std::size_t len = get32(at);
      at += 4;
      if (enc.size() - at < len)
        decode_fail(name_, "element " + std::to_string(i) + " claims " + std::to_string(len) + " bytes past the end");
      items.emplace_back(reinterpret_cast<const char*>(enc.data() + at), len);
      if (utf8_ && !valid_utf8(items.back()))
        decode_fail(name_, "element " + std::to_string(i) + " is not valid UTF-8");
      at += len;
    }
    if (at != enc.size()) decode_fail(name_, std::to_string(enc.size() - at) + " bytes after the last element");
    const std::uint64_t first = heap.add(std::move(items));
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t v = first + i;
      std::memcpy(out.data() + 8 * i, &v, 8);
    }
  }
  std::optional<std::size_t> encoded_size(const ChunkSpec&) const override { return std::nullopt; }
  std::size_t max_encoded_size(const ChunkSpec& spec) const override { return vlen_bound(spec); }
  CodecMetadata to_metadata() const override { return {name_, Json::object()}; }

 private:
  VlenHeap& need_heap(const ChunkSpec& spec) const {
    if (!spec.heap)
      throw CodecError(name_ +
                       ": variable-length elements are read and written as VlenValues (Array::read / write) "
                       "(Python: object arrays of str/bytes)");
    return *spec.heap;
  }
  std::string name_;
  bool utf8_;
};

}  // namespace

bool is_valid_utf8(std::string_view s) { return valid_utf8(s); }

CodecEntry vlen_utf8_codec_entry() {
  CodecEntry e{"vlen-utf8", codec::Role::array_to_bytes};
  e.make_a2b = [](const Json& cfg, const ChunkSpec& in) {
    return std::make_shared<VlenCodec>("vlen-utf8", true, cfg, in);
  };
  e.holds = DataType::string_t;
  return e;
}

CodecEntry vlen_bytes_codec_entry() {
  CodecEntry e{"vlen-bytes", codec::Role::array_to_bytes};
  e.make_a2b = [](const Json& cfg, const ChunkSpec& in) {
    return std::make_shared<VlenCodec>("vlen-bytes", false, cfg, in);
  };
  e.holds = DataType::bytes_t;
  return e;
}

}  // namespace zarrpp
