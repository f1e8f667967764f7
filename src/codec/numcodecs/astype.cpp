// numcodecs.astype: stores the elements as another type
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

class AsType final : public ElementFilter {
 public:
  AsType(const Json& cfg, const ChunkSpec& in)
      : ElementFilter("numcodecs.astype", numcodecs_dtype("numcodecs.astype", cfg, "decode_dtype", in.dtype),
                      numcodecs_dtype("numcodecs.astype", cfg, "encode_dtype")) {
    allowed_keys(name_, cfg, {"encode_dtype", "decode_dtype"});
    check_input(name_, dec_, in, cfg);
  }
  CodecMetadata to_metadata() const override {
    return {name_, Json::object({{"encode_dtype", dtype_str(enc_)}, {"decode_dtype", dtype_str(dec_)}})};
  }

 private:
  void run_encode(std::span<const std::uint8_t> in, std::span<std::uint8_t> out, std::size_t n) const override {
    visit_pair(dec_, enc_, [&](auto t, auto a) {
      using T = decltype(t);
      using A = decltype(a);
      for (std::size_t i = 0; i < n; ++i) as<A>(out)[i] = cast<A>(as<T>(in)[i]);
    });
  }
  void run_decode(std::span<const std::uint8_t> in, std::span<std::uint8_t> out, std::size_t n) const override {
    visit_pair(dec_, enc_, [&](auto t, auto a) {
      using T = decltype(t);
      using A = decltype(a);
      for (std::size_t i = 0; i < n; ++i) as<T>(out)[i] = cast<T>(as<A>(in)[i]);
    });
  }
};

}  // namespace

CodecEntry astype_entry() {
  return filter_entry("numcodecs.astype",
                      [](const Json& cfg, const ChunkSpec& in) { return std::make_shared<AsType>(cfg, in); });
}

}  // namespace zarrpp::numcodecs
