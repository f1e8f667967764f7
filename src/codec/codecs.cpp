// The core codecs and the pipeline that chains them.
#include <blosc.h>
#include <isa-l/crc.h>
#include <libdeflate.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "codec_impl.hpp"
#include "zarrpp/core/checked.hpp"

namespace zarrpp {
namespace {

[[noreturn]] void cfg_fail(const std::string& codec, const std::string& why, const Json& cfg) {
  throw MetadataError("codec " + codec + ": " + why + " (configuration " + cfg.dump() + ")");
}

void allowed_keys(const std::string& codec, const Json& cfg, std::initializer_list<const char*> keys) {
  for (auto it = cfg.begin(); it != cfg.end(); ++it) {
    if (std::none_of(keys.begin(), keys.end(), [&](const char* k) { return it.key() == k; }))
      cfg_fail(codec, "unexpected configuration key \"" + it.key() + "\"", cfg);
  }
}

std::int64_t cfg_int(const std::string& codec, const Json& cfg, const char* key, std::int64_t lo,
                     std::int64_t hi, std::optional<std::int64_t> def) {
  if (!cfg.contains(key)) {
    if (def) return *def;
    cfg_fail(codec, std::string("missing \"") + key + "\"", cfg);
  }
  const auto& v = cfg[key];
  if (!v.is_number_integer()) cfg_fail(codec, std::string("\"") + key + "\" must be an integer", cfg);
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
    cfg_fail(codec, std::string("\"") + key + "\" out of range", cfg);
  const auto x = v.get<std::int64_t>();
  if (x < lo || x > hi)
    cfg_fail(codec, std::string("\"") + key + "\" must be in [" + std::to_string(lo) + ", " +
                        std::to_string(hi) + "]", cfg);
  return x;
}

[[noreturn]] void decode_fail(const std::string& codec, const std::string& why) {
  throw CodecError("codec " + codec + ": " + why);
}

// ---- bytes ------------------------------------------------------------------------------------
class BytesA2B final : public ArrayToBytesCodec {
 public:
  BytesA2B(const Json& cfg, const ChunkSpec& spec) {
    allowed_keys("bytes", cfg, {"endian"});
    if (cfg.contains("endian")) {
      const auto& e = cfg["endian"];
      if (e == "little") big_ = false;
      else if (e == "big") big_ = true;
      else cfg_fail("bytes", "\"endian\" must be \"little\" or \"big\"", cfg);
    } else if (spec.dtype.component_size() > 1) {
      cfg_fail("bytes", "\"endian\" is required for data type " + spec.dtype.name(), cfg);
    }
  }
  std::string name() const override { return "bytes"; }
  Bytes encode(const ChunkSpec& spec, std::span<const std::uint8_t> data) const override {
    Bytes out(data.begin(), data.end());
    if (big_) swap(out, spec.dtype.component_size());
    return out;
  }
  void decode(const ChunkSpec& spec, std::span<const std::uint8_t> enc, std::span<std::uint8_t> out) const override {
    if (enc.size() != out.size())
      decode_fail("bytes", "expected " + std::to_string(out.size()) + " bytes for a chunk of shape " +
                               shape_str(spec.shape) + " and data type " + spec.dtype.name() + ", got " +
                               std::to_string(enc.size()));
    if (!out.empty() && enc.data() != out.data()) std::memcpy(out.data(), enc.data(), out.size());
    if (big_) swap(out, spec.dtype.component_size());
  }
  std::optional<std::size_t> encoded_size(const ChunkSpec& spec) const override { return spec.nbytes(); }
  std::size_t max_encoded_size(const ChunkSpec& spec) const override { return spec.nbytes(); }
  CodecMetadata to_metadata() const override {
    return {"bytes", Json::object({{"endian", big_ ? "big" : "little"}})};
  }
  bool native() const { return !big_; }

 private:
  static void swap(std::span<std::uint8_t> b, std::size_t comp) {
    if (comp <= 1) return;
    for (std::size_t i = 0; i + comp <= b.size(); i += comp) std::reverse(b.begin() + i, b.begin() + i + comp);
  }
  bool big_ = false;
};

// ---- transpose --------------------------------------------------------------------------------
class TransposeA2A final : public ArrayToArrayCodec {
 public:
  TransposeA2A(const Json& cfg, const ChunkSpec& spec) {
    allowed_keys("transpose", cfg, {"order"});
    if (!cfg.contains("order") || !cfg["order"].is_array())
      cfg_fail("transpose", "\"order\" must be an array (a permutation of the dimensions)", cfg);
    const auto& o = cfg["order"];
    const std::size_t r = spec.shape.size();
    if (o.size() != r) cfg_fail("transpose", "\"order\" needs " + std::to_string(r) + " entries", cfg);
    std::vector<bool> seen(r, false);
    for (const auto& e : o) {
      if (!e.is_number_integer()) cfg_fail("transpose", "\"order\" entries must be integers", cfg);
      const auto v = e.get<std::int64_t>();
      if (v < 0 || static_cast<std::size_t>(v) >= r || seen[static_cast<std::size_t>(v)])
        cfg_fail("transpose", "\"order\" is not a permutation of 0.." + std::to_string(r - 1), cfg);
      seen[static_cast<std::size_t>(v)] = true;
      order_.push_back(v);
    }
  }
  std::string name() const override { return "transpose"; }
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
  CodecMetadata to_metadata() const override {
    return {"transpose", Json::object({{"order", order_}})};
  }

 private:
  std::vector<std::int64_t> order_;
};

// ---- gzip -------------------------------------------------------------------------------------
class GzipB2B final : public BytesToBytesCodec {
 public:
  explicit GzipB2B(const Json& cfg) {
    allowed_keys("gzip", cfg, {"level"});
    level_ = static_cast<int>(cfg_int("gzip", cfg, "level", 0, 9, std::nullopt));
  }
  std::string name() const override { return "gzip"; }
  Bytes encode(std::span<const std::uint8_t> in) const override {
    thread_local std::unique_ptr<libdeflate_compressor, void (*)(libdeflate_compressor*)> comp[10] = {
        {nullptr, libdeflate_free_compressor}, {nullptr, libdeflate_free_compressor},
        {nullptr, libdeflate_free_compressor}, {nullptr, libdeflate_free_compressor},
        {nullptr, libdeflate_free_compressor}, {nullptr, libdeflate_free_compressor},
        {nullptr, libdeflate_free_compressor}, {nullptr, libdeflate_free_compressor},
        {nullptr, libdeflate_free_compressor}, {nullptr, libdeflate_free_compressor}};
    auto& c = comp[level_];
    if (!c) c.reset(libdeflate_alloc_compressor(level_));
    if (!c) throw CodecError("codec gzip: cannot allocate a compressor");
    Bytes out(libdeflate_gzip_compress_bound(c.get(), in.size()));
    const std::size_t n = libdeflate_gzip_compress(c.get(), in.data(), in.size(), out.data(), out.size());
    if (n == 0) throw CodecError("codec gzip: compression failed");
    out.resize(n);
    return out;
  }
  Bytes decode(std::span<const std::uint8_t> in, std::size_t max_out) const override {
    const std::size_t cap = max_out;
    Bytes out(cap);
    std::size_t n = run(in, out);
    out.resize(n);
    return out;
  }
  void decode_into(std::span<const std::uint8_t> in, std::span<std::uint8_t> out) const override {
    if (run(in, out) != out.size())
      decode_fail("gzip", "decoded " + std::string("fewer bytes than the expected ") + std::to_string(out.size()));
  }
  std::optional<std::size_t> encoded_size(std::size_t) const override { return std::nullopt; }
  std::size_t max_encoded_size(std::size_t in) const override { return in + in / 16 + 64 + 5 * (in / 65535 + 1) + 18; }
  CodecMetadata to_metadata() const override { return {"gzip", Json::object({{"level", level_}})}; }

 private:
  static std::size_t run(std::span<const std::uint8_t> in, std::span<std::uint8_t> out) {
    thread_local std::unique_ptr<libdeflate_decompressor, void (*)(libdeflate_decompressor*)> d{
        libdeflate_alloc_decompressor(), libdeflate_free_decompressor};
    if (!d) throw CodecError("codec gzip: cannot allocate a decompressor");
    // RFC 1952 allows several members back to back; their outputs concatenate.
    std::size_t in_off = 0, out_off = 0;
    do {
      std::size_t actual = 0, used = 0;
      const auto r = libdeflate_gzip_decompress_ex(d.get(), in.data() + in_off, in.size() - in_off, out.data() + out_off,
                                                   out.size() - out_off, &used, &actual);
      if (r == LIBDEFLATE_INSUFFICIENT_SPACE)
        decode_fail("gzip", "decoded data is larger than the expected " + std::to_string(out.size()) + " bytes");
      if (r != LIBDEFLATE_SUCCESS) decode_fail("gzip", "corrupt or truncated gzip stream");
      in_off += used;
      out_off += actual;
    } while (in_off < in.size());
    const std::size_t actual = out_off;
    return actual;
  }
  int level_;
};

// ---- zstd -------------------------------------------------------------------------------------
class ZstdB2B final : public BytesToBytesCodec {
 public:
  explicit ZstdB2B(const Json& cfg) {
    allowed_keys("zstd", cfg, {"level", "checksum"});
    level_ = static_cast<int>(cfg_int("zstd", cfg, "level", ZSTD_minCLevel(), ZSTD_maxCLevel(), 0));
    if (cfg.contains("checksum")) {
      if (!cfg["checksum"].is_boolean()) cfg_fail("zstd", "\"checksum\" must be a boolean", cfg);
      checksum_ = cfg["checksum"].get<bool>();
    }
  }
  std::string name() const override { return "zstd"; }
  Bytes encode(std::span<const std::uint8_t> in) const override {
    thread_local std::unique_ptr<ZSTD_CCtx, std::size_t (*)(ZSTD_CCtx*)> c{ZSTD_createCCtx(), ZSTD_freeCCtx};
    ZSTD_CCtx_reset(c.get(), ZSTD_reset_session_and_parameters);
    ZSTD_CCtx_setParameter(c.get(), ZSTD_c_compressionLevel, level_);
    ZSTD_CCtx_setParameter(c.get(), ZSTD_c_checksumFlag, checksum_ ? 1 : 0);
    Bytes out(ZSTD_compressBound(in.size()));
    const std::size_t n = ZSTD_compress2(c.get(), out.data(), out.size(), in.data(), in.size());
    if (ZSTD_isError(n)) throw CodecError(std::string("codec zstd: compression failed: ") + ZSTD_getErrorName(n));
    out.resize(n);
    return out;
  }
  Bytes decode(std::span<const std::uint8_t> in, std::size_t max_out) const override {
    const auto fcs = ZSTD_getFrameContentSize(in.data(), in.size());
    if (fcs == ZSTD_CONTENTSIZE_ERROR) decode_fail("zstd", "not a zstd frame");
    std::size_t cap = max_out;
    if (fcs != ZSTD_CONTENTSIZE_UNKNOWN) {
      if (fcs > max_out)
        decode_fail("zstd", "frame declares " + std::to_string(fcs) + " bytes, more than the expected " +
                                std::to_string(max_out));
      cap = static_cast<std::size_t>(fcs);
    }
    Bytes out(cap);
    out.resize(run(in, out));
    return out;
  }
  void decode_into(std::span<const std::uint8_t> in, std::span<std::uint8_t> out) const override {
    const auto fcs = ZSTD_getFrameContentSize(in.data(), in.size());
    if (fcs == ZSTD_CONTENTSIZE_ERROR) decode_fail("zstd", "not a zstd frame");
    // (a stream may hold several frames, so the first frame's size may be smaller)
    if (fcs != ZSTD_CONTENTSIZE_UNKNOWN && fcs > out.size())
      decode_fail("zstd", "frame declares " + std::to_string(fcs) + " bytes, expected " + std::to_string(out.size()));
    if (run(in, out) != out.size())
      decode_fail("zstd", "decoded fewer bytes than the expected " + std::to_string(out.size()));
  }
  std::optional<std::size_t> encoded_size(std::size_t) const override { return std::nullopt; }
  std::size_t max_encoded_size(std::size_t in) const override { return ZSTD_compressBound(in); }
  CodecMetadata to_metadata() const override {
    return {"zstd", Json::object({{"level", level_}, {"checksum", checksum_}})};
  }

 private:
  static std::size_t run(std::span<const std::uint8_t> in, std::span<std::uint8_t> out) {
    thread_local std::unique_ptr<ZSTD_DCtx, std::size_t (*)(ZSTD_DCtx*)> d{ZSTD_createDCtx(), ZSTD_freeDCtx};
    const std::size_t n = ZSTD_decompressDCtx(d.get(), out.data(), out.size(), in.data(), in.size());
    if (ZSTD_isError(n)) decode_fail("zstd", std::string("corrupt or oversized data: ") + ZSTD_getErrorName(n));
    return n;
  }
  int level_ = 0;
  bool checksum_ = false;
};

// ---- blosc ------------------------------------------------------------------------------------
class BloscB2B final : public BytesToBytesCodec {
 public:
  BloscB2B(const Json& cfg, const DataType& dtype) {
    allowed_keys("blosc", cfg, {"cname", "clevel", "shuffle", "typesize", "blocksize"});
    if (!cfg.contains("cname") || !cfg["cname"].is_string()) cfg_fail("blosc", "\"cname\" must be a string", cfg);
    cname_ = cfg["cname"].get<std::string>();
    static const char* known[] = {"lz4", "lz4hc", "blosclz", "zstd", "snappy", "zlib"};
    if (std::none_of(std::begin(known), std::end(known), [&](const char* k) { return cname_ == k; }))
      cfg_fail("blosc", "unknown \"cname\" \"" + cname_ + "\"", cfg);
    if (blosc_compname_to_compcode(cname_.c_str()) < 0)
      throw UnsupportedError("codec blosc: compressor \"" + cname_ + "\" is not available in this Blosc build");
    clevel_ = static_cast<int>(cfg_int("blosc", cfg, "clevel", 0, 9, std::nullopt));
    if (!cfg.contains("shuffle") || !cfg["shuffle"].is_string())
      cfg_fail("blosc", "\"shuffle\" must be \"noshuffle\", \"shuffle\" or \"bitshuffle\"", cfg);
    const auto s = cfg["shuffle"].get<std::string>();
    if (s == "noshuffle") shuffle_ = BLOSC_NOSHUFFLE;
    else if (s == "shuffle") shuffle_ = BLOSC_SHUFFLE;
    else if (s == "bitshuffle") shuffle_ = BLOSC_BITSHUFFLE;
    else cfg_fail("blosc", "\"shuffle\" must be \"noshuffle\", \"shuffle\" or \"bitshuffle\"", cfg);
    const std::int64_t def_ts = static_cast<std::int64_t>(std::min<std::size_t>(dtype.size(), 255));
    if (!cfg.contains("typesize") && shuffle_ != BLOSC_NOSHUFFLE)
      cfg_fail("blosc", "\"typesize\" is required unless \"shuffle\" is \"noshuffle\"", cfg);
    typesize_ = static_cast<int>(cfg_int("blosc", cfg, "typesize", 1, 255, def_ts));
    blocksize_ = static_cast<int>(cfg_int("blosc", cfg, "blocksize", 0, std::numeric_limits<int>::max(), 0));
  }
  std::string name() const override { return "blosc"; }
  Bytes encode(std::span<const std::uint8_t> in) const override {
    if (in.size() > static_cast<std::size_t>(BLOSC_MAX_BUFFERSIZE))
      throw CodecError("codec blosc: a chunk of " + std::to_string(in.size()) + " bytes exceeds Blosc's 2 GB limit");
    Bytes out(in.size() + BLOSC_MAX_OVERHEAD);
    const int n = blosc_compress_ctx(clevel_, shuffle_, static_cast<std::size_t>(typesize_), in.size(), in.data(),
                                     out.data(), out.size(), cname_.c_str(), static_cast<std::size_t>(blocksize_), 1);
    if (n <= 0) throw CodecError("codec blosc: compression failed (" + std::to_string(n) + ")");
    out.resize(static_cast<std::size_t>(n));
    return out;
  }
  Bytes decode(std::span<const std::uint8_t> in, std::size_t max_out) const override {
    const std::size_t n = validate(in, max_out);
    Bytes out(n);
    run(in, out);
    return out;
  }
  void decode_into(std::span<const std::uint8_t> in, std::span<std::uint8_t> out) const override {
    const std::size_t n = validate(in, out.size());
    if (n != out.size())
      decode_fail("blosc", "frame holds " + std::to_string(n) + " bytes, expected " + std::to_string(out.size()));
    run(in, out);
  }
  std::optional<std::size_t> encoded_size(std::size_t) const override { return std::nullopt; }
  std::size_t max_encoded_size(std::size_t in) const override { return in + BLOSC_MAX_OVERHEAD; }
  CodecMetadata to_metadata() const override {
    const char* s = shuffle_ == BLOSC_NOSHUFFLE ? "noshuffle" : shuffle_ == BLOSC_SHUFFLE ? "shuffle" : "bitshuffle";
    return {"blosc", Json::object({{"cname", cname_}, {"clevel", clevel_}, {"shuffle", s},
                                   {"typesize", typesize_}, {"blocksize", blocksize_}})};
  }

 private:
  static std::size_t validate(std::span<const std::uint8_t> in, std::size_t max_out) {
    std::size_t nbytes = 0;
    if (in.size() < BLOSC_MIN_HEADER_LENGTH || blosc_cbuffer_validate(in.data(), in.size(), &nbytes) < 0)
      decode_fail("blosc", "corrupt or truncated Blosc frame");
    if (nbytes > max_out)
      decode_fail("blosc", "frame declares " + std::to_string(nbytes) + " bytes, more than the expected " +
                               std::to_string(max_out));
    return nbytes;
  }
  static void run(std::span<const std::uint8_t> in, std::span<std::uint8_t> out) {
    const int n = blosc_decompress_ctx(in.data(), out.data(), out.size(), 1);
    if (n < 0 || static_cast<std::size_t>(n) != out.size()) decode_fail("blosc", "corrupt Blosc frame");
  }
  std::string cname_;
  int clevel_ = 5, shuffle_ = BLOSC_SHUFFLE, typesize_ = 1, blocksize_ = 0;
};

// ---- crc32c -----------------------------------------------------------------------------------
class Crc32cB2B final : public BytesToBytesCodec {
 public:
  explicit Crc32cB2B(const Json& cfg) { allowed_keys("crc32c", cfg, {}); }
  std::string name() const override { return "crc32c"; }
  Bytes encode(std::span<const std::uint8_t> in) const override {
    Bytes out(in.size() + 4);
    if (!in.empty()) std::memcpy(out.data(), in.data(), in.size());
    const std::uint32_t c = crc32c(in);
    for (int i = 0; i < 4; ++i) out[in.size() + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(c >> (8 * i));
    return out;
  }
  Bytes decode(std::span<const std::uint8_t> in, std::size_t max_out) const override {
    const auto payload = check(in);
    if (payload.size() > max_out) decode_fail("crc32c", "payload larger than expected");
    return Bytes(payload.begin(), payload.end());
  }
  std::optional<std::span<const std::uint8_t>> decode_view(std::span<const std::uint8_t> in) const override {
    return check(in);
  }
  Bytes encode_owned(Bytes&& in) const override {
    const std::uint32_t c = crc32c(in);
    for (int i = 0; i < 4; ++i) in.push_back(static_cast<std::uint8_t>(c >> (8 * i)));
    return std::move(in);
  }
  void decode_into(std::span<const std::uint8_t> in, std::span<std::uint8_t> out) const override {
    const auto payload = check(in);
    if (payload.size() != out.size())
      decode_fail("crc32c", "payload has " + std::to_string(payload.size()) + " bytes, expected " + std::to_string(out.size()));
    if (!payload.empty()) std::memcpy(out.data(), payload.data(), payload.size());
  }
  std::optional<std::size_t> encoded_size(std::size_t in) const override { return in + 4; }
  std::size_t max_encoded_size(std::size_t in) const override { return in + 4; }
  CodecMetadata to_metadata() const override { return {"crc32c", std::nullopt}; }

 private:
  static std::span<const std::uint8_t> check(std::span<const std::uint8_t> in) {
    if (in.size() < 4) decode_fail("crc32c", "input of " + std::to_string(in.size()) + " bytes is too short for a checksum");
    const auto payload = in.first(in.size() - 4);
    std::uint32_t stored = 0;
    for (int i = 0; i < 4; ++i) stored |= static_cast<std::uint32_t>(in[payload.size() + static_cast<std::size_t>(i)]) << (8 * i);
    const std::uint32_t actual = crc32c(payload);
    if (stored != actual) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "stored 0x%08x, computed 0x%08x", stored, actual);
      decode_fail("crc32c", std::string("checksum mismatch: ") + buf);
    }
    return payload;
  }
};

const Json kEmptyConfig = Json::object();
const Json& config_of(const CodecMetadata& m) { return m.configuration ? *m.configuration : kEmptyConfig; }

enum class Role { A2A, A2B, B2B, Unknown };
Role role_of(const std::string& name) {
  if (name == "transpose") return Role::A2A;
  if (name == "bytes" || name == "sharding_indexed") return Role::A2B;
  if (name == "gzip" || name == "zstd" || name == "blosc" || name == "crc32c") return Role::B2B;
  return Role::Unknown;
}

}  // namespace

void BytesToBytesCodec::decode_into(std::span<const std::uint8_t> in, std::span<std::uint8_t> out) const {
  const Bytes b = decode(in, out.size());
  if (b.size() != out.size())
    decode_fail(name(), "decoded " + std::to_string(b.size()) + " bytes, expected " + std::to_string(out.size()));
  if (!b.empty()) std::memcpy(out.data(), b.data(), b.size());
}

std::uint32_t crc32c(std::span<const std::uint8_t> data) { return crc32c_finish(crc32c_update(kCrc32cStart, data)); }

std::uint32_t crc32c_update(std::uint32_t c, std::span<const std::uint8_t> data) {
  const std::uint8_t* p = data.data();
  std::size_t n = data.size();
  while (n > 0) {  // crc32_iscsi takes an int length
    const std::size_t step = std::min<std::size_t>(n, 1u << 30);
    c = crc32_iscsi(const_cast<std::uint8_t*>(p), static_cast<int>(step), c);
    p += step;
    n -= step;
  }
  return c;
}

// ---- pipeline ---------------------------------------------------------------------------------

Bytes CodecPipelineImpl::encode(std::span<const std::uint8_t> chunk) const {
  Bytes cur;
  std::span<const std::uint8_t> in = chunk;
  for (std::size_t i = 0; i < a2a.size(); ++i) {
    cur = a2a[i]->encode(a2a_specs[i], in);
    in = cur;
  }
  // Native-endian `bytes` is the identity: hand the chunk straight to the first bytes codec.
  const bool identity = a2b->name() == "bytes" && static_cast<const BytesA2B*>(a2b.get())->native() && !b2b.empty();
  Bytes b = identity ? b2b[0]->encode(in) : a2b->encode(a2b_spec, in);
  for (std::size_t i = identity ? 1 : 0; i < b2b.size(); ++i) b = b2b[i]->encode_owned(std::move(b));
  return b;
}

std::optional<std::size_t> CodecPipelineImpl::plain_trailer() const {
  if (!a2a.empty() || a2b->name() != "bytes" || !static_cast<const BytesA2B*>(a2b.get())->native() || b2b.size() > 1)
    return std::nullopt;
  if (b2b.empty()) return 0;
  if (b2b[0]->name() == "crc32c") return 4;
  return std::nullopt;
}

bool CodecPipelineImpl::encodes_as_is() const {
  return a2a.empty() && b2b.empty() && a2b->name() == "bytes" && static_cast<const BytesA2B*>(a2b.get())->native();
}

std::optional<std::span<const std::uint8_t>> CodecPipelineImpl::decode_view(std::span<const std::uint8_t> encoded) const {
  if (!a2a.empty() || a2b->name() != "bytes" || !static_cast<const BytesA2B*>(a2b.get())->native()) return std::nullopt;
  std::span<const std::uint8_t> in = encoded;
  for (std::size_t i = b2b.size(); i-- > 0;) {
    auto v = b2b[i]->decode_view(in);
    if (!v) return std::nullopt;
    in = *v;
  }
  if (in.size() != spec.nbytes()) return std::nullopt;  // decode() reports it with the details
  return in;
}

void CodecPipelineImpl::decode(std::span<const std::uint8_t> encoded, std::span<std::uint8_t> out) const {
  if (out.size() != spec.nbytes()) throw CodecError("internal: decode buffer has the wrong size");
  // Upper bounds of every stage's output, from the array->bytes size up.
  std::vector<std::size_t> bound(b2b.size() + 1);
  bound[0] = a2b->max_encoded_size(a2b_spec);
  for (std::size_t i = 0; i < b2b.size(); ++i) bound[i + 1] = b2b[i]->max_encoded_size(bound[i]);
  const auto fixed = a2b->encoded_size(a2b_spec);
  // Fast path: the last decode writes straight into `out` when nothing else stands between.
  const bool direct = a2a.empty() && fixed && *fixed == out.size() && a2b->name() == "bytes" &&
                      static_cast<const BytesA2B*>(a2b.get())->native();
  Bytes cur;
  std::span<const std::uint8_t> in = encoded;
  std::size_t views = b2b.size();  // trailing checksums are verified and stripped without copying
  while (views > 0) {
    auto v = b2b[views - 1]->decode_view(in);
    if (!v) break;
    in = *v;
    --views;
  }
  for (std::size_t i = views; i-- > 0;) {
    if (i == 0 && direct) {
      b2b[0]->decode_into(in, out);
      return;
    }
    if (i == 0 && fixed) {
      Bytes next(*fixed);
      b2b[0]->decode_into(in, next);
      cur = std::move(next);
    } else {
      cur = b2b[i]->decode(in, bound[i]);
    }
    in = cur;
  }
  if (a2a.empty()) {
    a2b->decode(a2b_spec, in, out);
    return;
  }
  Bytes arr(a2b_spec.nbytes());
  a2b->decode(a2b_spec, in, arr);
  for (std::size_t i = a2a.size(); i-- > 0;) {
    Bytes prev(a2a_specs[i].nbytes());
    a2a[i]->decode(a2a_specs[i], arr, i == 0 ? out : std::span<std::uint8_t>(prev));
    if (i == 0) return;
    arr = std::move(prev);
  }
}

std::optional<std::size_t> CodecPipelineImpl::encoded_size() const {
  auto s = a2b->encoded_size(a2b_spec);
  for (const auto& c : b2b) {
    if (!s) return std::nullopt;
    s = c->encoded_size(*s);
  }
  return s;
}

std::size_t CodecPipelineImpl::max_encoded_size() const {
  std::size_t s = a2b->max_encoded_size(a2b_spec);
  for (const auto& c : b2b) s = c->max_encoded_size(s);
  return s;
}

const ShardingCodec* CodecPipelineImpl::sharding() const {
  if (!a2a.empty() || !b2b.empty()) return nullptr;
  return dynamic_cast<const ShardingCodec*>(a2b.get());
}

CodecPipeline::CodecPipeline() : impl_(std::make_unique<CodecPipelineImpl>()) {}
CodecPipeline::~CodecPipeline() = default;
CodecPipeline::CodecPipeline(CodecPipeline&&) noexcept = default;
CodecPipeline& CodecPipeline::operator=(CodecPipeline&&) noexcept = default;
CodecPipeline::CodecPipeline(const CodecPipeline& o) : impl_(std::make_unique<CodecPipelineImpl>(*o.impl_)) {}
CodecPipeline& CodecPipeline::operator=(const CodecPipeline& o) {
  impl_ = std::make_unique<CodecPipelineImpl>(*o.impl_);
  return *this;
}

CodecPipeline CodecPipeline::from_metadata(const std::vector<CodecMetadata>& codecs, const ChunkSpec& spec) {
  CodecPipeline p;
  auto& im = *p.impl_;
  im.spec = spec;
  if (codecs.empty()) throw MetadataError("codecs: at least one codec (an array -> bytes codec) is required");
  ChunkSpec cur = spec;
  int stage = 0;  // 0: array->array, 1: after array->bytes
  for (std::size_t i = 0; i < codecs.size(); ++i) {
    const auto& m = codecs[i];
    const auto& cfg = config_of(m);
    const std::string where = "codecs[" + std::to_string(i) + "] (" + m.name + ")";
    switch (role_of(m.name)) {
      case Role::Unknown:
        throw UnsupportedError(where + ": unknown codec \"" + m.name + "\"; zarrpp cannot decode this array");
      case Role::A2A: {
        if (stage != 0) throw MetadataError(where + ": an array -> array codec must come before the array -> bytes codec");
        auto c = std::make_shared<TransposeA2A>(cfg, cur);
        im.a2a.push_back(c);
        im.a2a_specs.push_back(cur);
        cur = c->encoded_spec(cur);
        break;
      }
      case Role::A2B: {
        if (stage != 0) throw MetadataError(where + ": only one array -> bytes codec is allowed");
        if (m.name == "bytes") im.a2b = std::make_shared<BytesA2B>(cfg, cur);
        else im.a2b = std::make_shared<ShardingCodec>(cfg, cur);
        im.a2b_spec = cur;
        stage = 1;
        break;
      }
      case Role::B2B: {
        if (stage != 1) throw MetadataError(where + ": a bytes -> bytes codec must come after the array -> bytes codec");
        if (m.name == "gzip") im.b2b.push_back(std::make_shared<GzipB2B>(cfg));
        else if (m.name == "zstd") im.b2b.push_back(std::make_shared<ZstdB2B>(cfg));
        else if (m.name == "blosc") im.b2b.push_back(std::make_shared<BloscB2B>(cfg, cur.dtype));
        else im.b2b.push_back(std::make_shared<Crc32cB2B>(cfg));
        break;
      }
    }
  }
  if (!im.a2b) throw MetadataError("codecs: exactly one array -> bytes codec (e.g. \"bytes\") is required");
  return p;
}

std::vector<CodecMetadata> CodecPipeline::to_metadata() const {
  std::vector<CodecMetadata> out;
  for (const auto& c : impl_->a2a) out.push_back(c->to_metadata());
  out.push_back(impl_->a2b->to_metadata());
  for (const auto& c : impl_->b2b) out.push_back(c->to_metadata());
  return out;
}

Bytes CodecPipeline::encode(std::span<const std::uint8_t> chunk) const { return impl_->encode(chunk); }
void CodecPipeline::decode(std::span<const std::uint8_t> e, std::span<std::uint8_t> out) const { impl_->decode(e, out); }
std::optional<std::size_t> CodecPipeline::encoded_size() const { return impl_->encoded_size(); }
const ChunkSpec& CodecPipeline::spec() const { return impl_->spec; }

// ---- typed configurations -----------------------------------------------------------------------
namespace codec {

CodecMetadata to_metadata(const Any& any, const DataType& dtype) {
  struct V {
    const DataType& dtype;
    CodecMetadata operator()(const BytesCodec& c) const {
      return {"bytes", Json::object({{"endian", c.endian == Endian::little ? "little" : "big"}})};
    }
    CodecMetadata operator()(const Transpose& c) const { return {"transpose", Json::object({{"order", c.order}})}; }
    CodecMetadata operator()(const Gzip& c) const { return {"gzip", Json::object({{"level", c.level}})}; }
    CodecMetadata operator()(const Zstd& c) const {
      return {"zstd", Json::object({{"level", c.level}, {"checksum", c.checksum}})};
    }
    CodecMetadata operator()(const Blosc& c) const {
      Json j = Json::object();
      j["cname"] = c.cname;
      j["clevel"] = c.clevel;
      // Auto values are resolved against the data type by resolve_blosc_auto in the array layer.
      // Automatic choices are resolved here, so zarr.json always states them (as zarr-python
      // does: bit-shuffle for one-byte types, byte shuffle otherwise).
      auto shuffle = c.shuffle;
      if (shuffle == Blosc::Shuffle::Auto)
        shuffle = dtype.size() == 1 ? Blosc::Shuffle::BitShuffle : Blosc::Shuffle::Shuffle;
      j["shuffle"] = shuffle == Blosc::Shuffle::NoShuffle ? "noshuffle"
                     : shuffle == Blosc::Shuffle::BitShuffle ? "bitshuffle" : "shuffle";
      j["typesize"] = c.typesize > 0 ? c.typesize : static_cast<int>(std::min<std::size_t>(dtype.size(), 255));
      j["blocksize"] = c.blocksize;
      return {"blosc", j};
    }
    CodecMetadata operator()(const Crc32c&) const { return {"crc32c", std::nullopt}; }
    CodecMetadata operator()(const std::shared_ptr<Sharding>& s) const {
      if (!s) throw MetadataError("codec sharding_indexed: null configuration");
      Json cfg = Json::object();
      cfg["chunk_shape"] = s->chunk_shape;
      Json inner = Json::array(), index = Json::array();
      for (const auto& c : to_metadata(s->codecs, dtype)) inner.push_back(c.to_json());
      for (const auto& c : to_metadata(s->index_codecs, DataType::uint64)) index.push_back(c.to_json());
      cfg["codecs"] = inner;
      cfg["index_codecs"] = index;
      cfg["index_location"] = s->index_location == Sharding::IndexLocation::end ? "end" : "start";
      return {"sharding_indexed", cfg};
    }
  };
  return std::visit(V{dtype}, any);
}

std::vector<CodecMetadata> to_metadata(const std::vector<Any>& cs, const DataType& dtype) {
  std::vector<CodecMetadata> out;
  for (const auto& c : cs) out.push_back(to_metadata(c, dtype));
  return out;
}

}  // namespace codec

// ---- helpers ----------------------------------------------------------------------------------

namespace {
void box_rec(const std::uint8_t* a, const std::vector<std::int64_t>& astr, std::uint8_t* b,
             const std::vector<std::int64_t>& bstr, const Shape& shape, std::size_t d, std::size_t run, bool a_to_b) {
  if (d + 1 == shape.size()) {
    if (a_to_b) std::memcpy(b, a, run);
    else std::memcpy(const_cast<std::uint8_t*>(a), b, run);
    return;
  }
  for (std::int64_t i = 0; i < shape[d]; ++i)
    box_rec(a + i * astr[d], astr, b + i * bstr[d], bstr, shape, d + 1, run, a_to_b);
}
}  // namespace

void extract_box(const std::uint8_t* src, const Shape& src_shape, const Shape& start, const Shape& shape,
                 std::uint8_t* dst, std::size_t esize) {
  if (shape.empty()) {
    std::memcpy(dst, src, esize);
    return;
  }
  if (shape_size(shape) == 0) return;
  const auto sstr = c_strides(src_shape, esize);
  const auto dstr = c_strides(shape, esize);
  std::int64_t off = 0;
  for (std::size_t d = 0; d < start.size(); ++d) off += start[d] * sstr[d];
  box_rec(src + off, sstr, dst, dstr, shape, 0, static_cast<std::size_t>(shape.back()) * esize, true);
}

void insert_box(const std::uint8_t* src, const Shape& shape, std::uint8_t* dst, const Shape& dst_shape,
                const Shape& start, std::size_t esize) {
  if (shape.empty()) {
    std::memcpy(dst, src, esize);
    return;
  }
  if (shape_size(shape) == 0) return;
  const auto sstr = c_strides(shape, esize);
  const auto dstr = c_strides(dst_shape, esize);
  std::int64_t off = 0;
  for (std::size_t d = 0; d < start.size(); ++d) off += start[d] * dstr[d];
  box_rec(dst + off, dstr, const_cast<std::uint8_t*>(src), sstr, shape, 0,
          static_cast<std::size_t>(shape.back()) * esize, false);
}

bool all_equal(std::span<const std::uint8_t> data, std::span<const std::uint8_t> value) {
  const std::size_t es = value.size();
  if (es == 0 || data.size() % es != 0) return false;
  if (std::all_of(value.begin(), value.end(), [&](std::uint8_t b) { return b == value[0]; })) {
    const std::uint8_t v = value[0];
    // Compare word by word: this runs on every written chunk.
    std::size_t i = 0;
    std::uint64_t pat;
    std::memset(&pat, v, 8);
    for (; i + 8 <= data.size(); i += 8) {
      std::uint64_t w;
      std::memcpy(&w, data.data() + i, 8);
      if (w != pat) return false;
    }
    for (; i < data.size(); ++i)
      if (data[i] != v) return false;
    return true;
  }
  for (std::size_t i = 0; i < data.size(); i += es)
    if (std::memcmp(data.data() + i, value.data(), es) != 0) return false;
  return true;
}

void fill_with(std::span<std::uint8_t> data, std::span<const std::uint8_t> value) {
  const std::size_t es = value.size();
  if (data.empty()) return;
  if (std::all_of(value.begin(), value.end(), [&](std::uint8_t b) { return b == value[0]; })) {
    std::memset(data.data(), value[0], data.size());
    return;
  }
  std::memcpy(data.data(), value.data(), es);
  std::size_t filled = es;
  while (filled < data.size()) {  // doubling copies
    const std::size_t n = std::min(filled, data.size() - filled);
    std::memcpy(data.data() + filled, data.data(), n);
    filled += n;
  }
}

}  // namespace zarrpp
