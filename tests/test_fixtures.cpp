// Arrays with negative chunk keys written by an independent writer (tests/data/regular_bounded,
// see its README): zarrpp must read every one exactly and report its domain.
#include <gtest/gtest.h>

#include <filesystem>

#include "zarrpp/zarrpp.hpp"

using namespace zarrpp;
namespace fs = std::filesystem;

namespace {
fs::path fixtures_dir() { return fs::path(ZARRPP_TEST_DATA_DIR) / "regular_bounded"; }

struct Fixture {
  const char* name;
  Domain domain;
};
class RegularBoundedFixtures : public ::testing::TestWithParam<Fixture> {};
}  // namespace

TEST_P(RegularBoundedFixtures, ReadsExactly) {
  const auto dir = fixtures_dir();
  ASSERT_TRUE(fs::is_directory(dir)) << "fixtures not found at " << dir;
  const auto& f = GetParam();
  auto store = FileStore::open(dir / f.name, FileStore::Options{.create = false});
  auto z = Array::open(store);
  EXPECT_EQ(z.domain(), f.domain);
  const NDArray expected = npy::load(dir / (std::string(f.name) + ".expected.npy"));
  const NDArray got = z.read();
  ASSERT_EQ(got.dtype(), expected.dtype());
  ASSERT_EQ(got.shape(), expected.shape());
  EXPECT_TRUE(got.bytes() == expected.bytes());
  // Reading chunk by chunk (blocks) gives the same values as the whole read.
  Selection first_block(z.ndim(), std::int64_t{0});
  const auto b = z.read_blocks(first_block);
  Selection equivalent;
  for (std::size_t d = 0; d < z.ndim(); ++d) equivalent.push_back(slice(0, b.shape()[d]));
  EXPECT_EQ(b, z.read(equivalent));
  // Every stored key decodes into the grid (negative indices included).
  EXPECT_GT(z.nchunks_stored(), 0);
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, RegularBoundedFixtures,
    ::testing::Values(Fixture{"seed_example", {{-3, 6}, {0, 4}}},
                      Fixture{"float64_zstd_crc32c_two_axes", {{-3, 5}, {-5, 6}, {0, 3}}},
                      Fixture{"uint16_sharded_gzip_partial_first_shard", {{-5, 10}, {0, 8}}},
                      Fixture{"int16_created_with_domain_blosc_dot_keys", {{-100, -89}, {40, 45}}}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(Fixtures, SeedExampleMatchesWhatZarrppWritesByteForByte) {
  const auto dir = fixtures_dir() / "seed_example";
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
  // Same metadata (the fixture's writer uses the same layout and field order).
  const Bytes ours = *mem->get("zarr.json"), theirs = *fixture->get("zarr.json");
  EXPECT_EQ(ArrayMetadata::parse(std::string(ours.begin(), ours.end())).dump(),
            ArrayMetadata::parse(std::string(theirs.begin(), theirs.end())).dump());
}
