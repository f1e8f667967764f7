// Every selection type, read and written, against a plain reference array, over random shapes,
// chunk shapes (with partial edge chunks and partly filled first chunks), rectilinear grids, codecs
// and shards.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <numeric>

#include "selections.hpp"
#include "support.hpp"

using namespace zarrpp;

namespace {
// A directory removed when the fixture goes.
struct Fixture {
  std::shared_ptr<ref::TempDir> dir;  // when on the file store
  ref::Layout layout;
  Array z;
  ref::Model model;
};

Fixture make_filled() {
  const auto l = ref::gen_layout_any_grid();
  // Memory or local files: the file store reads uncompressed chunks in pieces, in part.
  std::shared_ptr<ref::TempDir> dir;
  StorePtr store;
  if (*rc::gen::arbitrary<bool>()) {
    dir = std::make_shared<ref::TempDir>("selections");
    store = FileStore::open(dir->path());
  } else {
    store = MemoryStore::create();
  }
  auto z = Array::create(store, ref::spec_of(l));
  z.set_concurrency(*rc::gen::element<std::size_t>(1, 2));
  ref::Model m(l.shape, l.fill);
  const auto values = ref::random_values(l.shape);
  z.write({}, values);
  m.data = values.to_vector<std::int32_t>();
  return Fixture{dir, l, std::move(z), std::move(m)};
}

void assert_same(const NDArray& got, const NDArray& want) {
  RC_ASSERT(got.shape() == want.shape());
  RC_ASSERT(got.to_vector<std::int32_t>() == want.to_vector<std::int32_t>());
}
}  // namespace

RC_GTEST_PROP(Selections, OrthogonalReadMatchesReference, ()) {
  auto f = make_filled();
  assert_same(f.z.read(), f.model.all());
  for (int i = 0; i < 5; ++i) {
    const auto sel = ref::gen_selection(f.model.shape, true);
    assert_same(f.z.read(sel), f.model.select(sel));
  }
}

RC_GTEST_PROP(Selections, OrthogonalWriteMatchesReference, ()) {
  auto f = make_filled();
  for (int i = 0; i < 3; ++i) {
    const auto sel = ref::gen_selection(f.model.shape, true);
    const auto dims = ref::resolve(sel, f.model.shape);
    // Repeated indices make a write order-dependent (as in NumPy); use distinct ones for writes.
    if (ref::has_repeats(dims)) continue;
    if (*rc::gen::arbitrary<bool>()) {
      const auto values = ref::random_values(ref::selection_shape(dims));
      f.z.write(sel, values);
      f.model.assign(sel, values);
    } else {
      const std::int32_t v = *rc::gen::inRange(-3, 3);
      f.z.write_scalar<std::int32_t>(sel, v);
      f.model.assign(sel, NDArray::full<std::int32_t>({}, v));
    }
    assert_same(f.z.read(), f.model.all());
  }
  // and after reopening from the store
  assert_same(Array::open(f.z.store()).read(), f.model.all());
}

RC_GTEST_PROP(Selections, CoordinateReadAndWrite, ()) {
  auto f = make_filled();
  const auto& shape = f.model.shape;
  RC_PRE(shape_size(shape) > 0);
  const auto n = *rc::gen::inRange<std::size_t>(0, 20);
  Coordinates coords(shape.size());
  std::vector<std::int64_t> flat;
  for (std::size_t k = 0; k < n; ++k) {
    std::int64_t fl = 0;
    for (std::size_t d = 0; d < shape.size(); ++d) {
      const auto i = *rc::gen::inRange<std::int64_t>(-shape[d], shape[d]);
      coords[d].push_back(i);
      fl = fl * shape[d] + (i < 0 ? i + shape[d] : i);
    }
    flat.push_back(fl);
  }
  const auto got = read_points(f.z, coords).to_vector<std::int32_t>();
  RC_ASSERT(got.size() == n);
  for (std::size_t k = 0; k < n; ++k) RC_ASSERT(got[k] == f.model.data[static_cast<std::size_t>(flat[k])]);
  // write distinct points
  std::vector<std::size_t> keep;
  std::set<std::int64_t> seen;
  for (std::size_t k = 0; k < n; ++k)
    if (seen.insert(flat[k]).second) keep.push_back(k);
  Coordinates c2(shape.size());
  std::vector<std::int32_t> vals;
  for (auto k : keep) {
    for (std::size_t d = 0; d < shape.size(); ++d) c2[d].push_back(coords[d][k]);
    vals.push_back(*rc::gen::inRange(-50, 50));
    f.model.data[static_cast<std::size_t>(flat[k])] = vals.back();
  }
  write_points(f.z, c2, NDArray::from_vector<std::int32_t>({static_cast<std::int64_t>(vals.size())}, vals));
  assert_same(f.z.read(), f.model.all());
}

RC_GTEST_PROP(Selections, MaskReadAndWrite, ()) {
  auto f = make_filled();
  const auto& shape = f.model.shape;
  NDArray mask(DataType::bool_t, shape);
  auto* mp = mask.data<bool>();
  std::vector<std::int32_t> expect;
  for (std::int64_t i = 0; i < mask.size(); ++i) {
    mp[i] = *rc::gen::inRange(0, 3) == 0;
    if (mp[i]) expect.push_back(f.model.data[static_cast<std::size_t>(i)]);
  }
  RC_ASSERT(read_mask(f.z, mask).to_vector<std::int32_t>() == expect);
  write_mask(f.z, mask, NDArray::full<std::int32_t>({}, 77));
  for (std::int64_t i = 0; i < mask.size(); ++i)
    if (mp[i]) f.model.data[static_cast<std::size_t>(i)] = 77;
  assert_same(f.z.read(), f.model.all());
}

RC_GTEST_PROP(Selections, BlockReadAndWrite, ()) {
  auto f = make_filled();
  const auto& shape = f.model.shape;
  // Blocks are stored objects: shards when sharded (zarr-python 3's rule), else chunks.
  const bool rect = f.z.rectilinear();
  const auto chunks = rect ? Shape{} : f.z.shards().value_or(f.z.chunks());
  const auto dom = f.z.domain();
  Selection blocks, equivalent;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (rect) {  // block b is the layout's b-th size along d
      const auto& sizes = f.layout.sizes[d];
      const auto nb = static_cast<std::int64_t>(sizes.size());
      const auto b0 = *rc::gen::inRange<std::int64_t>(0, nb);
      const auto b1 = *rc::gen::inRange<std::int64_t>(b0 + 1, nb + 1);
      blocks.push_back(slice(b0, b1));
      equivalent.push_back(slice(std::accumulate(sizes.begin(), sizes.begin() + b0, std::int64_t{0}),
                                 std::accumulate(sizes.begin(), sizes.begin() + b1, std::int64_t{0})));
      continue;
    }
    // block b covers coordinates [O + (k0+b) c, ...) clipped to the domain
    const auto lo = f.z.metadata().chunk_grid.lower_bound[d];
    const auto o = f.z.metadata().chunk_grid.origin[d];
    const auto c = chunks[d];
    auto fdiv = [](std::int64_t a, std::int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
    const std::int64_t k0 = fdiv(lo - o, c);
    const std::int64_t nb = shape[d] == 0 ? 0 : fdiv(lo + shape[d] - 1 - o, c) - k0 + 1;
    if (nb == 0) {
      blocks.push_back(all);
      equivalent.push_back(all);
      continue;
    }
    const auto b0 = *rc::gen::inRange<std::int64_t>(0, nb);
    const auto b1 = *rc::gen::inRange<std::int64_t>(b0 + 1, nb + 1);
    blocks.push_back(slice(b0, b1));
    const auto x0 = std::max(o + (k0 + b0) * c, dom[d].inclusive_min),
               x1 = std::min(o + (k0 + b1) * c, dom[d].exclusive_max);
    equivalent.push_back(slice(x0 - lo, x1 - lo));
  }
  assert_same(read_blocks(f.z, blocks), f.model.select(equivalent));
  const auto values = ref::random_values(f.model.select(equivalent).shape());
  write_blocks(f.z, blocks, values);
  f.model.assign(equivalent, values);
  assert_same(f.z.read(), f.model.all());
}

RC_GTEST_PROP(Selections, ReadIntoCallerBuffersOfAnyLayout, ()) {
  auto f = make_filled();
  const auto& shape = f.model.shape;
  // Fortran-order destination
  std::vector<std::int32_t> buf(static_cast<std::size_t>(shape_size(shape)));
  const auto view = NDView::f_order(buf.data(), DataType::int32, shape);
  f.z.read_into({}, view);
  RC_ASSERT(NDArray::copy_of(view).to_vector<std::int32_t>() == f.model.data);
  // and write back from a Fortran-order source after changing it
  for (auto& v : buf) v += 1;
  f.z.write({}, view);
  for (auto& v : f.model.data) v += 1;
  assert_same(f.z.read(), f.model.all());
}

// ---- bad input: a SelectionError naming the problem, and the array unchanged --------------------

namespace {
// The message of the SelectionError f throws ("" when it throws none).
std::string selection_error(const std::function<void()>& f) {
  const auto c = zarrpp::test::catch_error(f);
  EXPECT_TRUE(c.thrown);
  return c.what;
}
}  // namespace

TEST(SelectionErrors, NameDimensionIndexAndBound) {
  auto store = MemoryStore::create();
  auto z = Array::create(store, {.shape = {6, 4}, .chunks = {4, 4}, .dtype = DataType::int32});
  z.fill<std::int32_t>(5);
  const auto before = z.read();
  auto err = selection_error([&] { z.read({6}); });
  EXPECT_NE(err.find("index 6"), std::string::npos) << err;
  EXPECT_NE(err.find("dimension 0"), std::string::npos) << err;
  EXPECT_NE(err.find("size 6"), std::string::npos) << err;
  err = selection_error([&] { z.read({0, -5}); });
  EXPECT_NE(err.find("index -5"), std::string::npos) << err;
  EXPECT_NE(err.find("dimension 1"), std::string::npos) << err;
  err = selection_error([&] { z.read({slice(0, 4, 0)}); });
  EXPECT_NE(err.find("step cannot be zero"), std::string::npos) << err;
  err = selection_error([&] { z.read({0, 0, 0}); });
  EXPECT_NE(err.find("too many indices"), std::string::npos) << err;
  err = selection_error([&] { z.read({ellipsis, ellipsis}); });
  EXPECT_NE(err.find("ellipsis"), std::string::npos) << err;
  err = selection_error([&] { z.read({IndexArray{0, 9}}); });
  EXPECT_NE(err.find("index 9"), std::string::npos) << err;
  err = selection_error([&] { z.read({BoolArray{true, false}}); });
  EXPECT_NE(err.find("boolean index of length 2"), std::string::npos) << err;
  err = selection_error([&] { read_mask(z, NDArray(DataType::bool_t, {6, 5})); });
  EXPECT_NE(err.find("mask of shape (6, 5)"), std::string::npos) << err;
  err = selection_error([&] { read_mask(z, NDArray(DataType::int32, {6, 4})); });
  EXPECT_NE(err.find("bool"), std::string::npos) << err;
  err = selection_error([&] { read_points(z, {{0, 1}, {0}}); });
  EXPECT_NE(err.find("differ in length"), std::string::npos) << err;
  err = selection_error([&] { read_points(z, {{0, 6}, {0, 0}}); });
  EXPECT_NE(err.find("index 6"), std::string::npos) << err;
  err = selection_error([&] { read_blocks(z, {2}); });
  EXPECT_NE(err.find("block index 2"), std::string::npos) << err;
  err = selection_error([&] { read_blocks(z, {slice(0, 2, 2)}); });
  EXPECT_NE(err.find("step 1"), std::string::npos) << err;
  // writes: wrong shape or type, nothing changes
  err = selection_error([&] { z.write({slice(0, 2)}, NDArray(DataType::int32, {3, 4})); });
  EXPECT_NE(err.find("cannot be broadcast"), std::string::npos) << err;
  err = selection_error([&] { z.write({}, NDArray(DataType::float64, {6, 4})); });
  EXPECT_NE(err.find("data type mismatch"), std::string::npos) << err;
  err = selection_error([&] { z.write({7}, NDArray::full<std::int32_t>({}, 1)); });
  EXPECT_NE(err.find("index 7"), std::string::npos) << err;
  err = selection_error([&] { write_points(z, {{0}, {0}}, NDArray(DataType::int32, {2})); });
  EXPECT_NE(err.find("broadcast"), std::string::npos) << err;
  NDArray out(DataType::int32, {6, 3});
  err = selection_error([&] { z.read_into({}, out.view()); });
  EXPECT_NE(err.find("output buffer of shape (6, 3)"), std::string::npos) << err;
  EXPECT_EQ(z.read(), before);
}

// Each kind of bad selection has its code, so callers (Python: IndexError, TypeError,
// ValueError) never match messages.
TEST(SelectionErrors, CarryCodesForTheirKind) {
  using zarrpp::test::catch_error;
  auto z = Array::create(MemoryStore::create(), {.shape = {6, 4}, .chunks = {4, 4}, .dtype = DataType::int32});
  EXPECT_EQ(catch_error([&] { z.read({6}); }).code, ErrorCode::index_out_of_bounds);
  EXPECT_EQ(catch_error([&] { z.read({0, 0, 0}); }).code, ErrorCode::index_out_of_bounds);
  EXPECT_EQ(catch_error([&] { z.read({BoolArray{true, false}}); }).code, ErrorCode::index_out_of_bounds);
  EXPECT_EQ(catch_error([&] { z.read({slice(0, 4, 0)}); }).code, ErrorCode::invalid_selection);
  EXPECT_EQ(catch_error([&] { read_blocks(z, {slice(0, 2, 2)}); }).code, ErrorCode::invalid_index);
  EXPECT_EQ(catch_error([&] { z.write({}, NDArray(DataType::float64, {6, 4})); }).code, ErrorCode::dtype_mismatch);
  EXPECT_EQ(catch_error([&] { z.read<double>(); }).code, ErrorCode::dtype_mismatch);
  EXPECT_EQ(catch_error([&] { z.write({slice(0, 2)}, NDArray(DataType::int32, {3, 4})); }).code,
            ErrorCode::shape_mismatch);
  NDArray out(DataType::int32, {6, 3});
  EXPECT_EQ(catch_error([&] { z.read_into({}, out.view()); }).code, ErrorCode::shape_mismatch);
  EXPECT_EQ(catch_error([&] { z.prepend(NDArray(DataType::int32, {2, 3})); }).code, ErrorCode::shape_mismatch);
  EXPECT_EQ(catch_error([&] { z.prepend(NDArray(DataType::int32, {2, 4}), 2); }).code, ErrorCode::index_out_of_bounds);
  EXPECT_EQ(catch_error([&] { (void)parse_selection("1:2:3:4"); }).code, ErrorCode::invalid_selection);
}

TEST(Selections, NumpyBroadcastingOfWriteData) {
  auto z = Array::create(MemoryStore::create(), {.shape = {3, 4}, .chunks = {2, 2}, .dtype = DataType::int32});
  z.write({}, NDArray::from_vector<std::int32_t>({4}, {1, 2, 3, 4}));  // a row broadcast to every row
  EXPECT_EQ(z.read().to_vector<std::int32_t>(), (std::vector<std::int32_t>{1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4}));
  z.write({}, NDArray::from_vector<std::int32_t>({3, 1}, {7, 8, 9}));  // a column
  EXPECT_EQ(z.read({slice(), 3}).to_vector<std::int32_t>(), (std::vector<std::int32_t>{7, 8, 9}));
}

TEST(Selections, ZeroDimensionalArrays) {
  auto store = MemoryStore::create();
  auto z = Array::create(store, {.shape = {}, .chunks = {}, .dtype = DataType::float64});
  EXPECT_EQ(z.read().to_vector<double>(), std::vector<double>{0.0});
  z.fill<double>(2.5);
  EXPECT_TRUE(store->exists("c"));
  EXPECT_EQ(z.read({ellipsis}).to_vector<double>(), std::vector<double>{2.5});
  NDArray t(DataType::bool_t, {});
  t.data<bool>()[0] = true;
  EXPECT_EQ(read_mask(z, t).to_vector<double>(), std::vector<double>{2.5});
  t.data<bool>()[0] = false;
  EXPECT_EQ(read_mask(z, t).size(), 0);
  EXPECT_EQ(read_points(z, {}).to_vector<double>(), std::vector<double>{2.5});
}

// A step so large that only one element of a chunk is selected: the copy loops must not multiply
// it by byte strides (a signed overflow UBSan reports; found by fuzz_selection).
TEST(Selections, HugeStepsSelectOneElementPerChunk) {
  auto z = Array::create(MemoryStore::create(), {.shape = {7, 5, 3},
                                                 .chunks = {3, 2, 2},
                                                 .dtype = DataType::int32,
                                                 .lower_bound = Shape{-4, 0, 2},
                                                 .origin = Shape{0, 1, 0}});
  const std::int64_t huge = 3074457345618258602;
  for (const auto& sel :
       std::vector<Selection>{{slice(4), slice(std::nullopt, std::nullopt, huge), slice(2)},
                              {slice(std::nullopt, std::nullopt, huge)},
                              {slice(std::nullopt, std::nullopt, -huge), slice(), slice(1, std::nullopt, huge)},
                              {slice(std::nullopt, std::nullopt, INT64_MAX)}}) {
    z.fill<std::int32_t>(3);
    const auto a = z.read(sel);
    EXPECT_EQ(a.shape(), z.selection_shape(sel));
    for (auto v : a.to_vector<std::int32_t>()) EXPECT_EQ(v, 3);
    z.write_scalar<std::int32_t>(sel, 9);
    for (auto v : z.read(sel).to_vector<std::int32_t>()) EXPECT_EQ(v, 9);
  }
}

// ---- what z[...] (Python) and a CLI SELECTION do: one rule, NumPy's / zarr-python's ----

TEST(SelectionKind, ArraysOnePerDimensionPairUpIntoPoints) {
  EXPECT_EQ(selection_kind(parse_selection("[0,1], [2,3]"), 2), SelectionKind::coordinates);
  EXPECT_EQ(selection_kind(parse_selection("1, [2,3]"), 2), SelectionKind::coordinates);
  EXPECT_EQ(selection_kind(parse_selection("[0,2]"), 1), SelectionKind::coordinates);
  auto points = [](const char* text) {
    const auto plan = plan_index(index_expr(parse_selection(text)), Shape{3, 4}, IndexMode::numpy);
    EXPECT_EQ(plan.kind, IndexPlan::Kind::points);
    return plan.points;
  };
  EXPECT_EQ(points("1, [2,3]"), (Coordinates{{1, 1}, {2, 3}}));
  EXPECT_THROW(points("[0,1,2], [2,3]"), SelectionError);
  EXPECT_EQ(points("[0,1], [2]"), (Coordinates{{0, 1}, {2, 2}}));  // NumPy broadcasting
  EXPECT_EQ(points("[], [2]"), (Coordinates{{}, {}}));
  // integers are checked against the shape even where no point is selected
  EXPECT_THROW(points("[], 9"), SelectionError);
  EXPECT_EQ(points("[], -4"), (Coordinates{{}, {}}));
}

TEST(SelectionKind, NumpyAdvancedIndexingIsToldApart) {
  // several arrays, not one per dimension (NumPy pairs them; orthogonal would not)
  EXPECT_EQ(selection_kind(parse_selection("[0,1], [2,3], :"), 3), SelectionKind::numpy_advanced);
  EXPECT_EQ(selection_kind(parse_selection("[True,False], [True,True]"), 2), SelectionKind::numpy_advanced);
  // an integer not next to the array moves the result's dimensions
  EXPECT_EQ(selection_kind(parse_selection("1, :, [0,2]"), 3), SelectionKind::numpy_advanced);
  // an Ellipsis separates them even when it stands for no dimension
  EXPECT_EQ(selection_kind(parse_selection(":, [0], ..., 0"), 3), SelectionKind::numpy_advanced);
  EXPECT_EQ(selection_kind(parse_selection("[0,1], :"), 2, /*multi_dimensional=*/true), SelectionKind::numpy_advanced);
}

TEST(SelectionKind, EverythingElseIsOrthogonal) {
  for (const char* s : {"", "...", "0:3, ::2", "-1", "[0,2], :", ":, [1,0], 2", "[True,False,True]", "1, [0,2], :"})
    EXPECT_EQ(selection_kind(parse_selection(s), 3), SelectionKind::orthogonal) << s;
}
