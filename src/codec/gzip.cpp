// `gzip` (bytes -> bytes): RFC 1952, through libdeflate.
#include <libdeflate.h>

#include <memory>

#include "roles.hpp"

namespace zarrpp {
namespace {

const char* const kName = "gzip";

class GzipCodecImpl final : public BytesToBytesCodec {
 public:
  explicit GzipCodecImpl(const Json& cfg) {
    allowed_keys(kName, cfg, {"level"});
    level_ = static_cast<int>(config_int(kName, cfg, "level", 0, 9, std::nullopt));
  }
  std::string name() const override { return kName; }
  Bytes encode(std::span<const std::uint8_t> in) const override {
    thread_local std::unique_ptr<libdeflate_compressor, void (*)(libdeflate_compressor*)> comp[10] = {
        {nullptr, libdeflate_free_compressor}, {nullptr, libdeflate_free_compressor},
        {nullptr, libdeflate_free_compressor}, {nullptr, libdeflate_free_compressor},
        {nullptr, libdeflate_free_compressor}, {nullptr, libdeflate_free_compressor},
        {nullptr, libdeflate_free_compressor}, {nullptr, libdeflate_free_compressor},
        {nullptr, libdeflate_free_compressor}, {nullptr, libdeflate_free_compressor}};
    auto& c = comp[level_];
    if (!c) c.reset(libdeflate_alloc_compressor(level_));
    if (!c) throw CodecError(std::string("codec ") + kName + ": cannot allocate a compressor");
    Bytes out(libdeflate_gzip_compress_bound(c.get(), in.size()));
    const std::size_t n = libdeflate_gzip_compress(c.get(), in.data(), in.size(), out.data(), out.size());
    if (n == 0) throw CodecError(std::string("codec ") + kName + ": compression failed");
    out.resize(n);
    return out;
  }
  Bytes decode(std::span<const std::uint8_t> in, std::size_t max_out) const override {
    const std::size_t cap = max_out;
    Bytes out(cap);
    std::size_t n = run(in, out);
    out.resize(n);
    return out;
  }
  void decode_into(std::span<const std::uint8_t> in, std::span<std::uint8_t> out) const override {
    if (run(in, out) != out.size())
      decode_fail(kName, "decoded " + std::string("fewer bytes than the expected ") + std::to_string(out.size()));
  }
  std::optional<std::size_t> encoded_size(std::size_t) const override { return std::nullopt; }
  std::size_t max_encoded_size(std::size_t in) const override { return in + in / 16 + 64 + 5 * (in / 65535 + 1) + 18; }
  CodecMetadata to_metadata() const override { return {kName, Json::object({{"level", level_}})}; }

 private:
  static std::size_t run(std::span<const std::uint8_t> in, std::span<std::uint8_t> out) {
    thread_local std::unique_ptr<libdeflate_decompressor, void (*)(libdeflate_decompressor*)> d{
        libdeflate_alloc_decompressor(), libdeflate_free_decompressor};
    if (!d) throw CodecError(std::string("codec ") + kName + ": cannot allocate a decompressor");
    // RFC 1952 allows several members back to back; their outputs concatenate.
    std::size_t in_off = 0, out_off = 0;
    do {
      std::size_t actual = 0, used = 0;
      const auto r = libdeflate_gzip_decompress_ex(d.get(), in.data() + in_off, in.size() - in_off,
                                                   out.data() + out_off, out.size() - out_off, &used, &actual);
      if (r == LIBDEFLATE_INSUFFICIENT_SPACE)
        decode_fail(kName, "decoded data is larger than the expected " + std::to_string(out.size()) + " bytes");
      if (r != LIBDEFLATE_SUCCESS) decode_fail(kName, "corrupt or truncated gzip stream");
      in_off += used;
      out_off += actual;
    } while (in_off < in.size());
    const std::size_t actual = out_off;
    return actual;
  }
  int level_;
};

}  // namespace

namespace {
// numcodecs' GZip (level 1 by default) as this codec's configuration, and back.
Json gzip_from_numcodecs(const Json& cfg, std::size_t) {
  allowed_keys("numcodecs.gzip", cfg, {"level"});
  return Json::object({{"level", cfg.value("level", Json(1))}});
}
Json gzip_to_numcodecs(const Json& cfg) {
  return Json::object({{"level", cfg.value("level", Json(codec::defaults::gzip_level))}});
}
}  // namespace

CodecEntry gzip_codec_entry() {
  CodecEntry e{kName, codec::Role::bytes_to_bytes};
  e.make_b2b = [](const Json& cfg, const ChunkSpec&) { return std::make_shared<GzipCodecImpl>(cfg); };
  e.shorthand = {{"level", codec::defaults::gzip_level}};
  e.v2_compressor = {kName, gzip_from_numcodecs, gzip_to_numcodecs};
  return e;
}

CodecMetadata codec::Gzip::to_metadata(const DataType&) const { return {kName, Json::object({{"level", level}})}; }

}  // namespace zarrpp
