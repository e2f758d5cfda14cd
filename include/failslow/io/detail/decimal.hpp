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
inline bool is_json_number(std::string_view tok) noexcept {
  const std::size_t n = tok.size();
  std::size_t i = 0;
  if (i < n && tok[i] == '-') ++i;
  if (i >= n) return false;
  if (tok[i] == '0') {
    ++i;
  } else if (is_digit(tok[i])) {
    while (++i < n && is_digit(tok[i])) {
    }
  } else {
    return false;
  }
  if (i < n && tok[i] == '.') {
    const std::size_t b = ++i;
    while (i < n && is_digit(tok[i])) ++i;
    if (i == b) return false;
  }
  if (i < n && (tok[i] == 'e' || tok[i] == 'E')) {
    ++i;
    if (i < n && (tok[i] == '+' || tok[i] == '-')) ++i;
    const std::size_t b = i;
    while (i < n && is_digit(tok[i])) ++i;
    if (i == b) return false;
  }
  for (; i < n; ++i)
    if (!is_json_space(tok[i])) return false;
  return true;
}

/// Classifies a token that is not a number: a string, literal or container is a type error,
/// anything else is malformed JSON.
inline number_status classify_non_number(std::string_view tok) noexcept {
  if (tok.empty()) return number_status::malformed;
  const char c = tok[0];
  if (c == '"' || c == '{' || c == '[') return number_status::not_number;
  auto literal = [&](std::string_view lit) {
    if (tok.substr(0, lit.size()) != lit) return false;
    for (std::size_t i = lit.size(); i < tok.size(); ++i)
      if (!is_json_space(tok[i])) return false;
    return true;
  };
  if (literal("true") || literal("false") || literal("null")) return number_status::not_number;
  return number_status::malformed;
}

/// parse_scaled for any JSON number: signs, exponents, rounding half to even, range checks.
inline scaled_number parse_scaled_general(std::string_view tok, int scale) noexcept {
  scaled_number r;
  std::size_t i = 0;
  const std::size_t n = tok.size();
  if (n == 0) return r;
  if (!(tok[0] == '-' || is_digit(tok[0]))) {
    r.status = classify_non_number(tok);
    return r;
  }
  const bool negative = tok[0] == '-';
  if (negative) ++i;
  const std::size_t int_begin = i;
  if (i < n && tok[i] == '0') {
    ++i;
  } else {
    while (i < n && is_digit(tok[i])) ++i;
  }
  const std::size_t int_end = i;
  if (int_end == int_begin) return r;       // "-" alone
  if (i < n && is_digit(tok[i])) return r;  // leading zero "01"
  std::size_t frac_begin = i, frac_end = i;
  if (i < n && tok[i] == '.') {
    ++i;
    frac_begin = i;
    while (i < n && is_digit(tok[i])) ++i;
    frac_end = i;
    if (frac_end == frac_begin) return r;  // "1."
  }
  long long exp10 = 0;
  if (i < n && (tok[i] == 'e' || tok[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < n && (tok[i] == '+' || tok[i] == '-')) exp_negative = tok[i++] == '-';
    const std::size_t exp_begin = i;
    while (i < n && is_digit(tok[i])) {
      if (exp10 < 100000) exp10 = exp10 * 10 + (tok[i] - '0');  // saturates: beyond is 0 or overflow
      ++i;
    }
    if (i == exp_begin) return r;
    if (exp_negative) exp10 = -exp10;
  }
  for (; i < n; ++i)
    if (!is_json_space(tok[i])) return r;  // trailing junk

  // The digit sequence D = int digits followed by fraction digits; value = D * 10^e.
  const std::size_t int_len = int_end - int_begin, frac_len = frac_end - frac_begin;
  auto digit = [&](std::size_t k) -> int {
    return k < int_len ? tok[int_begin + k] - '0' : tok[frac_begin + (k - int_len)] - '0';
  };
  std::size_t total = int_len + frac_len, first = 0;
  while (first < total && digit(first) == 0) ++first;  // leading zeros do not change the value
  r.status = number_status::ok;
  if (first == total) return r;  // zero (also "-0")
  const long long e = exp10 + scale - static_cast<long long>(frac_len);
  const long long sig = static_cast<long long>(total - first);  // significant digits
  const long long keep = sig + e;                               // digits left of the decimal point
  const std::uint64_t limit = negative ? std::uint64_t{1} << 63 : (std::uint64_t{1} << 63) - 1;
  std::uint64_t acc = 0;
  auto push = [&](int d) {
    if (acc > (limit - static_cast<std::uint64_t>(d)) / 10) return false;
    acc = acc * 10 + static_cast<std::uint64_t>(d);
    return true;
  };
  if (keep > 19) {
    r.status = number_status::out_of_range;
    return r;
  }
  const long long whole = keep < 0 ? 0 : (keep < sig ? keep : sig);
  for (long long k = 0; k < whole; ++k)
    if (!push(digit(first + static_cast<std::size_t>(k)))) {
      r.status = number_status::out_of_range;
      return r;
    }
  for (long long k = sig; k < keep; ++k)  // trailing zeros from a positive exponent
    if (!push(0)) {
      r.status = number_status::out_of_range;
      return r;
    }
  if (keep < sig) {  // digits after the decimal point: round half to even
    r.exact = false;
    int next = 0;
    bool rest_nonzero = false;
    if (keep >= 0) {
      next = digit(first + static_cast<std::size_t>(keep));
      for (long long k = keep + 1; k < sig && !rest_nonzero; ++k)
        rest_nonzero = digit(first + static_cast<std::size_t>(k)) != 0;
    } else {
      rest_nonzero = true;  // 0.0ddd: below one half
    }
    const bool up = next > 5 || (next == 5 && (rest_nonzero || (acc & 1u) != 0));
    if (up && acc == limit) {
      r.status = number_status::out_of_range;
      return r;
    }
    if (up) ++acc;
  }
  if (negative) {
    r.value =
        acc == (std::uint64_t{1} << 63) ? std::numeric_limits<std::int64_t>::min() : -static_cast<std::int64_t>(acc);
  } else {
    r.value = static_cast<std::int64_t>(acc);
  }
  return r;
}

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
