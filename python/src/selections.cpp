// Selections: Python's selection objects as the core's index expressions (which the core plans),
// and reads and writes of them.
#include "bindings.hpp"

namespace zarrpp_python {

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

void bind_selection_plans(py::module_& m) {
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
}

}  // namespace zarrpp_python
