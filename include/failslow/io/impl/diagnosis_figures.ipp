// failslow/io/impl/diagnosis_figures.ipp -- the definitions of io/diagnosis_figures.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "failslow/core/dense_array.hpp"
#include "failslow/core/error.hpp"
#include "failslow/core/report.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/diagnose/job_model.hpp"
#include "failslow/io/detail/text_format.hpp"
#include "failslow/io/diagnosis_figures.hpp"
#include "failslow/io/figure.hpp"
#include "failslow/io/svg_heatmap.hpp"
#include "failslow/io/svg_series.hpp"
#include "failslow/io/svg_w1_matrix.hpp"
#include "failslow/stats/descriptive.hpp"
#include "failslow/stats/quantile_grid.hpp"
#include "failslow/stats/w1_matrix_rows.hpp"

namespace failslow::io {

namespace detail {

FAILSLOW_FUNC_DEF std::string file_stem(std::string_view s) {
  std::string out;
  for (char ch : s) {
    const auto u = static_cast<unsigned char>(ch);
    if (std::isalnum(u) && u < 0x80)
      out += static_cast<char>(std::tolower(u));
    else if (!out.empty() && out.back() != '_')
      out += '_';
    if (out.size() >= 40) break;
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out.empty() ? "x" : out;
}

/// Pipeline stage boundaries as first ranks, when every stage is a contiguous block of ranks.
template <class = void>
inline std::vector<std::size_t> stage_starts(const topology& topo) {
  std::vector<std::size_t> s;
  const int pp = topo.size(parallel_dim::pp);
  if (pp <= 1 || topo.stride(parallel_dim::pp) * pp != topo.world_size()) return s;
  for (int k = 1; k < pp; ++k) s.push_back(static_cast<std::size_t>(k * topo.stride(parallel_dim::pp)));
  return s;
}

/// Model step indices [a, b] of a finding's steps (b < a when none).
template <class = void>
inline std::pair<std::size_t, std::size_t> step_span(const diagnose::job_model& m, const finding& f) {
  const auto a =
      static_cast<std::size_t>(std::lower_bound(m.steps.begin(), m.steps.end(), f.first_step) - m.steps.begin());
  const auto e =
      static_cast<std::size_t>(std::upper_bound(m.steps.begin(), m.steps.end(), f.last_step) - m.steps.begin());
  return {a, e == 0 ? 0 : e - 1};
}

/// The ranks a finding names: its ranks, or a link's group_ranks.
template <class = void>
inline std::vector<int> named_ranks(const finding& f) {
  std::vector<int> r = f.ranks;
  if (r.empty())
    if (const auto* g = f.evidence.find("group_ranks"); g && g->what == evidence_item::type::numbers)
      for (double x : g->numbers) r.push_back(static_cast<int>(x));
  return r;
}

template <class = void>
inline std::string phase_title(const diagnose::phase_info& ph) {
  if (ph.annotated) return ph.name + " compute per step";
  return ph.name + " time per step";
}

template <class = void>
inline void unique_file(std::string& name, std::map<std::string, int>& used) {
  const int k = used[name]++;
  if (k > 0) name += "_" + std::to_string(k + 1);
}

// The W1 matrix of a degraded_kernel / degraded_link finding, or an empty figure when the
// model lacks what it needs.
template <class = void>
inline figure w1_figure(const diagnose::job_model& m, const topology& topo, const finding& f, std::size_t index,
                        const figure_options& o) {
  figure fig;
  const auto key_it = std::find(m.kernel_names.begin(), m.kernel_names.end(), f.kernel);
  if (m.windows.empty() || f.kernel.empty() || key_it == m.kernel_names.end()) return fig;
  const auto key = static_cast<std::size_t>(key_it - m.kernel_names.begin());
  std::vector<int> named = named_ranks(f);
  if (const auto* p = f.evidence.find("peers"); p && p->what == evidence_item::type::numbers && !f.ranks.empty())
    for (double x : p->numbers) named.push_back(static_cast<int>(x));
  if (named.empty()) return fig;
  std::sort(named.begin(), named.end());
  named.erase(std::unique(named.begin(), named.end()), named.end());

  // Groups: the finding's group dimension within its stage, or the named ranks as one group.
  std::vector<std::vector<int>> groups;
  std::vector<std::string> names;
  std::size_t own = 0;
  const auto colon = f.group.find(':');
  const std::string dim_name = colon == std::string::npos ? "" : f.group.substr(0, colon);
  const bool one_dim = dim_name == "tp" || dim_name == "cp" || dim_name == "ep" || dim_name == "dp";
  const int anchor = named.front();
  if (one_dim && anchor >= 0 && anchor < topo.world_size()) {
    const auto dim = parse_parallel_dim(dim_name);
    const int stage = topo.coordinate(anchor, parallel_dim::pp);
    const int mine = topo.group_index(anchor, dim);
    for (int g = 0; g < topo.group_count(dim); ++g) {
      auto members = topo.group_members(dim, g);
      if (members.empty() || topo.coordinate(members.front(), parallel_dim::pp) != stage) continue;
      if (g == mine) own = groups.size();
      groups.push_back(std::move(members));
      names.push_back(dim_name + ":" + std::to_string(g));
    }
  } else {
    groups.push_back(named);
    names.push_back(f.group.empty() ? "" : f.group);
  }
  // Keep the finding's group and the nearest others within w1_max_ranks.
  std::vector<std::size_t> keep = {own};
  std::size_t count = groups[own].size();
  for (std::size_t dist = 1; dist < groups.size(); ++dist)
    for (std::size_t side = 0; side < 2; ++side) {
      if (side == 0 && dist > own) continue;
      const std::size_t g = side == 0 ? own - dist : own + dist;
      if (g >= groups.size() || count + groups[g].size() > o.w1_max_ranks) continue;
      keep.push_back(g);
      count += groups[g].size();
    }
  std::sort(keep.begin(), keep.end());
  const std::size_t all_groups = groups.size();

  std::vector<int> members;
  std::vector<std::size_t> starts;
  std::vector<std::string> group_names;
  for (std::size_t g : keep) {
    if (!members.empty()) starts.push_back(members.size());
    members.insert(members.end(), groups[g].begin(), groups[g].end());
    group_names.push_back(names[g]);
  }
  if (group_names.size() == 1 && group_names.front().empty()) group_names.clear();

  // Each member's barycentre over the finding's steps.
  const auto [first, last] = step_span(m, f);
  const diagnose::window_index win(m);
  const stats::quantile_grid grid(o.quantiles);
  const std::size_t K = o.quantiles;
  std::vector<double> q(members.size() * K);  // row-major, the first `rows` rows used
  std::vector<std::size_t> row_of(members.size(), members.size());
  std::vector<double> one(K), sum(K);
  std::size_t rows = 0;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const int r = members[i];
    if (r < 0 || static_cast<std::size_t>(r) >= m.rank_count()) continue;
    std::fill(sum.begin(), sum.end(), 0.0);
    std::size_t n = 0;
    for (std::size_t s = first; s <= last && s < m.step_count(); ++s)
      if (const auto* ks = win.find(r, s, key); ks && !ks->clusters.empty()) {
        stats::quantile_vector(ks->distribution(o.truncated), grid, one.data());
        for (std::size_t u = 0; u < K; ++u) sum[u] += one[u];
        ++n;
      }
    if (n == 0) continue;
    for (std::size_t u = 0; u < K; ++u) q[rows * K + u] = sum[u] / static_cast<double>(n);
    row_of[i] = rows++;
  }
  if (rows == 0) return fig;
  std::vector<double> dq(rows * rows);
  stats::w1_matrix_rows(q.data(), rows, K, dq.data(), o.threads);
  const std::size_t N = members.size();
  dense_array<double, 2> d({N, N}, std::numeric_limits<double>::quiet_NaN());
  for (std::size_t i = 0; i < N; ++i)
    for (std::size_t j = 0; j < N; ++j)
      if (row_of[i] < N && row_of[j] < N) d(i, j) = dq[row_of[i] * rows + row_of[j]];

  w1_matrix_options wo;
  const std::string kname = format_kernel_name(f.kernel, 70);
  const std::string steps = f.first_step == f.last_step
                                ? "step " + std::to_string(f.first_step)
                                : "steps " + std::to_string(f.first_step) + "-" + std::to_string(f.last_step);
  wo.title = "W1 distance between ranks: " + kname;
  const int stage = topo.coordinate(anchor, parallel_dim::pp);
  std::string who = plural(members.size(), "rank");
  if (one_dim)
    who +=
        (topo.size(parallel_dim::pp) > 1 ? " of pipeline stage " + std::to_string(stage) : std::string()) + " in " +
        plural(keep.size(), dim_name + " group") +
        (keep.size() < all_groups ? " (of " + std::to_string(all_groups) + ": the finding's and its neighbours)" : "");
  wo.subtitle.push_back(who + ", " + steps + (f.kind == "degraded_link" ? ", collective" : ", kernel") +
                        " durations per rank over these steps");
  wo.subtitle.push_back("Finding: " + f.kind + (f.group.empty() ? "" : " in " + f.group) + ", " + f.level);
  wo.labels = members;
  wo.group_starts = starts;
  wo.group_names = group_names;
  for (std::size_t i = 0; i < members.size(); ++i)
    if (std::binary_search(f.ranks.begin(), f.ranks.end(), members[i]) ||
        (f.ranks.empty() && std::binary_search(named.begin(), named.end(), members[i])))
      wo.marked.push_back(i);
  fig.kind = "w1_matrix";
  fig.file = "w1_" + file_stem(f.group.empty() ? f.kind : f.group) + "_" + file_stem(kname) + ".svg";
  fig.title = "W1 distances of " + kname + " between the ranks of " + (f.group.empty() ? "the group" : f.group) +
              "'s stage, " + steps;
  fig.findings = {index};
  fig.svg = w1_matrix_svg(d, wo);
  return fig;
}

}  // namespace detail

FAILSLOW_FUNC_DEF std::vector<figure> diagnosis_figures(const diagnose::job_model& m, const topology& topo,
                                                        const report& rep, const figure_options& o) {
  using namespace detail;
  if (topo.world_size() != m.world_size)
    throw invalid_argument("diagnosis_figures: topology of " + std::to_string(topo.world_size()) +
                           " ranks for a job of " + std::to_string(m.world_size));
  std::vector<figure> out;
  const std::size_t R = m.rank_count(), S = m.step_count();
  if (R == 0 || S == 0) return out;
  std::map<std::string, int> used;
  auto add = [&](figure f) {
    unique_file(f.file, used);
    out.push_back(std::move(f));
  };

  // The iteration series with the L1 windows.
  {
    iteration_series s;
    s.steps = m.steps;
    std::vector<double> col;
    for (std::size_t t = 0; t < S; ++t) {
      col.clear();
      for (std::size_t r = 0; r < R; ++r)
        if (std::isfinite(m.iteration_ns(r, t))) col.push_back(m.iteration_ns(r, t));
      const double nan = std::numeric_limits<double>::quiet_NaN();
      s.median_ns.push_back(col.empty() ? nan : stats::median(col));
      s.min_ns.push_back(col.empty() ? nan : *std::min_element(col.begin(), col.end()));
      s.max_ns.push_back(col.empty() ? nan : *std::max_element(col.begin(), col.end()));
    }
    series_options so;
    so.title = "Iteration time per step";
    figure f;
    f.kind = "iteration_series";
    f.file = "iteration_series.svg";
    f.title = "the job's iteration time per step with the slow windows (L1) shaded";
    f.overview = true;
    for (std::size_t i = 0; i < rep.findings.size(); ++i) {
      const auto& x = rep.findings[i];
      if (x.kind != "slow_window") continue;
      const auto* pat = x.evidence.find("pattern");
      series_window w;
      w.first = x.first_step;
      w.last = x.last_step;
      w.job = x.ranks.empty();
      w.label = std::string(w.job ? "" : "rank " + std::to_string(x.ranks.front()) + ": ") +
                (pat && pat->what == evidence_item::type::text ? pat->text : "slow") + " " + format_ratio(x.score);
      so.windows.push_back(std::move(w));
      if (x.ranks.empty() && !std::isfinite(so.baseline_ns))
        so.baseline_ns = x.evidence.number("baseline_ns", so.baseline_ns);
      f.findings.push_back(i);
    }
    f.svg = iteration_series_svg(s, so);
    add(std::move(f));
  }

  const auto seps = stage_starts(topo);
  auto heatmap_of = [&](const std::vector<double>& values, std::string title, std::string value_name,
                        const std::vector<std::size_t>& findings, std::string file, std::string fig_title,
                        bool overview = false) {
    heatmap_options ho;
    ho.title = std::move(title);
    ho.value_name = std::move(value_name);
    ho.col_labels = m.steps;
    ho.row_separators = seps;
    ho.max_plot_width = o.max_plot_width;
    ho.max_plot_height = o.max_plot_height;
    for (std::size_t i : findings)
      for (int r : named_ranks(rep.findings[i])) ho.marked_rows.push_back(r);
    figure f;
    f.kind = "heatmap";
    f.file = std::move(file);
    f.title = std::move(fig_title);
    f.findings = findings;
    f.overview = overview;
    f.svg = heatmap_svg(values, R, S, ho);
    add(std::move(f));
  };

  // Iteration time: every finding.
  {
    std::vector<double> v(R * S);
    for (std::size_t r = 0; r < R; ++r)
      for (std::size_t t = 0; t < S; ++t) v[r * S + t] = m.iteration_ns(r, t);
    std::vector<std::size_t> all;
    for (std::size_t i = 0; i < rep.findings.size(); ++i) all.push_back(i);
    heatmap_of(v, "Iteration time per step, rank x step", "iteration time", all, "heatmap_iteration.svg",
               "iteration time per rank and step", true);
  }

  // One heatmap per phase a finding names, in the order of the findings.
  std::vector<std::size_t> phases;
  std::map<std::size_t, std::vector<std::size_t>> by_phase;
  for (std::size_t i = 0; i < rep.findings.size(); ++i) {
    const std::size_t p = m.phase_index(rep.findings[i].phase);
    if (p >= m.phase_count()) continue;
    if (!by_phase.count(p)) phases.push_back(p);
    by_phase[p].push_back(i);
  }
  for (std::size_t p : phases) {
    std::vector<double> v(R * S);
    for (std::size_t r = 0; r < R; ++r)
      for (std::size_t t = 0; t < S; ++t) v[r * S + t] = m.phase_ns(r, p, t);
    const std::string t = phase_title(m.phases[p]);
    std::string title = t;
    title[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(title[0])));
    heatmap_of(
        v, title + ", rank x step", t, by_phase[p], "heatmap_" + file_stem(m.phases[p].name) + ".svg",
        (m.phases[p].annotated ? m.phases[p].name + " compute" : m.phases[p].name + " time") + " per rank and step");
  }

  // Per degraded kernel: its mean duration per launch, and the W1 matrix of its group.
  if (!m.windows.empty()) {
    const diagnose::window_index win(m);
    for (std::size_t i = 0; i < rep.findings.size(); ++i) {
      const auto& f = rep.findings[i];
      if (f.kind != "degraded_kernel" && f.kind != "degraded_link") continue;
      const auto it = std::find(m.kernel_names.begin(), m.kernel_names.end(), f.kernel);
      if (it == m.kernel_names.end()) continue;
      const auto key = static_cast<std::size_t>(it - m.kernel_names.begin());
      const std::string kname = format_kernel_name(f.kernel, 70);
      if (f.kind == "degraded_kernel") {
        std::vector<double> v(R * S, std::numeric_limits<double>::quiet_NaN());
        for (std::size_t r = 0; r < R; ++r)
          for (std::size_t t = 0; t < S; ++t)
            if (const auto* ks = win.find(static_cast<int>(r), t, key); ks && ks->count)
              v[r * S + t] = ks->total_ns / static_cast<double>(ks->count);
        heatmap_of(v, "Mean duration per launch, rank x step: " + kname, "mean duration per launch", {i},
                   "heatmap_kernel_" + file_stem(kname) + ".svg",
                   kname + ": mean duration per launch per rank and step");
      }
      auto w = w1_figure(m, topo, f, i, o);
      if (!w.svg.empty()) add(std::move(w));
    }
  }
  return out;
}

FAILSLOW_FUNC_DEF void refer_to_figures(report& rep, const std::vector<figure>& figures, const std::string& dir) {
  for (const auto& f : figures) {
    report_file rf;
    rf.kind = f.kind;
    rf.path = dir.empty() ? f.file : dir + (dir.back() == '/' ? "" : "/") + f.file;
    rf.title = f.title;
    rf.findings = f.findings;
    rep.files.push_back(std::move(rf));
  }
}

}  // namespace failslow::io
