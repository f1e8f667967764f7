// numcodecs.packbits: one bit per element, after a byte counting the padding bits
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

// numcodecs packs the elements' truth values (nonzero: 1) most significant bit first, as
// np.packbits; decoding gives 0 or 1 per element. For one-byte types (bool, int8, uint8) only:
// numcodecs packs every byte of wider ones, which no data type of zarrpp's reads back.
class PackBits final : public ArrayToArrayCodec {
 public:
  PackBits(const Json& cfg, const ChunkSpec& in) {
    allowed_keys(kName, cfg, {});
    if (in.dtype.size() != 1 || in.dtype.kind() == DataKind::Raw)
      config_fail(kName, "packbits works on bool, int8 and uint8 arrays only, not " + in.dtype.name(), cfg);
  }
  std::string name() const override { return kName; }
  ChunkSpec encoded_spec(const ChunkSpec& in) const override {
    const auto n = static_cast<std::int64_t>(in.num_elements());
    return ChunkSpec{{1 + (n + 7) / 8}, DataType::uint8, Bytes{0}, in.heap};
  }
  Bytes encode(const ChunkSpec&, std::span<const std::uint8_t> data) const override {
    const std::size_t n = data.size();
    Bytes out(1 + (n + 7) / 8, 0);
    out[0] = static_cast<std::uint8_t>((8 - n % 8) % 8);
    for (std::size_t i = 0; i < n; ++i)
      if (data[i]) out[1 + i / 8] = static_cast<std::uint8_t>(out[1 + i / 8] | (0x80u >> (i % 8)));
    return out;
  }
  void decode(const ChunkSpec&, std::span<const std::uint8_t> data, std::span<std::uint8_t> out) const override {
    const std::size_t n = out.size();
    if (data.size() != 1 + (n + 7) / 8 || data[0] != (8 - n % 8) % 8)
      decode_fail(kName, "expected " + std::to_string(1 + (n + 7) / 8) + " bytes with " +
                             std::to_string((8 - n % 8) % 8) + " padding bits for " + std::to_string(n) +
                             " elements, got " + std::to_string(data.size()) + " bytes" +
                             (data.empty() ? std::string() : " with " + std::to_string(data[0])));
    for (std::size_t i = 0; i < n; ++i) out[i] = (data[1 + i / 8] >> (7 - i % 8)) & 1u;
  }
  CodecMetadata to_metadata() const override { return {kName, Json::object()}; }

 private:
  static constexpr const char* kName = "numcodecs.packbits";
};

}  // namespace

CodecEntry packbits_entry() {
  return filter_entry("numcodecs.packbits",
                      [](const Json& cfg, const ChunkSpec& in) { return std::make_shared<PackBits>(cfg, in); });
}

}  // namespace zarrpp::numcodecs
