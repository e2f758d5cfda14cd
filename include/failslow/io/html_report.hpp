// failslow/io/html_report.hpp -- the diagnosis as one self-contained HTML page: the verdict
// first, then every finding with its evidence and its figures inline.
//
// Synopsis
//   std::string report_to_html(report, figures, options)
//   One HTML5 document, no scripts, no external style sheets, fonts or images (the figures are
//   inline SVG, the style one <style> element): it opens offline in any browser, e.g. from a
//   cluster's shared file system. Top-down:
//     header    ranks, layout and where it came from, steps
//     Verdict   the summary of every rank-level finding (L2 and above), most severe first, or
//               of the most severe L1 window when no rank is to blame, or "no fail-slow
//               problem found" (as io/report_text.hpp)
//     Findings  in the report's order (most severe first): level, kind, ranks, group, phase,
//               kernel, steps, the summary, the evidence as a table (durations with their
//               unit, lists of numbers shortened to options.max_list items), then the figures
//               that show it (a figure shown under an earlier finding is linked instead)
//     Overview  the figures of the whole job (figure::overview: the iteration series, the
//               iteration heatmap)
//     Notes     what could not be diagnosed and why; Files: report.files
//   Text is HTML-escaped (& < > " '); figures' SVG is inserted as given (the svg_*.hpp
//   writers escape their text). Every figure sits in <figure id="fig-N" class="KIND">, numbered
//   1, 2, ... in the order the page shows them.
//   The same inputs give the same bytes.
// Complexity: O(size of the report and the figures).
// Errors: none (std::bad_alloc aside).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/report.hpp"
#include "failslow/io/figure.hpp"

namespace failslow::io {

struct html_report_options {
  std::string title = "failslow diagnosis";
  std::size_t max_list = 16;  ///< numbers shown of an evidence list (the rest are counted)
};

FAILSLOW_FUNC std::string report_to_html(const report& r, const std::vector<figure>& figures,
                                         const html_report_options& o = {});

}  // namespace failslow::io

#if FAILSLOW_HEADER_ONLY
#include "failslow/io/impl/html_report.ipp"
#endif
