// failslow/io/impl/value_reader.ipp -- the definitions of io/value_reader.hpp: included by that header
// (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/io/detail/file_bytes.hpp"
#include "failslow/io/value_reader.hpp"

namespace failslow::io {

namespace detail {

/// The text of a field as an error message shows it: at most 40 characters, control and
/// non-ASCII bytes as \xNN.
inline std::string printable_excerpt(std::string_view s) {
  std::string out;
  const std::size_t n = s.size() < 40 ? s.size() : 40;
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      static constexpr char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  if (s.size() > n) out += "...";
  return out;
}

enum class value_status : std::uint8_t { ok, not_number, out_of_range, nonfinite };
/// Number of value_status values (they are 0 .. value_status_count - 1).
inline constexpr std::size_t value_status_count = 4;

/// Clinger's fast path: a decimal number [-]digits[.digits][e[+-]digits] with at most 15
/// significant digits w and a power of ten p = exponent - fraction digits in [-22, 22] is
/// w * 10^p or w / 10^-p, one operation on two exact doubles, so correctly rounded: the double
/// std::from_chars gives. False (nothing decided) for anything else.
inline bool parse_simple_decimal(const char* p, const char* end, double& out) noexcept {
  static constexpr double pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                       1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const bool negative = p < end && *p == '-';
  if (negative) ++p;
  std::uint64_t w = 0;
  int significant = 0, fraction = 0, digits = 0;
  auto digit_run = [&](bool after_point) {
    for (; p < end && *p >= '0' && *p <= '9'; ++p, ++digits) {
      w = w * 10 + static_cast<std::uint64_t>(*p - '0');
      if (w != 0 && ++significant > 15) return false;
      if (after_point) ++fraction;
    }
    return true;
  };
  if (!digit_run(false)) return false;
  if (p < end && *p == '.') {
    ++p;
    if (!digit_run(true)) return false;
  }
  if (digits == 0) return false;
  int exponent = 0;
  if (p < end && (*p == 'e' || *p == 'E')) {
    ++p;
    const bool minus = p < end && *p == '-';
    if (p < end && (*p == '-' || *p == '+')) ++p;
    int n = 0;
    for (; p < end && *p >= '0' && *p <= '9' && n < 4; ++p, ++n) exponent = exponent * 10 + (*p - '0');
    if (n == 0 || n == 4) return false;
    if (minus) exponent = -exponent;
  }
  if (p != end) return false;
  const int power = exponent - fraction;
  if (power < -22 || power > 22) return false;
  const double x = static_cast<double>(w);  // exact: w < 10^15 < 2^53
  const double v = power < 0 ? x / pow10[-power] : x * pow10[power];
  out = negative ? -v : v;
  return true;
}

/// Parses a whole field as a double (file synopsis): spaces, sign, number, spaces.
inline value_status parse_value(const char* p, const char* end, double& out) noexcept {
  while (p < end && (*p == ' ' || *p == '\t')) ++p;
  while (end > p && (end[-1] == ' ' || end[-1] == '\t')) --end;
  if (p == end) return value_status::not_number;
  const char* q = p;
  if (*q == '+') {  // from_chars takes '-' but not '+'
    ++q;
    if (q == end || *q == '-' || *q == '+') return value_status::not_number;
  }
  if (parse_simple_decimal(q, end, out)) return value_status::ok;
  const auto r = std::from_chars(q, end, out, std::chars_format::general);
  if (r.ec == std::errc::result_out_of_range) return value_status::out_of_range;
  if (r.ec != std::errc() || r.ptr != end) return value_status::not_number;
  if (!std::isfinite(out)) return value_status::nonfinite;
  return value_status::ok;
}

// Field `index` of the line [p, end): its bytes without the quotes (`quoted` set when they had
// some; "" inside stays doubled, which no number contains). False when the line has fewer fields.
inline bool field_of(const char* p, const char* end, std::size_t index, char delim, const char*& fb, const char*& fe,
                     bool& unterminated) {
  unterminated = false;
  for (std::size_t k = 0;; ++k) {
    const char* b = p;
    const char* e = nullptr;
    if (delim == ',' && p < end && *p == '"') {
      const char* q = p + 1;
      for (;;) {
        q = static_cast<const char*>(std::memchr(q, '"', static_cast<std::size_t>(end - q)));
        if (!q) {
          unterminated = true;
          return false;
        }
        if (q + 1 < end && q[1] == '"') {
          q += 2;
          continue;
        }
        break;
      }
      b = p + 1;
      e = q;
      p = q + 1;
      while (p < end && *p != delim) ++p;  // text after the closing quote belongs to the field
      if (p > e + 1) e = p;                // keep it, so that it makes the field no number
    } else {
      const void* d = std::memchr(p, delim, static_cast<std::size_t>(end - p));
      p = d ? static_cast<const char*>(d) : end;
      e = p;
    }
    if (k == index) {
      fb = b;
      fe = e;
      return true;
    }
    if (p >= end) return false;
    ++p;  // past the delimiter
  }
}

// Splits a header line into names (quotes removed, "" undoubled, spaces trimmed).
inline std::vector<std::string> header_names(const char* p, const char* end, char delim) {
  std::vector<std::string> names;
  for (std::size_t k = 0;; ++k) {
    const char *b = nullptr, *e = nullptr;
    bool unterminated = false;
    if (!field_of(p, end, k, delim, b, e, unterminated)) break;
    std::string name;
    for (const char* c = b; c < e; ++c) {
      if (*c == '"' && c + 1 < e && c[1] == '"') ++c;
      name += *c;
    }
    const auto first = name.find_first_not_of(" \t"), last = name.find_last_not_of(" \t");
    names.push_back(first == std::string::npos ? std::string() : name.substr(first, last - first + 1));
  }
  return names;
}

inline bool has_control_bytes(const char* p, const char* end) noexcept {
  for (; p < end; ++p)
    if ((static_cast<unsigned char>(*p) < 0x20 && *p != '\t') || *p == 0x7f) return true;
  return false;
}

inline bool looks_like_name(const char* p, const char* end) noexcept {
  while (p < end && (*p == ' ' || *p == '\t')) ++p;
  if (p == end) return false;
  const char c = *p;
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '"';
}

}  // namespace detail

FAILSLOW_FUNC_DEF value_column read_values(std::string_view text, const value_read_options& options,
                                           const std::string& source) {
  value_column out;
  const char* const base = text.data();
  const char* p = base;
  if (text.substr(0, 3) == "\xef\xbb\xbf") p += 3;  // a UTF-8 byte order mark
  const char* const stop = base + text.size();
  // Column: none (one value per line), or an index once known (a name is looked up in the header).
  const bool by_column = !options.column.empty();
  std::size_t index = 0;
  bool index_known = false;
  if (by_column) {
    const auto r = std::from_chars(options.column.data(), options.column.data() + options.column.size(), index);
    index_known = r.ec == std::errc() && r.ptr == options.column.data() + options.column.size();
  }
  char delim = options.delimiter;
  bool first_line = true;  // the first line that is not blank or a comment
  // One value per line at most: counting the line feeds first (a vectorised pass) sizes the
  // vector once, and values are stored by index (no push_back call per value).
  const std::size_t most = static_cast<std::size_t>(std::count(p, stop, '\n')) + 1;
  out.values.reserve(most);
  detail::advise_huge_pages(out.values.data(), most * sizeof(double));  // before the first touch
  out.values.resize(most);
  std::size_t n_values = 0;
  auto fail = [&](const char* line_begin, const char* at, const std::string& expected) -> void {
    throw parse_error(source_location{source, out.lines, static_cast<std::uint64_t>(at - line_begin) + 1,
                                      static_cast<std::uint64_t>(at - base)},
                      expected);
  };
  while (p < stop) {
    if (!by_column) {  // the common line, 1-15 digits and a line feed: no search, no trimming
      const char* q = p;
      std::uint64_t w = 0;
      while (q < stop && q - p < 16 && static_cast<unsigned char>(*q - '0') < 10)
        w = w * 10 + static_cast<std::uint64_t>(*q++ - '0');
      if (q != p && q - p < 16 && q < stop && *q == '\n') {
        out.values[n_values++] = static_cast<double>(w);  // exact: w < 10^15 < 2^53
        ++out.lines;
        first_line = false;
        p = q + 1;
        continue;
      }
    }
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(stop - p)));
    const char* line_end = nl ? nl : stop;
    const char* const line = p;
    p = nl ? nl + 1 : stop;
    ++out.lines;
    if (line_end > line && line_end[-1] == '\r') --line_end;
    const char* s = line;
    while (s < line_end && (*s == ' ' || *s == '\t')) ++s;
    if (s == line_end || *s == '#') {
      ++out.comment_lines;
      continue;
    }
    const char *fb = line, *fe = line_end;
    if (by_column) {
      if (first_line) {
        if (!delim) delim = std::memchr(line, '\t', static_cast<std::size_t>(line_end - line)) ? '\t' : ',';
        if (!index_known) {
          const auto names = detail::header_names(line, line_end, delim);
          for (std::size_t k = 0; k < names.size() && !index_known; ++k)
            if (names[k] == options.column) {
              index = k;
              index_known = true;
            }
          if (!index_known)
            fail(line, line,
                 "a header with a column named '" + options.column + "' (found '" +
                     detail::printable_excerpt(std::string_view(line, static_cast<std::size_t>(line_end - line))) +
                     "')");
          out.column = options.column;
          out.header = true;
          first_line = false;
          continue;
        }
      }
      bool unterminated = false;
      if (!detail::field_of(line, line_end, index, delim, fb, fe, unterminated)) {
        if (unterminated) fail(line, line_end, "a closing quote");
        fail(line, line_end, "at least " + std::to_string(index + 1) + " fields");
      }
    }
    double v = 0;
    const auto status = detail::parse_value(fb, fe, v);
    if (status == detail::value_status::ok && options.nonnegative && v < 0) {
      fail(line, fb,
           "a value >= 0, found '" +
               detail::printable_excerpt(std::string_view(fb, static_cast<std::size_t>(fe - fb))) +
               "' (durations are not negative)");
    }
    if (status == detail::value_status::ok || (status == detail::value_status::nonfinite && options.allow_nonfinite)) {
      out.values[n_values++] = v;
      first_line = false;
      continue;
    }
    if (first_line && status == detail::value_status::not_number && (by_column || detail::looks_like_name(fb, fe))) {
      // A header line above the values.
      out.header = true;
      const auto names = detail::header_names(fb, fe, by_column ? delim : '\n');
      if (!names.empty()) out.column = names.front();
      first_line = false;
      continue;
    }
    const std::string found =
        "'" + detail::printable_excerpt(std::string_view(fb, static_cast<std::size_t>(fe - fb))) + "'";
    switch (status) {
      case detail::value_status::out_of_range:
        fail(line, fb, "a number within the range of a double, found " + found);
        break;
      case detail::value_status::nonfinite:
        fail(line, fb, "a finite number, found " + found + " (inf and nan are not data here)");
        break;
      default:
        if (detail::has_control_bytes(fb, fe)) fail(line, fb, "a number, found " + found + " (binary data, not text)");
        if (!by_column && (std::memchr(fb, ',', static_cast<std::size_t>(fe - fb)) ||
                           std::memchr(fb, '\t', static_cast<std::size_t>(fe - fb))))
          fail(line, fb, "one number per line, found " + found + " (several fields: choose one with a column)");
        fail(line, fb, "a number, found " + found);
    }
  }
  out.values.resize(n_values);
  if (out.values.empty())
    throw invalid_argument(source + ": no values" +
                           (text.empty() ? std::string(" (empty file)")
                                         : " (" + std::to_string(out.lines) + " lines, none holds a value)"));
  return out;
}

FAILSLOW_FUNC_DEF value_column read_values_file(const std::string& path, const value_read_options& options) {
  const auto bytes = detail::file_bytes::open(path);
  return read_values(bytes.view(), options, path);
}

}  // namespace failslow::io
