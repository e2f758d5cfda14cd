// failslow/io/detail/impl/json_writer.ipp -- the definitions of io/detail/json_writer.hpp: included by that
// header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "failslow/io/detail/json_writer.hpp"

namespace failslow::io::detail {

FAILSLOW_FUNC_DEF void append_escaped(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    const auto uc = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (uc < 0x20) {
          static constexpr char hex[] = "0123456789abcdef";
          out += "\\u00";
          out += hex[uc >> 4];
          out += hex[uc & 0xf];
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

FAILSLOW_FUNC_DEF void append_number(std::string& out, double x) {
  if (!std::isfinite(x)) {
    out += "null";
    return;
  }
  if (std::fabs(x) < 9007199254740992.0 && x == std::trunc(x)) {
    out += std::to_string(static_cast<std::int64_t>(x));
    return;
  }
  char buf[32];
#if defined(__cpp_lib_to_chars) && __cpp_lib_to_chars >= 201611L
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  out.append(buf, r.ptr);
#else
  for (int precision = 15; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, x);
    if (precision == 17 || std::strtod(buf, nullptr) == x) break;
  }
  out += buf;
#endif
}

}  // namespace failslow::io::detail
