// failslow/io/detail/impl/decimal.ipp -- the definitions of io/detail/decimal.hpp: included by that
// header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>

#include "failslow/io/detail/decimal.hpp"

namespace failslow::io::detail {

FAILSLOW_FUNC_DEF bool is_json_number(std::string_view tok) noexcept {
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

FAILSLOW_FUNC_DEF number_status classify_non_number(std::string_view tok) noexcept {
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

FAILSLOW_FUNC_DEF scaled_number parse_scaled_general(std::string_view tok, int scale) noexcept {
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

}  // namespace failslow::io::detail
