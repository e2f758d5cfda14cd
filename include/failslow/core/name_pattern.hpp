// failslow/core/name_pattern.hpp -- patterns that match kernel, phase and operator names.
//
// Synopsis
//   name_pattern(text, kind, case_sensitivity) matches a name by one of
//     exact     the whole name equals text
//     prefix    the name starts with text
//     contains  text occurs anywhere in the name
//     glob      shell-style: '*' any run of characters, '?' one character, the rest literal
//   For exact and prefix, a leading "void " is skipped, because demangled names of CUDA
//   kernels begin with their return type ("void at::native::elementwise_kernel<...>").
//   Case-insensitive matching folds ASCII letters only (kernel names are ASCII).
//   parse_name_pattern("prefix/i:ncclDevKernel_") reads the textual form used by rule files:
//   KIND[/i]:TEXT, or a bare TEXT meaning glob (C++ scopes such as "at::native*" are globs).
// Complexity: exact/prefix O(|text|); contains O(|name| * |text|) worst case; glob
//   O(|name| * |text|) worst case (greedy matching with one backtrack point, no recursion).
// Errors: an empty pattern text, or "word:..." with an unknown kind word, throws
//   failslow::invalid_argument.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/detail/enum_count.hpp"

namespace failslow {

enum class match_kind { exact, prefix, contains, glob };
/// Number of match_kind values (they are 0 .. match_kind_count - 1).
inline constexpr std::size_t match_kind_count = 4;
enum class case_sensitivity { sensitive, insensitive };
/// Number of case_sensitivity values (they are 0 .. case_sensitivity_count - 1).
inline constexpr std::size_t case_sensitivity_count = 2;

constexpr std::string_view to_string(match_kind k) noexcept {
  switch (k) {
    case match_kind::exact:
      return "exact";
    case match_kind::prefix:
      return "prefix";
    case match_kind::contains:
      return "contains";
    case match_kind::glob:
      return "glob";
  }
  return "glob";
}
static_assert(failslow::detail::enum_count_matches<match_kind>(match_kind_count),
              "match_kind_count is not the number of match_kind values");

class name_pattern {
 public:
  FAILSLOW_FUNC name_pattern(std::string text, match_kind kind = match_kind::glob,
                             case_sensitivity cs = case_sensitivity::sensitive);

  FAILSLOW_FUNC bool matches(std::string_view name) const noexcept;

  const std::string& text() const noexcept { return text_; }
  match_kind kind() const noexcept { return kind_; }
  case_sensitivity sensitivity() const noexcept {
    return fold_ ? case_sensitivity::insensitive : case_sensitivity::sensitive;
  }

  /// The textual form accepted by parse_name_pattern, e.g. "contains/i:nccl".
  FAILSLOW_FUNC std::string to_string() const;

 private:
  std::string text_;
  match_kind kind_;
  bool fold_;
};

/// Parses "KIND[/i]:TEXT" (KIND one of exact, prefix, contains, glob) or a bare glob "TEXT".
FAILSLOW_FUNC name_pattern parse_name_pattern(std::string_view spec);

}  // namespace failslow

#if FAILSLOW_HEADER_ONLY
#include "failslow/core/impl/name_pattern.ipp"
#endif
