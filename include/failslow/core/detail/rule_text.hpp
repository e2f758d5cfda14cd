// Internal: the line-oriented text format shared by classification and routing rule files.
// A rule file has one rule per line, fields separated by blanks, '#' starting a comment;
// the last field (the pattern) takes the rest of the line so that it may contain blanks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/core/name_pattern.hpp"

namespace failslow::detail {

struct rule_field {
  std::string_view text;
  std::uint64_t column;  // 1-based
};

struct rule_line {
  std::vector<rule_field> fields;  // the first `leading` fields, then the rest of the line
  source_location where;           // start of the line
};

// Calls on_rule(rule_line) for each non-blank, non-comment line, split into `leading` blank
// separated fields plus the rest of the line as the last field. Lines with fewer fields raise
// a parse_error naming what was expected.
template <class OnRule>
void for_each_rule_line(std::istream& in, std::string_view source, std::size_t leading, std::string_view expected,
                        OnRule&& on_rule) {
  std::string line;
  std::uint64_t line_no = 0, offset = 0;
  while (std::getline(in, line)) {
    ++line_no;
    const std::uint64_t line_offset = offset;
    offset += line.size() + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::string_view rest(line);
    if (const auto hash = rest.find('#'); hash != std::string_view::npos) rest = rest.substr(0, hash);
    rule_line parsed{{}, source_location{std::string(source), line_no, 1, line_offset}};
    auto skip_blanks = [&] {
      while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
    };
    skip_blanks();
    if (rest.empty()) continue;
    for (std::size_t i = 0; i < leading; ++i) {
      skip_blanks();
      const std::uint64_t column = static_cast<std::uint64_t>(rest.data() - line.data()) + 1;
      const auto end = rest.find_first_of(" \t");
      if (rest.empty() || end == std::string_view::npos) {
        throw parse_error(source_location{std::string(source), line_no, column, line_offset + column - 1},
                          std::string(expected));
      }
      parsed.fields.push_back({rest.substr(0, end), column});
      rest.remove_prefix(end);
    }
    skip_blanks();
    while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t')) rest.remove_suffix(1);
    const std::uint64_t column = static_cast<std::uint64_t>(rest.data() - line.data()) + 1;
    if (rest.empty())
      throw parse_error(source_location{std::string(source), line_no, column, line_offset + column - 1},
                        std::string(expected));
    parsed.fields.push_back({rest, column});
    on_rule(parsed);
  }
}

// A parse_error at a field of a rule line.
inline parse_error rule_error(const rule_line& line, const rule_field& field, std::string expected) {
  source_location at = line.where;
  at.column = field.column;
  at.offset += field.column - 1;
  return parse_error(std::move(at), std::move(expected));
}

// Reads the "KIND[/i]" and "PATTERN" fields of a rule into a name_pattern.
inline name_pattern rule_pattern(const rule_line& line, const rule_field& kind_field, const rule_field& text_field) {
  std::string_view kind = kind_field.text;
  auto cs = case_sensitivity::sensitive;
  if (kind.size() > 2 && kind.substr(kind.size() - 2) == "/i") {
    cs = case_sensitivity::insensitive;
    kind.remove_suffix(2);
  }
  match_kind mk;
  if (kind == "exact")
    mk = match_kind::exact;
  else if (kind == "prefix")
    mk = match_kind::prefix;
  else if (kind == "contains")
    mk = match_kind::contains;
  else if (kind == "glob")
    mk = match_kind::glob;
  else
    throw rule_error(line, kind_field, "a match kind: exact, prefix, contains or glob (optionally /i)");
  return name_pattern(std::string(text_field.text), mk, cs);
}

}  // namespace failslow::detail
