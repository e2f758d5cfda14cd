// failslow/io/impl/svg_w1_matrix.ipp -- the definitions of io/svg_w1_matrix.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/io/detail/svg_canvas.hpp"
#include "failslow/io/svg_w1_matrix.hpp"

namespace failslow::io {

FAILSLOW_FUNC_DEF std::string w1_matrix_svg(const dense_array<double, 2>& d, const w1_matrix_options& o) {
  using namespace detail;
  const std::size_t n = d.shape(0);
  if (n == 0 || d.shape(0) != d.shape(1))
    throw invalid_argument("w1_matrix_svg: a " + std::to_string(d.shape(0)) + " x " + std::to_string(d.shape(1)) +
                           " matrix, want square and not empty");
  if (o.labels.size() != n)
    throw invalid_argument("w1_matrix_svg: " + std::to_string(o.labels.size()) + " labels for " + std::to_string(n) +
                           " members");
  std::vector<std::size_t> starts = {0};
  for (std::size_t s : o.group_starts) {
    if (s <= starts.back() || s >= n) throw invalid_argument("w1_matrix_svg: group starts must ascend inside (0, n)");
    starts.push_back(s);
  }
  if (!o.group_names.empty() && o.group_names.size() != starts.size())
    throw invalid_argument("w1_matrix_svg: " + std::to_string(o.group_names.size()) + " group names for " +
                           std::to_string(starts.size()) + " groups");
  if (o.max_plot_size < 16 || o.max_cell == 0) throw invalid_argument("w1_matrix_svg: plot size below 16 pixels");

  const std::vector<double> v(d.begin(), d.end());  // row-major n x n
  cell_layout l;
  l.data_rows = l.data_cols = n;
  l.row_bin = l.col_bin = bin_size(n, o.max_plot_size);
  l.rows = l.cols = (n + l.row_bin - 1) / l.row_bin;
  l.cell_w = l.cell_h =
      std::clamp<double>(std::floor(static_cast<double>(o.max_plot_size) / static_cast<double>(l.rows)), 1,
                         static_cast<double>(o.max_cell));
  const auto cells = aggregate_max(v, n, n, l.row_bin, l.col_bin);
  const double S = static_cast<double>(l.rows) * l.cell_w;
  const auto range = finite_range(cells);
  const double hi_ns = std::isfinite(range.second) && range.second > 0 ? range.second : 1;
  const auto unit = duration_unit_for(hi_ns);
  const bool every_label = l.row_bin == 1 && l.cell_h >= 11;
  double label_w = 0;
  for (int r : o.labels) label_w = std::max(label_w, text_width(std::to_string(r), 11));

  std::vector<std::string> notes;
  if (l.row_bin > 1)
    notes.push_back("Aggregated by the largest distance: each cell is " + std::to_string(l.row_bin) + " x " +
                    std::to_string(l.row_bin) + " ranks (" + grouped(n) + " ranks in " + grouped(l.rows) + " rows).");
  std::string legend;
  if (starts.size() > 1) legend = "White lines separate the groups";
  if (std::any_of(cells.begin(), cells.end(), [](double x) { return !std::isfinite(x); }))
    legend += std::string(legend.empty() ? "Grey" : "; grey") + ": no data";
  if (!o.marked.empty())
    legend += std::string(legend.empty() ? "Triangles" : "; triangles") + ": ranks named by a finding";
  if (!legend.empty()) notes.push_back(legend + ".");

  const double header = 30 + 16 * static_cast<double>(o.subtitle.size());
  const double x0 = 24 + label_w + 8, y0 = header + 22;
  const double bar_x = x0 + S + 84;
  double width = bar_x + 14 + 50;
  width = std::max(width, 16 + text_width(o.title, 14));
  for (const auto& s : o.subtitle) width = std::max(width, 16 + text_width(s, 11));
  for (const auto& s : notes) width = std::max(width, 16 + text_width(s, 11));
  const double bottom_labels = every_label ? label_w + 10 : 20;
  const double height = y0 + S + bottom_labels + 22 + 16 * static_cast<double>(notes.size());
  l.x = x0;
  l.y = y0;

  svg_canvas c(std::ceil(width), std::ceil(height), o.title);
  c.text(8, 20, o.title, "start", 14, "font-weight=\"bold\"");
  for (std::size_t i = 0; i < o.subtitle.size(); ++i)
    c.text(8, 38 + 16 * static_cast<double>(i), o.subtitle[i], "start", 11, "fill=\"#444444\"");
  draw_cells(c, cells, l, 0, hi_ns, "w1-cells");

  auto pos = [&](std::size_t member) { return static_cast<double>(member / l.row_bin) * l.cell_w; };
  for (std::size_t g = 0; g < starts.size(); ++g) {
    const double a = pos(starts[g]);
    const double b = g + 1 < starts.size() ? pos(starts[g + 1]) : S;
    if (g > 0) {
      c.line(x0 + a, y0, x0 + a, y0 + S, "#ffffff", 2);
      c.line(x0, y0 + a, x0 + S, y0 + a, "#ffffff", 2);
    }
    if (!o.group_names.empty() && text_width(o.group_names[g], 11) <= b - a + 4)
      c.text(x0 + (a + b) / 2, y0 - 6, o.group_names[g], "middle", 11, "fill=\"#444444\"");
    if (!every_label) {  // the first rank of each group
      const double y = y0 + a + l.cell_h / 2;
      c.text(x0 - 6, y + 4, std::to_string(o.labels[starts[g]]), "end", 11);
    }
  }
  if (every_label)
    for (std::size_t i = 0; i < n; ++i) {
      const double at = pos(i) + l.cell_h / 2;
      const bool bold = std::find(o.marked.begin(), o.marked.end(), i) != o.marked.end();
      const std::string weight = bold ? "font-weight=\"bold\"" : "";
      c.text(x0 - 6, y0 + at + 4, std::to_string(o.labels[i]), "end", 11, weight);
      const double bx = x0 + at + 4, by = y0 + S + 6;
      c.text(bx, by, std::to_string(o.labels[i]), "end", 11,
             "transform=\"rotate(-90 " + svg_number(bx) + " " + svg_number(by) + ")\"" + (bold ? " " + weight : ""));
    }
  c.text(12, y0 + S / 2, "rank", "middle", 12, "transform=\"rotate(-90 12 " + svg_number(y0 + S / 2) + ")\"");
  c.text(x0 + S / 2, y0 + S + bottom_labels + 8, "rank", "middle", 12);

  double last_y = -1e9;
  for (std::size_t m : o.marked) {
    if (m >= n) continue;
    const double y = y0 + pos(m) + l.cell_h / 2, x = x0 + S + 3;
    c.raw("<polygon points=\"" + svg_number(x) + "," + svg_number(y) + " " + svg_number(x + 9) + "," +
          svg_number(y - 5) + " " + svg_number(x + 9) + "," + svg_number(y + 5) + "\" fill=\"#222222\"/>\n");
    if (y - last_y >= 12) {
      c.text(x + 12, y + 4, "rank " + std::to_string(o.labels[m]), "start", 11);
      last_y = y;
    }
  }
  colour_bar(c, bar_x, y0, std::clamp(S, 100.0, 320.0), 0, hi_ns / unit.ns, unit.name,
             "fs-scale-" + fnv1a_hex(o.title + "w1"));
  for (std::size_t i = 0; i < notes.size(); ++i)
    c.text(8, y0 + S + bottom_labels + 30 + 16 * static_cast<double>(i), notes[i], "start", 11, "fill=\"#444444\"");
  return c.finish();
}

}  // namespace failslow::io
