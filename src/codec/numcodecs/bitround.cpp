// numcodecs.bitround: keep `keepbits` bits of a float's mantissa, rounding to nearest even
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "elements.hpp"
#include "entries.hpp"

namespace zarrpp::numcodecs {
namespace {

// Encoding rounds the bits of each float (as an integer of the same width); decoding is the
// identity. numcodecs 0.11 keeps 10, 23 and 52 mantissa bits at most for float16, 32 and 64.
class BitRound final : public ArrayToArrayCodec {
 public:
  BitRound(const Json& cfg, const ChunkSpec& in) : dtype_(in.dtype) {
    allowed_keys(kName, cfg, {"keepbits"});
    if (dtype_.kind() != DataKind::Float) config_fail(kName, "bitround works on float arrays only", cfg);
    // Too many bits is refused when encoding, as numcodecs does, so stored data still reads.
    keepbits_ = config_int(kName, cfg, "keepbits", 0, 64, std::nullopt);
  }
  std::string name() const override { return kName; }
  ChunkSpec encoded_spec(const ChunkSpec& in) const override { return in; }
  // The mantissa bits numcodecs 0.11 knows for a float type.
  static int mantissa_bits(const DataType& t) {
    return t == DataType::float16_t ? 10 : t == DataType::float32 ? 23 : 52;
  }
  Bytes encode(const ChunkSpec&, std::span<const std::uint8_t> data) const override {
    const int bits = mantissa_bits(dtype_);
    if (keepbits_ > bits)
      throw CodecError(std::string(kName) + ": keepbits " + std::to_string(keepbits_) + " is more than the " +
                       std::to_string(bits) + " mantissa bits of " + dtype_.name());
    Bytes out(data.begin(), data.end());
    if (keepbits_ == bits) return out;
    switch (dtype_.size()) {
      case 2:
        return round<std::uint16_t>(std::move(out), bits);
      case 4:
        return round<std::uint32_t>(std::move(out), bits);
      default:
        return round<std::uint64_t>(std::move(out), bits);
    }
  }
  void decode(const ChunkSpec&, std::span<const std::uint8_t> data, std::span<std::uint8_t> out) const override {
    if (data.size() != out.size()) decode_fail(kName, "expected " + std::to_string(out.size()) + " bytes");
    if (!data.empty()) std::memcpy(out.data(), data.data(), data.size());
  }
  CodecMetadata to_metadata() const override { return {kName, Json::object({{"keepbits", keepbits_}})}; }

 private:
  static constexpr const char* kName = "numcodecs.bitround";
  // numcodecs' integer arithmetic (wrapping), on the unsigned type of the same bits.
  template <class U>
  Bytes round(Bytes b, int bits) const {
    const int maskbits = bits - static_cast<int>(keepbits_);
    const U mask = static_cast<U>(~std::uint64_t{0} << maskbits);  // in 64 bits: no shift of a negative int
    const U half = static_cast<U>((U{1} << (maskbits - 1)) - 1);
    for (std::size_t i = 0; i + sizeof(U) <= b.size(); i += sizeof(U)) {
      U v;
      std::memcpy(&v, b.data() + i, sizeof v);
      v = static_cast<U>(v + ((v >> maskbits) & U{1}) + half);
      v = static_cast<U>(v & mask);
      std::memcpy(b.data() + i, &v, sizeof v);
    }
    return b;
  }
  DataType dtype_;
  std::int64_t keepbits_ = 0;
};

}  // namespace

CodecEntry bitround_entry() {
  auto e = filter_entry("numcodecs.bitround",
                        [](const Json& cfg, const ChunkSpec& in) { return std::make_shared<BitRound>(cfg, in); });
  // A new array's keepbits must fit its type (stored ones are read whatever they say).
  e.complete = [](const Json& cfg, const ChunkSpec& in) {
    const BitRound check(cfg, in);
    if (cfg.value("keepbits", 0) > BitRound::mantissa_bits(in.dtype))
      config_fail("numcodecs.bitround",
                  "keepbits is more than the " + std::to_string(BitRound::mantissa_bits(in.dtype)) +
                      " mantissa bits of " + in.dtype.name(),
                  cfg);
    return cfg;
  };
  return e;
}

}  // namespace zarrpp::numcodecs
