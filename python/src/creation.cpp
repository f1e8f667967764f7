// Creating arrays: the arguments of create_array as the core's ArraySpec, codecs by name and
// configuration.
#include "bindings.hpp"

namespace zarrpp_python {

// A codec from the (name, config dict) the Python codec classes describe themselves with. The
// registry knows every codec by name: the configuration is validated (and its automatic values
// resolved) when the array is created.
codec::Any to_codec(const py::tuple& spec) {
  if (spec.size() != 2) throw py::type_error("a codec spec is a (name, config) pair");
  const auto name = spec[0].cast<std::string>();
  if (!codec::role_of(name)) {
    std::string known;
    for (const auto& c : codec::known()) known += (known.empty() ? "" : ", ") + c.name;
    throw py::value_error("unknown codec '" + name + "' (zarrpp knows " + known + ")");
  }
  const std::string what = "codec " + name;
  const auto cfg = json_of(spec[1], what.c_str());
  return zarrpp::CodecMetadata{name, cfg};
}

// fill_value= as JSON by its Python type only (bool, int, float, complex, str, bytes, sequences,
// NumPy scalars); what the value means for the data type is the core's (canonical_fill_value,
// parse_fill_value).
Json json_of(const py::handle& obj, const char* what) {
  // Never destroyed: Python may be gone when static objects are.
  static const auto* const plain = new py::object(py::cpp_function([](const py::handle& o) -> py::object {
    const auto np = py::module_::import("numpy");
    if (py::isinstance(o, np.attr("generic"))) return o.attr("item")();
    if (py::isinstance(o, np.attr("ndarray"))) return o.attr("tolist")();
    throw py::type_error("attribute values must be JSON-serialisable, got " +
                         py::type::of(o).attr("__name__").cast<std::string>());
  }));
  return parse_json(py::module_::import("json").attr("dumps")(obj, "default"_a = *plain).cast<std::string>(), what);
}

Json float_json(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

Json fill_value_json(const py::handle& v) {
  const auto np = py::module_::import("numpy");
  if (PyBool_Check(v.ptr()) || py::isinstance(v, np.attr("bool_"))) return v.cast<bool>();
  if (py::isinstance<py::bytes>(v) || PyByteArray_Check(v.ptr()) || py::isinstance<py::memoryview>(v) ||
      py::isinstance(v, np.attr("void"))) {
    const auto b = py::reinterpret_steal<py::bytes>(PyBytes_FromObject(v.ptr())).cast<std::string>();
    return Json::binary(std::vector<std::uint8_t>(b.begin(), b.end()));
  }
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();
  if (py::isinstance<py::int_>(v) || py::isinstance(v, np.attr("integer"))) {
    const py::int_ i(py::reinterpret_borrow<py::object>(
        v));  // beyond 64 bits: a number (a float type may hold it; an integer type refuses it)
    if (i < py::int_(INT64_MIN) || i > py::int_(UINT64_MAX)) return py::float_(i).cast<double>();
    if (i < py::int_(0)) return i.cast<std::int64_t>();
    return i.cast<std::uint64_t>();
  }
  if (py::isinstance<py::float_>(v) || py::isinstance(v, np.attr("floating"))) return float_json(v.cast<double>());
  if (PyComplex_Check(v.ptr()) || py::isinstance(v, np.attr("complexfloating"))) {
    const auto c = v.cast<std::complex<double>>();
    return Json::array({float_json(c.real()), float_json(c.imag())});
  }
  if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
    Json a = Json::array();
    for (const auto& x : v) a.push_back(fill_value_json(x));
    return a;
  }
  if (py::isinstance<py::array>(v) && py::reinterpret_borrow<py::array>(v).ndim() == 0)
    return fill_value_json(v.attr("item")());
  throw py::type_error("fill_value " + py::repr(v).cast<std::string>() +
                       ": give a number, bool, str, bytes or a sequence of numbers");
}

struct CreateArgs {
  Shape shape, chunks;
  std::string dtype;
  py::object fill_value;  // None: the default; _zarrpp.NO_FILL_VALUE: Zarr v2's null
  std::vector<py::tuple> filters;
  std::optional<std::vector<py::tuple>> compressors;  // None: the default ("auto")
  std::optional<Shape> shards;
  std::optional<std::vector<std::optional<std::string>>> dimension_names;
  py::object attributes;  // a dict (None: none)
  bool overwrite = false;
  std::optional<Shape> lower_bound;
  std::string endian = "little";
  int zarr_format = 3;
  py::object key_encoding = py::none();  // zarr.json's chunk_key_encoding (a dict); None = the format's default
  std::optional<py::tuple> serializer;
  std::string order = "C";
  std::vector<std::vector<std::int64_t>> chunk_sizes, shard_sizes;  // a rectilinear grid
};

// The chunk key encoding asked for, as zarr.json states it (an empty name: the format's own
// encoding, with the separator given); None: the format's default.
zarrpp::ChunkKeyEncoding key_encoding_of(const py::object& given, int zarr_format) {
  using zarrpp::ChunkKeyEncoding;
  if (given.is_none()) return zarr_format == 2 ? ChunkKeyEncoding::v2('.') : ChunkKeyEncoding::default_('/');
  Json j = json_of(given, "chunk_key_encoding");
  if (!j.contains("name") || j["name"] == "") j["name"] = zarr_format == 2 ? "v2" : "default";
  ChunkKeyEncoding e;
  try {
    e = ChunkKeyEncoding::from_json(j);
  } catch (const zarrpp::Error& err) {
    throw zarrpp::ArgumentError(err.what());
  }
  if (zarr_format == 2 && e.kind != ChunkKeyEncoding::Kind::V2)
    throw zarrpp::ArgumentError("chunk_key_encoding " + j.dump() + ": a Zarr v2 array's chunk keys are v2 keys");
  return e;
}

// The arguments as an ArraySpec: codec::build_chain (through Array::create) puts the chain
// together, with its defaults; nothing of the chain is decided here.
// A structured type's fill value as one element's bytes in native order: NumPy's conversion of a
// tuple (a list is one element's fields), a record or 0; or one element's bytes as zarr-python 2
// takes them, in the byte order of the type's fields (`big`).
std::string record_fill_bytes(const py::object& given, const DataType& t, bool big) {
  const auto np = py::module_::import("numpy");
  const py::dtype native = numpy_dtype(t);
  py::object value = given;
  if (py::isinstance<py::list>(value)) value = py::tuple(value);  // NumPy reads a list as elements
  if (py::isinstance(value, np.attr("void")) && value.attr("dtype").attr("names").is_none())
    value = value.attr("tobytes")();
  if (py::isinstance<py::bytes>(value) || py::isinstance(value, py::module_::import("builtins").attr("bytearray"))) {
    const py::dtype stated = native.attr("newbyteorder")(big ? ">" : "<").cast<py::dtype>();
    const auto n = py::len(value);
    if (n != static_cast<std::size_t>(stated.itemsize()))
      throw py::value_error("fill_value of " + std::to_string(n) + " bytes for dtype " +
                            py::str(py::object(stated)).cast<std::string>() + ": give one element, " +
                            std::to_string(stated.itemsize()) + " bytes");
    value = np.attr("frombuffer")(py::bytes(value), stated)[py::int_(0)];
  }
  return np.attr("array")(value, native).attr("tobytes")().cast<std::string>();
}

zarrpp::ArraySpec make_spec(const CreateArgs& a) {
  zarrpp::ArraySpec spec;
  spec.shape = a.shape;
  spec.chunks = a.chunks;
  spec.dtype = zarrpp::data_type_from_user(a.dtype);
  if (a.fill_value.is(py::module_::import("zarrpp._zarrpp").attr("NO_FILL_VALUE"))) {
    spec.fill_value = Json(nullptr);  // Zarr v2 only: .zarray states no fill value
  } else if (!a.fill_value.is_none()) {
    if (spec.dtype == DataType::bytes_t && py::isinstance<py::str>(a.fill_value))
      throw py::value_error("fill_value " + py::repr(a.fill_value).cast<std::string>() +
                            " is not valid for a bytes array: give bytes");
    if (spec.dtype.kind() == zarrpp::DataKind::Struct) {
      const std::string b = record_fill_bytes(a.fill_value, spec.dtype, a.endian == "big");
      spec.fill_value = zarrpp::base64_encode({reinterpret_cast<const std::uint8_t*>(b.data()), b.size()});
    } else if (spec.dtype.kind() == zarrpp::DataKind::Text && !py::isinstance<py::str>(a.fill_value) &&
               !py::isinstance<py::bytes>(a.fill_value)) {
      // Not text for a U<n> / S<n> array: NumPy's text of it (0 -> "0"), as NumPy assigns it.
      const auto np = py::module_::import("numpy");
      spec.fill_value =
          fill_value_json(np.attr("array")(a.fill_value, numpy_dtype(spec.dtype))[py::tuple()].attr("item")());
    } else if (spec.dtype.is_time() && !py::isinstance<py::int_>(a.fill_value)) {
      // A date, a duration, NaT or their text, as NumPy converts it to the array's unit.
      const auto np = py::module_::import("numpy");
      const auto v = np.attr("array")(a.fill_value, numpy_dtype(spec.dtype));
      spec.fill_value =
          py::bool_(np.attr("isnat")(v)) ? Json("NaT") : Json(v.attr("view")("i8").attr("item")().cast<std::int64_t>());
    } else {
      spec.fill_value = fill_value_json(a.fill_value);
    }
  }
  spec.dimension_names = a.dimension_names;
  spec.attributes = a.attributes.is_none() ? Json::object() : json_of(a.attributes, "attributes");
  spec.overwrite = a.overwrite;
  spec.lower_bound = a.lower_bound;
  spec.zarr_format = a.zarr_format;
  spec.chunk_key_encoding = key_encoding_of(a.key_encoding, a.zarr_format);
  spec.shards = a.shards;
  spec.chunk_sizes = a.chunk_sizes;
  spec.shard_sizes = a.shard_sizes;
  for (const auto& f : a.filters) spec.filters.push_back(to_codec(f));
  if (a.serializer)
    spec.serializer = to_codec(*a.serializer);
  else if (a.endian == "big")
    spec.endian = codec::Endian::big;
  if (a.compressors)
    for (const auto& c : *a.compressors) spec.compressors.push_back(to_codec(c));
  else
    spec.compressors = codec::default_compressors();
  if (a.order.size() != 1) throw zarrpp::ArgumentError("order: must be 'C' or 'F', got '" + a.order + "'");
  spec.order = a.order[0];
  return spec;
}

// Creating and opening arrays.
void bind_array_creation(py::module_& m) {
  // A new array's arguments, set by name (zarrpp._creation fills them from zarr-python's forms).
  py::class_<CreateArgs>(m, "ArrayArgs")
      .def(py::init([] {
        CreateArgs a;
        a.fill_value = py::none();
        a.attributes = py::none();
        return a;
      }))
      .def_readwrite("shape", &CreateArgs::shape)
      .def_readwrite("chunks", &CreateArgs::chunks, "the chunk shape (a shard's inner chunks when sharded)")
      .def_readwrite("dtype", &CreateArgs::dtype, "the core's name of the data type")
      .def_readwrite("fill_value", &CreateArgs::fill_value, "None: the default; NO_FILL_VALUE: Zarr v2's null")
      .def_readwrite("filters", &CreateArgs::filters, "(name, configuration) pairs")
      .def_readwrite("compressors", &CreateArgs::compressors, "(name, configuration) pairs; None: the default")
      .def_readwrite("serializer", &CreateArgs::serializer, "(name, configuration); None: bytes")
      .def_readwrite("shards", &CreateArgs::shards)
      .def_readwrite("dimension_names", &CreateArgs::dimension_names)
      .def_readwrite("attributes", &CreateArgs::attributes, "a dict of JSON values")
      .def_readwrite("overwrite", &CreateArgs::overwrite)
      .def_readwrite("lower_bound", &CreateArgs::lower_bound)
      .def_readwrite("endian", &CreateArgs::endian, "the bytes codec's: little or big")
      .def_readwrite("zarr_format", &CreateArgs::zarr_format)
      .def_readwrite("key_encoding", &CreateArgs::key_encoding,
                     "zarr.json's chunk_key_encoding (a dict); None: the default")
      .def_readwrite("order", &CreateArgs::order)
      .def_readwrite("chunk_sizes", &CreateArgs::chunk_sizes, "a rectilinear grid's chunk sizes per dimension")
      .def_readwrite("shard_sizes", &CreateArgs::shard_sizes, "a rectilinear grid's shard sizes per dimension");
  m.def(
      "create_array",
      [](StorePtr store, const std::string& path, const CreateArgs& args) {
        const auto spec = make_spec(args);
        return without_gil([&] { return Array::create(std::move(store), path, spec); });
      },
      "store"_a, "path"_a, "args"_a, "Creates the array `args` describes at `path` of `store`.");
  m.def(
      "open_array",
      [](StorePtr store, const std::string& path) {
        return without_gil([&] { return Array::open(std::move(store), path); });
      },
      "store"_a, "path"_a = "");
}

void bind_codecs_and_grids(py::module_& m) {
  m.def(
      "codec_role",
      [](const std::string& name) -> py::object {
        const auto r = codec::role_of(name);
        if (!r) return py::none();
        return py::str(*r == codec::Role::array_to_array   ? "array_to_array"
                       : *r == codec::Role::array_to_bytes ? "array_to_bytes"
                                                           : "bytes_to_bytes");
      },
      "name"_a);
  m.def("regular_chunk_shape", &zarrpp::regular_chunk_shape, "sizes"_a,
        "The chunk shape of a regular grid with these per-dimension sizes (all equal but a smaller last), "
        "or None.");
  m.def(
      "codec_defaults", [](const std::string& name) { return attrs_to_python(codec::default_config(name)); }, "name"_a,
      "A codec's default configuration (a dict), from its registry entry.");
}

}  // namespace zarrpp_python
