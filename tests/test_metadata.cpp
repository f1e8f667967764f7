// zarr.json <-> typed structs: every data type and fill value encoding, must_understand rules,
// stable output, and clear errors for bad input.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <limits>

#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>

#include "common.hpp"
#include "zarrpp/zarrpp.hpp"

using namespace zarrpp;

namespace {
Json base_array() {
  return Json::parse(R"({
    "zarr_format": 3, "node_type": "array", "shape": [10, 8], "data_type": "int32",
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 4]}},
    "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
    "fill_value": 0,
    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
    "attributes": {"b": 1, "a": [1, 2]}
  })");
}

std::string error_of(const Json& j) {
  try {
    ArrayMetadata::from_json(j);
  } catch (const MetadataError& e) {
    return e.what();
  }
  return "";
}

template <class T>
T fill_as(const ArrayMetadata& m) {
  T v;
  std::memcpy(&v, m.fill_value.bytes.data(), sizeof v);
  return v;
}
}  // namespace

TEST(Metadata, ParsesTheSpecExampleAndRoundTripsLosslessly) {
  const auto m = ArrayMetadata::from_json(base_array());
  EXPECT_EQ(m.shape, (Shape{10, 8}));
  EXPECT_EQ(m.data_type, DataType::int32);
  EXPECT_EQ(m.chunk_grid.kind, ChunkGridMetadata::Kind::Regular);
  EXPECT_EQ(m.chunk_grid.chunk_shape, (Shape{4, 4}));
  EXPECT_EQ(m.chunk_key_encoding.separator, '/');
  // attributes keep their order
  EXPECT_EQ(m.attributes.dump(), R"({"b":1,"a":[1,2]})");
  const std::string once = m.dump();
  const auto m2 = ArrayMetadata::parse(once);
  EXPECT_EQ(m2.dump(), once);  // stable: same metadata, same bytes
  EXPECT_EQ(Json::parse(once), base_array());
}

TEST(Metadata, WritesTheSameBytesAsTheIndependentFixtureWriter) {
  // The fixture's zarr.json is a plain 2-space-indented document in the core field order.
  const auto m = ArrayMetadata::parse(R"({"zarr_format":3,"node_type":"array","shape":[9,4],"data_type":"int32",
    "chunk_grid":{"name":"regular_bounded","configuration":{"chunk_shape":[4,4],"origin":[0,0],"lower_bound":[-3,0]}},
    "chunk_key_encoding":{"name":"default","configuration":{"separator":"/"}},"fill_value":0,
    "codecs":[{"name":"bytes","configuration":{"endian":"little"}}],"attributes":{}})");
  const std::string expected =
      "{\n  \"zarr_format\": 3,\n  \"node_type\": \"array\",\n  \"shape\": [\n    9,\n    4\n  ],\n"
      "  \"data_type\": \"int32\",\n  \"chunk_grid\": {\n    \"name\": \"regular_bounded\",\n"
      "    \"configuration\": {\n      \"chunk_shape\": [\n        4,\n        4\n      ],\n"
      "      \"origin\": [\n        0,\n        0\n      ],\n      \"lower_bound\": [\n        -3,\n        0\n      "
      "]\n"
      "    }\n  },\n  \"chunk_key_encoding\": {\n    \"name\": \"default\",\n    \"configuration\": {\n"
      "      \"separator\": \"/\"\n    }\n  },\n  \"fill_value\": 0,\n  \"codecs\": [\n    {\n      \"name\": "
      "\"bytes\",\n"
      "      \"configuration\": {\n        \"endian\": \"little\"\n      }\n    }\n  ],\n  \"attributes\": {}\n}";
  EXPECT_EQ(m.dump(), expected);
}

TEST(Metadata, EveryCoreDataTypeParsesAndPrints) {
  for (const char* n : {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
                        "float32", "float64", "complex64", "complex128", "r8", "r16", "r24", "r128"}) {
    EXPECT_EQ(DataType::parse(n).name(), n);
  }
  EXPECT_EQ(DataType::parse("r24").size(), 3u);
  EXPECT_EQ(DataType::parse("complex128").size(), 16u);
  for (const char* bad : {"r0", "r7", "r", "int", "float128", "R8", "r08", "str", ""})
    EXPECT_THROW(DataType::parse(bad), MetadataError) << bad;
}

struct FillCase {
  const char* dtype;
  const char* json;
  const char* expect_json;  // what is written back
};

// Named by its data type in test listings (not by its pointers' bytes, which change every run).
void PrintTo(const FillCase& c, std::ostream* os) { *os << c.dtype; }

class FillValues : public ::testing::TestWithParam<FillCase> {};

TEST_P(FillValues, RoundTrip) {
  const auto& c = GetParam();
  const auto t = DataType::parse(c.dtype);
  const Bytes b = parse_fill_value(Json::parse(c.json), t);
  ASSERT_EQ(b.size(), t.size());
  const Json out = fill_value_to_json(b, t);
  EXPECT_EQ(out.dump(), c.expect_json);
  EXPECT_EQ(parse_fill_value(out, t), b);  // bit-exact
}

INSTANTIATE_TEST_SUITE_P(
    Metadata, FillValues,
    ::testing::Values(
        FillCase{"bool", "true", "true"}, FillCase{"bool", "false", "false"}, FillCase{"int8", "-128", "-128"},
        FillCase{"uint8", "255", "255"}, FillCase{"int16", "-32768", "-32768"}, FillCase{"uint16", "65535", "65535"},
        FillCase{"int32", "-2147483648", "-2147483648"}, FillCase{"uint32", "4294967295", "4294967295"},
        FillCase{"int64", "-9223372036854775808", "-9223372036854775808"},
        FillCase{"int64", "9223372036854775807", "9223372036854775807"},
        FillCase{"uint64", "18446744073709551615", "18446744073709551615"}, FillCase{"float32", "1.5", "1.5"},
        FillCase{"float64", "-0.0", "-0.0"}, FillCase{"float64", "0.1", "0.1"},
        FillCase{"float32", "\"NaN\"", "\"NaN\""}, FillCase{"float64", "\"Infinity\"", "\"Infinity\""},
        FillCase{"float16", "\"-Infinity\"", "\"-Infinity\""}, FillCase{"float16", "0.5", "0.5"},
        FillCase{"float32", "\"0x7fc00000\"", "\"NaN\""}, FillCase{"float32", "\"0x7fc00001\"", "\"0x7fc00001\""},
        FillCase{"float64", "\"0x7ff0000000000001\"", "\"0x7ff0000000000001\""},
        FillCase{"float16", "\"0x7e01\"", "\"0x7e01\""}, FillCase{"float32", "\"0x3f800000\"", "1.0"},
        FillCase{"complex64", "[1.0, \"NaN\"]", "[1.0,\"NaN\"]"},
        FillCase{"complex128", "[\"-Infinity\", \"0x7ff8000000000001\"]", "[\"-Infinity\",\"0x7ff8000000000001\"]"},
        FillCase{"r16", "[0, 255]", "[0,255]"}, FillCase{"r24", "[1, 2, 3]", "[1,2,3]"}));

// What callers give for a new array (Python's fill_value=, ArraySpec::fill_value) -> zarr.json's form.
TEST(Metadata, CanonicalFillValueTakesCallersForms) {
  EXPECT_EQ(canonical_fill_value(Json(3.0), DataType::int32), Json(3));
  EXPECT_EQ(canonical_fill_value(Json(-2.0), DataType::uint8), Json(-2));  // parse_fill_value then refuses it
  EXPECT_THROW(parse_fill_value(canonical_fill_value(Json(-2.0), DataType::uint8), DataType::uint8), MetadataError);
  EXPECT_THROW(canonical_fill_value(Json(3.5), DataType::int32), MetadataError);
  EXPECT_THROW(canonical_fill_value(Json(1e300), DataType::int64), MetadataError);
  EXPECT_EQ(canonical_fill_value(Json(1), DataType::bool_t), Json(true));
  EXPECT_EQ(canonical_fill_value(Json(0), DataType::bool_t), Json(false));
  EXPECT_EQ(canonical_fill_value(Json(2), DataType::bool_t), Json(2));  // refused by parse_fill_value
  EXPECT_EQ(canonical_fill_value(Json(1.5), DataType::complex64), Json::parse("[1.5, 0.0]"));
  EXPECT_EQ(canonical_fill_value(Json::binary({1, 2}), DataType::parse("r16")), Json::parse("[1, 2]"));
  EXPECT_EQ(canonical_fill_value(Json::binary({'a', 'b'}), DataType::bytes_t), Json("YWI="));
  EXPECT_THROW(canonical_fill_value(Json::binary({0, 0, 0, 0}), DataType::float32), MetadataError);
  EXPECT_EQ(canonical_fill_value(Json("NaN"), DataType::float32), Json("NaN"));  // the stored forms pass as they are
}

TEST(Metadata, NanPayloadsSurviveBitExactly) {
  const auto b = parse_fill_value("0x7fc00123", DataType::float32);
  std::uint32_t bits;
  std::memcpy(&bits, b.data(), 4);
  EXPECT_EQ(bits, 0x7fc00123u);
  EXPECT_EQ(fill_value_to_json(b, DataType::float32), "0x7fc00123");
  const auto nan64 = parse_fill_value("NaN", DataType::float64);
  std::uint64_t b64;
  std::memcpy(&b64, nan64.data(), 8);
  EXPECT_EQ(b64, 0x7ff8000000000000ull);
}

TEST(Metadata, Float16ConversionIsCorrect) {
  EXPECT_EQ(float16(1.0f).bits, 0x3c00);
  EXPECT_EQ(float16(-2.0f).bits, 0xc000);
  EXPECT_EQ(float16(65504.0f).bits, 0x7bff);
  EXPECT_EQ(float16(1e6f).bits, 0x7c00);               // overflow to inf
  EXPECT_EQ(float16(5.960464477539063e-08f).bits, 1);  // smallest subnormal
  for (std::uint16_t b = 0; b < 0x7c00; ++b)           // every finite positive value round-trips
    ASSERT_EQ(float16(static_cast<float>(float16::from_bits(b))).bits, b) << b;
}

TEST(Metadata, RejectsOutOfRangeAndMistypedFillValues) {
  const std::pair<const char*, const char*> bad[] = {{"uint8", "256"},       {"uint8", "-1"},
                                                     {"int8", "128"},        {"int32", "1.5"},
                                                     {"int64", "\"1\""},     {"bool", "0"},
                                                     {"float32", "1e300"},   {"float32", "\"nan\""},
                                                     {"float32", "\"0x\""},  {"float32", "\"0x123456789\""},
                                                     {"float64", "null"},    {"complex64", "1.0"},
                                                     {"complex64", "[1.0]"}, {"r16", "[1]"},
                                                     {"r16", "[1, 256]"},    {"uint64", "18446744073709551616"}};
  for (const auto& [t, j] : bad) {
    try {
      parse_fill_value(Json::parse(j), DataType::parse(t));
      ADD_FAILURE() << t << " " << j << " was accepted";
    } catch (const MetadataError& e) {
      EXPECT_NE(std::string(e.what()).find("fill_value"), std::string::npos) << e.what();
    }
  }
}

TEST(Metadata, MissingAndMistypedFieldsNameTheField) {
  for (const char* f :
       {"shape", "data_type", "chunk_grid", "chunk_key_encoding", "fill_value", "codecs", "zarr_format", "node_type"}) {
    Json j = base_array();
    j.erase(f);
    EXPECT_NE(error_of(j).find(f), std::string::npos) << f << ": " << error_of(j);
  }
  Json j = base_array();
  j["zarr_format"] = 2;
  EXPECT_NE(error_of(j).find("zarr_format"), std::string::npos);
  j = base_array();
  j["shape"] = {10, -1};
  EXPECT_NE(error_of(j).find("shape[1]"), std::string::npos);
  j = base_array();
  j["shape"] = {10, 8.0};
  EXPECT_NE(error_of(j).find("shape[1]"), std::string::npos);
  j = base_array();
  j["shape"] = {10, true};
  EXPECT_NE(error_of(j).find("shape[1]"), std::string::npos);
  j = base_array();
  j["shape"] = {4294967296LL, 4294967296LL};
  EXPECT_NE(error_of(j).find("overflows"), std::string::npos);
  j = base_array();
  j["chunk_grid"]["configuration"]["chunk_shape"] = {4};
  EXPECT_NE(error_of(j).find("chunk_shape"), std::string::npos);
  j = base_array();
  j["chunk_grid"]["configuration"]["chunk_shape"] = {4, 0};
  EXPECT_NE(error_of(j).find("chunk_shape[1]"), std::string::npos);
  j = base_array();
  j["dimension_names"] = {"x"};
  EXPECT_NE(error_of(j).find("dimension_names"), std::string::npos);
  j = base_array();
  j["codecs"] = Json::array();
  EXPECT_NE(error_of(j).find("codecs"), std::string::npos);
  j = base_array();
  j["attributes"] = 3;
  EXPECT_NE(error_of(j).find("attributes"), std::string::npos);
  j = base_array();
  j["chunk_key_encoding"]["configuration"]["separator"] = "-";
  EXPECT_NE(error_of(j).find("separator"), std::string::npos);
  EXPECT_THROW(ArrayMetadata::parse("{\"zarr_format\": 3,"), MetadataError);
  // Found by fuzz_metadata: a number beyond double's range is an out_of_range, not a parse error.
  EXPECT_THROW(ArrayMetadata::parse("33333333333333e33333"), MetadataError);
  EXPECT_THROW(ArrayMetadata::parse(R"({"zarr_format": 3e400})"), MetadataError);
  EXPECT_THROW(GroupMetadata::parse("1e999"), MetadataError);
  EXPECT_THROW(ArrayMetadata::parse("[]"), MetadataError);
}

TEST(Metadata, MustUnderstandRules) {
  Json j = base_array();
  j["my_extension"] = {{"must_understand", false}, {"value", 42}};
  const auto m = ArrayMetadata::from_json(j);
  EXPECT_EQ(m.extra_fields["my_extension"]["value"], 42);
  EXPECT_EQ(Json::parse(m.dump())["my_extension"], j["my_extension"]);  // kept, written back unchanged

  j = base_array();
  j["my_extension"] = {{"value", 42}};
  EXPECT_THROW(ArrayMetadata::from_json(j), UnsupportedError);
  j = base_array();
  j["my_extension"] = 5;
  EXPECT_THROW(ArrayMetadata::from_json(j), UnsupportedError);
  // must_understand: false is not allowed for the grid, key encoding or data type
  j = base_array();
  j["chunk_grid"]["must_understand"] = false;
  EXPECT_THROW(ArrayMetadata::from_json(j), MetadataError);
  j = base_array();
  j["data_type"] = {{"name", "int32"}, {"must_understand", false}};
  EXPECT_THROW(ArrayMetadata::from_json(j), MetadataError);
  // unknown grids and key encodings are refused
  j = base_array();
  j["chunk_grid"]["name"] = "hexagonal";
  EXPECT_NE(error_of(j).find("hexagonal"), std::string::npos);
  j = base_array();
  j["chunk_key_encoding"]["name"] = "fancy";
  EXPECT_NE(error_of(j).find("fancy"), std::string::npos);
  // storage transformers: none supported
  j = base_array();
  j["storage_transformers"] = Json::array({{{"name", "x"}}});
  EXPECT_THROW(ArrayMetadata::from_json(j), UnsupportedError);
  j = base_array();
  j["storage_transformers"] = Json::array();
  EXPECT_NO_THROW(ArrayMetadata::from_json(j));
}

TEST(Metadata, ExtensionsAsBareNamesOrObjects) {
  Json j = base_array();
  j["data_type"] = {{"name", "int32"}};
  j["chunk_key_encoding"] = "v2";
  j["codecs"] = Json::array({{{"name", "bytes"}, {"configuration", {{"endian", "big"}}}}, "crc32c"});
  const auto m = ArrayMetadata::from_json(j);
  EXPECT_EQ(m.chunk_key_encoding.kind, ChunkKeyEncoding::Kind::V2);
  EXPECT_EQ(m.chunk_key_encoding.separator, '.');
  ASSERT_EQ(m.codecs.size(), 2u);
  EXPECT_EQ(m.codecs[1].name, "crc32c");
  EXPECT_FALSE(m.codecs[1].configuration.has_value());
  const auto m2 = ArrayMetadata::parse(m.dump());
  EXPECT_EQ(m2.codecs, m.codecs);
  EXPECT_EQ(m2.chunk_key_encoding, m.chunk_key_encoding);
}

TEST(Metadata, DimensionNamesAndGroups) {
  Json j = base_array();
  j["dimension_names"] = {"t", nullptr};
  const auto m = ArrayMetadata::from_json(j);
  ASSERT_TRUE(m.dimension_names);
  EXPECT_EQ((*m.dimension_names)[0], "t");
  EXPECT_FALSE((*m.dimension_names)[1]);
  EXPECT_EQ(Json::parse(m.dump())["dimension_names"], j["dimension_names"]);

  const auto g = GroupMetadata::parse(R"({"zarr_format": 3, "node_type": "group", "attributes": {"x": 1}})");
  EXPECT_EQ(g.attributes["x"], 1);
  EXPECT_EQ(GroupMetadata::parse(g.dump()).dump(), g.dump());
  EXPECT_THROW(GroupMetadata::parse(R"({"zarr_format": 3, "node_type": "array"})"), MetadataError);
  EXPECT_THROW(GroupMetadata::parse(R"({"zarr_format": 3, "node_type": "group", "bogus": 1})"), UnsupportedError);
}

TEST(Metadata, RegularBoundedGridValidation) {
  Json j = base_array();
  j["chunk_grid"] = Json::parse(R"({"name": "regular_bounded",
      "configuration": {"chunk_shape": [4, 4], "origin": [0, 0], "lower_bound": [-5, 0]}})");
  const auto m = ArrayMetadata::from_json(j);
  EXPECT_EQ(m.chunk_grid.kind, ChunkGridMetadata::Kind::RegularBounded);
  EXPECT_EQ(m.chunk_grid.lower_bound, (Shape{-5, 0}));
  EXPECT_EQ(Json::parse(m.dump())["chunk_grid"], j["chunk_grid"]);

  auto with = [&](const char* cfg) {
    Json k = base_array();
    k["chunk_grid"] = {{"name", "regular_bounded"}, {"configuration", Json::parse(cfg)}};
    return error_of(k);
  };
  EXPECT_NE(with(R"({"chunk_shape": [4, 4], "origin": [0, 0]})").find("lower_bound"), std::string::npos);
  EXPECT_NE(with(R"({"chunk_shape": [4, 4], "lower_bound": [0, 0]})").find("origin"), std::string::npos);
  EXPECT_NE(with(R"({"chunk_shape": [4, 4], "origin": [0, 0], "lower_bound": [0, 0], "upper": 1})").find("upper"),
            std::string::npos);
  EXPECT_NE(with(R"({"chunk_shape": [4, 4], "origin": [0], "lower_bound": [0, 0]})").find("origin"), std::string::npos);
  EXPECT_NE(with(R"({"chunk_shape": [4, 4], "origin": [0, 0.5], "lower_bound": [0, 0]})").find("origin[1]"),
            std::string::npos);
  EXPECT_NE(with(R"({"chunk_shape": [4, 4], "origin": [0, 1e2], "lower_bound": [0, 0]})").find("origin[1]"),
            std::string::npos);
  EXPECT_NE(with(R"({"chunk_shape": [4, 4], "origin": [0, false], "lower_bound": [0, 0]})").find("origin[1]"),
            std::string::npos);
  EXPECT_NE(with(R"({"chunk_shape": [4, 4], "origin": [0, 0], "lower_bound": ["0", 0]})").find("lower_bound[0]"),
            std::string::npos);
  EXPECT_NE(with(R"({"chunk_shape": [0, 4], "origin": [0, 0], "lower_bound": [0, 0]})").find("chunk_shape[0]"),
            std::string::npos);
  EXPECT_NE(
      with(R"({"chunk_shape": [4, 4], "origin": [0, 0], "lower_bound": [9223372036854775800, 0]})").find("overflow"),
      std::string::npos);
  EXPECT_NE(
      with(R"({"chunk_shape": [4, 4], "origin": [-9223372036854775800, 0], "lower_bound": [100, 0]})").find("overflow"),
      std::string::npos);
  // Writers refuse values a JavaScript reader cannot hold.
  ArrayMetadata w = m;
  w.chunk_grid.lower_bound[0] = -(std::int64_t{1} << 53);
  EXPECT_THROW(w.validate_for_write(), MetadataError);
  w.chunk_grid.lower_bound[0] = -((std::int64_t{1} << 53) - 1);
  EXPECT_NO_THROW(w.validate_for_write());
}

TEST(Metadata, NodeNames) {
  for (const char* ok : {"a", "foo.bar", "x-y_z", "é", ".a", "a.."}) EXPECT_NO_THROW(validate_node_name(ok)) << ok;
  for (const char* bad : {"", "a/b", ".", "..", "...", "zarr.json"})
    EXPECT_THROW(validate_node_name(bad), MetadataError) << bad;
  // "__" is reserved in v3 only (zarr-python 2 and xarray write such names in v2).
  EXPECT_NO_THROW(validate_node_name("__x"));
  EXPECT_NO_THROW(validate_v3_node_path("a/b__/c"));
  for (const char* bad : {"__x", "a/__x", "__a/b"}) EXPECT_THROW(validate_v3_node_path(bad), MetadataError) << bad;
  EXPECT_EQ(normalize_node_path("/a/b/"), "a/b");
  EXPECT_EQ(normalize_node_path(""), "");
  EXPECT_THROW(normalize_node_path("a//b"), MetadataError);
  EXPECT_THROW(normalize_node_path("a/../b"), MetadataError);
}

// NumPy's fixed-width strings, dates and durations: zarr-python 3's extension data types in
// zarr.json, byte-exact, and their display names.
TEST(Metadata, NumpyTypesHaveZarrPython3sNamesAndConfigurations) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"name":"fixed_length_utf32","configuration":{"length_bytes":48}})", "U12"},
      {R"({"name":"null_terminated_bytes","configuration":{"length_bytes":5}})", "S5"},
      {R"({"name":"numpy.datetime64","configuration":{"unit":"ns","scale_factor":1}})", "datetime64[ns]"},
      {R"({"name":"numpy.timedelta64","configuration":{"unit":"s","scale_factor":10}})", "timedelta64[10s]"},
  };
  for (const auto& [json, name] : cases) {
    const DataType t = data_type_from_json(Json::parse(json));
    EXPECT_EQ(t.name(), name);
    EXPECT_EQ(data_type_to_json(t).dump(), json);
    EXPECT_EQ(DataType::parse(name), t);
    auto doc = base_array();
    doc["data_type"] = Json::parse(json);
    doc["fill_value"] = t.kind() == DataKind::Time ? Json("NaT") : Json("");
    EXPECT_EQ(ArrayMetadata::from_json(doc).data_type, t) << json;
  }
  EXPECT_EQ(DataType::parse("U12").size(), 48u);
  EXPECT_EQ(DataType::parse("U12").component_size(), 4u);  // byte-swapped per code point
  EXPECT_EQ(DataType::parse("S5").component_size(), 1u);
  EXPECT_EQ(DataType::parse("datetime64[ms]").component_size(), 8u);
  EXPECT_NE(DataType::parse("datetime64[ms]"), DataType::parse("datetime64[us]"));
  EXPECT_NE(DataType::parse("datetime64[ms]"), DataType::parse("timedelta64[ms]"));
  EXPECT_EQ(DataType::datetime64("\xce\xbcs"), DataType::datetime64("us"));  // NumPy's μs
  EXPECT_EQ(DataType::from_user("<M8[ns]"), DataType::parse("datetime64[ns]"));
  EXPECT_EQ(DataType::from_user("|S3"), DataType::fixed_bytes(3));
  EXPECT_EQ(DataType::from_user("U2"), DataType::fixed_utf32(2));
  EXPECT_THROW(DataType::from_user(">U2"), ArgumentError);  // the byte order is the codec's
  // What is refused, naming the type: NumPy spellings are not Zarr names, bad widths and units.
  auto doc = base_array();
  doc["data_type"] = "U12";
  EXPECT_NE(error_of(doc).find("'U12'"), std::string::npos) << error_of(doc);
  for (const char* bad :
       {R"({"name":"fixed_length_utf32","configuration":{"length_bytes":6}})",
        R"({"name":"fixed_length_utf32","configuration":{"length_bytes":0}})", R"({"name":"fixed_length_utf32"})",
        R"({"name":"null_terminated_bytes","configuration":{"length_bytes":2,"x":1}})",
        R"({"name":"numpy.datetime64","configuration":{"unit":"generic","scale_factor":1}})",
        R"({"name":"numpy.datetime64","configuration":{"unit":"ns","scale_factor":0}})",
        R"({"name":"numpy.timedelta64","configuration":{"unit":"ns"}})"}) {
    doc["data_type"] = Json::parse(bad);
    EXPECT_NE(error_of(doc).find("data_type"), std::string::npos) << bad << ": " << error_of(doc);
  }
  for (const char* bad : {"U0", "S0", "datetime64", "datetime64[]", "datetime64[xs]", "datetime64[0s]", "U-1"})
    EXPECT_THROW(DataType::parse(bad), MetadataError) << bad;
}

INSTANTIATE_TEST_SUITE_P(NumpyTypes, FillValues,
                         ::testing::Values(FillCase{"U3", "\"ab\"", "\"ab\""}, FillCase{"U3", "\"\"", "\"\""},
                                           FillCase{"U2", "\"h\\u00e9\"", "\"h\xc3\xa9\""},
                                           FillCase{"U1", "\"\\ud83d\\ude00\"", "\"\xf0\x9f\x98\x80\""},
                                           FillCase{"S3", "\"YWI=\"", "\"YWI=\""}, FillCase{"S2", "\"\"", "\"\""},
                                           FillCase{"datetime64[ns]", "\"NaT\"", "-9223372036854775808"},
                                           FillCase{"datetime64[D]", "-1", "-1"},
                                           FillCase{"timedelta64[10s]", "7", "7"}));

TEST(Metadata, NumpyTypeFillValuesAreNulPaddedAndChecked) {
  const auto u3 = DataType::fixed_utf32(3);
  EXPECT_EQ(parse_fill_value(Json("a"), u3), (Bytes{'a', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(parse_fill_value(Json("YQ=="), DataType::fixed_bytes(3)), (Bytes{'a', 0, 0}));
  EXPECT_THROW(parse_fill_value(Json("abcd"), u3), MetadataError);                            // too long
  EXPECT_THROW(parse_fill_value(Json("YWJjZA=="), DataType::fixed_bytes(3)), MetadataError);  // 4 bytes
  EXPECT_THROW(parse_fill_value(Json(1), u3), MetadataError);
  EXPECT_THROW(parse_fill_value(Json("not base64!"), DataType::fixed_bytes(3)), MetadataError);
  EXPECT_THROW(parse_fill_value(Json(1.5), DataType::parse("datetime64[s]")), MetadataError);
  EXPECT_THROW(parse_fill_value(Json("2020-01-01"), DataType::parse("datetime64[s]")), MetadataError);
  // A U fill value of code points that are no Unicode text cannot be stated in JSON.
  Bytes lone(12, 0);
  lone[0] = 0x00;
  lone[1] = 0xd8;  // U+D800
  EXPECT_THROW(fill_value_to_json(lone, u3), MetadataError);
  EXPECT_EQ(canonical_fill_value(Json::binary({'x'}), DataType::fixed_bytes(2)), Json("eA=="));
}

// xarray's encoding of a v3 array's _FillValue attribute (xarray.backends.zarr.FillValueCoder).
TEST(Metadata, XarrayFillValueAttributeEncoding) {
  auto enc = [](const char* dtype, const Json& fill) {
    const auto t = DataType::parse(dtype);
    return xarray_fill_attribute(parse_fill_value(fill, t), t);
  };
  EXPECT_EQ(enc("int16", Json(-1)), Json(-1));
  EXPECT_EQ(enc("bool", Json(true)), Json(true));
  EXPECT_EQ(enc("float64", Json("NaN")), Json("AAAAAAAA+H8="));  // base64 of <d NaN
  EXPECT_EQ(enc("float32", Json(1.5)), Json("AAAAAAAA+D8="));    // as float64
  EXPECT_EQ(enc("complex64", Json::parse("[1.5, 0]")), Json::parse(R"(["AAAAAAAA+D8=", "AAAAAAAAAAA="])"));
  // Text has no encoding (xarray masks a v2 text array's fill value); bytes are base64 of the
  // bytes, S<n> without its NUL padding (xarray's encoder; its decoder reads the "bytes" type's).
  EXPECT_FALSE(enc("U3", Json("ab")));
  EXPECT_FALSE(enc("string", Json("n/a")));
  EXPECT_EQ(enc("S3", Json("YWI=")), Json("YWI="));
  EXPECT_EQ(enc("S4", Json("WA==")), Json("WA=="));     // b"X\0\0\0" stated as b"X"
  EXPECT_EQ(enc("bytes", Json("WABZ")), Json("WABZ"));  // b"X\0Y": a NUL inside is kept
  // Times: xarray's zarr engine shows a v2 time array's fill value; kept as zarr.json states it.
  EXPECT_EQ(enc("datetime64[ns]", Json("NaT")), Json(std::numeric_limits<std::int64_t>::min()));
  EXPECT_FALSE(enc("r16", Json::parse("[1, 2]")));
  // Read back: the element, for the forms that are not plain JSON.
  const auto f32 = DataType::float32;
  const auto back = xarray_fill_from_attribute(Json("AAAAAAAA+D8="), f32);
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, parse_fill_value(Json(1.5), f32));
  EXPECT_FALSE(xarray_fill_from_attribute(Json(1.5), f32));    // zarrpp's earlier plain form
  EXPECT_FALSE(xarray_fill_from_attribute(Json("NaN"), f32));  // ditto
  EXPECT_FALSE(xarray_fill_from_attribute(Json(-1), DataType::int16));
  EXPECT_EQ(xarray_fill_from_attribute(Json("WA=="), DataType(DataType::Id::bytes)), (Bytes{'X'}));
  EXPECT_EQ(xarray_fill_from_attribute(Json("WA=="), DataType::fixed_bytes(2)), (Bytes{'X', 0}));
  EXPECT_FALSE(xarray_fill_from_attribute(Json("X"), DataType(DataType::Id::bytes)));  // not base64: unknown
}

TEST(Metadata, RawBytesAsZarrPython3NamesThem) {
  const auto v3 = DataType::raw_bytes(3);
  EXPECT_EQ(data_type_to_json(v3), Json::parse(R"({"name": "raw_bytes", "configuration": {"length_bytes": 3}})"));
  EXPECT_EQ(data_type_from_json(data_type_to_json(v3)), v3);
  EXPECT_EQ(v3.name(), "V3");
  EXPECT_EQ(v3.numpy_str(), "|V3");
  EXPECT_EQ(DataType::from_user("V3"), v3);
  EXPECT_EQ(DataType::from_user("r24"), DataType::raw(24));
  EXPECT_FALSE(v3 == DataType::raw(24));
  EXPECT_TRUE(v3.holds_same_elements(DataType::raw(24)));
  EXPECT_FALSE(v3.holds_same_elements(DataType::raw(16)));
  // Fill value: base64 of the bytes (a raw r<bits> type: a list of byte values).
  EXPECT_EQ(parse_fill_value(Json("eHl6"), v3), (Bytes{'x', 'y', 'z'}));
  EXPECT_EQ(fill_value_to_json(Bytes{'x', 'y', 'z'}, v3), Json("eHl6"));
  EXPECT_EQ(canonical_fill_value(Json::binary({1, 2, 3}), v3), Json("AQID"));
  EXPECT_THROW(parse_fill_value(Json("eHk="), v3), MetadataError);  // 2 bytes
  EXPECT_THROW(parse_fill_value(Json::parse("[1, 2, 3]"), v3), MetadataError);
  for (const char* bad : {R"({"name": "raw_bytes"})", R"({"name": "raw_bytes", "configuration": {"length_bytes": 0}})",
                          R"({"name": "raw_bytes", "configuration": {"length_bytes": 2, "x": 1}})", R"("V3")"})
    EXPECT_THROW(data_type_from_json(Json::parse(bad)), MetadataError) << bad;
}

TEST(Metadata, TheMemoryBoundOfADocumentCountsItsValuesNotItsCharacters) {
  std::string zeros = "[0";
  for (int i = 0; i < (1 << 20); ++i) zeros += ",0";
  zeros += "]";
  const std::string text = "\"" + std::string(2 << 20, 'a') + "\"";
  EXPECT_GT(document_memory_bound(zeros), 12u * 16u * (1u << 20));  // each value's slot, in every copy held
  // One string: its characters in every copy, far fewer bytes per byte of text than small values.
  EXPECT_LT(document_memory_bound(text), 16 * text.size());
  EXPECT_GT(document_memory_bound(zeros) / zeros.size(), 4 * (document_memory_bound(text) / text.size()));
  EXPECT_NO_THROW(check_memory_for_document(zeros, "zeros.json"));
  EXPECT_EQ(parse_json_document(zeros, "zeros.json").size(), (1u << 20) + 1);
}

#if ZARRPP_TEST_ASAN
TEST(Metadata, ADocumentTooLargeForTheMemoryLeftIsRefusedBeforeItIsBuilt) {
  GTEST_SKIP() << "an address-space limit (RLIMIT_AS) cannot work under AddressSanitizer, which reserves "
                  "terabytes of shadow memory; the release build runs this test";
}
#else
TEST(Metadata, ADocumentTooLargeForTheMemoryLeftIsRefusedBeforeItIsBuilt) {
  std::string doc = "{\"big\":[0";
  for (int i = 0; i < 4'000'000; ++i) doc += ",0";
  doc += "]}";
  // In a child under an address-space limit: enough to hold the text, not its bound.
  const pid_t pid = ::fork();
  if (pid == 0) {
    struct rlimit lim{};
    ::getrlimit(RLIMIT_AS, &lim);
    std::ifstream maps("/proc/self/statm");
    std::uint64_t pages = 0;
    maps >> pages;
    const rlim_t now = pages * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    lim.rlim_cur = now + (256u << 20);
    ::setrlimit(RLIMIT_AS, &lim);
    try {
      (void)parse_json_document(doc, "big.json");
      ::_exit(2);  // built: the limit was not reached
    } catch (const LimitError& e) {
      ::_exit(std::string(e.what()).find("out of memory: big.json is") == 0 ? 0 : 3);
    } catch (...) {
      ::_exit(4);
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(parse_json_document(doc, "big.json")["big"].size(), 4'000'001u);  // without the limit it reads
}
#endif
