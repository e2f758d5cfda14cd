// failslow/io/figure.hpp -- a figure of a report: an SVG document, its file name and title, and
// the findings it shows.
//
// Synopsis
//   struct figure: kind ("iteration_series", "heatmap", "w1_matrix"), file (a safe file name),
//   title (what it shows), findings (indices into report::findings), overview (a picture of
//   the whole job rather than the evidence of particular findings), svg (the document).
//   io/diagnosis_figures.hpp makes them; io/html_report.hpp places them; `failslow diagnose
//   --svg DIR` writes them.
// Complexity: plain data. Errors: none.
#pragma once

#include <string>
#include <vector>

namespace failslow::io {

struct figure {
  std::string kind;                   ///< "iteration_series", "heatmap", "w1_matrix"
  std::string file;                   ///< file name, e.g. "heatmap_backward.svg"
  std::string title;                  ///< what it shows
  std::vector<std::size_t> findings;  ///< indices into report::findings
  bool overview = false;              ///< the whole job (shown apart from the findings)
  std::string svg;
};

}  // namespace failslow::io
