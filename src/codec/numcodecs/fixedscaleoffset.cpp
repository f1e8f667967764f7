// numcodecs.fixedscaleoffset: round((x - offset) * scale)
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

class FixedScaleOffset final : public ElementFilter {
 public:
  FixedScaleOffset(const Json& cfg, const ChunkSpec& in)
      : ElementFilter("numcodecs.fixedscaleoffset",
                      numcodecs_dtype("numcodecs.fixedscaleoffset", cfg, "dtype", in.dtype),
                      numcodecs_dtype("numcodecs.fixedscaleoffset", cfg, "astype",
                                      numcodecs_dtype("numcodecs.fixedscaleoffset", cfg, "dtype", in.dtype))) {
    allowed_keys(name_, cfg, {"dtype", "astype", "offset", "scale"});
    check_input(name_, dec_, in, cfg);
    offset_ = config_number(name_, cfg, "offset");
    scale_ = config_number(name_, cfg, "scale");
    if (scale_ == 0) config_fail(name_, "\"scale\" must not be 0", cfg);
    cfg_offset_ = cfg["offset"];
    cfg_scale_ = cfg["scale"];
  }
  CodecMetadata to_metadata() const override {
    return {
        name_,
        Json::object(
            {{"offset", cfg_offset_}, {"scale", cfg_scale_}, {"dtype", dtype_str(dec_)}, {"astype", dtype_str(enc_)}})};
  }

 private:
  // NumPy computes (x - offset) * scale in float32 for float32 arrays and in float64 otherwise.
  void run_encode(std::span<const std::uint8_t> in, std::span<std::uint8_t> out, std::size_t n) const override {
    visit_pair(dec_, enc_, [&](auto t, auto a) {
      using T = decltype(t);
      using A = decltype(a);
      using C = std::conditional_t<std::is_same_v<T, float>, float, double>;
      const T* x = as<T>(in);
      A* y = as<A>(out);
      for (std::size_t i = 0; i < n; ++i)
        y[i] = cast<A>(std::nearbyint((static_cast<C>(x[i]) - static_cast<C>(offset_)) * static_cast<C>(scale_)));
    });
  }
  void run_decode(std::span<const std::uint8_t> in, std::span<std::uint8_t> out, std::size_t n) const override {
    visit_pair(dec_, enc_, [&](auto t, auto a) {
      using T = decltype(t);
      using A = decltype(a);
      using C = std::conditional_t<std::is_same_v<A, float>, float, double>;
      const A* y = as<A>(in);
      T* x = as<T>(out);
      for (std::size_t i = 0; i < n; ++i)
        x[i] = cast<T>(static_cast<C>(y[i]) / static_cast<C>(scale_) + static_cast<C>(offset_));
    });
  }
  double offset_ = 0, scale_ = 1;
  Json cfg_offset_, cfg_scale_;
};

}  // namespace

CodecEntry fixedscaleoffset_entry() {
  return filter_entry("numcodecs.fixedscaleoffset",
                      [](const Json& cfg, const ChunkSpec& in) { return std::make_shared<FixedScaleOffset>(cfg, in); });
}

}  // namespace zarrpp::numcodecs
