// failslow/io/value_reader.hpp -- numeric data sets: one value per line, or one column of a
// CSV/TSV file, as doubles.
//
// Synopsis
//   value_column read_values(text, options, source)
//   value_column read_values_file(path, options)
//   Lines end with \n or \r\n; a UTF-8 byte order mark at the start is skipped. Empty lines, lines of spaces and lines
//   whose first non-space character is '#' are skipped (counted in comment_lines).
//   - options.column empty: one value per line. The first other line may be a header (a name
//     such as "duration_ns": it starts with a letter or a quote and is not a number); it is
//     skipped and kept in `column`.
//   - options.column a header name: the first other line is the header; the named column is read
//     from every following line. A 0-based index ("1"): that column; a first line that is not a
//     number there is a header, skipped.
//   Fields are separated by options.delimiter, or, when it is 0, by a tab if the first line has
//   one, else by ','. CSV fields may be quoted ("a, b", "say ""x"""), so a kernel name with
//   commas in an earlier column is one field.
//   A value: optional spaces, an optional sign, decimal digits with an optional fraction and
//   exponent (std::from_chars, general format: exact round-to-nearest, as Python's float()),
//   optional spaces; quotes around a CSV field are removed first. Numbers of at most 15
//   significant digits and a power of ten within 10^+-22 (integer nanoseconds, "12.345") take
//   Clinger's exact fast path, the rest from_chars: the same doubles either way. "inf",
//   "infinity" and "nan" (any case) are read only with options.allow_nonfinite; hex, digit
//   separators and trailing text are not numbers. options.nonnegative rejects values below 0 (durations).
//   The file is read in one block (io/detail/file_bytes.hpp: gzip data is decompressed
//   whatever the file's name, so .csv.gz works).
// Complexity: O(bytes): a pass counting the lines, one parsing them (a line of 1-15 digits
//   alone, integer nanoseconds, is read without a search for its end or a call).
// Errors: parse_error with file:line:column and the text found, for anything that is not a
//   number where one is expected (never a silent zero), a value outside double's range
//   (1e400), a non-finite value without allow_nonfinite, a negative value with nonnegative, a
//   line with too few fields, a missing
//   header name, an unterminated quote; invalid_argument for a file that cannot be opened or
//   read (missing, a directory) and for a data set without values (empty file, comments only).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "failslow/core/compile_mode.hpp"

namespace failslow::io {

struct value_read_options {
  std::string column;            ///< "" = one value per line; else a header name or a 0-based index
  char delimiter = 0;            ///< ',' or a tab; 0 = detect from the first line
  bool allow_nonfinite = false;  ///< accept inf, infinity and nan (any case)
  bool nonnegative = false;      ///< reject values < 0 (durations, sizes)
};

struct value_column {
  std::vector<double> values;
  std::string column;               ///< the header name of the column read ("" when there is none)
  std::uint64_t lines = 0;          ///< lines in the text
  std::uint64_t comment_lines = 0;  ///< empty, blank and '#' lines skipped
  bool header = false;              ///< a header line was skipped
};

FAILSLOW_FUNC value_column read_values(std::string_view text, const value_read_options& options = {},
                                       const std::string& source = "<values>");

FAILSLOW_FUNC value_column read_values_file(const std::string& path, const value_read_options& options = {});

}  // namespace failslow::io

#if FAILSLOW_HEADER_ONLY
#include "failslow/io/impl/value_reader.ipp"
#endif
