// Hostile and careless input, by class (issue: data safety): each case is refused quickly, in
// bounded memory, with a specific error, and changes nothing.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <chrono>
#include <cmath>
#include <limits>
#include <string>

#include "common.hpp"
#include "zarrpp/zarrpp.hpp"

using namespace zarrpp;
using namespace zarrpp::test;

namespace {
const char* kArrayHead =
    R"({"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "int8",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0, "codecs": [{"name": "bytes"}], "attributes": )";
}  // namespace

// ---- JSON: nesting, many keys, amplification ------------------------------------------------------

TEST(HostileJson, DeepNestingIsRefusedNotACrash) {
  auto store = MemoryStore::create();
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  store->set("zarr.json", B(std::string(kArrayHead) + R"({"a": )" + deep + "}}"));
  expect_error<MetadataError>([&] { Array::open(store); }, ErrorCode::invalid_metadata,
                              {"nested deeper than 256 levels"});
  // Just under the cap is fine.
  const std::string ok = std::string(250, '[') + std::string(250, ']');
  store->set("zarr.json", B(std::string(kArrayHead) + R"({"a": )" + ok + "}}"));
  EXPECT_NO_THROW(Array::open(store));
  // Attributes given in code are held to the same cap.
  auto z = Array::create(MemoryStore::create(), {.shape = {4}, .chunks = {2}, .dtype = DataType::int8});
  Json v = Json::array();
  for (int i = 0; i < 300; ++i) v = Json::array({v});
  expect_error<MetadataError>([&] { z.update_attributes({{"deep", v}}); }, ErrorCode::invalid_metadata,
                              {"nested deeper"});
  EXPECT_TRUE(z.attributes().empty());
}

TEST(HostileJson, ManyAttributesParseInLinearTime) {
  std::string attrs = "{";
  for (int i = 0; i < 200000; ++i) attrs += (i ? ",\"k" : "\"k") + std::to_string(i) + "\": " + std::to_string(i);
  attrs += "}";
  auto store = MemoryStore::create();
  store->set("zarr.json", B(std::string(kArrayHead) + attrs + "}"));
  const auto t0 = std::chrono::steady_clock::now();
  auto z = Array::open(store);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(z.attributes().size(), 200000u);
  EXPECT_EQ(z.attributes()["k199999"], 199999);
  EXPECT_LT(secs, 20.0) << "quadratic parsing took 48 s for this document";
  // Keys keep their order; a repeated key keeps its last value (as Python's json does).
  store->set("zarr.json", B(std::string(kArrayHead) + R"({"b": 1, "a": 2, "b": 3}})"));
  const auto a = Array::open(store).attributes();
  EXPECT_EQ(a.dump(), R"({"b":3,"a":2})");
}

TEST(HostileJson, RewritingMetadataNeverAmplifiesIt) {
  auto store = MemoryStore::create();
  // 20 KB of nested attributes: indenting every level on its own line would make MBs of spaces.
  std::string nested;
  for (int i = 0; i < 200; ++i) nested += "[1, ";
  nested += "2";
  for (int i = 0; i < 200; ++i) nested += "]";
  std::string attrs = "{";
  for (int i = 0; i < 20; ++i) attrs += (i ? ",\"n" : "\"n") + std::to_string(i) + "\": " + nested;
  attrs += "}";
  store->set("zarr.json", B(std::string(kArrayHead) + attrs + "}"));
  const auto before = store->get("zarr.json")->size();
  auto z = Array::open(store);
  z.resize({6});
  const auto after = store->get("zarr.json")->size();
  EXPECT_LT(after, 2 * before) << before << " bytes became " << after;
  EXPECT_EQ(Array::open(store).attributes(), z.attributes());
}

// ---- sizes from untrusted stores are checked before allocating ---------------------------------------

TEST(HostileStore, ValuesLargerThanTheyCanBeAreRefusedBeforeReading) {
  TempDir dir("big");
  auto store = FileStore::open(dir.path());
  auto z =
      Array::create(store, "z", {.shape = {4}, .chunks = {2}, .dtype = DataType::int8, .compressor = codec::Zstd{}});
  z.fill<std::int8_t>(1);
  // A "chunk" of 64 MiB where a few bytes are the most it can hold: refused, not read.
  auto plant = [&](const char* name) {
    std::ofstream f(dir / "z" / "c" / name, std::ios::binary | std::ios::trunc);
    f.seekp((64 << 20) - 1);
    f.put('\0');
  };
  plant("0");
  expect_error<StoreError>([&] { (void)z.read(); }, ErrorCode::limit_exceeded, {"z/c/0", "67108864 bytes"});
  // Uncompressed chunks are streamed: the size is checked before anything is read.
  auto u = Array::create(store, "u", {.shape = {4}, .chunks = {2}, .dtype = DataType::int8});
  u.fill<std::int8_t>(1);
  {
    std::ofstream f(dir / "u" / "c" / "0", std::ios::binary | std::ios::trunc);
    f.seekp((64 << 20) - 1);
    f.put('\0');
  }
  expect_error<CodecError>([&] { (void)u.read(); }, ErrorCode::corrupt_data, {"c/0", "expected 2 bytes", "67108864"});
  expect_error<StoreError>([&] { (void)store->get("z/c/0", ByteRange::all(), 100); }, ErrorCode::limit_exceeded,
                           {"more than the 100"});
  EXPECT_EQ(store->get("z/c/0", ByteRange::range(0, 10), 100)->size(), 10u);
}

TEST(HostileStore, FifosAndDirectoriesAreErrorsNotHangsOrMissing) {
  TempDir dir("fifo");
  auto store = FileStore::open(dir.path());
  auto z = Array::create(store, {.shape = {4}, .chunks = {2}, .dtype = DataType::int8});
  z.fill<std::int8_t>(1);
  std::filesystem::remove(dir / "c" / "0");
  ASSERT_EQ(::mkfifo((dir / "c" / "0").c_str(), 0644), 0);
  const auto t0 = std::chrono::steady_clock::now();
  expect_error<StoreError>([&] { (void)z.read(); }, ErrorCode::store_failure, {"FIFO"});
  std::filesystem::remove(dir / "c" / "0");
  std::filesystem::create_directory(dir / "c" / "0");
  expect_error<StoreError>([&] { (void)z.read(); }, ErrorCode::store_failure, {"directory"});
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
}

// ---- JSON as Python writes it (issue 30, item 5) ---------------------------------------------------
// Python's json (and so zarr-python 2 and 3) writes NaN / Infinity / -Infinity bare and an
// undecodable file name's lone surrogate as "\udcff". zarrpp reads them (NaN and infinities as
// doubles, lone surrogates as WTF-8) and writes them back as zarr-python does.

namespace {
const std::string kPythonAttrs =
    R"({"b": NaN, "a": [Infinity, -Infinity, 1.5], "name": "x\udcffy", "e": "\u00e9\ud83d\ude00", "hi": "\ud83d"})";
// zarr.util.json_dumps (zarr 2.13) of json.loads(kPythonAttrs), byte for byte.
const std::string kZarr2Attrs =
    "{\n    \"a\": [\n        Infinity,\n        -Infinity,\n        1.5\n    ],\n    \"b\": NaN,\n"
    "    \"e\": \"\\u00e9\\ud83d\\ude00\",\n    \"hi\": \"\\ud83d\",\n    \"name\": \"x\\udcffy\"\n}";
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

TEST(HostileJson, NanInfinityAndLoneSurrogatesReadAsPythonReadsThem) {
  const Json j = parse_json_document(kPythonAttrs, "attributes");
  EXPECT_TRUE(std::isnan(j["b"].get<double>()));
  EXPECT_EQ(j["a"][0].get<double>(), kInf);
  EXPECT_EQ(j["a"][1].get<double>(), -kInf);
  EXPECT_EQ(j["name"].get<std::string>(), "x\xED\xB3\xBFy");         // U+DCFF in WTF-8
  EXPECT_EQ(j["e"].get<std::string>(), "\xC3\xA9\xF0\x9F\x98\x80");  // a surrogate pair is one code point
  EXPECT_EQ(j["hi"].get<std::string>(), "\xED\xA0\xBD");
  EXPECT_EQ(parse_json_document("1e999", "x").get<double>(), kInf);  // as Python: beyond range is infinite
  EXPECT_EQ(parse_json_document("-1e999", "x").get<double>(), -kInf);
  EXPECT_EQ(parse_json_document("0.0000000000001e-400", "x").get<double>(), 0.0);
  // Integers beyond 64 bits are Python ints: as a double they would read back as a float, and
  // rounded; refused, naming the number.
  for (const char* big : {"1000000000000000000000", "18446744073709551616", "-9223372036854775809"})
    expect_throw_with<MetadataError>([&] { parse_json_document(std::string("{\"a\": ") + big + "}", "x"); },
                                     {big, "(at a)", "does not fit 64 bits", "store it as a string"});
  EXPECT_EQ(parse_json_document("1000000000000000000000.0", "x").get<double>(), 1e21);
  EXPECT_TRUE(parse_json_document("18446744073709551615", "x").is_number_unsigned());
  EXPECT_TRUE(parse_json_document("-9223372036854775808", "x").is_number_integer());
  // What Python's json refuses stays refused.
  for (const char* bad :
       {"nan",     "NAN",      "+Infinity",        "-NaN",   "Inf", "infinity", "[1,]", "{\"a\":1,}", "\"\\ud83\"",
        "\"\\x\"", "\"\xff\"", "\"\xED\xB3\xBF\"", "01",     "1.",  ".5",       "-",    "[1] x",      "\"a\nb\"",
        "",        "[",        "{\"a\" 1}",        "{1: 2}", "tru", "NaNa"})
    EXPECT_THROW(parse_json_document(bad, "t"), MetadataError) << bad;
}

TEST(HostileJson, NanAndLoneSurrogatesAreWrittenAsZarrPythonWritesThem) {
  const Json j = parse_json_document(kPythonAttrs, "attributes");
  EXPECT_EQ(dump_v2_attributes(j), kZarr2Attrs);  // .zattrs as zarr-python 2 writes it
  // zarr.json as zarr-python 3 writes NaN and lone surrogates (json.dumps, allow_nan); other
  // non-ASCII stays UTF-8, as zarrpp always wrote it.
  EXPECT_EQ(dump_json(j),
            "{\n  \"b\": NaN,\n  \"a\": [\n    Infinity,\n    -Infinity,\n    1.5\n  ],\n  \"name\": \"x\\udcffy\",\n"
            "  \"e\": \"\xC3\xA9\xF0\x9F\x98\x80\",\n  \"hi\": \"\\ud83d\"\n}");
  EXPECT_EQ(json_text(j),
            "{\"b\":NaN,\"a\":[Infinity,-Infinity,1.5],\"name\":\"x\\udcffy\",\"e\":\"\xC3\xA9\xF0\x9F\x98\x80\","
            "\"hi\":\"\\ud83d\"}");
  EXPECT_EQ(json_text(parse_json_document(dump_json(j), "x")), json_text(j));
  EXPECT_EQ(dump_v2_attributes(parse_json_document(kZarr2Attrs, "x")), kZarr2Attrs);
  // Bytes that are not UTF-8 (nor a surrogate's WTF-8) are never written into a document.
  EXPECT_THROW(dump_json(Json{{"a", "\xff"}}), MetadataError);
  EXPECT_EQ(json_text(Json{{"a", "\xff"}}), "{\"a\":\"\xEF\xBF\xBD\"}");
}

TEST(HostileJson, AnAttributeNeverMakesDataUnreachable) {
  // Zarr v2 as zarr-python 2 stores it: NaN in the root's .zattrs, NaN and a lone surrogate in an
  // array's.
  auto store = MemoryStore::create();
  store->set(".zgroup", B("{\n    \"zarr_format\": 2\n}"));
  store->set(".zattrs", B("{\n    \"missing\": NaN\n}"));
  store->set("x/.zarray", B(R"({"chunks": [2], "compressor": null, "dtype": "<f8", "fill_value": "NaN", "filters": null,
                                "order": "C", "shape": [4], "zarr_format": 2})"));
  store->set("x/.zattrs", B(kZarr2Attrs));
  auto g = Group::open(store);
  EXPECT_TRUE(std::isnan(g.attributes()["missing"].get<double>()));
  const auto kids = g.children();
  ASSERT_EQ(kids.size(), 1u);
  EXPECT_EQ(kids[0].error, "");
  auto z = Array::open(store, "x");
  EXPECT_EQ(z.attributes()["name"].get<std::string>(), "x\xED\xB3\xBFy");
  EXPECT_TRUE(std::isnan(z.read({}).to_vector<double>()[0]));
  z.update_attributes({{"zz", 1}});  // written back as zarr-python 2 writes it
  EXPECT_EQ(S(*store->get("x/.zattrs")), kZarr2Attrs.substr(0, kZarr2Attrs.size() - 2) + ",\n    \"zz\": 1\n}");
  // Zarr v3: NaN in a root group's and an array's attributes.
  auto s3 = MemoryStore::create();
  s3->set("zarr.json", B(R"({"zarr_format": 3, "node_type": "group", "attributes": {"valid_range": [NaN, 1]}})"));
  s3->set("a/zarr.json", B(std::string(kArrayHead) + R"({"_FillValue": NaN, "f": "\udcff"}})"));
  auto g3 = Group::open(s3);
  EXPECT_TRUE(std::isnan(g3.attributes()["valid_range"][0].get<double>()));
  EXPECT_EQ(g3.children().at(0).error, "");
  auto a3 = Array::open(s3, "a");
  a3.update_attributes({{"k", 2}});
  EXPECT_NE(S(*s3->get("a/zarr.json")).find(R"("_FillValue": NaN,
    "f": "\udcff",
    "k": 2)"),
            std::string::npos)
      << S(*s3->get("a/zarr.json"));
}
