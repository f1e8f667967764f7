// numcodecs.zlib: zlib streams (libdeflate)
#include <libdeflate.h>

#include <memory>
#include <string>

#include "entries.hpp"
#include "simple_b2b.hpp"

namespace zarrpp::numcodecs {
namespace {

class Zlib final : public SimpleB2B {
 public:
  explicit Zlib(const Json& cfg) : SimpleB2B("numcodecs.zlib") {
    allowed_keys(name_, cfg, {"level"});
    level_ = static_cast<int>(config_int(name_, cfg, "level", -1, 9, 1));
  }
  Bytes encode(std::span<const std::uint8_t> in) const override {
    std::unique_ptr<libdeflate_compressor, void (*)(libdeflate_compressor*)> c{
        libdeflate_alloc_compressor(level_ < 0 ? 6 : level_), libdeflate_free_compressor};
    if (!c) throw CodecError(name_ + ": cannot allocate a compressor");
    Bytes out(libdeflate_zlib_compress_bound(c.get(), in.size()));
    const std::size_t n = libdeflate_zlib_compress(c.get(), in.data(), in.size(), out.data(), out.size());
    if (n == 0) throw CodecError(name_ + ": compression failed");
    out.resize(n);
    return out;
  }
  Bytes decode(std::span<const std::uint8_t> in, std::size_t max_out) const override {
    std::unique_ptr<libdeflate_decompressor, void (*)(libdeflate_decompressor*)> d{libdeflate_alloc_decompressor(),
                                                                                   libdeflate_free_decompressor};
    Bytes out(max_out);
    std::size_t actual = 0;
    const auto r = libdeflate_zlib_decompress(d.get(), in.data(), in.size(), out.data(), out.size(), &actual);
    if (r == LIBDEFLATE_INSUFFICIENT_SPACE)
      decode_fail(name_, "decoded data is larger than the expected " + std::to_string(max_out) + " bytes");
    if (r != LIBDEFLATE_SUCCESS) decode_fail(name_, "corrupt or truncated zlib stream");
    out.resize(actual);
    return out;
  }
  std::size_t max_encoded_size(std::size_t in) const override { return in + in / 16 + 64 + 5 * (in / 65535 + 1) + 6; }
  CodecMetadata to_metadata() const override { return {name_, Json::object({{"level", level_}})}; }

 private:
  int level_;
};

// numcodecs' LZ4: the decoded size as 4 little-endian bytes, then one LZ4 block.

}  // namespace

CodecEntry zlib_entry() {
  return compressor_entry(
      "numcodecs.zlib", [](const Json& cfg, const ChunkSpec&) { return std::make_shared<Zlib>(cfg); }, {{"level", 1}},
      true);
}

}  // namespace zarrpp::numcodecs
