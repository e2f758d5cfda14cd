// failslow/diagnose/detail/impl/rank_list.ipp -- the definitions of diagnose/detail/rank_list.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "failslow/core/topology.hpp"
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

FAILSLOW_FUNC_DEF std::string placement(const topology& topo, int rank) {
  std::string s;
  for (parallel_dim d : all_parallel_dims) {
    if (topo.size(d) <= 1) continue;
    if (!s.empty()) s += ", ";
    s += d == parallel_dim::pp ? "stage " + std::to_string(topo.coordinate(rank, d)) : topo.group_name(rank, d);
  }
  return s;
}

FAILSLOW_FUNC_DEF std::string rank_placed(const topology& topo, int rank) {
  const std::string where = placement(topo, rank);
  return "rank " + std::to_string(rank) + (where.empty() ? "" : " (" + where + ")");
}

}  // namespace failslow::diagnose::detail
