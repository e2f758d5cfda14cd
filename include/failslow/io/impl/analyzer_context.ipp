// failslow/io/impl/analyzer_context.ipp -- the definitions of io/analyzer_context.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/core/report.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/diagnose/detail/rank_list.hpp"
#include "failslow/diagnose/job_model.hpp"
#include "failslow/io/analyzer_context.hpp"
#include "failslow/io/detail/text_format.hpp"
#include "failslow/io/report_text.hpp"
#include "failslow/stats/descriptive.hpp"

namespace failslow::io {

namespace detail {

/// A rank's kernel against its peers over a step range: mean per launch on the rank and the
/// peers' median of their own means, launches per step on the rank.
struct context_kernel {
  std::size_t key = 0;
  double rank_mean_ns = 0, peer_mean_ns = 0, launches_per_step = 0, lost_ns_per_step = 0;
};

/// Steps indices of the model in [first, last].
template <class = void>
inline std::pair<std::size_t, std::size_t> model_step_range(const diagnose::job_model& m, std::int64_t first,
                                                            std::int64_t last) {
  const auto a = std::lower_bound(m.steps.begin(), m.steps.end(), first) - m.steps.begin();
  const auto b = std::upper_bound(m.steps.begin(), m.steps.end(), last) - m.steps.begin();
  return {static_cast<std::size_t>(a), static_cast<std::size_t>(b)};
}

/// The peers a finding compared the rank with (evidence "peers"), else the other ranks of its
/// data-parallel group.
template <class = void>
inline std::vector<int> finding_peers(const finding& f, int rank, const topology& topo) {
  std::vector<int> peers;
  if (const auto* p = f.evidence.find("peers"); p && p->what == evidence_item::type::numbers)
    for (double v : p->numbers)
      if (v >= 0 && v < topo.world_size() && static_cast<int>(v) != rank) peers.push_back(static_cast<int>(v));
  if (peers.empty())
    for (int r : topo.group(rank, parallel_dim::dp))
      if (r != rank) peers.push_back(r);
  return peers;
}

/// The rank's compute and memory kernels that ran slower than on its peers over steps [a, b),
/// costliest first.
template <class = void>
inline std::vector<context_kernel> slower_kernels(const diagnose::job_model& m, const diagnose::window_index& idx,
                                                  int rank, const std::vector<int>& peers, std::size_t a,
                                                  std::size_t b) {
  struct sums {
    double total = 0, count = 0;
  };
  auto kernel_sums = [&](int r) {
    std::map<std::size_t, sums> s;
    for (std::size_t t = a; t < b; ++t)
      if (const auto* w = idx.window(r, t))
        for (const auto& k : w->kernels) {
          if (k.key >= m.kernel_classes.size() || m.kernel_classes[k.key] == kernel_class::communication) continue;
          auto& x = s[k.key];
          x.total += k.total_ns;
          x.count += static_cast<double>(k.count);
        }
    return s;
  };
  const auto own = kernel_sums(rank);
  std::vector<std::map<std::size_t, sums>> theirs;
  for (int p : peers) theirs.push_back(kernel_sums(p));
  std::vector<context_kernel> out;
  for (const auto& [key, s] : own) {
    if (s.count <= 0) continue;
    std::vector<double> means;
    for (const auto& t : theirs)
      if (auto it = t.find(key); it != t.end() && it->second.count > 0)
        means.push_back(it->second.total / it->second.count);
    if (means.empty()) continue;
    context_kernel k;
    k.key = key;
    k.rank_mean_ns = s.total / s.count;
    k.peer_mean_ns = stats::median(means);
    k.launches_per_step = s.count / static_cast<double>(b - a);
    k.lost_ns_per_step = (k.rank_mean_ns - k.peer_mean_ns) * k.launches_per_step;
    if (k.lost_ns_per_step > 0) out.push_back(k);
  }
  std::sort(out.begin(), out.end(),
            [](const context_kernel& x, const context_kernel& y) { return x.lost_ns_per_step > y.lost_ns_per_step; });
  return out;
}

/// Median over steps [a, b) of a rank's phase time (NaN when it has none).
template <class = void>
inline double median_phase(const diagnose::job_model& m, int rank, std::size_t phase, std::size_t a, std::size_t b) {
  std::vector<double> v;
  for (std::size_t t = a; t < b; ++t) {
    const double x = m.phase_ns(static_cast<std::size_t>(rank), phase, t);
    if (!std::isnan(x)) v.push_back(x);
  }
  return v.empty() ? std::nan("") : stats::median(v);
}

/// "rank39", "job", or the finding's group.
template <class = void>
inline std::string anomaly_subject(const finding& f) {
  if (!f.ranks.empty()) return "rank" + std::to_string(f.ranks.front());
  return f.group.empty() ? std::string("job") : f.group;
}

/// The anomaly line of a finding: who | what | duration=observed (expected baseline) | steps | kind.
template <class = void>
inline std::string anomaly_line(const finding& f) {
  const auto& e = f.evidence;
  std::string what = !f.kernel.empty() && f.kind != "straggler" ? format_kernel_name(f.kernel)
                     : f.kind == "slow_window"                  ? std::string("iteration")
                                                                : f.phase;
  if (what.empty()) what = f.kind;
  double observed = e.number("observed_ns", std::nan("")), baseline = e.number("baseline_ns", std::nan(""));
  std::string unit = f.kind == "degraded_kernel" ? "per launch" : "per step";
  std::string quantity = "duration";
  if (f.kind == "degraded_link") {
    observed = e.number("transfer_ns", std::nan(""));
    baseline = e.number("baseline_transfer_ns", std::nan(""));
    quantity = "transfer";
    unit = "per launch";
  }
  std::string l = anomaly_subject(f) + " | " + what + " | " + quantity + "=" + format_duration(observed) + " " + unit +
                  " (expected " + format_duration(baseline) + ") | " + steps_text(f) + " | " + f.level + " " + f.kind;
  const double ratio = e.number("ratio", std::nan(""));
  if (std::isfinite(ratio)) l += ", " + format_ratio(ratio);
  if (!f.group.empty() && !f.ranks.empty()) l += " in " + f.group;
  if (const auto* w = e.find("w1_ns"); w && w->what == evidence_item::type::number)
    l +=
        ", W1 " + format_duration(w->number) + " (peers " + format_duration(e.number("peer_w1_ns", std::nan(""))) + ")";
  return l;
}

}  // namespace detail

FAILSLOW_FUNC_DEF std::string analyzer_context(const report& rep, const diagnose::job_model& m, const topology& topo,
                                               const analyzer_context_options& o) {
  if (topo.world_size() != m.world_size)
    throw invalid_argument("analyzer context: the topology has " + std::to_string(topo.world_size()) +
                           " ranks, the model " + std::to_string(m.world_size));
  using detail::format_duration;
  using detail::num;
  std::string out;
  const auto& t = rep.topology;
  const std::size_t shown = std::min(o.max_findings, rep.findings.size());

  // The job's median iteration time over all steps: the scale every duration is read against.
  std::vector<double> iters;
  for (std::size_t r = 0; r < m.rank_count(); ++r)
    for (std::size_t s = 0; s < m.step_count(); ++s)
      if (!std::isnan(m.iteration_ns(r, s))) iters.push_back(m.iteration_ns(r, s));
  const double job_iteration = iters.empty() ? std::nan("") : stats::median(iters);

  out += "[System context]\n<inference_config>\n";
  out += "workload: distributed training; model type: " + o.model_type + "\n";
  out += "ranks: " + std::to_string(rep.world_size) + " (one GPU each), " + std::to_string(m.present_ranks().size()) +
         " with data\n";
  out += "profiled steps: " + std::to_string(rep.first_step) + "-" + std::to_string(rep.last_step) + " (" +
         std::to_string(m.step_count()) + " steps), from " +
         (m.source == "summaries" ? std::string("per-step window summaries (.fsum)") : m.source) + "\n";
  out += "median iteration time: " + format_duration(job_iteration) + "\n";
  out += "</inference_config>\n<parallel_strategy>\n";
  out += "parallel configuration: tp " + std::to_string(t.tp) + " x pp " + std::to_string(t.pp) + " x dp " +
         std::to_string(t.dp) + " (cp " + std::to_string(t.cp) + ", ep " + std::to_string(t.ep) + ")\n";
  out += "rank order: " + t.order + " (first dimension varies fastest); layout from " + t.source + "\n";
  std::vector<int> named;
  for (std::size_t i = 0; i < shown; ++i)
    for (int r : rep.findings[i].ranks)
      if (r >= 0 && r < topo.world_size() && std::find(named.begin(), named.end(), r) == named.end())
        named.push_back(r);
  for (int r : named) {
    const std::string where = diagnose::detail::placement(topo, r);
    if (!where.empty()) out += "rank" + std::to_string(r) + " sits in " + where + "\n";
  }
  out += "</parallel_strategy>\n\n[Anomaly events]\n<trace_anomaly>\n";
  if (shown == 0) out += "none: the diagnosis found no slow window, straggler, degraded kernel, link or stage\n";
  const diagnose::window_index idx(m);
  std::vector<int> listed;
  for (std::size_t i = 0; i < shown; ++i) {
    const finding& f = rep.findings[i];
    out += detail::anomaly_line(f) + "\n";
    if (f.ranks.empty() || m.windows.empty()) continue;
    const int r = f.ranks.front();
    if (r < 0 || r >= m.world_size || listed.size() >= o.max_ranks ||
        std::find(listed.begin(), listed.end(), r) != listed.end())
      continue;
    listed.push_back(r);
    const auto [a, b] = detail::model_step_range(m, f.first_step, f.last_step);
    if (a >= b) continue;
    const auto kernels = detail::slower_kernels(m, idx, r, detail::finding_peers(f, r, topo), a, b);
    for (std::size_t k = 0; k < kernels.size() && k < o.kernels_per_rank; ++k) {
      const auto& c = kernels[k];
      out += "rank" + std::to_string(r) + ".gpu | " + detail::format_kernel_name(m.kernel_names[c.key]) +
             " | duration=" + format_duration(c.rank_mean_ns) + " per launch (expected " +
             format_duration(c.peer_mean_ns) + ") | " + num(c.launches_per_step, "%.4g") + " launches per step, " +
             format_duration(c.lost_ns_per_step) + " lost per step\n";
    }
  }
  out += "</trace_anomaly>\n";
  for (std::size_t i = 0; i < shown; ++i)
    out += "<finding>" + rep.findings[i].level + " " + rep.findings[i].kind + ": " + rep.findings[i].summary +
           "</finding>\n";
  if (rep.findings.size() > shown)
    out += "<finding>and " + std::to_string(rep.findings.size() - shown) + " less severe findings</finding>\n";

  out += "\n[Auxiliary metrics]\n";
  out += "<metric>job_iteration_time: " + format_duration(job_iteration) + " median over ranks and steps</metric>\n";
  for (std::size_t i = 0; i < shown; ++i) {
    const finding& f = rep.findings[i];
    std::string l;
    for (const auto& item : f.evidence.items()) {
      if (item.what != evidence_item::type::number) continue;
      const bool ns = item.name.size() > 3 && item.name.compare(item.name.size() - 3, 3, "_ns") == 0;
      l += (l.empty() ? "" : ", ") + (ns ? item.name.substr(0, item.name.size() - 3) : item.name) + "=" +
           (ns ? format_duration(item.number) : num(item.number, "%.4g"));
    }
    out += "<metric>finding " + std::to_string(i + 1) + " (" + f.level + " " + f.kind + " " +
           detail::anomaly_subject(f) + "): " + l + "</metric>\n";
  }
  std::vector<int> done;
  for (std::size_t i = 0; i < shown; ++i) {
    const finding& f = rep.findings[i];
    if (f.ranks.empty()) continue;
    const int r = f.ranks.front();
    if (r < 0 || r >= m.world_size || done.size() >= o.max_ranks ||
        std::find(done.begin(), done.end(), r) != done.end())
      continue;
    done.push_back(r);
    const auto [a, b] = detail::model_step_range(m, f.first_step, f.last_step);
    if (a >= b) continue;
    const auto peers = detail::finding_peers(f, r, topo);
    std::string l;
    for (std::size_t p = 0; p < m.phase_count(); ++p) {
      std::vector<double> theirs;
      for (int q : peers)
        if (const double v = detail::median_phase(m, q, p, a, b); !std::isnan(v)) theirs.push_back(v);
      const double own = detail::median_phase(m, r, p, a, b);
      if (std::isnan(own)) continue;
      l += (l.empty() ? "" : "; ") + m.phases[p].name + " " + format_duration(own) + " vs " +
           format_duration(theirs.empty() ? std::nan("") : stats::median(theirs));
    }
    out += "<metric>rank" + std::to_string(r) + " phase time per step, " + detail::steps_text(f) + ", rank vs " +
           std::to_string(peers.size()) + " peers' median: " + l + "</metric>\n";
  }
  for (const auto& n : rep.notes) out += "<note>" + n + "</note>\n";
  return out;
}

}  // namespace failslow::io
