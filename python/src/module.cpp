// python/src/module.cpp -- the module failslow._core: its exceptions, then the bindings of
// stats_detect.cpp and io_diagnose.cpp. The package failslow (python/failslow/__init__.py)
// re-exports it with the Python-side helpers.
#include <cstdint>
#include <exception>
#include <string>

#include "bindings.hpp"

namespace failslow_py {
namespace {

// The module's exception types, created once at import (owned by the module's dict).
PyObject* error_type = nullptr;
PyObject* parse_error_type = nullptr;
PyObject* unavailable_type = nullptr;

void raise_parse_error(const failslow::parse_error& e) {
  const auto& w = e.where();
  py::object exc = py::reinterpret_borrow<py::object>(parse_error_type)(e.what());
  exc.attr("file") = w.source;
  exc.attr("offset") = w.offset;
  exc.attr("line") = w.line;
  exc.attr("column") = w.column;
  exc.attr("expected") = e.expected();
  PyErr_SetObject(parse_error_type, exc.ptr());
}

void translate(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const failslow::parse_error& e) {
    raise_parse_error(e);
  } catch (const failslow::invalid_argument& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const failslow::domain_error& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const failslow::unavailable_error& e) {
    PyErr_SetString(unavailable_type, e.what());
  } catch (const failslow::error& e) {
    PyErr_SetString(error_type, e.what());
  }
}

PyObject* new_exception(py::module_& m, const char* name, const char* doc, PyObject* bases) {
  const std::string qualified = std::string("failslow.") + name;
  PyObject* t = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
  if (!t) throw py::error_already_set();
  m.add_object(name, py::reinterpret_borrow<py::object>(t));
  return t;
}

}  // namespace
}  // namespace failslow_py

PYBIND11_MODULE(_core, m) {
  namespace py = pybind11;
  using namespace failslow_py;
  m.doc() =
      "failslow's C++ library (statistics, detectors, readers, compressor, diagnosis); use the package "
      "failslow, which re-exports it";
  error_type = new_exception(m, "Error", "Root of failslow's own errors (RuntimeError).", PyExc_RuntimeError);
  py::tuple parse_bases = py::make_tuple(py::handle(error_type), py::handle(PyExc_ValueError));
  parse_error_type = new_exception(
      m, "ParseError",
      "A malformed input file (a ValueError and a failslow.Error). Attributes: file, offset (0-based byte), line and "
      "column (1-based, 0 when not known), expected (what the reader expected there).",
      parse_bases.ptr());
  unavailable_type = new_exception(
      m, "UnavailableError", "An optional component (simdjson, SQLite) was not compiled into the module.", error_type);
  py::register_exception_translator(translate);

  m.def(
      "_data_address", [](const array_in& x) { return reinterpret_cast<std::uintptr_t>(x.data()); }, py::arg("x"),
      "The address of the float64 data the bindings read for x: equal to x.ctypes.data when x is already a "
      "C-contiguous float64 array (no copy), another address when x had to be converted (a copy). For tests.");
  bind_stats_detect(m);
  bind_io_diagnose(m);
}
