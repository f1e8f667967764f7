// Reading and writing JSON documents (zarr.json, .zarray/.zattrs, attributes) safely: nesting is
// capped before anything recursive runs, objects with many keys parse in linear time, and
// pretty-printing never multiplies a document's size.
//
// The reader accepts what Python's json module reads and zarr-python stores, which is more than
// strict JSON: the bare tokens NaN, Infinity and -Infinity (held as the double NaN / +-infinity),
// numbers beyond double's range (+-infinity, as Python reads them), and escaped lone UTF-16
// surrogates ("\udcff", which Python writes for undecodable file names), held in the string as
// WTF-8 (the surrogate's code point in UTF-8's three-byte form, as Python's "surrogatepass" encodes
// it). The writers give both back as Python's json.dumps writes them.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <unordered_map>
#include <vector>

#include "zarrpp/core/error.hpp"
#include "zarrpp/metadata/metadata.hpp"

namespace zarrpp {
namespace {

// Builds an ordered_json. nlohmann's own DOM builder checks every new key of an ordered object
// against all earlier ones (quadratic: 200k attributes took 48 s); here each open object keeps a
// hash index of its keys, and a repeated key replaces the earlier value (the last wins, as in
// Python's json).
class Builder {
 public:
  explicit Builder(const std::string& where) : where_(where) {}
  Json result;

  void put(Json&& v) { place(std::move(v)); }
  void key(std::string&& k) { key_ = std::move(k); }
  void open(Json&& v) {
    if (stack_.size() >= kMaxJsonDepth)
      throw MetadataError(where_ + ": JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    // Values are only ever appended to the innermost open container, so pointers to the open
    // ones stay valid while they are open.
    std::string label = here();
    stack_.push_back(Open{place(std::move(v)), {}, std::move(label)});
  }
  void close() { stack_.pop_back(); }
  // Where the next value goes, as a path: "chunk_grid.configuration.origin[0]".
  std::string path() const {
    std::string out;
    for (const auto& o : stack_) out += o.label;
    return out + here();
  }

 private:
  struct Open {
    Json* value;
    std::unordered_map<std::string, std::size_t> index;  // objects: key -> position
    std::string label;                                   // where it is in its parent: ".key" or "[i]"
  };
  std::string here() const {
    if (stack_.empty()) return "";
    const Json& top = *stack_.back().value;
    if (top.is_array()) return "[" + std::to_string(top.size()) + "]";
    return (stack_.size() > 1 ? "." : "") + key_;
  }

  // Adds a value where the parser is: the document itself, the next array element, or the
  // current key of an object. Returns where it now lives.
  Json* place(Json&& v) {
    if (stack_.empty()) {
      result = std::move(v);
      return &result;
    }
    Open& top = stack_.back();
    if (top.value->is_array()) {
      auto& arr = top.value->get_ref<Json::array_t&>();
      arr.push_back(std::move(v));
      return &arr.back();
    }
    auto& obj = top.value->get_ref<Json::object_t&>();  // a vector of (key, value) pairs
    const auto [it, fresh] = top.index.try_emplace(key_, obj.size());
    if (!fresh) {
      auto slot = obj.begin() + static_cast<std::ptrdiff_t>(it->second);
      slot->second = std::move(v);
      return &slot->second;
    }
    obj.emplace_back(std::move(key_), std::move(v));
    return &obj.back().second;
  }

  const std::string& where_;
  std::vector<Open> stack_;
  std::string key_;
};

}  // namespace

void append_utf8(std::string& out, std::uint32_t cp) {  // surrogates too (WTF-8)
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::size_t decode_utf8(std::string_view s, std::size_t i, std::uint32_t& cp, bool surrogates) {
  const auto b = [&](std::size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  const unsigned c = b(0);
  const auto cont = [&](std::size_t k) { return (b(k) & 0xC0) == 0x80; };
  if (c >= 0xC2 && c <= 0xDF) {
    if (!cont(1)) return 0;
    cp = ((c & 0x1F) << 6) | (b(1) & 0x3F);
    return 2;
  }
  if (c >= 0xE0 && c <= 0xEF) {
    const unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = (c == 0xED && !surrogates) ? 0x9F : 0xBF;
    if (b(1) < lo || b(1) > hi || !cont(2)) return 0;
    cp = ((c & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    if (b(1) < lo || b(1) > hi || !cont(2) || !cont(3)) return 0;
    cp = ((c & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
    return 4;
  }
  return 0;
}

namespace {

// A JSON reader (RFC 8259 plus Python's extensions above), iterative so that nesting costs no stack.
class Reader {
 public:
  Reader(std::string_view text, Builder& b, const std::string& where) : s_(text), b_(b), where_(where) {}

  void run() {
    std::vector<char> open;  // '{' or '[' per open container
    for (;;) {
      // A value.
      ws();
      const char c = peek();
      if (c == '{' || c == '[') {
        ++i_;
        b_.open(c == '{' ? Json::object() : Json::array());
        ws();
        if (peek() == (c == '{' ? '}' : ']')) {
          ++i_;
          b_.close();
        } else {
          open.push_back(c);
          if (c == '{') member_key();
          continue;
        }
      } else {
        scalar();
      }
      // After a value: the next element or member, or the end of containers.
      for (;;) {
        ws();
        if (open.empty()) {
          if (i_ != s_.size()) fail("unexpected content after the document");
          return;
        }
        const char close = open.back() == '{' ? '}' : ']';
        if (peek() == ',') {
          ++i_;
          if (open.back() == '{') member_key();
          break;
        }
        if (peek() != close) fail(std::string("expected ',' or '") + close + "'");
        ++i_;
        b_.close();
        open.pop_back();
      }
    }
  }

 private:
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  bool literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }

  [[noreturn]] void fail(const std::string& what, const char* kind = "malformed JSON") const {
    std::size_t line = 1, col = 1;
    for (std::size_t k = 0; k < i_ && k < s_.size(); ++k) {
      if (s_[k] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    std::string msg =
        where_ + ": " + kind + ": " + what + " at line " + std::to_string(line) + ", column " + std::to_string(col);
    if (i_ >= s_.size()) msg += " (end of input)";
    throw MetadataError(msg);
  }

  void member_key() {
    ws();
    if (peek() != '"') fail("expected a string as object key");
    b_.key(string());
    ws();
    if (peek() != ':') fail("expected ':' after an object key");
    ++i_;
  }

  void scalar() {
    const char c = peek();
    if (c == '"') return b_.put(Json(string()));
    if (literal("true")) return b_.put(Json(true));
    if (literal("false")) return b_.put(Json(false));
    if (literal("null")) return b_.put(Json(nullptr));
    if (literal("NaN")) return b_.put(Json(std::numeric_limits<double>::quiet_NaN()));
    if (literal("Infinity")) return b_.put(Json(std::numeric_limits<double>::infinity()));
    if (literal("-Infinity")) return b_.put(Json(-std::numeric_limits<double>::infinity()));
    if (c == '-' || (c >= '0' && c <= '9')) return b_.put(number());
    fail(i_ >= s_.size() ? "expected a value" : "unexpected character");
  }

  Json number() {
    const std::size_t start = i_;
    const auto digits = [&] {
      const std::size_t from = i_;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
      return i_ - from;
    };
    const bool neg = peek() == '-';
    if (neg) ++i_;
    if (peek() == '0') {
      ++i_;
    } else if (digits() == 0) {
      fail("invalid number");
    }
    bool is_float = false;
    if (peek() == '.') {
      ++i_;
      if (digits() == 0) fail("invalid number: expected a digit after '.'");
      is_float = true;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++i_;
      if (peek() == '+' || peek() == '-') ++i_;
      if (digits() == 0) fail("invalid number: expected a digit in the exponent");
      is_float = true;
    }
    const char* first = s_.data() + start;
    const char* last = s_.data() + i_;
    if (!is_float) {  // as nlohmann: non-negative integers unsigned, negative ones signed
      if (neg) {
        std::int64_t v = 0;
        if (std::from_chars(first, last, v).ec == std::errc()) return Json(v);
      } else {
        std::uint64_t v = 0;
        if (std::from_chars(first, last, v).ec == std::errc()) return Json(v);
      }
      // Python writes integers of any size; as a float it would read back as another value or type.
      fail("the integer " + std::string(first, std::min<std::size_t>(static_cast<std::size_t>(last - first), 60)) +
               (b_.path().empty() ? std::string() : " (at " + b_.path() + ")") +
               " does not fit 64 bits, which zarrpp holds integers in exactly (store it as a string or a float)",
           "unsupported JSON");
    }
    double d = 0;
    const auto r = std::from_chars(first, last, d);
    if (r.ec == std::errc::result_out_of_range)
      d = out_of_range(std::string_view(first, static_cast<std::size_t>(last - first)));
    else if (r.ec != std::errc() || r.ptr != last)
      fail("invalid number");
    return Json(d);
  }

  // A number beyond double's range: +-infinity when it is too large, +-0 when too small (as Python).
  static double out_of_range(std::string_view t) {
    const bool neg = !t.empty() && t[0] == '-';
    const std::size_t e = t.find_first_of("eE");
    const std::string_view mant = t.substr(neg ? 1 : 0, (e == std::string_view::npos ? t.size() : e) - (neg ? 1 : 0));
    long long exp = 0;
    if (e != std::string_view::npos) {
      std::size_t k = e + 1;
      const bool eneg = k < t.size() && t[k] == '-';
      if (k < t.size() && (t[k] == '-' || t[k] == '+')) ++k;
      for (; k < t.size(); ++k) exp = std::min<long long>(exp * 10 + (t[k] - '0'), 1'000'000'000'000LL);
      if (eneg) exp = -exp;
    }
    // The decimal magnitude of the first non-zero digit.
    const std::size_t dot = mant.find('.');
    const std::size_t int_len = dot == std::string_view::npos ? mant.size() : dot;
    long long mag = 0;
    for (std::size_t k = 0; k < mant.size(); ++k) {
      if (mant[k] == '.' || mant[k] == '0') continue;
      mag = k < int_len ? static_cast<long long>(int_len - k - 1) : -static_cast<long long>(k - int_len);
      break;
    }
    const double v = exp + mag > 0 ? std::numeric_limits<double>::infinity() : 0.0;
    return neg ? -v : v;
  }

  std::uint32_t hex4() {
    if (i_ + 4 > s_.size()) fail("invalid \\u escape");
    std::uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      const char h = s_[i_++];
      v <<= 4;
      if (h >= '0' && h <= '9')
        v |= static_cast<std::uint32_t>(h - '0');
      else if (h >= 'a' && h <= 'f')
        v |= static_cast<std::uint32_t>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F')
        v |= static_cast<std::uint32_t>(h - 'A' + 10);
      else
        fail("invalid \\u escape");
    }
    return v;
  }

  std::string string() {
    ++i_;  // the opening quote
    std::string out;
    for (;;) {
      const std::size_t run = i_;
      while (i_ < s_.size()) {
        const auto c = static_cast<unsigned char>(s_[i_]);
        if (c < 0x20 || c == '"' || c == '\\' || c >= 0x80) break;
        ++i_;
      }
      out.append(s_.substr(run, i_ - run));
      if (i_ >= s_.size()) fail("unterminated string");
      const auto c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        ++i_;
        return out;
      }
      if (c < 0x20) fail("control character in a string (it must be escaped)");
      if (c >= 0x80) {
        std::uint32_t cp = 0;
        const std::size_t n = decode_utf8(s_, i_, cp, false);
        if (n == 0) fail("invalid UTF-8 in a string");
        out.append(s_.substr(i_, n));
        i_ += n;
        continue;
      }
      ++i_;  // the backslash
      const char e = peek();
      ++i_;
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          std::uint32_t cp = hex4();
          // A high surrogate followed by an escaped low one is one code point; any other surrogate
          // is kept as it is (as Python's json does), in WTF-8.
          if (cp >= 0xD800 && cp <= 0xDBFF && s_.substr(i_, 2) == "\\u") {
            const std::size_t back = i_;
            i_ += 2;
            const std::uint32_t lo = hex4();
            if (lo >= 0xDC00 && lo <= 0xDFFF)
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            else
              i_ = back;
          }
          append_utf8(out, cp);
          break;
        }
        default:
          --i_;
          fail("invalid escape in a string");
      }
    }
  }

  std::string_view s_;
  std::size_t i_ = 0;
  Builder& b_;
  const std::string& where_;
};

// ---- writing ----

struct Style {
  int indent = -1;             // spaces per level; -1: one line, no spaces (as nlohmann's dump())
  int indent_depth = 1 << 30;  // values nested this deep are written on one line
  bool ascii = false;          // non-ASCII escaped as \uXXXX (Python's ensure_ascii)
  bool sort_keys = false;      // object keys in byte (= code point) order
  bool lenient = false;        // invalid UTF-8 written as U+FFFD instead of refused
};

void write_hex_escape(std::string& out, std::uint32_t u) {  // u < 0x10000; lowercase, as Python
  static const char* hex = "0123456789abcdef";
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += hex[(u >> shift) & 0xF];
}

void write_string(std::string& out, std::string_view s, const Style& st) {
  out += '"';
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        default:
          if (c < 0x20 || (c == 0x7F && st.ascii))
            write_hex_escape(out, c);
          else
            out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    std::uint32_t cp = 0;
    const std::size_t n = decode_utf8(s, i, cp, true);
    if (n == 0) {
      if (!st.lenient) throw MetadataError("JSON: a string holds bytes that are not UTF-8; it cannot be written");
      out += st.ascii ? "\\ufffd" : "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    const bool surrogate = cp >= 0xD800 && cp <= 0xDFFF;
    if (!surrogate && !st.ascii) {
      out.append(s.substr(i, n));
    } else if (!surrogate && cp >= 0x10000) {
      write_hex_escape(out, 0xD800 + ((cp - 0x10000) >> 10));
      write_hex_escape(out, 0xDC00 + ((cp - 0x10000) & 0x3FF));
    } else {
      write_hex_escape(out, cp);  // an ASCII-only escape, or a lone surrogate (as Python writes it)
    }
    i += n;
  }
  out += '"';
}

void write_value(const Json& j, std::string& out, const Style& st, int depth) {
  switch (j.type()) {
    case Json::value_t::string:
      write_string(out, j.get_ref<const std::string&>(), st);
      return;
    case Json::value_t::number_float: {
      const double d = j.get<double>();
      if (std::isnan(d))
        out += "NaN";
      else if (std::isinf(d))
        out += d > 0 ? "Infinity" : "-Infinity";
      else
        out += j.dump();
      return;
    }
    case Json::value_t::object:
    case Json::value_t::array:
      break;
    default:
      out += j.dump();
      return;  // null, booleans, integers (binary never occurs in documents)
  }
  const bool obj = j.is_object();
  if (j.empty()) {
    out += obj ? "{}" : "[]";
    return;
  }
  const bool pretty = st.indent >= 0 && depth < st.indent_depth;
  const std::string pad =
      pretty ? std::string(static_cast<std::size_t>(depth + 1) * static_cast<std::size_t>(st.indent), ' ') : "";
  out += obj ? '{' : '[';
  bool first = true;
  const auto sep = [&] {
    if (pretty) {
      out += first ? "\n" : ",\n";
      out += pad;
    } else if (!first) {
      out += ',';
    }
    first = false;
  };
  if (obj) {
    const auto member = [&](const std::string& k, const Json& v) {
      sep();
      write_string(out, k, st);
      out += pretty ? ": " : ":";
      write_value(v, out, st, depth + 1);
    };
    if (st.sort_keys) {
      std::vector<const Json::object_t::value_type*> items;
      items.reserve(j.size());
      for (const auto& kv : j.get_ref<const Json::object_t&>()) items.push_back(&kv);
      std::sort(items.begin(), items.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
      for (const auto* kv : items) member(kv->first, kv->second);
    } else {
      for (const auto& kv : j.get_ref<const Json::object_t&>()) member(kv.first, kv.second);
    }
  } else {
    for (const auto& v : j) {
      sep();
      write_value(v, out, st, depth + 1);
    }
  }
  if (pretty) {
    out += '\n';
    out.append(static_cast<std::size_t>(depth) * static_cast<std::size_t>(st.indent), ' ');
  }
  out += obj ? '}' : ']';
}

std::string write(const Json& j, const Style& st) {
  std::string out;
  write_value(j, out, st, 0);
  return out;
}

}  // namespace

Json parse_json_document(std::string_view text, const std::string& where) {
  check_memory_for_document(text, where);
  Builder b(where);
  Reader(text, b, where).run();
  return std::move(b.result);
}

std::string dump_json(const Json& j) {
  // Indented as zarr-python writes it for the first levels; deeper values on one line, so the
  // indentation of deep structures cannot grow a document quadratically.
  Style st;
  st.indent = 2;
  st.indent_depth = 8;
  return write(j, st);
}

std::string dump_v2_json(const Json& j) {
  Style st;
  st.indent = 4;
  st.ascii = true;
  st.sort_keys = true;
  return write(j, st);
}

std::string dump_v2_attributes(const Json& attributes) { return dump_v2_json(attributes); }

std::string json_text(const Json& j) {
  Style st;
  st.lenient = true;
  return write(j, st);
}

void check_json_depth(const Json& j, const std::string& where) {
  // Iterative: a deeper value must not overflow the stack while it is being measured.
  std::vector<std::pair<const Json*, std::size_t>> todo = {{&j, 1}};
  while (!todo.empty()) {
    const auto [v, depth] = todo.back();
    todo.pop_back();
    if (!v->is_structured()) continue;
    if (depth > kMaxJsonDepth)
      throw MetadataError(where + ": JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    for (const auto& child : *v) todo.emplace_back(&child, depth + 1);
  }
}

}  // namespace zarrpp
