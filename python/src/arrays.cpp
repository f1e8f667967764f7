// Arrays: what an Array says of itself, its attributes, and growth.
#include "bindings.hpp"
#include "zarrpp/view/picture.hpp"

namespace zarrpp_python {

// An array's description, attributes and settings.
void bind_array_description(py::class_<Array>& cls) {
  cls.def_property_readonly("shape", [](const Array& a) { return to_tuple(pinned(a).shape()); })
      .def_property_readonly("ndim", [](const Array& a) { return a.ndim(); })
      .def_property_readonly("dtype", [](const Array& a) { return numpy_dtype(pinned(a).dtype()); })
      .def_property_readonly("dtype_name", [](const Array& a) { return pinned(a).dtype().name(); })
      .def_property_readonly("chunks", [](const Array& a) { return to_tuple(a.chunks()); })
      .def_property_readonly("sharded", &Array::sharded, "Whether the stored objects are shards.")
      .def_property_readonly("rectilinear", &Array::rectilinear,
                             "Whether the grid is rectilinear (chunks or shards of sizes listed per dimension).")
      .def_property_readonly("shards",
                             [](const Array& a) -> py::object {
                               auto s = a.shards();
                               if (!s) return py::none();
                               return to_tuple(*s);
                             })
      .def_property_readonly("domain",
                             [](const Array& a) {
                               const auto d = a.domain();
                               py::tuple t(d.size());
                               for (std::size_t i = 0; i < d.size(); ++i)
                                 t[i] = py::make_tuple(d[i].inclusive_min, d[i].exclusive_max);
                               return t;
                             })
      .def_property_readonly("fill_value_bytes",
                             [](const Array& a) {
                               const Array s = pinned(a);
                               return py::bytes(reinterpret_cast<const char*>(s.fill_value().data()),
                                                s.fill_value().size());
                             })
      .def_property_readonly("v2_fill_null",
                             [](const Array& a) {
                               // a v2 array whose .zarray states no fill value (null)
                               const auto m = a.metadata();
                               return m.zarr_format == 2 && m.fill_value.v2_stated && m.fill_value.v2_stated->is_null();
                             })
      .def_property_readonly("missing_element",
                             [](const Array& a) -> py::object {
                               // (value,) when missing elements read as a value not of the type
                               const auto m = vlen_form(a).missing;
                               return m ? py::object(py::make_tuple(*m)) : py::object(py::none());
                             })
      .def(
          "xarray_fill_from_attribute",
          [](const Array& a, const py::object& attribute) -> py::object {
            const auto b = zarrpp::xarray_fill_from_attribute(json_of(attribute, "_FillValue"), pinned(a).dtype());
            if (!b) return py::none();
            return py::bytes(reinterpret_cast<const char*>(b->data()), b->size());
          },
          "attribute"_a,
          "The element (bytes) an xarray-encoded _FillValue attribute states, or None when it is plain JSON.")
      .def_property_readonly("metadata_document",
                             [](const Array& a) {
                               const auto md = pinned(a).metadata();
                               return attrs_to_python(md.zarr_format == 2 ? md.to_v2_json() : md.to_json());
                             })
      // zarr-python's filters / serializer / compressors (inside the shard when sharded; a
      // checksum is the last compressor), as codec::split_chain divides the chain.
      .def_property_readonly(
          "codec_parts",
          [](const Array& a) {
            const auto md = pinned(a).metadata();
            const auto parts = codec::split_chain(md.codecs, md.chunk_grid.chunk_shape).spec;
            auto list = [&](const std::vector<codec::Any>& cs) {
              Json out = Json::array();
              for (const auto& c : cs) out.push_back(codec::to_metadata(c, md.data_type).to_json());
              return out;
            };
            auto compressors = list(parts.compressors.value_or(std::vector<codec::Any>{}));
            if (parts.crc32c) compressors.push_back(codec::Crc32c{}.to_metadata(md.data_type).to_json());
            return attrs_to_python(Json::object(
                {{"filters", list(parts.filters)},
                 {"serializer",
                  parts.serializer ? codec::to_metadata(*parts.serializer, md.data_type).to_json() : Json()},
                 {"compressors", compressors}}));
          })
      .def_property_readonly("zarr_format", [](const Array& a) { return a.zarr_format(); })
      .def_property_readonly("v2_order",
                             [](const Array& a) -> py::object {
                               // a v2 array's stored order ("C" or "F"); None for a v3 array
                               const auto m = pinned(a).metadata();
                               return m.zarr_format == 2 ? py::object(py::str(std::string(1, m.v2.order))) : py::none();
                             })
      .def_property_readonly("path", [](const Array& a) { return a.path(); })
      .def_property_readonly("store", [](const Array& a) { return a.store(); })
      .def("attributes", [](const Array& a) { return attrs_to_python(pinned(a).attributes()); })
      .def_property_readonly("generation", &Array::generation)
      .def("set_attributes",
           [](Array& a, const py::object& given) {
             const Json attrs = json_of(given, "attributes");
             without_gil([&] { a.set_attributes(attrs); });
           })
      .def("update_attributes",
           [](Array& a, const py::object& given) {
             const Json patch = json_of(given, "attributes");
             without_gil([&] { a.update_attributes(patch); });
           })
      .def("remove_attributes",
           [](Array& a, const std::vector<std::string>& keys) {
             return without_gil([&] { return a.remove_attributes(keys); });
           })
      .def("nchunks", [](const Array& a) { return a.nchunks(); })
      .def("nshards", [](const Array& a) { return a.nshards(); })
      .def("nshards_stored", [](const Array& a) { return without_gil([&] { return a.nshards_stored(); }); })
      .def("nchunks_initialized", [](const Array& a) { return without_gil([&] { return a.nchunks_initialized(); }); })
      .def("nbytes_stored", [](const Array& a) { return without_gil([&] { return a.nbytes_stored(); }); })
      .def("stored_chunk_keys", [](const Array& a) { return without_gil([&] { return a.stored_chunk_keys(); }); })
      .def(
          "set_progress", [](Array& a, const py::object& f) { a.set_progress(progress_callback(f)); }, "callback"_a)
      .def(
          "chunk_map_svg",
          [](const Array& a, int size, int max_cells) {
            return without_gil([&] { return zarrpp::chunk_map_svg(a, {.size = size, .max_cells = max_cells}); });
          },
          "size"_a = 400, "max_cells"_a = 40)
      .def("refresh", [](Array& a) { without_gil([&] { a.refresh(); }); })
      .def_property("concurrency", &Array::concurrency, &Array::set_concurrency)
      .def("set_write_empty_chunks", &Array::set_write_empty_chunks);
}

// Growth, the grid, and changing the grid.
void bind_array_growth(py::class_<Array>& cls) {
  // growth
  cls.def(
         "prepend",
         [](Array& a, const py::array& data, std::size_t axis, std::int64_t chunk_size) {
           const ElementsIn in(a, data);
           without_gil([&] { a.prepend(in.ref(), axis, chunk_size); });
         },
         "data"_a, "axis"_a = 0, "chunk_size"_a = 0)
      .def(
          "append",
          [](Array& a, const py::array& data, std::size_t axis, std::int64_t chunk_size) {
            const ElementsIn in(a, data);
            without_gil([&] { a.append(in.ref(), axis, chunk_size); });
          },
          "data"_a, "axis"_a = 0, "chunk_size"_a = 0)
      .def(
          "resize", [](Array& a, const Shape& s) { without_gil([&] { a.resize(s); }); }, "new_shape"_a)
      .def(
          "resize_domain",
          [](Array& a, const std::vector<std::pair<std::int64_t, std::int64_t>>& bounds) {
            zarrpp::Domain d;
            for (const auto& [lo, hi] : bounds) d.push_back({lo, hi});
            without_gil([&] { a.resize_domain(d); });
          },
          "bounds"_a)
      .def(
          "write_chunk_sizes",
          [](const Array& a, const Shape& per,
             const std::optional<std::vector<std::pair<std::int64_t, std::int64_t>>>& region) {
            std::optional<zarrpp::Domain> d;
            if (region) {
              d.emplace();
              for (const auto& [lo, hi] : *region) d->push_back({lo, hi});
            }
            return a.write_chunk_sizes(per, d);
          },
          "per"_a = Shape{}, "region"_a = py::none())
      .def("read_chunk_sizes", [](const Array& a) { return a.read_chunk_sizes(); })  // the whole domain
      // Read/write units (inner chunks) per dimension, counted by the grid without listing their
      // sizes (an array may have billions along one dimension).
      .def("read_chunk_counts", &Array::read_chunk_counts)
      .def("grid_sizes", &Array::grid_sizes,
           "Each dimension's stored-object sizes as the grid states them (the last not cut at the end).")
      .def("convert_to_regular", [](Array& a) { without_gil([&] { a.convert_to_regular(); }); })
      .def(
          "convert_grid", [](Array& a, const std::string& name) { without_gil([&] { a.convert_grid(name); }); },
          "name"_a)
      .def("convert_to_regular_bounded", [](Array& a) { without_gil([&] { a.convert_to_regular_bounded(); }); })
      .def(
          "expand_domain",
          [](Array& a, std::size_t axis, std::int64_t before, std::int64_t after) {
            const auto d = without_gil([&] { return a.expand_domain(axis, before, after); });
            py::tuple t(d.size());
            for (std::size_t i = 0; i < d.size(); ++i) t[i] = py::make_tuple(d[i].inclusive_min, d[i].exclusive_max);
            return t;
          },
          "axis"_a, py::kw_only(), "before"_a, "after"_a = 0,
          "Grows (negative: shrinks) the domain along `axis`; `before` and `after` are keyword-only, as a "
          "swap of the two would delete the wrong end.");
}

}  // namespace zarrpp_python
