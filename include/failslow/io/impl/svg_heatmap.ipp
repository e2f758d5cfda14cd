// failslow/io/impl/svg_heatmap.ipp -- the definitions of io/svg_heatmap.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/io/detail/svg_canvas.hpp"
#include "failslow/io/svg_heatmap.hpp"

namespace failslow::io {

FAILSLOW_FUNC_DEF std::string heatmap_svg(const std::vector<double>& values, std::size_t rows, std::size_t cols,
                                          const heatmap_options& o) {
  using namespace detail;
  if (rows == 0 || cols == 0) throw invalid_argument("heatmap_svg: no rows or no columns");
  if (values.size() != rows * cols)
    throw invalid_argument("heatmap_svg: " + std::to_string(values.size()) + " values for " + std::to_string(rows) +
                           " x " + std::to_string(cols) + " cells");
  if (!o.col_labels.empty() && o.col_labels.size() != cols)
    throw invalid_argument("heatmap_svg: " + std::to_string(o.col_labels.size()) + " column labels for " +
                           std::to_string(cols) + " columns");
  if (o.max_plot_width < 16 || o.max_plot_height < 16 || o.max_cell == 0)
    throw invalid_argument("heatmap_svg: plot size below 16 pixels");
  auto label_of = [&](std::size_t c) { return o.col_labels.empty() ? static_cast<std::int64_t>(c) : o.col_labels[c]; };

  cell_layout l;
  l.data_rows = rows;
  l.data_cols = cols;
  l.row_bin = bin_size(rows, o.max_plot_height);
  l.col_bin = bin_size(cols, o.max_plot_width / 2);
  l.rows = (rows + l.row_bin - 1) / l.row_bin;
  l.cols = (cols + l.col_bin - 1) / l.col_bin;
  l.cell_h = std::clamp<double>(std::floor(static_cast<double>(o.max_plot_height) / static_cast<double>(l.rows)), 1,
                                static_cast<double>(o.max_cell));
  l.cell_w = std::clamp<double>(std::floor(static_cast<double>(o.max_plot_width) / static_cast<double>(l.cols)), 1,
                                1.5 * static_cast<double>(o.max_cell));
  const auto cells = aggregate_max(values, rows, cols, l.row_bin, l.col_bin);
  const double W = static_cast<double>(l.cols) * l.cell_w, H = static_cast<double>(l.rows) * l.cell_h;
  const auto [lo_ns, hi_ns] = finite_range(cells);
  const auto unit = duration_unit_for(std::isfinite(hi_ns) ? hi_ns : 0);

  // Text under the plot: what the reader must know to read it right.
  std::vector<std::string> notes;
  if (l.row_bin > 1 || l.col_bin > 1) {
    std::string n = "Aggregated by the largest value:";
    if (l.row_bin > 1)
      n += " each row is " + std::to_string(l.row_bin) + " " + o.row_name + "s (" + grouped(rows) + " in " +
           grouped(l.rows) + " rows)";
    if (l.col_bin > 1)
      n += std::string(l.row_bin > 1 ? ";" : "") + " each column is " + std::to_string(l.col_bin) + " " + o.col_name +
           "s (" + grouped(cols) + " in " + grouped(l.cols) + " columns)";
    notes.push_back(n + ".");
  }
  std::vector<std::size_t> seps;
  for (std::size_t s : o.row_separators)
    if (s > 0 && s < rows) seps.push_back(s);
  std::sort(seps.begin(), seps.end());
  seps.erase(std::unique(seps.begin(), seps.end()), seps.end());
  const bool draw_seps = !seps.empty() && H / static_cast<double>(seps.size() + 1) >= 4;
  std::vector<std::string> legend;
  if (draw_seps) legend.push_back("white lines separate " + o.separator_name);
  if (std::any_of(cells.begin(), cells.end(), [](double x) { return !std::isfinite(x); }))
    legend.push_back("grey: no data");
  std::vector<int> marks;
  for (int r : o.marked_rows)
    if (r >= 0 && static_cast<std::size_t>(r) < rows) marks.push_back(r);
  std::sort(marks.begin(), marks.end());
  marks.erase(std::unique(marks.begin(), marks.end()), marks.end());
  if (!marks.empty()) legend.push_back("triangles: " + o.marked_note);
  if (!legend.empty()) {
    std::string n;
    for (const auto& s : legend) n += (n.empty() ? "" : "; ") + s;
    n[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(n[0])));
    notes.push_back(n + ".");
  }

  const std::string subtitle =
      plural(rows, o.row_name) + " x " + plural(cols, o.col_name) +
      (o.col_labels.empty() ? ""
                            : " (" + std::to_string(label_of(0)) + "-" + std::to_string(label_of(cols - 1)) + ")") +
      "; colour: " + o.value_name + " in " + std::string(unit.name);
  const double x0 = 64, y0 = 62;
  l.x = x0;
  l.y = y0;
  const double bar_x = x0 + W + 74;
  double width = bar_x + 14 + 50;
  for (const auto& n : notes) width = std::max(width, 16 + text_width(n, 11));
  width = std::max({width, 16 + text_width(o.title, 14), 16 + text_width(subtitle, 11)});
  const double height = y0 + H + 42 + 16 * static_cast<double>(notes.size());

  svg_canvas c(std::ceil(width), std::ceil(height), o.title);
  c.text(8, 20, o.title, "start", 14, "font-weight=\"bold\"");
  c.text(8, 38, subtitle, "start", 11, "fill=\"#444444\"");
  draw_cells(c, cells, l, lo_ns, hi_ns, "heatmap-cells");

  if (draw_seps)
    for (std::size_t s : seps) {
      const double y = y0 + std::floor(static_cast<double>(s) / static_cast<double>(l.row_bin)) * l.cell_h;
      c.line(x0, y, x0 + W, y, "#ffffff", 1.5);
    }

  // Rank axis: ticks at the centre of the row (or bin) that holds the rank.
  const auto row_ticks =
      nice_ticks(0, static_cast<double>(rows - 1), std::max<std::size_t>(2, static_cast<std::size_t>(H / 28)), true);
  for (double t : row_ticks) {
    const auto r = static_cast<std::size_t>(t);
    const double y = y0 + (static_cast<double>(r / l.row_bin) + 0.5) * l.cell_h;
    c.line(x0 - 4, y, x0, y, "#333333");
    c.text(x0 - 6, y + 4, std::to_string(r), "end", 11);
  }
  c.text(16, y0 + H / 2, o.row_name, "middle", 12, "transform=\"rotate(-90 16 " + svg_number(y0 + H / 2) + ")\"");

  // Step axis: ticks at the centre of the column that holds the step number.
  const auto col_ticks = nice_ticks(static_cast<double>(label_of(0)), static_cast<double>(label_of(cols - 1)),
                                    std::max<std::size_t>(2, static_cast<std::size_t>(W / 56)), true);
  for (double t : col_ticks) {
    std::size_t col = cols;
    for (std::size_t k = 0; k < cols; ++k)
      if (static_cast<double>(label_of(k)) == t) {
        col = k;
        break;
      }
    if (col == cols) continue;
    const double x = x0 + (static_cast<double>(col / l.col_bin) + 0.5) * l.cell_w;
    c.line(x, y0 + H, x, y0 + H + 4, "#333333");
    c.text(x, y0 + H + 16, std::to_string(label_of(col)), "middle", 11);
  }
  c.text(x0 + W / 2, y0 + H + 32, o.col_name, "middle", 12);

  // Marks: a triangle at the row's right end, labelled where labels do not overlap.
  double last_label_y = -1e9;
  std::size_t shown = 0;
  for (int r : marks) {
    if (shown == 12) break;
    ++shown;
    const double y = y0 + (static_cast<double>(static_cast<std::size_t>(r) / l.row_bin) + 0.5) * l.cell_h;
    const double x = x0 + W + 3;
    c.raw("<polygon points=\"" + svg_number(x) + "," + svg_number(y) + " " + svg_number(x + 9) + "," +
          svg_number(y - 5) + " " + svg_number(x + 9) + "," + svg_number(y + 5) + "\" fill=\"#222222\"/>\n");
    if (y - last_label_y >= 12) {
      c.text(x + 12, y + 4, o.row_name + " " + std::to_string(r), "start", 11);
      last_label_y = y;
    }
  }
  if (marks.size() > shown)
    c.text(x0 + W + 3, y0 + H + 16, "+" + std::to_string(marks.size() - shown) + " more", "start", 11);

  colour_bar(c, bar_x, y0, std::clamp(H, 100.0, 320.0), lo_ns / unit.ns, hi_ns / unit.ns, unit.name,
             "fs-scale-" + fnv1a_hex(o.title + subtitle));
  for (std::size_t i = 0; i < notes.size(); ++i)
    c.text(8, y0 + H + 52 + 16 * static_cast<double>(i), notes[i], "start", 11, "fill=\"#444444\"");
  return c.finish();
}

}  // namespace failslow::io
