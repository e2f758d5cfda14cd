// failslow/sim/score.hpp -- scores a diagnosis report against the truth of a simulated job.
//
// Synopsis
//   case_score score_case(truth, report, options)      one job: per fault and per finding
//   score_summary summarize(cases)                     per scenario and overall
//   report / finding are failslow::report / failslow::finding (core/report.hpp, schema
//   failslow.report/1); the command-line tool reads them from report.json (and the truth from
//   truth.json). The scorer reads world_size and the findings' levels, kinds, ranks, groups,
//   kernels and step ranges; it ignores scores, evidence, topology and notes.
//   Named ranks of a finding: its ranks plus the members of its group ("tp:k", "cp:k",
//   "ep:k", "dp:k" as core/topology.hpp numbers them, "stage:s").
//   A finding localises a fault when their step ranges overlap and the finding names one of
//   the fault's ranks in `ranks`, or names the fault's group (equal group strings).
//   Per fault: localised (some finding localises it); kernel right (faults that name
//   kernels: a localising finding's kernel is one of them; n/a otherwise); steps right (a
//   localising finding's first and last step are within step_tolerance of the fault's).
//   Per finding, exactly one verdict:
//     false positive   rotating_noise_as_straggler: kind "straggler" over at least
//                        persistent_min_steps steps, naming faulty ranks only through
//                        transient faults (GC pauses) -- noise reported as a persistent
//                        straggler (it localises nothing);
//                      healthy_run: an L2/L3 finding on a job without faults;
//                      healthy_ranks: it names ranks, none of them faulty;
//                      outside_fault_steps: it names faulty ranks but localises no fault
//                        (no overlap with their faults' steps)
//     true positive    it localises at least one fault
//     neutral          job-wide (names no rank: L1 slow windows) on a faulty job, or names
//                      faulty ranks only through a wider group it does not share with them
//   precision = TP / (TP + FP) (1 when there is neither), recall = localised / faults (1 for
//   a healthy job); kernel accuracy over the faults that name kernels, step accuracy over all.
// Complexity: O(findings * faults * (ranks + group size)).
// Errors: invalid_argument for a level other than L1..L4, first_step > last_step, a group
//   name that is malformed or outside the truth's layout, a rank outside the world, or a
//   report whose world_size (when > 0) differs from the truth's.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "failslow/core/detail/enum_count.hpp"
#include "failslow/core/error.hpp"
#include "failslow/core/report.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/sim/truth.hpp"

namespace failslow::sim {

/// The report the scorer reads: the one report type of the library (core/report.hpp).
using failslow::finding;
using failslow::report;

struct score_options {
  std::int64_t step_tolerance = 2;        ///< steps right: both ends within this many steps
  std::int64_t persistent_min_steps = 3;  ///< a straggler finding this long is "persistent"
};

enum class verdict : std::uint8_t { true_positive, false_positive, neutral };
/// Number of verdict values (they are 0 .. verdict_count - 1).
inline constexpr std::size_t verdict_count = 3;

constexpr std::string_view to_string(verdict v) noexcept {
  return v == verdict::true_positive ? "true_positive" : v == verdict::false_positive ? "false_positive" : "neutral";
}
static_assert(failslow::detail::enum_count_matches<verdict>(verdict_count),
              "verdict_count is not the number of verdict values");

enum class fp_reason : std::uint8_t {
  none,
  rotating_noise_as_straggler,
  healthy_run,
  healthy_ranks,
  outside_fault_steps
};
/// Number of fp_reason values (they are 0 .. fp_reason_count - 1).
inline constexpr std::size_t fp_reason_count = 5;

constexpr std::string_view to_string(fp_reason r) noexcept {
  switch (r) {
    case fp_reason::none:
      return "";
    case fp_reason::rotating_noise_as_straggler:
      return "rotating_noise_as_straggler";
    case fp_reason::healthy_run:
      return "healthy_run";
    case fp_reason::healthy_ranks:
      return "healthy_ranks";
    case fp_reason::outside_fault_steps:
      return "outside_fault_steps";
  }
  return "";
}
static_assert(failslow::detail::enum_count_matches<fp_reason>(fp_reason_count),
              "fp_reason_count is not the number of fp_reason values");

struct fault_score {
  std::size_t fault = 0;  ///< index into truth::faults
  bool localised = false;
  bool names_kernels = false;  ///< the fault names kernels (kernel_right applies)
  bool kernel_right = false;
  bool steps_right = false;
  std::vector<std::size_t> findings;  ///< indices of the findings that localise it
};

struct finding_score {
  std::size_t finding = 0;  ///< index into report::findings
  verdict result = verdict::neutral;
  fp_reason reason = fp_reason::none;
  std::vector<std::size_t> faults;  ///< faults it localises
};

struct score_counts {
  std::size_t cases = 0;
  std::size_t findings = 0;
  std::size_t true_positives = 0;
  std::size_t false_positives = 0;
  std::size_t neutral = 0;
  std::size_t faults = 0;
  std::size_t localised = 0;
  std::size_t kernel_faults = 0;  ///< faults that name kernels
  std::size_t kernel_right = 0;
  std::size_t steps_right = 0;
  std::map<std::string, std::size_t, std::less<>> false_positive_reasons;

  double precision() const noexcept {
    const std::size_t n = true_positives + false_positives;
    return n == 0 ? 1.0 : static_cast<double>(true_positives) / static_cast<double>(n);
  }
  double recall() const noexcept {
    return faults == 0 ? 1.0 : static_cast<double>(localised) / static_cast<double>(faults);
  }
  double kernel_accuracy() const noexcept {
    return kernel_faults == 0 ? 1.0 : static_cast<double>(kernel_right) / static_cast<double>(kernel_faults);
  }
  double step_accuracy() const noexcept {
    return faults == 0 ? 1.0 : static_cast<double>(steps_right) / static_cast<double>(faults);
  }
  score_counts& operator+=(const score_counts& o) {
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
};

struct case_score {
  std::string scenario;
  std::vector<fault_score> faults;
  std::vector<finding_score> findings;
  score_counts counts;
};

struct score_summary {
  std::map<std::string, score_counts, std::less<>> by_scenario;
  score_counts overall;
};

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

/// Scores one report against one truth (see the file synopsis).
template <class = void>
inline case_score score_case(const truth& t, const report& rep, const score_options& opt = {}) {
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

/// Sums cases per scenario name and overall.
template <class = void>
inline score_summary summarize(const std::vector<case_score>& cases) {
  score_summary s;
  for (const auto& c : cases) {
    s.by_scenario[c.scenario] += c.counts;
    s.overall += c.counts;
  }
  return s;
}

}  // namespace failslow::sim
