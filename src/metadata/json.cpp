// Reading and writing JSON documents (zarr.json, attributes) safely: nesting is capped before
// anything recursive runs, objects with many keys parse in linear time, and pretty-printing never
// multiplies a document's size.
#include <unordered_map>
#include <vector>

#include "zarrpp/core/error.hpp"
#include "zarrpp/metadata/metadata.hpp"

namespace zarrpp {
namespace {

// Builds an ordered_json with a SAX parser. nlohmann's own DOM builder checks every new key of an
// ordered object against all earlier ones (quadratic: 200k attributes took 48 s); here each open
// object keeps a hash index of its keys, and a repeated key replaces the earlier value (the last
// wins, as in Python's json).
class Builder final : public nlohmann::json_sax<Json> {
 public:
  explicit Builder(std::string where) : where_(std::move(where)) {}
  Json result;

  bool null() override { return put(Json(nullptr)); }
  bool boolean(bool v) override { return put(Json(v)); }
  bool number_integer(number_integer_t v) override { return put(Json(v)); }
  bool number_unsigned(number_unsigned_t v) override { return put(Json(v)); }
  bool number_float(number_float_t v, const string_t&) override { return put(Json(v)); }
  bool string(string_t& v) override { return put(Json(std::move(v))); }
  bool binary(binary_t& v) override { return put(Json::binary(std::move(v))); }
  bool start_object(std::size_t) override { return open(Json::object()); }
  bool start_array(std::size_t) override { return open(Json::array()); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& k) override {
    key_ = std::move(k);
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    throw MetadataError(where_ + ": malformed JSON: " + e.what());
  }

 private:
  struct Open {
    Json* value;
    std::unordered_map<std::string, std::size_t> index;  // objects: key -> position
  };

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
  bool put(Json&& v) {
    place(std::move(v));
    return true;
  }
  bool open(Json&& v) {
    if (stack_.size() >= kMaxJsonDepth)
      throw MetadataError(where_ + ": JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    // Values are only ever appended to the innermost open container, so pointers to the open
    // ones stay valid while they are open.
    stack_.push_back(Open{place(std::move(v)), {}});
    return true;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }

  std::string where_;
  std::vector<Open> stack_;
  std::string key_;
};

void dump_to(const Json& j, std::string& out, int depth) {
  // Indented as zarr-python writes it for the first levels; deeper values on one line, so the
  // indentation of deep structures cannot grow a document quadratically.
  constexpr int kIndentDepth = 8;
  if (depth >= kIndentDepth || (!j.is_object() && !j.is_array()) || j.empty()) {
    out += j.dump();
    return;
  }
  const std::string pad(static_cast<std::size_t>(depth + 1) * 2, ' ');
  out += j.is_object() ? '{' : '[';
  bool first = true;
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      out += first ? "\n" : ",\n";
      first = false;
      out += pad;
      out += Json(it.key()).dump();
      out += ": ";
      dump_to(it.value(), out, depth + 1);
    }
  } else {
    for (const auto& v : j) {
      out += first ? "\n" : ",\n";
      first = false;
      out += pad;
      dump_to(v, out, depth + 1);
    }
  }
  out += '\n';
  out.append(static_cast<std::size_t>(depth) * 2, ' ');
  out += j.is_object() ? '}' : ']';
}

}  // namespace

Json parse_json_document(std::string_view text, const std::string& where) {
  Builder b(where);
  try {
    Json::sax_parse(text.begin(), text.end(), &b);
  } catch (const nlohmann::json::exception& e) {  // numbers out of range and the like
    throw MetadataError(where + ": malformed JSON: " + e.what());
  }
  return std::move(b.result);
}

std::string dump_json(const Json& j) {
  std::string out;
  dump_to(j, out, 0);
  return out;
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
