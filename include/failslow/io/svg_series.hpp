// failslow/io/svg_series.hpp -- the job's iteration time per step as an SVG line chart, with
// the slow windows (L1) shaded.
//
// Synopsis
//   std::string iteration_series_svg(series, options)
//   series: per step its number, the median over ranks of the iteration time and the
//   smallest and largest rank's (ns; NaN = no data, the line breaks there). Drawn: the range
//   over ranks as a light band, the median as a dark line (viridis' darkest), the healthy
//   baseline as a dashed line when given, and each window of options.windows as an orange
//   shaded span over its steps (orange against purple stays distinct with the common colour-
//   vision deficiencies) labelled above the plot (labels that would overlap are numbered
//   and listed under the plot). The y axis starts near the smallest value (not at 0), in the
//   unit that reads best; ticks at 1/2/5 x 10^k.
//   The plot area is marked by class "series-plot" with data-x, data-y, data-width,
//   data-height; text is XML-escaped; the same input gives the same bytes.
// Complexity: O(steps + windows).
// Errors: series vectors of different lengths, no steps, or steps not ascending throw
//   invalid_argument.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "failslow/core/compile_mode.hpp"

namespace failslow::io {

struct iteration_series {
  std::vector<std::int64_t> steps;  ///< step numbers, ascending
  std::vector<double> median_ns;    ///< per step, the median over ranks
  std::vector<double> min_ns;       ///< per step, the fastest rank (empty: no band)
  std::vector<double> max_ns;       ///< per step, the slowest rank (empty: no band)
};

struct series_window {
  std::int64_t first = 0, last = 0;  ///< step numbers, inclusive
  std::string label;                 ///< e.g. "L1 shift 1.09x"
  bool job = true;                   ///< the job's window (shaded darker) or one rank's
};

struct series_options {
  std::string title = "Iteration time per step";
  std::vector<series_window> windows;
  double baseline_ns = std::numeric_limits<double>::quiet_NaN();  ///< healthy pace, dashed
  double plot_width = 720, plot_height = 240;
};

FAILSLOW_FUNC std::string iteration_series_svg(const iteration_series& s, const series_options& o = {});

}  // namespace failslow::io

#if FAILSLOW_HEADER_ONLY
#include "failslow/io/impl/svg_series.ipp"
#endif
