// The chunk map (picture.hpp): an SVG drawn from the grid's answers (ChunkGrid) and the stored
// objects' keys, in the domain's coordinates.
#include "zarrpp/view/picture.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "svg.hpp"
#include "zarrpp/core/checked.hpp"
#include "zarrpp/core/error.hpp"
#include "zarrpp/grid/chunk_grid.hpp"

namespace zarrpp {
namespace {

using svg::px;

constexpr const char* kStoredColour = "#4c78a8";
constexpr const char* kOriginColour = "#d62728";
constexpr int kLeft = 70, kTop = 56, kRight = 24, kBelowGrid = 46, kOneRow = 44;

/// A count held in a double (a product of chunk counts), as an integer.
std::string count_text(double n) {
  std::ostringstream os;
  os.precision(0);
  os << std::fixed << n;
  return os.str();
}

std::string count_noun(std::int64_t n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

/// One drawn side of the map: a dimension's chunks, grouped `per` to a cell, and the pixels its
/// coordinates map to.
struct Side {
  bool present = false;                       ///< false for the missing row dimension of a 1-d (or 0-d) array
  std::size_t dim = 0;                        ///< the array dimension
  std::string name;                           ///< its name (dimension_names) or "dim N"
  std::int64_t lo = 0, hi = 1;                ///< the domain's coordinates [lo, hi)
  std::int64_t first = 0, end = 1;            ///< chunk indices [first, end)
  std::int64_t per = 1;                       ///< chunks per cell
  std::int64_t cell_first = 0, cell_end = 1;  ///< cell indices (floor(k / per))
  double view_lo = 0, view_hi = 1;            ///< coordinates the chunks span
  double pixel0 = 0, scale = 1;               ///< pixel of view_lo, pixels per coordinate

  double at(double coordinate) const { return pixel0 + (coordinate - view_lo) * scale; }
  double length() const { return (view_hi - view_lo) * scale; }
  std::int64_t cell_of(std::int64_t k) const { return checked::floor_div(k, per); }
  std::pair<std::int64_t, std::int64_t> chunks_of(std::int64_t cell) const {
    return {std::max(first, cell * per), std::min(end, (cell + 1) * per)};
  }
};

/// The map's model: the two sides, the grid, and what is stored per cell.
struct Map {
  ChunkGrid grid;
  std::vector<std::int64_t> lower;
  Side col, row;
  double projected = 1;  ///< stored objects one cell stands for along the undrawn dimensions
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> stored;  ///< (row cell, col cell) -> objects
  std::int64_t stored_total = 0;

  std::vector<std::optional<std::string>> names;            ///< dimension_names (empty when none)
  ChunkKeyEncoding keys = ChunkKeyEncoding::default_('/');  ///< to label a cell of one chunk with its key
  double chunk_lo(const Side& s, std::int64_t k) const {
    if (!s.present) return static_cast<double>(k);  // a 0-d array's one chunk
    return static_cast<double>(grid.chunk_start_index(s.dim, k) + lower[s.dim]);
  }
  double chunk_hi(const Side& s, std::int64_t k) const {
    return chunk_lo(s, k) + (s.present ? static_cast<double>(grid.chunk_extent(s.dim, k)) : 1.0);
  }
};

std::string dim_name(const Map& m, std::size_t d) {
  if (d < m.names.size() && m.names[d]) return *m.names[d];
  return "dim " + std::to_string(d);
}

Side side_of(const Map& m, std::size_t d, int max_cells) {
  Side s;
  s.present = true;
  s.dim = d;
  s.name = dim_name(m, d);
  s.lo = m.lower[d];
  s.hi = s.lo + m.grid.shape()[d];
  s.first = m.grid.first_chunk(d);
  s.end = m.grid.end_chunk(d);
  const std::int64_t n = s.end - s.first;
  s.per = n > max_cells ? (n + max_cells - 1) / max_cells : 1;
  if (n == 0) {
    s.cell_first = s.cell_end = 0;
    s.view_lo = static_cast<double>(s.lo);
    s.view_hi = s.view_lo + 1;
    return s;
  }
  s.cell_first = s.cell_of(s.first);
  s.cell_end = s.cell_of(s.end - 1) + 1;
  s.view_lo = std::min(m.chunk_lo(s, s.first), static_cast<double>(s.lo));
  s.view_hi = std::max(m.chunk_hi(s, s.end - 1), static_cast<double>(s.hi));
  return s;
}

/// Pixels: the longer side gets `size`, the shorter its proportion but at least size / 8.
void place(Side& col, Side& row, int size) {
  const double wide = col.view_hi - col.view_lo;
  const double tall = row.present ? row.view_hi - row.view_lo : 0;
  const double scale = size / std::max(wide, tall);
  const double least = size / 8.0;
  col.scale = col.present ? std::max(scale, least / wide) : 2.0 * kOneRow;  // a 0-d array: one cell
  // Room left of the grid for the row's tick labels (the domain's bounds) and its name.
  const auto chars = row.present ? std::max(std::to_string(row.lo).size(), std::to_string(row.hi).size()) : 0;
  col.pixel0 = std::max(static_cast<double>(kLeft), 30 + 7.5 * static_cast<double>(chars));
  if (row.present) {
    row.scale = std::max(scale, least / tall);
    row.pixel0 = kTop;
  } else {
    row.scale = kOneRow;
    row.pixel0 = kTop;
  }
}

Map model_of(const Array& a, const ChunkMapOptions& o) {
  const ArrayMetadata meta = a.metadata();
  Map m;
  m.grid = ChunkGrid::from_metadata(meta);
  m.lower = a.lower_bound();
  m.keys = meta.chunk_key_encoding;
  if (meta.dimension_names) m.names = *meta.dimension_names;
  const std::size_t r = meta.rank();
  const int cells = std::clamp(o.max_cells, 1, 500);  // at most 250,000 cells: a picture, not a listing
  if (r >= 1) m.col = side_of(m, r - 1, cells);
  if (r >= 2) m.row = side_of(m, r - 2, cells);
  for (std::size_t d = 0; d + 2 < r; ++d) m.projected *= static_cast<double>(m.grid.num_chunks(d));
  place(m.col, m.row, std::clamp(o.size, 16, 8192));
  const std::string prefix = a.path().empty() ? "" : a.path() + "/";
  for (const auto& key : a.stored_chunk_keys()) {
    const auto k = meta.chunk_key_encoding.decode_or_throw(std::string_view(key).substr(prefix.size()), r);
    if (!m.grid.contains_chunk(k)) continue;  // the listing and the metadata crossed a concurrent growth
    ++m.stored_total;
    const std::int64_t cc = r >= 1 ? m.col.cell_of(k[r - 1]) : 0;
    const std::int64_t rc = r >= 2 ? m.row.cell_of(k[r - 2]) : 0;
    ++m.stored[{rc, cc}];
  }
  return m;
}

std::string range_text(std::int64_t lo, std::int64_t hi) {
  return "[" + std::to_string(lo) + ", " + std::to_string(hi) + ")";
}

/// The chunk index (or index range) of a cell along a side, for its tooltip.
std::string chunks_text(const Side& s, std::int64_t cell) {
  const auto [k0, k1] = s.chunks_of(cell);
  return k1 - k0 == 1 ? std::to_string(k0) : range_text(k0, k1);
}

struct Doc {
  std::ostringstream body, labels;  ///< labels go over everything else
  double right = 0;                 ///< where the longest left-anchored text ends (about)
  double width = 0, height = 0;
};

/// A cell of one chunk names its key in the middle, when the key fits.
void label(Doc& doc, const Map& m, std::int64_t col, std::int64_t row, bool stored, double x0, double x1, double y0,
           double y1) {
  std::vector<std::int64_t> index;
  if (m.row.present) index.push_back(row);
  if (m.col.present) index.push_back(col);
  const std::string key = m.keys.encode(index);
  // Centred in the part inside the domain (an edge chunk's rest is hatched).
  if (m.col.present) {
    x0 = std::max(x0, m.col.at(static_cast<double>(m.col.lo)));
    x1 = std::min(x1, m.col.at(static_cast<double>(m.col.hi)));
  }
  if (m.row.present) {
    y0 = std::max(y0, m.row.at(static_cast<double>(m.row.lo)));
    y1 = std::min(y1, m.row.at(static_cast<double>(m.row.hi)));
  }
  if (x1 - x0 < 7.5 * static_cast<double>(key.size()) + 6 || y1 - y0 < 16) return;
  doc.labels << svg::text("key", (x0 + x1) / 2, (y0 + y1) / 2 + 4, "middle", key,
                          stored ? " fill=\"#ffffff\"" : " fill=\"#555555\"");
}

void draw_cells(Doc& doc, const Map& m) {
  const Side &c = m.col, &r = m.row;
  const std::int64_t rows_first = r.present ? r.cell_first : 0, rows_end = r.present ? r.cell_end : 1;
  for (std::int64_t rc = rows_first; rc < rows_end; ++rc) {
    for (std::int64_t cc = c.cell_first; cc < c.cell_end; ++cc) {
      const auto [c0, c1] = c.chunks_of(cc);
      const double x0 = c.at(m.chunk_lo(c, c0)), x1 = c.at(m.chunk_hi(c, c1 - 1));
      double y0 = r.pixel0, y1 = r.pixel0 + r.scale;
      double total = static_cast<double>(c1 - c0) * m.projected;
      bool edge = m.chunk_lo(c, c0) < static_cast<double>(c.lo) || m.chunk_hi(c, c1 - 1) > static_cast<double>(c.hi);
      std::string where =
          !c.present ? std::string("the one element")
                     : c.name + " " +
                           range_text(std::max<std::int64_t>(static_cast<std::int64_t>(m.chunk_lo(c, c0)), c.lo),
                                      std::min<std::int64_t>(static_cast<std::int64_t>(m.chunk_hi(c, c1 - 1)), c.hi));
      std::string which = c.present ? chunks_text(c, cc) : m.keys.encode(std::vector<std::int64_t>{});
      if (r.present) {
        const auto [r0, r1] = r.chunks_of(rc);
        y0 = r.at(m.chunk_lo(r, r0));
        y1 = r.at(m.chunk_hi(r, r1 - 1));
        total *= static_cast<double>(r1 - r0);
        edge =
            edge || m.chunk_lo(r, r0) < static_cast<double>(r.lo) || m.chunk_hi(r, r1 - 1) > static_cast<double>(r.hi);
        where = r.name + " " +
                range_text(std::max<std::int64_t>(static_cast<std::int64_t>(m.chunk_lo(r, r0)), r.lo),
                           std::min<std::int64_t>(static_cast<std::int64_t>(m.chunk_hi(r, r1 - 1)), r.hi)) +
                " \u00d7 " + where;
        which = chunks_text(r, rc) + ", " + which;
      }
      const auto it = m.stored.find({rc, cc});
      const std::int64_t n = it == m.stored.end() ? 0 : it->second;
      const bool single = total == 1;
      std::string cls = n == 0 ? "empty" : (static_cast<double>(n) >= total ? "stored" : "some");
      doc.body << "<rect class=\"cell " << cls << (edge ? " edge" : "") << "\" x=\"" << px(x0) << "\" y=\"" << px(y0)
               << "\" width=\"" << px(x1 - x0) << "\" height=\"" << px(y1 - y0) << "\" fill=\""
               << (n == 0 ? "#ffffff" : kStoredColour) << "\"";
      if (cls == "some") doc.body << " fill-opacity=\"" << px(0.2 + 0.7 * static_cast<double>(n) / total) << "\"";
      doc.body << "><title>" << (single ? "chunk " : "chunks ") << which << ": " << svg::escaped(where) << ", "
               << (single ? (n ? "stored" : "not stored") : std::to_string(n) + " of " + count_text(total) + " stored")
               << "</title></rect>\n";
      if (single && m.grid.rank() <= 2) label(doc, m, cc, rc, n > 0, x0, x1, y0, y1);
    }
  }
}

/// Hatching over what the chunks cover outside the domain (edge chunks' unused part).
void draw_outside(Doc& doc, const Map& m) {
  const Side &c = m.col, &r = m.row;
  const double vx0 = c.at(c.view_lo), vx1 = c.at(c.view_hi);
  const double vy0 = r.present ? r.at(r.view_lo) : r.pixel0, vy1 = r.present ? r.at(r.view_hi) : r.pixel0 + r.scale;
  const double dx0 = c.at(static_cast<double>(c.lo)), dx1 = c.at(static_cast<double>(c.hi));
  const double dy0 = r.present ? r.at(static_cast<double>(r.lo)) : vy0,
               dy1 = r.present ? r.at(static_cast<double>(r.hi)) : vy1;
  if (vx0 == dx0 && vx1 == dx1 && vy0 == dy0 && vy1 == dy1) return;
  doc.body << "<path class=\"outside\" fill=\"url(#zarrpp-hatch)\" fill-rule=\"evenodd\" d=\"M" << px(vx0) << " "
           << px(vy0) << "H" << px(vx1) << "V" << px(vy1) << "H" << px(vx0) << "Z M" << px(dx0) << " " << px(dy0) << "H"
           << px(dx1) << "V" << px(dy1) << "H" << px(dx0) << "Z\"/>\n";
}

/// Lines at every chunk boundary of a side (a binned side: every cell boundary).
void boundaries(const Map& m, const Side& s, std::vector<double>& out) {
  for (std::int64_t cell = s.cell_first; cell < s.cell_end; ++cell) {
    const auto [k0, k1] = s.chunks_of(cell);
    out.push_back(s.at(m.chunk_lo(s, k0)));
    if (cell + 1 == s.cell_end) out.push_back(s.at(m.chunk_hi(s, k1 - 1)));
  }
}

void draw_grid_lines(Doc& doc, const Map& m) {
  const Side &c = m.col, &r = m.row;
  const double y0 = r.present ? r.at(r.view_lo) : r.pixel0, y1 = r.present ? r.at(r.view_hi) : r.pixel0 + r.scale;
  const double x0 = c.at(c.view_lo), x1 = c.at(c.view_hi);
  std::vector<double> xs, ys;
  boundaries(m, c, xs);
  if (r.present)
    boundaries(m, r, ys);
  else
    ys = {y0, y1};
  doc.body << "<path class=\"grid\" stroke=\"#333333\" stroke-width=\"1\" fill=\"none\" d=\"";
  for (const double x : xs) doc.body << "M" << px(x) << " " << px(y0) << "V" << px(y1);
  for (const double y : ys) doc.body << "M" << px(x0) << " " << px(y) << "H" << px(x1);
  doc.body << "\"/>\n";
}

/// Thin lines at the inner chunks' boundaries inside shards, when they are at least 4 pixels apart.
void draw_inner_lines(Doc& doc, const Map& m, const Array& a) {
  if (!a.sharded() || !m.col.present || m.col.per > 1 || (m.row.present && m.row.per > 1)) return;
  Shape inner;
  try {
    inner = a.chunks();
  } catch (const UnsupportedError&) {
    return;  // rectilinear inner chunks: no one size to draw
  }
  const auto lines = [&](const Side& s, bool vertical, double a0, double a1) {
    const auto step = inner[s.dim];
    if (step <= 0 || step * s.scale < 4) return;
    for (std::int64_t k = s.first; k < s.end; ++k) {
      for (double x = m.chunk_lo(s, k) + static_cast<double>(step); x < m.chunk_hi(s, k);
           x += static_cast<double>(step))
        doc.body << "M"
                 << (vertical ? px(s.at(x)) + " " + px(a0) + "V" + px(a1) : px(a0) + " " + px(s.at(x)) + "H" + px(a1));
    }
  };
  const Side &c = m.col, &r = m.row;
  const double y0 = r.present ? r.at(r.view_lo) : r.pixel0, y1 = r.present ? r.at(r.view_hi) : r.pixel0 + r.scale;
  doc.body << "<path class=\"inner\" stroke=\"#999999\" stroke-width=\"0.6\" fill=\"none\" d=\"";
  lines(c, true, y0, y1);
  if (r.present) lines(r, false, c.at(c.view_lo), c.at(c.view_hi));
  doc.body << "\"/>\n";
}

/// The domain's outline and coordinate 0, when it lies inside the chunks' span.
void draw_domain(Doc& doc, const Map& m, bool& origin_drawn) {
  const Side &c = m.col, &r = m.row;
  const double y0 = r.present ? r.at(static_cast<double>(r.lo)) : r.pixel0;
  const double y1 = r.present ? r.at(static_cast<double>(r.hi)) : r.pixel0 + r.scale;
  const double x0 = c.at(static_cast<double>(c.lo)), x1 = c.at(static_cast<double>(c.hi));
  const double vy0 = r.present ? r.at(r.view_lo) : y0, vy1 = r.present ? r.at(r.view_hi) : y1;
  if (c.view_lo < 0 && c.view_hi > 0) {
    doc.body << "<line class=\"origin\" x1=\"" << px(c.at(0)) << "\" y1=\"" << px(vy0 - 6) << "\" x2=\"" << px(c.at(0))
             << "\" y2=\"" << px(vy1 + 6) << "\" stroke=\"" << kOriginColour << "\" stroke-width=\"3\"/>\n";
    origin_drawn = true;
  }
  if (r.present && r.view_lo < 0 && r.view_hi > 0) {
    doc.body << "<line class=\"origin\" x1=\"" << px(c.at(c.view_lo) - 6) << "\" y1=\"" << px(r.at(0)) << "\" x2=\""
             << px(c.at(c.view_hi) + 6) << "\" y2=\"" << px(r.at(0)) << "\" stroke=\"" << kOriginColour
             << "\" stroke-width=\"3\"/>\n";
    origin_drawn = true;
  }
  doc.body << "<rect class=\"domain\" x=\"" << px(x0) << "\" y=\"" << px(y0) << "\" width=\"" << px(x1 - x0)
           << "\" height=\"" << px(y1 - y0) << "\" fill=\"none\" stroke=\"#000000\" stroke-width=\"2.5\"/>\n";
}

/// Characters in UTF-8 text (bytes that do not continue a character).
std::size_t utf8_length(const std::string& s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

void text(Doc& out, const std::string& cls, double x, double y, const std::string& anchor, const std::string& s,
          const std::string& extra = "") {
  out.body << svg::text(cls, x, y, anchor, s, extra);
  if (anchor == "start") out.right = std::max(out.right, x + 7.5 * static_cast<double>(utf8_length(s)));
}

/// Coordinates at the domain's bounds and at 0 (when inside it and not crowding a bound).
std::vector<std::int64_t> ticks_of(const Side& s) {
  std::vector<std::int64_t> t{s.lo, s.hi};
  if (s.lo < 0 && s.hi > 0 && -s.lo * s.scale >= 24 && s.hi * s.scale >= 24) t.push_back(0);
  if (s.hi == s.lo || (s.hi - s.lo) * s.scale < 24) t.pop_back();  // bounds too close to label both
  return t;
}

void draw_axes(Doc& doc, const Map& m) {
  const Side &c = m.col, &r = m.row;
  if (!c.present) return;  // a 0-d array has no axes
  const double below = (r.present ? r.at(r.view_hi) : r.pixel0 + r.scale) + 16;
  for (const auto t : ticks_of(c)) text(doc, "tick", c.at(static_cast<double>(t)), below, "middle", std::to_string(t));
  text(doc, "axis", c.at((c.view_lo + c.view_hi) / 2), below + 18, "middle", c.name + " \u2192");
  if (!r.present) return;
  const double left = c.at(c.view_lo) - 8;
  for (const auto t : ticks_of(r)) text(doc, "tick", left, r.at(static_cast<double>(t)) + 4, "end", std::to_string(t));
  const double mid = r.at((r.view_lo + r.view_hi) / 2);
  text(doc, "axis", 16, mid, "middle", r.name + " \u2192", " transform=\"rotate(-90 16 " + px(mid) + ")\"");
}

std::string shape_text(const Shape& s) {
  if (s.empty()) return "()";
  std::string out;
  for (std::size_t d = 0; d < s.size(); ++d) out += (d ? " \u00d7 " : "") + std::to_string(s[d]);
  return out;
}

void draw_titles(Doc& doc, const Map& m, const Array& a) {
  const Shape shape = a.shape();
  std::string line1 =
      (a.path().empty() ? std::string("/") : "/" + a.path()) + "  " + a.dtype().name() + "  shape " + shape_text(shape);
  std::string domain = "domain ";
  for (std::size_t d = 0; d < shape.size(); ++d)
    domain += (d ? " \u00d7 " : "") + range_text(m.lower[d], m.lower[d] + shape[d]);
  if (shape.empty()) domain += "()";
  const char* noun = a.sharded() ? "shard" : "chunk";
  const std::string line2 =
      domain + "  " + std::to_string(m.stored_total) + " of " + count_noun(m.grid.total_chunks(), noun) + " stored";
  text(doc, "title", 8, 20, "start", line1, " font-weight=\"bold\"");
  text(doc, "title", 8, 38, "start", line2);
}

/// The legend and the notes on what a cell stands for, below the axes; returns the y under them.
double draw_legend(Doc& doc, const Map& m, const Array& a, bool origin_drawn, double y) {
  double x = 8;
  const auto swatch = [&](const std::string& fill, const std::string& extra, const std::string& label) {
    doc.body << "<rect class=\"legend\" x=\"" << px(x) << "\" y=\"" << px(y - 10)
             << "\" width=\"12\" height=\"12\" fill=\"" << fill << "\"" << extra << " stroke=\"#333333\"/>\n";
    text(doc, "legend", x + 16, y, "start", label);
    x += 24 + 6.5 * static_cast<double>(label.size());
  };
  swatch(kStoredColour, "", "stored");
  swatch("#ffffff", "", "not stored (fill value)");
  swatch("url(#zarrpp-hatch)", "", "outside the domain");
  if (origin_drawn) {
    doc.body << "<line class=\"legend\" x1=\"" << px(x) << "\" y1=\"" << px(y - 4) << "\" x2=\"" << px(x + 14)
             << "\" y2=\"" << px(y - 4) << "\" stroke=\"" << kOriginColour << "\" stroke-width=\"3\"/>\n";
    text(doc, "legend", x + 18, y, "start", "coordinate 0");
  }
  std::vector<std::string> notes;
  const std::size_t r = m.grid.rank();
  if (r > 2) {
    std::string along;
    for (std::size_t d = 0; d + 2 < r; ++d)
      along += (d ? ", " : "") + count_noun(m.grid.num_chunks(d), "chunk") + " along " + dim_name(m, d);
    notes.push_back("the last two of " + std::to_string(r) + " dimensions: a cell stands for " + along +
                    ", shaded by the share stored");
  }
  if (m.col.per > 1 || (m.row.present && m.row.per > 1))
    notes.push_back("a cell holds " + (m.row.present ? std::to_string(m.row.per) + " \u00d7 " : std::string()) +
                    std::to_string(m.col.per) + " chunks; shaded by the share stored");
  if (a.sharded()) {
    try {
      notes.push_back("shards (thick lines) of inner chunks " + shape_text(a.chunks()));
    } catch (const UnsupportedError&) {
      notes.push_back("shards of inner chunks of several sizes");
    }
  }
  for (const auto& n : notes) text(doc, "note", 8, y += 18, "start", n);
  return y;
}

}  // namespace

std::string chunk_map_svg(const Array& array, const ChunkMapOptions& options) {
  const Map m = model_of(array, options);
  Doc doc;
  bool origin_drawn = false;
  draw_cells(doc, m);
  draw_outside(doc, m);
  draw_domain(doc, m, origin_drawn);
  draw_grid_lines(doc, m);
  draw_inner_lines(doc, m, array);
  doc.body << doc.labels.str();
  draw_axes(doc, m);
  draw_titles(doc, m, array);
  const double grid_bottom = m.row.present ? m.row.at(m.row.view_hi) : m.row.pixel0 + m.row.scale;
  const double bottom = draw_legend(doc, m, array, origin_drawn, grid_bottom + kBelowGrid + 10);
  const double width = std::max({m.col.at(m.col.view_hi) + kRight, 520.0, doc.right + 12});
  std::ostringstream out;
  out << svg::open("zarrpp-chunk-map", width, bottom + 12)
      << "<defs><pattern id=\"zarrpp-hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
         "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#ffffff\"/>"
         "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#9a9a9a\" stroke-width=\"2\"/></pattern></defs>\n"
      << doc.body.str() << "</svg>\n";
  return out.str();
}

}  // namespace zarrpp
