// failslow/io/detail/impl/svg_canvas.ipp -- the definitions of io/detail/svg_canvas.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "failslow/io/detail/svg_canvas.hpp"

namespace failslow::io::detail {

FAILSLOW_FUNC_DEF void append_svg_number(std::string& out, double x) {
  if (!std::isfinite(x)) x = 0;
  const long long cents = std::llround(x * 100);
  char buf[32];
  const long long whole = cents / 100, frac = std::llabs(cents % 100);
  if (cents < 0 && whole == 0) out += '-';
  auto r = std::to_chars(buf, buf + sizeof buf, whole);
  out.append(buf, r.ptr);
  if (frac != 0) {
    out += '.';
    out += static_cast<char>('0' + frac / 10);
    if (frac % 10 != 0) out += static_cast<char>('0' + frac % 10);
  }
}

FAILSLOW_FUNC_DEF std::size_t utf8_sequence(std::string_view s, std::size_t i) noexcept {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  if (n == 2 && c < 0xC2) return 0;  // overlong
  return n;
}

FAILSLOW_FUNC_DEF void append_xml_escaped(std::string& out, std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const char c = s[i];
    const std::size_t n = utf8_sequence(s, i);
    if (n == 0) {
      out += '?';
      ++i;
      continue;
    }
    if (n > 1) {
      out.append(s.substr(i, n));
      i += n;
      continue;
    }
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' ? '?' : c;
    }
    ++i;
  }
}

FAILSLOW_FUNC_DEF std::string fnv1a_hex(std::string_view s) {
  std::uint64_t h = 14695981039346656037ull;
  for (char ch : s) h = (h ^ static_cast<unsigned char>(ch)) * 1099511628211ull;
  static const char digits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (std::size_t i = 0; i < 16; ++i) out[15 - i] = digits[(h >> (4 * i)) & 15];
  return out;
}

FAILSLOW_FUNC_DEF std::string hex(rgb c) {
  static const char digits[] = "0123456789abcdef";
  std::string s = "#";
  for (std::uint8_t v : {c.r, c.g, c.b}) {
    s += digits[v >> 4];
    s += digits[v & 15];
  }
  return s;
}

FAILSLOW_FUNC_DEF rgb viridis(double t) {
  if (!(t > 0)) t = 0;
  if (t > 1) t = 1;
  std::size_t i = std::min<std::size_t>(31, static_cast<std::size_t>(t * 255.0 / 8.0));
  const double f = (t - viridis_position(i)) / (viridis_position(i + 1) - viridis_position(i));
  auto channel = [&](int shift) {
    const double a = (viridis_table[i] >> shift) & 0xFF, b = (viridis_table[i + 1] >> shift) & 0xFF;
    return static_cast<std::uint8_t>(std::lround(a + (b - a) * std::min(1.0, f)));
  };
  return {channel(16), channel(8), channel(0)};
}

FAILSLOW_FUNC_DEF std::vector<double> nice_ticks(double lo, double hi, std::size_t max_ticks, bool integral) {
  std::vector<double> t;
  if (!std::isfinite(lo) || !std::isfinite(hi)) return t;
  if (hi < lo) std::swap(lo, hi);
  if (max_ticks < 2 || hi == lo) return {lo};
  const double raw = (hi - lo) / static_cast<double>(max_ticks - 1);
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  double step = p;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) {
      step = m * p;
      break;
    }
  if (integral) step = std::max(1.0, std::round(step));
  for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step)
    t.push_back(std::round(v / step) * step);
  return t;
}

FAILSLOW_FUNC_DEF duration_unit duration_unit_for(double max_ns) {
  const double a = std::fabs(max_ns);
  if (a >= 1e9) return {1e9, "s"};
  if (a >= 1e6) return {1e6, "ms"};
  if (a >= 1e3) return {1e3, "us"};
  return {1, "ns"};
}

FAILSLOW_FUNC_DEF std::string tick_label(double v) {
  if (v == 0) return "0";
  const double a = std::fabs(v);
  const int digits = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3;
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, digits);
  std::string s(buf, r.ptr);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

FAILSLOW_FUNC_DEF std::vector<double> aggregate_max(const std::vector<double>& v, std::size_t rows, std::size_t cols,
                                                    std::size_t rb, std::size_t cb) {
  const std::size_t R = (rows + rb - 1) / rb, C = (cols + cb - 1) / cb;
  std::vector<double> out(R * C, std::numeric_limits<double>::quiet_NaN());
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) {
      const double x = v[r * cols + c];
      double& o = out[(r / rb) * C + c / cb];
      if (std::isfinite(x) && !(o >= x)) o = x;
    }
  return out;
}

FAILSLOW_FUNC_DEF svg_canvas::svg_canvas(double width, double height, std::string_view title) {
  out_ += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"";
  append_svg_number(out_, width);
  out_ += "\" height=\"";
  append_svg_number(out_, height);
  out_ += "\" viewBox=\"0 0 ";
  append_svg_number(out_, width);
  out_ += ' ';
  append_svg_number(out_, height);
  out_ += "\" font-family=\"";
  out_ += svg_font;
  out_ += "\" font-size=\"12\">\n<title>";
  append_xml_escaped(out_, title);
  out_ += "</title>\n";
  rect(0, 0, width, height, "#ffffff");
}

FAILSLOW_FUNC_DEF void svg_canvas::rect(double x, double y, double w, double h, std::string_view fill,
                                        std::string_view extra) {
  out_ += "<rect x=\"";
  append_svg_number(out_, x);
  out_ += "\" y=\"";
  append_svg_number(out_, y);
  out_ += "\" width=\"";
  append_svg_number(out_, w);
  out_ += "\" height=\"";
  append_svg_number(out_, h);
  out_ += "\" fill=\"";
  out_ += fill;
  out_ += '"';
  attrs(extra);
  out_ += "/>\n";
}

FAILSLOW_FUNC_DEF void svg_canvas::line(double x1, double y1, double x2, double y2, std::string_view stroke,
                                        double width, std::string_view extra) {
  out_ += "<line x1=\"";
  append_svg_number(out_, x1);
  out_ += "\" y1=\"";
  append_svg_number(out_, y1);
  out_ += "\" x2=\"";
  append_svg_number(out_, x2);
  out_ += "\" y2=\"";
  append_svg_number(out_, y2);
  out_ += "\" stroke=\"";
  out_ += stroke;
  out_ += "\" stroke-width=\"";
  append_svg_number(out_, width);
  out_ += '"';
  attrs(extra);
  out_ += "/>\n";
}

FAILSLOW_FUNC_DEF void svg_canvas::text(double x, double y, std::string_view s, std::string_view anchor, double size,
                                        std::string_view extra) {
  out_ += "<text x=\"";
  append_svg_number(out_, x);
  out_ += "\" y=\"";
  append_svg_number(out_, y);
  out_ += '"';
  if (anchor != "start") {
    out_ += " text-anchor=\"";
    out_ += anchor;
    out_ += '"';
  }
  if (size != 12) {
    out_ += " font-size=\"";
    append_svg_number(out_, size);
    out_ += '"';
  }
  attrs(extra);
  out_ += '>';
  append_xml_escaped(out_, s);
  out_ += "</text>\n";
}

FAILSLOW_FUNC_DEF void colour_bar(svg_canvas& c, double x, double y, double h, double lo, double hi,
                                  std::string_view label, std::string_view id) {
  std::string g = "<defs><linearGradient id=\"" + xml_escaped(id) + "\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">";
  for (std::size_t i = 0; i < viridis_table.size(); ++i) {
    g += "<stop offset=\"";
    append_svg_number(g, viridis_position(i));
    g += "\" stop-color=\"" + hex(viridis(viridis_position(i))) + "\"/>";
  }
  g += "</linearGradient></defs>\n";
  c.raw(g);
  c.text(x, y - 8, label, "start", 11);
  c.rect(x, y, 14, h, "url(#" + xml_escaped(id) + ")", "stroke=\"#555555\" stroke-width=\"0.5\"");
  if (!(hi > lo)) {
    c.text(x + 18, y + h / 2 + 4, tick_label(lo), "start", 11);
    return;
  }
  for (double t : nice_ticks(lo, hi, 6)) {
    const double ty = y + h - (t - lo) / (hi - lo) * h;
    c.line(x + 14, ty, x + 17, ty, "#555555");
    c.text(x + 19, ty + 4, tick_label(t), "start", 11);
  }
}

FAILSLOW_FUNC_DEF void draw_cells(svg_canvas& c, const std::vector<double>& v, const cell_layout& l, double lo,
                                  double hi, std::string_view css_class) {
  std::string g = "<g class=\"" + xml_escaped(css_class) + "\" shape-rendering=\"crispEdges\" data-x=\"" +
                  svg_number(l.x) + "\" data-y=\"" + svg_number(l.y) + "\" data-cell-width=\"" + svg_number(l.cell_w) +
                  "\" data-cell-height=\"" + svg_number(l.cell_h) + "\" data-rows=\"" + std::to_string(l.data_rows) +
                  "\" data-cols=\"" + std::to_string(l.data_cols) + "\" data-rows-per-cell=\"" +
                  std::to_string(l.row_bin) + "\" data-cols-per-cell=\"" + std::to_string(l.col_bin) + "\">\n";
  c.raw(g);
  auto fill_of = [&](double x) {
    if (!std::isfinite(x)) return std::string(no_data_fill);
    return hex(viridis(hi > lo ? (x - lo) / (hi - lo) : 0.5));
  };
  for (std::size_t r = 0; r < l.rows; ++r)
    for (std::size_t k = 0; k < l.cols;) {
      const std::string fill = fill_of(v[r * l.cols + k]);
      std::size_t e = k + 1;
      while (e < l.cols && fill_of(v[r * l.cols + e]) == fill) ++e;
      c.rect(l.x + static_cast<double>(k) * l.cell_w, l.y + static_cast<double>(r) * l.cell_h,
             static_cast<double>(e - k) * l.cell_w, l.cell_h, fill);
      k = e;
    }
  c.raw("</g>\n");
  c.rect(l.x - 0.5, l.y - 0.5, static_cast<double>(l.cols) * l.cell_w + 1, static_cast<double>(l.rows) * l.cell_h + 1,
         "none", "stroke=\"#333333\" stroke-width=\"1\" shape-rendering=\"crispEdges\"");
}

FAILSLOW_FUNC_DEF std::pair<double, double> finite_range(const std::vector<double>& v) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double x : v)
    if (std::isfinite(x)) {
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
  if (lo > hi) return {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN()};
  return {lo, hi};
}

FAILSLOW_FUNC_DEF double text_width(std::string_view s, double size) {
  std::size_t chars = 0;
  for (char ch : s)
    if ((static_cast<unsigned char>(ch) & 0xC0) != 0x80) ++chars;
  return 0.6 * size * static_cast<double>(chars);
}

}  // namespace failslow::io::detail
