// failslow/diagnose/detail/impl/instance_transfer.ipp -- the definitions of diagnose/detail/instance_transfer.hpp:
// included by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "failslow/diagnose/detail/instance_transfer.hpp"

namespace failslow::diagnose::detail {

FAILSLOW_FUNC_DEF void record_transfers(job_model& m, const trace::trace_set& set,
                                        const trace::collective_matching& matching,
                                        const std::vector<std::int64_t>& row,
                                        const std::vector<std::vector<std::int32_t>>& step_of) {
  auto& w = m.waits;
  w.transfer_groups.clear();
  w.transfers.clear();
  if (m.kernel_names.empty()) return;
  std::unordered_map<std::string_view, std::uint32_t> key_of;
  for (std::size_t k = 0; k < m.kernel_names.size(); ++k)
    key_of.emplace(m.kernel_names[k], static_cast<std::uint32_t>(k));
  std::map<std::vector<int>, std::uint32_t> group_of;
  std::vector<int> ranks;
  for (const auto& inst : matching.instances) {
    if (inst.point_to_point || inst.members.size() < 2) continue;
    const trace::collective_member* shortest = nullptr;
    std::int64_t best = std::numeric_limits<std::int64_t>::max();
    bool usable = true;
    const name_id name = set.traces[inst.members.front().trace].data.events[inst.members.front().event].name;
    ranks.clear();
    for (const auto& mem : inst.members) {
      const auto& e = set.traces[mem.trace].data.events[mem.event];
      if (e.name != name || row[mem.trace] < 0) {
        usable = false;
        break;
      }
      ranks.push_back(static_cast<int>(row[mem.trace]));
      if (e.end_ns - e.start_ns < best) {
        best = e.end_ns - e.start_ns;
        shortest = &mem;
      }
    }
    if (!usable || !shortest || best < 0) continue;
    const auto step = step_of[shortest->trace][shortest->event];
    const auto key = key_of.find(set.names.name(name));
    if (step < 0 || key == key_of.end()) continue;
    std::sort(ranks.begin(), ranks.end());
    auto g = group_of.find(ranks);
    if (g == group_of.end()) {
      g = group_of.emplace(ranks, static_cast<std::uint32_t>(w.transfer_groups.size())).first;
      w.transfer_groups.push_back(ranks);
    }
    w.transfers.push_back({g->second, key->second, static_cast<std::uint32_t>(step), static_cast<double>(best)});
  }
}

}  // namespace failslow::diagnose::detail
