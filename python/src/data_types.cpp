// Data types: Python's dtype= forms in the core's spellings (the core's table decides what they
// mean), and NumPy buffers as the core's views.
#include "bindings.hpp"

#include <bit>
#include <string>
#include <unordered_map>

namespace zarrpp_python {

// The core's data-type table decides every name and rule; this converts between Python's
// objects and the core's spellings of them (NumPy's dtype.str, a structured type's descr as JSON).

// The NumPy dtype (native byte order) of a zarrpp data type.
py::dtype numpy_dtype(const DataType& t) {
  if (t.kind() != zarrpp::DataKind::Struct) {
    // NumPy parses the text each time (microseconds per array opened); a dtype never changes, so
    // each is made once. Called with the GIL held; never destroyed (Python may be gone by then).
    static auto* const made = new std::unordered_map<std::string, py::dtype>;
    const std::string key = t.numpy_str();
    auto it = made->find(key);
    if (it == made->end()) it = made->emplace(key, py::dtype(key)).first;
    return it->second;
  }
  py::list descr;  // [(name, dtype[, shape])], packed as the core lays it out
  for (const auto& f : t.fields()) {
    py::tuple shape(f.shape.size());
    for (std::size_t k = 0; k < f.shape.size(); ++k) shape[k] = f.shape[k];
    descr.append(f.shape.empty() ? py::make_tuple(f.name, numpy_dtype(f.type))
                                 : py::make_tuple(f.name, numpy_dtype(f.type), shape));
  }
  return py::dtype::from_args(descr);
}

// A NumPy dtype as the core reads it, with its byte order; a TypeError naming the dtype and the
// core's reason for one it cannot hold.
zarrpp::NumpyType core_type(const py::dtype& dt) {
  const auto shown = [&] { return py::str(py::object(dt)).cast<std::string>(); };
  if (!dt.attr("subdtype").is_none())  // ("<i4", (2,)): NumPy states it as |V8
    throw py::type_error("zarrpp does not support data type " + shown() +
                         ": a sub-array type; give the array the extra dimensions instead");
  const std::string text = dt.has_fields()
                               ? py::module_::import("json").attr("dumps")(dt.attr("descr")).cast<std::string>()
                               : py::str(dt.attr("str")).cast<std::string>();
  try {
    return zarrpp::numpy_type_from_user(text);
  } catch (const zarrpp::Error& e) {
    throw py::type_error("zarrpp does not support data type " + shown() + ": " + e.what());
  }
}

// The zarrpp data type of a NumPy array's dtype, which must be in native byte order.
DataType zarr_dtype(const py::dtype& dt) {
  const auto t = core_type(dt);
  if (t.big_endian != (std::endian::native == std::endian::big) && t.type.component_size() > 1)
    throw py::type_error("zarrpp needs data in native byte order");
  return t.type;
}

// dtype= as zarr-python 3 takes it: the builtins str and bytes, NumPy's reading of any spelling
// (type, dtype, text), and the core's own names NumPy does not know ("string", "r16", "T"), read
// by the core (a ValueError for a bad one).
zarrpp::NumpyType given_type(const py::object& given) {
  const py::module_ builtins = py::module_::import("builtins");
  if (given.is(builtins.attr("str"))) return {DataType::string_t, false};
  if (given.is(builtins.attr("bytes"))) return {DataType::bytes_t, false};
  py::dtype dt;
  try {
    dt = py::dtype::from_args(given);
  } catch (const py::error_already_set& e) {
    if (!e.matches(PyExc_TypeError) || !py::isinstance<py::str>(given)) throw;
    try {
      return zarrpp::numpy_type_from_user(given.cast<std::string>());
    } catch (const zarrpp::ArgumentError& unknown) {  // a name neither knows is a TypeError, as in NumPy
      if (std::string_view(unknown.what()).starts_with("unknown data type")) throw py::type_error(unknown.what());
      throw;
    }
  }
  const char kind = dt.kind();
  if (kind == 'T') return {DataType::string_t, false};     // NumPy 2's StringDType
  if ((kind == 'U' || kind == 'S') && dt.itemsize() == 0)  // np.dtype(str), np.dtype(bytes)
    return {kind == 'U' ? DataType::string_t : DataType::bytes_t, false};
  return core_type(dt);
}

// dtype= read once for Python: (the NumPy dtype the data is held in, in native byte order; the
// core's name of the data type; the bytes codec's endian).
py::tuple parse_dtype(const zarrpp::NumpyType& t) {
  return py::make_tuple(numpy_dtype(t.type), t.type.name(), t.big_endian ? "big" : "little");
}

Shape shape_of(const py::array& a) { return Shape(a.shape(), a.shape() + a.ndim()); }
std::vector<std::int64_t> strides_of(const py::array& a) {
  return std::vector<std::int64_t>(a.strides(), a.strides() + a.ndim());
}

// A view of a NumPy array's buffer: its data pointer (element [0, ..., 0]) and byte strides, so
// any layout works, negative and zero strides included.
NDView view_of(const py::array& a) { return NDView(a.data(), zarr_dtype(a.dtype()), shape_of(a), strides_of(a)); }

NDView writable_view_of(py::array& a) {
  if (!a.writeable()) throw py::value_error("the output array is read-only");
  return NDView(a.mutable_data(), zarr_dtype(a.dtype()), shape_of(a), strides_of(a));
}

// Hands an NDArray's buffer to NumPy without copying: the NumPy array owns it through a capsule.
py::array to_numpy(zarrpp::NDArray&& a) {
  auto* owned = new zarrpp::NDArray(std::move(a));
  py::capsule owner(owned, [](void* p) { delete static_cast<zarrpp::NDArray*>(p); });
  const auto strides = zarrpp::c_strides(owned->shape(), owned->dtype().size());
  return py::array(numpy_dtype(owned->dtype()), std::vector<py::ssize_t>(owned->shape().begin(), owned->shape().end()),
                   std::vector<py::ssize_t>(strides.begin(), strides.end()), owned->raw_data(), owner);
}

py::tuple to_tuple(const std::vector<std::int64_t>& v) {
  py::tuple t(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) t[i] = py::int_(v[i]);
  return t;
}

// JSON from the Python side (attributes, codec configurations), parsed as zarr.json is: nesting
// capped, linear in the number of keys.
Json parse_json(const std::string& text, const char* what) { return zarrpp::parse_json_document(text, what); }

void bind_data_types(py::module_& m) {
  m.def(
      "auto_chunks",
      [](const std::vector<std::int64_t>& shape, const zarrpp::NumpyType& dtype, bool sharded) {
        return zarrpp::auto_chunks(shape, dtype.type, sharded);
      },
      "shape"_a, "dtype"_a, "sharded"_a = false,
      "Chunks for chunks=\"auto\" of a `dtype` array (the core's rule, zarr-python 3's; a shard's inner chunks when "
      "sharded).");
  m.def(
      "auto_shards",
      [](const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& chunks,
         const zarrpp::NumpyType& dtype, std::optional<std::size_t> target_bytes) {
        return zarrpp::auto_shards(shape, chunks, dtype.type, target_bytes);
      },
      "shape"_a, "chunks"_a, "dtype"_a, "target_bytes"_a = py::none(),
      "Shards for shards=\"auto\": two chunks along dimensions holding more than 8 (the core's rule).");
  m.def(
      "xarray_fill_attribute",
      [](const zarrpp::NumpyType& dtype, const py::object& value) -> py::object {
        const DataType t = dtype.type;
        const auto bytes = zarrpp::parse_fill_value(zarrpp::canonical_fill_value(fill_value_json(value), t), t);
        const auto j = zarrpp::xarray_fill_attribute(bytes, t);
        return j ? attrs_to_python(*j) : py::none();
      },
      "dtype"_a, "value"_a,
      "xarray's encoding (a JSON value) of a Zarr v3 array's _FillValue attribute, or None for types it has none for.");
  m.def("parse_dtype", &parse_dtype, "dtype"_a,
        "dtype= as (the NumPy dtype in native byte order, the core's data type name, the bytes codec's endian).");
  m.def(
      "data_type_name", [](const zarrpp::NumpyType& dtype) { return dtype.type.name(); }, "dtype"_a,
      "The zarrpp data type of a dtype= by name (U12, datetime64[ns], int32).");
}

}  // namespace zarrpp_python
