// failslow/diagnose/impl/roles.ipp -- the definitions of diagnose/roles.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/diagnose/roles.hpp"

namespace failslow::diagnose {

FAILSLOW_FUNC_DEF rank_roles infer_roles(const job_model& m, const role_options& o) {
  if (!(o.steady_share > 0 && o.steady_share <= 1))
    throw invalid_argument("infer_roles: steady_share must be in (0, 1]");
  const std::size_t R = m.rank_count();
  std::vector<std::size_t> windows(R, 0);
  std::vector<std::map<std::size_t, std::size_t>> seen(R);  // key -> windows of the rank with it
  for (const auto& w : m.windows) {
    if (w.rank < 0 || static_cast<std::size_t>(w.rank) >= R) continue;
    const auto r = static_cast<std::size_t>(w.rank);
    ++windows[r];
    for (const auto& k : w.kernels) {
      const std::size_t key = k.key;
      if (key < m.kernel_classes.size() && m.kernel_classes[key] == kernel_class::communication) continue;
      ++seen[r][key];
    }
  }
  rank_roles out;
  out.role.assign(R, -1);
  std::map<std::vector<std::size_t>, int> role_of;  // steady set -> role
  for (std::size_t r = 0; r < R; ++r) {
    if (r >= m.has_rank.size() || !m.has_rank[r]) continue;
    std::vector<std::size_t> steady;  // ascending: the map's order
    for (const auto& [key, n] : seen[r])
      if (static_cast<double>(n) >= o.steady_share * static_cast<double>(windows[r])) steady.push_back(key);
    const auto [it, fresh] = role_of.emplace(std::move(steady), static_cast<int>(out.members.size()));
    if (fresh) {
      out.members.emplace_back();
      out.kernels.push_back(it->first.size());
    }
    out.role[r] = it->second;
    out.members[static_cast<std::size_t>(it->second)].push_back(static_cast<int>(r));
  }
  return out;
}

}  // namespace failslow::diagnose
