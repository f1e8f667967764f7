// zarrpp's errors and warnings as the Python exceptions and warnings users expect.
#include "bindings.hpp"

#include <cstdio>

namespace zarrpp_python {

namespace {

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

}  // namespace

// By value: pybind11's translator signature.
void translate(std::exception_ptr p) {  // NOLINT(performance-unnecessary-value-param)
  try {
    if (p) std::rethrow_exception(p);
  } catch (const zarrpp::Error& e) {
    PyErr_SetString(e.code() == zarrpp::ErrorCode::index_out_of_bounds ? bounds_check_error() : exception_for(e.code()),
                    e.what());
  }
}

void register_errors() {
  py::register_exception_translator(&translate);
  route_warnings();
}

}  // namespace zarrpp_python
