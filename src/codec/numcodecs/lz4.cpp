// numcodecs.lz4: LZ4 blocks after numcodecs' 4-byte length
#include <lz4.h>

#include <limits>
#include <string>

#include "entries.hpp"
#include "simple_b2b.hpp"

namespace zarrpp::numcodecs {
namespace {

class Lz4 final : public SimpleB2B {
 public:
  explicit Lz4(const Json& cfg) : SimpleB2B("numcodecs.lz4") {
    allowed_keys(name_, cfg, {"acceleration"});
    accel_ = static_cast<int>(config_int(name_, cfg, "acceleration", std::numeric_limits<int>::min(), 65537, 1));
  }
  Bytes encode(std::span<const std::uint8_t> in) const override {
    if (in.size() > static_cast<std::size_t>(LZ4_MAX_INPUT_SIZE))
      throw CodecError(name_ + ": a chunk of " + std::to_string(in.size()) + " bytes exceeds LZ4's limit");
    const int bound = LZ4_compressBound(static_cast<int>(in.size()));
    Bytes out(4 + static_cast<std::size_t>(bound));
    const auto sz = static_cast<std::uint32_t>(in.size());
    for (int i = 0; i < 4; ++i) out[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(sz >> (8 * i));
    const int n = LZ4_compress_fast(reinterpret_cast<const char*>(in.data()), reinterpret_cast<char*>(out.data() + 4),
                                    static_cast<int>(in.size()), bound, accel_);
    if (n <= 0 && !in.empty()) throw CodecError(name_ + ": compression failed");
    out.resize(4 + static_cast<std::size_t>(std::max(n, 0)));
    return out;
  }
  Bytes decode(std::span<const std::uint8_t> in, std::size_t max_out) const override {
    if (in.size() < 4) decode_fail(name_, "truncated: no size header");
    std::uint32_t sz = 0;
    for (int i = 0; i < 4; ++i) sz |= static_cast<std::uint32_t>(in[static_cast<std::size_t>(i)]) << (8 * i);
    if (sz > max_out)
      decode_fail(
          name_, "header declares " + std::to_string(sz) + " bytes, more than the expected " + std::to_string(max_out));
    Bytes out(sz);
    if (sz == 0) return out;
    const int n = LZ4_decompress_safe(reinterpret_cast<const char*>(in.data() + 4), reinterpret_cast<char*>(out.data()),
                                      static_cast<int>(in.size() - 4), static_cast<int>(sz));
    if (n < 0 || static_cast<std::uint32_t>(n) != sz) decode_fail(name_, "corrupt or truncated LZ4 block");
    return out;
  }
  std::size_t max_encoded_size(std::size_t in) const override { return 4 + in + in / 255 + 16; }
  std::optional<std::size_t> max_input() const override { return static_cast<std::size_t>(LZ4_MAX_INPUT_SIZE); }
  CodecMetadata to_metadata() const override { return {name_, Json::object({{"acceleration", accel_}})}; }

 private:
  int accel_;
};

}  // namespace

CodecEntry lz4_entry() {
  return compressor_entry(
      "numcodecs.lz4", [](const Json& cfg, const ChunkSpec&) { return std::make_shared<Lz4>(cfg); },
      {{"acceleration", 1}}, true);
}

}  // namespace zarrpp::numcodecs
