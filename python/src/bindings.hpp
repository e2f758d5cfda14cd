// python/src/bindings.hpp -- what the translation units of failslow's Python module share.
//
// Synopsis
//   The module failslow._core is three translation units (compile time: the library's
//   headers are parsed once per unit): module.cpp (exceptions, the module), stats_detect.cpp
//   (statistics and detectors), io_diagnose.cpp (readers, compressor, codec, diagnosis).
//   array_in     a 1-D or 2-D float64 C-contiguous numpy array: pybind11 passes such an array
//                through untouched (no copy; _core._data_address shows it) and converts
//                anything else (lists, float32, strided views) into a new array once.
//   to_numpy     a C++ vector or Eigen matrix moved into a numpy array that owns it (a
//                capsule frees it): results are not copied either.
//   choice       a string option checked against its allowed values (ValueError naming them).
// Errors: the translator in module.cpp maps failslow::invalid_argument and domain_error to
//   ValueError, parse_error to failslow.ParseError (file, offset, line, column),
//   unavailable_error to failslow.UnavailableError, other failslow::error to failslow.Error.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <Eigen/Dense>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "failslow/core/error.hpp"

namespace failslow_py {

namespace py = pybind11;

using array_in = py::array_t<double, py::array::c_style | py::array::forcecast>;

/// A vector moved into a numpy array that owns it.
template <class T>
py::array_t<T> to_numpy(std::vector<T>&& v) {
  auto* owned = new std::vector<T>(std::move(v));
  py::capsule free_it(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>({static_cast<py::ssize_t>(owned->size())}, {static_cast<py::ssize_t>(sizeof(T))}, owned->data(),
                        free_it);
}

/// A column-major Eigen matrix moved into a numpy array (Fortran order) that owns it.
inline py::array_t<double> to_numpy(Eigen::MatrixXd&& m) {
  auto* owned = new Eigen::MatrixXd(std::move(m));
  py::capsule free_it(owned, [](void* p) { delete static_cast<Eigen::MatrixXd*>(p); });
  const auto d = static_cast<py::ssize_t>(sizeof(double));
  return py::array_t<double>({static_cast<py::ssize_t>(owned->rows()), static_cast<py::ssize_t>(owned->cols())},
                             {d, d * static_cast<py::ssize_t>(owned->rows())}, owned->data(), free_it);
}

inline py::array_t<double> to_numpy(Eigen::VectorXd&& v) {
  auto* owned = new Eigen::VectorXd(std::move(v));
  py::capsule free_it(owned, [](void* p) { delete static_cast<Eigen::VectorXd*>(p); });
  return py::array_t<double>({static_cast<py::ssize_t>(owned->size())}, {static_cast<py::ssize_t>(sizeof(double))},
                             owned->data(), free_it);
}

/// The values of a 1-D array as a pointer and a length (the array must outlive their use).
struct doubles_view {
  const double* data;
  std::size_t size;
};

inline doubles_view view_1d(const array_in& a, const char* what) {
  if (a.ndim() != 1) throw failslow::invalid_argument(std::string(what) + " must be one-dimensional");
  return {a.data(), static_cast<std::size_t>(a.shape(0))};
}

inline std::vector<double> vector_1d(const array_in& a, const char* what) {
  const auto v = view_1d(a, what);
  return std::vector<double>(v.data, v.data + v.size);
}

/// `value` when it is one of `allowed`, else ValueError naming them.
inline const std::string& choice(const std::string& value, const char* option,
                                 std::initializer_list<const char*> allowed) {
  std::string names;
  for (const char* a : allowed) {
    if (value == a) return value;
    names += names.empty() ? "" : ", ";
    names += std::string("'") + a + "'";
  }
  throw failslow::invalid_argument(std::string(option) + " must be one of " + names + ", not '" + value + "'");
}

void bind_stats_detect(py::module_& m);
void bind_io_diagnose(py::module_& m);

}  // namespace failslow_py
