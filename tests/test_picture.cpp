// Pictures (picture.hpp): the chunk map and the slice image are well-formed SVG (parsed with
// expat) holding the cells, lines, labels and pixels their arrays call for.
#include <expat.h>
#include <gtest/gtest.h>
#include <png.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "support.hpp"
#include "zarrpp/view/picture.hpp"

using namespace zarrpp;

namespace {

struct Element {
  std::string name;
  std::map<std::string, std::string> attr;
  std::string text;  // the text inside it (a <text>'s label; a cell's <title> tooltip)
};

// Every element of an XML document, in document order; fails the test when it is not well-formed.
std::vector<Element> parse(const std::string& xml) {
  struct State {
    std::vector<Element> all;
    std::vector<std::size_t> open;
  } st;
  XML_Parser p = XML_ParserCreate("UTF-8");
  XML_SetUserData(p, &st);
  XML_SetElementHandler(
      p,
      [](void* u, const XML_Char* name, const XML_Char** atts) {
        auto& s = *static_cast<State*>(u);
        Element e{name, {}, {}};
        for (int i = 0; atts[i]; i += 2) e.attr[atts[i]] = atts[i + 1];
        s.open.push_back(s.all.size());
        s.all.push_back(std::move(e));
      },
      [](void* u, const XML_Char*) {
        auto& s = *static_cast<State*>(u);
        const std::size_t done = s.open.back();
        s.open.pop_back();
        // A <title>'s tooltip is also its parent's text.
        if (s.all[done].name == "title" && !s.open.empty()) s.all[s.open.back()].text += s.all[done].text;
      });
  XML_SetCharacterDataHandler(p, [](void* u, const XML_Char* s, int n) {
    auto& st2 = *static_cast<State*>(u);
    if (!st2.open.empty()) st2.all[st2.open.back()].text.append(s, static_cast<std::size_t>(n));
  });
  const bool ok = XML_Parse(p, xml.data(), static_cast<int>(xml.size()), 1) == XML_STATUS_OK;
  EXPECT_TRUE(ok) << XML_ErrorString(XML_GetErrorCode(p)) << " at line " << XML_GetCurrentLineNumber(p);
  XML_ParserFree(p);
  return st.all;
}

// The elements named `name` whose class list holds every word of `cls`.
std::vector<Element> of_class(const std::vector<Element>& all, const std::string& name, const std::string& cls) {
  std::vector<Element> out;
  for (const auto& e : all) {
    if (e.name != name) continue;
    const std::string have = " " + (e.attr.count("class") ? e.attr.at("class") : "") + " ";
    bool every = true;
    std::size_t at = 0;
    while (at < cls.size()) {
      const auto end = std::min(cls.find(' ', at), cls.size());
      every = every && have.find(" " + cls.substr(at, end - at) + " ") != std::string::npos;
      at = end + 1;
    }
    if (every) out.push_back(e);
  }
  return out;
}

std::vector<std::string> texts(const std::vector<Element>& all, const std::string& cls) {
  std::vector<std::string> out;
  for (const auto& e : of_class(all, "text", cls)) out.push_back(e.text);
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

TEST(Picture, ChunkMapAfterAPrependShowsChunksBeforeTheOrigin) {
  auto store = MemoryStore::create();
  auto z = Array::create(store, {.shape = {6, 4}, .chunks = {4, 4}, .dtype = DataType::int32});
  z.fill<std::int32_t>(1);
  const auto before = parse(chunk_map_svg(z));
  EXPECT_EQ(of_class(before, "rect", "cell stored").size(), 2u);
  EXPECT_EQ(of_class(before, "line", "origin").size(), 0u);  // coordinate 0 is the domain's edge
  z.prepend(NDArray::full<std::int32_t>({3, 4}, 2), 0);
  const auto after = parse(chunk_map_svg(z));
  EXPECT_EQ(of_class(after, "svg", "zarrpp-chunk-map").size(), 1u);
  const auto cells = of_class(after, "rect", "cell");
  ASSERT_EQ(cells.size(), 3u);
  EXPECT_EQ(of_class(after, "rect", "cell stored").size(), 3u);
  // The first chunk (-4..0) starts one row before the domain, the last (4..8) ends two after it.
  EXPECT_EQ(of_class(after, "rect", "cell edge").size(), 2u);
  EXPECT_EQ(of_class(after, "path", "outside").size(), 1u);
  // Chunk -1 lies above chunk 0: its rectangle ends where chunk 0's begins, at the origin line.
  EXPECT_EQ(std::stod(cells[0].attr.at("y")) + std::stod(cells[0].attr.at("height")), std::stod(cells[1].attr.at("y")));
  const auto origin = of_class(after, "line", "origin");
  ASSERT_EQ(origin.size(), 1u);
  EXPECT_EQ(origin[0].attr.at("y1"), cells[1].attr.at("y"));
  const auto keys = texts(after, "key");
  EXPECT_EQ(keys, (std::vector<std::string>{"c/-1/0", "c/0/0", "c/1/0"}));
  const auto ticks = texts(after, "tick");
  for (const auto* t : {"-3", "0", "6", "4"}) EXPECT_TRUE(has(ticks, t)) << t;
  const auto titles = texts(after, "title");
  ASSERT_EQ(titles.size(), 2u);
  EXPECT_NE(titles[1].find("domain [-3, 6) \u00d7 [0, 4)"), std::string::npos) << titles[1];
  EXPECT_NE(titles[1].find("3 of 3 chunks stored"), std::string::npos) << titles[1];
  EXPECT_NE(cells[0].text.find("chunk -1, 0: dim 0 [-3, 0) \u00d7 dim 1 [0, 4), stored"), std::string::npos)
      << cells[0].text;
}

TEST(Picture, ALargeGridIsDrawnInCellsShadedByTheShareStored) {
  auto store = MemoryStore::create();
  auto z = Array::create(store, {.shape = {1000, 3000}, .chunks = {10, 10}, .dtype = DataType::uint8});
  z.write({slice(0, 10), slice(0, 10)}, NDArray::full<std::uint8_t>({10, 10}, 1));
  const auto all = parse(chunk_map_svg(z, {.size = 400, .max_cells = 40}));
  // 100 chunk rows in cells of 3 (34 cells), 300 chunk columns in cells of 8 (38).
  EXPECT_EQ(of_class(all, "rect", "cell").size(), 34u * 38u);
  const auto some = of_class(all, "rect", "cell some");
  ASSERT_EQ(some.size(), 1u);
  EXPECT_NE(some[0].text.find("1 of 24 stored"), std::string::npos) << some[0].text;
  EXPECT_EQ(of_class(all, "rect", "cell stored").size(), 0u);
  EXPECT_TRUE(texts(all, "key").empty());  // cells of many chunks are not labelled with a key
  EXPECT_TRUE(has(texts(all, "note"), "a cell holds 3 \u00d7 8 chunks; shaded by the share stored"));
  // The longer side gets the size asked for.
  const auto domain = of_class(all, "rect", "domain");
  ASSERT_EQ(domain.size(), 1u);
  EXPECT_EQ(domain[0].attr.at("width"), "400.0");
}

TEST(Picture, ShardsShowTheirInnerChunksAndNamesAreEscaped) {
  auto store = MemoryStore::create();
  auto z = Array::create(store, {.shape = {50, 70},
                                 .chunks = {5, 5},
                                 .dtype = DataType::int16,
                                 .shards = Shape{20, 20},
                                 .dimension_names = std::vector<std::optional<std::string>>{"a<b", std::nullopt}});
  z.write({slice(0, 20), slice(0, 40)}, NDArray::full<std::int16_t>({20, 40}, 3));
  const auto all = parse(chunk_map_svg(z));
  EXPECT_EQ(of_class(all, "rect", "cell").size(), 12u);
  EXPECT_EQ(of_class(all, "rect", "cell stored").size(), 2u);
  EXPECT_EQ(of_class(all, "path", "inner").size(), 1u);
  EXPECT_NE(texts(all, "title")[1].find("2 of 12 shards stored"), std::string::npos);
  const auto axes = texts(all, "axis");
  EXPECT_TRUE(has(axes, "a<b \u2192")) << axes.size();
  EXPECT_TRUE(has(axes, "dim 1 \u2192"));
  // A control character, which XML cannot hold, is shown as '?' (the document stays well-formed).
  auto c = Array::create(MemoryStore::create(),
                         {.shape = {4},
                          .chunks = {2},
                          .dtype = DataType::int8,
                          .dimension_names = std::vector<std::optional<std::string>>{std::string("t\x01&")}});
  EXPECT_TRUE(has(texts(parse(chunk_map_svg(c)), "axis"), "t?& \u2192"));
}

TEST(Picture, ARectilinearGridDrawsEachChunkAtItsSize) {
  auto store = MemoryStore::create();
  auto z = Array::create(store, {.shape = {10, 8}, .dtype = DataType::int32, .chunk_sizes = {{2, 5, 3}, {4, 4}}});
  z.write({slice(2, 7), all}, NDArray::full<std::int32_t>({5, 8}, 1));
  const auto all_ = parse(chunk_map_svg(z));
  const auto cells = of_class(all_, "rect", "cell");
  ASSERT_EQ(cells.size(), 6u);
  const auto height = [&](std::size_t i) { return std::stod(cells[i].attr.at("height")); };
  EXPECT_DOUBLE_EQ(height(2) / height(0), 2.5);
  EXPECT_DOUBLE_EQ(height(4) / height(0), 1.5);
  EXPECT_EQ(cells[2].attr.at("class"), "cell stored");
  EXPECT_EQ(cells[0].attr.at("class"), "cell empty");
}

TEST(Picture, LongLabelsAndTitlesGetRoom) {
  auto store = MemoryStore::create();
  const std::string path = "a/rather/long/path/to/an/array/of/surface/temperatures/in/kelvin";
  auto z = Array::create(
      store, path,
      {.shape = {10, 4}, .chunks = {4, 4}, .dtype = DataType::float32, .lower_bound = Shape{-9007199254740000, 0}});
  const auto all_ = parse(chunk_map_svg(z));
  const auto domain = of_class(all_, "rect", "domain");
  ASSERT_EQ(domain.size(), 1u);
  // "-9007199254740000" (17 characters) fits left of the grid; the title fits across.
  EXPECT_GE(std::stod(domain[0].attr.at("x")), 17 * 7.0 + 16);
  const auto svg = of_class(all_, "svg", "zarrpp-chunk-map");
  ASSERT_EQ(svg.size(), 1u);
  EXPECT_GE(std::stod(svg[0].attr.at("width")), static_cast<double>(path.size() + 20) * 7.0);
  const auto image = parse(slice_image_svg(z, parse_selection(":, :")));
  EXPECT_GE(std::stod(of_class(image, "image", "values")[0].attr.at("x")), 17 * 7.0 + 16);
}

TEST(Picture, MoreThanTwoDimensionsAndNoneAreDrawn) {
  auto store = MemoryStore::create();
  auto z = Array::create(store, {.shape = {4, 30, 40}, .chunks = {1, 10, 10}, .dtype = DataType::uint8});
  z.write({0, all, all}, NDArray::full<std::uint8_t>({30, 40}, 1));
  const auto three = parse(chunk_map_svg(z));
  EXPECT_EQ(of_class(three, "rect", "cell some").size(), 12u);  // 1 of the 4 chunks along dim 0
  EXPECT_NE(texts(three, "note")[0].find("4 chunks along dim 0"), std::string::npos);
  auto s = Array::create(MemoryStore::create(), {.shape = {}, .chunks = {}, .dtype = DataType::float64});
  EXPECT_EQ(of_class(parse(chunk_map_svg(s)), "rect", "cell empty").size(), 1u);
  auto e = Array::create(MemoryStore::create(), {.shape = {0, 5}, .chunks = {3, 3}, .dtype = DataType::float64});
  EXPECT_EQ(of_class(parse(chunk_map_svg(e)), "rect", "cell").size(), 0u);
}

namespace {

// The PNG inside a slice image, decoded to RGB rows.
std::vector<std::uint8_t> raster(const std::vector<Element>& all, std::uint32_t& w, std::uint32_t& h) {
  const auto img = of_class(all, "image", "values");
  EXPECT_EQ(img.size(), 1u);
  const std::string href = img.at(0).attr.at("href");
  const std::string prefix = "data:image/png;base64,";
  EXPECT_EQ(href.substr(0, prefix.size()), prefix);
  const auto png = base64_decode(href.substr(prefix.size()));
  EXPECT_TRUE(png.has_value());
  png_image im{};
  im.version = PNG_IMAGE_VERSION;
  EXPECT_NE(png_image_begin_read_from_memory(&im, png->data(), png->size()), 0);
  im.format = PNG_FORMAT_RGB;
  std::vector<std::uint8_t> rgb(PNG_IMAGE_SIZE(im));
  EXPECT_NE(png_image_finish_read(&im, nullptr, rgb.data(), 0, nullptr), 0);
  w = im.width;
  h = im.height;
  return rgb;
}

}  // namespace

TEST(Picture, ASliceImageColoursEachElementFromLeastToGreatest) {
  auto store = MemoryStore::create();
  auto z = Array::create(store, {.shape = {2, 3, 4}, .chunks = {1, 2, 2}, .dtype = DataType::float32});
  std::vector<float> v(12);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  v[5] = std::numeric_limits<float>::quiet_NaN();
  z.write({1, all, all}, NDArray::from_vector<float>({3, 4}, v));
  const auto all_ = parse(slice_image_svg(z, parse_selection("1")));
  std::uint32_t w = 0, h = 0;
  const auto rgb = raster(all_, w, h);
  ASSERT_EQ(w % 4, 0u);
  ASSERT_EQ(h % 3, 0u);
  const std::uint32_t zoom = w / 4;
  EXPECT_EQ(h / 3, zoom);  // square elements
  const auto at = [&](std::uint32_t row, std::uint32_t col) {
    const std::size_t p = ((row * zoom) * w + col * zoom) * 3;
    return std::vector<int>{rgb[p], rgb[p + 1], rgb[p + 2]};
  };
  EXPECT_EQ(at(0, 0), (std::vector<int>{0x44, 0x01, 0x54}));  // the least value: viridis' first colour
  EXPECT_EQ(at(2, 3), (std::vector<int>{0xfd, 0xe7, 0x25}));  // the greatest: its last
  EXPECT_EQ(at(1, 1), (std::vector<int>{0xbd, 0xbd, 0xbd}));  // NaN
  const auto bar = texts(all_, "bar");
  EXPECT_EQ(bar.front(), "11");
  EXPECT_EQ(bar.back(), "0");
  EXPECT_TRUE(has(texts(all_, "title"), "/  float32  dim 0 = 1"));
  EXPECT_EQ(of_class(all_, "rect", "colour-bar").size(), 1u);
}

TEST(Picture, ASliceImageStridesALongSideAndLabelsCoordinates) {
  auto store = MemoryStore::create();
  auto z = Array::create(store, {.shape = {10, 3000}, .chunks = {10, 500}, .dtype = DataType::int32});
  z.prepend(NDArray::full<std::int32_t>({5, 3000}, 7), 0);  // domain [-5, 10) x [0, 3000)
  const auto all_ = parse(slice_image_svg(z, parse_selection(":, :"), {.max_pixels = 1000}));
  std::uint32_t w = 0, h = 0;
  (void)raster(all_, w, h);
  EXPECT_EQ(w, 1000u);  // 3000 elements read with step 3
  EXPECT_TRUE(has(texts(all_, "title"), "dim 0 [-5 .. 9]  \u00d7  dim 1 [0 .. 2997] step 3"));
  const auto ticks = texts(all_, "tick");
  EXPECT_EQ(ticks, (std::vector<std::string>{"0", "500", "1000", "1500", "2000", "2500", "-4", "-2", "0", "2", "4", "6",
                                             "8"}));
  // Coordinates select the same elements.
  const auto c = parse(slice_image_svg(z, parse_selection("-5:0, 0:10"), {.coords = true}));
  EXPECT_TRUE(has(texts(c, "title"), "dim 0 [-5 .. -1]  \u00d7  dim 1 [0 .. 9]"));
}

TEST(Picture, ASliceImageRefusesWhatItCannotDraw) {
  auto store = MemoryStore::create();
  auto z = Array::create(store, {.shape = {4, 4}, .chunks = {2, 2}, .dtype = DataType::int32});
  EXPECT_THROW(slice_image_svg(z, parse_selection("0")), ArgumentError);          // one dimension left
  EXPECT_THROW(slice_image_svg(z, parse_selection("[0, 2], :")), ArgumentError);  // an index array
  EXPECT_THROW(slice_image_svg(z, parse_selection("0:0, :")), ArgumentError);     // nothing selected
  EXPECT_THROW(slice_image_svg(z, parse_selection("9, :")), SelectionError);      // out of bounds
  auto s = Array::create(MemoryStore::create(), {.shape = {2, 2}, .chunks = {2, 2}, .dtype = DataType::string_t});
  EXPECT_THROW(slice_image_svg(s, parse_selection(":, :")), UnsupportedError);
  auto c = Array::create(MemoryStore::create(), {.shape = {2, 2}, .chunks = {2, 2}, .dtype = DataType::complex64});
  EXPECT_THROW(slice_image_svg(c, parse_selection(":, :")), UnsupportedError);
}
