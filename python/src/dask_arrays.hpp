// The numpy side of the simdup.dask bindings (dask_*.cpp): array types, copies and views.
#pragma once

#include "bindings.hpp"

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

namespace simdup::python {

using u32_array = py::array_t<uint32_t, py::array::c_style | py::array::forcecast>;
using u8_array = py::array_t<uint8_t, py::array::c_style | py::array::forcecast>;
using f64_array = py::array_t<double, py::array::c_style | py::array::forcecast>;

/// A new numpy array with the vector's values.
template <class T>
py::array_t<T> to_array(const std::vector<T>& v) {
  py::array_t<T> out(static_cast<py::ssize_t>(v.size()));
  std::copy(v.begin(), v.end(), out.mutable_data());
  return out;
}

/// The array's values in place (the array is C-contiguous by its type).
template <class T>
std::span<const T> view(const py::array_t<T, py::array::c_style | py::array::forcecast>& a) {
  return {a.data(), static_cast<std::size_t>(a.size())};
}

}  // namespace simdup::python
