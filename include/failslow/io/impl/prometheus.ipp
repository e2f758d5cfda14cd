// failslow/io/impl/prometheus.ipp -- the definitions of io/prometheus.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/core/report.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/diagnose/job_model.hpp"
#include "failslow/io/detail/json_writer.hpp"
#include "failslow/io/output_file.hpp"
#include "failslow/io/prometheus.hpp"
#include "failslow/stats/descriptive.hpp"

namespace failslow::io {

namespace detail {

/// Appends s with every byte sequence that is not valid UTF-8 replaced by U+FFFD, each byte
/// passed through `escape` first.
template <class Escape>
void append_utf8(std::string& out, std::string_view s, Escape&& escape) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    bool ok = len > 0 && i + len <= s.size();
    for (std::size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
    if (ok && len > 1) {  // no overlong forms, surrogates or code points past U+10FFFF
      const auto c1 = static_cast<unsigned char>(s[i + 1]);
      ok = !(c == 0xC0 || c == 0xC1 || (c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0) ||
             (c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 >= 0x90) || c > 0xF4);
    }
    if (!ok) {
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    if (len == 1)
      escape(out, s[i]);
    else
      out.append(s.data() + i, len);
    i += len;
  }
}

FAILSLOW_FUNC_DEF void append_prometheus_label_value(std::string& out, std::string_view v) {
  append_utf8(out, v, [](std::string& o, char c) {
    if (c == '\\')
      o += "\\\\";
    else if (c == '"')
      o += "\\\"";
    else if (c == '\n')
      o += "\\n";
    else
      o += c;
  });
}

FAILSLOW_FUNC_DEF void append_prometheus_help(std::string& out, std::string_view v) {
  append_utf8(out, v, [](std::string& o, char c) {
    if (c == '\\')
      o += "\\\\";
    else if (c == '\n')
      o += "\\n";
    else
      o += c;
  });
}

FAILSLOW_FUNC_DEF void append_prometheus_value(std::string& out, double v) {
  if (std::isnan(v))
    out += "NaN";
  else if (std::isinf(v))
    out += v > 0 ? "+Inf" : "-Inf";
  else
    append_number(out, v);
}

inline bool valid_prometheus_name(std::string_view s, bool label) {
  if (s.empty()) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (!label && c == ':');
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

inline std::string step_label(std::int64_t s) { return std::to_string(s); }

FAILSLOW_FUNC_DEF void prometheus_writer::family(std::string_view name, std::string_view type, std::string_view help) {
  if (!valid_prometheus_name(name, false) || !families_.insert(std::string(name)).second)
    throw invalid_argument("prometheus: metric name '" + std::string(name) + "' is invalid or used twice");
  name_ = std::string(name);
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  append_prometheus_help(out_, help);
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += ' ';
  out_ += type;
  out_ += '\n';
}

FAILSLOW_FUNC_DEF void prometheus_writer::sample(const labels& l, double value) {
  if (std::isnan(value)) return;
  out_ += name_;
  if (!l.empty()) {
    out_ += '{';
    for (std::size_t i = 0; i < l.size(); ++i) {
      if (i) out_ += ',';
      out_ += l[i].first;
      out_ += "=\"";
      append_prometheus_label_value(out_, l[i].second);
      out_ += '"';
    }
    out_ += '}';
  }
  out_ += ' ';
  append_prometheus_value(out_, value);
  out_ += '\n';
}

}  // namespace detail

FAILSLOW_FUNC_DEF std::string prometheus_metrics(const report& rep, const diagnose::job_model& m, const topology& topo,
                                                 const prometheus_options& o) {
  if (topo.world_size() != m.world_size)
    throw invalid_argument("prometheus: the topology has " + std::to_string(topo.world_size()) + " ranks, the model " +
                           std::to_string(m.world_size));
  std::string out;
  detail::prometheus_writer w(out);
  constexpr double s_per_ns = 1e-9;

  w.family("failslow_info", "gauge", "What was diagnosed: report schema, data source and where the layout came from.");
  w.sample({{"schema", std::string(report::schema)},
            {"source", m.source},
            {"topology_source", rep.topology.source},
            {"order", rep.topology.order}},
           1);
  w.family("failslow_world_size", "gauge", "Ranks of the job's layout.");
  w.sample({}, rep.world_size);
  w.family("failslow_parallel_size", "gauge", "Size of each parallel dimension of the layout.");
  const std::pair<const char*, int> dims[] = {{"tp", rep.topology.tp},
                                              {"cp", rep.topology.cp},
                                              {"ep", rep.topology.ep},
                                              {"dp", rep.topology.dp},
                                              {"pp", rep.topology.pp}};
  for (const auto& [d, v] : dims) w.sample({{"dim", d}}, v);
  w.family("failslow_report_step", "gauge", "First and last ProfilerStep number the report covers.");
  w.sample({{"bound", "first"}}, static_cast<double>(rep.first_step));
  w.sample({{"bound", "last"}}, static_cast<double>(rep.last_step));

  // Findings by level and kind: the kinds the diagnosis emits always, so that an alert on
  // "> 0" has a series to watch.
  std::vector<std::pair<std::string, std::string>> kinds = {
      {"L1", "slow_window"},     {"L2", "straggler"},  {"L3", "degraded_kernel"}, {"L3", "degraded_link"},
      {"L3", "outlier_rank"},    {"L3", "slow_stage"}, {"L4", "holds_back"},      {"L4", "host_stall"},
      {"L4", "pipeline_bubble"}, {"L4", "slow_host"}};
  for (const auto& f : rep.findings)
    if (std::find(kinds.begin(), kinds.end(), std::make_pair(f.level, f.kind)) == kinds.end())
      kinds.emplace_back(f.level, f.kind);
  w.family("failslow_findings", "gauge", "Findings of the last diagnosis by level and kind.");
  for (const auto& level_kind : kinds) {
    const auto n = std::count_if(rep.findings.begin(), rep.findings.end(), [&level_kind](const finding& f) {
      return f.level == level_kind.first && f.kind == level_kind.second;
    });
    w.sample({{"level", level_kind.first}, {"kind", level_kind.second}}, static_cast<double>(n));
  }
  std::map<std::pair<int, std::string>, int> per_rank;
  for (const auto& f : rep.findings)
    for (int r : std::set<int>(f.ranks.begin(), f.ranks.end())) ++per_rank[{r, f.level}];
  w.family("failslow_rank_findings", "gauge", "Findings that name the rank, by level (ranks with none are absent).");
  for (const auto& [key, n] : per_rank) w.sample({{"rank", std::to_string(key.first)}, {"level", key.second}}, n);

  auto finding_labels = [](const finding& f, std::size_t i) {
    return detail::prometheus_writer::labels{{"finding", std::to_string(i + 1)},
                                             {"level", f.level},
                                             {"kind", f.kind},
                                             {"rank", f.ranks.empty() ? std::string() : std::to_string(f.ranks[0])},
                                             {"group", f.group},
                                             {"phase", f.phase},
                                             {"kernel", f.kernel},
                                             {"first_step", std::to_string(f.first_step)},
                                             {"last_step", std::to_string(f.last_step)}};
  };
  w.family("failslow_finding_score", "gauge",
           "Score of each finding (per kind: robust z, ratio or distance; docs/report.md), in severity order.");
  for (std::size_t i = 0; i < rep.findings.size(); ++i)
    w.sample(finding_labels(rep.findings[i], i), rep.findings[i].score);
  w.family("failslow_finding_job_slowdown_ratio", "gauge",
           "Share of the job's iteration time lost over the finding's steps (0..1).");
  for (std::size_t i = 0; i < rep.findings.size(); ++i)
    w.sample(finding_labels(rep.findings[i], i), rep.findings[i].evidence.number("job_slowdown", std::nan("")));
  w.family("failslow_finding_observed_ratio", "gauge",
           "Observed over baseline time of the finding (evidence ratio; 1.49 = 49 % slower).");
  for (std::size_t i = 0; i < rep.findings.size(); ++i)
    w.sample(finding_labels(rep.findings[i], i), rep.findings[i].evidence.number("ratio", std::nan("")));

  // W1 where L3 computed it: the degraded kernels' evidence.
  std::vector<const finding*> kernels;
  std::set<std::tuple<int, std::string, std::string>> seen_kernels;
  for (const auto& f : rep.findings)
    if (f.kind == "degraded_kernel" && !f.ranks.empty() && seen_kernels.insert({f.ranks[0], f.group, f.kernel}).second)
      kernels.push_back(&f);
  auto kernel_labels = [](const finding& f) {
    return detail::prometheus_writer::labels{
        {"rank", std::to_string(f.ranks[0])}, {"group", f.group}, {"kernel", f.kernel}};
  };
  w.family("failslow_kernel_w1_seconds", "gauge",
           "Wasserstein-1 distance of the kernel's duration distribution on the rank to its peers' median "
           "distribution, over the finding's steps (L3 degraded kernels only).");
  for (const auto* f : kernels) w.sample(kernel_labels(*f), f->evidence.number("w1_ns", std::nan("")) * s_per_ns);
  w.family("failslow_kernel_peer_w1_seconds", "gauge",
           "The peers' own median W1 to their median distribution: the group's spread (L3 degraded kernels only).");
  for (const auto* f : kernels) w.sample(kernel_labels(*f), f->evidence.number("peer_w1_ns", std::nan("")) * s_per_ns);
  w.family("failslow_kernel_launch_seconds", "gauge",
           "Mean duration per launch of the degraded kernel: on the rank, and the peers' median.");
  for (const auto* f : kernels) {
    auto l = kernel_labels(*f);
    l.emplace_back("of", "rank");
    w.sample(l, f->evidence.number("observed_ns", std::nan("")) * s_per_ns);
    l.back().second = "peers";
    w.sample(l, f->evidence.number("baseline_ns", std::nan("")) * s_per_ns);
  }

  // Per rank and step.
  const std::size_t S = m.step_count();
  const std::size_t first = o.last_steps == 0 || o.last_steps >= S ? 0 : S - o.last_steps;
  const auto ranks = m.present_ranks();
  auto rank_labels = [&](int r, std::size_t s) {
    return detail::prometheus_writer::labels{{"rank", std::to_string(r)},
                                             {"stage", std::to_string(topo.coordinate(r, parallel_dim::pp))},
                                             {"step", detail::step_label(m.steps[s])}};
  };
  w.family("failslow_iteration_seconds", "gauge",
           "Time between two step completions on the rank's GPU (per rank and step).");
  for (int r : ranks)
    for (std::size_t s = first; s < S; ++s)
      w.sample(rank_labels(r, s), m.iteration_ns(static_cast<std::size_t>(r), s) * s_per_ns);
  w.family("failslow_phase_seconds", "gauge",
           "GPU time of each phase per rank and step: compute, communication (waits included), memory, idle, "
           "and the compute inside annotated phases.");
  for (int r : ranks)
    for (std::size_t s = first; s < S; ++s)
      for (std::size_t p = 0; p < m.phase_count(); ++p) {
        auto l = rank_labels(r, s);
        l.emplace_back("phase", m.phases[p].name);
        l.emplace_back("role", std::string(diagnose::to_string(m.phases[p].role)));
        w.sample(l, m.phase_ns(static_cast<std::size_t>(r), p, s) * s_per_ns);
      }
  w.family("failslow_gpu_time_seconds", "gauge",
           "Per rank and step: work (compute and memory kernels, the rank's own time), wait (collectives, "
           "waits for slower peers included) and idle GPU time.");
  for (int r : ranks)
    for (std::size_t s = first; s < S; ++s) {
      const auto rr = static_cast<std::size_t>(r);
      const double work = m.phase_ns(rr, diagnose::compute_phase, s) + m.phase_ns(rr, diagnose::memory_phase, s);
      const std::pair<const char*, double> roles[] = {{"work", work},
                                                      {"wait", m.phase_ns(rr, diagnose::communication_phase, s)},
                                                      {"idle", m.phase_ns(rr, diagnose::idle_phase, s)}};
      for (const auto& [role, v] : roles) {
        auto l = rank_labels(r, s);
        l.emplace_back("role", role);
        w.sample(l, v * s_per_ns);
      }
    }
  w.family("failslow_job_iteration_median_seconds", "gauge", "Median over ranks of the iteration time, per step.");
  for (std::size_t s = first; s < S; ++s) {
    std::vector<double> v;
    for (int r : ranks) {
      const double x = m.iteration_ns(static_cast<std::size_t>(r), s);
      if (!std::isnan(x)) v.push_back(x);
    }
    if (!v.empty()) w.sample({{"step", detail::step_label(m.steps[s])}}, stats::median(v) * s_per_ns);
  }
  return out;
}

}  // namespace failslow::io
