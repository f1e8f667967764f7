// Zarr v2's filters and compressor <-> the equivalent codec chain. A v2 chunk is the chunk's
// elements in `order` (C or F) and the dtype's byte order, passed through the filters in turn
// and then the compressor; the chain below produces the same bytes.
#include <algorithm>

#include "roles.hpp"

namespace zarrpp::codec {
namespace {

const char* const kFilters = "delta, fixedscaleoffset, quantize, astype, bitround, packbits, categorize, shuffle";
// numcodecs' object codecs zarrpp has no codec for (its own declare `holds`).
const char* const kOtherObjectCodecs[] = {"vlen-array", "json2", "msgpack2", "pickle"};

bool is_object_codec(const std::string& id) {
  const auto* e = find_codec(id);
  return (e && e->holds) ||
         std::find(std::begin(kOtherObjectCodecs), std::end(kOtherObjectCodecs), id) != std::end(kOtherObjectCodecs);
}

std::string id_of(const Json& c, const char* what) {
  if (!c.is_object() || !c.contains("id") || !c["id"].is_string())
    throw MetadataError(std::string(".zarray: ") + what + " must be an object with a string \"id\" (got " + c.dump() +
                        ")");
  return c["id"].get<std::string>();
}

Json without_id(const Json& c) {
  Json cfg = Json::object();
  for (auto it = c.begin(); it != c.end(); ++it)
    if (it.key() != "id") cfg[it.key()] = it.value();
  return cfg;
}

// The element type a numcodecs filter outputs ("astype" / "encode_dtype"), as a data type.
DataType filter_output(const CodecMetadata& c, const DataType& in) {
  const auto* e = find_codec(c.name);
  ChunkSpec spec{{1}, in, Bytes(in.size(), 0)};
  auto codec = e->make_a2a(*c.configuration, spec);
  return codec->encoded_spec(spec).dtype;
}

}  // namespace

std::vector<CodecMetadata> from_v2(const Json& compressor, const Json& filters, const DataType& dtype, bool big_endian,
                                   char order, std::size_t rank) {
  std::vector<CodecMetadata> out;
  if (order == 'F' && rank > 1) {
    std::vector<std::int64_t> rev;
    for (std::size_t d = rank; d-- > 0;) rev.push_back(static_cast<std::int64_t>(d));
    out.push_back({"transpose", Json::object({{"order", rev}})});
  }
  DataType cur = dtype;
  bool bytes_level = false;  // after a filter that works on bytes (shuffle)
  std::size_t itemsize = dtype.size();
  auto add_bytes = [&] {
    if (bytes_level) return;
    Json cfg = Json::object();
    if (cur.component_size() > 1) cfg["endian"] = big_endian ? "big" : "little";
    out.push_back({"bytes", cfg});
    bytes_level = true;
  };
  if (!filters.is_null()) {
    if (!filters.is_array())
      throw MetadataError(".zarray: \"filters\" must be null or an array (got " + filters.dump() + ")");
    bool first = true;
    for (const auto& f : filters) {
      const std::string id = id_of(f, "a filter");
      if (first && dtype.is_vlen() && id != "categorize") {
        // An object array's object codec: it turns the elements into bytes.
        out.push_back({id, Json::object()});
        bytes_level = true;
        itemsize = 1;
        first = false;
        continue;
      }
      first = false;
      const std::string name = "numcodecs." + id;
      const auto* e = find_codec(name);
      if (is_object_codec(id))
        throw UnsupportedError("filter '" + id +
                               "' is an object codec: it must be the first filter of an object (\"|O\") array" +
                               (dtype.is_vlen() ? std::string(" and there can be only one")
                                                : std::string(", and this array's dtype is not one")));
      if (!e)
        throw UnsupportedError("filter '" + id + "' is not supported (zarrpp reads the filters " + kFilters + ")");
      if (e->role == codec::Role::array_to_array) {
        if (bytes_level)
          throw UnsupportedError("filter '" + id + "' after " +
                                 (dtype.is_vlen()
                                      ? std::string("the object codec (which turns the elements into bytes)")
                                      : std::string("a byte-level filter (shuffle)")) +
                                 " is not supported");
        CodecMetadata c{name, without_id(f)};
        // numcodecs views the filter's input in the byte order its type string states; one
        // that differs from the data's would filter byte-swapped values.
        for (const char* key : {"dtype", "decode_dtype"}) {
          if (!f.contains(key) || !f[key].is_string()) continue;
          const std::string ts = f[key].get<std::string>();
          if (cur.component_size() > 1 && !ts.empty() && (ts[0] == '<' || ts[0] == '>') && (ts[0] == '>') != big_endian)
            throw UnsupportedError("filter '" + id + "': its " + key + " \"" + ts +
                                   "\" is in the other byte order than the " + (big_endian ? "big" : "little") +
                                   "-endian data it filters (zarr-python 2 then filters " +
                                   "byte-swapped values, which zarrpp does not reproduce)");
          break;
        }
        cur = filter_output(c, cur);
        // numcodecs writes the filter's output in the byte order its type string states.
        for (const char* key : {"astype", "encode_dtype", "dtype"}) {
          if (!f.contains(key) || !f[key].is_string()) continue;
          const std::string ts = f[key].get<std::string>();
          if (!ts.empty() && (ts[0] == '<' || ts[0] == '>')) big_endian = ts[0] == '>';
          break;
        }
        itemsize = cur.size();
        out.push_back(std::move(c));
      } else {
        add_bytes();
        out.push_back({name, without_id(f)});
        itemsize = 1;  // numcodecs hands the next codec a byte buffer
      }
    }
  }
  add_bytes();
  if (!compressor.is_null()) {
    const std::string id = id_of(compressor, "\"compressor\"");
    const Json cfg = without_id(compressor);
    const auto* e = find_v2_compressor(id);
    if (!e)
      throw UnsupportedError("compressor '" + id + "' is not supported (zarrpp reads the compressors " +
                             v2_compressor_ids() + ")");
    out.push_back({e->name, e->v2_compressor->from_v2(cfg, itemsize)});
  }
  return out;
}

V2Chain to_v2(const std::vector<CodecMetadata>& codecs, const DataType& dtype, std::size_t rank) {
  V2Chain v;
  Json filters = Json::array();
  std::size_t i = 0;
  auto cfg_of = [](const CodecMetadata& c) { return c.configuration ? *c.configuration : Json::object(); };
  if (i < codecs.size() && codecs[i].name == "transpose") {
    const Json order = cfg_of(codecs[i]).value("order", Json::array());
    std::vector<std::int64_t> rev, id;
    for (std::size_t d = rank; d-- > 0;) rev.push_back(static_cast<std::int64_t>(d));
    for (std::size_t d = 0; d < rank; ++d) id.push_back(static_cast<std::int64_t>(d));
    if (order == Json(rev))
      v.order = rank > 1 ? 'F' : 'C';
    else if (order != Json(id))
      throw UnsupportedError("codec transpose with order " + order.dump() +
                             " has no Zarr v2 form (v2 stores C or F order only)");
    ++i;
  }
  DataType cur = dtype;
  for (; i < codecs.size() && codecs[i].name.rfind("numcodecs.", 0) == 0; ++i) {
    const auto* e = find_codec(codecs[i].name);
    if (!e || e->role != codec::Role::array_to_array) break;
    // The filter's full configuration (numcodecs 0.11 needs "dtype", which zarr-python 3 may
    // leave out), as the codec states it for its input type.
    ChunkSpec spec{{1}, cur, Bytes(cur.size(), 0)};
    const auto codec = e->make_a2a(cfg_of(codecs[i]), spec);
    cur = codec->encoded_spec(spec).dtype;
    Json f = Json::object({{"id", codecs[i].name.substr(10)}});
    const Json cfg = cfg_of(codec->to_metadata());  // kept alive: items() refers into it
    for (auto& [k, val] : cfg.items()) f[k] = val;
    filters.push_back(f);
  }
  const std::size_t n_value_filters = filters.size();
  const auto* serializer = i < codecs.size() ? find_codec(codecs[i].name) : nullptr;
  if (dtype.is_vlen() && serializer && serializer->holds) {
    filters.push_back(Json::object({{"id", codecs[i].name}}));
  } else if (i >= codecs.size() || codecs[i].name != "bytes") {
    const std::string what = i < codecs.size() ? codecs[i].name : "(none)";
    throw UnsupportedError("codec " + what + " has no Zarr v2 form (" +
                           (what == "sharding_indexed"
                                ? std::string("sharding needs Zarr v3")
                                : std::string("v2 takes numcodecs filters, then bytes, then one compressor")) +
                           ")");
  }
  v.big_endian = cfg_of(codecs[i]).value("endian", Json("little")) == "big" && cur.component_size() > 1;
  // numcodecs filters view their input and write their output in the byte order their type
  // strings state: every one must be the chunk's byte order, or zarr-python 2 would filter
  // byte-swapped values.
  for (std::size_t k = 0; k < n_value_filters; ++k)
    for (const char* key : {"dtype", "astype", "encode_dtype", "decode_dtype"}) {
      if (!filters[k].contains(key) || !filters[k][key].is_string()) continue;
      std::string ts = filters[k][key].get<std::string>();
      if (!ts.empty() && (ts[0] == '<' || ts[0] == '>')) ts[0] = v.big_endian ? '>' : '<';
      filters[k][key] = ts;
    }
  ++i;
  for (; i < codecs.size(); ++i) {
    const auto& c = codecs[i];
    const Json cfg = cfg_of(c);
    const auto* e = find_codec(c.name);
    // A numcodecs codec that is no v2 compressor (shuffle) is a v2 filter.
    if (e && !e->v2_compressor && c.name.rfind("numcodecs.", 0) == 0) {
      Json f = Json::object({{"id", c.name.substr(10)}});
      for (auto& [k, val] : cfg.items()) f[k] = val;
      filters.push_back(f);
      continue;
    }
    if (i + 1 != codecs.size())
      throw UnsupportedError("codec " + c.name + " followed by " + codecs[i + 1].name + ": Zarr v2 has one compressor");
    if (!e || !e->v2_compressor)
      throw UnsupportedError("codec " + c.name + " has no Zarr v2 form" +
                             (c.name == "crc32c" ? std::string(" (v2 has no checksum codec)") : std::string()));
    Json comp = Json::object({{"id", e->v2_compressor->id}});
    const Json stated = e->v2_compressor->to_v2(cfg);  // kept alive: items() refers into it
    for (auto& [k, val] : stated.items()) comp[k] = val;
    v.compressor = comp;
  }
  if (!filters.empty()) v.filters = filters;
  return v;
}

namespace {
// The data type of a v2 object array (dtype "|O"), which its first filter, the object codec, names.
DataType object_type_of(const Json& filters) {
  const std::string id = filters.is_array() && !filters.empty() && filters[0].is_object() &&
                                 filters[0].contains("id") && filters[0]["id"].is_string()
                             ? filters[0]["id"].get<std::string>()
                             : "";
  if (const auto* e = find_codec(id); e && e->holds) return *e->holds;
  if (id == "categorize") return DataType::string_t;  // a filter of str objects to numbers, no object codec
  throw UnsupportedError(".zarray: an object array (dtype |O) " +
                         (id.empty() ? std::string("without an object codec") : "with the object codec '" + id + "'") +
                         " is not supported: zarrpp's object elements are str (vlen-utf8) and bytes (vlen-bytes), so "
                         "any other object has no zarrpp type; copy the array with zarr-python 2 into one of those "
                         "object codecs (or a NumPy dtype) to read it here");
}
}  // namespace

ArrayMetadata from_v2_document(const Json& zarray, const Json& zattrs) {
  ArrayMetadata m = ArrayMetadata::from_v2_fields(zarray, zattrs, object_type_of);
  m.codecs = from_v2(m.v2.compressor, m.v2.filters, m.data_type, m.v2_big_endian(), m.v2.order, m.rank());
  return m;
}

ArrayMetadata as_v2(const ArrayMetadata& in) {
  const auto chain = to_v2(in.codecs, in.data_type, in.rank());
  ArrayMetadata m = in.with_v2_form(chain);
  m.codecs = from_v2(m.v2.compressor, m.v2.filters, m.data_type, chain.big_endian, m.v2.order, m.rank());
  return m;
}

}  // namespace zarrpp::codec
