#include "zarrpp/metadata/metadata.hpp"

#include <algorithm>
#include <set>

#include "../core/dtype_table.hpp"
#include "zarrpp/core/checked.hpp"
#include "zarrpp/core/error.hpp"

namespace zarrpp {
namespace {

[[noreturn]] void fail(const std::string& field, const Json& value, const std::string& why) {
  std::string v = json_text(value);
  if (v.size() > 200) v = v.substr(0, 200) + "...";
  throw MetadataError(field + ": " + why + " (got " + v + ")");
}

// A JSON integer (not a float, not a boolean) within int64.
std::int64_t get_int64(const Json& j, const std::string& field) {
  if (!j.is_number_integer()) fail(field, j, "expected an integer");
  if (j.is_number_unsigned() && j.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
    fail(field, j, "integer out of int64 range");
  return j.get<std::int64_t>();
}

std::vector<std::int64_t> get_int_array(const Json& j, const std::string& field, std::optional<std::size_t> len) {
  if (!j.is_array()) fail(field, j, "expected an array of integers");
  if (len && j.size() != *len) fail(field, j, "expected " + std::to_string(*len) + " entries, one per dimension");
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < j.size(); ++i) out.push_back(get_int64(j[i], field + "[" + std::to_string(i) + "]"));
  return out;
}

// {"name": ..., "configuration": {...}} or a bare name. Returns name and configuration.
struct NamedConfig {
  std::string name;
  std::optional<Json> configuration;
  std::optional<bool> must_understand;
};

NamedConfig get_named(const Json& j, const std::string& field) {
  NamedConfig nc;
  if (j.is_string()) {
    nc.name = j.get<std::string>();
    return nc;
  }
  if (!j.is_object()) fail(field, j, "expected an object with \"name\" or a name string");
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "name") {
      if (!it.value().is_string()) fail(field + ".name", it.value(), "expected a string");
      nc.name = it.value().get<std::string>();
    } else if (it.key() == "configuration") {
      if (!it.value().is_object()) fail(field + ".configuration", it.value(), "expected an object");
      nc.configuration = it.value();
    } else if (it.key() == "must_understand") {
      if (!it.value().is_boolean()) fail(field + ".must_understand", it.value(), "expected a boolean");
      nc.must_understand = it.value().get<bool>();
    } else {
      fail(field, j, "unexpected key \"" + it.key() + "\"");
    }
  }
  if (!j.contains("name")) fail(field, j, "missing \"name\"");
  return nc;
}

void no_must_understand_false(const NamedConfig& nc, const std::string& field, const Json& j) {
  if (nc.must_understand && !*nc.must_understand) fail(field, j, "\"must_understand\": false is not allowed here");
}

void check_config_keys(const Json& cfg, const std::string& field, std::initializer_list<const char*> allowed) {
  for (auto it = cfg.begin(); it != cfg.end(); ++it) {
    bool ok = false;
    for (auto a : allowed) ok = ok || it.key() == a;
    if (!ok) fail(field, cfg, "unexpected configuration key \"" + it.key() + "\"");
  }
}

// A configuration's one positive integer field, else fail.
std::uint64_t config_uint(const Json& cfg, const char* key, const std::string& field) {
  if (!cfg.contains(key) || !cfg[key].is_number_integer() || cfg[key].get<std::int64_t>() < 1)
    fail(field + "." + key, cfg.contains(key) ? cfg[key] : Json(nullptr), "expected a positive integer");
  return cfg[key].get<std::uint64_t>();
}

// The extension data types zarr-python 3 writes for NumPy's U, S, V, datetime64 and timedelta64:
// the table's rows stated by length_bytes or by a time unit.
DataType configured_data_type(const dtype_table::Row& row, const NamedConfig& nc, const Json& j) {
  using Id = DataType::Id;
  const std::string field = "data_type.configuration";
  if (!nc.configuration) fail("data_type", j, "\"" + nc.name + "\" needs a configuration");
  const Json& cfg = *nc.configuration;
  try {
    if (row.config == dtype_table::Config::length_bytes) {
      check_config_keys(cfg, field, {"length_bytes"});
      const auto n = config_uint(cfg, "length_bytes", field);
      if (n % row.width_unit != 0)
        fail(field + ".length_bytes", cfg["length_bytes"],
             "\"" + nc.name + "\" needs a multiple of " + std::to_string(row.width_unit));
      const auto w = n / row.width_unit;
      return row.id == Id::fixed_utf32   ? DataType::fixed_utf32(w)
             : row.id == Id::fixed_bytes ? DataType::fixed_bytes(w)
                                         : DataType::raw_bytes(w);
    }
    check_config_keys(cfg, field, {"unit", "scale_factor"});
    if (!cfg.contains("unit") || !cfg["unit"].is_string()) fail(field + ".unit", cfg, "expected a unit string");
    const auto scale = config_uint(cfg, "scale_factor", field);
    if (scale > 2147483647u) fail(field + ".scale_factor", cfg["scale_factor"], "at most 2147483647");
    const auto unit = cfg["unit"].get<std::string>();
    const auto s32 = static_cast<std::uint32_t>(scale);
    return row.id == Id::datetime64 ? DataType::datetime64(unit, s32) : DataType::timedelta64(unit, s32);
  } catch (const MetadataError& e) {
    if (std::string_view(e.what()).starts_with("zarr.json")) throw;
    throw MetadataError(std::string("zarr.json: ") + e.what());
  }
}

// A struct field: {"name": ..., "data_type": ...} (the "struct" extension), or the older
// [name, data_type] pair ("structured", which zarr-python 3 also reads).
StructField struct_field(const Json& f, const std::string& field) {
  const bool pair = f.is_array() && f.size() == 2;
  if (!pair && !(f.is_object() && f.contains("name") && f.contains("data_type")))
    fail(field, f, "expected {\"name\": ..., \"data_type\": ...}");
  if (!pair)
    for (auto it = f.begin(); it != f.end(); ++it)
      if (it.key() != "name" && it.key() != "data_type") fail(field, f, "unexpected key \"" + it.key() + "\"");
  const Json& name = pair ? f[0] : f["name"];
  if (!name.is_string()) fail(field + ".name", name, "expected a string");
  return {name.get<std::string>(), data_type_from_json(pair ? f[1] : f["data_type"]), {}, 0};
}

// The "struct" extension data type (and its older name "structured"): named fields, packed.
DataType struct_data_type(const NamedConfig& nc, const Json& j) {
  const std::string field = "data_type.configuration";
  if (!nc.configuration) fail("data_type", j, "\"" + nc.name + "\" needs a configuration");
  const Json& cfg = *nc.configuration;
  check_config_keys(cfg, field, {"fields"});
  if (!cfg.contains("fields") || !cfg["fields"].is_array() || cfg["fields"].empty())
    fail(field + ".fields", cfg, "expected a list of at least one field");
  std::vector<StructField> fields;
  for (std::size_t i = 0; i < cfg["fields"].size(); ++i)
    fields.push_back(struct_field(cfg["fields"][i], field + ".fields[" + std::to_string(i) + "]"));
  try {
    return DataType::structured(std::move(fields));
  } catch (const MetadataError& e) {
    throw MetadataError(std::string("zarr.json: ") + e.what());
  }
}

}  // namespace

DataType data_type_from_json(const Json& j) {
  using dtype_table::Config;
  auto nc = get_named(j, "data_type");
  no_must_understand_false(nc, "data_type", j);
  const auto* row = dtype_table::by_zarr_name(nc.name);
  if (row && row->config == Config::fields) return struct_data_type(nc, j);
  if (row && row->config != Config::none) return configured_data_type(*row, nc, j);
  if (nc.configuration && !nc.configuration->empty())
    fail("data_type.configuration", *nc.configuration, "core data types take no configuration");
  if (row) return DataType(row->id);
  const DataType t = DataType::parse(nc.name);                  // r<bits>, the one name holding its size
  if (dtype_table::row(t.id()).config != Config::bits_in_name)  // NumPy's spelling ("U12") is not a Zarr name
    throw MetadataError("zarr.json: data_type: unknown or unsupported data type '" + nc.name + "'");
  return t;
}

Json data_type_to_json(const DataType& t) {
  using dtype_table::Config;
  const auto& row = dtype_table::row(t.id());
  const std::string name(row.zarr_name);
  switch (row.config) {
    case Config::length_bytes:
      return {{"name", name}, {"configuration", {{"length_bytes", t.size()}}}};
    case Config::time_unit:
      return {{"name", name},
              {"configuration", {{"unit", std::string(t.time_unit())}, {"scale_factor", t.time_scale()}}}};
    case Config::fields: {
      Json fields = Json::array();
      for (const auto& f : t.fields()) {
        if (!f.shape.empty())
          throw UnsupportedError("data type " + t.name() + ": field '" + f.name +
                                 "' holds an array of each element, which Zarr v3's struct data type cannot state "
                                 "(keep the array as Zarr v2, or give the field's values fields of their own)");
        fields.push_back({{"name", f.name}, {"data_type", data_type_to_json(f.type)}});
      }
      return {{"name", name}, {"configuration", {{"fields", fields}}}};
    }
    case Config::none:
    case Config::bits_in_name:
      break;
  }
  return t.name();
}

// ---- chunk keys -----------------------------------------------------------------------------

std::optional<std::int64_t> parse_chunk_index(std::string_view s) {
  if (s.empty()) return std::nullopt;
  bool neg = false;
  std::size_t i = 0;
  if (s[0] == '-') {
    neg = true;
    i = 1;
  }
  if (i >= s.size()) return std::nullopt;
  if (s[i] == '0') {
    // Only a lone "0" may start with zero: rejects "-0", "01", "-01".
    if (neg || s.size() != i + 1) return std::nullopt;
    return 0;
  }
  std::int64_t v = 0;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c < '0' || c > '9') return std::nullopt;
    const int d = c - '0';
    // Accumulate negatively so INT64_MIN is reachable.
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_sub_overflow(v, d, &v)) return std::nullopt;
  }
  if (!neg) {
    if (v == INT64_MIN) return std::nullopt;
    v = -v;
  }
  return v;
}

std::string ChunkKeyEncoding::encode(std::span<const std::int64_t> idx) const {
  std::string key;
  if (kind == Kind::Default) {
    key = "c";
    for (auto i : idx) {
      key += separator;
      key += std::to_string(i);
    }
    return key;
  }
  if (idx.empty()) return "0";
  for (std::size_t d = 0; d < idx.size(); ++d) {
    if (d) key += separator;
    key += std::to_string(idx[d]);
  }
  return key;
}

std::string ChunkKeyEncoding::prefix() const {
  return kind == Kind::Default ? std::string("c") + separator : std::string();
}

std::optional<std::vector<std::int64_t>> ChunkKeyEncoding::decode(std::string_view key, std::size_t rank) const {
  std::vector<std::int64_t> out;
  if (kind == Kind::Default) {
    if (rank == 0) return key == "c" ? std::optional(out) : std::nullopt;
    if (key.size() < 2 || key[0] != 'c' || key[1] != separator) return std::nullopt;
    key.remove_prefix(2);
  } else if (rank == 0) {
    return key == "0" ? std::optional(out) : std::nullopt;
  }
  std::size_t start = 0;
  for (;;) {
    const std::size_t pos = key.find(separator, start);
    const auto part = key.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start);
    auto v = parse_chunk_index(part);
    if (!v) return std::nullopt;
    out.push_back(*v);
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  if (out.size() != rank) return std::nullopt;
  return out;
}

std::vector<std::int64_t> ChunkKeyEncoding::decode_or_throw(std::string_view key, std::size_t rank) const {
  auto r = decode(key, rank);
  if (!r)
    throw MetadataError("chunk key '" + std::string(key) + "' is not a valid " +
                        (kind == Kind::Default ? "default" : "v2") + " chunk key for a " + std::to_string(rank) +
                        "-d array (indices must match ^(0|-?[1-9][0-9]*)$ and fit int64)");
  return *r;
}

ChunkKeyEncoding ChunkKeyEncoding::from_json(const Json& j) {
  const std::string field = "chunk_key_encoding";
  auto nc = get_named(j, field);
  no_must_understand_false(nc, field, j);
  ChunkKeyEncoding e;
  if (nc.name == "default") {
    e = default_('/');
  } else if (nc.name == "v2") {
    e = v2('.');
  } else {
    fail(field + ".name", j, "unknown chunk key encoding \"" + nc.name + "\"");
  }
  if (nc.configuration) {
    check_config_keys(*nc.configuration, field + ".configuration", {"separator"});
    if (nc.configuration->contains("separator")) {
      const auto& s = (*nc.configuration)["separator"];
      if (!s.is_string() || (s != "/" && s != "."))
        fail(field + ".configuration.separator", s, "expected \"/\" or \".\"");
      e.separator = s.get<std::string>()[0];
    }
  }
  return e;
}

Json ChunkKeyEncoding::to_json() const {
  Json j = Json::object();
  j["name"] = kind == Kind::Default ? "default" : "v2";
  j["configuration"] = Json::object({{"separator", std::string(1, separator)}});
  return j;
}

// ---- chunk grid -----------------------------------------------------------------------------

ChunkGridMetadata ChunkGridMetadata::regular(std::vector<std::int64_t> cs) {
  ChunkGridMetadata g;
  g.kind = Kind::Regular;
  g.origin.assign(cs.size(), 0);
  g.lower_bound.assign(cs.size(), 0);
  g.chunk_shape = std::move(cs);
  return g;
}

ChunkGridMetadata ChunkGridMetadata::regular_bounded(std::vector<std::int64_t> cs, std::vector<std::int64_t> origin,
                                                     std::vector<std::int64_t> lower_bound) {
  ChunkGridMetadata g;
  g.kind = Kind::RegularBounded;
  g.chunk_shape = std::move(cs);
  g.origin = std::move(origin);
  g.lower_bound = std::move(lower_bound);
  return g;
}

std::string ChunkGridMetadata::name() const {
  switch (kind) {
    case Kind::Regular:
      return "regular";
    case Kind::RegularBounded:
      return "regular_bounded";
    case Kind::Rectilinear:
      return "rectilinear";
    case Kind::RectilinearBounded:
      return "rectilinear_bounded";
  }
  return "regular";
}

ChunkRuns merge_runs(const ChunkRuns& runs) {
  ChunkRuns out;
  for (const auto& r : runs) {
    if (!out.empty() && out.back().size == r.size)
      out.back().count = checked::add(out.back().count, r.count, "rectilinear chunk count");
    else
      out.push_back(r);
  }
  return out;
}

ChunkGridMetadata ChunkGridMetadata::rectilinear_sizes(const std::vector<std::vector<std::int64_t>>& sizes,
                                                       const std::vector<bool>& bare) {
  ChunkGridMetadata g;
  g.kind = Kind::Rectilinear;
  const std::size_t r = sizes.size();
  g.origin.assign(r, 0);
  g.lower_bound.assign(r, 0);
  g.chunk_runs.resize(r);
  for (std::size_t d = 0; d < r; ++d) {
    const std::string where = "rectilinear chunk sizes of dimension " + std::to_string(d);
    if (sizes[d].empty()) throw MetadataError(where + ": no chunk sizes given");
    for (const auto n : sizes[d])
      if (n < 1) throw MetadataError(where + ": sizes must be >= 1, got " + std::to_string(n));
    g.chunk_shape.push_back(sizes[d][0]);
    if (d < bare.size() && bare[d]) {
      if (sizes[d].size() != 1) throw MetadataError(where + ": a bare integer dimension has one size");
      continue;
    }
    ChunkRuns runs;
    for (const auto n : sizes[d]) runs.push_back({n, 1});
    g.chunk_runs[d] = merge_runs(runs);
    (void)g.covered(d);  // the sum must fit int64
  }
  return g;
}

std::int64_t ChunkGridMetadata::covered(std::size_t d) const {
  std::int64_t sum = 0;
  for (const auto& run : chunk_runs.at(d))
    sum = checked::add(sum, checked::mul(run.size, run.count, "rectilinear chunk sizes"), "rectilinear chunk sizes");
  return sum;
}

std::int64_t ChunkGridMetadata::listed(std::size_t d) const {
  std::int64_t n = 0;
  for (const auto& run : chunk_runs.at(d)) n = checked::add(n, run.count, "rectilinear chunk count");
  return n;
}

std::int64_t ChunkGridMetadata::regular_origin(std::size_t d) const {
  return checked::sub(origin[d], checked::mul(first(d), chunk_shape[d], "first_chunk * chunk size"),
                      "the coordinate of chunk 0");
}

std::string ChunkGridMetadata::cover_problem(const std::vector<std::int64_t>& shape) const {
  if (!rectilinear()) return "";
  for (std::size_t d = 0; d < shape.size(); ++d) {
    const std::string at = "chunk_grid.configuration";
    const std::string ds = "[" + std::to_string(d) + "]";
    try {
      if (chunk_runs[d].empty()) {
        (void)regular_origin(d);
        continue;
      }
      const std::int64_t end = checked::add(origin[d], covered(d), "origin + the chunk sizes");
      (void)checked::add(first(d), listed(d), "first_chunk + the number of chunks");
      if (origin[d] > lower_bound[d])
        return at + ".origin" + ds + ": the first chunk starts at " + std::to_string(origin[d]) +
               ", after the domain's start " + std::to_string(lower_bound[d]) + " (lower_bound)";
      const std::int64_t upper = checked::add(lower_bound[d], shape[d], "lower_bound + shape");
      if (end < upper)
        return at + ".chunk_shapes" + ds + ": the chunk sizes add up to " + std::to_string(covered(d)) + ", short of " +
               (rectilinear_bounded()
                    ? "the domain's end " + std::to_string(upper) + " from origin " + std::to_string(origin[d])
                    : "the array's extent " + std::to_string(shape[d]));
    } catch (const Error& e) {
      return at + ds + ": " + e.what();
    }
  }
  return "";
}

std::vector<std::vector<std::int64_t>> ChunkGridMetadata::distinct_sizes() const {
  std::vector<std::vector<std::int64_t>> out;
  for (std::size_t d = 0; d < chunk_shape.size(); ++d) {
    std::vector<std::int64_t> v{chunk_shape[d]};
    if (rectilinear())
      for (const auto& run : chunk_runs[d]) v.push_back(run.size);
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    out.push_back(std::move(v));
  }
  return out;
}

namespace {

// One dimension of "chunk_shapes": a bare integer, or sizes and [size, count] pairs.
void parse_rectilinear_dim(const Json& e, const std::string& where, ChunkGridMetadata& g, std::size_t d) {
  auto positive = [&](const Json& v, const std::string& at, const char* what) {
    const auto n = get_int64(v, at);
    if (n < 1) fail(at, v, std::string(what) + " must be >= 1");
    return n;
  };
  if (e.is_number_integer()) {
    g.chunk_shape[d] = positive(e, where, "a chunk size");
    return;
  }
  if (!e.is_array()) fail(where, e, "expected a chunk size, or an array of chunk sizes and [size, count] pairs");
  if (e.empty()) fail(where, e, "a dimension needs at least one chunk size");
  ChunkRuns runs;
  for (std::size_t i = 0; i < e.size(); ++i) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    const Json& v = e[i];
    if (v.is_array()) {
      if (v.size() != 2) fail(at, v, "a run-length pair is [size, count]");
      runs.push_back({positive(v[0], at + "[0]", "a chunk size"), positive(v[1], at + "[1]", "a run's count")});
    } else {
      runs.push_back({positive(v, at, "a chunk size"), 1});
    }
  }
  try {
    g.chunk_runs[d] = merge_runs(runs);
    (void)g.covered(d);
  } catch (const Error&) {
    fail(where, e, "the chunk sizes add up to more than int64 holds");
  }
  g.chunk_shape[d] = g.chunk_runs[d][0].size;
}

ChunkGridMetadata rectilinear_from_json(const Json& cfg, const std::string& field, std::size_t rank, bool bounded) {
  if (bounded)
    check_config_keys(cfg, field, {"kind", "chunk_shapes", "first_chunk", "origin", "lower_bound"});
  else
    check_config_keys(cfg, field, {"kind", "chunk_shapes"});
  if (!cfg.contains("kind")) fail(field, cfg, "missing \"kind\" (\"inline\" is the one the rectilinear grid defines)");
  if (cfg["kind"] != "inline")
    fail(field + ".kind", cfg["kind"], "unsupported rectilinear grid kind (\"inline\" is the one defined)");
  if (!cfg.contains("chunk_shapes")) fail(field, cfg, "missing \"chunk_shapes\"");
  const Json& cs = cfg["chunk_shapes"];
  if (!cs.is_array() || cs.size() != rank)
    fail(field + ".chunk_shapes", cs, "expected " + std::to_string(rank) + " entries, one per dimension");
  ChunkGridMetadata g;
  g.kind = ChunkGridMetadata::Kind::Rectilinear;
  g.chunk_shape.assign(rank, 1);
  g.origin.assign(rank, 0);
  g.lower_bound.assign(rank, 0);
  g.chunk_runs.resize(rank);
  for (std::size_t d = 0; d < rank; ++d)
    parse_rectilinear_dim(cs[d], field + ".chunk_shapes[" + std::to_string(d) + "]", g, d);
  if (!bounded) return g;
  g.kind = ChunkGridMetadata::Kind::RectilinearBounded;
  auto need = [&](const char* key) -> const Json& {
    if (!cfg.contains(key)) fail(field, cfg, std::string("missing \"") + key + "\"");
    return cfg[key];
  };
  g.first_chunk = get_int_array(need("first_chunk"), field + ".first_chunk", rank);
  g.origin = get_int_array(need("origin"), field + ".origin", rank);
  g.lower_bound = get_int_array(need("lower_bound"), field + ".lower_bound", rank);
  return g;
}

// A rectilinear dimension as written: runs of one chunk as bare sizes, longer runs as pairs.
Json rectilinear_dim_json(const ChunkRuns& runs) {
  Json out = Json::array();
  for (const auto& r : runs) {
    if (r.count == 1)
      out.push_back(r.size);
    else
      out.push_back(Json::array({r.size, r.count}));
  }
  return out;
}

}  // namespace

ChunkGridMetadata ChunkGridMetadata::from_json(const Json& j, std::size_t rank) {
  const std::string field = "chunk_grid";
  auto nc = get_named(j, field);
  no_must_understand_false(nc, field, j);
  ChunkGridMetadata g;
  if (nc.name == "regular") {
    g.kind = Kind::Regular;
  } else if (nc.name == "regular_bounded") {
    g.kind = Kind::RegularBounded;
    // zarrs' experimental grid of the same name family: a regular grid with clipped edge chunks,
    // configured by chunk_shape alone. Its chunks are stored at their clipped shapes, so reading
    // it as this grid would misread every edge chunk.
    if (nc.configuration && nc.configuration->is_object() && nc.configuration->contains("chunk_shape") &&
        !nc.configuration->contains("origin") && !nc.configuration->contains("lower_bound"))
      throw UnsupportedError(field +
                             ": this is zarrs' clipped-edge regular grid (chunk_shape only, edge chunks stored at "
                             "their clipped shapes), not zarrpp's regular_bounded, which needs \"origin\" and "
                             "\"lower_bound\"; zarrpp does not read the clipped form");
  } else if (nc.name == "rectilinear" || nc.name == "rectilinear_bounded") {
    if (!nc.configuration) fail(field, j, "missing \"configuration\"");
    return rectilinear_from_json(*nc.configuration, field + ".configuration", rank, nc.name != "rectilinear");
  } else if (nc.name == "zarrs.regular_bounded") {
    throw UnsupportedError(field +
                           ": \"zarrs.regular_bounded\" is zarrs' experimental clipped-edge regular grid (edge "
                           "chunks stored at their clipped shapes), which zarrpp does not read; zarrpp's own grid is "
                           "\"regular_bounded\" with \"origin\" and \"lower_bound\"");
  } else {
    fail(field + ".name", j, "unknown chunk grid \"" + nc.name + "\"");
  }
  if (!nc.configuration) fail(field, j, "missing \"configuration\"");
  const Json& cfg = *nc.configuration;
  if (g.kind == Kind::Regular) {
    check_config_keys(cfg, field + ".configuration", {"chunk_shape"});
  } else {
    check_config_keys(cfg, field + ".configuration", {"chunk_shape", "origin", "lower_bound"});
  }
  auto need = [&](const char* key) -> const Json& {
    if (!cfg.contains(key)) fail(field + ".configuration", cfg, std::string("missing \"") + key + "\"");
    return cfg[key];
  };
  g.chunk_shape = get_int_array(need("chunk_shape"), field + ".configuration.chunk_shape", rank);
  for (std::size_t d = 0; d < rank; ++d)
    if (g.chunk_shape[d] < 1)
      fail(field + ".configuration.chunk_shape[" + std::to_string(d) + "]", cfg["chunk_shape"][d], "must be >= 1");
  if (g.kind == Kind::Regular) {
    g.origin.assign(rank, 0);
    g.lower_bound.assign(rank, 0);
  } else {
    g.origin = get_int_array(need("origin"), field + ".configuration.origin", rank);
    g.lower_bound = get_int_array(need("lower_bound"), field + ".configuration.lower_bound", rank);
  }
  return g;
}

Json ChunkGridMetadata::to_json() const {
  Json cfg = Json::object();
  if (rectilinear()) {
    cfg["kind"] = "inline";
    Json dims = Json::array();
    for (std::size_t d = 0; d < chunk_shape.size(); ++d)
      dims.push_back(chunk_runs[d].empty() ? Json(chunk_shape[d]) : rectilinear_dim_json(chunk_runs[d]));
    cfg["chunk_shapes"] = std::move(dims);
    if (rectilinear_bounded()) {
      cfg["first_chunk"] = first_chunk;
      cfg["origin"] = origin;
      cfg["lower_bound"] = lower_bound;
    }
    return Json::object({{"name", name()}, {"configuration", std::move(cfg)}});
  }
  cfg["chunk_shape"] = chunk_shape;
  if (kind == Kind::RegularBounded) {
    cfg["origin"] = origin;
    cfg["lower_bound"] = lower_bound;
  }
  Json j = Json::object();
  j["name"] = name();
  j["configuration"] = std::move(cfg);
  return j;
}

// ---- codecs ---------------------------------------------------------------------------------

CodecMetadata CodecMetadata::from_json(const Json& j, const std::string& where) {
  auto nc = get_named(j, where);
  CodecMetadata c;
  c.name = nc.name;
  c.configuration = nc.configuration;
  return c;
}

Json CodecMetadata::to_json() const {
  Json j = Json::object();
  j["name"] = name;
  if (configuration) j["configuration"] = *configuration;
  return j;
}

// ---- documents ------------------------------------------------------------------------------

namespace {
void check_common(const Json& j, const char* node_type) {
  if (!j.is_object()) fail("zarr.json", j, "expected a JSON object");
  if (!j.contains("zarr_format")) fail("zarr_format", j, "missing required field");
  const auto& zf = j["zarr_format"];
  if (!zf.is_number_integer() || zf.get<std::int64_t>() != 3)
    fail("zarr_format", zf, "expected 3 (only Zarr v3 is supported)");
  if (!j.contains("node_type")) fail("node_type", j, "missing required field");
  const auto& nt = j["node_type"];
  if (!nt.is_string() || nt != node_type) fail("node_type", nt, std::string("expected \"") + node_type + "\"");
}

// An unknown top-level field is allowed only as {"must_understand": false, ...}.
void keep_extra(const std::string& key, const Json& v, Json& extra) {
  if (v.is_object() && v.contains("must_understand") && v["must_understand"].is_boolean() &&
      !v["must_understand"].get<bool>()) {
    extra[key] = v;
    return;
  }
  throw UnsupportedError("zarr.json: unknown field \"" + key +
                         "\" must be understood (it is not marked \"must_understand\": false)");
}

Json get_attributes(const Json& j) {
  if (!j.contains("attributes")) return Json::object();
  if (!j["attributes"].is_object()) fail("attributes", j["attributes"], "expected a JSON object");
  return j["attributes"];
}
}  // namespace

ArrayMetadata ArrayMetadata::from_json(const Json& j) {
  try {
    return from_json_checked(j);
  } catch (const nlohmann::json::exception& e) {
    throw MetadataError(std::string("zarr.json: ") + e.what());
  }
}

ArrayMetadata ArrayMetadata::from_json_checked(const Json& j) {
  check_common(j, "array");
  ArrayMetadata m;
  static const std::set<std::string> known = {
      "zarr_format",        "node_type",  "shape",  "data_type",  "chunk_grid",
      "chunk_key_encoding", "fill_value", "codecs", "attributes", "storage_transformers",
      "dimension_names"};
  for (const char* req : {"shape", "data_type", "chunk_grid", "chunk_key_encoding", "fill_value", "codecs"})
    if (!j.contains(req)) fail(req, j, "missing required field");

  m.shape = get_int_array(j["shape"], "shape", std::nullopt);
  for (std::size_t d = 0; d < m.shape.size(); ++d)
    if (m.shape[d] < 0) fail("shape[" + std::to_string(d) + "]", j["shape"][d], "must be >= 0");
  try {
    checked::product(m.shape, "shape");
  } catch (const Error&) {
    fail("shape", j["shape"], "the number of elements overflows int64");
  }

  m.data_type = data_type_from_json(j["data_type"]);
  m.chunk_grid = ChunkGridMetadata::from_json(j["chunk_grid"], m.shape.size());
  m.chunk_key_encoding = ChunkKeyEncoding::from_json(j["chunk_key_encoding"]);
  m.fill_value.bytes = parse_fill_value(j["fill_value"], m.data_type);

  const auto& codecs = j["codecs"];
  if (!codecs.is_array() || codecs.empty()) fail("codecs", codecs, "expected a non-empty array");
  for (std::size_t i = 0; i < codecs.size(); ++i)
    m.codecs.push_back(CodecMetadata::from_json(codecs[i], "codecs[" + std::to_string(i) + "]"));

  m.attributes = get_attributes(j);
  if (j.contains("storage_transformers")) {
    const auto& st = j["storage_transformers"];
    if (!st.is_array()) fail("storage_transformers", st, "expected an array");
    if (!st.empty())
      throw UnsupportedError("storage_transformers: " + st.dump() + " — zarrpp supports no storage transformers");
  }
  if (j.contains("dimension_names")) {
    const auto& dn = j["dimension_names"];
    if (!dn.is_array() || dn.size() != m.shape.size())
      fail("dimension_names", dn, "expected an array with one entry per dimension");
    std::vector<std::optional<std::string>> names;
    for (const auto& e : dn) {
      if (e.is_null())
        names.emplace_back(std::nullopt);
      else if (e.is_string())
        names.emplace_back(e.get<std::string>());
      else
        fail("dimension_names", dn, "entries must be strings or null");
    }
    m.dimension_names = std::move(names);
  }
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!known.count(it.key())) keep_extra(it.key(), it.value(), m.extra_fields);

  // A rectilinear dimension's chunks must cover the domain (they may go past it).
  if (const auto why = m.chunk_grid.cover_problem(m.shape); !why.empty()) {
    std::string v = json_text(j["chunk_grid"]);
    throw MetadataError(why + " (got " + (v.size() > 200 ? v.substr(0, 200) + "..." : v) + ")");
  }
  // Every chunk index of the grid must fit int64 (spec: checked arithmetic everywhere).
  for (std::size_t d = 0; d < m.shape.size(); ++d) {
    const auto& g = m.chunk_grid;
    std::int64_t hi;
    if (__builtin_add_overflow(g.lower_bound[d], m.shape[d], &hi))
      fail("chunk_grid.configuration.lower_bound[" + std::to_string(d) + "]", j["chunk_grid"],
           "lower_bound + shape overflows int64");
    std::int64_t a, b;
    if (__builtin_sub_overflow(g.lower_bound[d], g.origin[d], &a) || __builtin_sub_overflow(hi, g.origin[d], &b))
      fail("chunk_grid.configuration.origin[" + std::to_string(d) + "]", j["chunk_grid"],
           "coordinates relative to the origin overflow int64");
  }
  return m;
}

ArrayMetadata ArrayMetadata::parse(std::string_view text) { return from_json(parse_json_document(text, "zarr.json")); }

Json ArrayMetadata::to_json() const {
  Json j = Json::object();
  j["zarr_format"] = 3;
  j["node_type"] = "array";
  j["shape"] = shape;
  j["data_type"] = data_type_to_json(data_type);
  j["chunk_grid"] = chunk_grid.to_json();
  j["chunk_key_encoding"] = chunk_key_encoding.to_json();
  j["fill_value"] = fill_value_to_json(fill_value.bytes, data_type);
  Json cs = Json::array();
  for (const auto& c : codecs) cs.push_back(c.to_json());
  j["codecs"] = std::move(cs);
  j["attributes"] = attributes;
  if (dimension_names) {
    Json dn = Json::array();
    for (const auto& n : *dimension_names) dn.push_back(n ? Json(*n) : Json(nullptr));
    j["dimension_names"] = std::move(dn);
  }
  for (auto it = extra_fields.begin(); it != extra_fields.end(); ++it) j[it.key()] = it.value();
  return j;
}

std::string ArrayMetadata::dump() const {
  if (zarr_format == 2) return dump_v2_json(to_v2_json());
  return dump_json(to_json());
}

std::string domain_str(const Domain& d) {
  std::string out = "[";
  for (std::size_t i = 0; i < d.size(); ++i)
    out += (i ? ", " : "") + std::to_string(d[i].inclusive_min) + ":" + std::to_string(d[i].exclusive_max);
  return out + "]";
}

Bytes ArrayMetadata::fill_element() const {
  return data_type.is_vlen() ? Bytes(data_type.size(), 0) : fill_value.bytes;
}

Domain ArrayMetadata::domain() const {
  Domain d;
  for (std::size_t i = 0; i < rank(); ++i) {
    const std::int64_t lo = chunk_grid.lower_bound.empty() ? 0 : chunk_grid.lower_bound[i];
    d.push_back({lo, checked::add(lo, shape[i], "the domain's upper bound")});
  }
  return d;
}

void ArrayMetadata::validate_for_write() const {
  if (zarr_format == 2) {
    if (chunk_grid.rectilinear())
      throw UnsupportedError(
          "Zarr format 2 does not support rectilinear chunk grids (chunks of different sizes); "
          "create the array as Zarr v3");
    if (chunk_grid.kind != ChunkGridMetadata::Kind::Regular)
      throw UnsupportedError(
          "this is a Zarr v2 array, which cannot store a lower bound (prepending needs one); convert it "
          "to Zarr v3 first: zarrpp convert PATH --zarr-format 3 (C++: convert_to_v3)");
  }
  auto check_safe = [](std::int64_t v, const std::string& field) {
    if (v > checked::kMaxSafeInteger || v < -checked::kMaxSafeInteger)
      throw MetadataError(field + ": " + std::to_string(v) +
                          " is beyond +/-(2^53-1), which JavaScript readers cannot hold");
  };
  if (chunk_grid.chunk_shape.size() != shape.size() || chunk_grid.origin.size() != shape.size() ||
      chunk_grid.lower_bound.size() != shape.size() ||
      (chunk_grid.rectilinear() && chunk_grid.chunk_runs.size() != shape.size()) ||
      (chunk_grid.rectilinear_bounded() && chunk_grid.first_chunk.size() != shape.size()))
    throw MetadataError("chunk_grid: needs one entry per dimension of shape " + shape_str(shape));
  if (dimension_names && dimension_names->size() != shape.size())
    throw MetadataError("dimension_names: needs one entry per dimension of shape " + shape_str(shape));
  for (std::size_t d = 0; d < shape.size(); ++d) {
    const auto ds = "[" + std::to_string(d) + "]";
    if (shape[d] < 0) throw MetadataError("shape" + ds + ": must be >= 0");
    if (chunk_grid.chunk_shape[d] < 1)
      throw MetadataError("chunk_grid.configuration.chunk_shape" + ds + ": must be >= 1");
    check_safe(shape[d], "shape" + ds);
    check_safe(chunk_grid.origin[d], "chunk_grid.configuration.origin" + ds);
    check_safe(chunk_grid.lower_bound[d], "chunk_grid.configuration.lower_bound" + ds);
    if (chunk_grid.rectilinear_bounded()) {  // every chunk key's index too
      check_safe(chunk_grid.first_chunk[d], "chunk_grid.configuration.first_chunk" + ds);
      if (!chunk_grid.chunk_runs[d].empty())
        check_safe(checked::add(chunk_grid.first_chunk[d], chunk_grid.listed(d), "the last chunk's index"),
                   "the last listed chunk's index (first_chunk + the number of chunks)" + ds);
    }
    check_safe(checked::add(chunk_grid.lower_bound[d], shape[d], "upper bound"),
               "upper bound (lower_bound + shape)" + ds);
    if (chunk_grid.rectilinear())
      for (const auto& run : chunk_grid.chunk_runs[d])
        if (run.size < 1 || run.count < 1)
          throw MetadataError("chunk_grid.configuration.chunk_shapes" + ds + ": sizes and counts must be >= 1");
  }
  if (const auto why = chunk_grid.cover_problem(shape); !why.empty()) throw MetadataError(why);
  std::int64_t total = 1;
  for (auto n : shape)
    if (__builtin_mul_overflow(total, n, &total))
      throw MetadataError("shape: " + shape_str(shape) + " has more elements than int64 can count");
  if (!data_type.is_vlen() && fill_value.bytes.size() != data_type.size())
    throw MetadataError("fill_value: " + std::to_string(fill_value.bytes.size()) + " bytes for data type " +
                        data_type.name() + ", which has " + std::to_string(data_type.size()));
  check_json_depth(attributes, "attributes");
  check_json_depth(extra_fields, "zarr.json");
}

GroupMetadata GroupMetadata::from_json(const Json& j) {
  check_common(j, "group");
  GroupMetadata g;
  g.attributes = get_attributes(j);
  for (auto it = j.begin(); it != j.end(); ++it) {
    const auto& k = it.key();
    if (k == "zarr_format" || k == "node_type" || k == "attributes") continue;
    if (k == "consolidated_metadata") {
      // zarr-python 3: null, or {"kind": "inline", "must_understand": false, "metadata": {path: doc}}.
      const auto& c = it.value();
      if (!c.is_null()) {
        if (!c.is_object()) fail("consolidated_metadata", c, "expected null or an object");
        if (c.contains("kind") && c["kind"] != "inline")
          fail("consolidated_metadata.kind", c["kind"], "expected \"inline\"");
        if (c.contains("metadata") && !c["metadata"].is_object())
          fail("consolidated_metadata.metadata", c["metadata"], "expected an object of node paths");
      }
      g.consolidated = c;
      g.has_consolidated = true;
      continue;
    }
    keep_extra(k, it.value(), g.extra_fields);
  }
  return g;
}

GroupMetadata GroupMetadata::parse(std::string_view text) { return from_json(parse_json_document(text, "zarr.json")); }

Json GroupMetadata::to_json() const {
  Json j = Json::object();
  j["zarr_format"] = 3;
  j["node_type"] = "group";
  j["attributes"] = attributes;
  if (has_consolidated) j["consolidated_metadata"] = consolidated;
  for (auto it = extra_fields.begin(); it != extra_fields.end(); ++it) j[it.key()] = it.value();
  return j;
}

std::string GroupMetadata::dump() const {
  if (zarr_format == 2) return dump_v2_json(Json::object({{"zarr_format", 2}}));
  return dump_json(to_json());
}

// ---- node names -----------------------------------------------------------------------------

void validate_node_name(std::string_view n) {
  const std::string s(n);
  if (n.empty()) throw MetadataError("node name: must not be empty");
  if (n.find('/') != std::string_view::npos) throw MetadataError("node name '" + s + "': must not contain '/'");
  if (n.find_first_not_of('.') == std::string_view::npos)
    throw MetadataError("node name '" + s + "': must not consist only of periods");
  if (n == "zarr.json") throw MetadataError("node name 'zarr.json' is reserved");
  if (n.find('\0') != std::string_view::npos || n.find('\\') != std::string_view::npos)
    throw MetadataError("node name '" + s + "': must not contain NUL or backslash");
}

void validate_v3_node_path(std::string_view path) {
  for (std::size_t i = 0; i <= path.size();) {
    std::size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    if (path.substr(i, 2) == "__")
      throw MetadataError("node name '" + std::string(path.substr(i, j - i)) +
                          "': Zarr v3 reserves names starting with '__' (Zarr v2 allows them)");
    i = j + 1;
  }
}

std::string normalize_node_path(std::string_view path) {
  std::string out;
  std::size_t i = 0;
  while (i < path.size() && path[i] == '/') ++i;
  while (i < path.size()) {
    std::size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    const auto seg = path.substr(i, j - i);
    if (seg.empty()) throw MetadataError("node path '" + std::string(path) + "': empty segment");
    validate_node_name(seg);
    if (!out.empty()) out += '/';
    out += seg;
    i = j + 1;
    if (j + 1 == path.size()) break;  // trailing slash
  }
  return out;
}

}  // namespace zarrpp
