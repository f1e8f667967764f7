// _zarrpp: the compiled half of zarrpp's Python package, one file per concept (bindings.hpp lists
// them); this file registers each part.
#include "bindings.hpp"

PYBIND11_MODULE(_zarrpp, m) {
  using namespace zarrpp_python;
  m.doc() = "zarrpp's compiled core; use the zarrpp package instead.";
  m.attr("__version__") = zarrpp::kVersion;
  // create_array's fill_value for "no fill value" (Zarr v2's null; zarr-python 3's explicit None).
  m.attr("NO_FILL_VALUE") = py::module_::import("builtins").attr("object")();
  register_errors();
  bind_stores(m);
  py::class_<Array> array(m, "Array");
  bind_array_description(array);
  bind_array_selections(array);
  bind_array_growth(array);
  bind_array_creation(m);
  bind_groups(m);
  bind_nodes(m);
  bind_data_types(m);
  bind_selection_plans(m);
  bind_codecs_and_grids(m);
}
