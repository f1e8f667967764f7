// Codec pipeline: order rules, every codec's round trip, byte-exact formats, sharding, and
// corrupt input that must fail cleanly.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstring>
#include <random>

#include "zarrpp/zarrpp.hpp"

using namespace zarrpp;

namespace {
CodecMetadata cm(const char* json) { return CodecMetadata::from_json(Json::parse(json), "test"); }
const char* kBytesLE = R"({"name": "bytes", "configuration": {"endian": "little"}})";

CodecPipeline pipe(std::vector<CodecMetadata> cs, Shape shape, DataType t = DataType::uint16) {
  return CodecPipeline::from_metadata(cs, ChunkSpec{std::move(shape), t, Bytes(t.size(), 0)});
}

Bytes random_bytes(std::size_t n, unsigned seed, int distinct = 256) {
  std::mt19937 rng(seed);
  Bytes b(n);
  for (auto& x : b) x = static_cast<std::uint8_t>(rng() % static_cast<unsigned>(distinct));
  return b;
}

Bytes roundtrip(const CodecPipeline& p, const Bytes& in) {
  const Bytes enc = p.encode(in);
  Bytes out(in.size());
  p.decode(enc, out);
  return out;
}

std::string codec_error(const CodecPipeline& p, const Bytes& enc, std::size_t out_size) {
  Bytes out(out_size);
  try {
    p.decode(enc, out);
  } catch (const CodecError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(Codecs, PipelineOrderAndCountAreValidated) {
  EXPECT_THROW(pipe({}, {4}), MetadataError);
  EXPECT_THROW(pipe({cm(R"({"name": "gzip", "configuration": {"level": 1}})")}, {4}), MetadataError);
  EXPECT_THROW(pipe({cm(kBytesLE), cm(kBytesLE)}, {4}), MetadataError);
  EXPECT_THROW(pipe({cm(kBytesLE), cm(R"({"name": "transpose", "configuration": {"order": [0]}})")}, {4}),
               MetadataError);
  EXPECT_THROW(pipe({cm(kBytesLE), cm(R"({"name": "lz77"})")}, {4}), UnsupportedError);
  EXPECT_THROW(pipe({cm(R"({"name": "bytes"})")}, {4}), MetadataError);  // endian needed for uint16
  EXPECT_NO_THROW(pipe({cm(R"({"name": "bytes"})")}, {4}, DataType::uint8));
  EXPECT_THROW(pipe({cm(R"({"name": "bytes", "configuration": {"endian": "middle"}})")}, {4}), MetadataError);
  EXPECT_THROW(pipe({cm(kBytesLE), cm(R"({"name": "gzip", "configuration": {"level": 10}})")}, {4}), MetadataError);
  EXPECT_THROW(pipe({cm(kBytesLE), cm(R"({"name": "gzip", "configuration": {"level": 1, "x": 2}})")}, {4}),
               MetadataError);
  EXPECT_THROW(pipe({cm(kBytesLE), cm(R"({"name": "zstd", "configuration": {"level": 23}})")}, {4}), MetadataError);
  EXPECT_THROW(
      pipe(
          {cm(kBytesLE),
           cm(R"({"name": "blosc", "configuration": {"cname": "lz5", "clevel": 1, "shuffle": "shuffle", "typesize": 2}})")},
          {4}),
      MetadataError);
  EXPECT_THROW(pipe({cm(kBytesLE),
                     cm(R"({"name": "blosc", "configuration": {"cname": "lz4", "clevel": 1, "shuffle": "shuffle"}})")},
                    {4}),
               MetadataError);  // typesize required with shuffle
  EXPECT_THROW(pipe({cm(R"({"name": "transpose", "configuration": {"order": [0, 0]}})"), cm(kBytesLE)}, {4, 4}),
               MetadataError);
  EXPECT_THROW(pipe({cm(R"({"name": "transpose", "configuration": {"order": "C"}})"), cm(kBytesLE)}, {4, 4}),
               MetadataError);
}

TEST(Codecs, BytesCodecIsByteExactInBothOrders) {
  const std::int32_t v[2] = {0x01020304, -2};
  const Bytes in(reinterpret_cast<const std::uint8_t*>(v), reinterpret_cast<const std::uint8_t*>(v) + 8);
  auto le = pipe({cm(kBytesLE)}, {2}, DataType::int32);
  EXPECT_EQ(le.encode(in), in);
  auto be = pipe({cm(R"({"name": "bytes", "configuration": {"endian": "big"}})")}, {2}, DataType::int32);
  EXPECT_EQ(be.encode(in), (Bytes{1, 2, 3, 4, 0xff, 0xff, 0xff, 0xfe}));
  EXPECT_EQ(roundtrip(be, in), in);
  // complex: each component swapped separately, real first
  const float c[2] = {1.0f, -2.0f};
  const Bytes cin(reinterpret_cast<const std::uint8_t*>(c), reinterpret_cast<const std::uint8_t*>(c) + 8);
  auto bec = pipe({cm(R"({"name": "bytes", "configuration": {"endian": "big"}})")}, {1}, DataType::complex64);
  EXPECT_EQ(bec.encode(cin), (Bytes{0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0}));
  // a wrong size is an error, not a crash
  EXPECT_NE(codec_error(le, Bytes(7), 8).find("bytes"), std::string::npos);
}

TEST(Codecs, TransposeMatchesItsDefinition) {
  // input shape (2,3,4) C order with values = flat index; order [2,0,1] -> output shape (4,2,3)
  Bytes in(24);
  for (int i = 0; i < 24; ++i) in[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(i);
  auto p = pipe({cm(R"({"name": "transpose", "configuration": {"order": [2, 0, 1]}})"), cm(R"({"name": "bytes"})")},
                {2, 3, 4}, DataType::uint8);
  const Bytes enc = p.encode(in);
  // output[i][j][k] = input at index where in_idx[order[m]] = out_idx[m]: in[j][k][i]
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 3; ++k)
        ASSERT_EQ(enc[static_cast<std::size_t>(i * 6 + j * 3 + k)], in[static_cast<std::size_t>(j * 12 + k * 4 + i)]);
  EXPECT_EQ(roundtrip(p, in), in);
}

TEST(Codecs, Crc32cIsCastagnoliLittleEndian) {
  const Bytes msg = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  EXPECT_EQ(crc32c(msg), 0xE3069283u);
  auto p = pipe({cm(R"({"name": "bytes"})"), cm(R"({"name": "crc32c"})")}, {9}, DataType::uint8);
  const Bytes enc = p.encode(msg);
  ASSERT_EQ(enc.size(), 13u);
  EXPECT_EQ((Bytes(enc.end() - 4, enc.end())), (Bytes{0x83, 0x92, 0x06, 0xE3}));
  Bytes bad = enc;
  bad[3] ^= 1;
  EXPECT_NE(codec_error(p, bad, 9).find("checksum mismatch"), std::string::npos);
  EXPECT_NE(codec_error(p, Bytes(enc.begin(), enc.begin() + 3), 9).find("crc32c"), std::string::npos);
  EXPECT_EQ(p.encoded_size(), 13u);
}

TEST(Codecs, GzipOutputIsRfc1952) {
  auto p = pipe({cm(kBytesLE), cm(R"({"name": "gzip", "configuration": {"level": 6}})")}, {100});
  const Bytes enc = p.encode(random_bytes(200, 1, 4));
  ASSERT_GE(enc.size(), 18u);
  EXPECT_EQ(enc[0], 0x1f);
  EXPECT_EQ(enc[1], 0x8b);
  EXPECT_EQ(enc[2], 8);  // deflate
  std::uint32_t isize;
  std::memcpy(&isize, enc.data() + enc.size() - 4, 4);
  EXPECT_EQ(isize, 200u);
}

TEST(Codecs, MultiMemberGzipAndMultiFrameZstdDecode) {
  const Bytes a = random_bytes(100, 1, 4), b = random_bytes(60, 2, 4);
  Bytes ab = a;
  ab.insert(ab.end(), b.begin(), b.end());
  for (const char* c :
       {R"({"name":"gzip","configuration":{"level":5}})", R"({"name":"zstd","configuration":{"level":3}})"}) {
    auto pa = pipe({cm(R"({"name":"bytes"})"), cm(c)}, {100}, DataType::uint8);
    auto pb = pipe({cm(R"({"name":"bytes"})"), cm(c)}, {60}, DataType::uint8);
    auto pab = pipe({cm(R"({"name":"bytes"})"), cm(c)}, {160}, DataType::uint8);
    Bytes enc = pa.encode(a);
    const Bytes eb = pb.encode(b);
    enc.insert(enc.end(), eb.begin(), eb.end());
    Bytes out(160);
    pab.decode(enc, out);
    EXPECT_EQ(out, ab) << c;
  }
}

TEST(Codecs, BloscAutomaticParametersAreWrittenIntoMetadata) {
  const auto m = codec::to_metadata(codec::Blosc{}, DataType::float32);
  EXPECT_EQ(
      m.to_json().dump(),
      R"({"name":"blosc","configuration":{"cname":"zstd","clevel":5,"shuffle":"shuffle","typesize":4,"blocksize":0}})");
  const auto m1 = codec::to_metadata(codec::Blosc{.cname = "zstd", .clevel = 3}, DataType::uint8);
  EXPECT_EQ((*m1.configuration)["shuffle"], "bitshuffle");
  EXPECT_EQ((*m1.configuration)["typesize"], 1);
  const auto z = codec::to_metadata(codec::Zstd{.level = 3}, DataType::uint8);
  EXPECT_EQ(z.to_json().dump(), R"({"name":"zstd","configuration":{"level":3,"checksum":false}})");
}

struct CodecCase {
  std::string name;
  std::vector<const char*> codecs;
};

class CodecRoundTrip : public ::testing::TestWithParam<CodecCase> {};

TEST_P(CodecRoundTrip, EveryDataTypeAndShape) {
  for (const char* t : {"bool", "int8", "uint16", "int32", "float16", "float32", "float64", "complex64", "complex128",
                        "int64", "r24"}) {
    const auto dt = DataType::parse(t);
    for (const Shape& shape : {Shape{}, Shape{1}, Shape{7}, Shape{3, 5}, Shape{2, 3, 4}, Shape{0, 3}}) {
      std::vector<CodecMetadata> cs;
      for (const char* c : GetParam().codecs) {
        std::string s = c;
        // transpose needs a permutation of this rank: reverse the dimensions
        if (s.find("transpose") != std::string::npos) {
          if (shape.size() < 2) continue;
          Json o = Json::array();
          for (std::size_t d = shape.size(); d-- > 0;) o.push_back(d);
          s = Json{{"name", "transpose"}, {"configuration", {{"order", o}}}}.dump();
        }
        cs.push_back(CodecMetadata::from_json(Json::parse(s), "test"));
      }
      auto p = CodecPipeline::from_metadata(cs, ChunkSpec{shape, dt, Bytes(dt.size(), 0)});
      const std::size_t n = static_cast<std::size_t>(shape_size(shape)) * dt.size();
      Bytes in = random_bytes(n, 7, 16);
      if (dt == DataType::bool_t)
        for (auto& x : in) x &= 1;
      ASSERT_EQ(roundtrip(p, in), in) << GetParam().name << " " << t << " " << shape_str(shape);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Codecs, CodecRoundTrip,
    ::testing::Values(
        CodecCase{"bytes_le", {R"({"name":"bytes","configuration":{"endian":"little"}})"}},
        CodecCase{"bytes_be", {R"({"name":"bytes","configuration":{"endian":"big"}})"}},
        CodecCase{"transpose_be", {R"({"name":"transpose"})", R"({"name":"bytes","configuration":{"endian":"big"}})"}},
        CodecCase{"gzip",
                  {R"({"name":"bytes","configuration":{"endian":"little"}})",
                   R"({"name":"gzip","configuration":{"level":1}})"}},
        CodecCase{"gzip0",
                  {R"({"name":"bytes","configuration":{"endian":"little"}})",
                   R"({"name":"gzip","configuration":{"level":0}})"}},
        CodecCase{"zstd_checksum",
                  {R"({"name":"bytes","configuration":{"endian":"little"}})",
                   R"({"name":"zstd","configuration":{"level":3,"checksum":true}})"}},
        CodecCase{"zstd_negative",
                  {R"({"name":"bytes","configuration":{"endian":"little"}})",
                   R"({"name":"zstd","configuration":{"level":-5}})"}},
        CodecCase{
            "blosc_lz4_shuffle",
            {R"({"name":"bytes","configuration":{"endian":"little"}})",
             R"({"name":"blosc","configuration":{"cname":"lz4","clevel":5,"shuffle":"shuffle","typesize":4,"blocksize":0}})"}},
        CodecCase{
            "blosc_zstd_bitshuffle",
            {R"({"name":"bytes","configuration":{"endian":"little"}})",
             R"({"name":"blosc","configuration":{"cname":"zstd","clevel":3,"shuffle":"bitshuffle","typesize":2,"blocksize":0}})"}},
        CodecCase{
            "blosc_blosclz_noshuffle",
            {R"({"name":"bytes","configuration":{"endian":"little"}})",
             R"({"name":"blosc","configuration":{"cname":"blosclz","clevel":9,"shuffle":"noshuffle","blocksize":256}})"}},
        CodecCase{
            "blosc_zlib_lz4hc",
            {R"({"name":"bytes","configuration":{"endian":"little"}})",
             R"({"name":"blosc","configuration":{"cname":"zlib","clevel":1,"shuffle":"shuffle","typesize":8,"blocksize":0}})",
             R"({"name":"blosc","configuration":{"cname":"lz4hc","clevel":1,"shuffle":"noshuffle","typesize":1,"blocksize":0}})"}},
        CodecCase{"zstd_gzip_crc",
                  {R"({"name":"bytes","configuration":{"endian":"little"}})",
                   R"({"name":"zstd","configuration":{"level":1}})", R"({"name":"gzip","configuration":{"level":1}})",
                   R"({"name":"crc32c"})"}}),
    [](const auto& info) { return info.param.name; });

TEST(Codecs, CorruptAndTruncatedInputFailsCleanly) {
  const Bytes in = random_bytes(4096, 3, 8);
  for (
      const char* c :
      {R"({"name":"gzip","configuration":{"level":5}})", R"({"name":"zstd","configuration":{"level":3}})",
       R"({"name":"blosc","configuration":{"cname":"lz4","clevel":5,"shuffle":"shuffle","typesize":2,"blocksize":0}})"}) {
    auto p = pipe({cm(kBytesLE), cm(c)}, {2048});
    const Bytes enc = p.encode(in);
    EXPECT_NE(codec_error(p, Bytes(enc.begin(), enc.end() - 5), in.size()), "") << c << " truncated";
    EXPECT_NE(codec_error(p, Bytes(enc.begin(), enc.begin() + 3), in.size()), "") << c << " 3 bytes";
    EXPECT_NE(codec_error(p, Bytes(), in.size()), "") << c << " empty";
    // a valid stream of the wrong decoded size (a "bomb" for a smaller chunk)
    auto small = pipe({cm(kBytesLE), cm(c)}, {16});
    EXPECT_NE(codec_error(small, enc, 32), "") << c << " oversized";
    // garbage never crashes
    for (unsigned seed = 0; seed < 50; ++seed) {
      Bytes g = enc;
      std::mt19937 rng(seed);
      for (int k = 0; k < 4; ++k) g[rng() % g.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
      Bytes out(in.size());
      try {
        p.decode(g, out);
      } catch (const CodecError&) {
      }
    }
  }
}

TEST(Codecs, DecompressionBombIsRefusedWithoutAllocatingIt) {
  // 64 MiB of zeros compress to a few KiB; decoding into a 1 KiB chunk must fail early.
  auto big = pipe({cm(kBytesLE), cm(R"({"name":"zstd","configuration":{"level":1}})")}, {32 << 20});
  const Bytes enc = big.encode(Bytes(64 << 20, 0));
  auto small = pipe({cm(kBytesLE), cm(R"({"name":"zstd","configuration":{"level":1}})")}, {512});
  EXPECT_NE(codec_error(small, enc, 1024).find("zstd"), std::string::npos);
  auto bigz = pipe({cm(kBytesLE), cm(R"({"name":"gzip","configuration":{"level":1}})")}, {32 << 20});
  const Bytes encz = bigz.encode(Bytes(64 << 20, 0));
  auto smallz = pipe({cm(kBytesLE), cm(R"({"name":"gzip","configuration":{"level":1}})")}, {512});
  EXPECT_NE(codec_error(smallz, encz, 1024).find("gzip"), std::string::npos);
}

// ---- sharding -------------------------------------------------------------------------------------

namespace {
std::string sharding_json(const char* loc, const char* inner_extra = "") {
  return std::string(
             R"({"name":"sharding_indexed","configuration":{"chunk_shape":[2,2],"codecs":[{"name":"bytes","configuration":{"endian":"little"}})") +
         inner_extra +
         R"(],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}],"index_location":")" +
         loc + R"("}})";
}
}  // namespace

TEST(Sharding, LayoutIsByteExact) {
  // 4x4 uint8 shard of 2x2 inner chunks; inner chunk (0,1) all fill -> empty in the index.
  Bytes in(16);
  for (int i = 0; i < 16; ++i) in[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(i + 1);
  for (int r = 0; r < 2; ++r)
    for (int c = 2; c < 4; ++c) in[static_cast<std::size_t>(r) * 4 + static_cast<std::size_t>(c)] = 0;
  for (const char* loc : {"end", "start"}) {
    auto p =
        CodecPipeline::from_metadata({cm(sharding_json(loc).c_str())}, ChunkSpec{{4, 4}, DataType::uint8, Bytes{0}});
    const Bytes enc = p.encode(in);
    const std::size_t index_size = 4 * 16 + 4;
    ASSERT_EQ(enc.size(), 3 * 4 + index_size) << loc;
    const bool end = std::string(loc) == "end";
    const std::uint8_t* idx = enc.data() + (end ? enc.size() - index_size : 0);
    std::uint64_t e[8];
    std::memcpy(e, idx, 64);
    const std::uint64_t base = end ? 0 : index_size;
    EXPECT_EQ(e[0], base);
    EXPECT_EQ(e[1], 4u);
    EXPECT_EQ(e[2], ~std::uint64_t{0});  // empty inner chunk
    EXPECT_EQ(e[3], ~std::uint64_t{0});
    EXPECT_EQ(e[4], base + 4);
    EXPECT_EQ(e[6], base + 8);
    // inner chunk (0,0) holds rows 0-1, cols 0-1
    EXPECT_EQ(
        (Bytes(enc.begin() + static_cast<std::ptrdiff_t>(base), enc.begin() + static_cast<std::ptrdiff_t>(base + 4))),
        (Bytes{1, 2, 5, 6}));
    std::uint32_t crc;
    std::memcpy(&crc, idx + 64, 4);
    EXPECT_EQ(crc, crc32c(std::span<const std::uint8_t>(idx, 64)));
    EXPECT_EQ(roundtrip(p, in), in) << loc;
    // an all-fill shard encodes to nothing
    EXPECT_TRUE(p.encode(Bytes(16, 0)).empty());
  }
}

TEST(Sharding, NestedShardsRoundTrip) {
  const std::string inner =
      R"({"name":"sharding_indexed","configuration":{"chunk_shape":[2,2],"codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":1}}],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}}],"index_location":"start"}})";
  const std::string outer =
      R"({"name":"sharding_indexed","configuration":{"chunk_shape":[4,4],"codecs":[)" + inner +
      R"(],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}]}})";
  auto p = CodecPipeline::from_metadata({cm(outer.c_str())}, ChunkSpec{{8, 8}, DataType::uint16, Bytes{0, 0}});
  const Bytes in = random_bytes(128, 9, 3);
  EXPECT_EQ(roundtrip(p, in), in);
}

TEST(Sharding, ConfigurationErrors) {
  auto spec = ChunkSpec{{4, 4}, DataType::uint8, Bytes{0}};
  EXPECT_THROW(
      CodecPipeline::from_metadata(
          {cm(R"({"name":"sharding_indexed","configuration":{"chunk_shape":[3,2],"codecs":[{"name":"bytes"}],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}}]}})")},
          spec),
      MetadataError);  // 3 does not divide 4
  EXPECT_THROW(
      CodecPipeline::from_metadata(
          {cm(R"({"name":"sharding_indexed","configuration":{"chunk_shape":[2,2],"codecs":[{"name":"bytes"}],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"gzip","configuration":{"level":1}}]}})")},
          spec),
      MetadataError);  // index codecs must have a fixed size
  EXPECT_THROW(
      CodecPipeline::from_metadata(
          {cm(R"({"name":"sharding_indexed","configuration":{"chunk_shape":[2,2],"codecs":[{"name":"bytes"}],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}}],"index_location":"middle"}})")},
          spec),
      MetadataError);
}

TEST(Sharding, CorruptIndexesAreCodecErrors) {
  auto p =
      CodecPipeline::from_metadata({cm(sharding_json("end").c_str())}, ChunkSpec{{4, 4}, DataType::uint8, Bytes{0}});
  const Bytes in = random_bytes(16, 5, 200);
  const Bytes enc = p.encode(in);
  const std::size_t isz = 68;
  auto with_entries = [&](std::vector<std::uint64_t> e) {
    Bytes b(enc.begin(), enc.end() - static_cast<std::ptrdiff_t>(isz));
    Bytes idx(64);
    std::memcpy(idx.data(), e.data(), 64);
    const std::uint32_t crc = crc32c(idx);
    b.insert(b.end(), idx.begin(), idx.end());
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(crc >> (8 * i)));
    return b;
  };
  const auto E = ~std::uint64_t{0};
  EXPECT_NE(codec_error(p, with_entries({0, 4, 4, 4, 8, 4, 1000, 4}), 16).find("outside the shard"), std::string::npos);
  EXPECT_NE(codec_error(p, with_entries({0, 4, 2, 4, 8, 4, 12, 4}), 16).find("overlap"), std::string::npos);
  EXPECT_NE(codec_error(p, with_entries({0, 4, E, 4, 8, 4, 12, 4}), 16).find("half empty"), std::string::npos);
  EXPECT_NE(codec_error(p, with_entries({E - 1, 4, 4, 4, 8, 4, 12, 4}), 16).find("overflow"), std::string::npos);
  EXPECT_NE(codec_error(p, Bytes(enc.begin() + 10, enc.end()), 16), "");  // truncated at the front: bad crc or ranges
  EXPECT_NE(codec_error(p, Bytes(enc.begin(), enc.begin() + 20), 16).find("too small"), std::string::npos);
  Bytes flipped = enc;
  flipped[enc.size() - 10] ^= 0x40;  // inside the index: checksum mismatch
  EXPECT_NE(codec_error(p, flipped, 16).find("crc32c"), std::string::npos);
}
