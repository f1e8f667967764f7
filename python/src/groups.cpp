// Groups and the operations on nodes by store and path: open, create, remove, copy, convert.
#include "bindings.hpp"

namespace zarrpp_python {

// Groups.
void bind_groups(py::module_& m) {
  py::class_<zarrpp::Group>(m, "Group")
      .def_property_readonly("path", &zarrpp::Group::path)
      .def_property_readonly("store", &zarrpp::Group::store)
      .def("attributes", [](const zarrpp::Group& g) { return attrs_to_python(g.attributes()); })
      .def_property_readonly("metadata_document",
                             [](const zarrpp::Group& g) { return attrs_to_python(g.metadata_document()); })
      .def("is_consolidated", [](const zarrpp::Group& g) { return without_gil([&] { return g.is_consolidated(); }); })
      .def_property_readonly("generation", &zarrpp::Group::generation)
      .def("set_attributes",
           [](zarrpp::Group& g, const py::object& given) {
             const Json attrs = json_of(given, "attributes");
             without_gil([&] { g.set_attributes(attrs); });
           })
      .def("update_attributes",
           [](zarrpp::Group& g, const py::object& given) {
             const Json patch = json_of(given, "attributes");
             without_gil([&] { g.update_attributes(patch); });
           })
      .def("remove_attributes",
           [](zarrpp::Group& g, const std::vector<std::string>& keys) {
             return without_gil([&] { return g.remove_attributes(keys); });
           })
      .def_property_readonly("zarr_format", &zarrpp::Group::zarr_format)
      .def(
          "consolidate_metadata", [](zarrpp::Group& g) { without_gil([&] { g.consolidate_metadata(); }); },
          "Writes the group's consolidated metadata anew from the nodes below it.")
      .def("children", [](const zarrpp::Group& g) {
        py::list out;
        for (const auto& c : g.children()) {
          if (c.error.empty())
            out.append(py::make_tuple(c.name, type_name(c.type), py::none()));
          else
            out.append(py::make_tuple(c.name, py::none(), c.error));
        }
        return out;
      });
}

void bind_nodes(py::module_& m) {
  m.def(
      "create_group",
      [](StorePtr store, const std::string& path, const py::object& attributes, bool overwrite, int zarr_format) {
        const Json attrs = attributes.is_none() ? Json::object() : json_of(attributes, "attributes");
        return without_gil(
            [&] { return zarrpp::Group::create(std::move(store), path, attrs, overwrite, zarr_format); });
      },
      "store"_a, "path"_a, "attributes"_a, "overwrite"_a, "zarr_format"_a = 3);
  m.def(
      "convert",
      [](const StorePtr& store, const std::string& path, const std::optional<StorePtr>& dst,
         const std::string& dst_path, bool overwrite, int zarr_format, const py::object& progress) {
        if (zarr_format != 2 && zarr_format != 3)
          throw zarrpp::ArgumentError("zarr_format must be 2 or 3, not " + std::to_string(zarr_format));
        const auto cb = progress_callback(progress);
        const auto rep = without_gil([&] {
          if (zarr_format == 2)
            return dst ? zarrpp::convert_to_v2(store, path, *dst, dst_path, overwrite, cb)
                       : zarrpp::convert_to_v2(store, path);
          return dst ? zarrpp::convert_to_v3(store, path, *dst, dst_path, overwrite, cb)
                     : zarrpp::convert_to_v3(store, path);
        });
        return py::make_tuple(rep.nodes, rep.chunks_copied, rep.notes);
      },
      "store"_a, "path"_a = "", "dst"_a = py::none(), "dst_path"_a = "", "overwrite"_a = false, "zarr_format"_a = 3,
      "progress"_a = py::none());
  m.def(
      "copy_array",
      [](const Array& src, const StorePtr& store, const std::string& path, const std::string& grid, bool overwrite,
         const py::object& progress) {
        zarrpp::CopyOptions opts{.overwrite = overwrite};
        if (!progress.is_none()) {  // progress(done, total): chunks (shards) written so far, of all
          auto held = hold_callable(progress);
          opts.progress = [held](std::int64_t done, std::int64_t total) { call_held(*held, done, total); };
        }
        return without_gil([&] {
          const auto meta = grid.empty() ? src.metadata() : zarrpp::with_chunk_grid(src.metadata(), grid);
          return zarrpp::copy_array(src, store, path, meta, opts);
        });
      },
      "src"_a, "store"_a, "path"_a = "", "grid"_a = "", "overwrite"_a = false, "progress"_a = py::none());
  m.def(
      "create_array_from_document",
      [](const StorePtr& store, const std::string& path, const py::object& document, const py::object& attributes,
         bool overwrite) {
        const Json doc = json_of(document, "document");
        const zarrpp::ArrayMetadata meta = doc.is_object() && doc.value("zarr_format", 3) == 2
                                               ? codec::from_v2_document(doc, json_of(attributes, "attributes"))
                                               : zarrpp::ArrayMetadata::from_json(doc);
        return without_gil([&] { return Array::create(store, path, meta, overwrite); });
      },
      "store"_a, "path"_a, "document"_a, "attributes"_a = py::none(), "overwrite"_a = false,
      "Creates the array a zarr.json (or, for zarr_format 2, .zarray and .zattrs) document describes, "
      "validated as on open.");
  m.def(
      "nodes_overlap",
      [](const StorePtr& a, const std::string& path_a, const StorePtr& b, const std::string& path_b) {
        return without_gil([&] { return zarrpp::nodes_overlap(*a, path_a, *b, path_b); });
      },
      "a"_a, "path_a"_a, "b"_a, "path_b"_a,
      "Whether two nodes share storage (the same node, or one inside the other).");
  m.def(
      "destination_overlaps_source",
      [](const StorePtr& src, const std::string& src_path, const StorePtr& dst, const std::string& dst_path) {
        return without_gil([&] { return zarrpp::destination_overlaps_source(*src, src_path, *dst, dst_path); });
      },
      "src"_a, "src_path"_a, "dst"_a, "dst_path"_a,
      "Whether replacing the node at dst/dst_path could touch the node at src/src_path: by the stores' "
      "identities, and by a marker written through dst and looked for through src.");
  m.def(
      "open_group", [](StorePtr store, const std::string& path) { return zarrpp::Group::open(std::move(store), path); },
      "store"_a, "path"_a = "");
  m.def(
      "node_type",
      [](const StorePtr& store, const std::string& path) -> py::object {
        const auto t = zarrpp::node_type(store, path);
        if (!t) return py::none();
        return py::str(type_name(*t));
      },
      "store"_a, "path"_a);
  m.def(
      "decide_open",
      [](const StorePtr& store, const std::string& path, const std::string& mode, const std::string& wanted) {
        const auto how = zarrpp::parse_open_mode(mode);
        const auto kind = wanted == "array" ? zarrpp::NodeType::Array : zarrpp::NodeType::Group;
        const auto d = without_gil([&] { return zarrpp::decide_open(store, path, how, kind); });
        static constexpr const char* steps[] = {"open", "create", "replace", "refuse"};
        return py::make_tuple(steps[static_cast<int>(d.step)],
                              d.found ? py::object(py::str(type_name(*d.found))) : py::none());
      },
      "store"_a, "path"_a, "mode"_a, "wanted"_a,
      "What opening a node of kind `wanted` ('array' or 'group') at `path` in zarr-python's `mode` does: "
      "(step, found), step 'open', 'create', 'replace' or 'refuse', found what is there ('array', 'group' or None).");
  m.def(
      "remove_node", [](const StorePtr& store, const std::string& path) { zarrpp::remove_node(store, path); },
      "store"_a, "path"_a);
  m.def("normalize_path", [](const std::string& path) { return zarrpp::normalize_node_path(path); }, "path"_a);
}

}  // namespace zarrpp_python
