// `crc32c` (bytes -> bytes): appends the CRC32C (Castagnoli) of its input, little-endian, and
// verifies it on decode; computed by ISA-L.
#include <isa-l/crc.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "roles.hpp"

namespace zarrpp {
namespace {

const char* const kName = "crc32c";

std::uint32_t stored_crc(std::span<const std::uint8_t> trailer) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(trailer[static_cast<std::size_t>(i)]) << (8 * i);
  return v;
}

[[noreturn]] void mismatch(std::uint32_t stored, std::uint32_t computed) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "stored 0x%08x, computed 0x%08x", stored, computed);
  decode_fail(kName, std::string("checksum mismatch: ") + buf);
}

class Crc32cCheck final : public TrailerCheck {
 public:
  void update(std::span<const std::uint8_t> payload) override { state_ = crc32c_update(state_, payload); }
  void verify(std::span<const std::uint8_t> trailer) const override {
    if (trailer.size() != 4)
      decode_fail(kName, "the checksum trailer has " + std::to_string(trailer.size()) + " bytes, not 4");
    const std::uint32_t computed = crc32c_finish(state_);
    if (stored_crc(trailer) != computed) mismatch(stored_crc(trailer), computed);
  }

 private:
  std::uint32_t state_ = kCrc32cStart;
};

class Crc32cCodecImpl final : public BytesToBytesCodec {
 public:
  explicit Crc32cCodecImpl(const Json& cfg) { allowed_keys(kName, cfg, {}); }
  std::string name() const override { return kName; }
  Bytes encode(std::span<const std::uint8_t> in) const override {
    Bytes out(in.size() + 4);
    if (!in.empty()) std::memcpy(out.data(), in.data(), in.size());
    append(out, in.size(), crc32c(in));
    return out;
  }
  Bytes encode_owned(Bytes&& in) const override {
    const std::uint32_t c = crc32c(in);
    const std::size_t n = in.size();
    in.resize(n + 4);
    append(in, n, c);
    return std::move(in);
  }
  Bytes decode(std::span<const std::uint8_t> in, std::size_t max_out) const override {
    const auto payload = check(in);
    if (payload.size() > max_out) decode_fail(kName, "payload larger than expected");
    return Bytes(payload.begin(), payload.end());
  }
  std::optional<std::span<const std::uint8_t>> decode_view(std::span<const std::uint8_t> in) const override {
    return check(in);
  }
  void decode_into(std::span<const std::uint8_t> in, std::span<std::uint8_t> out) const override {
    const auto payload = check(in);
    if (payload.size() != out.size())
      decode_fail(kName,
                  "payload has " + std::to_string(payload.size()) + " bytes, expected " + std::to_string(out.size()));
    if (!payload.empty()) std::memcpy(out.data(), payload.data(), payload.size());
  }
  std::size_t trailer_size() const override { return 4; }
  std::unique_ptr<TrailerCheck> trailer_check() const override { return std::make_unique<Crc32cCheck>(); }
  std::optional<std::size_t> encoded_size(std::size_t in) const override { return in + 4; }
  std::size_t max_encoded_size(std::size_t in) const override { return in + 4; }
  CodecMetadata to_metadata() const override { return {kName, std::nullopt}; }

 private:
  static void append(Bytes& out, std::size_t at, std::uint32_t c) {
    for (int i = 0; i < 4; ++i) out[at + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(c >> (8 * i));
  }
  static std::span<const std::uint8_t> check(std::span<const std::uint8_t> in) {
    if (in.size() < 4)
      decode_fail(kName, "input of " + std::to_string(in.size()) + " bytes is too short for a checksum");
    const auto payload = in.first(in.size() - 4);
    const std::uint32_t stored = stored_crc(in.subspan(payload.size())), actual = crc32c(payload);
    if (stored != actual) mismatch(stored, actual);
    return payload;
  }
};

}  // namespace

std::uint32_t crc32c(std::span<const std::uint8_t> data) { return crc32c_finish(crc32c_update(kCrc32cStart, data)); }

std::uint32_t crc32c_update(std::uint32_t c, std::span<const std::uint8_t> data) {
  const std::uint8_t* p = data.data();
  std::size_t n = data.size();
  while (n > 0) {  // crc32_iscsi takes an int length
    const std::size_t step = std::min<std::size_t>(n, 1u << 30);
    c = crc32_iscsi(const_cast<std::uint8_t*>(p), static_cast<int>(step), c);
    p += step;
    n -= step;
  }
  return c;
}

CodecEntry crc32c_codec_entry() {
  CodecEntry e{kName, codec::Role::bytes_to_bytes};
  e.make_b2b = [](const Json& cfg, const ChunkSpec&) { return std::make_shared<Crc32cCodecImpl>(cfg); };
  return e;
}

CodecMetadata codec::Crc32c::to_metadata(const DataType&) const { return {kName, std::nullopt}; }

}  // namespace zarrpp
