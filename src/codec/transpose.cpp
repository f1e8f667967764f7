// `transpose` (array -> array): output dimension i is input dimension order[i].
#include "roles.hpp"

namespace zarrpp {
namespace {

const char* const kName = "transpose";

class TransposeCodecImpl final : public ArrayToArrayCodec {
 public:
  TransposeCodecImpl(const Json& cfg, const ChunkSpec& spec) {
    allowed_keys(kName, cfg, {"order"});
    if (!cfg.contains("order") || !cfg["order"].is_array())
      config_fail(kName, "\"order\" must be an array (a permutation of the dimensions)", cfg);
    const auto& o = cfg["order"];
    const std::size_t r = spec.shape.size();
    if (o.size() != r) config_fail(kName, "\"order\" needs " + std::to_string(r) + " entries", cfg);
    std::vector<bool> seen(r, false);
    for (const auto& e : o) {
      if (!e.is_number_integer()) config_fail(kName, "\"order\" entries must be integers", cfg);
      const auto v = e.get<std::int64_t>();
      if (v < 0 || static_cast<std::size_t>(v) >= r || seen[static_cast<std::size_t>(v)])
        config_fail(kName, "\"order\" is not a permutation of 0.." + std::to_string(r - 1), cfg);
      seen[static_cast<std::size_t>(v)] = true;
      order_.push_back(v);
    }
  }
  std::string name() const override { return kName; }
  ChunkSpec encoded_spec(const ChunkSpec& in) const override {
    ChunkSpec out = in;
    for (std::size_t i = 0; i < order_.size(); ++i) out.shape[i] = in.shape[static_cast<std::size_t>(order_[i])];
    return out;
  }
  Bytes encode(const ChunkSpec& in, std::span<const std::uint8_t> data) const override {
    const auto es = in.dtype.size();
    const auto in_strides = c_strides(in.shape, es);
    Shape pshape(order_.size());
    std::vector<std::int64_t> pstrides(order_.size());
    for (std::size_t i = 0; i < order_.size(); ++i) {
      pshape[i] = in.shape[static_cast<std::size_t>(order_[i])];
      pstrides[i] = in_strides[static_cast<std::size_t>(order_[i])];
    }
    Bytes out(data.size());
    copy_view(NDView(data.data(), in.dtype, pshape, pstrides), NDView::c_order(out.data(), in.dtype, pshape));
    return out;
  }
  void decode(const ChunkSpec& in, std::span<const std::uint8_t> data, std::span<std::uint8_t> out) const override {
    const auto es = in.dtype.size();
    const auto enc = encoded_spec(in);
    const auto enc_strides = c_strides(enc.shape, es);
    std::vector<std::int64_t> strides(order_.size());
    for (std::size_t i = 0; i < order_.size(); ++i) strides[static_cast<std::size_t>(order_[i])] = enc_strides[i];
    copy_view(NDView(data.data(), in.dtype, in.shape, strides), NDView::c_order(out.data(), in.dtype, in.shape));
  }
  CodecMetadata to_metadata() const override { return {kName, Json::object({{"order", order_}})}; }

 private:
  std::vector<std::int64_t> order_;
};

}  // namespace

CodecEntry transpose_codec_entry() {
  CodecEntry e{kName, codec::Role::array_to_array};
  e.make_a2a = [](const Json& cfg, const ChunkSpec& in) { return std::make_shared<TransposeCodecImpl>(cfg, in); };
  return e;
}

CodecMetadata codec::Transpose::to_metadata(const DataType&) const { return {kName, Json::object({{"order", order}})}; }

}  // namespace zarrpp
