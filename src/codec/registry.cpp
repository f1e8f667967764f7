// The registry: every codec zarrpp knows, found by name. Metadata parsing, the CLI, the Python
// bindings and the benchmarks all find codecs here; a codec's name is written only in its file.
#include <algorithm>
#include <cstdio>

#include "roles.hpp"

namespace zarrpp {

const std::vector<CodecEntry>& codec_registry() {
  static const std::vector<CodecEntry> all = [] {
    std::vector<CodecEntry> v = {bytes_codec_entry(),    transpose_codec_entry(), gzip_codec_entry(),
                                 zstd_codec_entry(),     blosc_codec_entry(),     crc32c_codec_entry(),
                                 sharding_codec_entry(), vlen_utf8_codec_entry(), vlen_bytes_codec_entry()};
    for (auto& e : numcodecs_entries()) v.push_back(std::move(e));
    return v;
  }();
  return all;
}

const CodecEntry* find_codec(std::string_view name) {
  for (const auto& e : codec_registry())
    if (e.name == name) return &e;
  return nullptr;
}

const CodecEntry* find_v2_compressor(std::string_view id) {
  for (const auto& e : codec_registry())
    if (e.v2_compressor && e.v2_compressor->id == id) return &e;
  return nullptr;
}

const CodecEntry* find_serializer_of(const DataType& dtype) {
  for (const auto& e : codec_registry())
    if (e.holds && *e.holds == dtype) return &e;
  return nullptr;
}

std::string v2_compressor_ids() {
  std::vector<std::string> ids;
  for (const auto& e : codec_registry())
    if (e.v2_compressor && std::find(ids.begin(), ids.end(), e.v2_compressor->id) == ids.end())
      ids.push_back(e.v2_compressor->id);
  std::string s;
  for (const auto& id : ids) s += (s.empty() ? "" : ", ") + id;
  return s;
}

// ---- configuration helpers --------------------------------------------------------------------------

void config_fail(const std::string& codec, const std::string& why, const Json& cfg) {
  throw MetadataError("codec " + codec + ": " + why + " (configuration " + json_text(cfg) + ")");
}

void allowed_keys(const std::string& codec, const Json& cfg, std::initializer_list<const char*> keys) {
  if (!cfg.is_object()) config_fail(codec, "the configuration must be a JSON object", cfg);
  for (auto it = cfg.begin(); it != cfg.end(); ++it)
    if (std::none_of(keys.begin(), keys.end(), [&](const char* k) { return it.key() == k; }))
      config_fail(codec, "unexpected configuration key \"" + it.key() + "\"", cfg);
}

std::int64_t config_int(const std::string& codec, const Json& cfg, const char* key, std::int64_t lo, std::int64_t hi,
                        std::optional<std::int64_t> def) {
  if (!cfg.contains(key)) {
    if (def) return *def;
    config_fail(codec, std::string("missing \"") + key + "\"", cfg);
  }
  const auto& v = cfg[key];
  if (!v.is_number_integer()) config_fail(codec, std::string("\"") + key + "\" must be an integer", cfg);
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
    config_fail(codec, std::string("\"") + key + "\" out of range", cfg);
  const auto x = v.get<std::int64_t>();
  if (x < lo || x > hi)
    config_fail(
        codec, std::string("\"") + key + "\" must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]", cfg);
  return x;
}

void decode_fail(const std::string& codec, const std::string& why) { throw CodecError("codec " + codec + ": " + why); }

// ---- the public face of the registry ----------------------------------------------------------------

namespace codec {

namespace {
std::string known_names() {
  std::string s;
  for (const auto& e : codec_registry()) s += (s.empty() ? "" : ", ") + e.name;
  return s;
}
}  // namespace

std::vector<Info> known() {
  std::vector<Info> out;
  for (const auto& e : codec_registry()) out.push_back({e.name, e.role});
  return out;
}

std::optional<Role> role_of(std::string_view name) {
  const auto* e = find_codec(name);
  if (!e) return std::nullopt;
  return e->role;
}

std::vector<std::string> shorthand_keys(std::string_view name) {
  std::vector<std::string> out;
  if (const auto* e = find_codec(name))
    for (const auto& [k, v] : e->shorthand) out.push_back(k);
  return out;
}

CodecMetadata from_shorthand(std::string_view text) {
  std::vector<std::string> parts;
  std::size_t i = 0;
  for (;;) {
    const std::size_t j = text.find(':', i);
    parts.emplace_back(text.substr(i, j == std::string_view::npos ? std::string_view::npos : j - i));
    if (j == std::string_view::npos) break;
    i = j + 1;
  }
  const CodecEntry* e = find_codec(parts[0]);
  if (!e) throw ArgumentError("unknown codec '" + parts[0] + "' (known: " + known_names() + ")");
  if (parts.size() - 1 > e->shorthand.size()) {
    std::string keys;
    for (const auto& [k, v] : e->shorthand) keys += ":" + k;
    throw ArgumentError("codec " + e->name + " takes at most " + std::to_string(e->shorthand.size()) +
                        " shorthand values (" + e->name + keys + "), got '" + std::string(text) + "'");
  }
  Json cfg = Json::object();
  for (std::size_t k = 0; k < e->shorthand.size(); ++k) {
    const auto& [key, def] = e->shorthand[k];
    const bool given = k + 1 < parts.size() && !parts[k + 1].empty();
    if (!given) {
      if (!def.is_null()) cfg[key] = def;
      continue;
    }
    const std::string& v = parts[k + 1];
    const Json parsed = Json::parse(v, nullptr, /*allow_exceptions=*/false);
    cfg[key] = parsed.is_number() || parsed.is_boolean() ? parsed : Json(v);
  }
  return {e->name, cfg};
}

}  // namespace codec
}  // namespace zarrpp
