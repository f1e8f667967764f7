#include "node.hpp"

#include <algorithm>
#include <atomic>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <set>

#include "../core/retry.hpp"
#include "zarrpp/codec/codec.hpp"
#include "zarrpp/core/warning.hpp"

namespace zarrpp::node {

std::string prefix_of(const std::string& path) { return path.empty() ? std::string() : path + "/"; }
std::string meta_key(const std::string& path) { return prefix_of(path) + "zarr.json"; }
std::string shown(const std::string& path) { return path.empty() ? "/" : path; }

std::string absent(Store& store) {
  const std::string why = store.explain_absent();
  return why.empty() ? "" : "; " + why;
}
std::uint64_t next_generation() {
  static std::atomic<std::uint64_t> counter{0};
  return ++counter;
}

Bytes to_bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }

std::optional<VersionedBytes> read(Store& store, const std::string& path) {
  return store.get_versioned(meta_key(path), ByteRange::all(), kMaxMetadataBytes);
}

namespace {
// One node document's bytes, parsed and checked.
Doc parse_doc(int format, NodeType type, const std::string& key, VersionedBytes v, const std::string& path) {
  Doc d;
  d.format = format;
  d.key = key;
  d.stored = std::move(v);
  if (format == 3) {
    d.json = parse(d.stored.bytes, path);
    if (d.json.is_object() && d.json.contains("zarr_format") && d.json["zarr_format"] != 3)
      throw MetadataError("zarr.json of '" + shown(path) + "': zarr_format is " + d.json["zarr_format"].dump() +
                          ", expected 3 (Zarr v2 nodes keep their metadata in .zarray/.zgroup)");
    d.type = type_of(d.json, path);
  } else {
    d.json = parse_json_document(
        std::string_view(reinterpret_cast<const char*>(d.stored.bytes.data()), d.stored.bytes.size()), key);
    d.type = type;
    if (!d.json.is_object() || !d.json.contains("zarr_format") || d.json["zarr_format"] != 2)
      throw MetadataError(key + ": expected a JSON object with \"zarr_format\": 2");
  }
  return d;
}

}  // namespace

namespace {
// The .zmetadata documents at `path` and above it, nearest first: (its folder, the node's path
// relative to it).
std::vector<std::pair<std::string, std::string>> consolidated_levels(const std::string& path) {
  std::vector<std::pair<std::string, std::string>> out = {{path, ""}};
  for (std::size_t pos = path.size(); pos != std::string::npos && pos > 0;) {
    pos = path.rfind('/', pos - 1);
    const std::string level = pos == std::string::npos ? "" : path.substr(0, pos);
    out.emplace_back(level, path.substr(level.empty() ? 0 : level.size() + 1));
  }
  return out;
}

// A v2 node described only by the nearest .zmetadata that has an entry for it.
std::optional<Doc> consolidated_doc(Store& store, const std::string& path) {
  for (const auto& [level, rel] : consolidated_levels(path)) {
    const std::string key = key_in(level, kZmetadata);
    const auto v = store.get(key, ByteRange::all(), kMaxMetadataBytes);
    if (!v) continue;
    const Json z = naming_transport(store, key, [&] {
      return parse_json_document(std::string_view(reinterpret_cast<const char*>(v->data()), v->size()), key);
    });
    if (!z.is_object() || !z.contains("metadata") || !z["metadata"].is_object()) continue;
    const Json& md = z["metadata"];
    const std::string pre = rel.empty() ? "" : rel + "/";
    for (const auto& [name, type] : {std::pair{kZarray, NodeType::Array}, std::pair{kZgroup, NodeType::Group}}) {
      if (!md.contains(pre + name)) continue;
      Doc d = naming_transport(store, key, [&] {
        return parse_doc(2, type, key_in(path, name), VersionedBytes{to_bytes(md[pre + name].dump()), Version{}}, path);
      });
      d.consolidated_attributes = md.contains(pre + kZattrs) ? md[pre + kZattrs] : Json(nullptr);
      if (!d.consolidated_attributes->is_null() && !d.consolidated_attributes->is_object())
        throw MetadataError(key + ": the entry " + pre + kZattrs + " is not a JSON object");
      return d;
    }
    return std::nullopt;  // the nearest consolidated document is the one that describes the node
  }
  return std::nullopt;
}
}  // namespace

std::optional<Doc> read_doc(Store& store, const std::string& path, bool consolidated) {
  auto doc = [&](int format, NodeType type, const std::string& key, VersionedBytes v) {
    return naming_transport(store, key, [&] { return parse_doc(format, type, key, std::move(v), path); });
  };
  if (auto v3 = read(store, path)) return doc(3, NodeType::Group, meta_key(path), std::move(*v3));
  const std::string za = key_in(path, kZarray), zg = key_in(path, kZgroup);
  // A store with requests in flight gets the v2 documents at once (one round trip, not three);
  // the others read them one by one, as they are needed.
  const bool ahead = store.capabilities().reads_in_flight > 1;
  auto zarray = store.start_get(za, kMaxMetadataBytes);
  auto zgroup = ahead ? store.start_get(zg, kMaxMetadataBytes) : nullptr;
  auto zattrs = ahead ? store.start_get(key_in(path, kZattrs), kMaxMetadataBytes) : nullptr;
  auto with_attributes = [&](Doc d) {
    if (zattrs) d.attributes_read = zattrs->wait();
    return d;
  };
  if (auto a = zarray->wait()) return with_attributes(doc(2, NodeType::Array, za, std::move(*a)));
  if (!zgroup) zgroup = store.start_get(zg, kMaxMetadataBytes);
  if (auto g = zgroup->wait()) return with_attributes(doc(2, NodeType::Group, zg, std::move(*g)));
  if (consolidated) return consolidated_doc(store, path);
  return std::nullopt;
}

void throw_missing(Store& store, const std::string& path, const std::string& key) {
  const auto now = read_doc(store, path, true);
  if (now && !now->stored.version.empty())
    throw ConflictError("'" + shown(path) + "' in " + store.describe() + " changed meanwhile: it is a Zarr v" +
                        std::to_string(now->format) + " node now (converted while this change ran; nothing of the " +
                        "change was applied); open it again");
  if (now)
    throw UnsupportedError("'" + shown(path) + "' in " + store.describe() +
                           " is described only by consolidated metadata (.zmetadata), without its own "
                           ".zarray/.zgroup/.zattrs: zarrpp reads and converts such nodes but changes a node's own "
                           "documents; convert it to Zarr v3 (zarrpp convert), or write its documents back with "
                           "zarr-python 2 first");
  const std::string what = key.empty() ? "it was removed" : "no " + key.substr(key.rfind('/') + 1);
  throw NotFoundError("no node at '" + shown(path) + "' in " + store.describe() + " any more (" + what + ")");
}

namespace {
Json parse_v2_attributes(Store& store, const std::string& key, const std::optional<Bytes>& v) {
  if (!v) return nullptr;
  return naming_transport(store, key, [&] {
    Json j = parse_json_document(std::string_view(reinterpret_cast<const char*>(v->data()), v->size()), key);
    if (!j.is_object()) throw MetadataError(key + ": expected a JSON object");
    return j;
  });
}
}  // namespace

Json v2_attributes_of(Store& store, const std::string& path, const Doc& doc) {
  if (doc.consolidated_attributes) return *doc.consolidated_attributes;
  if (doc.attributes_read)
    return parse_v2_attributes(
        store, key_in(path, kZattrs),
        *doc.attributes_read ? std::optional<Bytes>((*doc.attributes_read)->bytes) : std::nullopt);
  return read_v2_attributes(store, path);
}

Json read_v2_attributes(Store& store, const std::string& path) {
  const std::string key = key_in(path, kZattrs);
  return parse_v2_attributes(store, key, store.get(key, ByteRange::all(), kMaxMetadataBytes));
}

namespace {
bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Whether the folder `dir` (a first index's, beside .zarray) holds the rest of a nested chunk key:
// `rest` more indices, the last one a file.
bool holds_nested_chunks(Store& store, const std::string& dir, std::size_t rest) {
  const auto l = store.list_dir(dir);
  if (rest == 1) return std::any_of(l.keys.begin(), l.keys.end(), all_digits);
  return std::any_of(l.prefixes.begin(), l.prefixes.end(), [&](const std::string& p) {
    return all_digits(p) && holds_nested_chunks(store, dir + p + "/", rest - 1);
  });
}

// Arrays whose key layout was guessed (nothing stored to tell), warned of once per process.
bool first_guess_warning(const std::string& where) {
  static std::mutex mu;
  static std::set<std::string> warned;
  std::lock_guard lk(mu);
  return warned.insert(where).second;
}

// The key encoding of a .zarray that states no "dimension_separator" (zarr-python before 2.8):
// DirectoryStore wrote chunk keys "0.0" and NestedDirectoryStore "0/0", and both said nothing. What
// is stored tells: chunk 0 in either form, else (on a store that can list) chunk files "i.j" or
// chunk folders "i/.../j" beside .zarray. One dimension reads alike either way. With nothing stored
// to tell by, "." is assumed, as zarr-python 2 does, said once, and `decided` is false (so .zarray
// is not made to state the guess).
ChunkKeyEncoding unstated_separator(Store& store, const std::string& path, std::size_t rank, bool& decided) {
  const auto flat = ChunkKeyEncoding::v2('.'), nested = ChunkKeyEncoding::v2('/');
  decided = true;
  if (rank < 2) return flat;
  const std::string prefix = prefix_of(path);
  const std::vector<std::int64_t> zero(rank, 0);
  // Both asked at once on a store with requests in flight (a round trip each otherwise).
  auto nested_found =
      store.capabilities().reads_in_flight > 1
          ? std::async(std::launch::async, [&] { return store.exists(prefix + nested.encode(zero)); })
          : std::async(std::launch::deferred, [&] { return store.exists(prefix + nested.encode(zero)); });
  bool is_flat = store.exists(prefix + flat.encode(zero));
  bool is_nested = nested_found.get();
  if (!is_flat && !is_nested && store.capabilities().listing) {
    const auto listing = store.list_dir(prefix);
    is_flat = std::any_of(listing.keys.begin(), listing.keys.end(),
                          [&](const std::string& k) { return flat.decode(k, rank).has_value(); });
    is_nested = std::any_of(listing.prefixes.begin(), listing.prefixes.end(), [&](const std::string& d) {
      return all_digits(d) && holds_nested_chunks(store, prefix + d + "/", rank - 1);
    });
  }
  if (is_flat && is_nested)
    throw MetadataError(".zarray of '" + shown(path) +
                        "' states no dimension_separator, and both flat chunk keys (\"0.0\") and nested ones "
                        "(\"0/0\") are stored beside it, so which are its chunks is unknown; add "
                        "\"dimension_separator\" to its .zarray");
  if (is_flat || is_nested) return is_nested ? nested : flat;
  decided = false;
  if (first_guess_warning(store.location() + "|" + path))
    warn(".zarray of '" + shown(path) + "' in " + store.describe() +
         " states no dimension_separator and no chunk is stored to tell: its chunk keys are taken to be \"0.0\" "
         "(zarr-python 2's DirectoryStore); if it was written by NestedDirectoryStore, add "
         "\"dimension_separator\": \"/\" to its .zarray");
  return flat;
}

ArrayMetadata array_of(Store& store, const Doc& d, const Json& v2_attributes, const std::string& path) {
  if (d.format == 2) {
    if (d.type != NodeType::Array)
      throw MetadataError(ErrorCode::wrong_node_type, "'" + shown(path) + "' is a group, not an array");
    auto m = codec::from_v2_document(d.json, v2_attributes);
    if (!m.v2.separator_stated) {
      bool decided = false;
      m.chunk_key_encoding = unstated_separator(store, path, m.rank(), decided);
      m.v2.separator_stated = decided;  // written back only when what is stored told it
    }
    return m;
  }
  expect_type(d.json, path, NodeType::Array);
  return ArrayMetadata::from_json(d.json);
}
}  // namespace

ArrayDoc read_array(Store& store, const std::string& path) {
  auto d = read_doc(store, path, true);
  // zarr.json is asked before .zarray: a conversion in place from v2 to v3 (which writes zarr.json,
  // then removes .zarray) can fall between the two questions. Then zarr.json is there now.
  if (!d && store.exists(doc_key(path, 3, NodeType::Array))) d = read_doc(store, path, true);
  if (!d)
    throw NotFoundError("no array at '" + shown(path) + "' in " + store.describe() + " (no zarr.json or .zarray)" +
                        absent(store));
  const Json attrs = d->format == 2 && d->type == NodeType::Array ? v2_attributes_of(store, path, *d) : Json();
  return {array_of(store, *d, attrs, path), std::move(d->stored.bytes), d->key};
}

ArrayMetadata parse_array(Store& store, const std::string& path, const Bytes& bytes, int format,
                          const Json& v2_attributes) {
  const std::string key = doc_key(path, format, NodeType::Array);
  return naming_transport(store, key, [&] {
    return array_of(store, parse_doc(format, NodeType::Array, key, VersionedBytes{bytes, Version{}}, path),
                    v2_attributes, path);
  });
}

bool has_v2_documents(Store& store, const std::string& path) {
  return store.exists(key_in(path, kZarray)) || store.exists(key_in(path, kZgroup));
}

std::string doc_key(const std::string& path, int format, NodeType type) {
  if (format == 3) return meta_key(path);
  return key_in(path, type == NodeType::Array ? kZarray : kZgroup);
}

Json update_v2_attributes(Store& store, const std::string& path, const std::function<Json(const Json&)>& change) {
  const std::string key = key_in(path, kZattrs);
  Json next;
  const auto write = [&](const std::optional<VersionedBytes>& cur) -> std::optional<Bytes> {
    Json now = Json::object();
    if (cur) {
      now = parse_json_document(std::string_view(reinterpret_cast<const char*>(cur->bytes.data()), cur->bytes.size()),
                                key);
      if (!now.is_object()) throw MetadataError(key + ": expected a JSON object");
    }
    // The handle may be older than a removal or a conversion to v3: .zattrs must not be
    // written beside a node that is no longer a v2 node.
    const auto d = read_doc(store, path);
    if (!d) throw_missing(store, path, "");
    if (d->format != 2)
      throw ConflictError("the node at '" + shown(path) +
                          "' is Zarr v3 now (converted after it was opened): open it again");
    next = change(now);
    check_json_depth(next, "attributes");
    return to_bytes(dump_v2_attributes(next));
  };
  update(store, path, write, {.key = key, .missing_ok = true, .unconditional_fallback = true});
  return next;
}

namespace {
// Erases the entries whose keys start with `pre` ("a/b/").
void erase_under(Json& md, const std::string& pre) {
  std::vector<std::string> gone;
  for (auto it = md.begin(); it != md.end(); ++it)
    if (it.key().compare(0, pre.size(), pre) == 0) gone.push_back(it.key());
  for (const auto& k : gone) md.erase(k);
}

// The consolidated entries of the node at `rel` (relative to the .zmetadata's folder; "" itself).
void put_entries(Json& md, Store& store, const std::string& path, const std::string& rel) {
  const std::string pre = rel.empty() ? "" : rel + "/";
  for (const char* name : {kZarray, kZgroup, kZattrs}) md.erase(pre + name);
  auto d = read_doc(store, path);
  if (!rel.empty() && (!d || d->format != 2 || d->type == NodeType::Array))
    // Nothing v2 can lie below a removed or converted node, or an array: its descendants' entries go too.
    erase_under(md, pre);
  if (!d || d->format != 2) return;
  md[pre + (d->type == NodeType::Array ? kZarray : kZgroup)] = d->json;
  const Json attrs = read_v2_attributes(store, path);
  if (!attrs.is_null()) md[pre + kZattrs] = attrs;
}
}  // namespace

namespace {
// How messages name a store key: "/data/ds.zarr/.zmetadata".
std::string where(const Store& store, const std::string& key) {
  std::string loc = store.location();
  while (!loc.empty() && loc.back() == '/') loc.pop_back();
  if (key.empty()) return loc.empty() ? "." : loc;
  return loc.empty() ? key : loc + "/" + key;
}

// The warning for one consolidated document that could not be brought up to date.
void warn_stale(const Store& store, const std::string& level, const std::string& key, bool v3, const std::string& why) {
  const std::string dir = where(store, level);
  warn("consolidated metadata " + std::string(v3 ? "in '" : "at '") + where(store, key) +
       "' is stale: refreshing it failed (" + why + "); refresh it with zarr-python" + (v3 ? " 3" : "") +
       ": zarr.consolidate_metadata('" + dir + "')");
}

// The nodes under the group at `path` with their documents, as paths relative to it, parents
// before their children (none where the store cannot list).
std::vector<std::pair<std::string, Doc>> nodes_below(Store& store, const std::string& path) {
  std::vector<std::pair<std::string, Doc>> out;
  if (!store.capabilities().listing) return out;
  const std::function<void(const std::string&)> walk = [&](const std::string& rel) {
    const std::string at = rel.empty() ? path : path.empty() ? rel : path + "/" + rel;
    for (const auto& dir : store.list_dir(prefix_of(at)).prefixes) {
      const std::string child = rel.empty() ? dir : rel + "/" + dir;
      auto d = read_doc(store, path.empty() ? child : path + "/" + child);
      if (!d) continue;
      const bool group = d->type == NodeType::Group;
      out.emplace_back(child, std::move(*d));
      if (group) walk(child);
    }
  };
  walk("");
  return out;
}

// A node's entry in zarr-python 3's consolidated_metadata: its document, a consolidated group's
// own list left empty (its members are entries of the document listing it already).
Json inline_entry(Json doc) {
  if (doc.contains("consolidated_metadata") && doc["consolidated_metadata"].is_object())
    doc["consolidated_metadata"]["metadata"] = Json::object();
  return doc;
}

// Brings the consolidated documents at `path` and above it, inside `store`, up to date (with
// `subtree`, the entries of every node under a group at `path` too). A document that cannot be
// refreshed is warned of (naming it and how to refresh it); the others still are.
void refresh_levels(Store& store, const std::string& path, int replaced_format, bool subtree) {
  std::vector<std::string> levels = {""};
  for (std::size_t pos = 0; (pos = path.find('/', pos)) != std::string::npos;) levels.push_back(path.substr(0, pos++));
  if (!path.empty()) levels.push_back(path);
  std::optional<Doc> now;
  try {
    now = read_doc(store, path);
  } catch (const std::exception& e) {
    // A node that cannot be read is not put into anyone's consolidated metadata: what lists it is
    // left as it is, which may be stale.
    warn("consolidated metadata above '" + where(store, path) + "' was not refreshed: the node cannot be read (" +
         e.what() + "); fix the node, then refresh it with zarr-python: zarr.consolidate_metadata('" +
         where(store, "") + "')");
    return;
  }
  std::vector<std::pair<std::string, Doc>> below;
  if (subtree && now && now->type == NodeType::Group) {
    try {
      below = nodes_below(store, path);
    } catch (const std::exception& e) {
      warn("consolidated metadata above '" + where(store, path) + "' lists only the group, not its members: they " +
           "cannot be listed (" + e.what() + "); refresh it with zarr-python: zarr.consolidate_metadata('" +
           where(store, "") + "')");
    }
  }
  const auto join = [](const std::string& a, const std::string& b) { return a.empty() ? b : a + "/" + b; };
  // A removed node leaves both kinds of consolidated metadata.
  // A node that replaced one of the other format (or was converted) leaves that format's too.
  const bool v2 = replaced_format == 2 || !now || now->format == 2,
             v3 = replaced_format == 3 || !now || now->format == 3;
  // The groups between a consolidated level and the node (parents a create may have just made):
  // read once, listed by every level below which they lie.
  std::map<std::string, std::optional<Doc>> between;
  auto group_at = [&](const std::string& p) -> const std::optional<Doc>& {
    auto it = between.find(p);
    if (it == between.end()) it = between.emplace(p, read_doc(store, p)).first;
    return it->second;
  };
  for (const auto& level : levels) {
    const std::string rel = level.empty() ? path : path.substr(level.size() + (path.size() > level.size() ? 1 : 0));
    if (v2) {
      // zarr-python 2: .zmetadata at this level, with the node's .zarray/.zgroup/.zattrs entries.
      const std::string key = key_in(level, kZmetadata);
      try {
        update(store, level,
               [&](const std::optional<VersionedBytes>& cur) -> std::optional<Bytes> {
                 if (!cur) return std::nullopt;
                 Json z = parse_json_document(
                     std::string_view(reinterpret_cast<const char*>(cur->bytes.data()), cur->bytes.size()), key);
                 if (!z.is_object() || !z.contains("metadata") || !z["metadata"].is_object())
                   throw MetadataError(key + ": expected {\"metadata\": {...}, \"zarr_consolidated_format\": 1}");
                 // A whole subtree refreshed (a group replaced or converted): what was listed under
                 // it goes first, so the members the old group had do not linger.
                 if (subtree) erase_under(z["metadata"], rel.empty() ? "" : rel + "/");
                 put_entries(z["metadata"], store, path, rel);
                 for (const auto& [b, doc] : below) put_entries(z["metadata"], store, join(path, b), join(rel, b));
                 for (std::size_t i = 0; i + 1 < levels.size(); ++i) {
                   const std::string& mid = levels[i];
                   if (mid.size() <= level.size() ||
                       (!level.empty() && mid.compare(0, level.size() + 1, level + "/") != 0))
                     continue;
                   const auto& d = group_at(mid);
                   if (d && d->format == 2 && d->type == NodeType::Group)
                     put_entries(z["metadata"], store, mid, mid.substr(level.empty() ? 0 : level.size() + 1));
                 }
                 return to_bytes(dump_v2_json(z));
               },
               {.key = key, .missing_ok = true, .unconditional_fallback = true});
      } catch (const std::exception& e) {
        warn_stale(store, level, key, false, e.what());
      }
    }
    if (v3 && level != path) {
      // zarr-python 3: "consolidated_metadata" in an ancestor group's zarr.json, keyed by the
      // node's path relative to that group; updated only where the group has one.
      try {
        const auto consolidate = [&](const std::optional<VersionedBytes>& cur) -> std::optional<Bytes> {
          if (!cur) return std::nullopt;
          Json g = parse(cur->bytes, level);
          if (!g.is_object() || !g.contains("consolidated_metadata") || !g["consolidated_metadata"].is_object())
            return std::nullopt;
          Json& cm = g["consolidated_metadata"];
          if (!cm.contains("metadata") || !cm["metadata"].is_object()) cm["metadata"] = Json::object();
          if (now && now->format == 3) {
            // As zarr-python 3 flattens it: a consolidated child group's own members are entries
            // of this document already, so its entry lists none.
            cm["metadata"][rel] = inline_entry(now->json);
            if (now->type == NodeType::Array || subtree) erase_under(cm["metadata"], rel + "/");
            for (const auto& [b, doc] : below)
              if (doc.format == 3) cm["metadata"][join(rel, b)] = inline_entry(doc.json);
            for (std::size_t i = 0; i + 1 < levels.size(); ++i) {
              const std::string& mid = levels[i];
              if (mid.size() <= level.size() || (!level.empty() && mid.compare(0, level.size() + 1, level + "/") != 0))
                continue;
              const auto& d = group_at(mid);
              const std::string mrel = mid.substr(level.empty() ? 0 : level.size() + 1);
              if (!d || d->format != 3 || d->type != NodeType::Group || cm["metadata"].contains(mrel)) continue;
              cm["metadata"][mrel] = inline_entry(d->json);
            }
          } else {
            cm["metadata"].erase(rel);
            erase_under(cm["metadata"], rel + "/");
          }
          return to_bytes(dump_json(g));
        };
        update(store, level, consolidate, {.key = meta_key(level), .missing_ok = true, .unconditional_fallback = true});
      } catch (const std::exception& e) {
        warn_stale(store, level, meta_key(level), true, e.what());
      }
    }
  }
}

// Remote stores opened below their bucket's root whose missing ancestor check was warned of.
bool first_unseen_warning(const std::string& location) {
  static std::mutex mu;
  static std::set<std::string> warned;
  std::lock_guard lk(mu);
  return warned.insert(location).second;
}

// Whether the store's root folder holds a group (zarr.json of a group, or .zgroup).
bool is_group_root(Store& store) {
  const auto d = read_doc(store, "");
  return d && d->type == NodeType::Group;
}
}  // namespace

void write_array_documents(Store& store, const std::string& path, const ArrayMetadata& m, const Bytes& meta_bytes,
                           int replaced_format) {
  if (m.zarr_format == 2) {
    if (!m.attributes.empty()) store.set(key_in(path, kZattrs), to_bytes(dump_v2_attributes(m.attributes)));
    store.set(key_in(path, kZarray), meta_bytes);
  } else {
    store.set(meta_key(path), meta_bytes);
  }
  refresh_consolidated(store, path, replaced_format);
}

void refresh_consolidated(Store& store, const std::string& path, int replaced_format, bool subtree) {
  // The change itself has been made: consolidated metadata is a copy the node's own documents
  // override (in zarrpp and zarr-python alike), so failing to refresh it must not report the
  // change as failed; it is warned of instead (refresh_levels, and here).
  //
  // The hierarchy may begin above the store's root (a store opened on ds.zarr/sub/var): walk up
  // while the parent folder is a group, and refresh from the outermost one, which also covers the
  // levels inside this store.
  StorePtr top;       // the outermost enclosing group's store (null: this store is the top)
  std::string above;  // this store's root inside it ("sub/var")
  try {
    for (auto p = store.parent(); p; p = p->store->parent()) {
      if (!is_group_root(*p->store)) break;
      above = above.empty() ? p->name : p->name + "/" + above;
      top = p->store;
    }
  } catch (const std::exception& e) {
    // What lies above could not be looked at: refresh what is inside, and say what was not.
    warn("consolidated metadata in the groups above " + where(store, "") + " was not checked (" + e.what() +
         "); if one of them is consolidated, refresh it with zarr-python: zarr.consolidate_metadata(<that group>)");
  }
  if (!top && store.parent_unseen() && first_unseen_warning(store.location()))
    warn("consolidated metadata in groups above " + store.location() +
         " (the root this store was opened at) was not checked: zarrpp does not look above a remote store's root; if a "
         "group "
         "there is consolidated, open the store at that group, or refresh it with zarr-python: "
         "zarr.consolidate_metadata(<that "
         "group>)");
  if (!top) return refresh_levels(store, path, replaced_format, subtree);
  refresh_levels(*top, path.empty() ? above : above + "/" + path, replaced_format, subtree);
}

void consolidate(Store& store, const std::string& path) {
  const auto group = read_doc(store, path);
  if (!group || group->type != NodeType::Group)
    throw NotFoundError("consolidate: no group at '" + shown(path) + "' in " + store.describe());
  if (!store.capabilities().listing)
    throw UnsupportedError("consolidate: " + store.describe() + " cannot list its keys, so the members of '" +
                           shown(path) + "' cannot be found");
  const auto below = nodes_below(store, path);
  const auto join = [&](const std::string& rel) { return path.empty() ? rel : path + "/" + rel; };
  if (group->format == 2) {
    Json md = Json::object();
    put_entries(md, store, path, "");
    for (const auto& [rel, doc] : below)
      if (doc.format == 2) put_entries(md, store, join(rel), rel);
    const Json z = {{"metadata", md}, {"zarr_consolidated_format", 1}};
    update(store, path, [&](const std::optional<VersionedBytes>&) { return std::optional{to_bytes(dump_v2_json(z))}; },
           {.key = key_in(path, kZmetadata), .missing_ok = true, .unconditional_fallback = true});
    return;
  }
  const Json empty_list = {{"kind", "inline"}, {"must_understand", false}, {"metadata", Json::object()}};
  Json md = Json::object();
  for (const auto& [rel, doc] : below) {
    if (doc.format != 3) continue;
    Json entry = doc.json;
    if (doc.type == NodeType::Group) entry["consolidated_metadata"] = empty_list;
    md[rel] = std::move(entry);
  }
  Json listing = empty_list;
  listing["metadata"] = std::move(md);
  update(store, path, [&](const std::optional<VersionedBytes>& cur) -> std::optional<Bytes> {
    Json g = parse(cur->bytes, path);
    g["consolidated_metadata"] = listing;
    return to_bytes(dump_json(g));
  });
}

std::vector<std::pair<std::string, NodeType>> consolidated_children(Store& store, const std::string& group_path) {
  std::vector<std::pair<std::string, NodeType>> out;
  std::vector<std::string> levels = {""};
  for (std::size_t pos = 0; (pos = group_path.find('/', pos)) != std::string::npos;)
    levels.push_back(group_path.substr(0, pos++));
  if (!group_path.empty()) levels.push_back(group_path);
  for (const auto& level : levels) {
    auto v = store.get(key_in(level, kZmetadata), ByteRange::all(), kMaxMetadataBytes);
    if (!v) continue;
    const Json z = naming_transport(store, key_in(level, kZmetadata), [&] {
      return parse_json_document(std::string_view(reinterpret_cast<const char*>(v->data()), v->size()),
                                 key_in(level, kZmetadata));
    });
    if (!z.is_object() || !z.contains("metadata") || !z["metadata"].is_object()) continue;
    std::string under = group_path.substr(level.size());
    if (!under.empty() && under[0] == '/') under.erase(0, 1);
    if (!under.empty()) under += "/";
    for (auto it = z["metadata"].begin(); it != z["metadata"].end(); ++it) {
      const std::string& k = it.key();
      if (k.compare(0, under.size(), under) != 0) continue;
      const std::string rest = k.substr(under.size());
      const auto slash = rest.find('/');
      if (slash == std::string::npos || rest.find('/', slash + 1) != std::string::npos) continue;
      const std::string leaf = rest.substr(slash + 1);
      if (leaf == kZarray)
        out.emplace_back(rest.substr(0, slash), NodeType::Array);
      else if (leaf == kZgroup)
        out.emplace_back(rest.substr(0, slash), NodeType::Group);
    }
    return out;
  }
  // zarr-python 3: consolidated metadata inside the group's zarr.json.
  if (auto d = read(store, group_path)) {
    const Json j = parse(d->bytes, group_path);
    if (j.contains("consolidated_metadata") && j["consolidated_metadata"].is_object() &&
        j["consolidated_metadata"].contains("metadata") && j["consolidated_metadata"]["metadata"].is_object()) {
      for (auto it = j["consolidated_metadata"]["metadata"].begin(); it != j["consolidated_metadata"]["metadata"].end();
           ++it) {
        if (it.key().find('/') != std::string::npos || !it.value().is_object()) continue;
        const auto& nt = it.value().value("node_type", Json());
        if (nt == "array")
          out.emplace_back(it.key(), NodeType::Array);
        else if (nt == "group")
          out.emplace_back(it.key(), NodeType::Group);
      }
    }
  }
  return out;
}

Json parse(const Bytes& bytes, const std::string& path) {
  return parse_json_document(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                             "zarr.json of '" + shown(path) + "'");
}

NodeType type_of(const Json& doc, const std::string& path) {
  if (!doc.is_object() || !doc.contains("node_type") || !doc["node_type"].is_string())
    throw MetadataError("zarr.json of '" + shown(path) + "': missing or invalid node_type");
  if (doc["node_type"] == "array") return NodeType::Array;
  if (doc["node_type"] == "group") return NodeType::Group;
  throw MetadataError("zarr.json of '" + shown(path) + "': unknown node_type " + doc["node_type"].dump());
}

void expect_type(const Json& doc, const std::string& path, NodeType want) {
  // A document without a valid node_type is reported by the metadata parser, which names the field.
  if (!doc.is_object() || !doc.contains("node_type") || !doc["node_type"].is_string()) return;
  const auto& t = doc["node_type"];
  if (want == NodeType::Array && t == "group")
    throw MetadataError(ErrorCode::wrong_node_type, "'" + shown(path) + "' is a group, not an array");
  if (want == NodeType::Group && t == "array")
    throw MetadataError(ErrorCode::wrong_node_type, "'" + shown(path) + "' is an array, not a group");
}

namespace {
// An entry listed where a folder of chunks should be ("c/1" of a 2-d array): an empty folder (left
// by a removal) or a foreign file is not the array's; anything that hides chunks from reading (a
// symlink out of the root or to nothing, a FIFO) is an error, as reading those chunks would be.
void check_chunk_folder_entry(Store& store, const std::string& key, std::string_view rel, const ChunkKeyEncoding& enc,
                              std::size_t rank) {
  std::string deeper(rel);
  bool folder = false;
  for (std::size_t k = 0; k < rank && !folder; ++k) folder = enc.decode(deeper += "/0", rank).has_value();
  if (!folder) return;
  try {
    (void)store.get(key, ByteRange::range(0, 0));
  } catch (const StoreError& e) {
    const std::string what = e.what();
    if (what.find("' is a directory, not a stored value") != std::string::npos) return;  // an empty folder
    throw StoreError("'" + key + "' in " + store.describe() + " stands where a folder of chunks should be: " + what);
  }
}
}  // namespace

std::vector<std::pair<std::vector<std::int64_t>, std::string>> list_chunks(Store& store, const std::string& path,
                                                                           const ChunkKeyEncoding& enc,
                                                                           std::size_t rank) {
  const std::string prefix = prefix_of(path);
  const std::string under = prefix + (rank == 0 ? enc.encode({}) : enc.prefix());
  std::vector<std::pair<std::vector<std::int64_t>, std::string>> out;
  for (auto& key : store.list_prefix(under)) {
    const std::string_view rel = std::string_view(key).substr(prefix.size());
    if (auto idx = enc.decode(rel, rank)) {
      out.emplace_back(std::move(*idx), std::move(key));
      continue;
    }
    // A key inside a folder that stands where a chunk should be: reading that chunk fails, so
    // no operation may take the chunk for missing.
    for (auto slash = rel.rfind('/'); slash != std::string_view::npos && slash > 0; slash = rel.rfind('/', slash - 1))
      if (enc.decode(rel.substr(0, slash), rank))
        throw StoreError("'" + std::string(key.substr(0, prefix.size() + slash)) + "' in " + store.describe() +
                         " is a directory where a chunk should be (it holds '" + key + "'), not a stored value");
    check_chunk_folder_entry(store, key, rel, enc, rank);
  }
  return out;
}

namespace {

// The chunk keys (relative to the store root) that `enc` gives an array of `rank` at `path`.
std::vector<std::string> chunk_keys_of(Store& store, const std::string& path, const ChunkKeyEncoding& enc,
                                       std::size_t rank) {
  std::vector<std::string> out;
  for (auto& [idx, key] : list_chunks(store, path, enc, rank)) out.push_back(std::move(key));
  return out;
}

// What an array's zarr.json says its chunk keys look like: from the full metadata, or, when that
// does not validate (an array being replaced because it is broken), from its shape and chunk key
// encoding alone.
// Which keys are an array's chunks, from its document even when the rest of it is broken (a node
// being removed): the key encoding and the rank.
std::pair<ChunkKeyEncoding, std::size_t> key_layout(Store& store, const Doc& d, const std::string& path) {
  if (d.format == 3) {
    try {
      const auto m = ArrayMetadata::from_json(d.json);
      return {m.chunk_key_encoding, m.rank()};
    } catch (const MetadataError&) {
    }
  }
  std::size_t rank = 0;
  std::optional<ChunkKeyEncoding> encoding;
  try {
    const auto& shape = d.json.at("shape");
    if (!shape.is_array()) throw MetadataError("shape is not an array");
    rank = shape.size();
    if (d.format == 3)
      encoding = ChunkKeyEncoding::from_json(d.json.at("chunk_key_encoding"));
    else if (d.json.contains("dimension_separator") && !d.json["dimension_separator"].is_null())
      encoding = ChunkKeyEncoding::from_v2_json(d.json);
  } catch (const std::exception&) {
    throw MetadataError(d.key + " of '" + shown(path) +
                        "' is too broken to tell which keys are its chunks, so nothing was deleted; "
                        "remove it by hand");
  }
  bool decided = false;
  if (!encoding) encoding = unstated_separator(store, path, rank, decided);  // its own errors, as they are
  return {*encoding, rank};
}

}  // namespace

Overlap overlap(const Store& a, const std::string& path_a, const Store& b, const std::string& path_b) {
  const auto ca = a.identity_chain(path_a), cb = b.identity_chain(path_b);
  if (ca.front() == cb.front()) return Overlap::same;
  if (std::find(ca.begin(), ca.end(), cb.front()) != ca.end()) return Overlap::first_inside_second;
  if (std::find(cb.begin(), cb.end(), ca.front()) != cb.end()) return Overlap::second_inside_first;
  return Overlap::none;
}

void prune_dirs_of(Store& store, const std::vector<std::string>& keys, const std::string& node_prefix) {
  // Every directory between a deleted key and the node's folder, deepest first; only empty ones go.
  std::set<std::string> dirs;
  for (const auto& k : keys) {
    for (auto slash = k.rfind('/'); slash != std::string::npos && slash + 1 > node_prefix.size();
         slash = k.rfind('/', slash - 1)) {
      dirs.insert(k.substr(0, slash + 1));
      if (slash == 0) break;
    }
  }
  std::vector<std::string> order(dirs.begin(), dirs.end());
  std::sort(order.begin(), order.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  for (const auto& d : order)
    if (d.size() > node_prefix.size()) store.prune_empty(d);
}

namespace {

// The keys of the node's metadata documents, the one that makes it a node first.
std::vector<std::string> document_keys(const Doc& d, const std::string& path) {
  std::vector<std::string> keys = {d.key};
  if (d.format == 2) {
    for (const char* name : {kZattrs, kZmetadata}) keys.push_back(key_in(path, name));
    if (d.type == NodeType::Group) keys.push_back(key_in(path, kZarray));
  }
  return keys;
}

// The chunk keys an array's document says are its own (listed before anything is deleted).

std::vector<std::string> owned_chunks(Store& store, const Doc& d, const std::string& path) {
  const auto [encoding, rank] = key_layout(store, d, path);
  return chunk_keys_of(store, path, encoding, rank);
}

}  // namespace

namespace {
// Before the document goes: every folder the removal deletes in can be written (a file store
// probes each with a temporary; a symlinked folder is refused here, since nothing is deleted
// through one), so a removal does not stop half-way for a reason known in advance.
void check_can_delete(Store& store, const std::string& doc, const std::vector<std::string>& chunks,
                      const std::vector<std::string>& children, const std::string& prefix) {
  std::set<std::string> dirs;
  std::vector<std::string> probes = {doc};
  for (const auto& k : chunks)
    if (dirs.insert(k.substr(0, k.rfind('/') + 1)).second) probes.push_back(k);
  for (const auto& c : children) probes.push_back(meta_key(prefix + c));
  try {
    for (const auto& k : probes) store.check_can_write(k, Bytes{});
  } catch (const Error& e) {
    throw_like(e, std::string(e.what()) + "; nothing was deleted");
  }
}
}  // namespace

// The node's document goes first, so that an interruption leaves no node (its chunks are then
// keys of no array, which a create or copy with overwrite deletes, and which no reader shows)
// rather than an old zarr.json over some of its chunks, which would read as the fill value.
void remove_owned(Store& store, const std::string& path) {
  std::optional<Doc> d;
  try {
    d = read_doc(store, path);
  } catch (const MetadataError& e) {
    throw MetadataError(std::string(e.what()) + "; cannot tell what belongs to the node, so nothing was deleted");
  }
  if (!d) return;
  const std::string prefix = prefix_of(path);
  std::vector<std::string> chunks, children;
  if (d->type == NodeType::Array) {
    chunks = owned_chunks(store, *d, path);
  } else {
    for (const auto& dir : store.list_dir(prefix).prefixes) {
      const std::string child_path = prefix + dir;
      if (store.exists(meta_key(child_path)) || has_v2_documents(store, child_path)) children.push_back(dir);
    }
  }
  std::vector<std::string> docs = document_keys(*d, path);
  if (d->format == 3 && has_v2_documents(store, path))
    for (const char* name : {kZarray, kZgroup, kZattrs, kZmetadata}) docs.push_back(key_in(path, name));
  check_can_delete(store, docs.front(), chunks, children, prefix);
  store.erase(docs.front());  // from here on there is no node at `path`
  std::size_t removed = 0;
  auto stopped = [&](const Error& e, const std::string& at) {
    const std::string what = d->type == NodeType::Array ? " chunk(s)" : " member(s)";
    const std::size_t total = d->type == NodeType::Array ? chunks.size() : children.size();
    throw_like(e, "removing the node at '" + shown(path) + "' stopped at '" + at + "': its " +
                      docs.front().substr(docs.front().rfind('/') + 1) + " and " + std::to_string(removed) + " of " +
                      std::to_string(total) + what + " were removed, so it no longer opens; the other " +
                      std::to_string(total - removed) + what + " are still stored but belong to no node: " + e.what());
  };
  for (const auto& key : chunks) {
    try {
      store.erase(key);
    } catch (const Error& e) {
      stopped(e, key);
    }
    ++removed;
  }
  for (const auto& child : children) {
    try {
      remove_owned(store, prefix + child);
    } catch (const Error& e) {
      stopped(e, prefix + child);
    }
    ++removed;
  }
  for (std::size_t i = 1; i < docs.size(); ++i) store.erase(docs[i]);
  prune_dirs_of(store, chunks, prefix);
  if (!prefix.empty()) store.prune_empty(prefix);  // the node's own folder, when nothing else is in it
}

void check_can_write_document(Store& store, const std::string& path, const ArrayMetadata* array, int zarr_format) {
  std::string doc;
  if (array) {
    try {
      doc = zarr_format == 2 && array->zarr_format != 2 ? codec::as_v2(*array).dump() : array->dump();
    } catch (const Error&) {
      doc.assign(1024, ' ');  // about a document's size; the create itself reports what is wrong
    }
  } else {
    GroupMetadata g;
    g.zarr_format = zarr_format;
    doc = g.dump();
  }
  try {
    store.check_can_write(doc_key(path, zarr_format, array ? NodeType::Array : NodeType::Group), to_bytes(doc));
  } catch (const Error& e) {
    throw_like(e, std::string(e.what()) + "; nothing was deleted");
  }
}

int prepare_create(Store& store, const std::string& path, bool overwrite, const ArrayMetadata* array, int zarr_format) {
  if (zarr_format == 3) validate_v3_node_path(path);  // every v3 node created comes here first
  // Parents first (only read here): an array where a parent group must be refuses the create before
  // anything is deleted.
  std::vector<std::string> parents = {""};
  for (std::size_t pos = 0; (pos = path.find('/', pos)) != std::string::npos;) parents.push_back(path.substr(0, pos++));
  if (path.empty()) parents.clear();
  std::vector<std::string> missing;
  for (const auto& parent : parents) {
    if (auto cur = read_doc(store, parent)) {
      if (cur->type != NodeType::Group)
        throw MetadataError(ErrorCode::wrong_node_type,
                            "cannot create a node under '" + shown(parent) + "': it is an array");
    } else {
      missing.push_back(parent);
    }
  }
  int replaced = 0;
  if (store.exists(meta_key(path)) || has_v2_documents(store, path)) {
    if (!overwrite)
      throw ConflictError(ErrorCode::already_exists,
                          "a node already exists at '" + shown(path) + "' (use overwrite to replace it)");
    // Only what belongs to the old node goes, and only once the new node's document could be
    // written: a folder that cannot be written must not lose the old node first.
    int old_format = zarr_format;
    try {
      if (const auto old = read_doc(store, path)) old_format = old->format;
    } catch (const MetadataError&) {
      // remove_owned reports what it cannot tell
    }
    check_can_write_document(store, path, array, zarr_format);
    remove_owned(store, path);
    replaced = old_format;
  }
  if (array && store.capabilities().listing) {
    // Chunks without a zarr.json (an interrupted removal or copy) would show as the new array's data.
    const auto stray = chunk_keys_of(store, path, array->chunk_key_encoding, array->rank());
    if (!stray.empty()) {
      if (!overwrite)
        throw ConflictError(ErrorCode::already_exists, "'" + shown(path) + "' holds " + std::to_string(stray.size()) +
                                                           " chunk key(s) of no array (e.g. '" + stray.front() +
                                                           "'), which the new array would show as its data; "
                                                           "use overwrite to delete them");
      for (const auto& key : stray) store.erase(key);
    }
  }
  // Missing parents become groups (as zarr-python does), of the new node's format.
  GroupMetadata g;
  g.zarr_format = zarr_format;
  const Bytes group_doc = to_bytes(g.dump());
  for (const auto& parent : missing) store.set(doc_key(parent, zarr_format, NodeType::Group), group_doc);
  return replaced;
}

void update(Store& store, const std::string& path,
            const std::function<std::optional<Bytes>(const std::optional<VersionedBytes>& cur)>& change,
            const UpdateOptions& options) {
  const std::string key = options.key.empty() ? meta_key(path) : options.key;
  const bool conditional = store.capabilities().conditional_writes || !options.unconditional_fallback;
  detail::Retry retry(detail::kSwapRetry);
  // A swap was refused: where answers can be lost, that attempt may have landed before the other
  // writer's change (its answer lost, the store's read-back finding the other's value), so a
  // failure after it must not read as "nothing changed".
  bool refused = false;
  try {
    for (;;) {
      auto cur = store.get_versioned(key, ByteRange::all(), kMaxMetadataBytes);
      if (!cur && !options.missing_ok) throw_missing(store, path, key);
      const auto next = change(cur);
      if (!next || (cur && *next == cur->bytes)) return;
      const auto write_options =
          conditional ? WriteOptions::if_equal(cur ? std::optional(cur->version) : std::nullopt) : WriteOptions{};
      bool written = false;
      try {
        written = store.set(key, *next, write_options);  // an unconditional write always lands
      } catch (const SupersededWriteError&) {
        // Refused after a lost answer, another writer's document there now: the change is computed
        // again from that document, which holds it if it landed (and `change` recognises it).
      }
      if (written) return;
      refused = true;
      if (!retry.next())
        throw ConflictError(key + " of '" + shown(path) + "' kept changing underneath: " +
                            std::to_string(retry.attempts()) + " compare-and-swap attempts in " +
                            std::to_string(detail::kSwapRetry.deadline.count() / 1000) + " s all lost");
    }
  } catch (const Error& e) {
    if (!refused || !store.capabilities().uncertain_writes) throw;
    throw_like(e, std::string(e.what()) +
                      "; an earlier attempt lost its compare-and-swap to another writer and may "
                      "have taken effect before it (its answer lost on the way): read " +
                      key + " again to see");
  }
}

Json merge_attributes(const Json& attributes, const Json& patch) {
  if (!patch.is_object()) throw MetadataError("attributes: the update must be a JSON object");
  Json a = attributes.is_object() ? attributes : Json::object();
  for (auto it = patch.begin(); it != patch.end(); ++it) a[it.key()] = it.value();
  return a;
}

AttributeChange replacing_attributes(const Json& attributes) {
  if (!attributes.is_object()) throw MetadataError("attributes: must be a JSON object");
  return [attributes](const Json&) { return attributes; };
}

AttributeChange merging_attributes(const Json& patch) {
  if (!patch.is_object()) throw MetadataError("attributes: the update must be a JSON object");
  return [patch](const Json& current) { return merge_attributes(current, patch); };
}

AttributeChange removing_attributes(const std::vector<std::string>& keys, std::vector<std::string>& removed) {
  return [&keys, &removed](const Json& current) {
    removed.clear();
    Json next = current;
    for (const auto& k : keys)
      if (next.erase(k) > 0) removed.push_back(k);
    return next;
  };
}

}  // namespace zarrpp::node
