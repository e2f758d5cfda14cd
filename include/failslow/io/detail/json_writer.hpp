// failslow/io/detail/json_writer.hpp -- the pieces of JSON text the library's writers append.
//
// append_escaped(out, s) appends s as a JSON string: quotes around it; '"', '\\', '\n', '\t',
// '\r' as two-character escapes; other control characters (< 0x20) as \u00XX; every other byte
// as it is (UTF-8 passes through unchanged; the caller hands in valid UTF-8).
// append_number(out, x) appends x as a JSON number: integral values with |x| < 2^53 as integers
// (no exponent, no decimal point; -0 as 0), others as the shortest decimal that reads back as
// the same double (std::to_chars; where the standard library lacks it, the shortest of %.15g,
// %.16g and %.17g that round-trips), and NaN or infinities as null.
// Complexity: O(length of the text). Errors: none (std::bad_alloc aside).
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace failslow::io::detail {

inline void append_escaped(std::string& out, std::string_view s) {
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

inline void append_number(std::string& out, double x) {
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
