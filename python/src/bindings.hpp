#pragma once
// The parts of the _zarrpp extension, one file per concept, and what they share. Each part binds
// itself (bind_*); module.cpp registers them. The helpers here convert between Python's objects and
// the core's; what those mean is the core's.
#include <pybind11/complex.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zarrpp/zarrpp.hpp"

namespace zarrpp_python {

namespace py = pybind11;
using namespace pybind11::literals;
using zarrpp::Array;
using zarrpp::DataType;
using zarrpp::Json;
using zarrpp::NDView;
using zarrpp::Shape;
using zarrpp::StorePtr;
namespace codec = zarrpp::codec;

// ---- the parts (each file's bind_* functions) ----
void register_errors();                               // errors.cpp: exceptions and warnings
void bind_stores(py::module_& m);                     // stores.cpp
void bind_array_description(py::class_<Array>& cls);  // arrays.cpp
void bind_array_growth(py::class_<Array>& cls);       // arrays.cpp
void bind_array_selections(py::class_<Array>& cls);   // selections.cpp
void bind_selection_plans(py::module_& m);            // selections.cpp
void bind_array_creation(py::module_& m);             // creation.cpp
void bind_codecs_and_grids(py::module_& m);           // creation.cpp
void bind_groups(py::module_& m);                     // groups.cpp
void bind_nodes(py::module_& m);                      // groups.cpp
void bind_data_types(py::module_& m);                 // data_types.cpp

// ---- shared helpers ----
// progress.cpp: the core's progress callback calling `f(objects, nbytes)`, or none for None.
zarrpp::ProgressCallback progress_callback(const py::object& f);

// progress.cpp: a Python callable kept by C++ callbacks that run on worker threads (released with
// the GIL held, or leaked once Python has shut down), and a call of it with the GIL taken whose
// exception goes to sys.unraisablehook (a progress callback must not throw into the operation).
std::shared_ptr<py::object> hold_callable(py::object f);
template <class... Args>
void call_held(const py::object& f, Args... args) {
  const py::gil_scoped_acquire gil;
  try {
    f(args...);
  } catch (py::error_already_set& e) {
    e.discard_as_unraisable("zarrpp progress callback");
  }
}

// data_types.cpp: NumPy dtypes and buffers as the core's types and views.
py::dtype numpy_dtype(const DataType& t);
DataType zarr_dtype(const py::dtype& dt);
zarrpp::NumpyType given_type(const py::object& given);
Shape shape_of(const py::array& a);
NDView view_of(const py::array& a);
NDView writable_view_of(py::array& a);
py::array to_numpy(zarrpp::NDArray&& a);
py::tuple to_tuple(const std::vector<std::int64_t>& v);
Json parse_json(const std::string& text, const char* what);

// creation.cpp: a Python value as the JSON of a fill value; attributes or a metadata document as
// JSON, as Python's json module writes them (NumPy scalars and arrays as their Python values).
Json fill_value_json(const py::handle& v);
Json json_of(const py::handle& obj, const char* what);

// selections.cpp
py::object get_index(const Array& a, const py::object& selection, const std::string& mode, bool coords,
                     const py::object& out);
void set_index(Array& a, const py::object& selection, const py::array& data, const std::string& mode, bool coords);

// selections.cpp: how an array's variable-length elements look in Python: str or bytes objects,
// and, for a Zarr v2 object array whose fill value is not of its type, the object its missing
// elements read as (ArrayMetadata::missing_element: 0 or None, as zarr-python 2 returns them).
struct VlenForm {
  bool bytes = false;
  std::optional<py::object> missing;
};
VlenForm vlen_form(const Array& a);
zarrpp::VlenValues numpy_to_vlen(const py::handle& data, const VlenForm& form);

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

// Runs `f` with the GIL released.
template <class F>
auto without_gil(F&& f) -> decltype(f()) {
  py::gil_scoped_release nogil;
  return f();
}

// Array accessors that return references into the array's current metadata snapshot stay valid
// only until the next metadata change (which another Python thread may make while the GIL is
// released). A copy of the Array pins its own snapshot, so read them from a copy.
inline Array pinned(const Array& a) {
  Array p(a);
  p.set_progress(a.progress());  // a `with z.progress()` block hears the reads made through the copy
  return p;
}

// Through Python's json module, so NaN/Infinity come back as floats and a lone surrogate (held as
// WTF-8) as the str json.loads gives for "\udcff".
inline py::object attrs_to_python(const Json& j) {
  return py::module_::import("json").attr("loads")(zarrpp::json_text(j));
}

inline const char* type_name(zarrpp::NodeType t) { return t == zarrpp::NodeType::Array ? "array" : "group"; }

}  // namespace zarrpp_python

// dtype= in any form a function takes it: given_type's reading, decided by the core.
template <>
struct pybind11::detail::type_caster<zarrpp::NumpyType> {
  PYBIND11_TYPE_CASTER(zarrpp::NumpyType, const_name("numpy.typing.DTypeLike"));
  bool load(handle src, bool /*convert*/) {
    value = zarrpp_python::given_type(reinterpret_borrow<object>(src));
    return true;
  }
  static handle cast(const zarrpp::NumpyType& t, return_value_policy /*policy*/, handle /*parent*/) {
    return zarrpp_python::numpy_dtype(t.type).release();
  }
};
