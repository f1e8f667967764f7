// `bytes` (array -> bytes): the chunk's elements in C order, in either byte order.
#include <algorithm>
#include <cstring>

#include "roles.hpp"
#include "zarrpp/core/warning.hpp"

namespace zarrpp {
namespace {

const char* const kName = "bytes";

// As zarr-python 3 writes it: no configuration for a type without byte order (one-byte numbers,
// bool, S<n>, V<n>, a struct of such fields), unless big-endian was asked for.
CodecMetadata stated(bool big, bool one_byte) {
  if (one_byte && !big) return CodecMetadata{kName};
  return {kName, Json::object({{"endian", big ? "big" : "little"}})};
}

class BytesCodecImpl final : public ArrayToBytesCodec {
 public:
  BytesCodecImpl(const Json& cfg, const ChunkSpec& spec) : one_byte_(spec.dtype.component_size() <= 1) {
    allowed_keys(kName, cfg, {"endian"});
    if (spec.dtype.is_vlen())
      config_fail(kName,
                  "cannot store the variable-length data type " + spec.dtype.name() + " (use " +
                      (spec.dtype == DataType::string_t ? "vlen-utf8" : "vlen-bytes") + ")",
                  cfg);
    if (cfg.contains("endian")) {
      const auto& e = cfg["endian"];
      if (e == "little")
        big_ = false;
      else if (e == "big")
        big_ = true;
      else
        config_fail(kName, "\"endian\" must be \"little\" or \"big\"", cfg);
    } else if (spec.dtype.component_size() > 1 && spec.dtype.kind() == DataKind::Struct) {
      // Arrays written before the struct extension said so: little-endian, as it tells readers
      // to take them (and to say so).
      warn("bytes codec: no \"endian\" for the structured data type " + spec.dtype.name() +
           " with multi-byte fields; taken as little-endian, as the struct extension says for such arrays");
    } else if (spec.dtype.component_size() > 1) {
      config_fail(kName, "\"endian\" is required for data type " + spec.dtype.name(), cfg);
    }
  }
  std::string name() const override { return kName; }
  Bytes encode(const ChunkSpec& spec, std::span<const std::uint8_t> data) const override {
    Bytes out(data.begin(), data.end());
    if (big_) spec.dtype.swap_byte_order(out);
    return out;
  }
  void decode(const ChunkSpec& spec, std::span<const std::uint8_t> enc, std::span<std::uint8_t> out) const override {
    if (enc.size() != out.size())
      decode_fail(kName, "expected " + std::to_string(out.size()) + " bytes for a chunk of shape " +
                             shape_str(spec.shape) + " and data type " + spec.dtype.name() + ", got " +
                             std::to_string(enc.size()));
    if (!out.empty() && enc.data() != out.data()) std::memcpy(out.data(), enc.data(), out.size());
    if (big_) spec.dtype.swap_byte_order(out);
  }
  std::optional<std::size_t> encoded_size(const ChunkSpec& spec) const override { return spec.nbytes(); }
  std::size_t max_encoded_size(const ChunkSpec& spec) const override { return spec.nbytes(); }
  CodecMetadata to_metadata() const override { return stated(big_, one_byte_); }
  bool native_identity() const override { return !big_; }

 private:
  bool one_byte_;
  bool big_ = false;
};

}  // namespace

CodecEntry bytes_codec_entry() {
  CodecEntry e{kName, codec::Role::array_to_bytes};
  e.make_a2b = [](const Json& cfg, const ChunkSpec& in) { return std::make_shared<BytesCodecImpl>(cfg, in); };
  e.complete = [](const Json& cfg, const ChunkSpec& in) {
    Json c = cfg.is_object() ? cfg : Json::object();
    if (!c.contains("endian") && in.dtype.component_size() > 1) c["endian"] = "little";
    return c;
  };
  e.shorthand = {{"endian", nullptr}};  // `complete`: little, and none for 1-byte types
  return e;
}

CodecMetadata codec::BytesCodec::to_metadata(const DataType& dtype) const {
  return stated(endian == Endian::big, dtype.component_size() <= 1);
}

}  // namespace zarrpp
