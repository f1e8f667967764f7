// Codec byte streams made by independent producers (numcodecs' gzip/zstd/blosc, the zstd tool, a
// hand-written CRC32C, numpy byte swapping; see scripts/gen_codec_fixtures.py) decode byte-exactly
// with zarrpp; formats with a single valid encoding (crc32c, bytes) also encode byte-exactly; and
// corrupt or truncated streams fail with CodecError instead of crashing or returning garbage.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "zarrpp/zarrpp.hpp"

using namespace zarrpp;

namespace {

const std::string kDir = std::string(ZARRPP_TEST_DATA_DIR) + "/codecs/";

struct FixtureCase {
  std::string name;
  Json codec;  // one Zarr v3 codec
  std::string dtype;
  Shape shape;
  bool deterministic = false;
  bool before_bytes = false;  // an array -> array filter: [codec, bytes] instead of [bytes, codec]
  bool lossy = false;         // decoding gives <name>.dec, not .raw
};

// gtest prints a failing case's parameter: show its name, not its bytes.
void PrintTo(const FixtureCase& c, std::ostream* os) { *os << c.name; }

Bytes read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  return Bytes(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

std::string& load_error() {
  static std::string e;
  return e;
}

// Runs during test registration, so it must not throw: a failure is reported by ManifestLoads.
std::vector<FixtureCase> load_cases() {
  std::vector<FixtureCase> out;
  try {
    const Bytes text = read_bytes(kDir + "manifest.json");
    const Json m = Json::parse(text.begin(), text.end());
    for (const auto& c : m.at("cases")) {
      FixtureCase fc;
      fc.name = c.at("name").get<std::string>();
      fc.codec = c.at("codec");
      fc.dtype = c.at("dtype").get<std::string>();
      fc.shape = c.at("shape").get<Shape>();
      fc.deterministic = c.at("deterministic").get<bool>();
      fc.before_bytes = c.value("before_bytes", false);
      fc.lossy = c.value("lossy", false);
      out.push_back(std::move(fc));
    }
  } catch (const std::exception& e) {
    load_error() = e.what();
    out.clear();
  }
  return out;
}

const std::vector<FixtureCase>& all_cases() {
  static const std::vector<FixtureCase> cases = load_cases();
  return cases;
}

std::string codec_name(const FixtureCase& c) { return c.codec.at("name").get<std::string>(); }
bool is_compressor(const std::string& n) {
  return n == "gzip" || n == "zstd" || n == "blosc" || n == "numcodecs.zlib" || n == "numcodecs.lz4" ||
         n == "numcodecs.bz2" || n == "numcodecs.lzma";
}

ChunkSpec spec_of(const FixtureCase& c) {
  const DataType dt = DataType::parse(c.dtype);
  return ChunkSpec{c.shape, dt, Bytes(dt.size(), 0)};
}

CodecMetadata little_endian_bytes() {
  return CodecMetadata::from_json(Json::parse(R"({"name": "bytes", "configuration": {"endian": "little"}})"),
                                  "codecs[0]");
}

// The case's codec behind a little-endian `bytes` codec (before it, for a filter; alone, when it
// is `bytes`), followed by `extra` bytes -> bytes codecs.
CodecPipeline pipeline_of(const FixtureCase& c, const std::vector<Json>& extra = {}) {
  std::vector<CodecMetadata> codecs;
  if (codec_name(c) != "bytes" && !c.before_bytes) codecs.push_back(little_endian_bytes());
  codecs.push_back(CodecMetadata::from_json(c.codec, "codecs[" + std::to_string(codecs.size()) + "]"));
  if (c.before_bytes) codecs.push_back(little_endian_bytes());
  for (const auto& j : extra)
    codecs.push_back(CodecMetadata::from_json(j, "codecs[" + std::to_string(codecs.size()) + "]"));
  return CodecPipeline::from_metadata(codecs, spec_of(c));
}

testing::AssertionResult same_bytes(const Bytes& actual, const Bytes& expected) {
  if (actual == expected) return testing::AssertionSuccess();
  std::ostringstream m;
  m << "got " << actual.size() << " bytes, expected " << expected.size();
  const auto n = std::min(actual.size(), expected.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (actual[i] != expected[i]) {
      m << "; first difference at offset " << i << ": got 0x" << std::hex << int(actual[i]) << ", expected 0x"
        << int(expected[i]);
      break;
    }
  }
  return testing::AssertionFailure() << m.str();
}

// CRC32C (Castagnoli, reflected 0x82F63B78), written here so these tests do not trust zarrpp's.
std::uint32_t reference_crc32c(const Bytes& data) {
  static const auto table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t n = 0; n < 256; ++n) {
      std::uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  std::uint32_t c = 0xffffffffu;
  for (const auto b : data) c = table[(c ^ b) & 0xffu] ^ (c >> 8);
  return ~c;
}

Bytes with_crc32c(Bytes data) {
  const std::uint32_t c = reference_crc32c(data);
  for (int i = 0; i < 4; ++i) data.push_back(static_cast<std::uint8_t>(c >> (8 * i)));
  return data;
}

class CodecFixture : public testing::TestWithParam<FixtureCase> {
 protected:
  void SetUp() override {
    raw_ = read_bytes(kDir + GetParam().name + ".raw");
    enc_ = read_bytes(kDir + GetParam().name + ".enc");
    decoded_ = GetParam().lossy ? read_bytes(kDir + GetParam().name + ".dec") : raw_;
    ASSERT_EQ(raw_.size(), spec_of(GetParam()).nbytes()) << "fixture .raw does not match dtype and shape";
    ASSERT_EQ(decoded_.size(), raw_.size()) << "fixture .dec does not match .raw";
  }
  Bytes decode(const CodecPipeline& p, std::span<const std::uint8_t> enc) const {
    Bytes out(p.spec().nbytes(), 0xcd);
    p.decode(enc, out);
    return out;
  }
  Bytes raw_, enc_;
  Bytes decoded_;  // what decoding gives: raw_, or for a lossy codec its .dec
};

TEST(CodecFixtures, ManifestLoads) {
  ASSERT_TRUE(load_error().empty()) << kDir << "manifest.json: " << load_error();
  const auto& cs = all_cases();
  std::map<std::string, int> per_codec;
  std::set<std::string> names;
  for (const auto& c : cs) {
    ++per_codec[codec_name(c)];
    EXPECT_TRUE(names.insert(c.name).second) << "duplicate case " << c.name;
  }
  for (const char* n : {"gzip", "zstd", "blosc", "crc32c", "bytes"}) EXPECT_GT(per_codec[n], 0) << n;
  // The standard check value, straight from the fixture file.
  const Bytes check = read_bytes(kDir + "crc32c_check.enc");
  EXPECT_TRUE(same_bytes(check, Bytes{'1', '2', '3', '4', '5', '6', '7', '8', '9', 0x83, 0x92, 0x06, 0xe3}));
}

TEST_P(CodecFixture, DecodesToRaw) {
  const auto p = pipeline_of(GetParam());
  EXPECT_TRUE(same_bytes(decode(p, enc_), decoded_));
  // Misaligned input and output buffers decode the same.
  Bytes shifted(enc_.size() + 1);
  std::copy(enc_.begin(), enc_.end(), shifted.begin() + 1);
  Bytes out(raw_.size() + 1, 0xcd);
  p.decode(std::span<const std::uint8_t>(shifted).subspan(1), std::span<std::uint8_t>(out).subspan(1));
  EXPECT_TRUE(same_bytes(Bytes(out.begin() + 1, out.end()), decoded_));
}

TEST_P(CodecFixture, EncodeRoundTrips) {
  const auto p = pipeline_of(GetParam());
  const Bytes e = p.encode(raw_);
  if (GetParam().deterministic) {
    EXPECT_TRUE(same_bytes(e, enc_)) << "this format has one valid encoding";
    ASSERT_TRUE(p.encoded_size().has_value());
    EXPECT_EQ(*p.encoded_size(), enc_.size());
  }
  EXPECT_TRUE(same_bytes(decode(p, e), decoded_));
}

TEST_P(CodecFixture, TruncatedThrowsCodecError) {
  const auto p = pipeline_of(GetParam());
  if (is_compressor(codec_name(GetParam()))) {
    ASSERT_GT(enc_.size(), 5u);
    const Bytes cut(enc_.begin(), enc_.end() - 5);
    EXPECT_THROW(decode(p, cut), CodecError);
  }
  // Every strict prefix, down to nothing.
  for (std::size_t n = 0; n < enc_.size(); ++n) {
    const Bytes cut(enc_.begin(), enc_.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_THROW(decode(p, cut), CodecError) << "prefix of " << n << " of " << enc_.size() << " bytes";
  }
}

TEST_P(CodecFixture, AppendedByteIsRejectedOrIgnored) {
  const auto p = pipeline_of(GetParam());
  for (const std::uint8_t extra : {std::uint8_t{0x00}, std::uint8_t{0x28}, std::uint8_t{0xff}}) {
    Bytes longer = enc_;
    longer.push_back(extra);
    try {
      EXPECT_TRUE(same_bytes(decode(p, longer), decoded_)) << "appended 0x" << std::hex << int(extra);
    } catch (const CodecError&) {
    }
  }
}

// ---- bytes -> bytes codecs: the same stream one stage deeper, (bytes, X, crc32c), runs through
// the pipeline's intermediate decode path (bounded output instead of the exact chunk size).
class BytesToBytesFixture : public CodecFixture {};

TEST_P(BytesToBytesFixture, DecodesBeneathCrc32c) {
  const auto p = pipeline_of(GetParam(), {Json::parse(R"({"name": "crc32c"})")});
  EXPECT_TRUE(same_bytes(decode(p, with_crc32c(enc_)), decoded_));
  EXPECT_TRUE(same_bytes(decode(p, p.encode(raw_)), decoded_));
  // A truncated inner stream behind a valid checksum.
  for (const std::size_t drop : {std::size_t{1}, std::size_t{5}}) {
    if (enc_.size() < drop) continue;
    const Bytes cut(enc_.begin(), enc_.end() - static_cast<std::ptrdiff_t>(drop));
    EXPECT_THROW(decode(p, with_crc32c(cut)), CodecError) << "dropped " << drop << " bytes";
  }
}

// ---- crc32c -------------------------------------------------------------------------------------
class Crc32cFixture : public CodecFixture {};

TEST_P(Crc32cFixture, FlippedByteIsDetected) {
  const auto p = pipeline_of(GetParam());
  for (std::size_t i = 0; i < enc_.size(); ++i) {
    for (const std::uint8_t mask : {std::uint8_t{0x01}, std::uint8_t{0x80}, std::uint8_t{0xff}}) {
      Bytes bad = enc_;
      bad[i] ^= mask;
      try {
        decode(p, bad);
        ADD_FAILURE() << "byte " << i << " ^ 0x" << std::hex << int(mask) << " was not detected";
      } catch (const CodecError& e) {
        EXPECT_NE(std::string(e.what()).find("crc32c"), std::string::npos) << e.what();
      }
    }
  }
}

// ---- gzip, zstd, blosc --------------------------------------------------------------------------
// These carry no complete integrity check (zstd without a checksum, blosc 1, gzip's header), so a
// flipped byte may decode to different data; it must never crash, throw anything but CodecError,
// or write outside the output.
class CompressorFixture : public CodecFixture {};

TEST_P(CompressorFixture, FlippedByteNeverCrashes) {
  const auto p = pipeline_of(GetParam());
  for (std::size_t i = 0; i < enc_.size(); ++i) {
    Bytes bad = enc_;
    bad[i] ^= 0xff;
    Bytes out(raw_.size() + 64, 0xcd);
    try {
      p.decode(bad, std::span<std::uint8_t>(out).first(raw_.size()));
    } catch (const CodecError&) {
    }
    EXPECT_TRUE(std::all_of(out.begin() + static_cast<std::ptrdiff_t>(raw_.size()), out.end(),
                            [](std::uint8_t b) { return b == 0xcd; }))
        << "decode wrote past its output after flipping byte " << i;
  }
}

template <class Pred>
std::vector<FixtureCase> cases_where(Pred pred) {
  std::vector<FixtureCase> out;
  for (const auto& c : all_cases())
    if (pred(codec_name(c))) out.push_back(c);
  return out;
}

std::string case_name(const testing::TestParamInfo<FixtureCase>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(Manifest, CodecFixture, testing::ValuesIn(all_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Manifest, BytesToBytesFixture,
                         testing::ValuesIn(cases_where([](const std::string& n) { return n != "bytes"; })), case_name);
INSTANTIATE_TEST_SUITE_P(Manifest, Crc32cFixture,
                         testing::ValuesIn(cases_where([](const std::string& n) { return n == "crc32c"; })), case_name);
INSTANTIATE_TEST_SUITE_P(Manifest, CompressorFixture, testing::ValuesIn(cases_where(is_compressor)), case_name);
// Without a manifest nothing is instantiated; ManifestLoads reports why.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CodecFixture);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BytesToBytesFixture);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Crc32cFixture);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CompressorFixture);

}  // namespace
