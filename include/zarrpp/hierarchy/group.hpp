#pragma once
/// @file
/// Groups: a hierarchy of named arrays and groups with attributes.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zarrpp/array/array.hpp"
#include "zarrpp/metadata/node_type.hpp"

namespace zarrpp {

/// The type of the node at `path`, or nullopt when there is none (either format).
std::optional<NodeType> node_type(const StorePtr& store, const std::string& path);
/// 3 or 2: the format of the node at `path` (3 when zarr.json is there, even beside v2 documents).
int zarr_format_of(const StorePtr& store, const std::string& path);

/// A handle on a group. Copies share nothing but the store; every method is safe to call from
/// several threads at once (attribute updates are compare-and-swapped, so none is lost).
class Group {
 public:
  /// zarr_format 2 writes .zgroup (+ .zattrs), as zarr-python 2 does.
  static Group create(StorePtr store, const std::string& path = "", const Json& attributes = Json::object(),
                      bool overwrite = false, int zarr_format = 3);
  /// Opens the group at `path` of `store` (its root by default), Zarr v3 or v2.
  static Group open(StorePtr store, const std::string& path = "");

  const std::string& path() const { return path_; }  ///< the group's path in its store ("" at the root)
  const StorePtr& store() const { return store_; }   ///< the store the group is in
  int zarr_format() const;                           ///< 3 (zarr.json) or 2 (.zgroup)

  /// The attributes as last read or written through this handle.
  Json attributes() const;
  /// The group's metadata as a document, as last read or written: its zarr.json; for a v2 group
  /// {"zarr_format": 2, "node_type": "group", "attributes": ...} (.zgroup with its .zattrs).
  Json metadata_document() const;
  /// Whether the group has consolidated metadata: a v2 group's .zmetadata (read from the store
  /// now), a v3 group's "consolidated_metadata" object in zarr.json.
  bool is_consolidated() const;
  /// Identifies the metadata this handle holds now (see Array::generation).
  std::uint64_t generation() const;
  void set_attributes(const Json& attributes);  ///< replaces the attributes (compare-and-swap on the metadata)
  void update_attributes(const Json& patch);    ///< merges keys into the attributes

  /// Removes keys from the attributes as they are stored now; returns the keys it removed.
  std::vector<std::string> remove_attributes(const std::vector<std::string>& keys);
  /// Re-reads zarr.json (after another handle or process changed the group).
  void refresh();

  /// One member of a group: its name, whether it is an array or a group, and why it cannot be
  /// read, if it cannot.
  struct Child {
    std::string name;  ///< the member's name in the group
    NodeType type;     ///< array or group

    /// Why zarrpp cannot read this member's metadata ("" when it can; `type` is then meaningless).
    std::string error = "";
    friend bool operator==(const Child&, const Child&) = default;
  };
  /// Direct children, sorted by name. A member whose metadata cannot be read is listed with its
  /// error rather than failing the listing. On stores that cannot list, the members consolidated
  /// metadata (.zmetadata, or zarr-python 3's consolidated_metadata) names.
  std::vector<Child> children() const;

  /// Writes this group's consolidated metadata anew from the nodes below it (zarr-python's
  /// consolidate_metadata: .zmetadata for a v2 group, "consolidated_metadata" in a v3 group's
  /// zarr.json). zarrpp keeps it current from then on with every change it makes.
  void consolidate_metadata();

  /// Creates the member group `name` (in this group's Zarr format).
  Group create_group(const std::string& name, const Json& attributes = Json::object()) const;
  /// Creates the member array `name` (in this group's Zarr format unless spec.zarr_format says).
  Array create_array(const std::string& name, const ArraySpec& spec) const;
  Group open_group(const std::string& name) const;  ///< opens the member group `name`
  Array open_array(const std::string& name) const;  ///< opens the member array `name`

 private:
  struct State;
  Group(StorePtr store, std::string path, GroupMetadata meta);
  void write_attributes(const std::function<Json(const Json&)>& change);
  std::string child_path(const std::string& name) const;
  StorePtr store_;
  std::string path_;
  std::shared_ptr<State> st_;
};

}  // namespace zarrpp
