#include "zarrpp/hierarchy/group.hpp"

#include <algorithm>
#include <mutex>

#include "../node/node.hpp"
#include "zarrpp/core/warning.hpp"

namespace zarrpp {

struct Group::State {
  mutable std::mutex mu;
  GroupMetadata meta;
  std::uint64_t generation = node::next_generation();  // renewed whenever meta changes
};

std::optional<NodeType> node_type(const StorePtr& store, const std::string& path_in) {
  const std::string path = normalize_node_path(path_in);
  auto cur = node::read_doc(*store, path, true);
  if (!cur) return std::nullopt;
  return cur->type;
}

int zarr_format_of(const StorePtr& store, const std::string& path_in) {
  const std::string path = normalize_node_path(path_in);
  auto cur = node::read_doc(*store, path, true);
  if (!cur)
    throw NotFoundError("no node at '" + node::shown(path) + "' in " + store->describe() + node::absent(*store));
  return cur->format;
}

Group::Group(StorePtr store, std::string path, GroupMetadata meta)
    : store_(std::move(store)), path_(std::move(path)), st_(std::make_shared<State>()) {
  st_->meta = std::move(meta);
}

Group Group::create(StorePtr store, const std::string& path_in, const Json& attributes, bool overwrite,
                    int zarr_format) {
  if (!store) throw ArgumentError("Group::create: no store given");
  const std::string path = normalize_node_path(path_in);
  if (!attributes.is_object()) throw MetadataError("attributes: must be a JSON object");
  if (zarr_format != 2 && zarr_format != 3)
    throw ArgumentError("zarr_format: " + std::to_string(zarr_format) + " is not 2 or 3");
  check_json_depth(attributes, "attributes");
  if (zarr_format == 3) validate_v3_node_path(path);
  GroupMetadata m;
  m.attributes = attributes;
  m.zarr_format = zarr_format;
  const int replaced = node::prepare_create(*store, path, overwrite, nullptr, zarr_format);
  if (zarr_format == 2) {
    if (!attributes.empty())
      store->set(node::key_in(path, node::kZattrs), node::to_bytes(dump_v2_attributes(attributes)));
    store->set(node::key_in(path, node::kZgroup), node::to_bytes(m.dump()));
  } else {
    store->set(node::meta_key(path), node::to_bytes(m.dump()));
  }
  // A group that replaced a node replaced its members too: consolidated metadata forgets them.
  node::refresh_consolidated(*store, path, replaced, /*subtree=*/replaced != 0);
  return Group(std::move(store), path, std::move(m));
}

Group Group::open(StorePtr store, const std::string& path_in) {
  if (!store) throw ArgumentError("Group::open: no store given");
  const std::string path = normalize_node_path(path_in);
  auto cur = node::read_doc(*store, path, true);
  if (!cur)
    throw NotFoundError("no node at '" + node::shown(path) + "' in " + store->describe() +
                        " (no zarr.json or .zgroup)" + node::absent(*store));
  if (cur->format == 2) {
    if (cur->type != NodeType::Group)
      throw MetadataError(ErrorCode::wrong_node_type, "'" + node::shown(path) + "' is an array, not a group");
    GroupMetadata m;
    m.zarr_format = 2;
    const Json a = node::v2_attributes_of(*store, path, *cur);
    if (!a.is_null()) m.attributes = a;
    return Group(std::move(store), path, std::move(m));
  }
  node::expect_type(cur->json, path, NodeType::Group);
  return Group(std::move(store), path, GroupMetadata::from_json(cur->json));
}

int Group::zarr_format() const {
  std::lock_guard lk(st_->mu);
  return st_->meta.zarr_format;
}

Json Group::attributes() const {
  std::lock_guard lk(st_->mu);
  return st_->meta.attributes;
}

Json Group::metadata_document() const {
  std::lock_guard lk(st_->mu);
  if (st_->meta.zarr_format == 3) return st_->meta.to_json();
  return Json::object({{"zarr_format", 2}, {"node_type", "group"}, {"attributes", st_->meta.attributes}});
}

bool Group::is_consolidated() const {
  if (zarr_format() == 2) return store_->exists(node::key_in(path_, node::kZmetadata));
  std::lock_guard lk(st_->mu);
  return st_->meta.has_consolidated && st_->meta.consolidated.is_object();
}

std::uint64_t Group::generation() const {
  std::lock_guard lk(st_->mu);
  return st_->generation;
}

void Group::refresh() {
  auto g = open(store_, path_);
  std::lock_guard lk(st_->mu);
  st_->meta = g.st_->meta;
  st_->generation = node::next_generation();
}

void Group::write_attributes(const std::function<Json(const Json&)>& change) {
  if (zarr_format() == 2) {
    const Json a = node::update_v2_attributes(*store_, path_, change);
    node::refresh_consolidated(*store_, path_);
    std::lock_guard lk(st_->mu);
    st_->meta.attributes = a;
    st_->generation = node::next_generation();
    return;
  }
  GroupMetadata written;
  node::update(*store_, path_, [&](const std::optional<VersionedBytes>& cur) -> std::optional<Bytes> {
    const Json j = node::parse(cur->bytes, path_);
    node::expect_type(j, path_, NodeType::Group);
    written = GroupMetadata::from_json(j);
    written.attributes = change(written.attributes);  // applied to what is stored now, so no update is lost
    check_json_depth(written.attributes, "attributes");
    return node::to_bytes(written.dump());
  });
  node::refresh_consolidated(*store_, path_);
  std::lock_guard lk(st_->mu);
  st_->meta = std::move(written);
  st_->generation = node::next_generation();
}

void Group::set_attributes(const Json& attributes) { write_attributes(node::replacing_attributes(attributes)); }

std::vector<std::string> Group::remove_attributes(const std::vector<std::string>& keys) {
  std::vector<std::string> removed;
  write_attributes(node::removing_attributes(keys, removed));
  return removed;
}

void Group::update_attributes(const Json& patch) { write_attributes(node::merging_attributes(patch)); }

std::string Group::child_path(const std::string& name) const {
  validate_node_name(name);
  return path_.empty() ? name : path_ + "/" + name;
}

std::vector<Group::Child> Group::children() const {
  std::vector<Child> out;
  if (!store_->capabilities().listing) {
    // A store that cannot list (HTTP): the members consolidated metadata names, if any.
    for (auto& [name, type] : node::consolidated_children(*store_, path_)) out.push_back({name, type, ""});
    std::sort(out.begin(), out.end(), [](const Child& a, const Child& b) { return a.name < b.name; });
    return out;
  }
  auto names = store_->list_dir(node::prefix_of(path_)).prefixes;
  if (zarr_format() == 2) {  // members only consolidated metadata describes count too (zarr.open_consolidated)
    try {
      for (auto& [name, type] : node::consolidated_children(*store_, path_))
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    } catch (const MetadataError& e) {
      // An unreadable .zmetadata (e.g. an integer beyond 64 bits in one member's attributes) does
      // not hide the members the store lists; the members only it describes are said to be missing.
      warn("group '" + node::shown(path_) + "' in " + store_->describe() +
           ": its consolidated metadata cannot be read, so members only it describes are not listed (" + e.what() +
           ")");
    }
  }
  for (const auto& name : names) {
    try {
      validate_node_name(name);
    } catch (const MetadataError&) {
      continue;  // e.g. an array's "c" folder is not a child node... nor is anything invalid
    }
    const std::string p = path_.empty() ? name : path_ + "/" + name;
    // One member zarrpp cannot read is reported as such; the others still list.
    try {
      if (auto t = node_type(store_, p)) out.push_back({name, *t, ""});
    } catch (const Error& e) {
      out.push_back({name, NodeType::Array, e.what()});
    }
  }
  std::sort(out.begin(), out.end(), [](const Child& a, const Child& b) { return a.name < b.name; });
  return out;
}

Group Group::create_group(const std::string& name, const Json& attributes) const {
  return Group::create(store_, child_path(name), attributes, false, zarr_format());
}
Array Group::create_array(const std::string& name, const ArraySpec& spec) const {
  if (spec.zarr_format != 0) return Array::create(store_, child_path(name), spec);
  ArraySpec s = spec;
  s.zarr_format = zarr_format();
  return Array::create(store_, child_path(name), s);
}
void Group::consolidate_metadata() {
  node::consolidate(*store_, path_);
  refresh();
}

Group Group::open_group(const std::string& name) const { return Group::open(store_, child_path(name)); }
Array Group::open_array(const std::string& name) const { return Array::open(store_, child_path(name)); }

}  // namespace zarrpp
