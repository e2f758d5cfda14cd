// Internal: the compile-time check that an enum's count constant matches its to_string.
// enum_count_matches<E>(count) is true when the values 0 .. count - 1 of E have distinct names
// and the value `count` has none of its own (to_string gives it the same fallback as the
// largest value of E's underlying type, which names nothing), so
//   static_assert(detail::enum_count_matches<fault_kind>(fault_kind_count), "...");
// fails to compile when an enumerator is added (with its to_string case; -Wswitch catches a
// missing case) and the count is not updated. to_string (returning std::string_view or
// const char*) is found by argument-dependent lookup.
#pragma once

#include <cstddef>
#include <limits>
#include <string_view>
#include <type_traits>

namespace failslow::detail {

template <class Enum>
constexpr std::string_view enum_name_of(std::size_t i) noexcept {
  return std::string_view(to_string(static_cast<Enum>(i)));
}

template <class Enum>
constexpr bool enum_count_matches(std::size_t count) noexcept {
  for (std::size_t i = 0; i < count; ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (enum_name_of<Enum>(i) == enum_name_of<Enum>(j)) return false;
  constexpr auto unnamed = static_cast<std::size_t>(std::numeric_limits<std::underlying_type_t<Enum>>::max());
  return enum_name_of<Enum>(count) == enum_name_of<Enum>(unnamed);
}

}  // namespace failslow::detail
