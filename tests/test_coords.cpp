// Selections in coordinates (Array::coords()): against the reference model through an explicit
// translation to zero-based indices, over random layouts with lower bounds and origins; across
// growth by another handle; and refusals of everything outside the domain.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "selections.hpp"
#include "support.hpp"

using namespace zarrpp;

namespace {

// A coordinate selector for a dimension with domain [lo, lo + n), and the same selection as
// zero-based indices (an int stays an int; everything else becomes an explicit index list, so the
// reference needs no coordinate logic of its own).
struct Pair {
  DimSelector coord, zero;
};

Pair pick_coordinate_selector(std::int64_t lo, std::int64_t n) {
  const int kind = n > 0 ? *rc::gen::inRange(0, 5) : 1;
  switch (kind) {
    case 0: {
      const auto i = *rc::gen::inRange<std::int64_t>(0, n);
      return {lo + i, i};
    }
    case 1: {
      const auto step = *rc::gen::element<std::int64_t>(1, 1, 2, 3, -1, -2, 5);
      // bounds anywhere a slice bound may be: [lo, lo + n] for positive steps, [lo - 1, lo + n - 1]
      // for negative ones; or missing (the domain's bound in the step's direction)
      const std::int64_t min_b = step > 0 ? 0 : -1, max_b = step > 0 ? n : n - 1;
      auto bound = [&] { return *rc::gen::maybe(rc::gen::inRange<std::int64_t>(min_b, max_b + 1)); };
      const auto a = bound(), b = bound();
      const std::int64_t start = a ? *a : (step > 0 ? 0 : n - 1);
      const std::int64_t stop = b ? *b : (step > 0 ? n : -1);
      IndexArray idx;
      for (std::int64_t i = start; step > 0 ? i < stop : i > stop; i += step) idx.push_back(i);
      Slice s{a ? std::optional(lo + *a) : std::nullopt, b ? std::optional(lo + *b) : std::nullopt, step};
      return {s, idx};
    }
    case 2:
      return {Slice{}, [&] {
                IndexArray all_idx;
                for (std::int64_t i = 0; i < n; ++i) all_idx.push_back(i);
                return all_idx;
              }()};
    case 3: {
      const auto idx = *rc::gen::container<std::vector<std::int64_t>>(rc::gen::inRange<std::int64_t>(0, n));
      IndexArray c;
      for (auto i : idx) c.push_back(lo + i);
      return {c, IndexArray(idx)};
    }
    default: {
      const auto mask = *rc::gen::container<std::vector<bool>>(static_cast<std::size_t>(n), rc::gen::arbitrary<bool>());
      IndexArray idx;
      for (std::int64_t i = 0; i < n; ++i)
        if (mask[static_cast<std::size_t>(i)]) idx.push_back(i);
      return {BoolArray(mask), idx};
    }
  }
}

struct Filled {
  Array z;
  ref::Model model;
  Shape lower;
};

Filled make_filled() {
  const auto l = ref::gen_layout();
  auto z = Array::create(MemoryStore::create(), ref::spec_of(l));
  ref::Model m(l.shape, l.fill);
  const auto values = ref::random_values(l.shape);
  z.write({}, values);
  m.data = values.to_vector<std::int32_t>();
  return Filled{z, m, z.lower_bound()};
}

void assert_same(const NDArray& got, const NDArray& want) {
  RC_ASSERT(got.shape() == want.shape());
  RC_ASSERT(got.to_vector<std::int32_t>() == want.to_vector<std::int32_t>());
}

std::string what_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const SelectionError& e) {
    EXPECT_EQ(e.code(), ErrorCode::index_out_of_bounds);
    return e.what();
  }
  ADD_FAILURE() << "no SelectionError";
  return "";
}

}  // namespace

RC_GTEST_PROP(Coords, ReadAndWriteMatchTheReferenceShiftedByTheLowerBound, ()) {
  auto f = make_filled();
  for (int round = 0; round < 4; ++round) {
    Selection coord, zero;
    for (std::size_t d = 0; d < f.model.shape.size(); ++d) {
      auto p = pick_coordinate_selector(f.lower[d], f.model.shape[d]);
      coord.push_back(p.coord);
      zero.push_back(p.zero);
    }
    const auto want = f.model.select(zero);
    assert_same(f.z.coords().read(coord), want);
    RC_ASSERT(f.z.coords().selection_shape(coord) == want.shape());
    NDArray into(DataType::int32, want.shape());
    f.z.coords().read_into(coord, into.view());
    assert_same(into, want);
    // writes: distinct elements only (repeats make the order matter, as in NumPy)
    if (ref::has_repeats(ref::resolve(zero, f.model.shape))) continue;
    const auto values = ref::random_values(want.shape());
    f.z.coords().write(coord, values);
    f.model.assign(zero, values);
    assert_same(f.z.read(), f.model.all());
  }
}

RC_GTEST_PROP(Coords, PointsMatchTheReference, ()) {
  auto f = make_filled();
  const auto& shape = f.model.shape;
  RC_PRE(shape_size(shape) > 0);
  const auto n = *rc::gen::inRange<std::size_t>(0, 12);
  Coordinates coords(shape.size()), zero(shape.size());
  for (std::size_t k = 0; k < n; ++k)
    for (std::size_t d = 0; d < shape.size(); ++d) {
      const auto i = *rc::gen::inRange<std::int64_t>(0, shape[d]);
      zero[d].push_back(i);
      coords[d].push_back(f.lower[d] + i);
    }
  assert_same(read_points(f.z, coords, true), read_points(f.z, zero));
  if (n > 0) {
    write_points(f.z, coords, NDArray::full<std::int32_t>({}, 77), true);
    const auto got = read_points(f.z, zero).to_vector<std::int32_t>();
    for (auto v : got) RC_ASSERT(v == 77);
  }
}

TEST(Coords, MeanTheSameElementsAfterAnotherHandleGrowsTheArray) {
  ref::TempDir dir("coords_growth");
  auto a = Array::create(FileStore::open(dir.path()), {.shape = {8}, .chunks = {3}, .dtype = DataType::int32});
  std::vector<std::int32_t> v(8);
  for (int i = 0; i < 8; ++i) v[static_cast<std::size_t>(i)] = 10 + i;
  a.write({}, NDArray::from_vector({8}, v));
  auto b = Array::open(FileStore::open(dir.path()));
  EXPECT_EQ(b.coords().read({slice(2, 5)}).to_vector<std::int32_t>(), (std::vector<std::int32_t>{12, 13, 14}));

  // Another handle prepends 4 rows and appends 2.
  a.prepend(NDArray::from_vector({4}, std::vector<std::int32_t>{1, 2, 3, 4}));
  a.append(NDArray::from_vector({2}, std::vector<std::int32_t>{98, 99}));
  auto fresh = Array::open(FileStore::open(dir.path()));
  // Zero-based selections shift with the lower bound; coordinate selections do not.
  EXPECT_EQ(fresh.read({slice(2, 5)}).to_vector<std::int32_t>(), (std::vector<std::int32_t>{3, 4, 10}));
  EXPECT_EQ(fresh.coords().read({slice(2, 5)}).to_vector<std::int32_t>(), (std::vector<std::int32_t>{12, 13, 14}));
  // The stale handle means the same elements too, and reaches the new ones (it re-reads the
  // metadata when a selection leaves the domain it knows).
  EXPECT_EQ(b.coords().read({slice(2, 5)}).to_vector<std::int32_t>(), (std::vector<std::int32_t>{12, 13, 14}));
  EXPECT_EQ(b.coords().read({slice(-4, 0)}).to_vector<std::int32_t>(), (std::vector<std::int32_t>{1, 2, 3, 4}));
  EXPECT_EQ(b.domain(), (Domain{{-4, 10}}));
  EXPECT_EQ(b.coords().read({std::int64_t{9}}).to_vector<std::int32_t>(), (std::vector<std::int32_t>{99}));
  // Writes by coordinates land where they mean, through a stale handle too.
  auto c = Array::open(FileStore::open(dir.path()));
  a.prepend(NDArray::from_vector({1}, std::vector<std::int32_t>{0}));
  c.coords().write({slice(0, 2)}, NDArray::from_vector({2}, std::vector<std::int32_t>{-10, -11}));
  write_points(c, {{-5, 9}}, NDArray::from_vector({2}, std::vector<std::int32_t>{-50, -99}), true);
  EXPECT_EQ(Array::open(FileStore::open(dir.path())).read().to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{-50, 1, 2, 3, 4, -10, -11, 12, 13, 14, 15, 16, 17, 98, -99}));
}

TEST(Coords, RefuseWhatLiesOutsideTheDomainInsteadOfWrappingOrClamping) {
  auto z = Array::create(MemoryStore::create(),
                         {.shape = {6, 4}, .chunks = {4, 4}, .dtype = DataType::int32, .lower_bound = Shape{-3, 0}});
  // Negative numbers are coordinates, not counts from the end.
  EXPECT_NO_THROW(z.coords().read({std::int64_t{-3}}));
  EXPECT_EQ(what_of([&] { z.coords().read({std::int64_t{-4}}); }),
            "coordinate -4 is outside the domain [-3, 3) of dimension 0");
  EXPECT_EQ(what_of([&] { z.coords().read({std::int64_t{3}}); }),
            "coordinate 3 is outside the domain [-3, 3) of dimension 0");
  EXPECT_EQ(what_of([&] { z.coords().read({all, std::int64_t{-1}}); }),
            "coordinate -1 is outside the domain [0, 4) of dimension 1");
  EXPECT_EQ(what_of([&] { z.coords().read({slice(-5, 0)}); }),
            "slice bound -5 is outside the domain [-3, 3) of dimension 0");
  EXPECT_EQ(what_of([&] { z.coords().read({slice(0, 4)}); }),
            "slice bound 4 is outside the domain [-3, 3) of dimension 0");
  EXPECT_EQ(what_of([&] { z.coords().read({IndexArray{0, 7}}); }),
            "coordinate 7 is outside the domain [-3, 3) of dimension 0");
  EXPECT_EQ(what_of([&] { read_points(z, {{0, -4}, {0, 0}}, true); }),
            "coordinate -4 is outside the domain [-3, 3) of dimension 0");
  EXPECT_EQ(what_of([&] { z.coords().write({std::int64_t{5}}, NDArray::full<std::int32_t>({}, 1)); }),
            "coordinate 5 is outside the domain [-3, 3) of dimension 0");
  // Slice bounds at the domain's ends (and one before it, for negative steps) are fine.
  EXPECT_EQ(z.coords().selection_shape({slice(-3, 3)}), (Shape{6, 4}));
  EXPECT_EQ(z.coords().selection_shape({slice(2, -4, -1)}), (Shape{6, 4}));
  EXPECT_EQ(z.coords().selection_shape({slice(1, 1)}), (Shape{0, 4}));
  EXPECT_EQ(z.coords().selection_shape({slice(1, -1)}), (Shape{0, 4}));  // empty, not wrapped
  // Nothing was written by the refused write.
  EXPECT_EQ(z.nshards_stored(), 0);
  // Huge coordinates: no overflow, a refusal.
  EXPECT_EQ(what_of([&] { z.coords().read({std::int64_t{INT64_MIN}}); }),
            "coordinate -9223372036854775808 is outside the domain [-3, 3) of dimension 0");
  EXPECT_EQ(what_of([&] { z.coords().read({slice(INT64_MIN, 0)}); }),
            "slice bound -9223372036854775808 is outside the domain [-3, 3) of dimension 0");
}

TEST(Coords, VariableLengthElements) {
  auto z = Array::create(MemoryStore::create(), {.shape = {4}, .chunks = {3}, .dtype = DataType::string_t});
  write_vlen(z, {}, VlenValues{{4}, {"a", "b", "c", "d"}});
  z.prepend(VlenValues{{2}, {"y", "z"}});
  EXPECT_EQ(read_vlen(z, {slice(-1, 2)}, true).values, (std::vector<std::string>{"z", "a", "b"}));
  write_vlen(z, {std::int64_t{-2}}, VlenValues{{}, {"Y"}}, true);
  write_vlen_points(z, {{3}}, VlenValues{{1}, {"D"}}, true);
  EXPECT_EQ(read_vlen_points(z, {{-2, 3}}, true).values, (std::vector<std::string>{"Y", "D"}));
  EXPECT_EQ(read_vlen(z).values, (std::vector<std::string>{"Y", "z", "a", "b", "c", "D"}));
}

TEST(ExpandDomain, GrowsEitherEndRelativeToTheStoredDomainWithoutWritingData) {
  ref::TempDir dir("expand_domain");
  auto a = Array::create(FileStore::open(dir.path()),
                         {.shape = {6, 2}, .chunks = {4, 2}, .dtype = DataType::int32, .fill_value = Json(-1)});
  a.fill<std::int32_t>(5);
  auto stale = Array::open(FileStore::open(dir.path()));
  a.append(NDArray::full<std::int32_t>({2, 2}, 6));  // the stale handle does not know
  const auto keys_before = a.stored_chunk_keys();
  // The stale handle expands the front: relative to what is stored now, so the append is kept.
  EXPECT_EQ(stale.expand_domain(0, 3), (Domain{{-3, 8}, {0, 2}}));
  EXPECT_EQ(stale.stored_chunk_keys(), keys_before);  // no data written
  EXPECT_EQ(stale.coords().read({slice(-3, 0), std::int64_t{0}}).to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{-1, -1, -1}));
  EXPECT_EQ(stale.coords().read({slice(6, 8), std::int64_t{1}}).to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{6, 6}));
  EXPECT_EQ(a.expand_domain(1, 0, 1), (Domain{{-3, 8}, {0, 3}}));
  // Negative counts remove elements at that end; their chunks go.
  EXPECT_EQ(a.expand_domain(0, -3, -4), (Domain{{0, 4}, {0, 3}}));
  EXPECT_EQ(a.read({all, std::int64_t{0}}).to_vector<std::int32_t>(), (std::vector<std::int32_t>{5, 5, 5, 5}));
  EXPECT_EQ(a.stored_chunk_keys(), (std::vector<std::string>{"c/0/0"}));  // [4, 8) went; column 2 was never written
  // Elements once there and removed read as the fill value when the domain grows back.
  a.expand_domain(0, 0, 4);
  EXPECT_EQ(a.read({slice(4, 8), std::int64_t{0}}).to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{-1, -1, -1, -1}));
  EXPECT_THROW(a.expand_domain(2, 1), SelectionError);
  EXPECT_THROW(a.expand_domain(0, -5, -4), SelectionError);
  EXPECT_EQ(a.domain(), (Domain{{0, 8}, {0, 3}}));
}
