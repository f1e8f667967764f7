// Progress callbacks: a Python callable the core calls from its worker threads.
#include "bindings.hpp"

namespace zarrpp_python {

namespace {

bool is_finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing() != 0;
#else
  return _Py_IsFinalizing() != 0;
#endif
}

}  // namespace

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

// The core's progress callback calling `f(objects, nbytes)`, or none for None.
zarrpp::ProgressCallback progress_callback(const py::object& f) {
  if (f.is_none()) return nullptr;
  auto held = hold_callable(f);
  return [held](const zarrpp::ProgressStep& s) { call_held(*held, s.objects, s.bytes); };
}

}  // namespace zarrpp_python
