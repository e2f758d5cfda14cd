// failslow/io/svg_w1_matrix.hpp -- a Wasserstein-1 distance matrix between ranks as an SVG
// figure, with its groups' boundaries drawn: a degraded rank shows as a bright cross, a degraded
// group as a bright block.
//
// Synopsis
//   std::string w1_matrix_svg(d, options)
//   d: n x n distances in ns (stats/w1_matrix.hpp computes them), NaN = not measured; members
//   in the order of options.labels (their ranks), grouped: options.group_starts are the first
//   members of each group (ascending; 0 implied), options.group_names their names ("dp:0").
//   Cells are coloured by viridis(d / max d) (0 = the darkest), with a colour bar in the unit
//   that reads best; white lines separate the groups, whose names stand above the matrix where
//   they fit. Each member's rank labels its row and column when cells are 11 px or more, else
//   the first rank of each group does. options.marked (member indices) are pointed at.
//   More than options.max_plot_size members are aggregated in bins of consecutive members by
//   the largest distance, and the figure says so.
//   The cells' group has class "w1-cells" and its layout as data-* attributes (see
//   svg_heatmap.hpp). Text is XML-escaped; the same input gives the same bytes.
// Complexity: O(n^2).
// Errors: a non-square or empty matrix, a label count != n, group starts out of range or not
//   ascending, or a group name count != group count throw invalid_argument.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "failslow/core/error.hpp"
#include "failslow/io/detail/svg_canvas.hpp"

namespace failslow::io {

struct w1_matrix_options {
  std::string title;                      ///< e.g. "W1 between ranks: flash_bwd_kernel, steps 104-111"
  std::vector<std::string> subtitle;      ///< lines under the title
  std::vector<int> labels;                ///< rank of each member
  std::vector<std::size_t> group_starts;  ///< first member of each group after the first
  std::vector<std::string> group_names;   ///< one per group (group_starts.size() + 1), or empty
  std::vector<std::size_t> marked;        ///< members to point at
  std::size_t max_plot_size = 480;        ///< pixels; more members are aggregated
  std::size_t max_cell = 28;
};

inline std::string w1_matrix_svg(const Eigen::MatrixXd& d, const w1_matrix_options& o = {}) {
  using namespace detail;
  const auto n = static_cast<std::size_t>(d.rows());
  if (n == 0 || d.rows() != d.cols())
    throw invalid_argument("w1_matrix_svg: a " + std::to_string(d.rows()) + " x " + std::to_string(d.cols()) +
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

  std::vector<double> v(n * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) v[i * n + j] = d(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j));
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
