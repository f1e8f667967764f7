// _zarrpp: the compiled half of zarrpp's Python package. It exposes stores, arrays and groups;
// turns Python selection objects into the core's index expressions (which the core plans); moves data
// between NumPy buffers and zarrpp without extra copies; releases the GIL while zarrpp works; and
// turns zarrpp's exceptions into the Python exceptions users expect.
#include <pybind11/complex.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mapping_store.hpp"
#include "zarrpp/store/url.hpp"
#include "zarrpp/view/picture.hpp"
#include "zarrpp/zarrpp.hpp"

namespace py = pybind11;
using namespace pybind11::literals;

namespace {

using zarrpp::Array;
using zarrpp::DataType;
using zarrpp::Json;
using zarrpp::NDView;
using zarrpp::Shape;
using zarrpp::StorePtr;
namespace codec = zarrpp::codec;

// ---- exceptions ---------------------------------------------------------------------------------

// zarrpp::Error -> the built-in exception a NumPy / zarr-python user expects, chosen by the
// error's code (never by its message), with zarrpp's message.
PyObject* exception_for(zarrpp::ErrorCode code) {
  using C = zarrpp::ErrorCode;
  switch (code) {
    case C::not_found:
      return PyExc_FileNotFoundError;
    case C::index_out_of_bounds:
    case C::invalid_index:
      return PyExc_IndexError;
    case C::dtype_mismatch:
      return PyExc_TypeError;
    case C::invalid_selection:
    case C::shape_mismatch:
    case C::invalid_metadata:
    case C::unsupported:
    case C::wrong_node_type:
    case C::corrupt_data:
    case C::already_exists:
    case C::limit_exceeded:
    case C::read_only:  // as zarr-python: ValueError for a write to a read-only store
    case C::invalid_argument:
      return PyExc_ValueError;
    case C::store_failure:
    case C::invalid_key:
    case C::conflict:
      return PyExc_RuntimeError;
  }
  return PyExc_RuntimeError;
}

// An index outside the array: zarr-python's BoundsCheckError (an IndexError), from the package's
// errors module when it is there (the extension alone: IndexError).
PyObject* bounds_check_error() {
  static PyObject* type = [] {
    try {
      return py::object(py::module_::import("zarrpp.errors").attr("BoundsCheckError")).release().ptr();
    } catch (const py::error_already_set&) {
      return PyExc_IndexError;
    }
  }();
  return type;
}

// By value: pybind11's translator signature.
void translate(std::exception_ptr p) {  // NOLINT(performance-unnecessary-value-param)
  try {
    if (p) std::rethrow_exception(p);
  } catch (const zarrpp::Error& e) {
    PyErr_SetString(e.code() == zarrpp::ErrorCode::index_out_of_bounds ? bounds_check_error() : exception_for(e.code()),
                    e.what());
  }
}

// ---- progress -------------------------------------------------------------------------------------

bool is_finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing() != 0;
#else
  return _Py_IsFinalizing() != 0;
#endif
}

// A Python callable kept by C++ callbacks that run on worker threads: released with the GIL held
// (the last copy may go on a thread that does not hold it), or leaked once Python has shut down.
std::shared_ptr<py::object> hold_callable(py::object f) {
  return {new py::object(std::move(f)), [](py::object* p) {
            if (!Py_IsInitialized() || is_finalizing()) {  // taking the GIL then could hang
              (void)p->release();
            } else {
              const py::gil_scoped_acquire gil;
              *p = py::object();
            }
            delete p;
          }};
}

// Calls a held callable with the GIL; an exception it raises goes to sys.unraisablehook, since a
// progress callback must not throw into the operation (which goes on).
template <class... Args>
void call_held(const py::object& f, Args... args) {
  const py::gil_scoped_acquire gil;
  try {
    f(args...);
  } catch (py::error_already_set& e) {
    e.discard_as_unraisable("zarrpp progress callback");
  }
}

// The core's progress callback calling `f(objects, nbytes)`, or none for None.
zarrpp::ProgressCallback progress_callback(const py::object& f) {
  if (f.is_none()) return nullptr;
  auto held = hold_callable(f);
  return [held](const zarrpp::ProgressStep& s) { call_held(*held, s.objects, s.bytes); };
}

// ---- data types ---------------------------------------------------------------------------------

// The core's data-type table decides every name and rule; this converts between Python's
// objects and the core's spellings of them (NumPy's dtype.str, a structured type's descr as JSON).

// The NumPy dtype (native byte order) of a zarrpp data type.
py::dtype numpy_dtype(const DataType& t) {
  if (t.kind() != zarrpp::DataKind::Struct) return py::dtype(t.numpy_str());
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

}  // namespace

// dtype= in any form a function takes it: given_type's reading, decided by the core.
template <>
struct pybind11::detail::type_caster<zarrpp::NumpyType> {
  PYBIND11_TYPE_CASTER(zarrpp::NumpyType, const_name("numpy.typing.DTypeLike"));
  bool load(handle src, bool /*convert*/) {
    value = given_type(reinterpret_borrow<object>(src));
    return true;
  }
  static handle cast(const zarrpp::NumpyType& t, return_value_policy /*policy*/, handle /*parent*/) {
    return numpy_dtype(t.type).release();
  }
};

namespace {

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

// ---- index expressions: Python's selection objects as the core's IndexExpr ----------------------
// Only the conversion of Python objects lives here; what the items mean is the core's
// (zarrpp::plan_index).

constexpr std::int64_t kI64Max = INT64_MAX;

[[noreturn]] void index_error(const std::string& why) { throw py::index_error(why); }

// An integer (Python int, NumPy integer, anything with __index__); beyond int64 it is out of
// bounds of any array, or clamped (slice bounds, as NumPy clamps them).
std::int64_t to_index(const py::handle& h, bool clamp) {
  py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(h.ptr()));
  if (!i) throw py::error_already_set();
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (overflow == 0 && v != INT64_MIN) return v;
  if (!clamp) index_error("index " + py::str(i).cast<std::string>() + " is out of bounds for any array");
  return overflow < 0 || v == INT64_MIN ? -kI64Max : kI64Max;
}

zarrpp::Slice to_slice(const py::handle& h) {
  zarrpp::Slice s;
  auto part = [&](const char* name) -> std::optional<std::int64_t> {
    const py::object v = h.attr(name);
    if (v.is_none()) return std::nullopt;
    if (!PyIndex_Check(v.ptr()))
      index_error("slice indices must be integers or None, got " + py::repr(h).cast<std::string>());
    return to_index(v, true);
  };
  s.start = part("start");
  s.stop = part("stop");
  s.step = part("step").value_or(1);
  return s;
}

zarrpp::IndexItem to_index_tensor(const py::handle& h) {
  const auto np = py::module_::import("numpy");
  py::array a = np.attr("asarray")(h);
  zarrpp::Shape shape(a.shape(), a.shape() + a.ndim());
  const char kind = a.dtype().kind();
  if (kind == 'b') {
    auto b = py::array_t < std::uint8_t, py::array::c_style | py::array::forcecast > ::ensure(a.attr("view")("u1"));
    return zarrpp::MaskTensor{shape, std::vector<std::uint8_t>(b.data(), b.data() + b.size())};
  }
  if (kind == 'u' && a.dtype().itemsize() == 8 && a.size() > 0) {
    const py::object top = a.attr("max")();
    if (top.cast<std::uint64_t>() > static_cast<std::uint64_t>(kI64Max))
      index_error("index " + py::str(top).cast<std::string>() + " is out of bounds for any array");
  }
  if (kind != 'i' && kind != 'u' && (a.size() != 0 || py::isinstance<py::array>(h)))  // [] is float64 to NumPy
    index_error("arrays used as indices must be of integer or boolean type, got " +
                py::str(a.dtype()).cast<std::string>());
  auto i = py::array_t < std::int64_t, py::array::c_style | py::array::forcecast > ::ensure(a);
  return zarrpp::IndexTensor{shape, std::vector<std::int64_t>(i.data(), i.data() + i.size())};
}

zarrpp::IndexItem to_index_item(const py::handle& h) {
  if (h.is(py::ellipsis())) return zarrpp::ellipsis;
  if (h.is_none()) index_error("zarrpp does not support np.newaxis (None) in selections");
  const auto np = py::module_::import("numpy");
  if (PyBool_Check(h.ptr()) || py::isinstance(h, np.attr("bool_")))
    index_error("a scalar boolean is not a valid index for a zarrpp array");
  if (py::isinstance<py::slice>(h)) return to_slice(h);
  if (py::isinstance<py::array>(h) || py::isinstance<py::list>(h) || py::isinstance<py::tuple>(h) ||
      py::isinstance(h, py::module_::import("builtins").attr("range")) ||
      (py::hasattr(h, "__array__") && !py::isinstance<py::str>(h) && !py::isinstance<py::bytes>(h)))
    return to_index_tensor(h);
  if (PyIndex_Check(h.ptr())) return to_index(h, false);
  index_error("only integers, slices (`:`), ellipsis (`...`), and integer or boolean arrays are valid indices, got " +
              py::repr(h).cast<std::string>());
}

zarrpp::IndexExpr to_index_expr(const py::handle& selection) {
  zarrpp::IndexExpr expr;
  if (!py::isinstance<py::tuple>(selection)) {
    expr.push_back(to_index_item(selection));
    return expr;
  }
  for (const auto& h : py::reinterpret_borrow<py::tuple>(selection)) expr.push_back(to_index_item(h));
  return expr;
}

zarrpp::IndexMode index_mode(const std::string& mode) {
  using M = zarrpp::IndexMode;
  if (mode == "numpy") return M::numpy;
  if (mode == "basic") return M::basic;
  if (mode == "orthogonal") return M::orthogonal;
  if (mode == "vindex") return M::vindex;
  if (mode == "mask") return M::mask;
  if (mode == "blocks") return M::blocks;
  throw py::value_error("unknown index mode '" + mode + "'");
}

// ---- codecs -------------------------------------------------------------------------------------

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
  const auto cfg = parse_json(py::module_::import("json").attr("dumps")(spec[1]).cast<std::string>(), what.c_str());
  return zarrpp::CodecMetadata{name, cfg};
}

// fill_value= as JSON by its Python type only (bool, int, float, complex, str, bytes, sequences,
// NumPy scalars); what the value means for the data type is the core's (canonical_fill_value,
// parse_fill_value).
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
  StorePtr store;
  std::string path;
  Shape shape, chunks;
  std::string dtype;
  py::object fill_value;  // None: the default; _zarrpp.NO_FILL_VALUE: Zarr v2's null
  std::vector<py::tuple> filters;
  std::optional<std::vector<py::tuple>> compressors;  // None: the default ("auto")
  std::optional<Shape> shards;
  std::optional<std::vector<std::optional<std::string>>> dimension_names;
  std::string attributes_json;
  bool overwrite = false;
  std::optional<Shape> lower_bound;
  std::string endian = "little";
  int zarr_format = 3;
  std::string key_encoding;  // zarr.json's chunk_key_encoding; "" = the format's default
  std::optional<py::tuple> serializer;
  std::string order = "C";
  std::vector<std::vector<std::int64_t>> chunk_sizes, shard_sizes;  // a rectilinear grid
};

// The chunk key encoding asked for, as zarr.json states it (an empty name: the format's own
// encoding, with the separator given); "": the format's default.
zarrpp::ChunkKeyEncoding key_encoding_of(const std::string& text, int zarr_format) {
  using zarrpp::ChunkKeyEncoding;
  if (text.empty()) return zarr_format == 2 ? ChunkKeyEncoding::v2('.') : ChunkKeyEncoding::default_('/');
  Json j = parse_json(text, "chunk_key_encoding");
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
  spec.attributes = parse_json(a.attributes_json, "attributes");
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

// ---- stores -------------------------------------------------------------------------------------

std::string memory_repr(const zarrpp::Store& s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "MemoryStore('memory://%p')", static_cast<const void*>(&s));
  return buf;
}

// ---- arrays -------------------------------------------------------------------------------------

// Array accessors that return references into the array's current metadata snapshot stay valid
// only until the next metadata change (which another Python thread may make while the GIL is
// released). A copy of the Array pins its own snapshot, so read them from a copy.
Array pinned(const Array& a) {
  Array p(a);
  p.set_progress(a.progress());  // a `with z.progress()` block hears the reads made through the copy
  return p;
}

template <class F>
auto without_gil(F&& f) -> decltype(f());

// ---- variable-length elements: NumPy object arrays of str (string) or bytes (bytes) ----
// How an array's variable-length elements look in Python: str or bytes objects, and, for a Zarr v2
// object array whose fill value is not of its type, the object its missing elements read as
// (ArrayMetadata::missing_element: 0 or None, as zarr-python 2 returns them).
struct VlenForm {
  bool bytes = false;
  std::optional<py::object> missing;
};
py::object attrs_to_python(const Json& j);
VlenForm vlen_form(const Array& a) {
  const zarrpp::ArrayMetadata md = a.metadata();
  VlenForm f{md.data_type == DataType::bytes_t, std::nullopt};
  if (const Json* m = md.missing_element()) f.missing = attrs_to_python(*m);
  return f;
}

py::array vlen_to_numpy(const zarrpp::VlenValues& v, const VlenForm& form) {
  py::list items;
  for (std::size_t i = 0; i < v.values.size(); ++i) {
    const auto& x = v.values[i];
    if (!v.missing.empty() && v.missing[i] && form.missing)
      items.append(*form.missing);
    else if (form.bytes)
      items.append(py::bytes(x));
    else
      items.append(py::reinterpret_steal<py::object>(
          PyUnicode_DecodeUTF8(x.data(), static_cast<Py_ssize_t>(x.size()), "strict")));
  }
  py::array flat = py::module_::import("numpy").attr("empty")(items.size(), "dtype"_a = "O");
  for (std::size_t i = 0; i < v.values.size(); ++i) flat[py::int_(i)] = items[i];
  return flat.attr("reshape")(to_tuple(v.shape));
}

// Whether `o` is the array's missing element (the same type and value: 0, not 0.0 or False).
bool is_missing(const py::handle& o, const VlenForm& form) {
  if (!form.missing) return false;
  if (form.missing->is_none()) return o.is_none();
  return py::type::of(o).is(py::type::of(*form.missing)) && o.equal(*form.missing);
}

zarrpp::VlenValues numpy_to_vlen(const py::handle& data, const VlenForm& form) {
  auto np = py::module_::import("numpy");
  py::array arr = np.attr("asarray")(data, "dtype"_a = "O");
  zarrpp::VlenValues v;
  for (py::ssize_t d = 0; d < arr.ndim(); ++d) v.shape.push_back(arr.shape(d));
  py::list flat = arr.attr("ravel")().attr("tolist")();
  v.values.reserve(flat.size());
  for (std::size_t i = 0; i < flat.size(); ++i) {
    const py::handle o = flat[i];
    if (is_missing(o, form)) {
      // stored as the empty element, as numcodecs' VLenUTF8 / VLenBytes store it
      if (v.missing.empty()) v.missing.resize(flat.size());
      v.missing[i] = true;
      v.values.emplace_back();
    } else if (form.bytes) {
      if (!py::isinstance<py::bytes>(o) && !PyByteArray_Check(o.ptr()))
        throw py::type_error("a bytes array takes bytes objects, got " +
                             py::str(py::type::of(o).attr("__name__")).cast<std::string>());
      v.values.push_back(py::reinterpret_steal<py::bytes>(PyBytes_FromObject(o.ptr())).cast<std::string>());
    } else {
      if (!py::isinstance<py::str>(o))
        throw py::type_error("a string array takes str objects, got " +
                             py::str(py::type::of(o).attr("__name__")).cast<std::string>());
      v.values.push_back(o.cast<std::string>());
    }
  }
  return v;
}

// Selections are zero-based, or with `coords` in the domain's coordinates (Array::Coords).
// The elements of a read as Python sees them: an array of str/bytes objects for a variable-length
// data type, else the NumPy array itself.
py::array to_python(zarrpp::Elements&& e, const Array& a) {
  if (auto* v = std::get_if<zarrpp::VlenValues>(&e)) return vlen_to_numpy(*v, vlen_form(a));
  return to_numpy(std::move(std::get<zarrpp::NDArray>(e)));
}

// A write's or a growth's data as the core takes it: str/bytes objects copied into VlenValues for
// a variable-length data type, numeric data viewed where it is.
class ElementsIn {
 public:
  ElementsIn(const Array& a, const py::array& data) {
    if (a.dtype().is_vlen())
      vlen_ = numpy_to_vlen(data, vlen_form(a));
    else
      view_ = view_of(data);
  }
  zarrpp::ElementsRef ref() const { return vlen_ ? zarrpp::ElementsRef(*vlen_) : zarrpp::ElementsRef(*view_); }

 private:
  std::optional<zarrpp::VlenValues> vlen_;
  std::optional<NDView> view_;
};

py::array read_selection(const Array& a, const zarrpp::Selection& sel, bool coords) {
  if (a.dtype().is_vlen())
    return to_python(without_gil([&] { return a.read(coords ? a.coords().plan(sel) : a.plan(sel)); }), a);
  // A coordinate selection outside the domain this handle knows re-reads the metadata: let that
  // refresh the handle itself, not only the pinned copy.
  if (coords) without_gil([&] { a.coords().selection_shape(sel); });
  const Array snap = pinned(a);  // one snapshot for the shape and the read
  const Shape shape =
      without_gil([&] { return coords ? snap.coords().selection_shape(sel) : snap.selection_shape(sel); });
  py::array out(numpy_dtype(snap.dtype()), std::vector<py::ssize_t>(shape.begin(), shape.end()));
  const NDView view = writable_view_of(out);
  {
    py::gil_scoped_release nogil;
    // A fresh array: read_into maps its pages in by the threads in contiguous parts before the fill.
    if (coords)
      snap.coords().read_into(sel, view);
    else
      snap.read_into(sel, view);
  }
  return out;
}

// z[...], z.oindex, z.vindex, z.blocks, the selection methods and z.coords: the expression planned
// by the core on one snapshot, then run on it (orthogonal numeric reads straight into a new NumPy
// array). `out`: the result copied into (or, when it fits, read straight into) the caller's array.
py::object put_out(const py::array& result, const py::object& out) {
  if (out.is_none()) return result;
  const py::object want = result.attr("shape");
  if (!py::isinstance<py::array>(out) || !py::object(out.attr("shape")).equal(want)) {
    const py::object got = py::hasattr(out, "shape") ? out.attr("shape") : py::type::of(out).attr("__name__");
    throw py::value_error("out: expected a NumPy array of shape " + py::repr(want).cast<std::string>() + ", got " +
                          py::str(got).cast<std::string>());
  }
  py::module_::import("numpy").attr("copyto")(out, result, "casting"_a = "same_kind");
  return out;
}

bool fits_out(const Array& a, const py::object& out) {
  if (a.dtype().is_vlen() || !py::isinstance<py::array>(out)) return false;
  const auto o = py::reinterpret_borrow<py::array>(out);
  return o.dtype().equal(numpy_dtype(a.dtype())) && o.attr("flags").attr("c_contiguous").cast<bool>() && o.writeable();
}

py::object get_index(const Array& a, const py::object& selection, const std::string& mode, bool coords,
                     const py::object& out) {
  const auto expr = to_index_expr(selection);
  const Array snap = pinned(a);  // one snapshot for the plan and the read (coords: see read_selection)
  const auto plan = without_gil([&] { return zarrpp::plan_index(expr, snap.shape(), index_mode(mode), coords); });
  py::array result;
  if (plan.kind == zarrpp::IndexPlan::Kind::orthogonal) {
    if (!out.is_none() && !coords && fits_out(snap, out)) {
      const auto want = to_tuple(without_gil([&] { return snap.selection_shape(plan.selection); }));
      if (py::object(out.attr("shape")).equal(want)) {
        py::array o = py::reinterpret_borrow<py::array>(out);
        const NDView view = writable_view_of(o);
        without_gil([&] { snap.read_into(plan.selection, view); });
        return out;
      }
    }
    result = read_selection(coords ? a : snap, plan.selection, coords);
  } else {
    const Array& on = coords ? a : snap;  // (coords: see read_selection)
    result = to_python(without_gil([&] { return on.read(plan); }), snap);
  }
  if (plan.scalar && out.is_none()) return result[py::tuple()];
  return put_out(result, out);
}

void set_index(Array& a, const py::object& selection, const py::array& data, const std::string& mode, bool coords) {
  const auto expr = to_index_expr(selection);
  // The plan is made on the shape the array has now and written through: another thread's growth
  // in between makes the write refuse the plan (ConflictError) rather than write other elements.
  const auto plan = without_gil([&] { return zarrpp::plan_index(expr, pinned(a).shape(), index_mode(mode), coords); });
  const ElementsIn in(a, data);
  without_gil([&] { a.write(plan, in.ref()); });
}

template <class F>
auto without_gil(F&& f) -> decltype(f()) {
  py::gil_scoped_release nogil;
  return f();
}

// Through Python's json module, so NaN/Infinity come back as floats and a lone surrogate (held as
// WTF-8) as the str json.loads gives for "\udcff".
py::object attrs_to_python(const Json& j) { return py::module_::import("json").attr("loads")(zarrpp::json_text(j)); }

// ---- groups -------------------------------------------------------------------------------------

const char* type_name(zarrpp::NodeType t) { return t == zarrpp::NodeType::Array ? "array" : "group"; }

// ---- the module, bound a part at a time -------------------------------------------------------

// zarrpp's warnings as Python warnings.
void route_warnings() {
  // zarrpp's warnings become warnings.warn(message, zarrpp.ZarrppWarning), raised on the calling
  // thread where zarrpp made them (so "-W error" turns them into the exception of the call).
  zarrpp::set_warning_handler([](const std::string& message) {
    if (!Py_IsInitialized()) {
      std::fprintf(stderr, "zarrpp: warning: %s\n", message.c_str());
      return;
    }
    py::gil_scoped_acquire gil;
    py::object category = py::reinterpret_borrow<py::object>(PyExc_UserWarning);
    try {
      category = py::module_::import("zarrpp").attr("ZarrppWarning");
    } catch (const py::error_already_set&) {
      // _zarrpp used without its package: a UserWarning then
    }
    if (PyErr_WarnEx(category.ptr(), message.c_str(), 2) != 0) throw py::error_already_set();
  });
}

// A store value as bytes, whole or a range of it: kind "all", "range" ([a, b)), "offset" (from a)
// or "suffix" (the last a bytes); None when the key does not exist.
py::object store_get(zarrpp::Store& s, const std::string& key, const std::string& kind, std::uint64_t a,
                     std::uint64_t b) {
  zarrpp::ByteRange range;
  if (kind == "range") {
    if (b < a)
      throw zarrpp::ArgumentError("byte range: end " + std::to_string(b) + " before start " + std::to_string(a));
    range = zarrpp::ByteRange::range(a, b - a);
  } else if (kind == "offset") {
    range = zarrpp::ByteRange::from(a);
  } else if (kind == "suffix") {
    range = zarrpp::ByteRange::last(a);
  } else if (kind != "all") {
    throw zarrpp::ArgumentError("byte range: unknown kind '" + kind + "'");
  }
  auto v = without_gil([&] { return s.get(key, range); });
  if (!v) return py::none();
  return py::bytes(reinterpret_cast<const char*>(v->data()), v->size());
}

// The store at an s3:// or http(s):// URL with fsspec-style storage_options (or the AWS_*
// environment variables, as the C++ stores read them).
zarrpp::StorePtr open_remote(const std::string& url, const py::dict& options, bool read_only) {
  zarrpp::OpenStoreOptions o;
  o.s3.read_only = read_only;
  o.file.read_only = read_only;
  auto text = [](const py::handle& v, const std::string& k) {
    if (!py::isinstance<py::str>(v)) throw zarrpp::ArgumentError("storage_options: '" + k + "' must be a string");
    return v.cast<std::string>();
  };
  for (const auto& [kh, v] : options) {
    const std::string k = py::str(kh);
    if (k == "endpoint_url" || k == "endpoint")
      o.s3.endpoint = text(v, k);
    else if (k == "region" || k == "region_name")
      o.s3.region = text(v, k);
    else if (k == "key" || k == "access_key_id" || k == "aws_access_key_id")
      o.s3.access_key_id = text(v, k);
    else if (k == "secret" || k == "secret_access_key" || k == "aws_secret_access_key")
      o.s3.secret_access_key = text(v, k);
    else if (k == "token" || k == "session_token" || k == "aws_session_token")
      o.s3.session_token = text(v, k);
    else if (k == "anon") {
      if (!py::isinstance<py::bool_>(v)) throw zarrpp::ArgumentError("storage_options: 'anon' must be True or False");
      o.s3.anonymous = v.cast<bool>();
    } else if (k == "headers") {
      if (!py::isinstance<py::dict>(v))
        throw zarrpp::ArgumentError("storage_options: 'headers' must be a dict of str -> str");
      for (const auto& [hk, hv] : v.cast<py::dict>())
        o.http.headers.emplace_back(text(hk, "headers"), text(hv, "headers"));
    } else if (zarrpp::RemoteOptions::is_option(k)) {
      // Network bounds (seconds; max_attempts a count), checked by the C++ rules the CLI uses.
      if (py::isinstance<py::bool_>(v) || !(py::isinstance<py::int_>(v) || py::isinstance<py::float_>(v)))
        throw zarrpp::ArgumentError("storage_options: '" + k + "' must be a number");
      const double x = v.cast<double>();
      try {
        o.s3.net.set(k, x);
        o.http.net.set(k, x);
      } catch (const zarrpp::ArgumentError& e) {
        throw zarrpp::ArgumentError(std::string("storage_options: ") + e.what());
      }
    } else {
      std::string names = "endpoint_url, region, key, secret, token, anon, headers";
      for (const auto& n : zarrpp::RemoteOptions::option_names()) names += ", " + n;
      throw zarrpp::ArgumentError("storage_options: unknown option '" + k + "' (zarrpp takes " + names + ")");
    }
  }
  py::gil_scoped_release nogil;
  try {
    return zarrpp::open_store(url, o);
  } catch (const zarrpp::StoreError& e) {
    // Opening makes no request: what fails here is the URL or an option (a ValueError).
    throw zarrpp::ArgumentError(e.what());
  }
}

// A remote store of type S made from a URL (a Python subclass's __init__): a URL of another kind is
// refused, naming the class that takes it.
template <class S>
std::shared_ptr<S> remote_of(const std::string& url, const py::dict& options, bool read_only, const char* scheme) {
  auto s = std::dynamic_pointer_cast<S>(open_remote(url, options, read_only));
  if (!s) throw zarrpp::ArgumentError(std::string("'") + url + "' is not a " + scheme + " URL");
  return s;
}

// Stores: memory, local, HTTP, S3, and opening one by URL.
void bind_stores(py::module_& m) {
  // ---- stores ----
  // The primitives zarrpp.storage builds zarr-python's store methods from (storage.py).
  py::class_<zarrpp::Store, std::shared_ptr<zarrpp::Store>>(
      m, "Store",
      "The base of every store: keys to byte values, with zarr-python's store methods (get, set, "
      "delete, exists, list, ...). Open one with LocalStore, MemoryStore, ZipStore or a URL.")
      .def("describe", &zarrpp::Store::describe,
           "A short description for messages (\"file:///data/x.zarr\", \"memory\").")
      .def("_location", &zarrpp::Store::location)
      .def_property_readonly(
          "read_only", [](const zarrpp::Store& s) { return !s.capabilities().writable; }, "Whether writes are refused.")
      .def_property_readonly(
          "supports_listing", [](const zarrpp::Store& s) { return s.capabilities().listing; },
          "Whether the store can list its keys.")
      .def("_get", &store_get, "key"_a, "kind"_a = "all", "a"_a = 0, "b"_a = 0,
           "The value of `key` (kind all; range [a, b); from offset a; suffix: the last a bytes) or None.")
      .def(
          "_set",
          [](zarrpp::Store& s, const std::string& key, const py::buffer& value, bool if_absent) {
            const py::buffer_info info = value.request();
            const auto* p = static_cast<const std::uint8_t*>(info.ptr);
            zarrpp::Bytes v(p, p + info.size * info.itemsize);
            return without_gil([&] {
              return if_absent ? s.set(key, v, zarrpp::WriteOptions::if_equal(std::nullopt)) : s.set(key, v);
            });
          },
          "key"_a, "value"_a, "if_absent"_a = false)
      .def(
          "_exists",
          [](zarrpp::Store& s, const std::string& key) { return without_gil([&] { return s.exists(key); }); }, "key"_a)
      .def(
          "_size", [](zarrpp::Store& s, const std::string& key) { return without_gil([&] { return s.size(key); }); },
          "key"_a)
      .def(
          "_delete", [](zarrpp::Store& s, const std::string& key) { without_gil([&] { s.erase(key); }); }, "key"_a)
      .def(
          "_delete_prefix",
          [](zarrpp::Store& s, const std::string& prefix) { without_gil([&] { s.erase_prefix(prefix); }); }, "prefix"_a)
      .def(
          "_list_prefix",
          [](zarrpp::Store& s, const std::string& prefix) {
            return without_gil([&] { return s.list_prefix(prefix); });
          },
          "prefix"_a = "", "Every key starting with `prefix`, sorted.")
      .def(
          "_list_dir",
          [](zarrpp::Store& s, const std::string& prefix) {
            auto d = without_gil([&] { return s.list_dir(prefix); });
            return py::make_tuple(d.keys, d.prefixes);
          },
          "prefix"_a = "", "(keys, prefixes) directly under `prefix` (\"\" or ending in '/').");
  py::class_<zarrpp::MemoryStore, zarrpp::Store, std::shared_ptr<zarrpp::MemoryStore>>(m, "MemoryStore")
      .def(py::init([](const std::shared_ptr<zarrpp::MemoryStore>& share, bool read_only) {
             // a new store, or a view of `share`'s keys and values
             return share ? share->with_read_only(read_only) : zarrpp::MemoryStore::create()->with_read_only(read_only);
           }),
           "share"_a = nullptr, "read_only"_a = false)
      .def("_with_read_only", &zarrpp::MemoryStore::with_read_only, "read_only"_a)
      .def("_shares_data_with", &zarrpp::MemoryStore::shares_data_with, "other"_a)
      .def("__repr__", [](const zarrpp::MemoryStore& s) { return memory_repr(s); });
  // A Python mapping (zarr-python's store={}): see mapping_store.hpp.
  py::class_<zarrpp_python::MappingStore, zarrpp::Store, std::shared_ptr<zarrpp_python::MappingStore>>(
      m, "MappingStore", py::dynamic_attr())
      .def(py::init([](py::object mapping, bool read_only) {
             return std::make_shared<zarrpp_python::MappingStore>(std::move(mapping), read_only);
           }),
           "mapping"_a, "read_only"_a = false)
      .def_property_readonly("mapping", &zarrpp_python::MappingStore::mapping)
      .def("__repr__", [](const zarrpp_python::MappingStore& s) { return "MappingStore(" + s.describe() + ")"; });
  // A folder inside another store (a memory:// URL with a path), with `read_only` settable.
  py::class_<zarrpp::PrefixStore, zarrpp::Store, std::shared_ptr<zarrpp::PrefixStore>>(m, "PrefixStore",
                                                                                       py::dynamic_attr())
      .def(py::init([](const zarrpp::StorePtr& inner, const std::string& path, bool read_only) {
             return std::make_shared<zarrpp::PrefixStore>(inner, path, read_only);
           }),
           // the inner store's Python object lives as long as the view, so `inner` returns it
           "inner"_a, "path"_a, "read_only"_a = false, py::keep_alive<1, 2>())
      .def_property_readonly("inner", &zarrpp::PrefixStore::inner)
      .def_property_readonly("path", &zarrpp::PrefixStore::prefix)
      .def("__repr__", [](const zarrpp::PrefixStore& s) { return "PrefixStore('" + s.location() + "')"; });
  py::class_<zarrpp::FileStore, zarrpp::Store, std::shared_ptr<zarrpp::FileStore>>(m, "LocalStore")
      .def(py::init([](const std::filesystem::path& root, bool read_only) {
             return zarrpp::FileStore::open(root,
                                            zarrpp::FileStore::Options{.create = !read_only, .read_only = read_only});
           }),
           "root"_a, "read_only"_a = false)
      .def_property_readonly(
          "root", [](const zarrpp::FileStore& s) { return s.root(); }, "The folder the store is rooted at.")
      .def("__repr__", [](const zarrpp::FileStore& s) { return "LocalStore('" + s.root().string() + "')"; });

  // A zip file (zarr-python's ZipStore): writes are staged until commit()/close().
  py::class_<zarrpp::ZipStore, zarrpp::Store, std::shared_ptr<zarrpp::ZipStore>>(m, "ZipStore", py::dynamic_attr())
      .def(py::init([](const std::filesystem::path& path, const std::string& mode, bool deflate, double lock_timeout) {
             if (!(lock_timeout >= 0 && lock_timeout <= 1e7))
               throw zarrpp::ArgumentError(
                   "ZipStore: lock_timeout must be a number of seconds (0 or more, at most 1e7)");
             const zarrpp::ZipStore::Options o{
                 .mode = zarrpp::ZipStore::parse_mode(mode),
                 .compression =
                     deflate ? zarrpp::ZipStore::Compression::deflated : zarrpp::ZipStore::Compression::stored,
                 .lock_timeout = std::chrono::milliseconds(static_cast<std::int64_t>(lock_timeout * 1000))};
             try {
               py::gil_scoped_release nogil;
               return zarrpp::ZipStore::open(path, o);
             } catch (const zarrpp::StoreError& e) {
               if (e.code() != zarrpp::ErrorCode::already_exists) throw;
               PyErr_SetString(PyExc_FileExistsError, e.what());  // as zipfile's mode "x"
               throw py::error_already_set();
             }
           }),
           "path"_a, "mode"_a = "r", "deflate"_a = false, "lock_timeout"_a = 60.0)
      .def(
          "commit", [](zarrpp::ZipStore& s) { without_gil([&] { s.commit(); }); },
          "Writes the staged changes into the archive; readers of the file see the old archive or the new one.")
      .def("_close", [](zarrpp::ZipStore& s) { without_gil([&] { s.close(); }); })
      .def_property_readonly("_closed", &zarrpp::ZipStore::closed)
      .def_property_readonly("_path", [](const zarrpp::ZipStore& s) { return s.path(); })
      .def("__repr__", [](const zarrpp::ZipStore& s) { return "ZipStore('" + s.path().string() + "')"; });

  // Remote stores: opened from a URL (s3://bucket/prefix, http(s)://host/path) with zarr-python's
  // fsspec-style storage_options, or the AWS_* environment variables as the C++ stores read them.
  py::class_<zarrpp::HttpStore, zarrpp::Store, std::shared_ptr<zarrpp::HttpStore>>(
      m, "HttpStore", "A read-only store over HTTP(S), from an http(s):// URL (zarrpp.storage.open_url).",
      py::dynamic_attr())
      .def(py::init([](const std::string& url, const py::dict& options, bool read_only) {
             return remote_of<zarrpp::HttpStore>(url, options, read_only, "http(s)://");
           }),
           "url"_a, "storage_options"_a = py::dict(), "read_only"_a = false)
      .def("__repr__", [](const zarrpp::HttpStore& s) { return "HttpStore('" + s.location() + "')"; });
  py::class_<zarrpp::S3Store, zarrpp::Store, std::shared_ptr<zarrpp::S3Store>>(
      m, "S3Store", "A store in an S3 bucket, from an s3:// URL and storage_options (zarrpp.storage.open_url).",
      py::dynamic_attr())
      .def(py::init([](const std::string& url, const py::dict& options, bool read_only) {
             return remote_of<zarrpp::S3Store>(url, options, read_only, "s3://");
           }),
           "url"_a, "storage_options"_a = py::dict(), "read_only"_a = false)
      .def_property_readonly("bucket", &zarrpp::S3Store::bucket, "The bucket's name.")
      .def_property_readonly("prefix", &zarrpp::S3Store::prefix, "The folder in the bucket (\"\" for its root).")
      .def_property_readonly("endpoint", &zarrpp::S3Store::endpoint, "The server's URL.")
      .def("__repr__", [](const zarrpp::S3Store& s) { return "S3Store('" + s.location() + "')"; });
  // Where a store string points, as the core reads it for every front end (zarrpp::locate_store):
  // Python makes its own store objects from the answer.
  m.def(
      "locate_store",
      [](const std::string& text, bool new_zip_files) {
        zarrpp::StoreLocation at;
        try {
          at = zarrpp::locate_store(text, new_zip_files);
        } catch (const zarrpp::StoreError& e) {
          throw zarrpp::ArgumentError(e.what());  // the string names no store: a ValueError
        }
        static constexpr const char* kinds[] = {"directory", "zip", "memory", "http", "s3"};
        py::dict d;
        d["kind"] = kinds[static_cast<int>(at.kind)];
        d["path"] = at.path.string();
        d["inner"] = at.inner;
        d["name"] = at.name;
        d["new_zip"] = at.new_zip;
        return d;
      },
      "text"_a, "new_zip_files"_a = false,
      "Where a store string points: {'kind': 'directory'|'zip'|'memory'|'http'|'s3', 'path', 'inner', 'name', "
      "'new_zip'}.");
  m.def("named_memory_store", &zarrpp::MemoryStore::named, "name"_a, "The process-wide memory store memory://NAME.");
  m.def("forget_named_memory_store", &zarrpp::MemoryStore::forget_named, "name"_a,
        "Drops the memory store memory://NAME; whether there was one.");
}

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
      .def_property_readonly("fill_value_json", [](const Array& a) { return zarrpp::json_text(a.fill_value_json()); })
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
          [](const Array& a, const std::string& attr_json) -> py::object {
            const auto b = zarrpp::xarray_fill_from_attribute(parse_json(attr_json, "_FillValue"), pinned(a).dtype());
            if (!b) return py::none();
            return py::bytes(reinterpret_cast<const char*>(b->data()), b->size());
          },
          "attr_json"_a,
          "The element (bytes) an xarray-encoded _FillValue attribute states, or None when it is plain JSON.")
      .def_property_readonly("metadata_json",
                             [](const Array& a) {
                               const auto md = pinned(a).metadata();
                               return zarrpp::json_text(md.zarr_format == 2 ? md.to_v2_json() : md.to_json());
                             })
      .def_property_readonly("codecs_json",
                             [](const Array& a) {
                               Json cs = Json::array();
                               for (const auto& c : pinned(a).metadata().codecs) cs.push_back(c.to_json());
                               return zarrpp::json_text(cs);
                             })
      // zarr-python's filters / serializer / compressors (inside the shard when sharded; a
      // checksum is the last compressor), as codec::split_chain divides the chain.
      .def_property_readonly(
          "codec_parts_json",
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
            return zarrpp::json_text(Json::object(
                {{"filters", list(parts.filters)},
                 {"serializer",
                  parts.serializer ? codec::to_metadata(*parts.serializer, md.data_type).to_json() : Json()},
                 {"compressors", compressors}}));
          })
      .def_property_readonly("zarr_format", [](const Array& a) { return pinned(a).metadata().zarr_format; })
      .def_property_readonly("v2_dtype",
                             [](const Array& a) {
                               const auto& d = pinned(a).metadata().v2.dtype;
                               return d.is_string() ? d.get<std::string>() : zarrpp::json_text(d);
                             })
      .def_property_readonly("v2_order", [](const Array& a) { return std::string(1, pinned(a).metadata().v2.order); })
      .def_property_readonly("path", [](const Array& a) { return a.path(); })
      .def_property_readonly("store", [](const Array& a) { return a.store(); })
      .def("attributes", [](const Array& a) { return attrs_to_python(pinned(a).attributes()); })
      .def_property_readonly("generation", &Array::generation)
      .def("set_attributes_json",
           [](Array& a, const std::string& j) {
             const Json attrs = parse_json(j, "attributes");
             without_gil([&] { a.set_attributes(attrs); });
           })
      .def("update_attributes_json",
           [](Array& a, const std::string& j) {
             const Json patch = parse_json(j, "attributes");
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

// Reading and writing selections.
void bind_array_selections(py::class_<Array>& cls) {
  // `coords=True`: every index is a coordinate of the domain (Array::Coords), not zero-based.
  cls.def(
         "read",
         [](const Array& a, const py::object& sel, bool coords) {
           const auto plan = zarrpp::plan_index(to_index_expr(sel), a.shape(), zarrpp::IndexMode::basic, coords);
           return read_selection(a, plan.selection, coords);
         },
         "selection"_a, "coords"_a = false,
         "Reads integers and slices into a new NumPy array (0-d for all integers: no scalar).")
      .def("get", &get_index, "selection"_a, "mode"_a = "numpy", "coords"_a = false, "out"_a = py::none(),
           "Reads any selection Python's indexing takes (mode: numpy, basic, orthogonal, vindex, mask, blocks).")
      .def("set", &set_index, "selection"_a, "data"_a, "mode"_a = "numpy", "coords"_a = false,
           "Writes data (of the selection's shape, or broadcast to it) to a selection.");
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

// Creating and opening arrays.
void bind_array_creation(py::module_& m) {
  m.def(
      "create_array",
      [](StorePtr store, std::string path, Shape shape, Shape chunks, std::string dtype, py::object fill_value,
         std::vector<py::tuple> filters, std::optional<std::vector<py::tuple>> compressors, std::optional<Shape> shards,
         std::optional<std::vector<std::optional<std::string>>> dimension_names, std::string attributes_json,
         bool overwrite, std::optional<Shape> lower_bound, std::string endian, int zarr_format,
         std::string key_encoding, std::optional<py::tuple> serializer, std::string order,
         std::vector<std::vector<std::int64_t>> chunk_sizes, std::vector<std::vector<std::int64_t>> shard_sizes) {
        CreateArgs args{std::move(store),
                        std::move(path),
                        std::move(shape),
                        std::move(chunks),
                        std::move(dtype),
                        std::move(fill_value),
                        std::move(filters),
                        std::move(compressors),
                        std::move(shards),
                        std::move(dimension_names),
                        std::move(attributes_json),
                        overwrite,
                        std::move(lower_bound),
                        std::move(endian),
                        zarr_format,
                        std::move(key_encoding),
                        std::move(serializer),
                        std::move(order),
                        std::move(chunk_sizes),
                        std::move(shard_sizes)};
        const auto spec = make_spec(args);
        return without_gil([&] { return Array::create(args.store, args.path, spec); });
      },
      "store"_a, "path"_a, "shape"_a, "chunks"_a, "dtype"_a, "fill_value"_a, "filters"_a, "compressors"_a, "shards"_a,
      "dimension_names"_a, "attributes_json"_a, "overwrite"_a, "lower_bound"_a, "endian"_a, "zarr_format"_a = 3,
      "key_encoding"_a = "", "serializer"_a = py::none(), "order"_a = "C",
      "chunk_sizes"_a = std::vector<std::vector<std::int64_t>>{},
      "shard_sizes"_a = std::vector<std::vector<std::int64_t>>{});
  m.def(
      "open_array",
      [](StorePtr store, const std::string& path) {
        return without_gil([&] { return Array::open(std::move(store), path); });
      },
      "store"_a, "path"_a = "");
}

// Groups.
void bind_groups(py::module_& m) {
  py::class_<zarrpp::Group>(m, "Group")
      .def_property_readonly("path", &zarrpp::Group::path)
      .def_property_readonly("store", &zarrpp::Group::store)
      .def("attributes", [](const zarrpp::Group& g) { return attrs_to_python(g.attributes()); })
      .def_property_readonly("generation", &zarrpp::Group::generation)
      .def("set_attributes_json",
           [](zarrpp::Group& g, const std::string& j) { g.set_attributes(parse_json(j, "attributes")); })
      .def("update_attributes_json",
           [](zarrpp::Group& g, const std::string& j) { g.update_attributes(parse_json(j, "attributes")); })
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

// Groups and nodes by path, codecs by name, paths.
void bind_nodes(py::module_& m) {
  m.def(
      "create_group",
      [](StorePtr store, const std::string& path, const std::string& attributes_json, bool overwrite, int zarr_format) {
        return zarrpp::Group::create(std::move(store), path, parse_json(attributes_json, "attributes"), overwrite,
                                     zarr_format);
      },
      "store"_a, "path"_a, "attributes_json"_a, "overwrite"_a, "zarr_format"_a = 3);
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
      [](const StorePtr& store, const std::string& path, const std::string& document, const std::string& attributes,
         bool overwrite) {
        const Json doc = Json::parse(document);
        const zarrpp::ArrayMetadata meta = doc.is_object() && doc.value("zarr_format", 3) == 2
                                               ? codec::from_v2_document(doc, Json::parse(attributes))
                                               : zarrpp::ArrayMetadata::from_json(doc);
        return without_gil([&] { return Array::create(store, path, meta, overwrite); });
      },
      "store"_a, "path"_a, "document"_a, "attributes"_a = "null", "overwrite"_a = false,
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
      "remove_node", [](const StorePtr& store, const std::string& path) { zarrpp::remove_node(store, path); },
      "store"_a, "path"_a);
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
  m.def(
      "index_plan_kind",
      [](const py::object& selection, const Shape& shape, const std::string& mode) {
        const auto plan = zarrpp::plan_index(to_index_expr(selection), shape, index_mode(mode));
        using K = zarrpp::IndexPlan::Kind;
        switch (plan.kind) {
          case K::points:
            return "points";
          case K::mask:
            return "mask";
          case K::gather:
            return "gather";
          case K::blocks:
            return "blocks";
          case K::orthogonal:
            break;
        }
        return "orthogonal";
      },
      "selection"_a, "shape"_a, "mode"_a = "numpy",
      "How the core plans a selection on an array of this shape (orthogonal, points, mask, gather, blocks).");
  m.def("regular_chunk_shape", &zarrpp::regular_chunk_shape, "sizes"_a,
        "The chunk shape of a regular grid with these per-dimension sizes (all equal but a smaller last), "
        "or None.");
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
      "codec_defaults", [](const std::string& name) { return zarrpp::json_text(codec::default_config(name)); },
      "name"_a, "A codec's default configuration (JSON text), from its registry entry.");
  m.def(
      "xarray_fill_attribute",
      [](const zarrpp::NumpyType& dtype, const py::object& value) -> py::object {
        const DataType t = dtype.type;
        const auto bytes = zarrpp::parse_fill_value(zarrpp::canonical_fill_value(fill_value_json(value), t), t);
        const auto j = zarrpp::xarray_fill_attribute(bytes, t);
        return j ? py::object(py::str(zarrpp::json_text(*j))) : py::none();
      },
      "dtype"_a, "value"_a,
      "xarray's encoding (JSON text) of a Zarr v3 array's _FillValue attribute, or None for types it has none for.");
  m.def("parse_dtype", &parse_dtype, "dtype"_a,
        "dtype= as (the NumPy dtype in native byte order, the core's data type name, the bytes codec's endian).");
  m.def(
      "data_type_name", [](const zarrpp::NumpyType& dtype) { return dtype.type.name(); }, "dtype"_a,
      "The zarrpp data type of a dtype= by name (U12, datetime64[ns], int32).");
  m.def("normalize_path", [](const std::string& path) { return zarrpp::normalize_node_path(path); }, "path"_a);
}

}  // namespace

PYBIND11_MODULE(_zarrpp, m) {
  m.doc() = "zarrpp's compiled core; use the zarrpp package instead.";
  m.attr("__version__") = zarrpp::kVersion;
  // create_array's fill_value for "no fill value" (Zarr v2's null; zarr-python 3's explicit None).
  m.attr("NO_FILL_VALUE") = py::module_::import("builtins").attr("object")();
  py::register_exception_translator(&translate);
  route_warnings();
  bind_stores(m);
  py::class_<Array> array(m, "Array");
  bind_array_description(array);
  bind_array_selections(array);
  bind_array_growth(array);
  bind_array_creation(m);
  bind_groups(m);
  bind_nodes(m);
}
