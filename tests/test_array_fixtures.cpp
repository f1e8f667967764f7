// Arrays written byte by byte from the specification by scripts/gen_array_fixtures.py (NumPy and
// numcodecs, no Zarr library): zarrpp reads each exactly; broken ones are refused clearly.
#include <gtest/gtest.h>

#include <filesystem>

#include "zarrpp/zarrpp.hpp"

using namespace zarrpp;
namespace fs = std::filesystem;

namespace {
const fs::path kDir = fs::path(ZARRPP_TEST_DATA_DIR);
class HandWrittenArrays : public ::testing::TestWithParam<const char*> {};
}  // namespace

TEST_P(HandWrittenArrays, ReadExactly) {
  const std::string name = GetParam();
  auto z = Array::open(FileStore::open(kDir / "arrays" / name, FileStore::Options{.create = false}));
  const NDArray want = npy::load(kDir / "arrays" / (name + ".expected.npy"));
  const NDArray got = z.read();
  ASSERT_EQ(got.dtype(), want.dtype());
  ASSERT_EQ(got.shape(), want.shape());
  EXPECT_TRUE(got.bytes() == want.bytes()) << name;
  // A partial read agrees with the whole (exercises partial shard reads and edge chunks).
  if (z.ndim() > 0 && z.shape()[0] > 1) {
    Selection sel{slice(1, std::nullopt, 2)};
    const auto part = z.read(sel);
    const auto full = NDArray::copy_of(want.view());
    EXPECT_EQ(part.shape()[0], (z.shape()[0]) / 2);
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, HandWrittenArrays,
                         ::testing::Values("uint16_sharded_gzip_index_start_big_endian",
                                           "float32_transpose_zstd_v2_keys", "int64_blosc_bitshuffle_dot_separator",
                                           "bool_crc32c", "complex128_big_endian", "float64_0d"));

TEST(HandWrittenArraysDetails, ShardsAndMissingChunksAreAsWritten) {
  auto s = FileStore::open(kDir / "arrays" / "uint16_sharded_gzip_index_start_big_endian",
                           FileStore::Options{.create = false});
  auto z = Array::open(s);
  EXPECT_EQ(*z.shards(), (Shape{4, 4}));
  EXPECT_FALSE(s->exists("c/1/1"));  // the all-fill shard was never stored
  EXPECT_EQ(z.attributes()["written_by"], "gen_array_fixtures.py");
  auto t = Array::open(
      FileStore::open(kDir / "arrays" / "float32_transpose_zstd_v2_keys", FileStore::Options{.create = false}));
  EXPECT_EQ(t.nshards_stored(), t.nshards() - 1);
  EXPECT_EQ((*t.metadata().dimension_names)[0], "z");
}

struct Broken {
  const char* name;
  const char* words;  // what the error must say
};
class BrokenArrays : public ::testing::TestWithParam<Broken> {};

TEST_P(BrokenArrays, AreRefusedWithAClearError) {
  const auto& b = GetParam();
  try {
    auto z = Array::open(FileStore::open(kDir / "broken" / b.name, FileStore::Options{.create = false}));
    (void)z.read();
    ADD_FAILURE() << b.name << " was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(b.words), std::string::npos) << b.name << ": " << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, BrokenArrays,
    ::testing::Values(Broken{"wrong_zarr_format", "zarr_format"}, Broken{"unknown_codec", "lzma"},
                      Broken{"bad_checksum", "checksum mismatch"}, Broken{"truncated_chunk", "c/0"},
                      Broken{"unknown_chunk_grid", "rectilinear"}, Broken{"truncated_shard", "c/0"},
                      Broken{"shard_index_out_of_range", "outside the shard"},
                      Broken{"unknown_field", "must_be_understood"}, Broken{"bad_fill_value", "fill_value"}),
    [](const auto& info) { return std::string(info.param.name); });
