// numcodecs.gzip, numcodecs.zstd and numcodecs.blosc: the native gzip, zstd and blosc codecs under
// their numcodecs names, with numcodecs' defaults and configuration keys.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "entries.hpp"

namespace zarrpp {
namespace numcodecs {
namespace {

// numcodecs' GZip and Zstd default to level 1 (zarr-python 3's gzip and zstd do not).
constexpr int kNumcodecsLevel = 1;

// A codec zarrpp has natively, under its numcodecs name: the configuration is translated and the
// native codec does the work (the bytes are the same).

CodecEntry alias(const std::string& name, const CodecEntry& native,
                 const std::function<Json(const Json&, const ChunkSpec&)>& translate) {
  CodecEntry e{name, native.role};
  // The same v2 compressor, its configuration already numcodecs' own.
  if (native.v2_compressor)
    e.v2_compressor = {native.v2_compressor->id, [](const Json& cfg, std::size_t) { return cfg; },
                       native.v2_compressor->to_v2};
  auto make = native.make_b2b;
  e.make_b2b = [name, make, translate](const Json& cfg, const ChunkSpec& in) {
    struct Named final : BytesToBytesCodec {
      std::shared_ptr<const BytesToBytesCodec> inner;
      std::string nm;
      Json cfg;
      std::string name() const override { return nm; }
      Bytes encode(std::span<const std::uint8_t> in) const override { return inner->encode(in); }
      Bytes decode(std::span<const std::uint8_t> in, std::size_t max_out) const override {
        return inner->decode(in, max_out);
      }
      void decode_into(std::span<const std::uint8_t> in, std::span<std::uint8_t> out) const override {
        inner->decode_into(in, out);
      }
      std::optional<std::size_t> encoded_size(std::size_t in) const override { return inner->encoded_size(in); }
      std::size_t max_encoded_size(std::size_t in) const override { return inner->max_encoded_size(in); }
      std::optional<std::size_t> max_input() const override { return inner->max_input(); }
      CodecMetadata to_metadata() const override { return {nm, cfg}; }
    };
    auto n = std::make_shared<Named>();
    n->inner = make(translate(cfg, in), in);
    n->nm = name;
    n->cfg = cfg;
    return std::shared_ptr<const BytesToBytesCodec>(n);
  };
  return e;
}

}  // namespace

void add_aliases(std::vector<CodecEntry>& out) {
  out.push_back(alias("numcodecs.gzip", gzip_codec_entry(), [](const Json& cfg, const ChunkSpec&) {
    allowed_keys("numcodecs.gzip", cfg, {"level"});
    return Json::object({{"level", cfg.value("level", Json(kNumcodecsLevel))}});
  }));
  out.back().shorthand = {{"level", kNumcodecsLevel}};
  out.push_back(alias("numcodecs.zstd", zstd_codec_entry(), [](const Json& cfg, const ChunkSpec&) {
    allowed_keys("numcodecs.zstd", cfg, {"level", "checksum"});
    Json c = Json::object({{"level", cfg.value("level", Json(kNumcodecsLevel))}});
    if (cfg.contains("checksum")) c["checksum"] = cfg["checksum"];
    return c;
  }));
  out.back().shorthand = {{"level", kNumcodecsLevel}, {"checksum", nullptr}};
  auto blosc = alias("numcodecs.blosc", blosc_codec_entry(),
                     [](const Json& cfg, const ChunkSpec& in) { return blosc_from_numcodecs(cfg, in.dtype.size()); });
  blosc.v2_compressor->to_v2 = [](const Json& cfg) {  // already numcodecs' keys (shuffle 0, 1 or 2)
    return Json::object({{"cname", cfg.value("cname", Json("lz4"))},
                         {"clevel", cfg.value("clevel", Json(5))},
                         {"shuffle", cfg.value("shuffle", Json(1))},
                         {"blocksize", cfg.value("blocksize", Json(0))}});
  };
  out.push_back(std::move(blosc));
}

}  // namespace numcodecs

// numcodecs' Blosc configuration ({cname, clevel, shuffle: -1|0|1|2, blocksize}) as the blosc
// codec's, for data of `in`'s element size (numcodecs uses the buffer's item size).
Json blosc_from_numcodecs(const Json& cfg, std::size_t itemsize) {
  allowed_keys("numcodecs.blosc", cfg, {"cname", "clevel", "shuffle", "blocksize", "typesize"});
  Json c = Json::object();
  c["cname"] = cfg.value("cname", Json("lz4"));
  c["clevel"] = cfg.value("clevel", Json(5));
  const Json s = cfg.value("shuffle", Json(1));
  if (!s.is_number_integer()) config_fail("numcodecs.blosc", "\"shuffle\" must be -1, 0, 1 or 2", cfg);
  const auto sv = s.get<std::int64_t>();
  const std::size_t ts =
      cfg.contains("typesize") && cfg["typesize"].is_number_integer() && cfg["typesize"].get<std::int64_t>() > 0
          ? cfg["typesize"].get<std::size_t>()
          : itemsize;
  if (sv == -1)
    c["shuffle"] = ts == 1 ? "bitshuffle" : "shuffle";
  else if (sv == 0)
    c["shuffle"] = "noshuffle";
  else if (sv == 1)
    c["shuffle"] = "shuffle";
  else if (sv == 2)
    c["shuffle"] = "bitshuffle";
  else
    config_fail("numcodecs.blosc", "\"shuffle\" must be -1, 0, 1 or 2", cfg);
  c["typesize"] = ts >= 1 && ts <= 255 ? ts : 1;
  c["blocksize"] = cfg.value("blocksize", Json(0));
  return c;
}

}  // namespace zarrpp
