// failslow/io/report_text.hpp -- the diagnosis report as text a person reads in a terminal.
//
// Synopsis
//   std::string report_to_text(report, options)
//   Top-down: a header (ranks, layout and where it came from, steps), then the verdict -- the
//   summary of every rank-level finding (L2 and above), most severe first, or of the most
//   severe L1 window when no rank is to blame, or one line saying that nothing was found --
//   then the evidence level by level (L1 -> L2 -> L3 -> L4): per finding its steps, effect,
//   the numbers behind it (baseline vs observed, z, q, peers, who waits), and last the notes
//   (what could not be diagnosed and why), and the files written beside the report (figures)
//   with the findings they show. Lines are wrapped at options.width columns.
// Complexity: O(size of the report).
// Errors: none.
#pragma once

#include <cstddef>
#include <string>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/report.hpp"

namespace failslow::io {

struct text_report_options {
  std::size_t width = 100;                  ///< wrap lines at this many columns (0: never)
  std::size_t max_findings_per_level = 20;  ///< the rest are counted
};

namespace detail {

FAILSLOW_FUNC std::string num(double v, const char* fmt = "%.3g");

inline std::string steps_text(const finding& f) {
  return f.first_step == f.last_step ? "step " + std::to_string(f.first_step)
                                     : "steps " + std::to_string(f.first_step) + "-" + std::to_string(f.last_step);
}

}  // namespace detail

FAILSLOW_FUNC std::string report_to_text(const report& r, const text_report_options& o = {});

}  // namespace failslow::io

#if FAILSLOW_HEADER_ONLY
#include "failslow/io/impl/report_text.ipp"
#endif
