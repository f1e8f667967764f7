#pragma once
// The kinds of selection the tests write a lot, through Array's one read and one write: each
// builds the plan (IndexPlan) and runs it. Declared in namespace zarrpp so that calls on an Array
// find them by argument-dependent lookup.
#include <variant>

#include "select/plan.hpp"
#include "zarrpp/zarrpp.hpp"

namespace zarrpp {

inline IndexPlan points_plan(const Coordinates& c, bool in_coords = false) {
  IndexPlan p;
  p.kind = IndexPlan::Kind::points;
  p.points = c;
  p.shape = {c.empty() ? 1 : static_cast<std::int64_t>(c[0].size())};  // a 0-d array: one point
  p.coords = in_coords;
  return p;
}
// A mask checked as the planner checks it (a bool array of the array's shape).
inline IndexPlan mask_plan(const Array& a, const NDView& mask) {
  const auto points = mask_to_coordinates(mask, a.shape());
  IndexPlan p;
  p.kind = IndexPlan::Kind::mask;
  p.mask.shape = mask.shape();
  const auto* b = reinterpret_cast<const std::uint8_t*>(mask.data());
  p.mask.values.assign(b, b + shape_size(mask.shape()));
  std::int64_t n = 0;
  for (const auto v : p.mask.values) n += v ? 1 : 0;
  p.shape = {n};
  (void)points;
  return p;
}
inline IndexPlan blocks_plan(const Selection& sel) {
  IndexPlan p;
  p.kind = IndexPlan::Kind::blocks;
  p.selection = sel;
  return p;
}
inline IndexPlan orthogonal_plan(const Selection& sel, bool in_coords = false) {
  IndexPlan p;
  p.selection = sel;
  p.coords = in_coords;
  return p;
}

inline NDArray read_points(const Array& a, const Coordinates& c, bool in_coords = false) {
  return std::get<NDArray>(a.read(points_plan(c, in_coords)));
}
inline void write_points(Array& a, const Coordinates& c, const NDView& d, bool in_coords = false) {
  a.write(points_plan(c, in_coords), d);
}
inline NDArray read_mask(const Array& a, const NDView& m) { return std::get<NDArray>(a.read(mask_plan(a, m))); }
inline void write_mask(Array& a, const NDView& m, const NDView& d) { a.write(mask_plan(a, m), d); }
inline NDArray read_blocks(const Array& a, const Selection& s) { return std::get<NDArray>(a.read(blocks_plan(s))); }
inline void write_blocks(Array& a, const Selection& s, const NDView& d) { a.write(blocks_plan(s), d); }
inline VlenValues read_vlen(const Array& a, const Selection& s = {}, bool in_coords = false) {
  return std::get<VlenValues>(a.read(orthogonal_plan(s, in_coords)));
}
inline void write_vlen(Array& a, const Selection& s, const VlenValues& v, bool in_coords = false) {
  a.write(orthogonal_plan(s, in_coords), v);
}
inline VlenValues read_vlen_points(const Array& a, const Coordinates& c, bool in_coords = false) {
  return std::get<VlenValues>(a.read(points_plan(c, in_coords)));
}
inline void write_vlen_points(Array& a, const Coordinates& c, const VlenValues& v, bool in_coords = false) {
  a.write(points_plan(c, in_coords), v);
}
inline NDArray read_index(const Array& a, const IndexPlan& p) { return std::get<NDArray>(a.read(p)); }
inline void write_index(Array& a, const IndexPlan& p, const NDView& d) { a.write(p, d); }

}  // namespace zarrpp
