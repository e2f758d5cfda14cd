// failslow/io/csv_reader.hpp -- plain kernel-duration tables (CSV or TSV), for in-house
// profilers and exported data sets.
//
// Synopsis
//   std::vector<trace_data> read_kernel_table(text, names, options, source)
//   std::vector<trace_data> read_kernel_table_file(path, names, options)
//   One trace_data per rank in the table, sorted by rank; each has event_steps filled (the
//   step column) and distributed->rank set. Layout:
//     - lines starting with '#' and empty lines are ignored;
//     - the first other line is the header: column names, in any order, separated by the
//       delimiter: ',' (CSV, RFC 4180 quoting: "a, b" and "say ""x""") or a tab (TSV, no
//       quoting); options.delimiter = 0 detects it (a tab in the header means TSV);
//     - required columns: rank, step, name, start_ns, duration_ns;
//       optional: stream (default 0), kind (kernel, memcpy, memset, collective, annotation,
//       cpu_op, runtime; empty or absent: classified by name with kernel_classifier, so
//       NCCL kernels become collective), device (default 0 for GPU kinds, -1 otherwise),
//       correlation (default 0); other columns are ignored;
//     - integers in decimal; step may be empty or -1 (not in a step).
//   Example:
//     rank,step,name,start_ns,duration_ns,stream
//     0,100,"void gemm<float, 128>(float*)",1000,2500,7
//   read_kernel_table_file reads the whole file in one block (io/detail/file_bytes.hpp, which
//   needs zlib): gzip data is decompressed whatever the file's name, so .csv.gz works; a name
//   ending in .tsv or .tsv.gz means TSV.
// Complexity: O(bytes).
// Errors: parse_error with line, column and byte offset: no header (an empty table), a missing
//   required column, a row
//   with the wrong number of fields, a field that is not an integer (or out of its range),
//   duration_ns < 0, start_ns < 0, start_ns + duration_ns past int64, an unknown kind, an
//   unterminated quote. The file cannot be opened: invalid_argument; corrupt gzip data: parse_error.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/event.hpp"
#include "failslow/core/kernel_class.hpp"
#include "failslow/core/name_table.hpp"
#include "failslow/io/trace_data.hpp"

namespace failslow::io {

struct kernel_table_options {
  char delimiter = 0;                             ///< ',' or a tab; 0 = detect from the header
  const kernel_classifier* classifier = nullptr;  ///< nullptr = kernel_classifier::defaults()
};

/// Parses an event_kind name ("kernel", ..., "runtime"); false when unknown.
FAILSLOW_FUNC bool parse_event_kind(std::string_view s, event_kind& out) noexcept;

FAILSLOW_FUNC std::vector<trace_data> read_kernel_table(std::string_view text, name_table& names,
                                                        const kernel_table_options& options = {},
                                                        const std::string& source = "<kernel table>");

FAILSLOW_FUNC std::vector<trace_data> read_kernel_table_file(const std::string& path, name_table& names,
                                                             const kernel_table_options& options = {});

}  // namespace failslow::io

#if FAILSLOW_HEADER_ONLY
#include "failslow/io/impl/csv_reader.ipp"
#endif
