// failslow/io/detail/impl/text_format.ipp -- the definitions of io/detail/text_format.hpp: included by that
// header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>

#include "failslow/core/launch_shape.hpp"
#include "failslow/io/detail/text_format.hpp"

namespace failslow::io::detail {

FAILSLOW_FUNC_DEF std::string format_duration(double ns) {
  if (!std::isfinite(ns)) return "n/a";
  char buf[64];
  const double a = std::fabs(ns);
  if (a >= 1e9)
    std::snprintf(buf, sizeof buf, "%.2f s", ns / 1e9);
  else if (a >= 1e6)
    std::snprintf(buf, sizeof buf, "%.1f ms", ns / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.1f us", ns / 1e3);
  return buf;
}

FAILSLOW_FUNC_DEF std::string format_ratio(double r) {
  if (!std::isfinite(r)) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", r);
  return buf;
}

FAILSLOW_FUNC_DEF std::string format_kernel_name(std::string_view name, std::size_t max) {
  const std::string_view shape = launch_shape_of(name);
  name = kernel_base_name(name);
  if (name.substr(0, 5) == "void ") name.remove_prefix(5);
  if (!name.empty() && name.back() == ')') {  // the parameter list: its matching '('
    int depth = 0;
    for (std::size_t i = name.size(); i-- > 0;) {
      if (name[i] == ')') ++depth;
      if (name[i] == '(' && --depth == 0) {
        if (i > 0) name = name.substr(0, i);
        break;
      }
    }
  }
  std::string out(name);
  if (out.size() > max && max > 3) out = out.substr(0, max - 3) + "...";
  if (!shape.empty()) out += " <<<" + std::string(shape) + ">>>";
  return out;
}

}  // namespace failslow::io::detail
