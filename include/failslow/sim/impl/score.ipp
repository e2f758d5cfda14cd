// failslow/sim/impl/score.ipp -- the definitions of sim/score.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/core/report.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/sim/score.hpp"
#include "failslow/sim/truth.hpp"

namespace failslow::sim {

namespace detail {

/// Members of a group name in the layout ("dp:3", "stage:1"); throws invalid_argument.
template <class = void>
inline std::vector<int> group_members_of(const topology& topo, const std::string& g) {
  const auto colon = g.find(':');
  auto bad = [&](const std::string& why) { return invalid_argument("score_case: group '" + g + "' " + why); };
  if (colon == std::string::npos || colon + 1 == g.size()) throw bad("is not DIM:INDEX");
  const std::string dim = g.substr(0, colon);
  const std::string idx = g.substr(colon + 1);
  if (idx.size() > 9 || !std::all_of(idx.begin(), idx.end(), [](char c) { return c >= '0' && c <= '9'; }))
    throw bad("has a bad index");
  const int k = std::stoi(idx);
  if (dim == "stage") {
    if (k >= topo.size(parallel_dim::pp)) throw bad("is outside the layout");
    return topo.stage(k);
  }
  parallel_dim d;
  try {
    d = parse_parallel_dim(dim);
  } catch (const invalid_argument&) {
    throw bad("has an unknown dimension (expected tp, cp, ep, dp, pp or stage)");
  }
  if (k >= topo.group_count(d)) throw bad("is outside the layout");
  return topo.group_members(d, k);
}

inline bool overlaps(std::int64_t a0, std::int64_t a1, std::int64_t b0, std::int64_t b1) noexcept {
  return a0 <= b1 && b0 <= a1;
}

inline bool contains(const std::vector<int>& sorted, int r) {
  return std::binary_search(sorted.begin(), sorted.end(), r);
}

}  // namespace detail

FAILSLOW_FUNC_DEF case_score score_case(const truth& t, const report& rep, const score_options& opt) {
  const topology topo(t.sizes, t.order);
  if (rep.world_size > 0 && rep.world_size != topo.world_size())
    throw invalid_argument("score_case: report world_size " + std::to_string(rep.world_size) + " != truth's " +
                           std::to_string(topo.world_size()));
  case_score cs;
  cs.scenario = t.scenario_name;
  cs.counts.cases = 1;
  const auto& faults = t.faults;
  cs.faults.resize(faults.size());
  std::vector<std::vector<int>> fault_ranks(faults.size());
  for (std::size_t i = 0; i < faults.size(); ++i) {
    cs.faults[i].fault = i;
    cs.faults[i].names_kernels = !faults[i].kernels.empty();
    fault_ranks[i] = faults[i].ranks;
    std::sort(fault_ranks[i].begin(), fault_ranks[i].end());
  }
  // Ranks and whether each is faulty through a persistent fault.
  std::vector<char> faulty(static_cast<std::size_t>(topo.world_size()), 0), persistent(faulty.size(), 0);
  for (const auto& f : faults)
    for (int r : f.ranks) {
      if (r < 0 || r >= topo.world_size()) throw invalid_argument("score_case: truth names rank " + std::to_string(r));
      faulty[static_cast<std::size_t>(r)] = 1;
      if (!f.transient) persistent[static_cast<std::size_t>(r)] = 1;
    }

  for (std::size_t fi = 0; fi < rep.findings.size(); ++fi) {
    const finding& f = rep.findings[fi];
    const std::string where = "score_case: finding " + std::to_string(fi) + ": ";
    if (f.level != "L1" && f.level != "L2" && f.level != "L3" && f.level != "L4")
      throw invalid_argument(where + "level '" + f.level + "' (expected L1, L2, L3 or L4)");
    if (f.first_step > f.last_step) throw invalid_argument(where + "first_step > last_step");
    std::vector<int> named = f.ranks;
    for (int r : named)
      if (r < 0 || r >= topo.world_size())
        throw invalid_argument(where + "rank " + std::to_string(r) + " outside the world");
    if (!f.group.empty()) {
      const auto m = detail::group_members_of(topo, f.group);
      named.insert(named.end(), m.begin(), m.end());
    }
    std::sort(named.begin(), named.end());
    named.erase(std::unique(named.begin(), named.end()), named.end());

    finding_score fs;
    fs.finding = fi;
    bool names_faulty = false, names_persistent = false;
    for (int r : named) {
      names_faulty = names_faulty || faulty[static_cast<std::size_t>(r)];
      names_persistent = names_persistent || persistent[static_cast<std::size_t>(r)];
    }
    const bool long_straggler = f.kind == "straggler" && f.last_step - f.first_step + 1 >= opt.persistent_min_steps;
    if (long_straggler && names_faulty && !names_persistent) {
      fs.result = verdict::false_positive;
      fs.reason = fp_reason::rotating_noise_as_straggler;
    } else {
      for (std::size_t k = 0; k < faults.size(); ++k) {
        const auto& x = faults[k];
        if (!detail::overlaps(f.first_step, f.last_step, x.first_step, x.last_step)) continue;
        bool hit = !x.group.empty() && f.group == x.group;
        for (int r : f.ranks) hit = hit || detail::contains(fault_ranks[k], r);
        if (hit) fs.faults.push_back(k);
      }
      if (!fs.faults.empty()) {
        fs.result = verdict::true_positive;
      } else if (t.healthy() && (f.level == "L2" || f.level == "L3")) {
        fs.result = verdict::false_positive;
        fs.reason = fp_reason::healthy_run;
      } else if (named.empty()) {
        fs.result = verdict::neutral;
      } else if (!names_faulty) {
        fs.result = verdict::false_positive;
        fs.reason = fp_reason::healthy_ranks;
      } else {
        // Names faulty ranks: outside their faults' steps, or only through a wider group.
        bool any_overlap = false;
        for (std::size_t k = 0; k < faults.size(); ++k) {
          bool shares = false;
          for (int r : named) shares = shares || detail::contains(fault_ranks[k], r);
          if (shares && detail::overlaps(f.first_step, f.last_step, faults[k].first_step, faults[k].last_step))
            any_overlap = true;
        }
        if (any_overlap) {
          fs.result = verdict::neutral;
        } else {
          fs.result = verdict::false_positive;
          fs.reason = fp_reason::outside_fault_steps;
        }
      }
    }
    for (std::size_t k : fs.faults) {
      auto& s = cs.faults[k];
      const auto& x = faults[k];
      s.localised = true;
      s.findings.push_back(fi);
      if (!f.kernel.empty() && std::find(x.kernels.begin(), x.kernels.end(), f.kernel) != x.kernels.end())
        s.kernel_right = true;
      const auto d0 = f.first_step - x.first_step, d1 = f.last_step - x.last_step;
      if (d0 <= opt.step_tolerance && -d0 <= opt.step_tolerance && d1 <= opt.step_tolerance &&
          -d1 <= opt.step_tolerance)
        s.steps_right = true;
    }
    auto& c = cs.counts;
    ++c.findings;
    if (fs.result == verdict::true_positive) ++c.true_positives;
    if (fs.result == verdict::neutral) ++c.neutral;
    if (fs.result == verdict::false_positive) {
      ++c.false_positives;
      ++c.false_positive_reasons[std::string(to_string(fs.reason))];
    }
    cs.findings.push_back(std::move(fs));
  }
  auto& c = cs.counts;
  c.faults = faults.size();
  for (const auto& s : cs.faults) {
    c.localised += s.localised ? 1 : 0;
    c.kernel_faults += s.names_kernels ? 1 : 0;
    c.kernel_right += s.names_kernels && s.kernel_right ? 1 : 0;
    c.steps_right += s.steps_right ? 1 : 0;
  }
  return cs;
}

FAILSLOW_FUNC_DEF score_summary summarize(const std::vector<case_score>& cases) {
  score_summary s;
  for (const auto& c : cases) {
    s.by_scenario[c.scenario] += c.counts;
    s.overall += c.counts;
  }
  return s;
}

FAILSLOW_FUNC_DEF score_counts& score_counts::operator+=(const score_counts& o) {
  cases += o.cases;
  findings += o.findings;
  true_positives += o.true_positives;
  false_positives += o.false_positives;
  neutral += o.neutral;
  faults += o.faults;
  localised += o.localised;
  kernel_faults += o.kernel_faults;
  kernel_right += o.kernel_right;
  steps_right += o.steps_right;
  for (const auto& [k, v] : o.false_positive_reasons) false_positive_reasons[k] += v;
  return *this;
}

}  // namespace failslow::sim
