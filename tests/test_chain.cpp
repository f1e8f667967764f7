// The one codec-chain builder: its order, its defaults (one per codec, from the registry), its
// refusals, and split_chain as its inverse.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "zarrpp/codec/chain.hpp"
#include "zarrpp/zarrpp.hpp"

using namespace zarrpp;

namespace {

std::vector<std::string> names(const std::vector<codec::Any>& cs, const DataType& t) {
  std::vector<std::string> out;
  for (const auto& c : codec::to_metadata(cs, t)) out.push_back(c.name);
  return out;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

const std::string kShuffle = "numcodecs.shuffle";

}  // namespace

TEST(Chain, PartsGoInZarrOrder) {
  codec::ChainSpec s{.filters = {codec::Transpose{{1, 0}}, CodecMetadata{kShuffle, Json::object()}},
                     .compressors = std::vector<codec::Any>{codec::Gzip{}},
                     .crc32c = true};
  const auto c = codec::build_chain(s, DataType::int32, {4, 4});
  // numcodecs' shuffle is a filter in zarr-python 2 and works on bytes: after the serializer.
  EXPECT_EQ(names(c.codecs, DataType::int32),
            (std::vector<std::string>{"transpose", "bytes", kShuffle, "gzip", "crc32c"}));
  EXPECT_EQ(c.grid_chunks, (Shape{4, 4}));
}

TEST(Chain, DefaultsComeFromTheDataTypeAndTheRegistry) {
  codec::ChainSpec s{.compressors = std::nullopt};  // "auto"
  EXPECT_EQ(names(codec::build_chain(s, DataType::float64, {8}).codecs, DataType::float64),
            (std::vector<std::string>{"bytes", "zstd"}));
  EXPECT_EQ(names(codec::build_chain(s, DataType::string_t, {8}).codecs, DataType::string_t),
            (std::vector<std::string>{"vlen-utf8", "zstd"}));
  EXPECT_EQ(names(codec::build_chain({}, DataType::bytes_t, {8}).codecs, DataType::bytes_t),
            (std::vector<std::string>{"vlen-bytes"}));
}

TEST(Chain, ACodecHasOneDefaultEverywhere) {
  // The typed struct, the registry (Python's classes read it), the CLI shorthand and a
  // configuration left empty at creation all state the same values.
  const auto t = DataType::int16;
  for (const std::string name : {"zstd", "gzip", "blosc"}) {
    const codec::Any typed = name == "zstd"   ? codec::Any(codec::Zstd{})
                             : name == "gzip" ? codec::Any(codec::Gzip{})
                                              : codec::Any(codec::Blosc{});
    const Json from_struct = *codec::to_metadata(typed, t).configuration;
    const Json from_shorthand = codec::from_shorthand(name).configuration.value_or(Json::object());
    auto created = Array::create(
        MemoryStore::create(),
        ArraySpec{.shape = {4},
                  .chunks = {4},
                  .dtype = t,
                  .codecs = std::vector<codec::Any>{codec::BytesCodec{}, CodecMetadata{name, Json::object()}}});
    const Json from_empty = *created.metadata().codecs.at(1).configuration;
    const Json defaults = codec::default_config(name);
    for (const auto& [key, value] : defaults.items()) {
      EXPECT_EQ(from_struct.at(key), value) << name << "." << key;
      EXPECT_EQ(from_shorthand.at(key), value) << name << "." << key;
      EXPECT_EQ(from_empty.at(key), value) << name << "." << key;
    }
    EXPECT_EQ(from_struct, from_empty) << name;
  }
  // zarr-python 3's defaults.
  EXPECT_EQ(codec::default_config("zstd"), Json::parse(R"({"level": 0, "checksum": false})"));
  EXPECT_EQ(codec::default_config("gzip"), Json::parse(R"({"level": 5})"));
  EXPECT_EQ(codec::default_config("blosc"), Json::parse(R"({"cname": "zstd", "clevel": 5, "blocksize": 0})"));
  // numcodecs' own (level 1), for the codecs of a v2 array.
  EXPECT_EQ(codec::default_config("numcodecs.zstd"), Json::parse(R"({"level": 1})"));
  EXPECT_EQ(codec::default_config("numcodecs.gzip"), Json::parse(R"({"level": 1})"));
  EXPECT_EQ(codec::default_config("no-such-codec"), Json::object());
}

TEST(Chain, ShardsWrapTheChain) {
  codec::ChainSpec s{.crc32c = true, .shards = Shape{8, 4}};
  const auto c = codec::build_chain(s, DataType::uint8, {4, 2});
  ASSERT_EQ(c.codecs.size(), 1u);
  EXPECT_EQ(c.grid_chunks, (Shape{8, 4}));
  const auto& sh = std::get<std::shared_ptr<codec::Sharding>>(c.codecs[0]);
  EXPECT_EQ(sh->chunk_shape, (Shape{4, 2}));
  EXPECT_EQ(names(sh->codecs, DataType::uint8), (std::vector<std::string>{"bytes", "crc32c"}));
}

TEST(Chain, AChecksumIsNotAddedTwice) {
  codec::ChainSpec s{.compressors = std::vector<codec::Any>{codec::Zstd{}, codec::Crc32c{}}, .crc32c = true};
  EXPECT_EQ(names(codec::build_chain(s, DataType::int8, {4}).codecs, DataType::int8),
            (std::vector<std::string>{"bytes", "zstd", "crc32c"}));
}

TEST(Chain, RefusalsNameThePart) {
  const auto t = DataType::int32;
  auto build = [&](codec::ChainSpec s, Shape chunks = {4}) {
    return message_of([&] { codec::build_chain(s, t, chunks); });
  };
  EXPECT_EQ(build({.filters = {codec::Zstd{}}}),
            "filters[0]: 'zstd' is not an array -> array codec (it is a "
            "bytes -> bytes codec)");
  EXPECT_EQ(build({.compressors = std::vector<codec::Any>{codec::Zstd{}, codec::BytesCodec{}}}),
            "compressors[1]: 'bytes' is not a bytes -> bytes codec (it is an array -> bytes codec)");
  EXPECT_EQ(build({.serializer = codec::Gzip{}}),
            "serializer: 'gzip' is not an array -> bytes codec (it is a bytes -> bytes codec)");
  EXPECT_EQ(build({.serializer = CodecMetadata{"vlen-utf8", Json::object()}}),
            "serializer: 'vlen-utf8' cannot serialise int32 elements");
  EXPECT_EQ(message_of([] { codec::build_chain({}, DataType::string_t, {4}); }), "(no error)");
  EXPECT_EQ(message_of([] { codec::build_chain({.serializer = codec::BytesCodec{}}, DataType::string_t, {4}); }),
            "serializer: 'bytes' cannot serialise string elements (use vlen-utf8)");
  EXPECT_EQ(build({.compressors = std::vector<codec::Any>{CodecMetadata{"lzw", Json::object()}}}),
            "compressors[0]: unknown codec 'lzw'");
  EXPECT_EQ(build({.shards = Shape{6}}), "shards[0]: 6 must be a positive multiple of chunks[0] = 4");
  EXPECT_EQ(build({.shards = Shape{8, 8}}), "shards: (8, 8) has 2 entries, the chunks (4,) have 1");
}

TEST(Chain, SplitIsTheInverseOfBuild) {
  const auto t = DataType::uint16;
  for (const bool sharded : {false, true}) {
    codec::ChainSpec s{.filters = {codec::Transpose{{1, 0}}},
                       .serializer = codec::BytesCodec{codec::Endian::big},
                       .compressors = std::vector<codec::Any>{codec::Gzip{.level = 2}},
                       .crc32c = true};
    if (sharded) s.shards = Shape{4, 6};
    const auto built = codec::build_chain(s, t, {2, 3});
    const auto meta = codec::to_metadata(built.codecs, t);
    const auto [parts, chunks] = codec::split_chain(meta, built.grid_chunks);
    EXPECT_EQ(chunks, (Shape{2, 3}));
    EXPECT_EQ(parts.shards, s.shards);
    EXPECT_TRUE(parts.crc32c);
    const auto again = codec::build_chain(parts, t, chunks);
    EXPECT_EQ(codec::to_metadata(again.codecs, t), meta) << sharded;
    EXPECT_EQ(again.grid_chunks, built.grid_chunks);
  }
}

TEST(Chain, ArraySpecPartsAndTheWholePipelineExcludeEachOther) {
  auto make = [](ArraySpec s) { return message_of([&] { Array::create(MemoryStore::create(), s); }); };
  ArraySpec both{.shape = {4}, .chunks = {4}, .dtype = DataType::int8, .compressor = codec::Zstd{}};
  both.compressors = {codec::Gzip{}};
  EXPECT_EQ(make(both), "ArraySpec: give `compressor` or `compressors`, not both");
  ArraySpec with_codecs{
      .shape = {4}, .chunks = {4}, .dtype = DataType::int8, .codecs = std::vector<codec::Any>{codec::BytesCodec{}}};
  with_codecs.filters = {codec::Transpose{{0}}};
  EXPECT_EQ(make(with_codecs),
            "ArraySpec: `codecs` gives the whole pipeline, so filters cannot be given too (put them into `codecs` "
            "instead)");
  ArraySpec fortran{.shape = {2, 3}, .chunks = {2, 3}, .dtype = DataType::int8};
  fortran.order = 'F';
  EXPECT_EQ(make(fortran), "order='F' is a Zarr v2 setting; for Zarr v3 state a transpose filter instead");
  fortran.zarr_format = 2;
  auto z = Array::create(MemoryStore::create(), fortran);
  EXPECT_EQ(z.metadata().v2.order, 'F');
}
