// failslow/io/report_json.hpp -- writes a diagnosis report as JSON, schema failslow.report/1.
//
// Synopsis
//   std::string report_to_json(report, indent = 2)          the document
//   void write_report_json(report, out, indent = 2)         appends it to `out`
//   The document (docs/report.md), keys in this order:
//     {"schema": "failslow.report/1", "world_size", "steps": {"first", "last"},
//      "topology": {"tp", "pp", "dp", "cp", "ep", "order", "source"},
//      "findings": [{"level", "kind", "ranks": [...], "group", "phase", "kernel",
//                    "first_step", "last_step", "score", "evidence": {...}, "summary"}],
//      "notes": [...], "files": [{"kind", "path", "title", "findings": [...]}]}
//   group, phase and kernel are written only when not empty, files only when there are some
//   (figures written beside the report; their findings are indices into "findings"); findings
//   in the report's order (sort_by_severity in core/report.hpp sorts them). Evidence items are
//   written in the order they were added, each as a number, a string or an array of numbers.
//   Numbers: integral values below 2^53 as integers, others as the shortest decimal that reads
//   back as the same double, NaN and infinities as null. Strings are JSON-escaped (quotes,
//   backslashes, control characters); UTF-8 passes through.
//   indent > 0: one member per line, nested `indent` spaces deeper, lists of numbers on one
//   line; indent <= 0: the whole document on one line without spaces. No trailing newline.
//   The same report gives the same bytes.
// Complexity: O(size of the document).
// Errors: none (std::bad_alloc aside).
#pragma once

#include <string>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/report.hpp"

namespace failslow::io {

/// Appends the failslow.report/1 document of `rep` to `out` (see the file synopsis).
FAILSLOW_FUNC void write_report_json(const report& rep, std::string& out, int indent = 2);

/// The failslow.report/1 document of `rep` (see the file synopsis).
inline std::string report_to_json(const report& rep, int indent = 2) {
  std::string out;
  write_report_json(rep, out, indent);
  return out;
}

}  // namespace failslow::io

#if FAILSLOW_HEADER_ONLY
#include "failslow/io/impl/report_json.ipp"
#endif
