// failslow/io/detail/text_format.hpp -- numbers as people read them in reports: durations with
// their unit ("45.7 ms"), ratios ("1.49x").
#pragma once

#include <cmath>
#include <cstdio>
#include <string>

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

}  // namespace failslow::io::detail
