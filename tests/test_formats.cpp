// Zarr v2 and zarr-python 3's extras through the C++ API: byte-exact v2 documents, growth and its
// limits on v2, conversion without rewriting chunks, consolidated metadata kept current (and the
// node's own metadata winning), zarr-python 3 groups with consolidated_metadata and numcodecs.*
// codecs, and listings that survive a member zarrpp cannot read. The matrix against zarr-python
// 2.13 itself is python/tests/test_v2.py.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>

#include "common.hpp"
#include "selections.hpp"
#include "zarrpp/zarrpp.hpp"

using namespace zarrpp;
using zarrpp::test::B;
using zarrpp::test::expect_throw_with;
using zarrpp::test::S;
namespace fs = std::filesystem;

namespace {

const std::string kPy3 = std::string(ZARRPP_TEST_DATA_DIR) + "/zarr_python3/";

std::string text(Store& s, const std::string& key) {
  const auto b = s.get(key);
  if (!b) return "<missing>";
  return std::string(b->begin(), b->end());
}

std::map<std::string, Bytes> snapshot(Store& s) {
  std::map<std::string, Bytes> out;
  for (const auto& k : s.list_prefix("")) out[k] = *s.get(k);
  return out;
}

// A store that cannot list (as HTTP): groups find their members in consolidated metadata.
class NoListing : public StoreWrapper {
 public:
  using StoreWrapper::StoreWrapper;
  std::string describe() const override { return "no-listing(" + inner()->describe() + ")"; }
  StoreCapabilities capabilities() const override {
    auto c = inner()->capabilities();
    c.listing = false;
    return c;
  }
};

ArraySpec v2_spec() {
  ArraySpec s{.shape = {5, 4}, .chunks = {2, 3}, .dtype = DataType::int16};
  s.compressor = codec::Zstd{.level = 3};
  s.zarr_format = 2;
  s.attributes = {{"units", "m"}};
  s.dimension_names = std::vector<std::optional<std::string>>{"t", "x"};
  return s;
}

// A 3-element v2 array of `dtype` in chunks of 2, uncompressed, with chunk 0 (none when empty).
void put_v2_array(Store& store, const std::string& path, const Json& dtype, const Json& fill, const Bytes& chunk0) {
  const Json z = {{"zarr_format", 2},      {"shape", {3}},       {"chunks", {2}}, {"dtype", dtype},
                  {"compressor", nullptr}, {"fill_value", fill}, {"order", "C"},  {"filters", nullptr}};
  store.set(path + "/.zarray", B(z.dump()));
  if (!chunk0.empty()) store.set(path + "/0", chunk0);
}

// The elements an array reads, as bytes in memory.
Bytes stored_elements(const StorePtr& store, const std::string& path) {
  const auto a = Array::open(store, path).read();
  const auto* p = reinterpret_cast<const std::uint8_t*>(a.raw_data());
  return Bytes(p, p + a.size() * a.dtype().size());
}

// Reading an array and writing it back leaves its .zarray as it was.
void expect_rewrite_keeps_zarray(const StorePtr& store, const std::string& path) {
  SCOPED_TRACE(path);
  const auto before = *store->get(path + "/.zarray");
  auto a = Array::open(store, path);
  const NDArray v = a.read();
  a.write({}, v.view());
  EXPECT_EQ(Json::parse(S(*store->get(path + "/.zarray"))), Json::parse(S(before)));
}

}  // namespace

TEST(ZarrV2, CreatesTheDocumentsZarrPython2Writes) {
  auto store = MemoryStore::create();
  auto z = Array::create(store, "a", v2_spec());
  EXPECT_EQ(text(*store, "a/.zarray"),
            "{\n    \"chunks\": [\n        2,\n        3\n    ],\n    \"compressor\": {\n        \"id\": \"zstd\",\n"
            "        \"level\": 3\n    },\n    \"dimension_separator\": \".\",\n    \"dtype\": \"<i2\",\n"
            "    \"fill_value\": 0,\n    \"filters\": null,\n    \"order\": \"C\",\n    \"shape\": [\n        5,\n"
            "        4\n    ],\n    \"zarr_format\": 2\n}");
  EXPECT_EQ(text(*store, "a/.zattrs"),
            "{\n    \"_ARRAY_DIMENSIONS\": [\n        \"t\",\n        \"x\"\n    ],\n    \"units\": \"m\"\n}");
  EXPECT_EQ(text(*store, ".zgroup"), "{\n    \"zarr_format\": 2\n}");  // the missing parent, in v2
  EXPECT_FALSE(store->exists("zarr.json"));
  EXPECT_EQ(*node_type(store, "a"), NodeType::Array);
  EXPECT_EQ(zarr_format_of(store, ""), 2);
  std::vector<std::int16_t> v(20);
  for (int i = 0; i < 20; ++i) v[static_cast<std::size_t>(i)] = static_cast<std::int16_t>(i * 7 - 30);
  z.write({}, NDView::c_order(v.data(), DataType::int16, {5, 4}));
  EXPECT_TRUE(store->exists("a/2.1"));  // v2 keys, "." separator
  auto r = Array::open(store, "a").read();
  EXPECT_EQ(std::memcmp(r.raw_data(), v.data(), 40), 0);
  EXPECT_EQ(Array::open(store, "a").metadata().zarr_format, 2);
}

TEST(ZarrV2, AppendAndResizeWorkPrependRefusesNamingTheConversion) {
  auto store = MemoryStore::create();
  auto z = Array::create(store, "a", v2_spec());
  std::vector<std::int16_t> row(4, 5);
  z.append(NDView::c_order(row.data(), DataType::int16, {1, 4}));
  EXPECT_EQ(z.shape(), (Shape{6, 4}));
  EXPECT_NE(text(*store, "a/.zarray").find("\"shape\": [\n        6,"), std::string::npos);
  z.resize({3, 4});
  EXPECT_EQ(Array::open(store, "a").shape(), (Shape{3, 4}));
  const auto before = snapshot(*store);
  try {
    z.prepend(NDView::c_order(row.data(), DataType::int16, {1, 4}));
    FAIL() << "prepend on a v2 array must refuse";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("zarrpp convert"), std::string::npos) << e.what();
  }
  EXPECT_THROW(z.convert_to_regular_bounded(), UnsupportedError);
  EXPECT_EQ(snapshot(*store), before);  // nothing changed
  // Attributes go to .zattrs; .zarray is not rewritten for them.
  const auto zarray = text(*store, "a/.zarray");
  z.update_attributes({{"k", 1}});
  EXPECT_EQ(text(*store, "a/.zarray"), zarray);
  EXPECT_EQ(Array::open(store, "a").attributes()["k"], 1);
}

TEST(ZarrV2, RefusesWhatV2CannotStateBeforeWritingAnything) {
  auto store = MemoryStore::create();
  auto s = v2_spec();
  s.shards = Shape{4, 3};
  EXPECT_THROW(Array::create(store, "a", s), UnsupportedError);
  s = v2_spec();
  s.crc32c = true;
  EXPECT_THROW(Array::create(store, "a", s), UnsupportedError);
  s = v2_spec();
  s.lower_bound = Shape{-1, 0};
  EXPECT_THROW(Array::create(store, "a", s), UnsupportedError);
  s = v2_spec();
  s.zarr_format = 4;
  EXPECT_THROW(Array::create(store, "a", s), ArgumentError);
  EXPECT_TRUE(store->list_prefix("").empty());
}

TEST(ZarrV2, ConversionInPlaceRewritesNoChunkAndCanThenPrepend) {
  auto store = MemoryStore::create();
  auto z = Array::create(store, "a", v2_spec());
  std::vector<std::int16_t> v(20, 3);
  z.write({}, NDView::c_order(v.data(), DataType::int16, {5, 4}));
  auto chunks = snapshot(*store);
  for (auto it = chunks.begin(); it != chunks.end();)
    it = it->first.find("/.") != std::string::npos ? chunks.erase(it) : std::next(it);
  chunks.erase(".zgroup");
  const auto rep = convert_to_v3(store);
  EXPECT_EQ(rep.nodes, 2);  // the root group and the array
  auto after = snapshot(*store);
  for (const auto& [k, b] : chunks) EXPECT_EQ(after.at(k), b) << k;
  EXPECT_FALSE(store->exists("a/.zarray"));
  EXPECT_FALSE(store->exists("a/.zattrs"));
  EXPECT_FALSE(store->exists(".zgroup"));
  auto v3 = Array::open(store, "a");
  const auto m = v3.metadata();
  EXPECT_EQ(m.zarr_format, 3);
  EXPECT_EQ(m.chunk_key_encoding, ChunkKeyEncoding::v2('.'));
  ASSERT_TRUE(m.dimension_names);
  EXPECT_EQ(*(*m.dimension_names)[0], "t");
  EXPECT_FALSE(m.attributes.contains("_ARRAY_DIMENSIONS"));
  EXPECT_EQ(m.attributes["units"], "m");
  std::vector<std::int16_t> row(4, -1);
  v3.prepend(NDView::c_order(row.data(), DataType::int16, {1, 4}));
  EXPECT_EQ(v3.domain()[0], (DimDomain{-1, 5}));
  for (const auto& [k, b] : chunks) EXPECT_EQ(store->get(k), b) << k;  // still untouched
  // Converting again changes nothing.
  EXPECT_EQ(convert_to_v3(store).nodes, 0);
}

TEST(ZarrV2, ConversionToAnotherPlaceCopiesChunksByteForByte) {
  auto src = MemoryStore::create(), dst = MemoryStore::create();
  auto z = Array::create(src, "", v2_spec());
  std::vector<std::int16_t> v(20, 9);
  z.write({}, NDView::c_order(v.data(), DataType::int16, {5, 4}));
  const auto before = snapshot(*src);
  const auto rep = convert_to_v3(src, "", dst, "copy");
  EXPECT_EQ(rep.chunks_copied, 6);
  EXPECT_EQ(snapshot(*src), before);
  for (const auto& [k, b] : before)
    if (k[0] != '.') {
      EXPECT_EQ(dst->get("copy/" + k), b) << k;
    }
  auto r = Array::open(dst, "copy").read();
  EXPECT_EQ(std::memcmp(r.raw_data(), v.data(), 40), 0);
  EXPECT_THROW(convert_to_v3(src, "", src, ""), ArgumentError);  // overlapping
}

TEST(ZarrV2, ConversionBackToV2RestoresEveryDocumentAndChunk) {
  // v2 -> v3 -> v2 in place gives back the same store, byte for byte, consolidated metadata too.
  auto store = MemoryStore::create();
  Group::create(store, "", {{"title", "t"}}, false, 2);
  Group::create(store, "g", Json::object(), false, 2);
  auto z = Array::create(store, "g/a", v2_spec());
  std::vector<std::int16_t> v(20);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::int16_t>(i * 7 - 30);
  z.write({}, NDView::c_order(v.data(), DataType::int16, {5, 4}));
  const Json md = {{"metadata",
                    {{".zgroup", {{"zarr_format", 2}}},
                     {".zattrs", {{"title", "t"}}},
                     {"g/.zgroup", {{"zarr_format", 2}}},
                     {"g/a/.zarray", Json::parse(text(*store, "g/a/.zarray"))},
                     {"g/a/.zattrs", Json::parse(text(*store, "g/a/.zattrs"))}}},
                   {"zarr_consolidated_format", 1}};
  store->set(".zmetadata", B(dump_v2_json(md)));
  const auto before = snapshot(*store);
  convert_to_v3(store);
  // The consolidated group stays consolidated: zarr-python 3's inline form lists the converted nodes.
  const Json root = Json::parse(text(*store, "zarr.json"));
  EXPECT_EQ(root["consolidated_metadata"]["metadata"]["g/a"]["node_type"], "array");
  EXPECT_EQ(root["consolidated_metadata"]["metadata"]["g"]["node_type"], "group");
  const auto rep = convert_to_v2(store);
  EXPECT_EQ(rep.nodes, 3);
  EXPECT_EQ(snapshot(*store), before);
  EXPECT_EQ(convert_to_v2(store).nodes, 0);  // already v2: nothing changes
  EXPECT_EQ(snapshot(*store), before);
  // To another place: the same documents, the chunks under the same keys.
  auto v3 = MemoryStore::create(), back = MemoryStore::create();
  convert_to_v3(store, "", v3, "");
  EXPECT_EQ(convert_to_v2(v3, "", back, "").chunks_copied, 6);
  EXPECT_EQ(snapshot(*back), before);
}

TEST(ZarrV2, AnInterruptedConversionToV2ReadsTheSameAndFinishesWhenRunAgain) {
  auto v3 = MemoryStore::create();
  Group::create(v3, "", {{"k", 1}}, false, 2);
  auto z = Array::create(v3, "g/a", v2_spec());
  std::vector<std::int16_t> v(20, 5);
  z.write({}, NDView::c_order(v.data(), DataType::int16, {5, 4}));
  auto done = MemoryStore::create();
  for (const auto& k : v3->list_prefix("")) done->set(k, *v3->get(k));
  convert_to_v3(v3);
  convert_to_v2(done);  // back to v2 unhindered: the state every interrupted run must reach
  bool interrupted = true;
  for (std::int64_t at = 0; interrupted; ++at) {
    auto copy = MemoryStore::create();
    for (const auto& k : v3->list_prefix("")) copy->set(k, *v3->get(k));
    interrupted = test::catch_error([&] { convert_to_v2(std::make_shared<FaultyStore>(copy, at, true)); }).thrown;
    // Whatever was written, the array reads the same, and converting again finishes the job.
    EXPECT_EQ(Array::open(copy, "g/a").read().to_vector<std::int16_t>(), v) << "fault at " << at;
    convert_to_v2(copy);
    EXPECT_EQ(snapshot(*copy), snapshot(*done)) << "fault at " << at;
  }
}

TEST(ZarrV2, ConversionToV2CopiesChunksUnderV2Keys) {
  auto src = MemoryStore::create(), dst = MemoryStore::create();
  ArraySpec s{.shape = {3, 4}, .chunks = {2, 3}, .dtype = DataType::float32};
  s.dimension_names = std::vector<std::optional<std::string>>{"y", "x"};
  auto z = Array::create(src, "a", s);
  std::vector<float> v(12, 2.5F);
  z.write({}, NDView::c_order(v.data(), DataType::float32, {3, 4}));
  const auto before = snapshot(*src);
  // In place the keys ("c/0/0") would have to move: refused, nothing changed.
  expect_throw_with<UnsupportedError>([&] { convert_to_v2(src, "a"); },
                                      {"'a'", "\"c/0/0\"", "another place", "nothing was converted"});
  EXPECT_EQ(snapshot(*src), before);
  const auto rep = convert_to_v2(src, "a", dst, "b");
  EXPECT_EQ(rep.chunks_copied, 4);
  EXPECT_EQ(dst->get("b/1/1"), src->get("a/c/1/1"));
  const Json zarray = Json::parse(text(*dst, "b/.zarray"));
  EXPECT_EQ(zarray["dimension_separator"], "/");
  EXPECT_EQ(zarray["dtype"], "<f4");
  EXPECT_EQ(Json::parse(text(*dst, "b/.zattrs"))["_ARRAY_DIMENSIONS"], Json({"y", "x"}));
  // An xarray variable without _FillValue has no missing value: v2 states no fill value (xarray
  // would mask 0), as every chunk is stored.
  EXPECT_TRUE(zarray["fill_value"].is_null());
  EXPECT_NE(rep.notes.at(0).find("fill_value null (no fill value), as xarray writes"), std::string::npos);
  const auto r = Array::open(dst, "b").read();
  EXPECT_EQ(std::memcmp(r.raw_data(), v.data(), v.size() * 4), 0);
  EXPECT_EQ(snapshot(*src), before);  // the source is not changed
  // With a chunk missing the fill value stays (that chunk reads as it), and the note says what
  // xarray will mask.
  src->erase("a/c/1/1");
  const auto partial = convert_to_v2(src, "a", dst, "p");
  EXPECT_EQ(Json::parse(text(*dst, "p/.zarray"))["fill_value"], 0);
  EXPECT_NE(partial.notes.at(0).find("elements equal to 0.0 read as missing in xarray"), std::string::npos)
      << partial.notes.at(0);
}

TEST(ZarrV2, AFailedConversionOverANodeSaysTheOldNodeIsGone) {
  // --overwrite replaces the node at DST first (as copy does): a failure after that says so, and
  // leaves nothing of the conversion there; a failure before it leaves the old node and says nothing.
  auto src = MemoryStore::create();
  ArraySpec s{.shape = {6}, .chunks = {2}, .dtype = DataType::int16};
  s.chunk_key_encoding = ChunkKeyEncoding::v2('.');
  auto z = Array::create(src, "", s);
  std::vector<std::int16_t> v(6, 4);
  z.write({}, NDView::c_order(v.data(), DataType::int16, {6}));
  bool saw_gone = false, thrown = true;
  for (std::int64_t at = 0; thrown; ++at) {
    auto dst = MemoryStore::create();
    Array::create(dst, "x", v2_spec());
    const auto c =
        test::catch_error([&] { convert_to_v2(std::make_shared<FaultyStore>(src, at, true), "", dst, "x", true); });
    thrown = c.thrown;
    if (!thrown) break;
    if (dst->exists("x/.zarray")) {
      EXPECT_FALSE(c.has("is gone")) << c.what;
      continue;
    }
    saw_gone = true;
    EXPECT_TRUE(c.has("the node that was there before is gone")) << c.what;
    EXPECT_TRUE(dst->list_prefix("x/").empty()) << "fault at " << at;
  }
  EXPECT_TRUE(saw_gone);
}

TEST(ZarrV2, ConvertingASubgroupRefreshesTheWholeSubtreeInConsolidatedMetadataAbove) {
  for (int to : {2, 3}) {
    auto store = MemoryStore::create();
    const int top = to == 2 ? 2 : 3, sub = to == 2 ? 3 : 2;
    Group::create(store, "", Json::object(), false, top);
    Group::create(store, "sub", Json::object(), false, sub);
    ArraySpec s{.shape = {2}, .chunks = {2}, .dtype = DataType::int8, .zarr_format = sub};
    if (sub == 3) s.chunk_key_encoding = ChunkKeyEncoding::v2('.');
    Array::create(store, "sub/deep/b", s);
    if (top == 2) {
      store->set(".zmetadata",
                 B(dump_v2_json({{"metadata", {{".zgroup", {{"zarr_format", 2}}}}}, {"zarr_consolidated_format", 1}})));
    } else {
      Json g = Json::parse(text(*store, "zarr.json"));
      g["consolidated_metadata"] = {{"kind", "inline"}, {"must_understand", false}, {"metadata", Json::object()}};
      store->set("zarr.json", B(g.dump()));
    }
    if (to == 2)
      convert_to_v2(store, "sub");
    else
      convert_to_v3(store, "sub");
    if (top == 2) {
      const Json md = Json::parse(text(*store, ".zmetadata"))["metadata"];
      EXPECT_TRUE(md.contains("sub/.zgroup") && md.contains("sub/deep/.zgroup") && md.contains("sub/deep/b/.zarray"))
          << md.dump();
    } else {
      const Json md = Json::parse(text(*store, "zarr.json"))["consolidated_metadata"]["metadata"];
      EXPECT_TRUE(md.contains("sub") && md.contains("sub/deep") && md.contains("sub/deep/b")) << md.dump();
    }
  }
}

TEST(ZarrV2, ConversionToV2RefusesWhatV2CannotStateAndChangesNothing) {
  auto store = MemoryStore::create();
  Group::create(store, "", Json::object());
  ArraySpec ok{.shape = {4}, .chunks = {2}, .dtype = DataType::int32};
  ok.chunk_key_encoding = ChunkKeyEncoding::v2('.');
  Array::create(store, "ok", ok);
  ArraySpec sharded = ok;
  sharded.shards = Shape{4};
  Array::create(store, "sharded", sharded);
  const auto before = snapshot(*store);
  auto dst = MemoryStore::create();
  for (bool in_place : {true, false}) {
    expect_throw_with<UnsupportedError>([&] { in_place ? convert_to_v2(store) : convert_to_v2(store, "", dst, ""); },
                                        {"'sharded'", "sharding", "nothing was converted"});
    EXPECT_EQ(snapshot(*store), before);
    EXPECT_TRUE(snapshot(*dst).empty());
  }
  store->erase("sharded/zarr.json");
  ArraySpec crc = ok;
  crc.crc32c = true;
  Array::create(store, "crc", crc);
  expect_throw_with<UnsupportedError>([&] { convert_to_v2(store); }, {"'crc'", "crc32c"});
  store->erase("crc/zarr.json");
  auto grown = Array::open(store, "ok");
  std::vector<std::int32_t> row{1};
  grown.prepend(NDView::c_order(row.data(), DataType::int32, {1}));
  expect_throw_with<UnsupportedError>([&] { convert_to_v2(store); }, {"'ok'", "regular_bounded"});
  EXPECT_TRUE(store->exists("ok/zarr.json"));
  EXPECT_FALSE(store->exists("ok/.zarray"));
}

TEST(ZarrV2, ConsolidatedMetadataIsRefreshedAndTheNodeWins) {
  auto store = MemoryStore::create();
  Group::create(store, "", {{"title", "t"}}, false, 2);
  auto z = Array::create(store, "g/a", v2_spec());
  // As zarr.consolidate_metadata writes it.
  Json md = Json::object();
  md[".zgroup"] = Json::parse(text(*store, ".zgroup"));
  md[".zattrs"] = Json::parse(text(*store, ".zattrs"));
  md["g/.zgroup"] = Json::parse(text(*store, "g/.zgroup"));
  md["g/a/.zarray"] = Json::parse(text(*store, "g/a/.zarray"));
  md["g/a/.zattrs"] = Json::parse(text(*store, "g/a/.zattrs"));
  const Json doc = {{"metadata", md}, {"zarr_consolidated_format", 1}};
  const std::string doc_text = doc.dump();
  store->set(".zmetadata", Bytes(doc_text.begin(), doc_text.end()));
  z.resize({9, 4});
  z.update_attributes({{"new", true}});
  auto cm = Json::parse(text(*store, ".zmetadata"));
  EXPECT_EQ(cm["metadata"]["g/a/.zarray"]["shape"], Json::array({9, 4}));
  EXPECT_EQ(cm["metadata"]["g/a/.zattrs"]["new"], true);
  EXPECT_EQ(cm["zarr_consolidated_format"], 1);
  Group::open(store, "g").create_group("h");
  cm = Json::parse(text(*store, ".zmetadata"));
  EXPECT_TRUE(cm["metadata"].contains("g/h/.zgroup"));
  // A stale .zmetadata does not override the node's own metadata.
  cm["metadata"]["g/a/.zarray"]["shape"] = Json::array({99, 4});
  const auto stale = cm.dump();
  store->set(".zmetadata", Bytes(stale.begin(), stale.end()));
  EXPECT_EQ(Array::open(store, "g/a").shape(), (Shape{9, 4}));
  // A store that cannot list finds members through it.
  auto nolist = std::make_shared<NoListing>(store);
  const auto kids = Group::open(nolist, "g").children();
  ASSERT_EQ(kids.size(), 2u);
  EXPECT_EQ(kids[0].name, "a");
  EXPECT_EQ(kids[0].type, NodeType::Array);
  EXPECT_EQ(kids[1].name, "h");
}

// One fill-value field for both formats: the value's bytes (an element's, or a string's text),
// and for v2 what .zarray stated when that is not the value, written back as it was.
TEST(ZarrV2, OneFillValueFieldHoldsWhatEachFormatStates) {
  auto zarray = [](const Json& dtype, const Json& fill, const Json& filters) {
    return Json{{"zarr_format", 2},      {"shape", {4}},       {"chunks", {2}}, {"dtype", dtype},
                {"compressor", nullptr}, {"fill_value", fill}, {"order", "C"},  {"filters", filters}};
  };
  const Json utf8 = Json::array({Json{{"id", "vlen-utf8"}}});
  const Json vbytes = Json::array({Json{{"id", "vlen-bytes"}}});
  struct Case {
    Json zarray;
    Bytes bytes;
    std::optional<Json> stated;
  };
  const std::vector<Case> cases = {
      {zarray("<i2", -2, nullptr), Bytes{0xfe, 0xff}, std::nullopt},
      {zarray("<i2", nullptr, nullptr), Bytes{0, 0}, Json(nullptr)},
      {zarray("|O", "n/a", utf8), Bytes{'n', '/', 'a'}, std::nullopt},
      {zarray("|O", 0, utf8), Bytes{}, Json(0)},  // zarr-python 2's default for object arrays
      {zarray("|O", nullptr, vbytes), Bytes{}, Json(nullptr)},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.zarray.dump());
    const auto m = codec::from_v2_document(c.zarray, nullptr);
    EXPECT_EQ(m.fill_value.bytes, c.bytes);
    EXPECT_EQ(m.fill_value.v2_stated, c.stated);
    EXPECT_EQ(m.must_store_empty_chunks(), c.stated.has_value());
    EXPECT_EQ(m.to_v2_json()["fill_value"], c.zarray["fill_value"]);             // written back as it was
    EXPECT_EQ(m.fill_element(), m.data_type.is_vlen() ? Bytes(8, 0) : c.bytes);  // a string's is its index, 0
  }
  // Zarr v3 states the value itself; a v3 bytes array made v2 states null, as zarr-python 2 does.
  const auto obj = codec::from_v2_document(zarray("|O", 0, utf8), nullptr);
  EXPECT_EQ(fill_value_to_json(obj.fill_value.bytes, obj.data_type), Json(""));
  auto store = MemoryStore::create();
  auto b = Array::create(store, "b", {.shape = {4}, .chunks = {2}, .dtype = DataType::bytes_t, .zarr_format = 2});
  EXPECT_EQ(b.metadata().fill_value.v2_stated, Json(nullptr));
  EXPECT_TRUE(b.metadata().must_store_empty_chunks());
}

// An object array whose .zarray fill value is not of its type (0, null, text on a bytes array):
// elements no chunk holds read flagged as missing (zarr-python 2 returns that value for them), the
// elements of a stored chunk never do, and a flagged element is written as the empty element.
TEST(ZarrV2, ObjectArraysFlagElementsNoChunkHolds) {
  auto store = MemoryStore::create();
  const std::string doc = R"({"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "|O", "compressor": null,
      "fill_value": 0, "order": "C", "filters": [{"id": "vlen-utf8"}]})";
  store->set("o/.zarray", Bytes(doc.begin(), doc.end()));
  auto z = Array::open(store, "o");
  ASSERT_NE(z.metadata().missing_element(), nullptr);
  EXPECT_EQ(*z.metadata().missing_element(), Json(0));
  write_vlen(z, {slice(0, 1)}, VlenValues{{1}, {"a"}});
  auto got = read_vlen(z);
  EXPECT_EQ(got.values, (std::vector<std::string>{"a", "", "", ""}));
  EXPECT_EQ(got.missing, (std::vector<bool>{false, false, true, true}));  // [1] is stored, empty
  write_vlen(z, {slice(2, 4)}, VlenValues{{2}, {"", ""}, {true, false}});
  got = read_vlen(z);
  EXPECT_EQ(got.values, (std::vector<std::string>{"a", "", "", ""}));
  EXPECT_TRUE(got.missing.empty());  // every chunk stored now (both all-empty: other readers see 0 else)
  EXPECT_TRUE(store->exists("o/1"));
  // Arrays whose missing elements read as their fill value have no flags, and take none.
  auto v3 = Array::create(store, "v3", {.shape = {4}, .chunks = {2}, .dtype = DataType::string_t});
  EXPECT_EQ(v3.metadata().missing_element(), nullptr);
  EXPECT_TRUE(read_vlen(v3).missing.empty());
  EXPECT_THROW(write_vlen(v3, {slice(0, 1)}, VlenValues{{1}, {""}, {true}}), SelectionError);
  EXPECT_THROW(write_vlen(z, {slice(0, 2)}, VlenValues{{2}, {"", ""}, {true}}), SelectionError);  // one flag, 2 values
  // zarrpp's own v2 bytes arrays state no fill value: their missing elements are flagged too.
  auto b = Array::create(store, "b", {.shape = {4}, .chunks = {2}, .dtype = DataType::bytes_t, .zarr_format = 2});
  EXPECT_EQ(*b.metadata().missing_element(), Json(nullptr));
  EXPECT_EQ(read_vlen(b).missing, std::vector<bool>(4, true));
  // A copy (here from a store that cannot list, so every unit is visited) writes no unit that no
  // chunk of the source holds: it reads 0 there too.
  auto z4 = Array::create(store, "z4", z.metadata());  // 4 elements, chunks of 2, fill 0
  write_vlen(z4, {slice(0, 1)}, VlenValues{{1}, {"a"}});
  ArrayMetadata rechunked = z4.metadata();
  rechunked.chunk_grid.chunk_shape = {1};
  const auto copy = copy_array(Array::open(std::make_shared<NoListing>(store), "z4"), store, "copy", rechunked);
  EXPECT_EQ(read_vlen(copy).missing, (std::vector<bool>{false, false, true, true}));
  EXPECT_FALSE(store->exists("copy/2"));
  // A 0-d one reads the number 0 there (zarr-python 2 starts from np.zeros for 0-d arrays).
  auto b0 = Array::create(store, "b0", {.shape = {}, .chunks = {}, .dtype = DataType::bytes_t, .zarr_format = 2});
  EXPECT_EQ(*b0.metadata().missing_element(), Json(0));
}

// Converting such an object array to v3 would change what its missing elements read as (0 ->
// ""): refused for the whole tree, nothing written, until every chunk is stored.
TEST(ZarrV2, ConversionRefusesObjectArraysWhoseMissingElementsWouldChange) {
  auto store = MemoryStore::create();
  Group::create(store, "", Json::object(), false, 2);
  const std::string doc = R"({"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "|O", "compressor": null,
      "fill_value": 0, "order": "C", "filters": [{"id": "vlen-utf8"}]})";
  store->set("o/.zarray", Bytes(doc.begin(), doc.end()));
  auto z = Array::open(store, "o");
  write_vlen(z, {slice(0, 2)}, VlenValues{{2}, {"a", "b"}});
  const auto before = store->list_prefix("");
  for (const bool in_place : {true, false}) {
    try {
      if (in_place)
        convert_to_v3(store);
      else
        convert_to_v3(store, "", MemoryStore::create(), "", false);
      FAIL() << "converted";
    } catch (const UnsupportedError& e) {
      EXPECT_STREQ(e.what(),
                   "cannot convert 'o': 1 of 2 chunks are not stored, and their elements read as 0 (its Zarr v2 "
                   "fill value, as zarr-python 2 reads them), which a Zarr v3 string array cannot hold; write every "
                   "chunk first (e.g. its missing elements as \"\") to convert it; nothing was converted");
    }
    EXPECT_EQ(store->list_prefix(""), before);
  }
  // Every chunk stored: no element reads the fill value, and the array converts.
  write_vlen(z, {slice(2, 4)}, VlenValues{{2}, {"", ""}, {true, false}});
  const auto rep = convert_to_v3(store);
  EXPECT_EQ(read_vlen(Array::open(store, "o")).values, (std::vector<std::string>{"a", "b", "", ""}));
  ASSERT_EQ(rep.notes.size(), 1u);
  EXPECT_EQ(rep.notes[0],
            "o: fill_value 0 became \"\" (a v3 string array holds only string values); every chunk is "
            "stored, so no element reads it");
}

// zarr-python 2 reads a complex fill value [re, im] as re + 1j * im: a NaN or infinite imaginary
// part makes the real part NaN, and some zeros lose their sign. zarrpp reads it so (missing chunks
// read as that value in both), and refuses to create a v2 array whose fill value would change so.
TEST(ZarrV2, ComplexFillValuesReadAsZarrPython2ReadsThem) {
  auto parse = [](const char* fill, const char* dtype) {
    const Json z = {{"zarr_format", 2}, {"shape", {2}},          {"chunks", {2}},
                    {"dtype", dtype},   {"compressor", nullptr}, {"fill_value", Json::parse(fill)},
                    {"order", "C"},     {"filters", nullptr}};
    const auto m = codec::from_v2_document(z, nullptr);
    return fill_value_to_json(m.fill_value.bytes, m.data_type).dump();
  };
  EXPECT_EQ(parse(R"([1.0, "NaN"])", "<c16"), R"(["NaN","NaN"])");
  // 0 * inf is the processor's default NaN (negative on x86, as NumPy gets it there too)
  const Json inf_im = Json::parse(parse(R"([1.0, "-Infinity"])", "<c8"));
  EXPECT_TRUE(inf_im[0] == "NaN" || inf_im[0].get<std::string>().starts_with("0x")) << inf_im;
  EXPECT_EQ(inf_im[1], "-Infinity");
  EXPECT_EQ(parse(R"(["Infinity", 2.0])", "<c16"), R"(["Infinity",2.0])");
  EXPECT_EQ(parse(R"([-0.0, 1.0])", "<c16"), R"([0.0,1.0])");
  EXPECT_EQ(parse(R"([-0.0, -1.0])", ">c16"), R"([-0.0,-1.0])");
  EXPECT_EQ(parse(R"([1.5, -0.0])", "<c8"), R"([1.5,0.0])");
  auto store = MemoryStore::create();
  ArraySpec spec{.shape = {2}, .chunks = {2}, .dtype = DataType::complex128, .zarr_format = 2};
  spec.fill_value = Json::array({1.0, "NaN"});
  expect_throw_with<UnsupportedError>([&] { Array::create(store, "c", spec); },
                                      {"fill_value [1.0,\"NaN\"]", "zarr-python 2 reads as [\"NaN\",\"NaN\"]", "v3"});
  EXPECT_TRUE(store->list_prefix("").empty());
  spec.fill_value = Json::array({"NaN", "NaN"});
  EXPECT_NO_THROW(Array::create(store, "c", spec));
}

// Names starting with "__" are Zarr v3's reserved ones only: a v2 group's such members list and
// open (zarr-python 2 and xarray write them), v2 can create them, v3 cannot, and converting a
// tree holding one is refused before anything changes.
TEST(ZarrV2, NamesStartingWithTwoUnderscoresAreV3sReservedOnly) {
  auto store = MemoryStore::create();
  auto g = Group::create(store, "g", Json::object(), false, 2);
  g.create_array("__v", {.shape = {2}, .chunks = {2}, .zarr_format = 2});
  g.create_array("w", {.shape = {2}, .chunks = {2}, .zarr_format = 2});
  const auto kids = g.children();
  ASSERT_EQ(kids.size(), 2u);
  EXPECT_EQ(kids[0].name, "__v");
  EXPECT_EQ(g.open_array("__v").shape(), Shape{2});
  EXPECT_EQ(Array::open(store, "g/__v").shape(), Shape{2});
  expect_throw_with<MetadataError>([&] { Array::create(store, "g3/__x", {.shape = {2}, .chunks = {2}}); },
                                   {"'__x'", "Zarr v3 reserves"});
  expect_throw_with<MetadataError>([&] { Group::create(store, "__h", Json::object(), false, 3); }, {"'__h'"});
  const auto before = store->list_prefix("");
  expect_throw_with<MetadataError>([&] { convert_to_v3(store, "g"); }, {"g/__v", "rename it first"});
  auto dst = MemoryStore::create();
  expect_throw_with<MetadataError>([&] { convert_to_v3(store, "g", dst, "", false); }, {"g/__v"});
  EXPECT_EQ(store->list_prefix(""), before);
  EXPECT_TRUE(dst->list_prefix("").empty());
}

// An integer beyond 64 bits in one member's attributes makes that member unreadable (named), not
// the group: an unreadable .zmetadata does not hide the members the store lists.
TEST(ZarrV2, AnUnreadableConsolidatedDocumentDoesNotHideListedMembers) {
  auto store = MemoryStore::create();
  auto g = Group::create(store, "g", Json::object(), false, 2);
  g.create_array("a", {.shape = {2}, .chunks = {2}, .zarr_format = 2});
  g.create_array("b", {.shape = {2}, .chunks = {2}, .zarr_format = 2});
  const std::string big = R"({"big": 1180591620717411303424})";
  store->set("g/a/.zattrs", Bytes(big.begin(), big.end()));
  const std::string zmeta = R"({"zarr_consolidated_format": 1, "metadata": {"a/.zattrs": )" + big + "}}";
  store->set("g/.zmetadata", Bytes(zmeta.begin(), zmeta.end()));
  const auto kids = Group::open(store, "g").children();
  ASSERT_EQ(kids.size(), 2u);
  EXPECT_EQ(kids[0].name, "a");
  expect_throw_with<MetadataError>([&] { Array::open(store, "g/a"); }, {"(at big)", "does not fit 64 bits"});
  EXPECT_EQ(Array::open(store, "g/b").shape(), Shape{2});
}

// Replacing a node lists its chunks from its document first; a document that cannot say which keys
// are chunks (v2 and v3 alike) stops the replacement with nothing deleted.
TEST(ZarrV2, ReplacingANodeWhoseKeysCannotBeToldDeletesNothing) {
  const std::vector<std::pair<std::string, std::string>> broken = {
      {".zarray", R"({"zarr_format": 2, "chunks": [2]})"},
      {".zarray", R"({"zarr_format": 2, "shape": [4], "dimension_separator": "-"})"},
      {"zarr.json", R"({"zarr_format": 3, "node_type": "array", "shape": [4]})"},
  };
  for (const auto& [key, doc] : broken) {
    SCOPED_TRACE(doc);
    auto store = MemoryStore::create();
    store->set("a/" + key, Bytes(doc.begin(), doc.end()));
    store->set("a/0", B("chunk"));
    ArraySpec spec{.shape = {4}, .chunks = {2}, .dtype = DataType::int8};
    spec.overwrite = true;
    expect_throw_with<MetadataError>([&] { Array::create(store, "a", spec); }, {"too broken", "nothing was deleted"});
    EXPECT_EQ(store->get("a/0"), B("chunk"));
    EXPECT_EQ(store->get("a/" + key), Bytes(doc.begin(), doc.end()));
  }
  // A sound v2 document with "/" keys: its chunks go with it.
  auto store = MemoryStore::create();
  const std::string doc = R"({"zarr_format": 2, "shape": [4, 4], "chunks": [2, 2], "dtype": "<i1", "compressor": null,
    "fill_value": 0, "order": "C", "filters": null, "dimension_separator": "/"})";
  store->set("a/.zarray", Bytes(doc.begin(), doc.end()));
  store->set("a/1/1", B("x"));
  ArraySpec spec{.shape = {4}, .chunks = {2}, .dtype = DataType::int8};
  spec.overwrite = true;
  Array::create(store, "a", spec);
  EXPECT_FALSE(store->exists("a/1/1"));
  EXPECT_FALSE(store->exists("a/.zarray"));
}

// zarr-python before 2.8 wrote no "dimension_separator": DirectoryStore's chunk keys are "0.0",
// NestedDirectoryStore's "0/0". What is stored tells them apart (chunk 0 in either form, else a
// listing); both at once is refused; nothing stored is read as missing.
TEST(ZarrV2, ChunkKeysOfAZarrayWithoutSeparatorAreFoundFromWhatIsStored) {
  const std::string zarray = R"({"zarr_format": 2, "shape": [4, 4], "chunks": [2, 2], "dtype": "<i2",
    "compressor": null, "fill_value": 0, "order": "C", "filters": null})";
  auto chunk = [](std::int16_t first) {
    Bytes b;
    for (std::int16_t v = first; v < first + 4; ++v) {
      b.push_back(static_cast<std::uint8_t>(v & 0xff));
      b.push_back(static_cast<std::uint8_t>(v >> 8));
    }
    return b;
  };
  auto legacy = [&](const std::vector<std::string>& keys) {
    auto store = MemoryStore::create();
    store->set("a/.zarray", B(zarray));
    std::int16_t v = 1;
    for (const auto& k : keys) store->set("a/" + k, chunk(static_cast<std::int16_t>(v++ * 10)));
    return store;
  };
  for (const bool listing : {true, false}) {
    for (const char sep : {'.', '/'}) {
      SCOPED_TRACE(std::string(listing ? "listing" : "no listing") + ", separator " + sep);
      const std::string k00 = sep == '.' ? "0.0" : "0/0", k11 = sep == '.' ? "1.1" : "1/1";
      auto mem = legacy({k00, k11});
      StorePtr store = listing ? StorePtr(mem) : std::make_shared<NoListing>(mem);
      auto z = Array::open(store, "a");
      EXPECT_EQ(z.metadata().chunk_key_encoding.separator, sep);
      const auto all = z.read().to_vector<std::int16_t>();
      EXPECT_EQ((std::vector<std::int16_t>{all[0], all[1], all[4], all[5]}),
                (std::vector<std::int16_t>{10, 11, 12, 13}));
      EXPECT_EQ((std::vector<std::int16_t>{all[10], all[11], all[14], all[15]}),
                (std::vector<std::int16_t>{20, 21, 22, 23}));
      if (!listing) continue;
      // Written on, and grown, in the layout found; .zarray then states it.
      z.write_scalar<std::int16_t>({slice(0, 2), slice(2, 4)}, 7);
      EXPECT_TRUE(mem->exists(std::string("a/0") + sep + "1"));
      z.append(NDArray::full<std::int16_t>({2, 4}, 5), 0);
      EXPECT_TRUE(mem->exists(std::string("a/2") + sep + "0"));
      const auto doc = Json::parse(S(*mem->get("a/.zarray")));
      EXPECT_EQ(doc["dimension_separator"], std::string(1, sep));
    }
  }
  // A digit-named folder that holds no chunk key is no nested chunk.
  {
    auto mem = legacy({"1.1"});
    mem->set("a/7/notes.txt", B("x"));
    EXPECT_EQ(Array::open(mem, "a").metadata().chunk_key_encoding.separator, '.');
  }
  // Converted in place without a write first: zarr.json states the layout found.
  {
    auto mem = legacy({"0/0", "1/1"});
    convert_to_v3(mem, "a");
    auto z = Array::open(mem, "a");
    EXPECT_EQ(z.metadata().chunk_key_encoding, ChunkKeyEncoding::v2('/'));
    EXPECT_EQ(z.read().to_vector<std::int16_t>()[15], 23);
  }
  // Both layouts stored: refused, naming what to add.
  for (const auto& both : {std::vector<std::string>{"0.0", "0/0"}, std::vector<std::string>{"1.1", "1/1"}})
    expect_throw_with<MetadataError>([&] { Array::open(legacy(both), "a"); }, {"dimension_separator", "0.0", "0/0"});
  // Nothing to tell by (a store that cannot list and no chunk 0; or no chunk at all): "." assumed,
  // said once, and not written into .zarray as if it were known.
  std::vector<std::string> warnings;
  const auto previous = set_warning_handler([&](const std::string& w) { warnings.push_back(w); });
  auto z = Array::open(std::make_shared<NoListing>(legacy({"1/1"})), "a");
  auto empty = legacy({});
  auto e = Array::open(empty, "a");
  e.append(NDArray::full<std::int16_t>({2, 4}, 5), 0);
  e.refresh();
  set_warning_handler(previous);
  EXPECT_EQ(z.metadata().chunk_key_encoding.separator, '.');
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("NestedDirectoryStore"), std::string::npos) << warnings[0];
  EXPECT_FALSE(Json::parse(S(*empty->get("a/.zarray"))).contains("dimension_separator"));
  EXPECT_TRUE(empty->exists("a/2.0"));
  // One dimension: the same keys either way, nothing asked.
  auto one = MemoryStore::create();
  one->set("a/.zarray", B(R"({"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "<i2", "compressor": null,
    "fill_value": 0, "order": "C", "filters": null})"));
  EXPECT_EQ(Array::open(one, "a").metadata().chunk_key_encoding.separator, '.');
}

TEST(ZarrV2, BrokenV2DocumentsGiveErrorsNamingTheField) {
  auto store = MemoryStore::create();
  auto put = [&](const std::string& k, const std::string& v) { store->set(k, Bytes(v.begin(), v.end())); };
  put("a/.zarray", R"({"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "<i4", "compressor": {"id": "zfpy"},
                     "fill_value": 0, "order": "C", "filters": null})");
  try {
    Array::open(store, "a");
    FAIL();
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("compressor 'zfpy' is not supported"), std::string::npos) << e.what();
  }
  put("b/.zarray", R"({"zarr_format": 2, "shape": [4, 4], "chunks": [2], "dtype": "<i4", "compressor": null,
                     "fill_value": 0, "order": "C", "filters": null})");
  EXPECT_THROW(Array::open(store, "b"), MetadataError);
  put("c/.zarray", "{not json");
  EXPECT_THROW(Array::open(store, "c"), MetadataError);
  put("d/.zarray", R"({"zarr_format": 2, "shape": [4], "chunks": [2], "dtype": "<f8", "compressor": null,
                     "fill_value": "NaN", "order": "C", "filters": null})");
  auto fv = Array::open(store, "d").fill_value();
  double d;
  std::memcpy(&d, fv.data(), 8);
  EXPECT_TRUE(std::isnan(d));
  // The root lists every member, the unreadable ones with their error.
  put(".zgroup", R"({"zarr_format": 2})");
  const auto kids = Group::open(store).children();
  ASSERT_EQ(kids.size(), 4u);
  EXPECT_FALSE(kids[2].error.empty());  // "c": malformed JSON
  EXPECT_TRUE(kids[3].error.empty());
}

TEST(ZarrPython3, GroupsWithConsolidatedMetadataAndNumcodecsCodecsOpen) {
  const auto a_want = npy::load(kPy3 + "a_values.npy");
  const auto f_want = npy::load(kPy3 + "f_values.npy");
  for (const char* name : {"consolidated_null", "consolidated"}) {
    SCOPED_TRACE(name);
    auto store = FileStore::open(kPy3 + name, FileStore::Options{.create = false});
    auto g = Group::open(store);
    EXPECT_EQ(g.attributes()["title"], name);
    auto kids = g.children();
    ASSERT_EQ(kids.size(), 5u);
    EXPECT_EQ(kids[0].name, "a");
    auto a = g.open_array("a");
    ASSERT_EQ(a.metadata().codecs[0].name, "numcodecs.delta");
    auto got = a.read();
    ASSERT_EQ(got.shape(), a_want.shape());
    EXPECT_EQ(std::memcmp(got.raw_data(), a_want.raw_data(), 40), 0);
    auto f = g.open_array("f").read();
    EXPECT_EQ(std::memcmp(f.raw_data(), f_want.raw_data(), 64), 0);
    // Variable-length strings and bytes, a missing chunk reading as the fill value.
    auto strings = g.open_array("strings");
    EXPECT_EQ(strings.dtype(), DataType::string_t);
    EXPECT_EQ(read_vlen(strings).values, (std::vector<std::string>{"", "ß€😀", "plain", "x", "n/a", "n/a"}));
    EXPECT_EQ(strings.fill_value_json(), "n/a");
    EXPECT_THROW(strings.read(), SelectionError);  // the numeric calls point to read_vlen
    auto blobs = g.open_array("blobs");
    EXPECT_EQ(blobs.dtype(), DataType::bytes_t);
    EXPECT_EQ(read_vlen(blobs).values, (std::vector<std::string>{std::string("\0\xff", 2), "", "abc"}));
    EXPECT_EQ(blobs.metadata().fill_text(), "\x01\x02");
    EXPECT_EQ(g.open_group("sub").attributes()["level"], 1);
    // Without listing: the members consolidated_metadata names (none when it is null).
    auto nolist = std::make_shared<NoListing>(store);
    const auto via = Group::open(nolist).children();
    if (std::string(name) == "consolidated") {
      ASSERT_EQ(via.size(), 5u);
      EXPECT_EQ(via[4].name, "sub");
      EXPECT_EQ(via[4].type, NodeType::Group);
    } else {
      EXPECT_TRUE(via.empty());
    }
  }
}

TEST(ZarrPython3, ConsolidatedMetadataFollowsChangesToMembers) {
  auto mem = MemoryStore::create();
  auto src = FileStore::open(kPy3 + "consolidated", FileStore::Options{.create = false});
  for (const auto& k : src->list_prefix("")) mem->set(k, *src->get(k));
  auto cm = [&] { return Json::parse(text(*mem, "zarr.json"))["consolidated_metadata"]["metadata"]; };
  // Growing a member: zarr-python 3 opening the group consolidated sees the new shape.
  auto a = Array::open(mem, "a");
  std::vector<std::int32_t> two = {1, 2};
  a.prepend(NDView::c_order(two.data(), DataType::int32, {2}));
  EXPECT_EQ(cm()["a"]["shape"], Json::array({12}));
  EXPECT_EQ(cm()["a"]["chunk_grid"]["name"], "regular_bounded");
  a.update_attributes({{"k", 2}});
  EXPECT_EQ(cm()["a"]["attributes"]["k"], 2);
  // New members are added, removed ones dropped.
  Array::create(mem, "sub/new", ArraySpec{.shape = {2}, .chunks = {2}, .dtype = DataType::uint8});
  EXPECT_EQ(cm()["sub/new"]["node_type"], "array");
  remove_node(mem, "f");
  EXPECT_FALSE(cm().contains("f"));
  EXPECT_EQ(cm()["strings"]["data_type"], "string");  // the others are as they were
  // Removing a group drops its whole subtree.
  Array::create(mem, "sub/deeper/x", ArraySpec{.shape = {2}, .chunks = {2}, .dtype = DataType::uint8});
  EXPECT_TRUE(cm().contains("sub/deeper/x"));
  remove_node(mem, "sub");
  const Json left = cm();  // kept alive: items() refers into it
  for (const auto& [k, v] : left.items()) EXPECT_NE(k.rfind("sub", 0), 0u) << k;
}

TEST(ZarrV2, ArraysInAV2GroupAreV2UnlessToldOtherwise) {
  auto store = MemoryStore::create();
  auto g = Group::create(store, "", Json::object(), false, 2);
  g.create_array("a", ArraySpec{.shape = {4}, .chunks = {2}, .dtype = DataType::int32});
  EXPECT_TRUE(store->exists("a/.zarray"));
  EXPECT_EQ(Array::open(store, "a").metadata().zarr_format, 2);
  g.create_array("b", ArraySpec{.shape = {4}, .chunks = {2}, .dtype = DataType::int32, .zarr_format = 3});
  EXPECT_TRUE(store->exists("b/zarr.json"));
  auto g3 = Group::create(store, "v3", Json::object());
  g3.create_array("c", ArraySpec{.shape = {4}, .chunks = {2}, .dtype = DataType::int32});
  EXPECT_TRUE(store->exists("v3/c/zarr.json"));
  EXPECT_THROW(
      Array::create(store, "d", ArraySpec{.shape = {4}, .chunks = {2}, .dtype = DataType::int32, .zarr_format = 4}),
      ArgumentError);
}

TEST(ZarrV2, CopyStatesTheDestinationsCodecsInItsZarray) {
  auto store = MemoryStore::create();
  auto spec = v2_spec();
  spec.endian = codec::Endian::big;
  auto src = Array::create(store, "src", spec);
  std::vector<std::int16_t> v(20);
  for (int i = 0; i < 20; ++i) v[static_cast<std::size_t>(i)] = static_cast<std::int16_t>(i * 300 - 3000);
  src.write({}, NDView::c_order(v.data(), DataType::int16, {5, 4}));
  EXPECT_EQ(Json::parse(text(*store, "src/.zarray"))["dtype"], ">i2");
  // Another compressor and little-endian bytes: .zarray must say so.
  ArrayMetadata m = src.metadata();
  m.codecs = {CodecMetadata{"bytes", Json{{"endian", "little"}}}, CodecMetadata{"gzip", Json{{"level", 2}}}};
  auto dst = copy_array(src, store, "dst", m);
  EXPECT_FALSE(store->exists("dst/zarr.json"));
  const Json z = Json::parse(text(*store, "dst/.zarray"));
  EXPECT_EQ(z["dtype"], "<i2");
  EXPECT_EQ(z["compressor"], (Json{{"id", "gzip"}, {"level", 2}}));
  EXPECT_EQ(Json::parse(text(*store, "dst/.zattrs"))["units"], "m");
  auto r = Array::open(store, "dst").read();
  EXPECT_EQ(std::memcmp(r.raw_data(), v.data(), 40), 0);
  // A v2 array's metadata re-derived from its own codecs is itself.
  const auto again = Array::open(store, "src").metadata();
  for (const auto& md : {again, Array::open(store, "dst").metadata()}) {
    EXPECT_EQ(codec::as_v2(md).to_v2_json(), md.to_v2_json());
    EXPECT_EQ(codec::as_v2(md).codecs, md.codecs);
  }
}

TEST(ZarrPython3, ConsolidatedMetadataIsKeptWhenAttributesChange) {
  auto mem = MemoryStore::create();
  auto src = FileStore::open(kPy3 + "consolidated", FileStore::Options{.create = false});
  mem->set("zarr.json", *src->get("zarr.json"));
  auto g = Group::open(mem);
  g.update_attributes({{"more", 1}});
  const auto j = Json::parse(text(*mem, "zarr.json"));
  EXPECT_EQ(j["consolidated_metadata"]["kind"], "inline");
  EXPECT_TRUE(j["consolidated_metadata"]["metadata"].contains("a"));
  EXPECT_EQ(j["attributes"]["more"], 1);
  // Malformed consolidated_metadata is an error naming it.
  const std::string bad = R"({"zarr_format": 3, "node_type": "group", "consolidated_metadata": 5})";
  mem->set("zarr.json", Bytes(bad.begin(), bad.end()));
  try {
    Group::open(mem);
    FAIL();
  } catch (const MetadataError& e) {
    EXPECT_NE(std::string(e.what()).find("consolidated_metadata"), std::string::npos);
  }
}

// ---- variable-length elements against a plain reference ------------------------------------------

TEST(Vlen, RandomWritesMatchAReferenceAcrossLayouts) {
  std::mt19937 rng(7);
  auto random_text = [&] {
    static const std::vector<std::string> pieces = {"", "a", "ß", "€", "😀", "text", "x y", std::string(300, 'z')};
    std::string s;
    for (int k = static_cast<int>(rng() % 4); k > 0; --k) s += pieces[rng() % pieces.size()];
    return s;
  };
  struct Layout {
    const char* name;
    ArraySpec spec;
  };
  std::vector<Layout> layouts = {
      {"plain", ArraySpec{.shape = {7, 5}, .chunks = {3, 2}, .dtype = DataType::string_t, .fill_value = Json("-")}},
      {"zstd", ArraySpec{.shape = {7, 5}, .chunks = {2, 5}, .dtype = DataType::string_t, .compressor = codec::Zstd{}}},
      {"sharded", ArraySpec{.shape = {7, 5}, .chunks = {2, 2}, .dtype = DataType::string_t, .shards = Shape{4, 4}}},
      {"v2",
       ArraySpec{
           .shape = {7, 5}, .chunks = {3, 3}, .dtype = DataType::string_t, .fill_value = Json(""), .zarr_format = 2}},
  };
  for (auto& l : layouts) {
    SCOPED_TRACE(l.name);
    auto store = MemoryStore::create();
    auto z = Array::create(store, "s", l.spec);
    const std::string fill = z.metadata().fill_text();
    std::vector<std::string> ref(35, fill);
    for (int round = 0; round < 40; ++round) {
      const std::int64_t r0 = rng() % 7, r1 = r0 + 1 + rng() % (7 - r0), c0 = rng() % 5, c1 = c0 + 1 + rng() % (5 - c0);
      VlenValues v{{r1 - r0, c1 - c0}, {}};
      for (std::int64_t i = r0; i < r1; ++i)
        for (std::int64_t j = c0; j < c1; ++j) {
          v.values.push_back(rng() % 5 == 0 ? fill : random_text());
          ref[static_cast<std::size_t>(i * 5 + j)] = v.values.back();
        }
      write_vlen(z, {slice(r0, r1), slice(c0, c1)}, v);
      if (round % 8 == 7) {
        // A point write and a broadcast of one value.
        write_vlen_points(z, {{r0}, {c0}}, VlenValues{{1}, {"pt"}});
        ref[static_cast<std::size_t>(r0 * 5 + c0)] = "pt";
        write_vlen(z, {slice(r1 - 1, r1), all}, VlenValues{{}, {"row"}});
        for (int j = 0; j < 5; ++j) ref[static_cast<std::size_t>((r1 - 1) * 5 + j)] = "row";
      }
      ASSERT_EQ(read_vlen(Array::open(store, "s")).values, ref) << "round " << round;
    }
    // Orthogonal and point reads agree with the reference.
    const auto part = read_vlen(z, {slice(1, 6, 2), std::vector<std::int64_t>{4, 0}});
    EXPECT_EQ(part.shape, (Shape{3, 2}));
    EXPECT_EQ(part.values[1], ref[1 * 5 + 0]);
    EXPECT_EQ(read_vlen_points(z, {{6, 0}, {4, 1}}).values, (std::vector<std::string>{ref[34], ref[1]}));
    // Growth keeps every value.
    z.append(VlenValues{{1, 5}, {"e0", "e1", "e2", "e3", "e4"}}, 0);
    EXPECT_EQ(read_vlen(z, {slice(7, 8)}).values, (std::vector<std::string>{"e0", "e1", "e2", "e3", "e4"}));
    if (l.spec.zarr_format == 3) {
      z.prepend(VlenValues{{8, 1}, {"p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7"}}, 1);
      EXPECT_EQ(z.domain()[1], (DimDomain{-1, 5}));
      EXPECT_EQ(read_vlen(z, {slice(0, 1), slice(0, 2)}).values, (std::vector<std::string>{"p0", ref[0]}));
    }
  }
}

TEST(Vlen, BadInputIsRefusedWithNothingWritten) {
  auto store = MemoryStore::create();
  auto z = Array::create(store, "s", ArraySpec{.shape = {4}, .chunks = {2}, .dtype = DataType::string_t});
  write_vlen(z, {}, VlenValues{{4}, {"a", "b", "c", "d"}});
  const auto before = snapshot(*store);
  EXPECT_THROW(write_vlen(z, {slice(0, 1)}, VlenValues{{1}, {std::string("\xff\xfe", 2)}}),
               SelectionError);                                                                  // not UTF-8
  EXPECT_THROW(write_vlen(z, {slice(0, 2)}, VlenValues{{3}, {"a", "b", "c"}}), SelectionError);  // wrong shape
  EXPECT_THROW(z.write({}, NDArray(DataType::string_t, {4}).view()), SelectionError);            // numeric call
  EXPECT_EQ(snapshot(*store), before);
  // Corrupt chunks: a count that disagrees, a length past the end, invalid UTF-8 stored.
  auto put = [&](std::vector<std::uint8_t> b) { store->set("s/c/0", Bytes(b.begin(), b.end())); };
  put({3, 0, 0, 0, 1, 0, 0, 0, 'a', 1, 0, 0, 0, 'b', 1, 0, 0, 0, 'c'});
  EXPECT_THROW(read_vlen(z), CodecError);
  put({2, 0, 0, 0, 1, 0, 0, 0, 'a', 9, 0, 0, 0, 'b'});
  EXPECT_THROW(read_vlen(z), CodecError);
  put({2, 0, 0, 0, 1, 0, 0, 0, 'a', 1, 0, 0, 0, 0xc0});
  EXPECT_THROW(read_vlen(z), CodecError);
  put({2, 0, 0, 0, 1, 0, 0, 0, 'a', 1, 0, 0, 0, 'b', 7});
  EXPECT_THROW(read_vlen(z), CodecError);
  // The bytes serialiser is refused for a string array, and vlen-utf8 for numbers.
  ArraySpec bad{.shape = {4}, .chunks = {2}, .dtype = DataType::string_t};
  bad.codecs = std::vector<codec::Any>{codec::BytesCodec{}};
  EXPECT_THROW(Array::create(store, "t", bad), MetadataError);
  ArraySpec bad2{.shape = {4}, .chunks = {2}, .dtype = DataType::int32};
  bad2.codecs = std::vector<codec::Any>{CodecMetadata{"vlen-utf8", Json::object()}};
  EXPECT_THROW(Array::create(store, "u", bad2), MetadataError);
}

TEST(Vlen, CopyKeepsEveryValue) {
  auto store = MemoryStore::create();
  auto z = Array::create(store, "s",
                         ArraySpec{.shape = {5}, .chunks = {2}, .dtype = DataType::string_t, .fill_value = Json("?")});
  write_vlen(z, {slice(0, 3)}, VlenValues{{3}, {"α", "", "γ"}});
  auto m = z.metadata();
  m.chunk_grid.chunk_shape = {3};
  m.codecs = {CodecMetadata{"vlen-utf8", Json::object()}, CodecMetadata{"gzip", Json::object({{"level", 1}})}};
  auto c = copy_array(z, store, "copy", m);
  EXPECT_EQ(read_vlen(c).values, (std::vector<std::string>{"α", "", "γ", "?", "?"}));
}

TEST(Numcodecs, NarrowingFiltersSignExtendOnDecode) {
  // Delta into int8 differences: [10, 9] -> [10, -1] -> [10, 9] (not 265).
  std::vector<CodecMetadata> cs = {{"numcodecs.delta", Json::object({{"dtype", "<i4"}, {"astype", "<i1"}})},
                                   {"bytes", Json::object()}};
  const auto p = CodecPipeline::from_metadata(cs, ChunkSpec{{2}, DataType::int32, Bytes(4, 0)});
  std::vector<std::int32_t> v = {10, 9};
  const Bytes enc = p.encode(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(v.data()), 8));
  ASSERT_EQ(enc.size(), 2u);
  EXPECT_EQ(static_cast<std::int8_t>(enc[1]), -1);
  std::vector<std::int32_t> out(2);
  p.decode(enc, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(out.data()), 8));
  EXPECT_EQ(out, v);
}

// The bit filters' edges (their bytes against numcodecs are the codec fixtures'): what numcodecs
// 0.11 refuses when encoding is refused when encoding (stored data still reads), packbits only
// takes one-byte types, and a packbits stream whose padding does not match the chunk fails.
TEST(Numcodecs, BitFiltersRefuseWhatNumcodecsCannotDo) {
  const auto pipeline = [](const Json& filter, const DataType& t, std::int64_t n) {
    std::vector<CodecMetadata> cs = {CodecMetadata::from_json(filter, "codecs[0]"),
                                     {"bytes", Json::object({{"endian", "little"}})}};
    return CodecPipeline::from_metadata(cs, ChunkSpec{{n}, t, Bytes(t.size(), 0)});
  };
  const Json round24 = Json::parse(R"({"name": "numcodecs.bitround", "configuration": {"keepbits": 24}})");
  const auto too_many = pipeline(round24, DataType::float32, 2);
  const Bytes f(8, 0);
  expect_throw_with<CodecError>([&] { too_many.encode(f); }, {"keepbits 24", "23"});
  Bytes out(8, 1);
  too_many.decode(f, out);  // decoding is the identity
  EXPECT_EQ(out, f);
  expect_throw_with<MetadataError>([&] { pipeline(round24, DataType::int32, 2); }, {"float"});
  // A new array is refused at once instead (nothing written).
  auto store = MemoryStore::create();
  ArrayMetadata m =
      Array::create(MemoryStore::create(), {.shape = {4}, .chunks = {2}, .dtype = DataType::float32}).metadata();
  m.codecs.insert(m.codecs.begin(), CodecMetadata::from_json(round24, "codecs[0]"));
  expect_throw_with<MetadataError>([&] { Array::create(store, "r", m); }, {"keepbits", "23 mantissa bits"});
  EXPECT_TRUE(store->list_prefix("").empty());
  const Json pack = Json::parse(R"({"name": "numcodecs.packbits", "configuration": {}})");
  expect_throw_with<MetadataError>([&] { pipeline(pack, DataType::int16, 2); }, {"packbits", "int16"});
  const auto bits = pipeline(pack, DataType::uint8, 10);
  const Bytes ten = {0, 1, 2, 0, 255, 0, 0, 0, 0, 1};
  const Bytes enc = bits.encode(ten);
  EXPECT_EQ(enc, (Bytes{6, 0x68, 0x40}));  // 6 padding bits; 0110 1000, 01
  Bytes back(10);
  bits.decode(enc, back);
  EXPECT_EQ(back, (Bytes{0, 1, 1, 0, 1, 0, 0, 0, 0, 1}));  // truth values, as numcodecs gives
  expect_throw_with<CodecError>([&] { bits.decode(Bytes{5, 0x68, 0x40}, back); }, {"padding"});
}

// categorize's edges (its bytes against numcodecs are the codec fixtures', its str arrays the
// zarr-python 2 tests'): numbers outside the labels decode as "", labels longer than U<n> are cut,
// text that is no label is refused when encoding (numcodecs would store 0, read back as ""), the
// fill value is stored as numcodecs stores it, and configurations it cannot mean are refused.
// Delta decodes as NumPy's cumsum: the first element as stored, so -0.0 stays -0.0.
TEST(Numcodecs, DeltaKeepsTheFirstElementAsStored) {
  std::vector<CodecMetadata> cs = {{"numcodecs.delta", Json{{"dtype", "<f8"}}}, {"bytes", Json{{"endian", "little"}}}};
  const auto p = CodecPipeline::from_metadata(cs, ChunkSpec{{2}, DataType::float64, Bytes(8, 0)});
  const double in[2] = {-0.0, -0.0};
  Bytes enc(16);
  std::memcpy(enc.data(), in, 16);
  Bytes out(16);
  p.decode(enc, out);
  double got[2];
  std::memcpy(got, out.data(), 16);
  EXPECT_TRUE(std::signbit(got[0]) && std::signbit(got[1]));
}

TEST(Numcodecs, CategorizeDecodesAsNumcodecsAndRefusesTextItWouldLose) {
  const auto pipeline = [](const Json& cfg, const DataType& t, std::int64_t n, Bytes fill = {}) {
    std::vector<CodecMetadata> cs = {{"numcodecs.categorize", cfg}, {"bytes", Json::object()}};
    if (fill.empty()) fill = Bytes(t.size(), 0);
    return CodecPipeline::from_metadata(cs, ChunkSpec{{n}, t, fill});
  };
  const auto u3 = DataType::fixed_utf32(3);
  const auto wide = [](std::u32string_view s, std::size_t n) {
    Bytes b(4 * n, 0);
    std::memcpy(b.data(), s.data(), 4 * std::min(n, s.size()));
    return b;
  };
  const Json cfg = {{"labels", {"abcdef", "x"}}, {"dtype", "<U3"}, {"astype", "|u1"}};
  const auto p = pipeline(cfg, u3, 5, wide(U"0", 1 * 3));
  Bytes out(5 * 12, 0xee);
  p.decode(Bytes{1, 0, 2, 7, 255}, out);
  Bytes want;
  for (auto s : {U"abc", U"", U"x", U"", U""}) {
    const Bytes e = wide(s, 3);
    want.insert(want.end(), e.begin(), e.end());
  }
  EXPECT_EQ(out, want);
  Bytes in;
  for (auto s : {U"x", U"", U"0", U"x", U""}) {  // "0" is the fill value: stored as 0, as numcodecs does
    const Bytes e = wide(s, 3);
    in.insert(in.end(), e.begin(), e.end());
  }
  EXPECT_EQ(p.encode(in), (Bytes{2, 0, 0, 2, 0}));
  std::memcpy(in.data(), U"abc", 12);  // the cut label is not the label
  expect_throw_with<CodecError>([&] { p.encode(in); }, {"\"abc\"", "not one of the filter's labels"});
  const auto refused = [&](const Json& bad, std::initializer_list<std::string> words) {
    expect_throw_with<MetadataError>([&] { pipeline(bad, u3, 2); }, words, bad.dump().substr(0, 80));
  };
  refused({{"labels", {1}}, {"dtype", "<U3"}}, {"list of strings"});
  refused({{"labels", {"a"}}, {"dtype", "<U4"}}, {"dtype", "<U3"});
  refused({{"labels", {"a"}}, {"dtype", "<U3"}, {"astype", "<f4"}}, {"integer"});
  refused({{"labels", Json(std::vector<std::string>(256, "a"))}, {"dtype", "<U3"}}, {"256 labels", "uint8"});
  expect_throw_with<MetadataError>([&] { pipeline(cfg, DataType::int32, 2); }, {"str (object) and U<n>", "int32"});
}

TEST(Attributes, RemoveTakesKeysFromWhatIsStoredNowInEitherFormat) {
  for (int format : {3, 2}) {
    auto store = MemoryStore::create();
    ArraySpec spec{.shape = {2}, .chunks = {2}, .dtype = DataType::int8};
    spec.attributes = {{"a", 1}, {"b", 2}};
    spec.zarr_format = format;
    auto h1 = Array::create(store, "x", spec);
    auto h2 = Array::open(store, "x");
    h2.update_attributes({{"added", 3}});  // h1 has not seen it
    EXPECT_EQ(h1.remove_attributes({"a", "never"}), std::vector<std::string>{"a"});
    const Json a = Array::open(store, "x").attributes();  // v2 keeps .zattrs sorted: compare by key
    EXPECT_EQ(a.size(), 2u) << format;
    EXPECT_EQ(a.value("b", 0), 2);
    EXPECT_EQ(a.value("added", 0), 3);
    auto g = Group::create(store, "g", {{"k", 1}, {"m", 2}}, false, format);
    Group::open(store, "g").update_attributes({{"n", 3}});
    EXPECT_EQ(g.remove_attributes({"k"}), std::vector<std::string>{"k"});
    const Json ga = Group::open(store, "g").attributes();
    EXPECT_EQ(ga.size(), 2u) << format;
    EXPECT_EQ(ga.value("m", 0), 2);
    EXPECT_EQ(ga.value("n", 0), 3);
  }
}

// NumPy's U<n> (either byte order), S<n>, datetime64 and timedelta64 as zarr-python 2 stores them:
// read, written byte for byte, and converted with the same chunks.
TEST(ZarrV2, FixedWidthStringsAndTimesReadAndWriteAsZarrPython2) {
  auto store = MemoryStore::create();
  auto put = [&](const std::string& path, const Json& dtype, const Json& fill, const Bytes& chunk0) {
    put_v2_array(*store, path, dtype, fill, chunk0);
  };
  auto raw = [&](const std::string& path) { return stored_elements(store, path); };
  // "ab", "c" as <U2 and >U2; b"ab", b"\0x" as |S2; 1 and NaT as <M8[s]; -2 as <m8[10ms].
  put("u_le", "<U2", "z", Bytes{'a', 0, 0, 0, 'b', 0, 0, 0, 'c', 0, 0, 0, 0, 0, 0, 0});
  put("u_be", ">U2", "", Bytes{0, 0, 0, 'a', 0, 0, 0, 'b', 0, 0, 0, 'c', 0, 0, 0, 0});
  put("s", "|S2", "eg==", Bytes{'a', 'b', 0, 'x'});
  Bytes times(16, 0);
  const std::int64_t one = 1, nat = INT64_MIN;
  std::memcpy(times.data(), &one, 8);
  std::memcpy(times.data() + 8, &nat, 8);
  put("t", "<M8[s]", nat, times);
  put("d", "<m8[10ms]", 0, Bytes{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0});
  auto u32 = [](const std::u32string& s) {
    return Bytes(reinterpret_cast<const std::uint8_t*>(s.data()),
                 reinterpret_cast<const std::uint8_t*>(s.data() + s.size()));
  };
  EXPECT_EQ(Array::open(store, "u_le").dtype(), DataType::fixed_utf32(2));
  EXPECT_EQ(raw("u_le"), u32(std::u32string(U"abc\0z\0", 6))) << "native order, NUL-padded, fill 'z'";
  EXPECT_EQ(raw("u_be"), u32(std::u32string(U"abc\0\0\0", 6)));
  EXPECT_EQ(raw("s"), (Bytes{'a', 'b', 0, 'x', 'z', 0}));
  EXPECT_EQ(Array::open(store, "t").dtype(), DataType::datetime64("s"));
  EXPECT_EQ(Array::open(store, "d").dtype(), DataType::timedelta64("ms", 10));
  const Bytes t = raw("t");
  std::int64_t third;
  std::memcpy(&third, t.data() + 16, 8);
  EXPECT_EQ(third, INT64_MIN);  // the fill value NaT
  // Written back: the same documents and chunk bytes zarr-python 2 writes.
  for (const char* path : {"u_le", "u_be", "s", "t", "d"}) expect_rewrite_keeps_zarray(store, path);
  EXPECT_EQ(*store->get("u_be/0"), (Bytes{0, 0, 0, 'a', 0, 0, 0, 'b', 0, 0, 0, 'c', 0, 0, 0, 0}));
  // A v2 array of each type created by zarrpp states what zarr-python 2 states.
  auto made = Array::create(
      store, "new",
      {.shape = {2}, .chunks = {2}, .dtype = DataType::fixed_utf32(4), .fill_value = Json("hi"), .zarr_format = 2});
  const Json doc = Json::parse(S(*store->get("new/.zarray")));
  EXPECT_EQ(doc["dtype"], "<U4");
  EXPECT_EQ(doc["fill_value"], "hi");
  // Converted: zarr-python 3's data types, the chunks untouched.
  const Bytes chunk = *store->get("u_be/0");
  convert_to_v3(store, "u_be");
  const Json v3 = Json::parse(S(*store->get("u_be/zarr.json")));
  EXPECT_EQ(v3["data_type"], Json::parse(R"({"name":"fixed_length_utf32","configuration":{"length_bytes":8}})"));
  EXPECT_EQ(v3["codecs"][0], Json::parse(R"({"name":"bytes","configuration":{"endian":"big"}})"));
  EXPECT_EQ(*store->get("u_be/0"), chunk);
  convert_to_v3(store, "t");
  EXPECT_EQ(Json::parse(S(*store->get("t/zarr.json")))["data_type"],
            Json::parse(R"({"name":"numpy.datetime64","configuration":{"unit":"s","scale_factor":1}})"));
  // What cannot be read is refused naming it.
  put("generic", "<M8", 0, Bytes(16, 0));
  expect_throw_with<UnsupportedError>([&] { Array::open(store, "generic"); }, {"without a unit"});
  put("wide_s", "|S2", "YWJj", Bytes(4, 0));  // a 3-byte fill value for S2
  expect_throw_with<MetadataError>([&] { Array::open(store, "wide_s"); }, {"longer than 2 bytes"});
}

TEST(ZarrV2, StructuredTypesReadAndWriteAsZarrPython2) {
  auto store = MemoryStore::create();
  auto put = [&](const std::string& path, const Json& dtype, const Json& fill, const Bytes& chunk0) {
    put_v2_array(*store, path, dtype, fill, chunk0);
  };
  auto raw = [&](const std::string& path) { return stored_elements(store, path); };
  auto le = [](auto v) {
    Bytes b(sizeof v);
    std::memcpy(b.data(), &v, sizeof v);
    return b;
  };
  auto cat = [](std::initializer_list<Bytes> parts) {
    Bytes out;
    for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
  };
  // (1, [2, 3], b"ab"), (4, [5, 6], b"cd") as zarr-python 2 stores [("a","<i4"),("b","<f8",(2,)),("c","S3")],
  // and its fill value (7, [1.5, 2.5], b"x") in base64, as it writes it.
  const Bytes e0 = cat({le(std::int32_t{1}), le(2.0), le(3.0), Bytes{'a', 'b', 0}});
  const Bytes e1 = cat({le(std::int32_t{4}), le(5.0), le(6.0), Bytes{'c', 'd', 0}});
  const Bytes fill = cat({le(std::int32_t{7}), le(1.5), le(2.5), Bytes{'x', 0, 0}});
  const Json descr = Json::parse(R"([["a", "<i4"], ["b", "<f8", [2]], ["c", "|S3"]])");
  ASSERT_EQ(base64_encode(fill), "BwAAAAAAAAAAAPg/AAAAAAAABEB4AAA=");
  put("s", descr, "BwAAAAAAAAAAAPg/AAAAAAAABEB4AAA=", cat({e0, e1}));
  const DataType st = Array::open(store, "s").dtype();
  ASSERT_EQ(st.kind(), DataKind::Struct);
  EXPECT_EQ(st.size(), 23u);
  EXPECT_EQ(st.fields()[1].name, "b");
  EXPECT_EQ(st.fields()[1].offset, 4u);
  EXPECT_EQ(st.fields()[1].shape, (std::vector<std::size_t>{2}));
  EXPECT_EQ(st.fields()[2].type, DataType::fixed_bytes(3));
  EXPECT_EQ(st.name(), R"([["a", "<i4"], ["b", "<f8", [2]], ["c", "|S3"]])");
  EXPECT_EQ(raw("s"), cat({e0, e1, fill})) << "the missing element reads as the fill value";
  // Big-endian fields, nested: read in native order, written back as stored.
  const Bytes be0{0, 0, 0, 1, 0, 2, 3, 0, 4, 5}, be1{0, 0, 0, 6, 0, 7, 8, 0, 9, 10};
  put("be", Json::parse(R"([["a", ">i4"], ["n", [["x", ">u2"], ["y", "|u1"]], [2]]])"),
      "AAAAAAAAAAAAAA==", cat({be0, be1}));
  EXPECT_EQ(raw("be"),
            (Bytes{1, 0, 0, 0, 2, 0, 3, 4, 0, 5, 6, 0, 0, 0, 7, 0, 8, 9, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  // Unnamed fields (NumPy's padding from align=True) are named f<index>, as NumPy names them.
  put("pad", Json::parse(R"([["a", "|u1"], ["", "|V3"], ["b", "<i4"]])"), nullptr, {});
  EXPECT_EQ(Array::open(store, "pad").dtype().fields()[1].name, "f1");
  // The shape 1 (an integer) is a scalar field, as NumPy 1.24 reads it; [1] is a subarray of one.
  put("one", Json::parse(R"([["a", "<i4", 1], ["b", "<i4", [1]]])"), nullptr, {});
  EXPECT_TRUE(Array::open(store, "one").dtype().fields()[0].shape.empty());
  EXPECT_EQ(Array::open(store, "one").dtype().fields()[1].shape, (std::vector<std::size_t>{1}));
  // Written back: the same documents and chunk bytes zarr-python 2 writes.
  for (const char* path : {"s", "be", "pad"}) expect_rewrite_keeps_zarray(store, path);
  EXPECT_EQ(*store->get("be/0"), cat({be0, be1}));
  // Created by zarrpp (the fill value as base64 of one element), big-endian on request.
  auto made = Array::create(store, "new",
                            {.shape = {2},
                             .chunks = {2},
                             .dtype = st,
                             .fill_value = Json(base64_encode(fill)),
                             .endian = codec::Endian::big,
                             .zarr_format = 2});
  const Json doc = Json::parse(S(*store->get("new/.zarray")));
  EXPECT_EQ(doc["dtype"], Json::parse(R"([["a", ">i4"], ["b", ">f8", [2]], ["c", "|S3"]])"));
  Bytes big_fill = fill;
  st.swap_byte_order(big_fill);
  EXPECT_EQ(doc["fill_value"], base64_encode(big_fill));
  EXPECT_EQ(made.read().bytes(), cat({fill, fill}));
  // Zarr v3's struct data type has no subarray fields: creating and converting such a type are
  // refused, nothing changed.
  expect_throw_with<Error>([&] { Array::create(store, "v3", {.shape = {2}, .chunks = {2}, .dtype = st}); },
                           {"field 'b'", "Zarr v3", "Zarr v2"});
  EXPECT_FALSE(store->get("v3/zarr.json"));
  expect_throw_with<Error>([&] { convert_to_v3(store, "s"); }, {"field 'b'", "Zarr v3"});
  EXPECT_TRUE(store->get("s/.zarray"));
  EXPECT_FALSE(store->get("s/zarr.json"));
  // Without them, conversion writes the struct extension's form, the chunks untouched.
  put("flat", Json::parse(R"([["a", ">i4"], ["n", [["x", ">u2"], ["y", "|u1"]]]])"),
      "AAAAAQACAw==", Bytes{0, 0, 0, 9, 0, 8, 7, 0, 0, 0, 6, 0, 5, 4});
  const Bytes flat_chunk = *store->get("flat/0"), flat_values = raw("flat");
  convert_to_v3(store, "flat");
  const Json v3 = Json::parse(S(*store->get("flat/zarr.json")));
  EXPECT_EQ(v3["data_type"], Json::parse(R"({"name": "struct", "configuration": {"fields": [
      {"name": "a", "data_type": "int32"},
      {"name": "n", "data_type": {"name": "struct", "configuration": {"fields": [
          {"name": "x", "data_type": "uint16"}, {"name": "y", "data_type": "uint8"}]}}}]}})"));
  EXPECT_EQ(v3["fill_value"], Json::parse(R"({"a": 1, "n": {"x": 2, "y": 3}})"));
  EXPECT_EQ(v3["codecs"][0], Json::parse(R"({"name": "bytes", "configuration": {"endian": "big"}})"));
  EXPECT_EQ(*store->get("flat/0"), flat_chunk);
  EXPECT_EQ(raw("flat"), flat_values);
}

TEST(ZarrPython3, StructDataTypesReadAsTheExtensionStatesThem) {
  // Written by hand from zarr-extensions' struct and structured documents: fields as objects or
  // (older) [name, type] pairs, nested structs, a fill value object, little-endian fields.
  auto store = MemoryStore::create();
  auto doc = [](const std::string& data_type, const std::string& fill, const std::string& bytes_cfg) {
    return R"({"zarr_format": 3, "node_type": "array", "shape": [3], "data_type": )" + data_type +
           R"(, "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
              "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
              "fill_value": )" +
           fill + R"(, "codecs": [{"name": "bytes")" + bytes_cfg + "}]}";
  };
  const std::string fields =
      R"([{"name": "p", "data_type": {"name": "struct", "configuration": {"fields": [
            {"name": "x", "data_type": "float32"}, {"name": "y", "data_type": {"name": "float32"}}]}}},
          {"name": "v", "data_type": "int16"},
          {"name": "t", "data_type": {"name": "numpy.datetime64", "configuration": {"unit": "s", "scale_factor": 1}}}])";
  store->set("s/zarr.json", B(doc(R"({"name": "struct", "configuration": {"fields": )" + fields + "}}",
                                  R"({"p": {"x": 1.5, "y": -2.0}, "v": 7, "t": "NaT"})",
                                  R"(, "configuration": {"endian": "little"})")));
  Bytes chunk;
  auto add = [&](auto v) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
    chunk.insert(chunk.end(), p, p + sizeof v);
  };
  add(0.5f), add(1.0f), add(std::int16_t{-3}), add(std::int64_t{60});
  add(2.5f), add(3.0f), add(std::int16_t{4}), add(std::int64_t{-1});
  store->set("s/c/0", chunk);
  auto a = Array::open(store, "s");
  ASSERT_EQ(a.dtype().kind(), DataKind::Struct);
  EXPECT_EQ(a.dtype().size(), 4u + 4 + 2 + 8);
  const NDArray v = a.read();
  Bytes want = chunk;
  add(1.5f), add(-2.0f), add(std::int16_t{7}), add(INT64_MIN);
  want.insert(want.end(), chunk.end() - 18, chunk.end());
  EXPECT_EQ(v.bytes(), want) << "the third element is the fill value";
  // Written back as read; the older name and pair form read alike; bad forms are refused by name.
  a.write({}, v.view());
  EXPECT_EQ(Json::parse(S(*store->get("s/zarr.json")))["data_type"]["name"], "struct");
  store->set("old/zarr.json",
             B(doc(R"({"name": "structured", "configuration": {"fields": [["v", "int16"], ["w", "uint8"]]}})",
                   R"("BwAB")", "")));  // base64, as older writers state it; no endian: all taken little
  const auto old = Array::open(store, "old");
  EXPECT_EQ(old.dtype(), DataType::structured({{"v", DataType::int16, {}, 0}, {"w", DataType::uint8, {}, 0}}));
  EXPECT_EQ(old.read().bytes(), (Bytes{7, 0, 1, 7, 0, 1, 7, 0, 1}));
  const char* bad[] = {
      R"({"name": "struct", "configuration": {"fields": []}})",
      R"({"name": "struct", "configuration": {"fields": [{"name": "a", "data_type": "int8"}, {"name": "a", "data_type": "int8"}]}})",
      R"({"name": "struct", "configuration": {"fields": [{"name": "", "data_type": "int8"}]}})",
      R"({"name": "struct", "configuration": {"fields": [{"name": "a", "data_type": "string"}]}})",
      R"({"name": "struct", "configuration": {"fields": [{"name": "a", "data_type": "int8", "shape": [2]}]}})",
      R"({"name": "struct", "configuration": {"fields": [{"name": "a", "data_type": "int8"}], "packed": true}})",
      R"({"name": "struct"})"};
  for (const char* t : bad) {
    store->set("bad/zarr.json", B(doc(t, "null", "")));
    EXPECT_THROW(Array::open(store, "bad"), MetadataError) << t;
  }
  store->set("bad/zarr.json",
             B(doc(R"({"name": "struct", "configuration": {"fields": [{"name": "a", "data_type": "int8"},
      {"name": "b", "data_type": "int8"}]}})",
                   R"({"a": 1})", "")));
  expect_throw_with<MetadataError>([&] { Array::open(store, "bad"); }, {"no value for field 'b'"});
}

TEST(ZarrV2, StructuredTypesZarrppCannotHoldAreRefusedByName) {
  auto store = MemoryStore::create();
  const auto open_with = [&](const std::string& dtype, const Json& fill) {
    const Json z = {{"zarr_format", 2},      {"shape", {3}},       {"chunks", {2}}, {"dtype", Json::parse(dtype)},
                    {"compressor", nullptr}, {"fill_value", fill}, {"order", "C"},  {"filters", nullptr}};
    store->set("x/.zarray", B(z.dump()));
    Array::open(store, "x");
  };
  const struct {
    const char* dtype;
    Json fill;
    std::initializer_list<std::string> says;
  } cases[] = {
      {R"([["a", "<i4"], ["b", ">f8"]])", nullptr, {"both byte orders"}},
      {R"([[["title", "a"], "<i4"]])", nullptr, {"title"}},
      {R"([["a", "|O"]])", nullptr, {"'a'", "Python objects"}},
      {R"([["a", "<i4"], ["a", "<f8"]])", nullptr, {"'a'", "twice"}},
      {R"([])", nullptr, {"structured dtype"}},
      {R"([["a", "<i4", [0]]])", nullptr, {"shape"}},
      {R"([["a", "<i4"]])", 0, {"fill_value", "base64"}},
      {R"([["a", "<i4"]])", "AAA=", {"fill_value", "4 bytes"}},
      {R"([["a", "<q4"]])", nullptr, {"dtype"}},
  };
  for (const auto& c : cases) expect_throw_with<Error>([&] { open_with(c.dtype, c.fill); }, c.says, c.dtype);
}

TEST(DataTypes, StructuredTypesLayOutAndSwapFieldByField) {
  const DataType t = DataType::structured(
      {{"a", DataType::int16, {}, 99}, {"b", DataType::uint8, {}, 0}, {"c", DataType::complex64, {2}, 0}});
  EXPECT_EQ(t.size(), 2u + 1 + 16);
  EXPECT_EQ(t.fields()[2].offset, 3u) << "offsets are the packed ones, whatever is given";
  EXPECT_EQ(t.component_size(), 4u);
  EXPECT_EQ(t.numpy_str(), "|V19");
  EXPECT_EQ(t, DataType::structured(
                   {{"a", DataType::int16, {}, 0}, {"b", DataType::uint8, {}, 0}, {"c", DataType::complex64, {2}, 0}}));
  EXPECT_FALSE(t == DataType::structured({{"a", DataType::int16, {}, 0}, {"b", DataType::uint8, {}, 0}}));
  EXPECT_FALSE(t == DataType::raw(19 * 8));
  Bytes b(19);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::uint8_t>(i);
  t.swap_byte_order(b);
  EXPECT_EQ(b, (Bytes{1, 0, 2, 6, 5, 4, 3, 10, 9, 8, 7, 14, 13, 12, 11, 18, 17, 16, 15}));
  EXPECT_THROW(DataType::structured({}), MetadataError);
  EXPECT_THROW(DataType::structured({{"s", DataType::string_t, {}, 0}}), MetadataError);
  EXPECT_THROW(DataType::structured({{"", DataType::int8, {}, 0}}), MetadataError);
  // Fill values (and CLI values): the fields by name or in order, or base64 of one element.
  const Bytes one = parse_fill_value(Json::parse(R"({"a": -2, "b": 7, "c": [[1.5, 0], ["NaN", -1]]})"), t);
  ASSERT_EQ(one.size(), 19u);
  EXPECT_EQ(fill_value_to_json(one, t), Json::parse(R"({"a": -2, "b": 7, "c": [[1.5, 0.0], ["NaN", -1.0]]})"));
  EXPECT_EQ(parse_fill_value(Json::parse(R"([-2, 7, [[1.5, 0], ["NaN", -1]]])"), t), one);
  EXPECT_EQ(parse_fill_value(Json(base64_encode(one)), t), one);
  for (const char* bad : {R"({"a": 1, "b": 2})", R"({"a": 1, "b": 2, "x": [[0, 0], [0, 0]]})", R"([1, 2, [[0, 0]]])",
                          R"([1, 300, [[0, 0], [0, 0]]])", "5", R"("AAAA")"})
    EXPECT_THROW(parse_fill_value(Json::parse(bad), t), MetadataError) << bad;
  // The CLI's --dtype takes the descr as JSON; big-endian fields are the bytes codec's to say.
  EXPECT_EQ(data_type_from_user(R"([["a", "<i2"], ["b", "|u1"], ["c", "<c8", [2]]])"), t);
  EXPECT_THROW(data_type_from_user(R"([["a", ">i2"]])"), ArgumentError);
  EXPECT_THROW(data_type_from_user(R"([["a", "<i2"])"), ArgumentError);
}

// xarray reads a v2 array's fill value as its missing value, a v3 array's from the _FillValue
// attribute: conversion adds that attribute (xarray's encoding) to what xarray wrote.
TEST(ZarrV2, ConversionKeepsXarraysMissingValueAsItsAttribute) {
  auto store = MemoryStore::create();
  auto make = [&](const std::string& path, DataType t, const Json& fill, const Json& attrs) {
    ArraySpec s{.shape = {2}, .chunks = {2}, .dtype = t, .fill_value = fill, .zarr_format = 2};
    s.attributes = attrs;
    Array::create(store, path, s);
  };
  const Json dims = {{"_ARRAY_DIMENSIONS", {"x"}}};
  make("packed", DataType::int16, -32768, dims);
  make("nan", DataType::float32, "NaN", dims);
  make("text", DataType::fixed_utf32(2), "", dims);
  make("stated", DataType::float64, 1.0, Json{{"_ARRAY_DIMENSIONS", {"x"}}, {"_FillValue", 2.0}});
  make("plain", DataType::float64, 1.0, Json::object());  // not xarray's
  make("times", DataType::datetime64("ns"), "NaT", dims);
  const auto rep = convert_to_v3(store);
  auto attrs = [&](const std::string& path) { return Array::open(store, path).attributes(); };
  EXPECT_EQ(attrs("packed")["_FillValue"], -32768);
  EXPECT_EQ(attrs("nan")["_FillValue"], "AAAAAAAA+H8=");
  EXPECT_FALSE(attrs("text").contains("_FillValue"));  // xarray masks it on v2: nothing shown to keep
  EXPECT_EQ(attrs("stated")["_FillValue"], 2.0);       // the variable's own, untouched
  EXPECT_FALSE(attrs("plain").contains("_FillValue"));
  // As zarr.json states it (NaT as the int64 minimum); xarray's zarr engine shows it on v2.
  EXPECT_EQ(attrs("times")["_FillValue"], std::numeric_limits<std::int64_t>::min());
  std::string notes;
  for (const auto& n : rep.notes) notes += n + "\n";
  EXPECT_NE(notes.find("packed: its fill value is xarray's missing value"), std::string::npos) << notes;
  EXPECT_NE(notes.find("times: its fill value is xarray's missing value, kept"), std::string::npos) << notes;
  EXPECT_NE(notes.find("text: xarray reads its v2 fill value \"\" as missing"), std::string::npos) << notes;
  // And back: the attribute that states the fill value goes, a variable's own stays (noted).
  notes.clear();
  for (const auto& n : convert_to_v2(store).notes) notes += n + "\n";
  EXPECT_FALSE(attrs("packed").contains("_FillValue"));
  EXPECT_FALSE(attrs("nan").contains("_FillValue"));
  EXPECT_FALSE(attrs("times").contains("_FillValue"));
  EXPECT_FALSE(attrs("text").contains("_FillValue"));
  EXPECT_EQ(attrs("stated")["_FillValue"], 2.0);
  EXPECT_NE(notes.find("packed: the attribute _FillValue -32768 states its fill value"), std::string::npos) << notes;
  EXPECT_NE(notes.find("stated: xarray reads a v2 array's missing value from its fill value 1.0"), std::string::npos)
      << notes;
}

// Nodes that only .zmetadata describes (their own .zarray/.zgroup/.zattrs absent) open as
// zarr.open_consolidated opens them, list among their group's members, and convert; changing their
// documents is refused naming why, with nothing written.
TEST(ZarrV2, NodesOnlyConsolidatedMetadataDescribesOpenListAndConvert) {
  auto store = MemoryStore::create();
  Group::create(store, "", Json{{"t", 1}}, false, 2);
  const Json zarray = {{"zarr_format", 2},      {"shape", {3}},    {"chunks", {2}}, {"dtype", "<i2"},
                       {"compressor", nullptr}, {"fill_value", 7}, {"order", "C"},  {"filters", nullptr}};
  const Json md = {{"metadata",
                    {{".zgroup", {{"zarr_format", 2}}},
                     {".zattrs", {{"t", 1}}},
                     {"sub/.zgroup", {{"zarr_format", 2}}},
                     {"sub/a/.zarray", zarray},
                     {"sub/a/.zattrs", {{"units", "m"}}}}},
                   {"zarr_consolidated_format", 1}};
  store->set(".zmetadata", B(md.dump()));
  store->set("sub/a/0", Bytes{1, 0, 2, 0});
  const auto before = snapshot(*store);
  auto root = Group::open(store, "");
  ASSERT_EQ(root.children().size(), 1u);
  EXPECT_EQ(root.children()[0].name, "sub");
  auto a = Array::open(store, "sub/a");
  EXPECT_EQ(a.attributes()["units"], "m");
  const auto v = a.read();
  EXPECT_EQ(v.at<std::int16_t>({0}), 1);
  EXPECT_EQ(v.at<std::int16_t>({2}), 7);  // the fill value from the consolidated entry
  expect_throw_with<UnsupportedError>([&] { a.resize({4}); }, {"only by consolidated metadata", "zarrpp convert"});
  expect_throw_with<UnsupportedError>([&] { a.update_attributes(Json{{"k", 1}}); }, {"only by consolidated metadata"});
  EXPECT_EQ(snapshot(*store), before);
  // The nearest .zmetadata decides: a nearer one without the node hides a farther one's entry.
  auto other = MemoryStore::create();
  other->set(".zmetadata", B(md.dump()));
  other->set("sub/.zgroup", B(R"({"zarr_format": 2})"));
  other->set("sub/.zmetadata", B(R"({"metadata": {".zgroup": {"zarr_format": 2}}, "zarr_consolidated_format": 1})"));
  EXPECT_THROW(Array::open(other, "sub/a"), NotFoundError);
  // Converted in place: every node gets its zarr.json, the chunks stay.
  const auto rep = convert_to_v3(store);
  EXPECT_EQ(rep.nodes, 3);
  auto a3 = Array::open(store, "sub/a");
  EXPECT_EQ(a3.metadata().zarr_format, 3);
  EXPECT_EQ(a3.attributes()["units"], "m");
  EXPECT_EQ(a3.read().at<std::int16_t>({1}), 2);
  EXPECT_FALSE(store->exists(".zmetadata"));
}

// A v2 array created with no fill value states null, as zarr-python 2 (and xarray for variables
// without _FillValue) writes it; Zarr v3 has no such state.
TEST(ZarrV2, ArraysCreatedWithoutFillValueStateNull) {
  auto store = MemoryStore::create();
  auto a = Array::create(
      store, "n",
      {.shape = {3}, .chunks = {2}, .dtype = DataType::float32, .fill_value = Json(nullptr), .zarr_format = 2});
  EXPECT_TRUE(Json::parse(S(*store->get("n/.zarray")))["fill_value"].is_null());
  EXPECT_TRUE(a.metadata().must_store_empty_chunks());
  std::vector<float> zeros(3, 0.0f);
  a.write({}, NDView::c_order(zeros.data(), DataType::float32, {3}));
  EXPECT_TRUE(store->exists("n/0") && store->exists("n/1"));  // zarr-python 2 would not read zeros there
  EXPECT_THROW(Array::create(store, "v3", {.shape = {3}, .chunks = {2}, .fill_value = Json(nullptr)}), ArgumentError);
}

// zarr-python 3 states blosc's typesize as the element size even above Blosc's 255 (a U100 array:
// 400), which Blosc takes as 1: such arrays open, read and write.
TEST(ZarrPython3, BloscTypesizesAbove255AreTakenAsBloscTakesThem) {
  auto store = MemoryStore::create();
  const Json doc = Json::parse(R"({"zarr_format": 3, "node_type": "array", "shape": [3],
    "data_type": {"name": "fixed_length_utf32", "configuration": {"length_bytes": 400}},
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
    "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}}, "fill_value": "x",
    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
               {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3, "shuffle": "shuffle",
                                                   "typesize": 400, "blocksize": 0}}]})");
  auto a = Array::create(store, "u", ArrayMetadata::from_json(doc));
  std::vector<char32_t> v(200, U'\0');
  v[0] = U'h';
  v[100] = U'\u00e9';
  a.write({slice(0, 2)}, NDView::c_order(v.data(), DataType::fixed_utf32(100), {2}));
  const auto r = Array::open(store, "u").read();
  EXPECT_EQ(std::memcmp(r.raw_data(), v.data(), 800), 0);
  EXPECT_EQ(static_cast<char32_t>(reinterpret_cast<const char32_t*>(r.raw_data())[200]), U'x');  // the fill value
  EXPECT_EQ(Json::parse(S(*store->get("u/zarr.json")))["codecs"][1]["configuration"]["typesize"], 400);
}
