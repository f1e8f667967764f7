// numcodecs.categorize: text to the 1-based index of its label (0: the empty text)
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

// numcodecs' Categorize(labels, dtype, astype): an object array of str ("|O", zarrpp's string) or
// NumPy U<n> text becomes integers of `astype`, label k as k + 1 and anything else as 0, which
// decodes as "". Decoding reproduces numcodecs (0 and unknown numbers give "", a label longer
// than U<n> is cut to n characters, as NumPy assigns it); encoding refuses text that is neither
// a label nor "", which numcodecs would store as 0 and read back as "". The fill value is stored as
// numcodecs stores it (0 unless it is a label), so elements of a new chunk that were never
// written read "" once the chunk is stored, in zarr-python 2 as here.
class Categorize final : public ArrayToArrayCodec {
 public:
  Categorize(const Json& cfg, const ChunkSpec& in) : in_(in.dtype) {
    allowed_keys(kName, cfg, {"labels", "dtype", "astype"});
    if (!(in_ == DataType::string_t) && in_.id() != DataType::Id::fixed_utf32)
      config_fail(kName, "categorize works on str (object) and U<n> arrays only, not " + in_.name(), cfg);
    if (!cfg.contains("labels") || !cfg["labels"].is_array())
      config_fail(kName, "\"labels\" must be a list of strings", cfg);
    for (const auto& l : cfg["labels"]) {
      if (!l.is_string()) config_fail(kName, "\"labels\" must be a list of strings", cfg);
      labels_.push_back(l.get<std::string>());
    }
    dtype_ = cfg.value("dtype", Json(in_ == DataType::string_t ? "|O" : v2_text_dtype()));
    if (!dtype_.is_string() || !dtype_matches(dtype_.get<std::string>()))
      config_fail(
          kName,
          "\"dtype\" must be the array's own (" + std::string(in_ == DataType::string_t ? "|O" : v2_text_dtype()) + ")",
          cfg);
    out_ = numcodecs_dtype(kName, cfg, "astype", DataType::uint8);
    astype_ = cfg.value("astype", Json("|u1"));
    if (out_.kind() != DataKind::Int && out_.kind() != DataKind::UInt)
      config_fail(kName, "\"astype\" must be an integer type", cfg);
    const int bits = static_cast<int>(out_.size() * 8) - (out_.kind() == DataKind::Int ? 1 : 0);
    if (bits < 63 && labels_.size() >= (std::uint64_t{1} << bits))
      config_fail(kName, std::to_string(labels_.size()) + " labels do not fit " + out_.name(), cfg);
    if (in_.id() == DataType::Id::fixed_utf32)
      for (const auto& l : labels_) wide_.push_back(to_utf32(l));
  }
  std::string name() const override { return kName; }
  ChunkSpec encoded_spec(const ChunkSpec& in) const override {
    return ChunkSpec{in.shape, out_, Bytes(out_.size(), 0), in.heap};
  }
  Bytes encode(const ChunkSpec& in, std::span<const std::uint8_t> data) const override {
    const std::size_t n = data.size() / in_.size();
    Bytes out(n * out_.size(), 0);
    const auto put = [&](std::size_t i, std::uint64_t id) {
      for (std::size_t k = 0; k < out_.size(); ++k) out[i * out_.size() + k] = static_cast<std::uint8_t>(id >> (8 * k));
    };
    if (in_ == DataType::string_t) {
      std::vector<std::uint64_t> idx(n);
      if (n) std::memcpy(idx.data(), data.data(), n * 8);
      const auto items = heap_of(in).get(idx);
      for (std::size_t i = 0; i < n; ++i) put(i, idx[i] == 0 ? id_of_fill_text(*items[i]) : id_of(*items[i]));
    } else {
      for (std::size_t i = 0; i < n; ++i) {
        const auto elem = data.subspan(i * in_.size(), in_.size());
        const bool fill =
            in.fill_value.size() == elem.size() && std::equal(elem.begin(), elem.end(), in.fill_value.begin());
        put(i, fill ? id_of_fill(elem) : id_of_wide(elem));
      }
    }
    return out;
  }
  void decode(const ChunkSpec& in, std::span<const std::uint8_t> data, std::span<std::uint8_t> out) const override {
    const std::size_t n = out.size() / in_.size();
    if (data.size() != n * out_.size())
      decode_fail(kName, "expected " + std::to_string(n * out_.size()) + " bytes, got " + std::to_string(data.size()));
    std::vector<std::size_t> ids(n);
    for (std::size_t i = 0; i < n; ++i) {
      std::uint64_t v = 0;
      for (std::size_t k = 0; k < out_.size(); ++k) v |= std::uint64_t{data[i * out_.size() + k]} << (8 * k);
      ids[i] = v >= 1 && v <= labels_.size() ? static_cast<std::size_t>(v) : 0;  // numcodecs: "" otherwise
    }
    if (in_ == DataType::string_t) {
      std::vector<std::string> items;
      items.reserve(n);
      for (const auto id : ids) items.push_back(id ? labels_[id - 1] : std::string());
      const std::uint64_t first = heap_of(in).add(std::move(items));
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t v = first + i;
        std::memcpy(out.data() + 8 * i, &v, 8);
      }
    } else {
      std::fill(out.begin(), out.end(), std::uint8_t{0});
      for (std::size_t i = 0; i < n; ++i)
        if (ids[i]) {
          const auto& w = wide_[ids[i] - 1];
          std::memcpy(out.data() + i * in_.size(), w.data(), std::min(w.size() * 4, in_.size()));
        }
    }
  }
  CodecMetadata to_metadata() const override {
    return {kName, Json::object({{"labels", labels_}, {"dtype", dtype_}, {"astype", astype_}})};
  }

 private:
  static constexpr const char* kName = "numcodecs.categorize";
  std::string v2_text_dtype() const { return "<U" + std::to_string(in_.size() / 4); }
  bool dtype_matches(const std::string& d) const {
    if (in_ == DataType::string_t) return d == "|O";
    return d.size() > 2 && (d[0] == '<' || d[0] == '>') && d.substr(1) == v2_text_dtype().substr(1);
  }
  static std::vector<std::uint32_t> to_utf32(const std::string& s) {
    std::vector<std::uint32_t> w;
    for (std::size_t i = 0; i < s.size();) {
      std::uint32_t cp = static_cast<unsigned char>(s[i]);
      const std::size_t len = cp < 0x80 ? 1 : decode_utf8(s, i, cp, true);
      if (len == 0) throw CodecError(std::string(kName) + ": a label is not valid UTF-8");
      i += len;
      w.push_back(cp);
    }
    return w;
  }
  VlenHeap& heap_of(const ChunkSpec& in) const {
    if (!in.heap) throw CodecError(std::string(kName) + ": str elements are read and written through a heap");
    return *in.heap;
  }
  // A label given twice: numcodecs' last assignment wins.
  std::uint64_t id_of(const std::string& text) const {
    for (std::size_t k = labels_.size(); k-- > 0;)
      if (labels_[k] == text) return k + 1;
    if (text.empty()) return 0;
    refuse(text);
  }
  std::uint64_t id_of_wide(std::span<const std::uint8_t> elem) const {
    std::size_t len = elem.size() / 4;
    const auto cp = [&](std::size_t j) {
      std::uint32_t c;
      std::memcpy(&c, elem.data() + 4 * j, 4);
      return c;
    };
    while (len > 0 && cp(len - 1) == 0) --len;
    for (std::size_t k = wide_.size(); k-- > 0;) {
      const auto& w = wide_[k];
      if (w.size() != len) continue;
      bool same = true;
      for (std::size_t j = 0; j < len && same; ++j) same = cp(j) == w[j];
      if (same) return k + 1;
    }
    if (len == 0) return 0;
    std::string text;
    for (std::size_t j = 0; j < len; ++j) append_utf8(text, cp(j));
    refuse(text);
  }
  // An element holding the fill value (zarr-python 2's default "0" for U<n>): its label's number,
  // else 0 as numcodecs stores it (elements of a chunk nobody wrote read "" once it is stored).
  std::uint64_t id_of_fill_text(const std::string& text) const {
    try {
      return id_of(text);
    } catch (const CodecError&) {
      return 0;
    }
  }
  std::uint64_t id_of_fill(std::span<const std::uint8_t> elem) const {
    try {
      return id_of_wide(elem);
    } catch (const CodecError&) {
      return 0;
    }
  }
  [[noreturn]] static void refuse(const std::string& text) {
    throw CodecError(std::string(kName) + ": \"" + text.substr(0, 80) +
                     "\" is not one of the filter's labels (numcodecs would store it as 0, which reads back as \"\")");
  }
  DataType in_;
  DataType out_ = DataType::uint8;
  std::vector<std::string> labels_;
  std::vector<std::vector<std::uint32_t>> wide_;
  Json dtype_, astype_;
};

}  // namespace

CodecEntry categorize_entry() {
  return filter_entry("numcodecs.categorize",
                      [](const Json& cfg, const ChunkSpec& in) { return std::make_shared<Categorize>(cfg, in); });
}

}  // namespace zarrpp::numcodecs
