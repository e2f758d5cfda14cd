// failslow/io/svg_heatmap.hpp -- a rank x step heatmap of a duration as an SVG figure: the
// straggler shows as a horizontal stripe, a slow step as a vertical one.
//
// Synopsis
//   std::string heatmap_svg(values, rows, cols, options)
//   values: row-major rows x cols durations in ns (row = rank, column = step), NaN = no data.
//   Each cell is coloured by viridis((v - lo) / (hi - lo)) (perceptually uniform, colour-blind
//   safe, readable in grey), [lo, hi] the smallest and largest value drawn, with a colour bar
//   in the unit that reads best (ns, us, ms or s); cells without data are grey. Axes: ranks
//   (top to bottom) and step numbers (options.col_labels), ticks at 1/2/5 x 10^k.
//   Large jobs: more rows than options.max_plot_height pixel rows (16,384 ranks > 512) are
//   aggregated in bins of ceil(rows / 512) consecutive ranks by their largest value, so a
//   straggler stays as bright as it is; columns likewise beyond max_plot_width / 2 (two pixels
//   per column). The figure says so under the plot.
//   options.marked_rows: ranks named by findings, pointed at by a triangle and labelled
//   (12 at most; the rest are counted); options.row_separators: first rows of blocks (pipeline
//   stages) drawn as white lines.
//   The cells' group carries class "heatmap-cells" and its layout as data-* attributes (x, y,
//   cell-width, cell-height, rows, cols, rows-per-cell, cols-per-cell), so a test or a tool can
//   find a rank's row in the rendered image. A 1 px #333333 frame surrounds the cells.
//   Text is XML-escaped; numbers have at most two decimals; the same input gives the same bytes.
// Complexity: O(rows x cols) to aggregate, O(drawn cells) output (runs of one colour in a row
//   are one rect): about 60 bytes per cell, <= 1 MB at 512 x 360 cells.
// Errors: values.size() != rows x cols, rows or cols == 0, a label count != cols, or a
//   plot size below 16 pixels throw invalid_argument.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "failslow/core/compile_mode.hpp"

namespace failslow::io {

struct heatmap_options {
  std::string title;                     ///< first line, e.g. "backward compute per step"
  std::string value_name = "duration";   ///< what the colour shows, for the colour bar and the subtitle
  std::string row_name = "rank";         ///< the vertical axis
  std::string col_name = "step";         ///< the horizontal axis
  std::vector<std::int64_t> col_labels;  ///< per column its number (step numbers); empty: 0, 1, ...
  std::vector<int> marked_rows;          ///< rows to point at (ranks named by findings)
  std::string marked_note = "ranks named by a finding";
  std::vector<std::size_t> row_separators;  ///< first rows of blocks, drawn as white lines
  std::string separator_name = "pipeline stages";
  std::size_t max_plot_width = 720;   ///< pixels; more than width / 2 columns are aggregated
  std::size_t max_plot_height = 512;  ///< pixels; more rows are aggregated
  std::size_t max_cell = 16;          ///< largest cell height (and 1.5x that width) in pixels
};

FAILSLOW_FUNC std::string heatmap_svg(const std::vector<double>& values, std::size_t rows, std::size_t cols,
                                      const heatmap_options& o = {});

}  // namespace failslow::io

#if FAILSLOW_HEADER_ONLY
#include "failslow/io/impl/svg_heatmap.ipp"
#endif
