// numcodecs.lzma: xz/lzma streams (liblzma)
#include <lzma.h>

#include <limits>
#include <memory>
#include <string>

#include "entries.hpp"
#include "simple_b2b.hpp"

namespace zarrpp::numcodecs {
namespace {

class Lzma final : public SimpleB2B {
 public:
  explicit Lzma(const Json& cfg) : SimpleB2B("numcodecs.lzma") {
    allowed_keys(name_, cfg, {"format", "check", "preset", "filters"});
    const auto format = config_int(name_, cfg, "format", 0, 3, 1);
    if (format != 1)
      throw UnsupportedError(name_ + ": only the .xz format (\"format\": 1, numcodecs' default) is supported, got " +
                             cfg.dump());
    if (cfg.contains("filters") && !cfg["filters"].is_null())
      throw UnsupportedError(name_ + ": custom LZMA filter chains are not supported (\"filters\" must be null), got " +
                             cfg.dump());
    check_ = static_cast<int>(config_int(name_, cfg, "check", -1, 10, -1));
    if (check_ != -1 && check_ != 0 && check_ != 1 && check_ != 4 && check_ != 10)
      config_fail(name_, "\"check\" must be -1, 0 (none), 1 (CRC32), 4 (CRC64) or 10 (SHA-256)", cfg);
    if (cfg.contains("preset") && !cfg["preset"].is_null()) {
      if (!cfg["preset"].is_number_integer()) config_fail(name_, "\"preset\" must be an integer or null", cfg);
      const auto p = cfg["preset"].get<std::int64_t>();
      if ((p & ~static_cast<std::int64_t>(LZMA_PRESET_EXTREME)) < 0 ||
          (p & ~static_cast<std::int64_t>(LZMA_PRESET_EXTREME)) > 9)
        config_fail(name_, "\"preset\" must be 0..9 (optionally | the extreme flag)", cfg);
      preset_ = static_cast<std::uint32_t>(p);
      has_preset_ = true;
    }
  }
  Bytes encode(std::span<const std::uint8_t> in) const override {
    Bytes out(lzma_stream_buffer_bound(in.size()));
    std::size_t pos = 0;
    const lzma_check check = check_ == -1 ? LZMA_CHECK_CRC64 : static_cast<lzma_check>(check_);
    const auto r = lzma_easy_buffer_encode(has_preset_ ? preset_ : 6, check, nullptr, in.data(), in.size(), out.data(),
                                           &pos, out.size());
    if (r != LZMA_OK) throw CodecError(name_ + ": compression failed (" + std::to_string(static_cast<int>(r)) + ")");
    out.resize(pos);
    return out;
  }
  Bytes decode(std::span<const std::uint8_t> in, std::size_t max_out) const override {
    lzma_stream s = LZMA_STREAM_INIT;
    if (lzma_stream_decoder(&s, std::uint64_t{256} << 20,
                            LZMA_CONCATENATED) /* preset 9e needs ~65 MiB; a hostile header cannot claim more */
        != LZMA_OK)
      throw CodecError(name_ + ": cannot start decompression");
    Bytes out(max_out + 1);  // one byte more than allowed, to notice too much output
    s.next_in = in.data();
    s.avail_in = in.size();
    s.next_out = out.data();
    s.avail_out = out.size();
    lzma_ret r = lzma_code(&s, LZMA_FINISH);
    const std::size_t produced = out.size() - s.avail_out;
    lzma_end(&s);
    if (produced > max_out)
      decode_fail(name_, "decoded data is larger than the expected " + std::to_string(max_out) + " bytes");
    if (r != LZMA_STREAM_END) decode_fail(name_, "corrupt or truncated .xz stream");
    out.resize(produced);
    return out;
  }
  std::size_t max_encoded_size(std::size_t in) const override { return lzma_stream_buffer_bound(in); }
  CodecMetadata to_metadata() const override {
    Json j = Json::object({{"format", 1},
                           {"check", check_},
                           {"preset", has_preset_ ? Json(preset_) : Json(nullptr)},
                           {"filters", nullptr}});
    return {name_, j};
  }

 private:
  int check_ = -1;
  std::uint32_t preset_ = 6;
  bool has_preset_ = false;
};

// numcodecs' Shuffle: byte j of element i goes to j * count + i; a trailing partial element is
// refused as numcodecs does.

}  // namespace

CodecEntry lzma_entry() {
  return compressor_entry(
      "numcodecs.lzma", [](const Json& cfg, const ChunkSpec&) { return std::make_shared<Lzma>(cfg); },
      {{"preset", nullptr}}, true);
}

}  // namespace zarrpp::numcodecs
