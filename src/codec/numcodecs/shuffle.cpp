// numcodecs.shuffle: the bytes of each element grouped by their position
#include <string>

#include "entries.hpp"
#include "simple_b2b.hpp"

namespace zarrpp::numcodecs {
namespace {

class Shuffle final : public SimpleB2B {
 public:
  explicit Shuffle(const Json& cfg) : SimpleB2B("numcodecs.shuffle") {
    allowed_keys(name_, cfg, {"elementsize"});
    size_ = static_cast<std::size_t>(config_int(name_, cfg, "elementsize", 0, 1 << 20, 4));
  }
  Bytes encode(std::span<const std::uint8_t> in) const override {
    Bytes out(in.begin(), in.end());
    if (size_ <= 1) return out;
    if (in.size() % size_ != 0)
      throw CodecError(name_ + ": a buffer of " + std::to_string(in.size()) +
                       " bytes is not a multiple of the element size " + std::to_string(size_));
    const std::size_t count = in.size() / size_;
    for (std::size_t i = 0; i < count; ++i)
      for (std::size_t j = 0; j < size_; ++j) out[j * count + i] = in[i * size_ + j];
    return out;
  }
  Bytes decode(std::span<const std::uint8_t> in, std::size_t max_out) const override {
    if (in.size() > max_out)
      decode_fail(name_,
                  "holds " + std::to_string(in.size()) + " bytes, more than the expected " + std::to_string(max_out));
    Bytes out(in.begin(), in.end());
    if (size_ <= 1) return out;
    if (in.size() % size_ != 0)
      decode_fail(name_, "a buffer of " + std::to_string(in.size()) + " bytes is not a multiple of the element size");
    const std::size_t count = in.size() / size_;
    for (std::size_t i = 0; i < count; ++i)
      for (std::size_t j = 0; j < size_; ++j) out[i * size_ + j] = in[j * count + i];
    return out;
  }
  std::optional<std::size_t> encoded_size(std::size_t in) const override { return in; }
  std::size_t max_encoded_size(std::size_t in) const override { return in; }
  CodecMetadata to_metadata() const override { return {name_, Json::object({{"elementsize", size_}})}; }

 private:
  std::size_t size_ = 4;
};

}  // namespace

CodecEntry shuffle_entry() {
  return compressor_entry(
      "numcodecs.shuffle", [](const Json& cfg, const ChunkSpec&) { return std::make_shared<Shuffle>(cfg); },
      {{"elementsize", 4}}, false);
}

}  // namespace zarrpp::numcodecs
