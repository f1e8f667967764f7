// numcodecs.quantize: keep `digits` decimal digits (lossy; decoding only casts)
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

class Quantize final : public ElementFilter {
 public:
  Quantize(const Json& cfg, const ChunkSpec& in)
      : ElementFilter("numcodecs.quantize", numcodecs_dtype("numcodecs.quantize", cfg, "dtype", in.dtype),
                      numcodecs_dtype("numcodecs.quantize", cfg, "astype",
                                      numcodecs_dtype("numcodecs.quantize", cfg, "dtype", in.dtype))) {
    allowed_keys(name_, cfg, {"digits", "dtype", "astype"});
    check_input(name_, dec_, in, cfg);
    if (dec_.kind() != DataKind::Float || enc_.kind() != DataKind::Float)
      config_fail(name_, "quantize works on float32 and float64 only", cfg);
    digits_ = config_int(name_, cfg, "digits", -300, 300, std::nullopt);
    // numcodecs: precision 10^-digits, rounded to a power of two.
    const double precision = std::pow(10.0, static_cast<double>(-digits_));
    double e = std::log10(precision);
    const int exp = e < 0 ? static_cast<int>(std::floor(e)) : static_cast<int>(std::ceil(e));
    const double bits = std::ceil(std::log2(std::pow(10.0, -exp)));
    scale_ = std::pow(2.0, bits);
  }
  CodecMetadata to_metadata() const override {
    return {name_, Json::object({{"digits", digits_}, {"dtype", dtype_str(dec_)}, {"astype", dtype_str(enc_)}})};
  }

 private:
  void run_encode(std::span<const std::uint8_t> in, std::span<std::uint8_t> out, std::size_t n) const override {
    visit_pair(dec_, enc_, [&](auto t, auto a) {
      using T = decltype(t);
      using A = decltype(a);
      const T* x = as<T>(in);
      A* y = as<A>(out);
      const T s = static_cast<T>(scale_);
      for (std::size_t i = 0; i < n; ++i) y[i] = cast<A>(static_cast<T>(std::nearbyint(s * x[i]) / s));
    });
  }
  void run_decode(std::span<const std::uint8_t> in, std::span<std::uint8_t> out, std::size_t n) const override {
    visit_pair(dec_, enc_, [&](auto t, auto a) {
      using T = decltype(t);
      using A = decltype(a);
      const A* y = as<A>(in);
      T* x = as<T>(out);
      for (std::size_t i = 0; i < n; ++i) x[i] = cast<T>(y[i]);
    });
  }
  std::int64_t digits_ = 0;
  double scale_ = 1;
};

}  // namespace

CodecEntry quantize_entry() {
  return filter_entry("numcodecs.quantize",
                      [](const Json& cfg, const ChunkSpec& in) { return std::make_shared<Quantize>(cfg, in); });
}

}  // namespace zarrpp::numcodecs
