// The regular_bounded conformance corpus (conformance/regular_bounded, see its README), run
// through the public API: every array listed "read" opens with the stated domain, reads exactly
// the expected values (whole, and block by block), and counts only real chunk keys as stored;
// every array listed "refuse" fails to open or read with an error. Also: what zarrpp writes always
// states origin and lower_bound, so a reader of zarrs' clipped-edge grid refuses it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "selections.hpp"
#include "zarrpp/zarrpp.hpp"

using namespace zarrpp;
namespace fs = std::filesystem;

namespace {
const fs::path kCorpus = ZARRPP_CONFORMANCE_DIR;
// The rectilinear grid's corpus (conformance/rectilinear), beside it.
const fs::path kRectilinear = fs::path(ZARRPP_CONFORMANCE_DIR).parent_path() / "rectilinear";
// The rectilinear_bounded grid's corpus (conformance/rectilinear_bounded).
const fs::path kRectilinearBounded = fs::path(ZARRPP_CONFORMANCE_DIR).parent_path() / "rectilinear_bounded";

struct Entry {
  std::string path, expect, values, reason;
  Domain domain;
  std::optional<std::int64_t> stored_chunks;
  fs::path corpus;
  std::vector<std::vector<std::int64_t>> chunk_sizes;  // rectilinear: along each dimension
};

std::vector<Entry> load_manifest(const fs::path& corpus = kCorpus) {
  std::ifstream in(corpus / "manifest.json");
  if (!in) return {};
  const Json m = Json::parse(in);
  std::vector<Entry> out;
  for (const auto& a : m["arrays"]) {
    Entry e{a["path"].get<std::string>(),
            a["expect"].get<std::string>(),
            a.value("values", std::string()),
            a.value("reason", std::string()),
            {},
            std::nullopt,
            corpus,
            {}};
    if (a.contains("chunk_sizes")) e.chunk_sizes = a["chunk_sizes"].get<std::vector<std::vector<std::int64_t>>>();
    if (a.contains("domain"))
      for (const auto& d : a["domain"]) e.domain.push_back({d[0].get<std::int64_t>(), d[1].get<std::int64_t>()});
    if (a.contains("stored_chunks")) e.stored_chunks = a["stored_chunks"].get<std::int64_t>();
    out.push_back(e);
  }
  return out;
}

// Equal values (NaN equal to NaN for floating-point types).
bool same_values(const NDArray& a, const NDArray& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  if (a.bytes() == b.bytes()) return true;
  if (a.dtype().kind() != DataKind::Float) return false;
  const auto n = static_cast<std::size_t>(a.size());
  for (std::size_t i = 0; i < n; ++i) {
    double x, y;
    if (a.dtype() == DataType::float32) {
      float fx, fy;
      std::memcpy(&fx, a.raw_data() + 4 * i, 4);
      std::memcpy(&fy, b.raw_data() + 4 * i, 4);
      x = fx, y = fy;
    } else if (a.dtype() == DataType::float64) {
      std::memcpy(&x, a.raw_data() + 8 * i, 8);
      std::memcpy(&y, b.raw_data() + 8 * i, 8);
    } else {
      return false;
    }
    if (!(x == y || (std::isnan(x) && std::isnan(y)))) return false;
  }
  return true;
}

class Corpus : public ::testing::TestWithParam<Entry> {};
}  // namespace

TEST(Corpus, ManifestListsTheCorpus) {
  const auto entries = load_manifest();
  ASSERT_GE(entries.size(), 40u) << "manifest not found or short at " << kCorpus;
  std::size_t reads = 0;
  for (const auto& e : entries) {
    EXPECT_TRUE(fs::is_regular_file(kCorpus / e.path / "zarr.json")) << e.path;
    if (e.expect == "read") ++reads;
  }
  EXPECT_GE(reads, 20u);
}

TEST_P(Corpus, ReadsOrRefusesAsListed) {
  const Entry& e = GetParam();
  auto store = FileStore::open(e.corpus / e.path, FileStore::Options{.create = false, .read_only = true});
  if (e.expect == "refuse") {
    EXPECT_THROW((void)Array::open(store).read(), Error) << e.path << " must be refused: " << e.reason;
    return;
  }
  auto z = Array::open(store);
  EXPECT_EQ(z.domain(), e.domain);
  const NDArray expected = npy::load(e.corpus / e.values);
  if (!e.chunk_sizes.empty()) {
    EXPECT_EQ(z.write_chunk_sizes(), e.chunk_sizes) << e.path;
  }
  const NDArray got = z.read();
  ASSERT_EQ(got.shape(), expected.shape());
  EXPECT_TRUE(same_values(got, expected)) << e.path;
  // Block by block (chunk-aligned reads) gives the same values as the whole read.
  if (z.ndim() > 0 && got.size() > 0) {
    Selection first_block(z.ndim(), std::int64_t{0});
    const auto b = read_blocks(z, first_block);
    Selection equivalent;
    for (std::size_t d = 0; d < z.ndim(); ++d) equivalent.push_back(slice(0, b.shape()[d]));
    EXPECT_TRUE(same_values(b, z.read(equivalent)));
  }
  // Keys that are not chunk keys of the array (outside the chunk range, -0, +1, 01) are not counted.
  if (e.stored_chunks) {
    EXPECT_EQ(z.nshards_stored(), *e.stored_chunks) << e.path;
  }
}

std::string entry_name(const ::testing::TestParamInfo<Entry>& info) {
  std::string n = info.param.path;
  for (auto& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(RegularBounded, Corpus, ::testing::ValuesIn(load_manifest()), entry_name);
INSTANTIATE_TEST_SUITE_P(Rectilinear, Corpus, ::testing::ValuesIn(load_manifest(kRectilinear)), entry_name);
INSTANTIATE_TEST_SUITE_P(RectilinearBounded, Corpus, ::testing::ValuesIn(load_manifest(kRectilinearBounded)),
                         entry_name);

TEST(Corpus, RectilinearBoundedManifestListsItsCorpus) {
  const auto entries = load_manifest(kRectilinearBounded);
  ASSERT_GE(entries.size(), 25u) << "manifest not found or short at " << kRectilinearBounded;
  for (const auto& e : entries) EXPECT_TRUE(fs::is_regular_file(kRectilinearBounded / e.path / "zarr.json")) << e.path;
}

TEST(Corpus, RectilinearManifestListsItsCorpus) {
  const auto entries = load_manifest(kRectilinear);
  ASSERT_GE(entries.size(), 30u) << "manifest not found or short at " << kRectilinear;
  for (const auto& e : entries) EXPECT_TRUE(fs::is_regular_file(kRectilinear / e.path / "zarr.json")) << e.path;
}

TEST(Corpus, IndependentSeedExampleMatchesWhatZarrppWritesByteForByte) {
  const auto dir = kCorpus / "read" / "independent_seed_example";
  ASSERT_TRUE(fs::is_directory(dir));
  auto mem = MemoryStore::create();
  auto z = Array::create(mem, {.shape = {6, 4}, .chunks = {4, 4}, .dtype = DataType::int32});
  z.fill<std::int32_t>(1);
  z.prepend(NDArray::full<std::int32_t>({3, 4}, 2), 0);
  auto fixture = FileStore::open(dir, FileStore::Options{.create = false});
  for (const auto& k : fixture->list_prefix("c/")) {
    ASSERT_TRUE(mem->exists(k)) << k;
    EXPECT_EQ(*mem->get(k), *fixture->get(k)) << k;
  }
  EXPECT_EQ(mem->list_prefix("c/"), fixture->list_prefix("c/"));
  const Bytes ours = *mem->get("zarr.json"), theirs = *fixture->get("zarr.json");
  EXPECT_EQ(ArrayMetadata::parse(std::string(ours.begin(), ours.end())).dump(),
            ArrayMetadata::parse(std::string(theirs.begin(), theirs.end())).dump());
}

// zarrs reads a grid named regular_bounded (or zarrs.regular_bounded) as a clipped-edge regular
// grid configured by chunk_shape alone, and refuses configurations with other fields: zarrpp must
// therefore state origin and lower_bound in every regular_bounded grid it writes, however it got
// there, so that such a reader refuses rather than misreads.
TEST(Corpus, EveryRegularBoundedGridZarrppWritesStatesOriginAndLowerBound) {
  auto mem = MemoryStore::create();
  auto check = [&](const std::string& path) {
    const Bytes b = *mem->get(path + "/zarr.json");
    const Json j = Json::parse(std::string(b.begin(), b.end()));
    ASSERT_EQ(j["chunk_grid"]["name"], "regular_bounded") << path;
    const Json& cfg = j["chunk_grid"]["configuration"];
    EXPECT_EQ(cfg.size(), 3u) << path;
    for (const char* k : {"chunk_shape", "origin", "lower_bound"}) EXPECT_TRUE(cfg.contains(k)) << path << " " << k;
  };
  // created with a domain (origin defaulting to the lower bound, and given)
  Array::create(mem, "a", ArraySpec{.shape = {4}, .chunks = {2}, .dtype = DataType::int8, .lower_bound = Shape{-3}});
  check("a");
  Array::create(
      mem, "b",
      ArraySpec{.shape = {4}, .chunks = {2}, .dtype = DataType::int8, .lower_bound = Shape{0}, .origin = Shape{0}});
  check("b");
  // switched by a first prepend; by resizing to a domain; by a copy
  auto c = Array::create(mem, "c", ArraySpec{.shape = {4, 2}, .chunks = {2, 2}, .dtype = DataType::int16});
  c.prepend(NDArray::full<std::int16_t>({1, 2}, 5), 0);
  check("c");
  auto d = Array::create(mem, "d", ArraySpec{.shape = {4}, .chunks = {2}, .dtype = DataType::int16});
  d.resize_domain({{-2, 4}});
  check("d");
  copy_array(c, mem, "e", c.metadata());
  check("e");
  auto g = Array::create(mem, "g", ArraySpec{.shape = {4}, .chunks = {2}, .dtype = DataType::int8});
  g.convert_to_regular_bounded();
  check("g");
  // and a regular_bounded grid with every origin and lower bound 0 keeps both fields
  auto f = Array::create(mem, "f",
                         ArraySpec{.shape = {4}, .chunks = {2}, .dtype = DataType::int8, .lower_bound = Shape{-1}});
  f.resize_domain({{0, 4}});
  check("f");
}

TEST(Corpus, TheClippedGridFormIsRefusedByName) {
  const std::string base = R"({"zarr_format": 3, "node_type": "array", "shape": [6, 4], "data_type": "int32",
    "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}}, "fill_value": 0,
    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}], "chunk_grid": )";
  for (const std::string grid : {R"({"name": "regular_bounded", "configuration": {"chunk_shape": [4, 4]}})",
                                 R"({"name": "zarrs.regular_bounded", "configuration": {"chunk_shape": [4, 4]}})"}) {
    try {
      (void)ArrayMetadata::parse(base + grid + "}");
      ADD_FAILURE() << grid << " was accepted";
    } catch (const UnsupportedError& err) {
      EXPECT_NE(std::string(err.what()).find("clipped"), std::string::npos) << err.what();
      EXPECT_NE(std::string(err.what()).find("zarrs"), std::string::npos) << err.what();
    }
  }
}
