// The slice image (picture.hpp): a 2-d selection's values in a colour map, as a PNG (libpng's
// simplified API) inside an SVG with the coordinates on its axes and a colour bar.
#include <png.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "../select/plan.hpp"
#include "svg.hpp"
#include "zarrpp/core/checked.hpp"
#include "zarrpp/core/error.hpp"
#include "zarrpp/view/picture.hpp"

namespace zarrpp {
namespace {

using svg::px;

// viridis (matplotlib's default colour map) at eleven evenly spaced points.
constexpr std::array<std::array<std::uint8_t, 3>, 11> kViridis{{{0x44, 0x01, 0x54},
                                                                {0x48, 0x24, 0x75},
                                                                {0x41, 0x44, 0x87},
                                                                {0x35, 0x5f, 0x8d},
                                                                {0x2a, 0x78, 0x8e},
                                                                {0x21, 0x91, 0x8c},
                                                                {0x22, 0xa8, 0x84},
                                                                {0x44, 0xbf, 0x70},
                                                                {0x7a, 0xd1, 0x51},
                                                                {0xbd, 0xdf, 0x26},
                                                                {0xfd, 0xe7, 0x25}}};
constexpr std::array<std::uint8_t, 3> kNaN{0xbd, 0xbd, 0xbd};
constexpr int kLeft = 80, kTop = 56, kBar = 18, kBarGap = 18, kBarLabels = 90, kBelow = 48;

std::array<std::uint8_t, 3> colour(double t) {
  t = std::clamp(t, 0.0, 1.0) * 10;
  const auto i = std::min<std::size_t>(static_cast<std::size_t>(t), 9);
  const double f = t - static_cast<double>(i);
  std::array<std::uint8_t, 3> c{};
  for (std::size_t k = 0; k < 3; ++k)
    c[k] = static_cast<std::uint8_t>(std::lround(kViridis[i][k] * (1 - f) + kViridis[i + 1][k] * f));
  return c;
}

std::string hex(const std::array<std::uint8_t, 3>& c) {
  char b[8];
  std::snprintf(b, sizeof b, "#%02x%02x%02x", c[0], c[1], c[2]);
  return b;
}

std::string number(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

/// The values as doubles, in C order (the data types whose values are real numbers).
std::vector<double> values_of(const NDArray& a) {
  std::vector<double> out(static_cast<std::size_t>(a.size()));
  const auto each = [&](auto tag) {
    using T = decltype(tag);
    const T* p = reinterpret_cast<const T*>(a.raw_data());
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<double>(p[i]);
  };
  switch (a.dtype().id()) {
    case DataType::Id::bool_:
      each(std::uint8_t{});
      break;
    case DataType::Id::int8:
      each(std::int8_t{});
      break;
    case DataType::Id::int16:
      each(std::int16_t{});
      break;
    case DataType::Id::int32:
      each(std::int32_t{});
      break;
    case DataType::Id::int64:
      each(std::int64_t{});
      break;
    case DataType::Id::uint8:
      each(std::uint8_t{});
      break;
    case DataType::Id::uint16:
      each(std::uint16_t{});
      break;
    case DataType::Id::uint32:
      each(std::uint32_t{});
      break;
    case DataType::Id::uint64:
      each(std::uint64_t{});
      break;
    case DataType::Id::float16: {
      const auto* p = reinterpret_cast<const float16*>(a.raw_data());
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<float>(p[i]);
      break;
    }
    case DataType::Id::float32:
      each(float{});
      break;
    case DataType::Id::float64:
      each(double{});
      break;
    default:
      throw UnsupportedError("a slice image draws real numbers; the elements of this array are " + a.dtype().name());
  }
  return out;
}

/// The PNG of an RGB raster, each element `zoom` x `zoom` pixels.
std::vector<std::uint8_t> png_of(const std::vector<std::uint8_t>& rgb, std::int64_t w, std::int64_t h, int zoom) {
  const auto W = static_cast<std::size_t>(w * zoom), H = static_cast<std::size_t>(h * zoom);
  std::vector<std::uint8_t> big(W * H * 3);
  for (std::size_t y = 0; y < H; ++y)
    for (std::size_t x = 0; x < W; ++x)
      for (std::size_t k = 0; k < 3; ++k)
        big[(y * W + x) * 3 + k] = rgb[((y / zoom) * static_cast<std::size_t>(w) + x / zoom) * 3 + k];
  png_image img{};
  img.version = PNG_IMAGE_VERSION;
  img.width = static_cast<png_uint_32>(W);
  img.height = static_cast<png_uint_32>(H);
  img.format = PNG_FORMAT_RGB;
  png_alloc_size_t size = 0;
  if (png_image_write_to_memory(&img, nullptr, &size, 0, big.data(), 0, nullptr) == 0)
    throw Error(ErrorCode::limit_exceeded, std::string("encoding the slice image as PNG failed: ") + img.message);
  std::vector<std::uint8_t> out(size);
  if (png_image_write_to_memory(&img, out.data(), &size, 0, big.data(), 0, nullptr) == 0)
    throw Error(ErrorCode::limit_exceeded, std::string("encoding the slice image as PNG failed: ") + img.message);
  out.resize(size);
  return out;
}

/// One drawn side: array dimension `dim`, elements start, start + step, ... (count of them).
struct Side {
  std::size_t dim = 0;
  std::int64_t start = 0, step = 1, count = 0, lower = 0;
  std::string name;
  std::int64_t coordinate(std::int64_t i) const { return lower + start + i * step; }
  std::string text() const {
    std::string t = name + " [" + std::to_string(coordinate(0)) + " .. " + std::to_string(coordinate(count - 1)) + "]";
    return step == 1 ? t : t + " step " + std::to_string(step);
  }
};

std::string dim_name(const ArrayMetadata& m, std::size_t d) {
  if (m.dimension_names && d < m.dimension_names->size() && (*m.dimension_names)[d]) return *(*m.dimension_names)[d];
  return "dim " + std::to_string(d);
}

/// The selection normalised, checked to leave two dimensions of ranges, each strided to at most
/// `max` elements; `fixed` describes the dimensions it drops.
std::vector<Side> sides_of(const ArrayMetadata& m, const Shape& lower, const std::vector<DimSel>& dims,
                           const SliceImageOptions& o, std::string& fixed) {
  std::vector<Side> sides;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    const auto& x = dims[d];
    if (x.kind == DimSel::Kind::List)
      throw ArgumentError("a slice image takes slices and integers; dimension " + std::to_string(d) +
                          " is given an index array or mask");
    if (x.dropped()) {
      fixed += (fixed.empty() ? "" : ", ") + dim_name(m, d) + " = " + std::to_string(lower[d] + x.start);
      continue;
    }
    Side s{.dim = d, .start = x.start, .step = x.step, .count = x.count, .lower = lower[d], .name = dim_name(m, d)};
    const std::int64_t max = std::clamp(o.max_pixels, 1, 4096);  // at most 16M elements held
    if (s.count > max) {
      const std::int64_t by = (s.count + max - 1) / max;
      s.step *= by;
      s.count = (s.count + by - 1) / by;
    }
    sides.push_back(s);
  }
  if (sides.size() != 2)
    throw ArgumentError("a slice image needs a selection of 2 dimensions; this one has " +
                        std::to_string(sides.size()) + " (give the others an integer, e.g. \"0, :, :\")");
  if (sides[0].count == 0 || sides[1].count == 0)
    throw ArgumentError("the selection is empty (" + std::to_string(sides[0].count) + " x " +
                        std::to_string(sides[1].count) + " elements): nothing to draw");
  return sides;
}

/// The selection as array indices, with the sides' (strided) steps.
Selection strided(const std::vector<DimSel>& dims, const std::vector<Side>& sides) {
  Selection out;
  std::size_t k = 0;
  for (const auto& x : dims) {
    if (x.dropped()) {
      out.emplace_back(x.start);
      continue;
    }
    const Side& s = sides[k++];
    const std::int64_t last = s.start + (s.count - 1) * s.step;
    out.emplace_back(
        Slice{s.start, last + (s.step > 0 ? 1 : -1) < 0 ? std::nullopt : std::optional(last + (s.step > 0 ? 1 : -1)),
              s.step});
  }
  return out;
}

/// Round coordinates along a side to label (multiples of 1, 2 or 5 times a power of ten, at
/// most eight of them), each with its place in elements from the side's first (a fraction
/// between two elements when strided).
std::vector<std::pair<std::int64_t, double>> ticks_of(const Side& s) {
  const std::int64_t a = std::min(s.coordinate(0), s.coordinate(s.count - 1));
  const std::int64_t b = std::max(s.coordinate(0), s.coordinate(s.count - 1));
  std::int64_t step = 1;
  for (std::int64_t p = 1; b - a > 7 * step; p *= 10) {
    for (const std::int64_t f : {1, 2, 5}) {
      step = f * p;
      if (b - a <= 7 * step) break;
    }
  }
  std::vector<std::pair<std::int64_t, double>> out;
  const std::int64_t first = a + (step - checked::floor_mod(a, step)) % step;
  for (std::int64_t c = first; c <= b; c += step) {
    out.emplace_back(c, static_cast<double>(c - s.coordinate(0)) / static_cast<double>(s.step));
    if (c > b - step) break;  // the next would pass b (and might overflow)
  }
  return out;
}

}  // namespace

std::string slice_image_svg(const Array& array, const Selection& selection, const SliceImageOptions& options) {
  const ArrayMetadata m = array.metadata();
  std::string fixed;
  Shape lower;  // from the same metadata as the shape (one snapshot)
  for (const auto& d : m.domain()) lower.push_back(d.inclusive_min);
  const auto dims =
      options.coords ? normalize_selection(selection, m.shape, &lower) : normalize_selection(selection, m.shape);
  const auto sides = sides_of(m, lower, dims, options, fixed);
  const DataKind kind = array.dtype().kind();
  if (kind != DataKind::Bool && kind != DataKind::Int && kind != DataKind::UInt && kind != DataKind::Float)
    throw UnsupportedError("a slice image draws real numbers; the elements of this array are " + array.dtype().name());
  const NDArray data = array.read(strided(dims, sides));
  const std::vector<double> v = values_of(data);
  const Side &rows = sides[0], &cols = sides[1];
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  std::size_t nans = 0, infinities = 0;
  for (const double x : v) {
    if (std::isnan(x))
      ++nans;
    else if (std::isinf(x))
      ++infinities;
    else
      lo = std::min(lo, x), hi = std::max(hi, x);
  }
  const bool finite = lo <= hi;
  std::vector<std::uint8_t> rgb(v.size() * 3);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const double x = v[i];
    const auto c = std::isnan(x) ? kNaN
                   : !finite || hi == lo
                       ? colour(0.5)
                       : colour(x == std::numeric_limits<double>::infinity()    ? 1
                                : x == -std::numeric_limits<double>::infinity() ? 0
                                                                                : (x - lo) / (hi - lo));
    std::copy(c.begin(), c.end(), rgb.begin() + static_cast<std::ptrdiff_t>(3 * i));
  }
  const int zoom = static_cast<int>(std::clamp<std::int64_t>(400 / std::max(rows.count, cols.count), 1, 64));
  const double w = static_cast<double>(cols.count * zoom), h = static_cast<double>(rows.count * zoom);
  // Room left of the image for the row ticks' coordinates, and right of it for the titles.
  std::size_t chars = 0;
  for (const auto& t : ticks_of(rows)) chars = std::max(chars, std::to_string(t.first).size());
  const double left = std::max(static_cast<double>(kLeft), 30 + 7.5 * static_cast<double>(chars));
  const std::string title1 = (array.path().empty() ? std::string("/") : "/" + array.path()) + "  " +
                             array.dtype().name() + (fixed.empty() ? "" : "  " + fixed);
  const std::string title2 = rows.text() + "  \u00d7  " + cols.text();
  const double bar_x = left + w + kBarGap;
  const double width = std::max(
      {bar_x + kBar + kBarLabels, 480.0, 20 + 7.5 * static_cast<double>(std::max(title1.size(), title2.size()))});
  const double height = kTop + std::max(h, 120.0) + kBelow + 20;
  std::ostringstream doc;
  doc << svg::open("zarrpp-slice-image", width, height)
      << svg::text("title", 8, 20, "start", title1, " font-weight=\"bold\"")
      << svg::text("title", 8, 38, "start", title2);
  doc << "<image class=\"values\" x=\"" << left << "\" y=\"" << kTop << "\" width=\"" << px(w) << "\" height=\""
      << px(h) << "\" preserveAspectRatio=\"none\" style=\"image-rendering:pixelated\" href=\"data:image/png;base64,"
      << base64_encode(png_of(rgb, cols.count, rows.count, zoom)) << "\"/>\n"
      << "<rect x=\"" << left << "\" y=\"" << kTop << "\" width=\"" << px(w) << "\" height=\"" << px(h)
      << "\" fill=\"none\" stroke=\"#333333\"/>\n";
  for (const auto& [coordinate, i] : ticks_of(cols)) {
    const double x = left + (i + 0.5) * zoom;
    doc << "<line class=\"tick\" x1=\"" << px(x) << "\" y1=\"" << px(kTop + h) << "\" x2=\"" << px(x) << "\" y2=\""
        << px(kTop + h + 5) << "\" stroke=\"#333333\"/>\n"
        << svg::text("tick", x, kTop + h + 18, "middle", std::to_string(coordinate));
  }
  doc << svg::text("axis", left + w / 2, kTop + h + 36, "middle", cols.name + " \u2192");
  for (const auto& [coordinate, i] : ticks_of(rows)) {
    const double y = kTop + (i + 0.5) * zoom;
    doc << "<line class=\"tick\" x1=\"" << px(left - 5) << "\" y1=\"" << px(y) << "\" x2=\"" << left << "\" y2=\""
        << px(y) << "\" stroke=\"#333333\"/>\n"
        << svg::text("tick", left - 8, y + 4, "end", std::to_string(coordinate));
  }
  doc << svg::text("axis", 16, kTop + h / 2, "middle", rows.name + " \u2192",
                   " transform=\"rotate(-90 16 " + px(kTop + h / 2) + ")\"");
  // The colour bar: least value at the bottom, greatest at the top.
  const double bar_h = std::max(h, 120.0);
  doc << "<defs><linearGradient id=\"zarrpp-viridis\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">";
  for (std::size_t k = 0; k < kViridis.size(); ++k)
    doc << "<stop offset=\"" << px(static_cast<double>(k) / 10) << "\" stop-color=\"" << hex(kViridis[k]) << "\"/>";
  doc << "</linearGradient></defs>\n<rect class=\"colour-bar\" x=\"" << px(bar_x) << "\" y=\"" << kTop << "\" width=\""
      << kBar << "\" height=\"" << px(bar_h) << "\" fill=\"url(#zarrpp-viridis)\" stroke=\"#333333\"/>\n";
  const double lx = bar_x + kBar + 6;
  if (finite) {
    doc << svg::text("bar", lx, kTop + 10, "start", number(hi))
        << svg::text("bar", lx, kTop + bar_h / 2 + 4, "start", number((lo + hi) / 2))
        << svg::text("bar", lx, kTop + bar_h, "start", number(lo));
  } else {
    doc << svg::text("bar", lx, kTop + 10, "start", "no finite values");
  }
  std::string note = std::to_string(rows.count) + " \u00d7 " + std::to_string(cols.count) + " elements";
  if (nans > 0) note += "; NaN grey (" + std::to_string(nans) + ")";
  if (infinities > 0) note += "; \u00b1inf in the end colours (" + std::to_string(infinities) + ")";
  doc << svg::text("note", 8, height - 10, "start", note) << "</svg>\n";
  return doc.str();
}

}  // namespace zarrpp
