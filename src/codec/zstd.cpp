// `zstd` (bytes -> bytes): Zstandard frames.
#include <zstd.h>

#include <memory>

#include "roles.hpp"

namespace zarrpp {
namespace {

const char* const kName = "zstd";

class ZstdCodecImpl final : public BytesToBytesCodec {
 public:
  explicit ZstdCodecImpl(const Json& cfg) {
    allowed_keys(kName, cfg, {"level", "checksum"});
    level_ = static_cast<int>(config_int(kName, cfg, "level", ZSTD_minCLevel(), ZSTD_maxCLevel(), 0));
    if (cfg.contains("checksum")) {
      if (!cfg["checksum"].is_boolean()) config_fail(kName, "\"checksum\" must be a boolean", cfg);
      checksum_ = cfg["checksum"].get<bool>();
    }
  }
  std::string name() const override { return kName; }
  Bytes encode(std::span<const std::uint8_t> in) const override {
    thread_local std::unique_ptr<ZSTD_CCtx, std::size_t (*)(ZSTD_CCtx*)> c{ZSTD_createCCtx(), ZSTD_freeCCtx};
    ZSTD_CCtx_reset(c.get(), ZSTD_reset_session_and_parameters);
    ZSTD_CCtx_setParameter(c.get(), ZSTD_c_compressionLevel, level_);
    ZSTD_CCtx_setParameter(c.get(), ZSTD_c_checksumFlag, checksum_ ? 1 : 0);
    Bytes out(ZSTD_compressBound(in.size()));
    const std::size_t n = ZSTD_compress2(c.get(), out.data(), out.size(), in.data(), in.size());
    if (ZSTD_isError(n))
      throw CodecError(std::string("codec ") + kName + ": compression failed: " + ZSTD_getErrorName(n));
    out.resize(n);
    return out;
  }
  Bytes decode(std::span<const std::uint8_t> in, std::size_t max_out) const override {
    const auto fcs = ZSTD_getFrameContentSize(in.data(), in.size());
    if (fcs == ZSTD_CONTENTSIZE_ERROR) decode_fail(kName, "not a zstd frame");
    std::size_t cap = max_out;
    if (fcs != ZSTD_CONTENTSIZE_UNKNOWN) {
      if (fcs > max_out)
        decode_fail(kName, "frame declares " + std::to_string(fcs) + " bytes, more than the expected " +
                               std::to_string(max_out));
      cap = static_cast<std::size_t>(fcs);
    }
    Bytes out(cap);
    out.resize(run(in, out));
    return out;
  }
  void decode_into(std::span<const std::uint8_t> in, std::span<std::uint8_t> out) const override {
    const auto fcs = ZSTD_getFrameContentSize(in.data(), in.size());
    if (fcs == ZSTD_CONTENTSIZE_ERROR) decode_fail(kName, "not a zstd frame");
    // (a stream may hold several frames, so the first frame's size may be smaller)
    if (fcs != ZSTD_CONTENTSIZE_UNKNOWN && fcs > out.size())
      decode_fail(kName, "frame declares " + std::to_string(fcs) + " bytes, expected " + std::to_string(out.size()));
    if (run(in, out) != out.size())
      decode_fail(kName, "decoded fewer bytes than the expected " + std::to_string(out.size()));
  }
  std::optional<std::size_t> encoded_size(std::size_t) const override { return std::nullopt; }
  std::size_t max_encoded_size(std::size_t in) const override { return ZSTD_compressBound(in); }
  CodecMetadata to_metadata() const override {
    return {kName, Json::object({{"level", level_}, {"checksum", checksum_}})};
  }

 private:
  static std::size_t run(std::span<const std::uint8_t> in, std::span<std::uint8_t> out) {
    thread_local std::unique_ptr<ZSTD_DCtx, std::size_t (*)(ZSTD_DCtx*)> d{ZSTD_createDCtx(), ZSTD_freeDCtx};
    const std::size_t n = ZSTD_decompressDCtx(d.get(), out.data(), out.size(), in.data(), in.size());
    if (ZSTD_isError(n)) decode_fail(kName, std::string("corrupt or oversized data: ") + ZSTD_getErrorName(n));
    return n;
  }
  int level_ = 0;
  bool checksum_ = false;
};

}  // namespace

namespace {
// numcodecs' Zstd (level 1 by default) as this codec's configuration, and back.
Json zstd_from_numcodecs(const Json& cfg, std::size_t) {
  allowed_keys("numcodecs.zstd", cfg, {"level", "checksum"});
  return Json::object({{"level", cfg.value("level", Json(1))}, {"checksum", cfg.value("checksum", Json(false))}});
}
Json zstd_to_numcodecs(const Json& cfg) {
  if (cfg.value("checksum", Json(false)) == Json(true))
    throw UnsupportedError(
        "codec zstd with \"checksum\": true has no Zarr v2 form in numcodecs 0.11 (use checksum false)");
  return Json::object({{"level", cfg.value("level", Json(codec::defaults::zstd_level))}});
}
}  // namespace

CodecEntry zstd_codec_entry() {
  CodecEntry e{kName, codec::Role::bytes_to_bytes};
  e.make_b2b = [](const Json& cfg, const ChunkSpec&) { return std::make_shared<ZstdCodecImpl>(cfg); };
  e.shorthand = {{"level", codec::defaults::zstd_level}, {"checksum", codec::defaults::zstd_checksum}};
  e.v2_compressor = {kName, zstd_from_numcodecs, zstd_to_numcodecs};
  return e;
}

CodecMetadata codec::Zstd::to_metadata(const DataType&) const {
  return {kName, Json::object({{"level", level}, {"checksum", checksum}})};
}

}  // namespace zarrpp
