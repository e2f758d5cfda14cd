// Internal: the compile-time check that an enum's count constant matches its to_string.
// enum_count_matches<E>(count) is true when the values 0 .. count - 1 of E have distinct names
// and the value `count` has none of its own (to_string's fallback is the name of value 0), so
//   static_assert(detail::enum_count_matches<fault_kind>(fault_kind_count), "...");
// fails to compile when an enumerator is added (with its to_string case; -Wswitch catches a
// missing case) and the count is not updated. to_string is found by argument-dependent lookup.
#pragma once

#include <cstddef>

namespace failslow::detail {

template <class Enum>
constexpr bool enum_count_matches(std::size_t count) noexcept {
  for (std::size_t i = 0; i < count; ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (to_string(static_cast<Enum>(i)) == to_string(static_cast<Enum>(j))) return false;
  return to_string(static_cast<Enum>(count)) == to_string(static_cast<Enum>(0));
}

}  // namespace failslow::detail
