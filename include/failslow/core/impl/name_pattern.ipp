// failslow/core/impl/name_pattern.ipp -- the definitions of core/name_pattern.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "failslow/core/error.hpp"
#include "failslow/core/name_pattern.hpp"

namespace failslow {

namespace detail {

constexpr char ascii_lower(char c) noexcept { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

inline bool chars_equal(char a, char b, bool fold) noexcept { return fold ? ascii_lower(a) == ascii_lower(b) : a == b; }

inline bool starts_with(std::string_view s, std::string_view p, bool fold) noexcept {
  if (p.size() > s.size()) return false;
  for (std::size_t i = 0; i < p.size(); ++i)
    if (!chars_equal(s[i], p[i], fold)) return false;
  return true;
}

inline bool contains(std::string_view s, std::string_view p, bool fold) noexcept {
  if (p.empty()) return true;
  if (p.size() > s.size()) return false;
  for (std::size_t i = 0; i + p.size() <= s.size(); ++i)
    if (starts_with(s.substr(i), p, fold)) return true;
  return false;
}

// Iterative glob: on mismatch, retry from the last '*' consuming one more character.
inline bool glob_match(std::string_view s, std::string_view p, bool fold) noexcept {
  std::size_t si = 0, pi = 0;
  std::size_t star = std::string_view::npos, resume = 0;
  while (si < s.size()) {
    if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      resume = si;
    } else if (pi < p.size() && (p[pi] == '?' || chars_equal(p[pi], s[si], fold))) {
      ++pi;
      ++si;
    } else if (star != std::string_view::npos) {
      pi = star + 1;
      si = ++resume;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

inline std::string_view skip_void_return(std::string_view s) noexcept {
  constexpr std::string_view void_prefix = "void ";
  return s.substr(0, void_prefix.size()) == void_prefix ? s.substr(void_prefix.size()) : s;
}

}  // namespace detail

FAILSLOW_FUNC_DEF name_pattern::name_pattern(std::string text, match_kind kind, case_sensitivity cs)
    : text_(std::move(text)), kind_(kind), fold_(cs == case_sensitivity::insensitive) {
  if (text_.empty()) throw invalid_argument("name_pattern: empty pattern text");
}

FAILSLOW_FUNC_DEF bool name_pattern::matches(std::string_view name) const noexcept {
  switch (kind_) {
    case match_kind::exact: {
      const std::string_view n = detail::skip_void_return(name);
      return n.size() == text_.size() && detail::starts_with(n, text_, fold_);
    }
    case match_kind::prefix:
      return detail::starts_with(detail::skip_void_return(name), text_, fold_);
    case match_kind::contains:
      return detail::contains(name, text_, fold_);
    case match_kind::glob:
      return detail::glob_match(name, text_, fold_);
  }
  return false;
}

FAILSLOW_FUNC_DEF std::string name_pattern::to_string() const {
  std::string s(failslow::to_string(kind_));
  if (fold_) s += "/i";
  return s + ':' + text_;
}

FAILSLOW_FUNC_DEF name_pattern parse_name_pattern(std::string_view spec) {
  const auto colon = spec.find(':');
  if (colon != std::string_view::npos) {
    std::string_view kind = spec.substr(0, colon);
    auto cs = case_sensitivity::sensitive;
    if (kind.size() > 2 && kind.substr(kind.size() - 2) == "/i") {
      cs = case_sensitivity::insensitive;
      kind.remove_suffix(2);
    }
    const std::string text(spec.substr(colon + 1));
    if (kind == "exact") return name_pattern(text, match_kind::exact, cs);
    if (kind == "prefix") return name_pattern(text, match_kind::prefix, cs);
    if (kind == "contains") return name_pattern(text, match_kind::contains, cs);
    if (kind == "glob") return name_pattern(text, match_kind::glob, cs);
    // "at::native*" is a glob containing C++ scope colons; "contians:x" is a typo to report.
    const bool looks_like_kind =
        colon > 0 && (colon + 1 >= spec.size() || spec[colon + 1] != ':') &&
        spec.substr(0, colon).find_first_not_of("abcdefghijklmnopqrstuvwxyz/") == std::string_view::npos;
    if (looks_like_kind)
      throw invalid_argument("name pattern '" + std::string(spec) +
                             "': unknown match kind (expected exact, prefix, contains or glob, "
                             "optionally with /i)");
  }
  return name_pattern(std::string(spec), match_kind::glob);
}

}  // namespace failslow
