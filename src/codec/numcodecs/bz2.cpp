// numcodecs.bz2: bzip2 streams
#include <bzlib.h>

#include <limits>
#include <memory>
#include <string>

#include "entries.hpp"
#include "simple_b2b.hpp"

namespace zarrpp::numcodecs {
namespace {

class Bz2 final : public SimpleB2B {
 public:
  explicit Bz2(const Json& cfg) : SimpleB2B("numcodecs.bz2") {
    allowed_keys(name_, cfg, {"level"});
    level_ = static_cast<int>(config_int(name_, cfg, "level", 1, 9, 1));
  }
  Bytes encode(std::span<const std::uint8_t> in) const override {
    if (in.size() > 0x7fffffffu) throw CodecError(name_ + ": a chunk over 2 GB cannot be compressed");
    unsigned int n = static_cast<unsigned int>(in.size() + in.size() / 100 + 600);
    Bytes out(n);
    const int r = BZ2_bzBuffToBuffCompress(reinterpret_cast<char*>(out.data()), &n,
                                           const_cast<char*>(reinterpret_cast<const char*>(in.data())),
                                           static_cast<unsigned int>(in.size()), level_, 0, 0);
    if (r != BZ_OK) throw CodecError(name_ + ": compression failed (" + std::to_string(r) + ")");
    out.resize(n);
    return out;
  }
  Bytes decode(std::span<const std::uint8_t> in, std::size_t max_out) const override {
    Bytes out(max_out);
    std::size_t in_off = 0, out_off = 0;
    // Python's bz2.decompress accepts several streams back to back.
    while (in_off < in.size()) {
      bz_stream s{};
      if (BZ2_bzDecompressInit(&s, 0, 0) != BZ_OK) throw CodecError(name_ + ": cannot start decompression");
      s.next_in = const_cast<char*>(reinterpret_cast<const char*>(in.data() + in_off));
      s.avail_in = static_cast<unsigned int>(std::min<std::size_t>(in.size() - in_off, 0x7fffffffu));
      int r = BZ_OK;
      for (;;) {
        s.next_out = reinterpret_cast<char*>(out.data() + out_off);
        const std::size_t room = std::min<std::size_t>(max_out - out_off, 0x7fffffffu);
        s.avail_out = static_cast<unsigned int>(room);
        r = BZ2_bzDecompress(&s);
        out_off += room - s.avail_out;
        if (r != BZ_OK) break;
        if (s.avail_out != 0 && s.avail_in == 0) break;  // truncated
        if (out_off == max_out) {
          // Room is used up: anything more is too much.
          char probe;
          s.next_out = &probe;
          s.avail_out = 1;
          r = BZ2_bzDecompress(&s);
          if (s.avail_out == 0) {
            BZ2_bzDecompressEnd(&s);
            decode_fail(name_, "decoded data is larger than the expected " + std::to_string(max_out) + " bytes");
          }
          break;
        }
      }
      const std::size_t used =
          static_cast<std::size_t>(reinterpret_cast<const std::uint8_t*>(s.next_in) - (in.data() + in_off));
      BZ2_bzDecompressEnd(&s);
      if (r != BZ_STREAM_END) decode_fail(name_, "corrupt or truncated bzip2 stream");
      in_off += used;
    }
    out.resize(out_off);
    return out;
  }
  std::size_t max_encoded_size(std::size_t in) const override { return in + in / 100 + 600; }
  std::optional<std::size_t> max_input() const override { return 0x7fffffffu; }
  CodecMetadata to_metadata() const override { return {name_, Json::object({{"level", level_}})}; }

 private:
  int level_;
};

// numcodecs' LZMA with its defaults: the .xz container (format 1), CRC64 check, preset 6.

}  // namespace

CodecEntry bz2_entry() {
  return compressor_entry(
      "numcodecs.bz2", [](const Json& cfg, const ChunkSpec&) { return std::make_shared<Bz2>(cfg); }, {{"level", 1}},
      true);
}

}  // namespace zarrpp::numcodecs
