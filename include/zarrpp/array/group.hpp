#pragma once
// Groups: a hierarchy of named arrays and groups with attributes.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "zarrpp/array/array.hpp"

namespace zarrpp {

enum class NodeType { Array, Group };

// The type of the node at `path`, or nullopt when there is none.
std::optional<NodeType> node_type(const StorePtr& store, const std::string& path);

class Group {
 public:
  static Group create(StorePtr store, const std::string& path = "", const Json& attributes = Json::object(),
                      bool overwrite = false);
  static Group open(StorePtr store, const std::string& path = "");

  const std::string& path() const { return path_; }
  const StorePtr& store() const { return store_; }
  const Json& attributes() const { return meta_.attributes; }
  void set_attributes(const Json& attributes);
  void update_attributes(const Json& patch);

  struct Child {
    std::string name;
    NodeType type;
    friend bool operator==(const Child&, const Child&) = default;
  };
  // Direct children, sorted by name.
  std::vector<Child> children() const;

  Group create_group(const std::string& name, const Json& attributes = Json::object()) const;
  Array create_array(const std::string& name, const ArraySpec& spec) const;
  Group open_group(const std::string& name) const;
  Array open_array(const std::string& name) const;

 private:
  Group(StorePtr store, std::string path, GroupMetadata meta);
  void write_attributes(const std::function<Json(const Json&)>& change);
  std::string child_path(const std::string& name) const;
  StorePtr store_;
  std::string path_;
  GroupMetadata meta_;
};

}  // namespace zarrpp
