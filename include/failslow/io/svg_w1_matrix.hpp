// failslow/io/svg_w1_matrix.hpp -- a Wasserstein-1 distance matrix between ranks as an SVG
// figure, with its groups' boundaries drawn: a degraded rank shows as a bright cross, a degraded
// group as a bright block.
//
// Synopsis
//   std::string w1_matrix_svg(d, options)
//   d: n x n distances in ns (stats/w1_matrix_rows.hpp or stats/w1_matrix.hpp computes them),
//   as a dense_array<double, 2> or any matrix with rows(), cols() and d(i, j) (an Eigen
//   matrix: this header does not include Eigen; the matrix is copied once), NaN = not
//   measured; members in the order of options.labels (their ranks), grouped:
//   options.group_starts are the first members of each group (ascending; 0 implied),
//   options.group_names their names ("dp:0").
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

#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/dense_array.hpp"

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

FAILSLOW_FUNC std::string w1_matrix_svg(const dense_array<double, 2>& d, const w1_matrix_options& o = {});

/// The same for a matrix type with rows(), cols() and d(i, j), such as Eigen's.
template <class Matrix, class = decltype(std::declval<const Matrix&>().rows() + std::declval<const Matrix&>().cols())>
std::string w1_matrix_svg(const Matrix& d, const w1_matrix_options& o = {}) {
  const auto rows = static_cast<std::size_t>(d.rows()), cols = static_cast<std::size_t>(d.cols());
  dense_array<double, 2> copy({rows, cols});
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) copy(i, j) = static_cast<double>(d(i, j));
  return w1_matrix_svg(copy, o);
}

}  // namespace failslow::io

#if FAILSLOW_HEADER_ONLY
#include "failslow/io/impl/svg_w1_matrix.ipp"
#endif
