// numcodecs.delta: each element minus the one before it (the first as it is)
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

class Delta final : public ElementFilter {
 public:
  Delta(const Json& cfg, const ChunkSpec& in)
      : ElementFilter("numcodecs.delta", numcodecs_dtype("numcodecs.delta", cfg, "dtype", in.dtype),
                      numcodecs_dtype("numcodecs.delta", cfg, "astype",
                                      numcodecs_dtype("numcodecs.delta", cfg, "dtype", in.dtype))) {
    allowed_keys(name_, cfg, {"dtype", "astype"});
    check_input(name_, dec_, in, cfg);
    if (dec_ == DataType::bool_t) config_fail(name_, "delta is not defined for bool", cfg);
  }
  CodecMetadata to_metadata() const override {
    return {name_, Json::object({{"dtype", dtype_str(dec_)}, {"astype", dtype_str(enc_)}})};
  }

 private:
  void run_encode(std::span<const std::uint8_t> in, std::span<std::uint8_t> out, std::size_t n) const override {
    visit_pair(dec_, enc_, [&](auto t, auto a) {
      using T = decltype(t);
      using A = decltype(a);
      const T* x = as<T>(in);
      A* y = as<A>(out);
      y[0] = cast<A>(x[0]);
      for (std::size_t i = 1; i < n; ++i) y[i] = cast<A>(sub<T>(x[i], x[i - 1]));
    });
  }
  void run_decode(std::span<const std::uint8_t> in, std::span<std::uint8_t> out, std::size_t n) const override {
    visit_pair(dec_, enc_, [&](auto t, auto a) {
      using T = decltype(t);
      using A = decltype(a);
      const A* y = as<A>(in);
      T* x = as<T>(out);
      if (n == 0) return;
      T acc = x[0] = cast<T>(y[0]);  // as NumPy's cumsum: the first as it is (-0.0 stays -0.0)
      for (std::size_t i = 1; i < n; ++i) x[i] = acc = add<T>(acc, cast<T>(y[i]));
    });
  }
};

}  // namespace

CodecEntry delta_entry() {
  return filter_entry("numcodecs.delta",
                      [](const Json& cfg, const ChunkSpec& in) { return std::make_shared<Delta>(cfg, in); });
}

}  // namespace zarrpp::numcodecs
