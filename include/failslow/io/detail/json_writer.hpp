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

#include <string>
#include <string_view>

#include "failslow/core/compile_mode.hpp"

namespace failslow::io::detail {

FAILSLOW_FUNC void append_escaped(std::string& out, std::string_view s);

FAILSLOW_FUNC void append_number(std::string& out, double x);

}  // namespace failslow::io::detail

#if FAILSLOW_HEADER_ONLY
#include "failslow/io/detail/impl/json_writer.ipp"
#endif
