// failslow/io/detail/text_format.hpp -- numbers and names as people read them in reports:
// durations with their unit ("45.7 ms"), ratios ("1.49x"), kernel names without their
// parameter lists ("flash::flash_bwd_kernel<Flash_bwd_kernel_traits<128, 64, ...").
#pragma once

#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>

#include "failslow/core/launch_shape.hpp"

namespace failslow::io::detail {

/// ns as "1.23 s", "45.7 ms" or "40.4 us"; "n/a" when not finite.
inline std::string format_duration(double ns) {
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

/// r as "1.49x"; "n/a" when not finite.
inline std::string format_ratio(double r) {
  if (!std::isfinite(r)) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", r);
  return buf;
}

/// A kernel's demangled name for a sentence: no leading "void ", no parameter list, at most
/// `max` characters ("..." marks a cut). Reports keep the full name in their fields.
/// A kernel key's launch shape (core/launch_shape.hpp) follows the name, never cut.
inline std::string format_kernel_name(std::string_view name, std::size_t max = 90) {
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
