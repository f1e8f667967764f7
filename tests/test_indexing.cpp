// Index expressions (zarrpp::plan_index): NumPy's advanced indexing read from a box or as points,
// vindex broadcasting, masks, blocks in shard units, and value broadcasting on write, each against
// values worked out by hand or by a plain loop.
#include <gtest/gtest.h>

#include <zarrpp/zarrpp.hpp>

#include "selections.hpp"

using namespace zarrpp;

namespace {

// A 2-d int32 array holding 1000 * row + column.
Array grid_array(Shape shape, Shape chunks, OptionalShape shards = {}) {
  ArraySpec spec;
  spec.shape = std::move(shape);
  spec.chunks = std::move(chunks);
  spec.shards = std::move(shards);
  spec.dtype = DataType::int32;
  auto z = Array::create(MemoryStore::create(), spec);
  NDArray v(DataType::int32, z.shape());
  auto* p = v.data<std::int32_t>();
  for (std::int64_t i = 0; i < z.shape()[0]; ++i)
    for (std::int64_t j = 0; j < z.shape()[1]; ++j) p[i * z.shape()[1] + j] = static_cast<std::int32_t>(1000 * i + j);
  z.write({}, v);
  return z;
}

// An int32 array holding 0, 1, 2, ... in C order.
Array iota_array(const Shape& shape, const Shape& chunks) {
  ArraySpec spec;
  spec.shape = shape;
  spec.chunks = chunks;
  spec.dtype = DataType::int32;
  auto z = Array::create(MemoryStore::create(), spec);
  std::vector<std::int32_t> v(static_cast<std::size_t>(shape_size(shape)));
  for (std::size_t k = 0; k < v.size(); ++k) v[k] = static_cast<std::int32_t>(k);
  z.write({}, NDArray::from_vector<std::int32_t>(shape, v));
  return z;
}

IndexTensor tensor(Shape shape, std::vector<std::int64_t> values) {
  return IndexTensor{std::move(shape), std::move(values)};
}

std::int32_t at(const NDArray& a, std::int64_t k) { return a.data<std::int32_t>()[k]; }

TEST(Indexing, AdvancedIndicesBroadcastAndKeepTheirPlace) {
  const auto z = grid_array({6, 7}, {4, 3});
  // z[[[0], [5]], [1, -1]]: rows (2,1) and columns (2,) broadcast to (2, 2).
  const auto plan = plan_index({tensor({2, 1}, {0, 5}), tensor({2}, {1, -1})}, z.shape(), IndexMode::numpy);
  EXPECT_EQ(plan.kind, IndexPlan::Kind::points);  // one array per dimension: points
  const auto r = read_index(z, plan);
  ASSERT_EQ(r.shape(), (Shape{2, 2}));
  EXPECT_EQ(r.to_vector<std::int32_t>(), (std::vector<std::int32_t>{1, 6, 5001, 5006}));
  // z[[[1, 2]], 1:3]: a 2-d index array with a slice is NumPy's advanced indexing (the box).
  const auto g = plan_index({tensor({1, 2}, {1, 2}), slice(1, 3)}, z.shape(), IndexMode::numpy);
  EXPECT_EQ(g.kind, IndexPlan::Kind::gather);
  const auto rg = read_index(z, g);
  ASSERT_EQ(rg.shape(), (Shape{1, 2, 2}));
  EXPECT_EQ(rg.to_vector<std::int32_t>(), (std::vector<std::int32_t>{1001, 1002, 2001, 2002}));
}

TEST(Indexing, APlanRunsOnlyOnTheShapeItWasMadeFor) {
  auto z = grid_array({6, 7}, {4, 3});
  // A gather plan's picks are positions in its box: on another shape the box would be another one.
  const auto g = plan_index({tensor({1, 2}, {1, 2}), slice(1, std::nullopt)}, z.shape(), IndexMode::numpy);
  const auto rows = plan_index({slice(-2)}, z.shape(), IndexMode::numpy);  // the last two rows
  const auto points = plan_index({tensor({1}, {-1}), tensor({1}, {-1})}, z.shape(), IndexMode::numpy);
  ASSERT_EQ(g.kind, IndexPlan::Kind::gather);
  ASSERT_EQ(points.kind, IndexPlan::Kind::points);
  z.append(NDArray(DataType::int32, {6, 2}), 1);  // now (6, 9): ":" and -1 would mean other elements
  for (const auto* p : {&g, &rows, &points}) EXPECT_THROW(read_index(z, *p), ConflictError);
  for (const auto* p : {&rows, &points}) EXPECT_THROW(z.write(*p, NDArray(DataType::int32, {})), ConflictError);
  EXPECT_EQ(at(read_index(z, {}), 5 * 9 + 6), 5006) << "nothing was written";
  EXPECT_EQ(read_index(z, plan_index({tensor({1}, {-1}), tensor({1}, {-1})}, z.shape(), IndexMode::numpy))
                .to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{0}));  // planned again: the new last element (appended zeros)
  IndexPlan by_hand = rows;
  by_hand.planned_shape.reset();  // a plan made by hand runs on the shape the array has
  EXPECT_EQ(read_index(z, by_hand).shape(), (Shape{2, 9}));
}

TEST(Indexing, SlicesBetweenAdvancedIndicesMoveTheirDimensionsFirst) {
  const auto z = iota_array({3, 4, 5}, {2, 2, 2});
  // NumPy: a[[0, 2], ::-2, [4, 1]] has shape (2, 2): the broadcast dimension first, then the slice.
  const auto r =
      read_index(z, plan_index({tensor({2}, {0, 2}), slice(std::nullopt, std::nullopt, -2), tensor({2}, {4, 1})},
                               z.shape(), IndexMode::numpy));
  ASSERT_EQ(r.shape(), (Shape{2, 2}));
  // element [k, j] = a[i_k, 3 - 2 j, c_k]
  EXPECT_EQ(r.to_vector<std::int32_t>(), (std::vector<std::int32_t>{0 + 15 + 4, 0 + 5 + 4, 40 + 15 + 1, 40 + 5 + 1}));
}

TEST(Indexing, SpreadIndicesAreReadAsPointsNotAsTheirBox) {
  const auto z = iota_array({600, 600, 2}, {64, 64, 2});
  // z[rows, cols, :] with 300 points on a diagonal: the box they span (300 x 300 x 2) is far larger
  // than the result (300 x 2), so the elements are read as points; same values either way.
  std::vector<std::int64_t> rows, cols;
  for (std::int64_t k = 0; k < 300; ++k) {
    rows.push_back(2 * k);
    cols.push_back(599 - 2 * k);
  }
  const auto plan = plan_index({tensor({300}, rows), tensor({300}, cols), slice()}, z.shape(), IndexMode::numpy);
  EXPECT_EQ(plan.kind, IndexPlan::Kind::points);
  // Still NumPy's advanced indexing: read-only, whichever way it is read.
  auto target = z;
  EXPECT_THROW(write_index(target, plan, NDArray(DataType::int32, {300, 2}).view()), SelectionError);
  const auto r = read_index(z, plan);
  ASSERT_EQ(r.shape(), (Shape{300, 2}));
  for (std::int64_t k = 0; k < 300; ++k)
    for (std::int64_t c = 0; c < 2; ++c) EXPECT_EQ(at(r, 2 * k + c), (rows[k] * 600 + cols[k]) * 2 + c);
  // The same rows with every column: the box is the result, read as a box.
  const auto box = plan_index({tensor({300}, rows), slice(), std::int64_t{1}}, z.shape(), IndexMode::numpy);
  EXPECT_EQ(box.kind, IndexPlan::Kind::gather);
  const auto rb = read_index(z, box);
  ASSERT_EQ(rb.shape(), (Shape{300, 600}));  // the int is an advanced index apart from rows: first
  EXPECT_EQ(at(rb, 600 * 7 + 5), (rows[7] * 600 + 5) * 2 + 1);
}

TEST(Indexing, MasksOfTheArraysShapeAndOfSomeDimensions) {
  const auto z = grid_array({3, 4}, {2, 2});
  MaskTensor m{{3, 4}, std::vector<std::uint8_t>(12, 0)};
  m.values[1] = m.values[6] = m.values[11] = 1;
  const auto plan = plan_index({m}, z.shape(), IndexMode::numpy);
  EXPECT_EQ(plan.kind, IndexPlan::Kind::mask);
  EXPECT_EQ(read_index(z, plan).to_vector<std::int32_t>(), (std::vector<std::int32_t>{1, 1002, 2003}));
  MaskTensor wrong{{4, 3}, std::vector<std::uint8_t>(12, 1)};
  EXPECT_THROW(plan_index({wrong}, z.shape(), IndexMode::numpy), SelectionError);
  EXPECT_THROW(plan_index({tensor({12}, {})}, z.shape(), IndexMode::mask), SelectionError);
}

TEST(Indexing, BlocksCountShardsWhenSharded) {
  const auto z = grid_array({10, 6}, {2, 3}, Shape{4, 6});
  // Block 1 of dimension 0 is the second shard: rows 4..7; Ellipsis stands for the rest.
  const auto r = read_index(z, plan_index({std::int64_t{1}, ellipsis}, z.shape(), IndexMode::blocks));
  ASSERT_EQ(r.shape(), (Shape{4, 6}));
  EXPECT_EQ(at(r, 0), 4000);
  EXPECT_EQ(at(r, 23), 7005);
  const auto last = read_index(z, plan_index({std::int64_t{-1}}, z.shape(), IndexMode::blocks));
  EXPECT_EQ(last.shape(), (Shape{2, 6}));  // the last shard holds rows 8 and 9
}

TEST(Indexing, WritesBroadcastTheValueAsNumPyDoes) {
  auto z = grid_array({4, 5}, {2, 2});
  // z.vindex[[0, 3], [1, 4]] = [[7]]: an extra leading length-1 dimension, then repeated.
  const auto plan = plan_index({tensor({2}, {0, 3}), tensor({2}, {1, 4})}, z.shape(), IndexMode::vindex);
  write_index(z, plan, NDArray::from_vector<std::int32_t>({1, 1}, {7}).view());
  EXPECT_EQ(read_index(z, plan).to_vector<std::int32_t>(), (std::vector<std::int32_t>{7, 7}));
  const auto bad = NDArray::from_vector<std::int32_t>({3}, {1, 2, 3});
  try {
    write_index(z, plan, bad.view());
    FAIL() << "a value of 3 elements written to 2 points";
  } catch (const SelectionError& e) {
    EXPECT_EQ(e.code(), ErrorCode::shape_mismatch);
    EXPECT_NE(std::string(e.what()).find("data of shape (3,) cannot be broadcast"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_index(z, plan).to_vector<std::int32_t>(), (std::vector<std::int32_t>{7, 7}));  // untouched
  const auto advanced = plan_index({tensor({1, 2}, {0, 1}), slice()}, z.shape(), IndexMode::numpy);
  EXPECT_THROW(write_index(z, advanced, bad.view()), SelectionError);
}

TEST(Indexing, RefusalsNameWhatIsWrong) {
  const Shape shape{4, 5};
  auto code = [&](const IndexExpr& e, IndexMode m) {
    try {
      (void)plan_index(e, shape, m);
    } catch (const Error& err) {
      return err.code();
    }
    return ErrorCode::invalid_argument;  // not refused
  };
  EXPECT_EQ(code({tensor({2, 1}, {0, 1})}, IndexMode::orthogonal), ErrorCode::invalid_index);
  EXPECT_EQ(code({tensor({2}, {0, 1})}, IndexMode::basic), ErrorCode::invalid_index);
  EXPECT_EQ(code({tensor({2}, {0, 1}), tensor({3}, {0, 1, 2})}, IndexMode::vindex), ErrorCode::invalid_index);
  EXPECT_EQ(code({std::int64_t{0}, std::int64_t{9}}, IndexMode::vindex), ErrorCode::index_out_of_bounds);
  EXPECT_EQ(code({ellipsis, tensor({1, 1}, {0}), ellipsis}, IndexMode::numpy), ErrorCode::invalid_index);
  EXPECT_EQ(code({tensor({1, 1}, {0}), std::int64_t{0}, std::int64_t{0}}, IndexMode::numpy),
            ErrorCode::index_out_of_bounds);
}

TEST(Indexing, CliSelectionsAreIndexExpressions) {
  const auto e = index_expr(parse_selection("[0,2], ..., [True,False]"));
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(std::get<IndexTensor>(e[0]).values, (std::vector<std::int64_t>{0, 2}));
  EXPECT_TRUE(std::holds_alternative<Ellipsis>(e[1]));
  EXPECT_EQ(std::get<MaskTensor>(e[2]).values, (std::vector<std::uint8_t>{1, 0}));
}

}  // namespace

// Array's one read and one write: every kind of plan, fixed-size and variable-length elements,
// zero-based and in coordinates, and the refusals when the kind of elements is wrong.
TEST(Indexing, OneReadAndOneWriteForEveryPlanAndEveryKindOfElement) {
  // The README's example: two points read and written through a vindex plan.
  auto z = grid_array({6, 4}, {4, 4});
  auto p = plan_index({IndexTensor{{2}, {0, 5}}, IndexTensor{{2}, {1, 3}}}, z.shape(), IndexMode::vindex);
  EXPECT_EQ(std::get<NDArray>(z.read(p)).to_vector<std::int32_t>(), (std::vector<std::int32_t>{1, 5003}));
  z.write(p, NDArray::full<std::int32_t>({}, 7));
  EXPECT_EQ(z.read({0, 1}).to_vector<std::int32_t>(), std::vector<std::int32_t>{7});
  EXPECT_EQ(z.read({5, 3}).to_vector<std::int32_t>(), std::vector<std::int32_t>{7});
  // Variable-length elements through the same calls, in every kind of plan.
  ArraySpec spec{.shape = {4, 3}, .chunks = {2, 2}, .dtype = DataType::string_t, .shards = Shape{4, 2}};
  spec.lower_bound = Shape{-2, 0};
  auto s = Array::create(MemoryStore::create(), spec);
  s.write(s.plan({}), VlenValues{{}, {"a"}});
  s.write(plan_index({IndexTensor{{2}, {0, 3}}, IndexTensor{{2}, {0, 2}}}, s.shape(), IndexMode::vindex),
          VlenValues{{2}, {"p", "q"}});
  MaskTensor m{{4, 3}, std::vector<std::uint8_t>(12, 0)};
  m.values[4] = 1;  // (1, 1)
  s.write(plan_index({m}, s.shape(), IndexMode::mask), VlenValues{{}, {"m"}});
  s.write(s.coords().plan({-1, slice(2, 3)}), VlenValues{{}, {"c"}});  // coordinate -1: row 1
  const auto all = std::get<VlenValues>(s.read(s.plan({})));
  EXPECT_EQ(all.shape, (Shape{4, 3}));
  EXPECT_EQ(all.values, (std::vector<std::string>{"p", "a", "a", "a", "m", "c", "a", "a", "a", "a", "a", "q"}));
  const auto blocks = std::get<VlenValues>(s.read(plan_index({0, 1}, s.shape(), IndexMode::blocks)));
  EXPECT_EQ(blocks.shape, (Shape{4, 1}));
  EXPECT_EQ(blocks.values, (std::vector<std::string>{"a", "c", "a", "q"}));
  const auto gathered =
      std::get<VlenValues>(s.read(plan_index({IndexTensor{{2}, {3, 0}}, slice(0, 1)}, s.shape(), IndexMode::numpy)));
  EXPECT_EQ(gathered.values, (std::vector<std::string>{"a", "p"}));
  // Growth takes VlenValues too.
  s.prepend(VlenValues{{1, 3}, {"x", "y", "z"}});
  EXPECT_EQ(std::get<VlenValues>(s.read(s.coords().plan({-3}))).values, (std::vector<std::string>{"x", "y", "z"}));
  // The wrong kind of elements, and writes through NumPy's advanced indexing, are refused.
  auto code = [](auto&& f) -> std::optional<ErrorCode> {
    try {
      f();
    } catch (const Error& e) {
      return e.code();
    }
    return std::nullopt;
  };
  EXPECT_TRUE(code([&] { s.write(s.plan({}), NDArray::full<std::int32_t>({}, 1)); }) == ErrorCode::dtype_mismatch);
  EXPECT_TRUE(code([&] { z.write(z.plan({}), VlenValues{{}, {"no"}}); }) == ErrorCode::dtype_mismatch);
  EXPECT_TRUE(code([&] { s.read({}); }) == ErrorCode::dtype_mismatch);
  // z[[[0, 1]], 0:2]: a 2-d index array with a slice is NumPy's advanced indexing (the box).
  const auto adv = plan_index({IndexTensor{{1, 2}, {0, 1}}, slice(0, 2)}, z.shape(), IndexMode::numpy);
  EXPECT_TRUE(code([&] { z.write(adv, NDArray::full<std::int32_t>({}, 1)); }) == ErrorCode::invalid_index);
  EXPECT_EQ(z.read({0, 1}).to_vector<std::int32_t>(), std::vector<std::int32_t>{7});  // nothing written
}
