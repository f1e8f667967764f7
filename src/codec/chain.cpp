// The one codec-chain builder (see zarrpp/codec/chain.hpp).
#include "zarrpp/codec/chain.hpp"

#include <algorithm>
#include <memory>
#include <string>

#include "roles.hpp"

namespace zarrpp {
namespace codec {

namespace {

const char* role_text(codec::Role r) {
  switch (r) {
    case codec::Role::array_to_array:
      return "an array -> array codec";
    case codec::Role::array_to_bytes:
      return "an array -> bytes codec";
    case codec::Role::bytes_to_bytes:
      return "a bytes -> bytes codec";
  }
  return "a codec";
}

// The codec's name and its registry role; ArgumentError when the registry does not know it.
std::pair<std::string, codec::Role> name_and_role(const Any& c, const DataType& dtype, const std::string& where) {
  const std::string name = to_metadata(c, dtype).name;
  const CodecEntry* e = find_codec(name);
  if (!e) throw ArgumentError(where + ": unknown codec '" + name + "'");
  return {name, e->role};
}

void need_role(const std::string& name, codec::Role have, codec::Role want, const std::string& where) {
  if (have != want)
    throw ArgumentError(where + ": '" + name + "' is not " + role_text(want) + " (it is " + role_text(have) + ")");
}

Any default_serializer(const DataType& dtype) {
  if (const auto* e = find_serializer_of(dtype)) return CodecMetadata{e->name, Json::object()};
  return BytesCodec{};
}

// A variable-length data type is serialised only by its vlen codec, and a vlen codec serialises
// nothing else.
void check_serializer(const std::string& name, const DataType& dtype) {
  const std::string want = to_metadata(default_serializer(dtype), dtype).name;
  const bool vlen_codec = name == "vlen-utf8" || name == "vlen-bytes";
  if (dtype.is_vlen() ? name != want : vlen_codec)
    throw ArgumentError("serializer: '" + name + "' cannot serialise " + dtype.name() + " elements" +
                        (dtype.is_vlen() ? " (use " + want + ")" : ""));
}

void check_shards(const Shape& shards, const Shape& chunks) {
  if (shards.size() != chunks.size())
    throw MetadataError("shards: " + shape_str(shards) + " has " + std::to_string(shards.size()) +
                        " entries, the chunks " + shape_str(chunks) + " have " + std::to_string(chunks.size()));
  for (std::size_t d = 0; d < chunks.size(); ++d)
    if (shards[d] < 1 || chunks[d] < 1 || shards[d] % chunks[d] != 0)
      throw MetadataError("shards[" + std::to_string(d) + "]: " + std::to_string(shards[d]) +
                          " must be a positive multiple of chunks[" + std::to_string(d) +
                          "] = " + std::to_string(chunks[d]));
}

// The element type the array -> array filters hand the serializer (numcodecs' categorize makes
// numbers of text, astype changes the type).
DataType after_filters(const std::vector<Any>& filters, DataType t, const Shape& chunks) {
  Shape shape = chunks;
  for (const auto& f : filters) {
    const CodecMetadata c = to_metadata(f, t);
    const auto* e = find_codec(c.name);
    if (!e || !e->make_a2a) continue;
    const ChunkSpec spec{shape, t, Bytes(t.size(), 0)};
    const ChunkSpec out = e->make_a2a(c.configuration ? *c.configuration : Json::object(), spec)->encoded_spec(spec);
    t = out.dtype;
    shape = out.shape;
  }
  return t;
}

}  // namespace

std::vector<Any> default_compressors() { return {Zstd{}}; }

Json default_config(std::string_view name) {
  Json out = Json::object();
  if (const CodecEntry* e = find_codec(name))
    for (const auto& [key, def] : e->shorthand)
      if (!def.is_null()) out[key] = def;
  return out;
}

Chain build_chain(const ChainSpec& spec, const DataType& dtype, const Shape& chunks) {
  std::vector<Any> array_filters, byte_filters;
  for (std::size_t i = 0; i < spec.filters.size(); ++i) {
    const std::string where = "filters[" + std::to_string(i) + "]";
    const auto [name, role] = name_and_role(spec.filters[i], dtype, where);
    // numcodecs' shuffle is a filter in zarr-python 2 and works on bytes: after the serializer.
    if (role == codec::Role::bytes_to_bytes && name.starts_with("numcodecs.")) {
      byte_filters.push_back(spec.filters[i]);
      continue;
    }
    need_role(name, role, codec::Role::array_to_array, where);
    array_filters.push_back(spec.filters[i]);
  }
  const DataType serialized = after_filters(array_filters, dtype, chunks);
  const Any serializer = spec.serializer.value_or(default_serializer(serialized));
  const auto [sname, srole] = name_and_role(serializer, serialized, "serializer");
  need_role(sname, srole, codec::Role::array_to_bytes, "serializer");
  check_serializer(sname, serialized);
  const std::vector<Any> compressors = spec.compressors.value_or(default_compressors());
  std::vector<Any> chain = array_filters;
  chain.push_back(serializer);
  chain.insert(chain.end(), byte_filters.begin(), byte_filters.end());
  for (std::size_t i = 0; i < compressors.size(); ++i) {
    const auto [name, role] = name_and_role(compressors[i], dtype, "compressors[" + std::to_string(i) + "]");
    need_role(name, role, codec::Role::bytes_to_bytes, "compressors[" + std::to_string(i) + "]");
    chain.push_back(compressors[i]);
  }
  const std::string crc = Crc32c{}.to_metadata(dtype).name;
  if (spec.crc32c && (compressors.empty() || to_metadata(compressors.back(), dtype).name != crc))
    chain.emplace_back(Crc32c{});
  if (!spec.shards) return {chain, chunks};
  check_shards(*spec.shards, chunks);
  auto sh = std::make_shared<Sharding>();
  sh->chunk_shape = chunks;
  sh->codecs = chain;
  return {{sh}, *spec.shards};
}

ChainParts split_chain(const std::vector<CodecMetadata>& codecs, const Shape& grid_chunks) {
  ChainParts out{{}, grid_chunks};
  std::vector<CodecMetadata> list = codecs;
  if (list.size() == 1 && list[0].name == "sharding_indexed" && list[0].configuration) {
    const Json cfg = *list[0].configuration;  // a copy: `list` is cleared below
    out.spec.shards = grid_chunks;
    out.chunks = cfg.at("chunk_shape").get<Shape>();
    list.clear();
    for (const auto& c : cfg.at("codecs")) list.push_back(CodecMetadata::from_json(c, "sharding_indexed codecs"));
  }
  std::vector<Any> compressors;
  bool serialized = false;
  for (const auto& c : list) {
    const CodecEntry* e = find_codec(c.name);
    const codec::Role role = e ? e->role : (serialized ? codec::Role::bytes_to_bytes : codec::Role::array_to_array);
    if (role == codec::Role::array_to_bytes) {
      out.spec.serializer = c;
      serialized = true;
    } else if (!serialized) {
      out.spec.filters.emplace_back(c);
    } else {
      compressors.emplace_back(c);
    }
  }
  const std::string crc = "crc32c";
  if (!compressors.empty() && std::get<CodecMetadata>(compressors.back()).name == crc) {
    compressors.pop_back();
    out.spec.crc32c = true;
  }
  out.spec.compressors = compressors;
  return out;
}

}  // namespace codec
}  // namespace zarrpp
