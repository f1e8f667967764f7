// Chunk keys (signed, strictly decoded) and the grid arithmetic of regular_bounded.md §2-3.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "zarrpp/zarrpp.hpp"

using namespace zarrpp;

TEST(ChunkKeys, Encode) {
  const auto d = ChunkKeyEncoding::default_('/');
  EXPECT_EQ(d.encode(std::vector<std::int64_t>{-1, 0}), "c/-1/0");
  EXPECT_EQ(d.encode(std::vector<std::int64_t>{}), "c");
  EXPECT_EQ(ChunkKeyEncoding::default_('.').encode(std::vector<std::int64_t>{-12, 3}), "c.-12.3");
  EXPECT_EQ(ChunkKeyEncoding::v2('.').encode(std::vector<std::int64_t>{-1, 0}), "-1.0");
  EXPECT_EQ(ChunkKeyEncoding::v2('/').encode(std::vector<std::int64_t>{-12, 3}), "-12/3");
  EXPECT_EQ(ChunkKeyEncoding::v2('.').encode(std::vector<std::int64_t>{}), "0");
  EXPECT_EQ(d.encode(std::vector<std::int64_t>{INT64_MIN, INT64_MAX}), "c/-9223372036854775808/9223372036854775807");
}

TEST(ChunkKeys, AcceptedAndRejectedTable) {
  const auto d = ChunkKeyEncoding::default_('/');
  const auto v2 = ChunkKeyEncoding::v2('.');
  struct Case {
    const ChunkKeyEncoding* enc;
    const char* key;
    std::size_t rank;
    std::optional<std::vector<std::int64_t>> expect;
  };
  using V = std::vector<std::int64_t>;
  const Case cases[] = {
      {&d, "c/0/0", 2, V{0, 0}},
      {&d, "c/-1/0", 2, V{-1, 0}},
      {&d, "c/-12/34", 2, V{-12, 34}},
      {&d, "c", 0, V{}},
      {&d, "c/-9223372036854775808", 1, V{INT64_MIN}},
      {&d, "c/9223372036854775807", 1, V{INT64_MAX}},
      {&v2, "-1.0", 2, V{-1, 0}},
      {&v2, "0", 0, V{}},
      {&d, "c/-0/0", 2, std::nullopt},
      {&d, "c/+1/0", 2, std::nullopt},
      {&d, "c/01/0", 2, std::nullopt},
      {&d, "c/-01/0", 2, std::nullopt},
      {&d, "c//0", 2, std::nullopt},
      {&d, "c/0/", 2, std::nullopt},
      {&d, "c/ 1/0", 2, std::nullopt},
      {&d, "c/1 /0", 2, std::nullopt},
      {&d, "c/1_0/0", 2, std::nullopt},
      {&d, "c/1e3/0", 2, std::nullopt},
      {&d, "c/\xd9\xa1/0", 2, std::nullopt},  // ARABIC-INDIC DIGIT ONE
      {&d, "c/9223372036854775808", 1, std::nullopt},
      {&d, "c/-9223372036854775809", 1, std::nullopt},
      {&d, "c/0/0/0", 2, std::nullopt},
      {&d, "c/0", 2, std::nullopt},
      {&d, "c.0.0", 2, std::nullopt},
      {&d, "zarr.json", 2, std::nullopt},
      {&d, "c/-", 1, std::nullopt},
      {&d, "c", 1, std::nullopt},
      {&d, "x/0", 1, std::nullopt},
      {&v2, "-0.0", 2, std::nullopt},
      {&v2, "c.0.0", 2, std::nullopt},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(c.enc->decode(c.key, c.rank), c.expect) << "key '" << c.key << "'";
    if (!c.expect) {
      try {
        c.enc->decode_or_throw(c.key, c.rank);
        ADD_FAILURE() << c.key;
      } catch (const MetadataError& e) {
        EXPECT_NE(std::string(e.what()).find(c.key), std::string::npos) << e.what();
      }
    }
  }
}

RC_GTEST_PROP(ChunkKeys, EncodeDecodeRoundTrip, (std::vector<std::int64_t> idx, bool dot, bool v2)) {
  const auto enc = v2 ? ChunkKeyEncoding::v2(dot ? '.' : '/') : ChunkKeyEncoding::default_(dot ? '.' : '/');
  const auto key = enc.encode(idx);
  RC_ASSERT(enc.decode(key, idx.size()) == std::optional(idx));
}

TEST(ChunkGrid, WorkedExampleOfTheSpec) {
  // L=-5, O=0, c=10, n=25: b=5, k_min=-1, three chunks.
  ChunkGrid g({25}, {10}, {0}, {-5});
  EXPECT_EQ(g.first_chunk(0), -1);
  EXPECT_EQ(g.num_chunks(0), 3);
  EXPECT_EQ(g.locate(0, 0).chunk, -1);
  EXPECT_EQ(g.locate(0, 0).position, 5);
  EXPECT_EQ(g.locate(0, 4).chunk, -1);
  EXPECT_EQ(g.locate(0, 5).chunk, 0);
  EXPECT_EQ(g.locate(0, 5).position, 0);
  EXPECT_EQ(g.locate(0, 24).chunk, 1);
  EXPECT_EQ(g.locate(0, 24).position, 9);
  EXPECT_EQ(g.index_range(0, -1), std::make_pair(std::int64_t{0}, std::int64_t{5}));
  EXPECT_EQ(g.index_range(0, 0), std::make_pair(std::int64_t{5}, std::int64_t{15}));
  EXPECT_EQ(g.index_range(0, 1), std::make_pair(std::int64_t{15}, std::int64_t{25}));
  EXPECT_FALSE(g.chunk_is_full(std::vector<std::int64_t>{-1}));
  EXPECT_TRUE(g.chunk_is_full(std::vector<std::int64_t>{0}));
  EXPECT_TRUE(g.contains_chunk(std::vector<std::int64_t>{-1}));
  EXPECT_FALSE(g.contains_chunk(std::vector<std::int64_t>{-2}));
  EXPECT_FALSE(g.contains_chunk(std::vector<std::int64_t>{2}));
}

TEST(ChunkGrid, EmptyExtentHasNoChunks) {
  ChunkGrid g({0, 5}, {4, 4}, {0, 0}, {-3, 0});
  EXPECT_EQ(g.num_chunks(0), 0);
  EXPECT_EQ(g.total_chunks(), 0);
}

// Against the formulas of the spec, computed independently with exact integer arithmetic.
RC_GTEST_PROP(ChunkGrid, MatchesTheSpecFormulas, ()) {
  const auto c = *rc::gen::inRange<std::int64_t>(1, 20);
  const auto n = *rc::gen::inRange<std::int64_t>(0, 100);
  const auto L = *rc::gen::inRange<std::int64_t>(-1000, 1000);
  const auto O = *rc::gen::inRange<std::int64_t>(-1000, 1000);
  ChunkGrid g({n}, {c}, {O}, {L});
  auto fdiv = [](std::int64_t a, std::int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
  const std::int64_t kmin = fdiv(L - O, c);
  RC_ASSERT(g.first_chunk(0) == kmin);
  RC_ASSERT(g.num_chunks(0) == (n == 0 ? 0 : fdiv(L + n - 1 - O, c) - kmin + 1));
  for (std::int64_t i = 0; i < n; ++i) {
    const auto x = L + i;
    const auto loc = g.locate(0, i);
    RC_ASSERT(loc.chunk == fdiv(x - O, c));
    RC_ASSERT(loc.position == x - O - fdiv(x - O, c) * c);
    RC_ASSERT(loc.position >= 0 && loc.position < c);
    // the chunk's coordinates [O + k c, O + (k+1) c) contain x
    RC_ASSERT(O + loc.chunk * c <= x && x < O + (loc.chunk + 1) * c);
  }
}

// chunk_sizes against a plain model: walk the coordinates [L + lo, L + hi) one by one, cutting
// where a group of `per` chunks (chunk indices with one floor(k / per)) ends.
RC_GTEST_PROP(ChunkGrid, ChunkSizesMatchAWalkOverTheElements, ()) {
  const auto c = *rc::gen::inRange<std::int64_t>(1, 9);
  const auto n = *rc::gen::inRange<std::int64_t>(0, 60);
  const auto L = *rc::gen::inRange<std::int64_t>(-50, 50);
  const auto O = *rc::gen::inRange<std::int64_t>(-50, 50);
  const auto per = *rc::gen::inRange<std::int64_t>(1, 4);
  const auto lo = *rc::gen::inRange<std::int64_t>(0, n + 1);
  const auto hi = *rc::gen::inRange<std::int64_t>(lo, n + 1);
  ChunkGrid g({n}, {c}, {O}, {L});
  std::vector<std::int64_t> expect;
  std::int64_t prev_group = 0;
  for (std::int64_t i = lo; i < hi; ++i) {
    const std::int64_t k = g.locate(0, i).chunk;
    const std::int64_t group = k >= 0 ? k / per : -((-k + per - 1) / per);
    if (i == lo || group != prev_group) expect.push_back(0);
    ++expect.back();
    prev_group = group;
  }
  RC_ASSERT(g.chunk_sizes(0, per, lo, hi) == expect);
  if (lo == 0 && hi == n) RC_ASSERT(g.chunk_sizes(0, per) == expect);
}

TEST(ChunkGrid, ChunkSizesOfTheUpstreamExample) {
  // 9 rows from coordinate -3, chunks of 4 from origin 0: [-3, 0) [0, 4) [4, 6)
  ChunkGrid g({9}, {4}, {0}, {-3});
  EXPECT_EQ(g.chunk_sizes(0), (std::vector<std::int64_t>{3, 4, 2}));
  EXPECT_EQ(g.chunk_sizes(0, 2), (std::vector<std::int64_t>{3, 6}));  // chunks {-2, -1} and {0, 1}
  EXPECT_EQ(g.chunk_sizes(0, 1, 2, 5), (std::vector<std::int64_t>{1, 2}));
  EXPECT_TRUE(g.chunk_sizes(0, 1, 4, 4).empty());
  EXPECT_THROW((void)g.chunk_sizes(0, 0), ArgumentError);
  EXPECT_THROW((void)g.chunk_sizes(0, 1, 0, 10), ArgumentError);
}
