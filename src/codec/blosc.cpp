// `blosc` (bytes -> bytes): Blosc 1 frames.
#include <blosc.h>

#include <algorithm>
#include <limits>
#include <memory>

#include "roles.hpp"

namespace zarrpp {
namespace {

const char* const kName = "blosc";

class BloscCodecImpl final : public BytesToBytesCodec {
 public:
  BloscCodecImpl(const Json& cfg, const DataType& dtype) {
    allowed_keys(kName, cfg, {"cname", "clevel", "shuffle", "typesize", "blocksize"});
    if (!cfg.contains("cname") || !cfg["cname"].is_string()) config_fail(kName, "\"cname\" must be a string", cfg);
    cname_ = cfg["cname"].get<std::string>();
    static const char* known[] = {"lz4", "lz4hc", "blosclz", "zstd", "snappy", "zlib"};
    if (std::none_of(std::begin(known), std::end(known), [&](const char* k) { return cname_ == k; }))
      config_fail(kName, "unknown \"cname\" \"" + cname_ + "\"", cfg);
    if (blosc_compname_to_compcode(cname_.c_str()) < 0)
      throw UnsupportedError(std::string("codec ") + kName + ": compressor \"" + cname_ +
                             "\" is not available in this Blosc build");
    clevel_ = static_cast<int>(config_int(kName, cfg, "clevel", 0, 9, std::nullopt));
    if (!cfg.contains("shuffle") || !cfg["shuffle"].is_string())
      config_fail(kName, "\"shuffle\" must be \"noshuffle\", \"shuffle\" or \"bitshuffle\"", cfg);
    const auto s = cfg["shuffle"].get<std::string>();
    if (s == "noshuffle")
      shuffle_ = BLOSC_NOSHUFFLE;
    else if (s == "shuffle")
      shuffle_ = BLOSC_SHUFFLE;
    else if (s == "bitshuffle")
      shuffle_ = BLOSC_BITSHUFFLE;
    else
      config_fail(kName, "\"shuffle\" must be \"noshuffle\", \"shuffle\" or \"bitshuffle\"", cfg);
    const std::int64_t def_ts = static_cast<std::int64_t>(std::min<std::size_t>(dtype.size(), 255));
    if (!cfg.contains("typesize") && shuffle_ != BLOSC_NOSHUFFLE)
      config_fail(kName, "\"typesize\" is required unless \"shuffle\" is \"noshuffle\"", cfg);
    // zarr-python 3 states an element's size even above 255 (U100: 400), which Blosc itself takes
    // as 1, as it does any typesize above its maximum.
    typesize_ = static_cast<int>(config_int(kName, cfg, "typesize", 1, std::numeric_limits<int>::max(), def_ts));
    blocksize_ = static_cast<int>(config_int(kName, cfg, "blocksize", 0, std::numeric_limits<int>::max(), 0));
  }
  std::string name() const override { return kName; }
  Bytes encode(std::span<const std::uint8_t> in) const override {
    if (in.size() > static_cast<std::size_t>(BLOSC_MAX_BUFFERSIZE))
      throw CodecError(std::string("codec ") + kName + ": a chunk of " + std::to_string(in.size()) +
                       " bytes exceeds Blosc's 2 GB limit");
    Bytes out(in.size() + BLOSC_MAX_OVERHEAD);
    const int n = blosc_compress_ctx(clevel_, shuffle_, static_cast<std::size_t>(typesize_), in.size(), in.data(),
                                     out.data(), out.size(), cname_.c_str(), static_cast<std::size_t>(blocksize_), 1);
    if (n <= 0) throw CodecError(std::string("codec ") + kName + ": compression failed (" + std::to_string(n) + ")");
    out.resize(static_cast<std::size_t>(n));
    return out;
  }
  Bytes decode(std::span<const std::uint8_t> in, std::size_t max_out) const override {
    const std::size_t n = validate(in, max_out);
    Bytes out(n);
    run(in, out);
    return out;
  }
  void decode_into(std::span<const std::uint8_t> in, std::span<std::uint8_t> out) const override {
    const std::size_t n = validate(in, out.size());
    if (n != out.size())
      decode_fail(kName, "frame holds " + std::to_string(n) + " bytes, expected " + std::to_string(out.size()));
    run(in, out);
  }
  std::optional<std::size_t> encoded_size(std::size_t) const override { return std::nullopt; }
  std::size_t max_encoded_size(std::size_t in) const override { return in + BLOSC_MAX_OVERHEAD; }
  std::optional<std::size_t> max_input() const override { return static_cast<std::size_t>(BLOSC_MAX_BUFFERSIZE); }
  CodecMetadata to_metadata() const override {
    const char* s = shuffle_ == BLOSC_NOSHUFFLE ? "noshuffle" : shuffle_ == BLOSC_SHUFFLE ? "shuffle" : "bitshuffle";
    return {kName, Json::object({{"cname", cname_},
                                 {"clevel", clevel_},
                                 {"shuffle", s},
                                 {"typesize", typesize_},
                                 {"blocksize", blocksize_}})};
  }

 private:
  static std::size_t validate(std::span<const std::uint8_t> in, std::size_t max_out) {
    std::size_t nbytes = 0;
    if (in.size() < BLOSC_MIN_HEADER_LENGTH || blosc_cbuffer_validate(in.data(), in.size(), &nbytes) < 0)
      decode_fail(kName, "corrupt or truncated Blosc frame");
    if (nbytes > max_out)
      decode_fail(kName, "frame declares " + std::to_string(nbytes) + " bytes, more than the expected " +
                             std::to_string(max_out));
    return nbytes;
  }
  static void run(std::span<const std::uint8_t> in, std::span<std::uint8_t> out) {
    const int n = blosc_decompress_ctx(in.data(), out.data(), out.size(), 1);
    if (n < 0 || static_cast<std::size_t>(n) != out.size()) decode_fail(kName, "corrupt Blosc frame");
  }
  std::string cname_;
  int clevel_ = 5, shuffle_ = BLOSC_SHUFFLE, typesize_ = 1, blocksize_ = 0;
};

// zarr-python's automatic choices: bit-shuffle for one-byte types, byte shuffle otherwise; the
// type size is the element's (capped at Blosc's 255).
const char* auto_shuffle(const DataType& t) { return t.size() == 1 ? "bitshuffle" : "shuffle"; }
int auto_typesize(const DataType& t) { return static_cast<int>(std::min<std::size_t>(t.size(), 255)); }

}  // namespace

namespace {
// The blosc configuration as numcodecs' Blosc states it (shuffle as 0, 1 or 2).
Json blosc_to_numcodecs(const Json& cfg) {
  const Json s = cfg.value("shuffle", Json("shuffle"));
  const int sh = s == "noshuffle" ? 0 : s == "bitshuffle" ? 2 : 1;
  return Json::object({{"cname", cfg.value("cname", Json("lz4"))},
                       {"clevel", cfg.value("clevel", Json(5))},
                       {"shuffle", sh},
                       {"blocksize", cfg.value("blocksize", Json(0))}});
}
}  // namespace

CodecEntry blosc_codec_entry() {
  CodecEntry e{kName, codec::Role::bytes_to_bytes};
  e.make_b2b = [](const Json& cfg, const ChunkSpec& in) { return std::make_shared<BloscCodecImpl>(cfg, in.dtype); };
  e.complete = [](const Json& cfg, const ChunkSpec& in) {
    Json c = cfg.is_object() ? cfg : Json::object();
    if (!c.contains("shuffle") || c["shuffle"].is_null() || c["shuffle"] == "auto")
      c["shuffle"] = auto_shuffle(in.dtype);
    if (!c.contains("typesize") || c["typesize"].is_null() || c["typesize"] == 0)
      c["typesize"] = auto_typesize(in.dtype);
    return c;
  };
  // shuffle and typesize: resolved from the data type by `complete`.
  e.shorthand = {{"cname", codec::defaults::blosc_cname},
                 {"clevel", codec::defaults::blosc_clevel},
                 {"shuffle", nullptr},
                 {"typesize", nullptr},
                 {"blocksize", codec::defaults::blosc_blocksize}};
  e.v2_compressor = {kName, blosc_from_numcodecs, blosc_to_numcodecs};
  return e;
}

CodecMetadata codec::Blosc::to_metadata(const DataType& dtype) const {
  Json j = Json::object();
  j["cname"] = cname;
  j["clevel"] = clevel;
  j["shuffle"] = shuffle == Shuffle::Auto         ? auto_shuffle(dtype)
                 : shuffle == Shuffle::NoShuffle  ? "noshuffle"
                 : shuffle == Shuffle::BitShuffle ? "bitshuffle"
                                                  : "shuffle";
  j["typesize"] = typesize > 0 ? typesize : auto_typesize(dtype);
  j["blocksize"] = blocksize;
  return {kName, j};
}

}  // namespace zarrpp
