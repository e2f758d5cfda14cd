// failslow/diagnose/detail/impl/rank_list.ipp -- the definitions of diagnose/detail/rank_list.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "failslow/diagnose/detail/rank_list.hpp"

namespace failslow::diagnose::detail {

FAILSLOW_FUNC_DEF std::string rank_list(std::vector<int> ranks, std::size_t show) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::string s;
  std::size_t items = 0, i = 0;
  for (; i < ranks.size() && items < show; ++items) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!s.empty()) s += ", ";
    if (j - i >= 2) {
      s += std::to_string(ranks[i]) + "-" + std::to_string(ranks[j]);
      i = j + 1;
    } else {
      s += std::to_string(ranks[i]);
      ++i;
    }
  }
  if (i < ranks.size()) s += ", ... (" + std::to_string(ranks.size()) + " ranks)";
  return s;
}

}  // namespace failslow::diagnose::detail
