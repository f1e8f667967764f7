// Parsing the CLI's SELECTION text and classifying selections (selection.hpp).
#include <algorithm>
#include <string>

#include "zarrpp/core/error.hpp"
#include "zarrpp/select/selection.hpp"

namespace zarrpp {
namespace {
[[noreturn]] void parse_fail(std::string_view text, std::string_view part, const std::string& why) {
  throw SelectionError("cannot parse selection \"" + std::string(text) + "\" at \"" + std::string(part) + "\": " + why);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::int64_t parse_int(std::string_view text, std::string_view s) {
  s = trim(s);
  if (s.empty()) parse_fail(text, s, "expected an integer");
  bool neg = false;
  std::size_t i = 0;
  if (s[0] == '-' || s[0] == '+') {
    neg = s[0] == '-';
    i = 1;
  }
  if (i >= s.size()) parse_fail(text, s, "expected an integer");
  std::int64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') parse_fail(text, s, "expected an integer");
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_sub_overflow(v, s[i] - '0', &v))
      parse_fail(text, s, "integer out of range");
  }
  if (!neg) {
    if (v == INT64_MIN) parse_fail(text, s, "integer out of range");
    v = -v;
  }
  return v;
}
}  // namespace

namespace {

bool is_index_array(const DimSelector& d) { return std::holds_alternative<IndexArray>(d); }
bool is_array(const DimSelector& d) { return is_index_array(d) || std::holds_alternative<BoolArray>(d); }
bool is_integer(const DimSelector& d) { return std::holds_alternative<std::int64_t>(d); }

}  // namespace

SelectionKind selection_kind(const Selection& sel, std::size_t ndim, bool multi_dimensional) {
  const auto arrays = std::count_if(sel.begin(), sel.end(), is_array);
  if (arrays == 0) return SelectionKind::orthogonal;
  const bool ints_and_index_arrays =
      std::all_of(sel.begin(), sel.end(), [](const DimSelector& d) { return is_integer(d) || is_index_array(d); });
  if (ndim > 0 && sel.size() == ndim && ints_and_index_arrays) return SelectionKind::coordinates;
  if (arrays > 1 || multi_dimensional) return SelectionKind::numpy_advanced;
  // One array: NumPy counts the integers as advanced indices too; apart from the array, they move
  // the result's dimensions to the front.
  std::vector<std::size_t> advanced;
  std::size_t d = 0;
  for (const auto& x : sel) {
    if (std::holds_alternative<Ellipsis>(x)) {
      // NumPy counts an Ellipsis as separating the indices around it, even when it stands for no
      // dimension at all.
      d += std::max<std::size_t>(ndim > sel.size() - 1 ? ndim - (sel.size() - 1) : 0, 1);
      continue;
    }
    if (is_array(x) || is_integer(x)) advanced.push_back(d);
    ++d;
  }
  for (std::size_t k = 1; k < advanced.size(); ++k)
    if (advanced[k] != advanced[k - 1] + 1) return SelectionKind::numpy_advanced;
  return SelectionKind::orthogonal;
}

Selection parse_selection(std::string_view text) {
  Selection sel;
  std::string_view rest = trim(text);
  if (rest.empty()) return sel;
  // Split on top-level commas (not inside [...]).
  std::vector<std::string_view> parts;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == '[')
      ++depth;
    else if (rest[i] == ']') {
      if (--depth < 0) parse_fail(text, rest.substr(i), "unbalanced ']'");
    } else if (rest[i] == ',' && depth == 0) {
      parts.push_back(rest.substr(start, i - start));
      start = i + 1;
    }
  }
  if (depth != 0) parse_fail(text, rest, "unbalanced '['");
  const auto last = trim(rest.substr(start));
  if (!last.empty() || parts.empty()) parts.push_back(rest.substr(start));  // "1," is a 1-tuple
  for (auto raw : parts) {
    const auto p = trim(raw);
    if (p.empty()) parse_fail(text, raw, "empty index");
    if (p == "...") {
      sel.push_back(ellipsis);
    } else if (p.front() == '[') {
      if (p.back() != ']') parse_fail(text, p, "expected ']'");
      const auto inner = trim(p.substr(1, p.size() - 2));
      IndexArray idx;
      BoolArray mask;
      bool bools = false;
      std::size_t s0 = 0;
      while (!inner.empty() && s0 <= inner.size()) {
        const std::size_t c = inner.find(',', s0);
        const auto item = trim(inner.substr(s0, c == std::string_view::npos ? std::string_view::npos : c - s0));
        if (item == "True" || item == "False" || item == "true" || item == "false") {
          if (!idx.empty()) parse_fail(text, p, "cannot mix integers and booleans");
          bools = true;
          mask.push_back(item == "True" || item == "true");
        } else {
          if (bools) parse_fail(text, p, "cannot mix integers and booleans");
          idx.push_back(parse_int(text, item));
        }
        if (c == std::string_view::npos) break;
        s0 = c + 1;
      }
      if (bools)
        sel.push_back(std::move(mask));
      else
        sel.push_back(std::move(idx));
    } else if (p.find(':') != std::string_view::npos) {
      std::vector<std::string_view> f;
      std::size_t s0 = 0;
      for (;;) {
        const std::size_t c = p.find(':', s0);
        f.push_back(trim(p.substr(s0, c == std::string_view::npos ? std::string_view::npos : c - s0)));
        if (c == std::string_view::npos) break;
        s0 = c + 1;
      }
      if (f.size() > 3) parse_fail(text, p, "a slice has at most start:stop:step");
      Slice s;
      if (!f[0].empty()) s.start = parse_int(text, f[0]);
      if (f.size() > 1 && !f[1].empty()) s.stop = parse_int(text, f[1]);
      if (f.size() > 2 && !f[2].empty()) s.step = parse_int(text, f[2]);
      sel.push_back(s);
    } else {
      sel.push_back(parse_int(text, p));
    }
  }
  return sel;
}

}  // namespace zarrpp
