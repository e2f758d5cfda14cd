// failslow/io/detail/decimal.hpp -- exact conversion of JSON number text to scaled integers.
//
// parse_scaled(token, k) reads a JSON number (-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?,
// optionally followed by white space) and returns round(value * 10^k) as an int64, computed on
// the decimal digits (no binary floating point), rounding half to even. "1712195495519695.8"
// microseconds is 1712195495519695800 nanoseconds exactly, where a double would be off by 0.2 us.
// Status: ok; not_number (the token is a string, literal, object or array: a type error);
// malformed (starts like a number but is not one, or is not a JSON token at all);
// out_of_range (the result does not fit int64). is_json_number(token) checks the grammar only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>

#include "failslow/core/compile_mode.hpp"

namespace failslow::io::detail {

enum class number_status : std::uint8_t { ok, not_number, malformed, out_of_range };

struct scaled_number {
  number_status status = number_status::malformed;
  std::int64_t value = 0;
  bool exact = true;  ///< no nonzero digit was rounded away
};

constexpr bool is_json_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

/// Whether p[0, 8) are eight ASCII digits; if so `value` is their decimal value. SWAR on the
/// little-endian word (a byte loop elsewhere).
inline bool eight_digits(const char* p, std::uint64_t& value) noexcept {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  std::uint64_t w;
  std::memcpy(&w, p, sizeof w);
  // Each byte in '0'..'9': its high nibble is 3, and adding 6 keeps it 3.
  if (((w & 0xF0F0F0F0F0F0F0F0ull) | (((w + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) >> 4)) !=
      0x3333333333333333ull)
    return false;
  w = (w & 0x0F0F0F0F0F0F0F0Full) * 2561 >> 8;                      // pairs of digits
  w = (w & 0x00FF00FF00FF00FFull) * 6553601 >> 16;                  // groups of four
  value = ((w & 0x0000FFFF0000FFFFull) * 42949672960001ull) >> 32;  // all eight
  value &= 0xFFFFFFFFull;
  return true;
#else
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) {
    if (!is_digit(p[i])) return false;
    v = v * 10 + static_cast<std::uint64_t>(p[i] - '0');
  }
  value = v;
  return true;
#endif
}

/// Whether `tok` is a JSON number (-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?) followed by
/// white space only: exactly when parse_scaled(tok, k) is not malformed for a token that starts
/// with '-' or a digit (it checks the same grammar first); the grammar alone, for tokens that
/// are validated but not converted.
FAILSLOW_FUNC bool is_json_number(std::string_view tok) noexcept;

/// Classifies a token that is not a number: a string, literal or container is a type error,
/// anything else is malformed JSON.
FAILSLOW_FUNC number_status classify_non_number(std::string_view tok) noexcept;

/// parse_scaled for any JSON number: signs, exponents, rounding half to even, range checks.
FAILSLOW_FUNC scaled_number parse_scaled_general(std::string_view tok, int scale) noexcept;

/// round(number(tok) * 10^scale) as int64; see the file comment.
inline scaled_number parse_scaled(std::string_view tok, int scale) noexcept {
  scaled_number r;
  const std::size_t n = tok.size();
  if (n == 0) return r;
  // Fast path, the common case of trace files: a non-negative number of at most 18 digits
  // with at most `scale` of them after the point, then only white space: exact, no rounding.
  // Anything else takes the general path (parse_scaled_general, kept out of line).
  if (static_cast<unsigned>(scale) <= 3 && is_digit(tok[0]) && (tok[0] != '0' || n == 1 || !is_digit(tok[1]))) {
    std::uint64_t acc = 0;
    std::size_t k = 0;
    int digits = 0, frac = 0;
    // Eight integer digits at a time where the token holds them (timestamps have 16): the same
    // digits into the same accumulator, without eight dependent multiply-adds.
    for (std::uint64_t eight = 0; k + 8 <= n && digits <= 10 && eight_digits(tok.data() + k, eight); k += 8) {
      acc = acc * 100000000 + eight;
      digits += 8;
    }
    while (k < n && digits < 18 && is_digit(tok[k])) {
      acc = acc * 10 + static_cast<std::uint64_t>(tok[k++] - '0');
      ++digits;
    }
    if (k + 1 < n && tok[k] == '.' && is_digit(tok[k + 1])) {
      ++k;
      while (k < n && frac < scale && digits < 18 && is_digit(tok[k])) {
        acc = acc * 10 + static_cast<std::uint64_t>(tok[k++] - '0');
        ++digits;
        ++frac;
      }
    }
    std::size_t end = k;
    while (end < n && is_json_space(tok[end])) ++end;
    if (end == n && tok[k - 1] != '.') {
      static constexpr std::uint64_t pow10[4] = {1, 10, 100, 1000};
      constexpr auto max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
      static constexpr std::uint64_t max_over[4] = {max, max / 10, max / 100, max / 1000};  // no division here
      const std::uint64_t mul = pow10[scale - frac];
      if (acc <= max_over[scale - frac]) {
        r.status = number_status::ok;
        r.value = static_cast<std::int64_t>(acc * mul);
        return r;
      }
    }
  }
  return parse_scaled_general(tok, scale);
}

}  // namespace failslow::io::detail

#if FAILSLOW_HEADER_ONLY
#include "failslow/io/detail/impl/decimal.ipp"
#endif
