// failslow/io/diagnosis_figures.hpp -- the figures of a diagnosed job: what `failslow diagnose
// --svg DIR` writes and the HTML report shows.
//
// Synopsis
//   std::vector<figure> diagnosis_figures(model, topo, report, options)
//   From the job model (diagnose/job_model.hpp) and the report diagnose() made of it:
//     iteration_series   the job's iteration time per step (median over ranks, the band from
//                        the fastest to the slowest rank), every L1 slow window shaded, the
//                        job's healthy pace dashed (svg_series.hpp)
//     heatmap            rank x step of the iteration time, then one per phase a finding names
//                        (backward, compute, communication, ...; the phase's time per step),
//                        and per degraded-kernel finding its kernel's mean duration per launch;
//                        the ranks each one's findings name are pointed at, pipeline stages
//                        separated when they are contiguous in rank order (svg_heatmap.hpp)
//     w1_matrix          per L3 degraded_kernel or degraded_link finding: the W1 distances
//                        between the ranks of the finding's pipeline stage, grouped by the
//                        finding's group dimension ("dp:5" -> the stage's dp groups), for its
//                        kernel or collective over its steps; each rank's distribution is the
//                        mean of its per-step quantile functions (the 1-D Wasserstein
//                        barycentre, as L3 takes it; stats/quantile_grid.hpp, K = options.
//                        quantiles), D from stats/w1_matrix_rows.hpp. Over options.w1_max_ranks
//                        ranks, the groups nearest the finding's are kept and the figure says so
//                        (svg_w1_matrix.hpp). Needs the model's windows (keep_windows).
//   The series and the iteration heatmap are overview figures (io/figure.hpp).
//   Each figure has a file name (ASCII letters, digits, '_', '-', '.svg', unique), a title and
//   the indices of the findings it shows.
//   refer_to_figures(report, figures, dir) adds them to report.files as dir/file.
// Complexity: O(ranks x steps) per heatmap; a W1 matrix O(n x steps x K + n^2 K).
// Errors: a topology whose world size differs from the model's throws invalid_argument; the
//   figure writers' errors (none for a model diagnose() accepted).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/report.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/diagnose/job_model.hpp"
#include "failslow/io/figure.hpp"

namespace failslow::io {

struct figure_options {
  std::size_t max_plot_width = 720;   ///< heatmaps: more columns are aggregated (svg_heatmap.hpp)
  std::size_t max_plot_height = 512;  ///< heatmaps: more rows are aggregated
  std::size_t w1_max_ranks = 256;     ///< ranks in a W1 matrix (the finding's group is always kept)
  std::size_t quantiles = 64;         ///< K of the quantile grid (L3's default)
  bool truncated = true;              ///< clusters reconstructed truncated, as L3 does
  unsigned threads = 1;               ///< for the W1 matrices (0: every core)
};

namespace detail {

/// A file-name-safe form of s: ASCII letters and digits kept (lower case), runs of anything
/// else as one '_', at most 40 characters.
FAILSLOW_FUNC std::string file_stem(std::string_view s);

}  // namespace detail

FAILSLOW_FUNC std::vector<figure> diagnosis_figures(const diagnose::job_model& m, const topology& topo,
                                                    const report& rep, const figure_options& o = {});

/// Adds the figures to report.files as dir/file (dir empty: the file name alone).
FAILSLOW_FUNC void refer_to_figures(report& rep, const std::vector<figure>& figures, const std::string& dir);

}  // namespace failslow::io

#if FAILSLOW_HEADER_ONLY
#include "failslow/io/impl/diagnosis_figures.ipp"
#endif
