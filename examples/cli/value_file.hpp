// Reads a column of numbers for the statistics subcommands: one value per line, or one column
// of a CSV/TSV file (by header name or 0-based index). Blank lines and '#' comments are skipped;
// anything else that is not a number is a failslow::parse_error naming the line and column.
#pragma once

#include <failslow/core/error.hpp>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace failslow_cli {

struct value_column {
  std::vector<double> values;
  std::string column;  ///< the column read ("" for one value per line)
};

inline value_column read_value_file(const std::string& path, const std::optional<std::string>& column) {
  std::ifstream in(path);
  if (!in) throw failslow::invalid_argument("cannot open " + path);
  value_column out;
  std::string line;
  std::uint64_t line_no = 0, offset = 0;
  std::optional<std::size_t> index;
  char sep = 0;
  bool may_be_header = false;  // the first line of a file read by column index
  auto split = [&](const std::string& s) {
    std::vector<std::string> fields;
    std::size_t start = 0;
    while (true) {
      const auto end = s.find(sep, start);
      fields.push_back(s.substr(start, end == std::string::npos ? std::string::npos : end - start));
      if (end == std::string::npos) break;
      start = end + 1;
    }
    return fields;
  };
  while (std::getline(in, line)) {
    ++line_no;
    const std::uint64_t line_offset = offset;
    offset += line.size() + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    std::string field = line;
    std::uint64_t field_column = 1;
    if (column) {
      if (!sep) {  // the first data line decides the separator and, for a name, is the header
        sep = line.find('\t') != std::string::npos ? '\t' : ',';
        const auto names = split(line);
        char* end = nullptr;
        const unsigned long i = std::strtoul(column->c_str(), &end, 10);
        if (end && *end == '\0' && !column->empty()) {
          index = i;
          may_be_header = true;
        } else {
          for (std::size_t k = 0; k < names.size(); ++k)
            if (names[k] == *column) index = k;
          if (!index)
            throw failslow::parse_error({path, line_no, 1, line_offset},
                                        "a header with a column named '" + *column + "'");
          out.column = *column;
          continue;
        }
        out.column = *column;
      }
      const auto fields = split(line);
      if (*index >= fields.size())
        throw failslow::parse_error({path, line_no, 1, line_offset},
                                    "at least " + std::to_string(*index + 1) + " fields");
      field = fields[*index];
      for (std::size_t k = 0; k < *index; ++k) field_column += fields[k].size() + 1;
    }
    const char* begin = field.c_str();
    while (*begin == ' ' || *begin == '\t') ++begin;
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(begin, &end);
    while (end && (*end == ' ' || *end == '\t')) ++end;
    const bool number = !(end == begin || !end || *end != '\0' || errno == ERANGE);
    if (!number && may_be_header) {  // a header line above an indexed column
      may_be_header = false;
      continue;
    }
    may_be_header = false;
    if (!number) throw failslow::parse_error({path, line_no, field_column, line_offset + field_column - 1}, "a number");
    out.values.push_back(v);
  }
  if (out.values.empty()) throw failslow::invalid_argument(path + ": no values");
  return out;
}

}  // namespace failslow_cli
