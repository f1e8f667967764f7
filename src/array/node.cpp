#include "node.hpp"

#include <algorithm>
#include <chrono>
#include <random>
#include <set>
#include <thread>

namespace zarrpp::node {

std::string prefix_of(const std::string& path) { return path.empty() ? std::string() : path + "/"; }
std::string meta_key(const std::string& path) { return prefix_of(path) + "zarr.json"; }
std::string shown(const std::string& path) { return path.empty() ? "/" : path; }
Bytes to_bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }

std::optional<VersionedBytes> read(Store& store, const std::string& path) {
  return store.get_versioned(meta_key(path), ByteRange::all(), kMaxMetadataBytes);
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

// The chunk keys (relative to the store root) that `enc` gives an array of `rank` at `path`.
std::vector<std::string> chunk_keys_of(Store& store, const std::string& path, const ChunkKeyEncoding& enc, std::size_t rank) {
  const std::string prefix = prefix_of(path);
  const std::string under = prefix + (rank == 0 ? enc.encode({}) : enc.prefix());
  std::vector<std::string> out;
  for (auto& key : store.list_prefix(under))
    if (enc.decode(std::string_view(key).substr(prefix.size()), rank)) out.push_back(std::move(key));
  return out;
}

// What an array's zarr.json says its chunk keys look like: from the full metadata, or, when that
// does not validate (an array being replaced because it is broken), from its shape and chunk key
// encoding alone.
std::pair<ChunkKeyEncoding, std::size_t> key_layout(const Json& doc, const std::string& path) {
  try {
    const auto m = ArrayMetadata::from_json(doc);
    return {m.chunk_key_encoding, m.rank()};
  } catch (const MetadataError&) {
  }
  try {
    const auto enc = ChunkKeyEncoding::from_json(doc.at("chunk_key_encoding"));
    return {enc, doc.at("shape").size()};
  } catch (const std::exception&) {
    throw MetadataError("the array at '" + shown(path) +
                        "' has metadata too broken to tell which keys are its chunks, so nothing was deleted; "
                        "remove it by hand");
  }
}

}  // namespace

void prune_dirs_of(Store& store, const std::vector<std::string>& keys, const std::string& node_prefix) {
  // Every directory between a deleted key and the node's folder, deepest first; only empty ones go.
  std::set<std::string> dirs;
  for (const auto& k : keys) {
    for (auto slash = k.rfind('/'); slash != std::string::npos && slash + 1 > node_prefix.size(); slash = k.rfind('/', slash - 1)) {
      dirs.insert(k.substr(0, slash + 1));
      if (slash == 0) break;
    }
  }
  std::vector<std::string> order(dirs.begin(), dirs.end());
  std::sort(order.begin(), order.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  for (const auto& d : order)
    if (d.size() > node_prefix.size()) store.prune_empty(d);
}

void remove_owned(Store& store, const std::string& path, bool keep_metadata) {
  const auto cur = read(store, path);
  if (!cur) return;
  Json doc;
  try {
    doc = parse(cur->bytes, path);
  } catch (const MetadataError& e) {
    throw MetadataError(std::string(e.what()) + "; cannot tell what belongs to the node, so nothing was deleted");
  }
  NodeType t;
  try {
    t = type_of(doc, path);
  } catch (const MetadataError& e) {
    throw MetadataError(std::string(e.what()) + "; cannot tell what belongs to the node, so nothing was deleted");
  }
  const std::string prefix = prefix_of(path);
  if (t == NodeType::Array) {
    const auto [enc, rank] = key_layout(doc, path);
    // One at a time: the first failure stops the removal and is reported (erase throws).
    const auto keys = chunk_keys_of(store, path, enc, rank);
    for (const auto& key : keys) store.erase(key);
    prune_dirs_of(store, keys, prefix);
  } else {
    std::size_t removed = 0;
    for (const auto& dir : store.list_dir(prefix).prefixes) {
      std::string child = dir;
      while (!child.empty() && child.back() == '/') child.pop_back();
      const std::string child_path = prefix + child;
      if (!store.exists(meta_key(child_path))) continue;
      try {
        remove_owned(store, child_path, false);
      } catch (const Error& e) {
        if (removed == 0) throw;
        throw_like(e, "removing '" + shown(path) + "' stopped at its member '" + child + "' after " + std::to_string(removed) +
                          " other member(s) were removed: " + e.what());
      }
      ++removed;
    }
  }
  if (!keep_metadata) {
    store.erase(meta_key(path));
    if (!prefix.empty()) store.prune_empty(prefix);  // the node's own folder, when nothing else is in it
  }
}

void prepare_create(Store& store, const std::string& path, bool overwrite, const ArrayMetadata* array) {
  // Parents first (only read here): an array where a parent group must be refuses the create before
  // anything is deleted.
  std::vector<std::string> parents = {""};
  for (std::size_t pos = 0; (pos = path.find('/', pos)) != std::string::npos;) parents.push_back(path.substr(0, pos++));
  if (path.empty()) parents.clear();
  std::vector<std::string> missing;
  for (const auto& parent : parents) {
    if (auto cur = read(store, parent)) {
      if (type_of(parse(cur->bytes, parent), parent) != NodeType::Group)
        throw MetadataError(ErrorCode::wrong_node_type, "cannot create a node under '" + shown(parent) + "': it is an array");
    } else {
      missing.push_back(parent);
    }
  }
  if (store.exists(meta_key(path))) {
    if (!overwrite)
      throw ConflictError(ErrorCode::already_exists,
                          "a node already exists at '" + shown(path) + "' (use overwrite to replace it)");
    // Only what belongs to the old node goes; its zarr.json is replaced by the new one.
    remove_owned(store, path, true);
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
  // Missing parents become groups (as zarr-python does).
  const Bytes group_doc = to_bytes(GroupMetadata{}.dump());
  for (const auto& parent : missing) store.set(meta_key(parent), group_doc);
}

void update(Store& store, const std::string& path, const std::function<std::optional<Bytes>(const VersionedBytes& cur)>& change,
            std::chrono::milliseconds patience) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + patience;
  thread_local std::minstd_rand jitter{std::random_device{}()};
  auto backoff = std::chrono::microseconds(200);
  const std::string key = meta_key(path);
  for (int attempt = 1;; ++attempt) {
    auto cur = store.get_versioned(key, ByteRange::all(), kMaxMetadataBytes);
    if (!cur) throw NotFoundError("no node at '" + shown(path) + "' in " + store.describe() + " any more (no zarr.json)");
    const auto next = change(*cur);
    if (!next) return;
    if (store.set_if(key, *next, cur->version)) return;
    if (Clock::now() > deadline)
      throw ConflictError("zarr.json of '" + shown(path) + "' kept changing underneath: " + std::to_string(attempt) +
                          " compare-and-swap attempts in " + std::to_string(patience.count()) + " ms all lost");
    // Another writer won: back off (exponentially, with jitter, at most 50 ms) and try again.
    std::this_thread::sleep_for(backoff / 2 + std::chrono::microseconds(jitter() % (backoff.count() / 2 + 1)));
    backoff = std::min<std::chrono::microseconds>(backoff * 2, std::chrono::milliseconds(50));
  }
}

Json merge_attributes(const Json& attributes, const Json& patch) {
  if (!patch.is_object()) throw MetadataError("attributes: the update must be a JSON object");
  Json a = attributes.is_object() ? attributes : Json::object();
  for (auto it = patch.begin(); it != patch.end(); ++it) a[it.key()] = it.value();
  return a;
}

}  // namespace zarrpp::node
