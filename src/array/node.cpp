#include "node.hpp"

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>

namespace zarrpp::node {

std::string prefix_of(const std::string& path) { return path.empty() ? std::string() : path + "/"; }
std::string meta_key(const std::string& path) { return prefix_of(path) + "zarr.json"; }
std::string shown(const std::string& path) { return path.empty() ? "/" : path; }
Bytes to_bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }

std::optional<VersionedBytes> read(Store& store, const std::string& path) { return store.get_versioned(meta_key(path)); }

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

void prepare_create(Store& store, const std::string& path, bool overwrite) {
  if (store.exists(meta_key(path))) {
    if (!overwrite)
      throw ConflictError(ErrorCode::already_exists,
                          "a node already exists at '" + shown(path) + "' (use overwrite to replace it)");
    store.erase_prefix(prefix_of(path));
  }
  // Parents become groups, unless something else is there.
  const Bytes group_doc = to_bytes(GroupMetadata{}.dump());
  std::size_t pos = 0;
  std::vector<std::string> parents = {""};
  while ((pos = path.find('/', pos)) != std::string::npos) parents.push_back(path.substr(0, pos++));
  if (path.empty()) parents.clear();
  for (const auto& parent : parents) {
    if (auto cur = read(store, parent)) {
      if (type_of(parse(cur->bytes, parent), parent) != NodeType::Group)
        throw MetadataError(ErrorCode::wrong_node_type, "cannot create a node under '" + shown(parent) + "': it is an array");
    } else {
      store.set(meta_key(parent), group_doc);
    }
  }
}

void update(Store& store, const std::string& path, const std::function<std::optional<Bytes>(const VersionedBytes& cur)>& change,
            std::chrono::milliseconds patience) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + patience;
  thread_local std::minstd_rand jitter{std::random_device{}()};
  auto backoff = std::chrono::microseconds(200);
  const std::string key = meta_key(path);
  for (int attempt = 1;; ++attempt) {
    auto cur = store.get_versioned(key);
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
