#include "zarrpp/array/group.hpp"

#include <algorithm>

namespace zarrpp {
namespace {
std::string meta_key_of(const std::string& path) { return path.empty() ? "zarr.json" : path + "/zarr.json"; }
Bytes to_bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }
std::string shown(const std::string& path) { return path.empty() ? "/" : path; }

Json read_node(Store& store, const std::string& path) {
  auto b = store.get(meta_key_of(path));
  if (!b) throw NotFoundError("no node at '" + shown(path) + "' in " + store.describe() + " (no zarr.json)");
  return parse_json_document(std::string(b->begin(), b->end()), "zarr.json of '" + shown(path) + "'");
}
}  // namespace

std::optional<NodeType> node_type(const StorePtr& store, const std::string& path_in) {
  const std::string path = normalize_node_path(path_in);
  auto b = store->get(meta_key_of(path));
  if (!b) return std::nullopt;
  const Json j = parse_json_document(std::string(b->begin(), b->end()), "zarr.json of '" + shown(path) + "'");
  if (!j.is_object() || !j.contains("node_type") || !j["node_type"].is_string())
    throw MetadataError("zarr.json of '" + shown(path) + "': missing or invalid node_type");
  if (j["node_type"] == "array") return NodeType::Array;
  if (j["node_type"] == "group") return NodeType::Group;
  throw MetadataError("zarr.json of '" + shown(path) + "': unknown node_type " + j["node_type"].dump());
}

Group::Group(StorePtr store, std::string path, GroupMetadata meta)
    : store_(std::move(store)), path_(std::move(path)), meta_(std::move(meta)) {}

Group Group::create(StorePtr store, const std::string& path_in, const Json& attributes, bool overwrite) {
  if (!store) throw StoreError("Group::create: no store given");
  const std::string path = normalize_node_path(path_in);
  if (!attributes.is_object()) throw MetadataError("attributes: must be a JSON object");
  GroupMetadata m;
  m.attributes = attributes;
  if (store->exists(meta_key_of(path))) {
    if (!overwrite) throw MetadataError("a node already exists at '" + shown(path) + "' (use overwrite to replace it)");
    store->erase_prefix(path.empty() ? "" : path + "/");
  }
  // Parents become groups (as zarr-python does), unless something else is there.
  std::size_t pos = 0;
  while ((pos = path.find('/', pos)) != std::string::npos) {
    const std::string parent = path.substr(0, pos);
    if (auto t = node_type(store, parent)) {
      if (*t != NodeType::Group) throw MetadataError("cannot create a node under '" + parent + "': it is an array");
    } else {
      store->set(meta_key_of(parent), to_bytes(GroupMetadata{}.dump()));
    }
    ++pos;
  }
  if (!path.empty() && !store->exists("zarr.json")) store->set("zarr.json", to_bytes(GroupMetadata{}.dump()));
  store->set(meta_key_of(path), to_bytes(m.dump()));
  return Group(std::move(store), path, std::move(m));
}

Group Group::open(StorePtr store, const std::string& path_in) {
  if (!store) throw StoreError("Group::open: no store given");
  const std::string path = normalize_node_path(path_in);
  const Json j = read_node(*store, path);
  if (j.is_object() && j.contains("node_type") && j["node_type"] == "array")
    throw MetadataError("'" + shown(path) + "' is an array, not a group");
  return Group(std::move(store), path, GroupMetadata::from_json(j));
}

void Group::write_attributes(const std::function<Json(const Json&)>& change) {
  const std::string key = meta_key_of(path_);
  // Compare-and-swap alone keeps every update (no lock: on S3 one costs requests).
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto cur = store_->get(key);
    if (!cur) throw NotFoundError("group '" + shown(path_) + "' no longer exists");
    GroupMetadata m = GroupMetadata::parse(std::string(cur->begin(), cur->end()));
    m.attributes = change(m.attributes);  // applied to what is stored now, so no update is lost
    if (store_->compare_and_set(key, cur, to_bytes(m.dump()))) {
      meta_ = std::move(m);
      return;
    }
  }
  throw ConflictError("zarr.json of group '" + shown(path_) + "' kept changing underneath");
}

void Group::set_attributes(const Json& attributes) {
  if (!attributes.is_object()) throw MetadataError("attributes: must be a JSON object");
  write_attributes([&](const Json&) { return attributes; });
}

void Group::update_attributes(const Json& patch) {
  if (!patch.is_object()) throw MetadataError("attributes: the update must be a JSON object");
  write_attributes([&](const Json& current) {
    Json a = current;
    for (auto it = patch.begin(); it != patch.end(); ++it) a[it.key()] = it.value();
    return a;
  });
}

std::string Group::child_path(const std::string& name) const {
  validate_node_name(name);
  return path_.empty() ? name : path_ + "/" + name;
}

std::vector<Group::Child> Group::children() const {
  std::vector<Child> out;
  const auto listing = store_->list_dir(path_.empty() ? "" : path_ + "/");
  for (const auto& name : listing.prefixes) {
    try {
      validate_node_name(name);
    } catch (const MetadataError&) {
      continue;  // e.g. an array's "c" folder is not a child node... nor is anything invalid
    }
    const std::string p = path_.empty() ? name : path_ + "/" + name;
    if (auto t = node_type(store_, p)) out.push_back({name, *t});
  }
  std::sort(out.begin(), out.end(), [](const Child& a, const Child& b) { return a.name < b.name; });
  return out;
}

Group Group::create_group(const std::string& name, const Json& attributes) const {
  return Group::create(store_, child_path(name), attributes);
}
Array Group::create_array(const std::string& name, const ArraySpec& spec) const {
  return Array::create(store_, child_path(name), spec);
}
Group Group::open_group(const std::string& name) const { return Group::open(store_, child_path(name)); }
Array Group::open_array(const std::string& name) const { return Array::open(store_, child_path(name)); }

}  // namespace zarrpp
