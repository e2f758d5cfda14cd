// failslow/diagnose/impl/l2_stragglers.ipp -- the definitions of diagnose/l2_stragglers.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/core/routing.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/detect/binseg.hpp"
#include "failslow/detect/fdr.hpp"
#include "failslow/diagnose/detail/binomial_tail.hpp"
#include "failslow/diagnose/detail/rank_list.hpp"
#include "failslow/diagnose/detail/rank_sum.hpp"
#include "failslow/diagnose/job_model.hpp"
#include "failslow/diagnose/l1_windows.hpp"
#include "failslow/diagnose/l2_stragglers.hpp"
#include "failslow/stats/descriptive.hpp"
#include "failslow/stats/detail/student_t.hpp"

namespace failslow::diagnose::detail {

template <class = void>
inline void check(const l2_options& o) {
  if (!(o.z_threshold > 0) || !(o.min_effect >= 0) || o.min_steps == 0 || !(o.min_fraction > 0) ||
      !(o.min_fraction <= 1) || !(o.fdr_q > 0) || !(o.fdr_q <= 1) || o.min_group < 2 || !(o.min_phase_ns >= 0) ||
      !(o.resolution >= 0) || !(o.min_step_share >= 0) || !(o.min_step_share < 1) || !(o.own_history_min_effect >= 0) ||
      !(o.own_history_raw_alpha > 0 && o.own_history_raw_alpha <= 1) || std::isnan(o.bridge_z))
    throw invalid_argument(
        "l2_options: z_threshold > 0, min_effect >= 0, min_steps >= 1, min_fraction in (0, 1], "
        "fdr_q in (0, 1], min_group >= 2, min_phase_ns >= 0, resolution >= 0, min_step_share in [0, 1), "
        "own_history_min_effect >= 0, own_history_raw_alpha in (0, 1], bridge_z not NaN (infinity: no bridging)");
}

FAILSLOW_FUNC_DEF std::string group_label(const topology& topo, int rank, dim_set scope) {
  std::vector<parallel_dim> eff;
  for (parallel_dim d : all_parallel_dims)
    if (scope.contains(d) && topo.size(d) > 1) eff.push_back(d);
  if (eff.size() == 1 && eff[0] != parallel_dim::pp) return topo.group_name(rank, eff[0]);
  bool whole_stage = topo.size(parallel_dim::pp) > 1 && !scope.contains(parallel_dim::pp);
  for (parallel_dim d : all_parallel_dims)
    if (d != parallel_dim::pp && topo.size(d) > 1 && !scope.contains(d)) whole_stage = false;
  if (whole_stage) return "stage:" + std::to_string(topo.coordinate(rank, parallel_dim::pp));
  return {};
}

FAILSLOW_FUNC_DEF double finite_median(std::vector<double>& v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x); }), v.end());
  return v.empty() ? std::numeric_limits<double>::quiet_NaN() : stats::median(v);
}

FAILSLOW_FUNC_DEF double median_iteration(const job_model& m, const std::vector<int>& ranks, std::size_t a,
                                          std::size_t b, int except) {
  std::vector<double> it;
  for (std::size_t s = a; s <= b && s < m.step_count(); ++s)
    for (int x : ranks)
      if (x != except) it.push_back(m.iteration_ns(static_cast<std::size_t>(x), s));
  return finite_median(it);
}

// One (group, phase) comparison: z, relative effect and elevation per member and step.
struct comparison {
  std::vector<int> members;
  std::size_t phase = 0;
  std::string group, scope;
  std::vector<double> median;  // per step: the group's median (NaN: too few values)
  std::vector<std::vector<double>> z, rel;
  std::vector<std::vector<char>> elevated;
  double scale = 0;
  std::vector<double> cv;  // per step
};

FAILSLOW_FUNC_DEF std::vector<rank_group> comparable_groups(const job_model& m, const topology& topo, dim_set scope,
                                                            std::size_t min_group, const std::vector<int>& roles) {
  std::vector<rank_group> out;
  std::vector<bool> done(m.rank_count(), false);
  auto with_data = [&](const std::vector<int>& g) {
    std::vector<int> v;
    for (int x : g)
      if (m.has_rank[static_cast<std::size_t>(x)]) v.push_back(x);
    return v;
  };
  for (int r : m.present_ranks()) {
    if (done[static_cast<std::size_t>(r)]) continue;
    rank_group g;
    g.scope = scope;
    g.rank = r;
    auto group = topo.group(r, g.scope);
    g.members = with_data(group);
    if (g.members.size() < min_group && topo.size(parallel_dim::tp) > 1 && !g.scope.contains(parallel_dim::tp)) {
      g.scope = g.scope | dim_set{parallel_dim::tp};
      group = topo.group(r, g.scope);
      g.members = with_data(group);
    }
    for (int x : group) done[static_cast<std::size_t>(x)] = true;
    if (roles.empty()) {
      out.push_back(std::move(g));
      continue;
    }
    auto role = [&](int x) {
      return static_cast<std::size_t>(x) < roles.size() ? roles[static_cast<std::size_t>(x)] : -1;
    };
    std::vector<int> left = std::move(g.members);
    while (!left.empty()) {
      rank_group part;
      part.scope = g.scope;
      part.rank = left.front();
      std::vector<int> rest;
      for (int x : left) (role(x) == role(part.rank) ? part.members : rest).push_back(x);
      left = std::move(rest);
      out.push_back(std::move(part));
    }
  }
  return out;
}

FAILSLOW_FUNC_DEF double window_scan_factor(double n, bool to_end) {
  return std::max(1.0, to_end ? 3 * std::sqrt(n) : n * n / 4);
}

template <class = void>
inline ratio_noise group_ratio_noise(const job_model& m, std::size_t p, const std::vector<int>& members) {
  const std::size_t S = m.step_count(), G = members.size();
  if (G < 3 || S < 3) return {};
  std::vector<double> sds, lag1s, col, series, med_all(S, std::numeric_limits<double>::quiet_NaN());
  const bool leave_out = G <= 32;
  if (!leave_out)
    for (std::size_t s = 0; s < S; ++s) {
      col.clear();
      for (int x : members) col.push_back(m.phase_ns(static_cast<std::size_t>(x), p, s));
      med_all[s] = finite_median(col);
    }
  for (int r : members) {
    series.clear();
    for (std::size_t s = 0; s < S; ++s) {
      double ref = med_all[s];
      if (leave_out) {
        col.clear();
        for (int x : members)
          if (x != r) col.push_back(m.phase_ns(static_cast<std::size_t>(x), p, s));
        ref = finite_median(col);
      }
      const double own = m.phase_ns(static_cast<std::size_t>(r), p, s);
      if (own > 0 && ref > 0 && std::isfinite(own) && std::isfinite(ref)) series.push_back(std::log(own / ref));
    }
    if (series.size() < 3) continue;
    const auto mo = stats::moments(series);
    sds.push_back(mo.stddev());
    // The lag-1 autocorrelation about the series' best single change of level (binary
    // segmentation's strongest split, 3 steps a side at least): a change another rank's fault
    // makes in the others' median is not taken for persistent noise.
    detect::changepoint_options split;
    split.pen = detect::penalty::fixed(0);
    split.min_segment = 3;
    split.sigma = 1;  // the split that explains most does not depend on it
    split.max_changes = 1;
    const auto parts = detect::binary_segmentation(series, split).segments;
    const std::size_t n = series.size();
    double num = 0, den = 0;
    for (const auto& part : parts)
      for (std::size_t i = part.begin; i < part.end; ++i) {
        const double e = series[i] - part.mean;
        den += e * e;
        if (i > part.begin) num += e * (series[i - 1] - part.mean);
      }
    // Kendall's correction of the estimate's bias on a short series, (n r + 1) / (n - 3)
    // (about -(1 + 3 rho) / n: 24 steps of rho 0.6 read 0.48).
    if (den > 0 && n > 3) lag1s.push_back((static_cast<double>(n) * num / den + 1) / static_cast<double>(n - 3));
  }
  ratio_noise out;
  if (!sds.empty()) out.sd = stats::median(sds);
  if (!lag1s.empty()) out.lag1 = stats::median(lag1s);
  return out;
}

// Two samples (each of at least 2 values) for a pooled-variance Student t: the difference of
// their means, the pooled sd, sqrt(1/n_a + 1/n_b) and n_a + n_b - 2 degrees of freedom; from
// the samples or from their moments (the own-history scan merges prefix and suffix moments).
struct two_sample_stats {
  double diff = 0, sd = 0, se_factor = 0, df = 0, n_in = 0, n_out = 0;
};

template <class = void>
inline two_sample_stats pooled_two_sample(const stats::running_moments<double>& ma,
                                          const stats::running_moments<double>& mb) {
  two_sample_stats out;
  out.n_in = static_cast<double>(ma.count());
  out.n_out = static_cast<double>(mb.count());
  out.df = out.n_in + out.n_out - 2;
  out.diff = ma.mean() - mb.mean();
  out.sd = std::sqrt((ma.sum_of_squares() + mb.sum_of_squares()) / out.df);
  out.se_factor = std::sqrt(1 / out.n_in + 1 / out.n_out);
  return out;
}

template <class = void>
inline two_sample_stats pooled_two_sample(const std::vector<double>& a, const std::vector<double>& b) {
  return pooled_two_sample(stats::moments(a), stats::moments(b));
}

FAILSLOW_FUNC_DEF straggler own_history_claim(const job_model& m, int rank, std::size_t p,
                                              const std::vector<int>& present, const l2_options& o, double floor,
                                              ratio_noise group) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  const std::size_t S = m.step_count(), r = static_cast<std::size_t>(rank);
  const bool idle = m.phases[p].role == phase_role::idle;
  straggler st;
  st.rank = rank;
  st.phase = p;
  st.compared_within = "own history";
  for (int x : present)
    if (x != rank) st.peers.push_back(x);
  std::vector<double> q(S, nan), above(S, nan), col;
  for (std::size_t s = 0; s < S; ++s) {
    col.clear();
    for (int x : st.peers)
      col.push_back(idle ? m.iteration_ns(static_cast<std::size_t>(x), s)
                         : m.phase_ns(static_cast<std::size_t>(x), p, s));
    const double own = m.phase_ns(r, p, s);
    if (st.peers.empty()) {  // the only member (L3's single group of a dimension): its series as is
      if (!idle && own >= o.min_phase_ns) q[s] = own;
      continue;
    }
    const double ref = finite_median(col);
    if (!(ref >= o.min_phase_ns) || !std::isfinite(own)) continue;
    if (!idle) {
      q[s] = own / ref;
      above[s] = own / ref - 1;
      continue;
    }
    // Idle: the rank's step share against the others' (idle that grows on every rank, a job-wide
    // slowdown, cancels).
    col.clear();
    for (int x : st.peers) col.push_back(m.phase_ns(static_cast<std::size_t>(x), p, s));
    const double others_idle = finite_median(col);
    if (!std::isfinite(others_idle)) continue;
    q[s] = (ref + own) / (ref + others_idle);
    above[s] = (own - others_idle) / ref;
  }
  l1_options lo;
  lo.z_threshold = o.z_threshold;
  lo.min_sustained_slowdown = floor;
  lo.single_steps = false;  // a single slow step is no straggler
  lo.noise_floor = o.resolution;
  lo.per_rank = false;
  const auto a = analyze_series(q, lo);
  const slow_window* best = nullptr;
  for (const auto& w : a.windows)
    if ((w.pattern == window_pattern::shift || w.pattern == window_pattern::drift) && w.steps.size() >= o.min_steps &&
        (!best || w.steps.size() > best->steps.size()))
      best = &w;
  if (a.baseline_steps == 0) return st;
  if (best) {
    st.first = best->first;
    st.last = best->last;
    st.elevated_steps = best->steps.size();
    st.z = best->z;
  }
  // The claim's p-value: a two-sample Student t-test of the window's steps against every other
  // measured step (log space, pooled variance, n_in + n_out - 2 degrees of freedom; the sd at
  // least the timer's resolution), exact for iid normal noise at a fixed window. L1's z is not
  // used: its scale comes from the series' trimmed differences, which a 24-step series can put at
  // half its spread (a healthy rank's chance 19-step run at z 3.3 became p 8e-7).
  std::size_t last_measured = 0;
  for (std::size_t s = 0; s < S; ++s)
    if (std::isfinite(q[s]) && q[s] > 0) last_measured = s;
  // The window [from, to] against every other measured step: its scan-paid p-value, the shift in
  // per-step noise units, and the steps in it half the floor above the others' mean.
  struct window_test {
    double p = 1, z = 0;
    std::size_t elevated = 0;
    bool valid = false;
  };
  // ln q of the measured steps, once (every window tested and the scan below read them).
  std::vector<std::size_t> measured_steps;
  std::vector<double> log_q;
  for (std::size_t s = 0; s < S; ++s)
    if (std::isfinite(q[s]) && q[s] > 0) {
      measured_steps.push_back(s);
      log_q.push_back(std::log(q[s]));
    }
  // The scan-paid p-value of a window from its two-sample statistics, and the shift in per-step
  // noise units.
  const auto window_p = [&](const two_sample_stats& two, bool to_end) {
    const double n = two.n_in + two.n_out, df = two.df;
    // The rank's own noise, or its peers' typical noise where that is larger (a rank whose own
    // steps happen to be quiet is not held to less than its peers' noise; estimated from many
    // more steps, it takes the normal tail, where the rank's own sd from 24 steps takes Student's
    // t with 22 degrees of freedom). Noise that persists over steps (a GPU's clock and thermal
    // state; rho, the group's lag-1 autocorrelation) makes a mean of n steps vary (1 + rho) /
    // (1 - rho) times more than iid noise would (AR(1)): healthy ranks with rho 0.6 made claims
    // in 36 of 96 simulated jobs without it.
    const double own_sd = two.sd;
    const bool peers_noise = group.sd > own_sd;
    const double step_sd = std::max({own_sd, group.sd, o.resolution});
    const double sd = step_sd * std::sqrt(group.design_effect());
    const double t = two.diff / (sd * two.se_factor);
    // The window is the best of many the scan tried: its p-value is paid for them (a healthy
    // rank's best 6 of 24 iid steps was a 1.02x straggler at q 0.003 before).
    const double p_window = peers_noise ? 0.5 * std::erfc(t / std::sqrt(2.0))
                                        : stats::detail::student_t_upper_tail(t, static_cast<std::uint64_t>(df));
    return std::make_pair(std::min(1.0, p_window * window_scan_factor(n, to_end)), two.diff / step_sd);
  };
  std::vector<double> in_log, out_log;  // reused by every window tested
  const auto test_window = [&](std::size_t from, std::size_t to) {
    window_test wt;
    in_log.clear();
    out_log.clear();
    for (std::size_t k = 0; k < measured_steps.size(); ++k)
      (measured_steps[k] >= from && measured_steps[k] <= to ? in_log : out_log).push_back(log_q[k]);
    if (in_log.size() < 2 || out_log.size() < 2) return wt;
    std::tie(wt.p, wt.z) = window_p(pooled_two_sample(in_log, out_log), to >= last_measured);
    const double bar = stats::moments(out_log).mean() + std::log1p(0.5 * floor);
    for (double x : in_log) wt.elevated += x > bar ? 1 : 0;
    wt.valid = true;
    return wt;
  };
  window_test best_test;
  if (best) {
    best_test = test_window(best->first, best->last);
    if (!best_test.valid) return st;
  }
  // A shift that lasts to the end can be cut short by L1's segmentation (one step of the new
  // level that dips pools a segment into the baseline, and the steps after it fall out of the
  // window and into the "before" it is tested against), or missed by it altogether (a shift in
  // the first third of the series makes the new level L1's baseline, and the steps before it
  // a dip): when L1's window ends early or there is none, the best window to the end over every
  // first step (min_steps measured steps before it and in it) is tested too, at the scan factor
  // measured for exactly that family (3 sqrt(n)), and the better of the two is taken at twice
  // its p-value. A window of L1's that reaches the end stands as it is (its first step is where
  // the segmentation put the change).
  if (!best || best->last < last_measured) {
    // Every window to the end in O(S): the moments of the steps before and from each first step
    // (Welford, merged), the best one tested in full.
    const std::size_t n_measured = measured_steps.size();
    std::vector<stats::running_moments<double>> before(n_measured + 1), from(n_measured + 1);
    for (std::size_t k = 0; k < n_measured; ++k) {
      before[k + 1] = before[k];
      before[k + 1].add(log_q[k]);
    }
    for (std::size_t k = n_measured; k-- > 0;) {
      from[k] = from[k + 1];
      from[k].add(log_q[k]);
    }
    double end_p = 2;
    std::size_t end_first = 0;
    for (std::size_t i = std::max<std::size_t>(o.min_steps, 2); i + std::max<std::size_t>(o.min_steps, 2) <= n_measured;
         ++i) {
      const double p_i = window_p(pooled_two_sample(from[i], before[i]), true).first;
      if (p_i < end_p) {
        end_p = p_i;
        end_first = measured_steps[i];
      }
    }
    window_test end_test;
    if (end_p <= 1) end_test = test_window(end_first, last_measured);
    if (end_test.valid) {
      if (!best_test.valid || end_test.p < best_test.p) {
        st.first = end_first;
        st.last = last_measured;
        st.elevated_steps = end_test.elevated;
        st.z = end_test.z;
        best_test = end_test;
      }
      best_test.p = std::min(1.0, 2 * best_test.p);
    }
  }
  if (!best_test.valid) return st;
  st.p_value = best_test.p;
  std::vector<double> in, out_x, comm_in, comm_out;
  for (std::size_t s = 0; s < S; ++s) {
    const double x = m.phase_ns(r, p, s), c = m.phase_ns(r, communication_phase, s);
    const bool inside = s >= st.first && s <= st.last;
    if (std::isfinite(x)) (inside ? in : out_x).push_back(x);
    if (std::isfinite(c)) (inside ? comm_in : comm_out).push_back(c);
  }
  // Its own time must have risen too, not only its share against the others: when the others'
  // median falls (CPU jobs: a rank that sleeps leaves the others a shared core), every other
  // rank's share rises while its own time stays (a real DDP job, 4 processes on 2 cores: two
  // healthy ranks were 1.04x and 1.08x compute stragglers at q 0.002). A one-sided Student t
  // of its own ln time, the window against its other steps, at own_history_raw_alpha.
  if (!idle && !st.peers.empty()) {
    std::vector<double> raw_in, raw_out;
    for (double x : in)
      if (x > 0) raw_in.push_back(std::log(x));
    for (double x : out_x)
      if (x > 0) raw_out.push_back(std::log(x));
    if (raw_in.size() >= 2 && raw_out.size() >= 2) {
      const auto raw = pooled_two_sample(raw_in, raw_out);
      const double rt = raw.diff / (std::max(raw.sd, o.resolution) * raw.se_factor);
      if (stats::detail::student_t_upper_tail(rt, static_cast<std::uint64_t>(raw.df)) > o.own_history_raw_alpha)
        st.p_value = 1;
    }
  }
  st.observed_ns = in.empty() ? nan : stats::median(in);
  st.baseline_ns = out_x.empty() ? nan : stats::median(out_x);
  st.ratio = st.baseline_ns > 0 ? st.observed_ns / st.baseline_ns : nan;
  st.excess_ns = st.observed_ns - st.baseline_ns;
  std::vector<double> claim_above(above.begin() + static_cast<std::ptrdiff_t>(st.first),
                                  above.begin() + static_cast<std::ptrdiff_t>(st.last) + 1);
  st.above_others = finite_median(claim_above);
  if (!comm_in.empty() && !comm_out.empty()) {
    const double ci = stats::median(comm_in), co = stats::median(comm_out);
    st.communication_ratio = co > 0 ? ci / co : nan;
    st.guarded = ci - co > 0.5 * std::max(st.excess_ns, 0.0);  // it waits more, too
  }
  st.group_cv = nan;
  return st;
}

}  // namespace failslow::diagnose::detail

namespace failslow::diagnose {

FAILSLOW_FUNC_DEF l2_result find_stragglers(const job_model& m, const topology& topo, const l1_result* l1,
                                            const l2_options& o) {
  detail::check(o);
  if (topo.world_size() != m.world_size)
    throw invalid_argument("find_stragglers: topology of " + std::to_string(topo.world_size()) +
                           " ranks for a job of " + std::to_string(m.world_size));
  l2_result out;
  const std::size_t S = m.step_count(), P = m.phase_count();
  const auto present = m.present_ranks();
  if (present.size() < 2) {
    out.notes.push_back("L2: " + std::to_string(present.size()) +
                        " rank(s) with data; stragglers need comparable ranks");
    return out;
  }
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  const double p_floor = 0.5 * std::erfc(o.z_threshold / std::sqrt(2.0));
  const double moderate_floor = 0.5 * std::erfc(o.bridge_z / std::sqrt(2.0));

  // A guessed layout's groups may mix work (pipeline stages) unless roles split them.
  const bool mixed_groups = o.layout_assumed && o.roles.empty();
  // Build every (group, phase) comparison.
  std::vector<detail::comparison> comps;
  std::map<std::string, int> too_small;  // note per phase/scope
  // (phase, ranks, in a group): ranks judged against their own history -- without enough peers,
  // or (assumed layout) also within a group of comparable ranks.
  std::vector<std::tuple<std::size_t, std::vector<int>, bool>> lonely;
  for (std::size_t p = 0; p < P; ++p) {
    const auto& ph = m.phases[p];
    if (ph.role == phase_role::wait || !ph.compared) continue;
    auto scope = o.routing.scope(ph.subject, ph.name, ph.cls);
    if (!scope) continue;
    for (auto& g : detail::comparable_groups(m, topo, *scope, o.min_group, o.roles)) {
      auto& members = g.members;
      const dim_set sc = g.scope;
      const int r = g.rank;
      if (members.size() < o.min_group) {
        ++too_small[ph.name];
        if (!members.empty()) lonely.emplace_back(p, members, false);
        continue;
      }
      // With a guessed layout the group may mix different work: each rank is also judged against
      // its own history.
      // With peers (known layout), the work classes only (compute, memory): a host's idle per
      // step flips between regimes (a data loader's batch ready or not) that a mean shift takes
      // for a change, and annotated phases, parts of compute, would multiply the tests.
      if (mixed_groups || (o.own_history_with_peers && ph.role == phase_role::work && !ph.annotated))
        lonely.emplace_back(p, members, true);
      detail::comparison c;
      c.members = members;
      c.phase = p;
      c.group = detail::group_label(topo, r, sc);
      c.scope = sc.to_string();
      comps.push_back(std::move(c));
    }
  }
  if (!too_small.empty()) {
    // One note for all phases: which ones, and how many groups each.
    std::string list;
    int shown = 0, groups = 0;
    for (const auto& [name, count] : too_small) {
      groups = std::max(groups, count);
      if (shown++ < 4) list += (list.empty() ? "" : ", ") + name;
    }
    if (too_small.size() > 4) list += " and " + std::to_string(too_small.size() - 4) + " more";
    out.notes.push_back("L2: " + std::to_string(groups) + " group(s) of ranks have fewer than " +
                        std::to_string(o.min_group) + " comparable ranks with data (phases " + list + "): " +
                        (o.own_history && present.size() >= 2
                             ? "each is compared with its own history, relative to the other ranks"
                             : "not compared"));
  }

  // Statistics of each comparison.
  std::vector<double> col;
  for (auto& c : comps) {
    const std::size_t G = c.members.size();
    const bool idle = m.phases[c.phase].role == phase_role::idle;
    c.median.assign(S, nan);
    c.cv.assign(S, nan);
    std::vector<double> denom(S, nan);
    for (std::size_t s = 0; s < S; ++s) {
      col.clear();
      for (int r : c.members) col.push_back(m.phase_ns(static_cast<std::size_t>(r), c.phase, s));
      auto vals = col;
      const double med = detail::finite_median(vals);
      if (vals.size() < o.min_group) continue;
      c.median[s] = med;
      const auto mo = stats::moments(vals);
      if (mo.mean() > 0) c.cv[s] = mo.stddev() / mo.mean();
      if (idle) {
        col.clear();
        for (int r : c.members) col.push_back(m.iteration_ns(static_cast<std::size_t>(r), s));
        denom[s] = detail::finite_median(col);
      } else {
        denom[s] = med;
      }
    }
    std::vector<double> meds = c.median, dens = denom;
    const double level = detail::finite_median(meds), dlevel = detail::finite_median(dens);
    if (!(dlevel >= o.min_phase_ns) || !(idle || level >= o.min_phase_ns)) {
      c.members.clear();  // nothing there to compare
      continue;
    }
    std::vector<double> abs_e;
    abs_e.reserve(G * S);
    for (int r : c.members)
      for (std::size_t s = 0; s < S; ++s) {
        const double x = m.phase_ns(static_cast<std::size_t>(r), c.phase, s);
        if (std::isfinite(x) && std::isfinite(c.median[s])) abs_e.push_back(std::fabs(x - c.median[s]));
      }
    c.scale = std::max(abs_e.empty() ? 0.0 : stats::mad_to_sigma * stats::median(abs_e), o.resolution * dlevel);
    if (!(c.scale > 0)) c.scale = 1;
    c.z.assign(G, std::vector<double>(S, nan));
    c.rel.assign(G, std::vector<double>(S, nan));
    c.elevated.assign(G, std::vector<char>(S, 0));
    for (std::size_t i = 0; i < G; ++i)
      for (std::size_t s = 0; s < S; ++s) {
        const double x = m.phase_ns(static_cast<std::size_t>(c.members[i]), c.phase, s);
        if (!std::isfinite(x) || !std::isfinite(c.median[s]) || !(denom[s] > 0)) continue;
        c.z[i][s] = (x - c.median[s]) / c.scale;
        c.rel[i][s] = (x - c.median[s]) / denom[s];
        c.elevated[i][s] = c.z[i][s] > o.z_threshold && c.rel[i][s] > o.min_effect;
      }
  }
  comps.erase(std::remove_if(comps.begin(), comps.end(), [](const detail::comparison& c) { return c.members.empty(); }),
              comps.end());

  // phase_cv: median CV per phase over groups and steps.
  for (std::size_t p = 0; p < P; ++p) {
    std::vector<double> cvs;
    for (const auto& c : comps)
      if (c.phase == p)
        for (double v : c.cv)
          if (std::isfinite(v)) cvs.push_back(v);
    if (!cvs.empty()) out.phase_cv.push_back({p, stats::median(cvs)});
  }
  std::sort(out.phase_cv.begin(), out.phase_cv.end(),
            [](const phase_disagreement& a, const phase_disagreement& b) { return a.cv > b.cv; });

  // Tests and candidate runs.
  struct candidate {
    std::size_t comp, member;
    std::size_t first, last, elevated;
    double p;
    bool moderate;  ///< the claim is the run of moderately elevated steps (moderate_count)
  };
  std::vector<candidate> cands;
  std::vector<double> pvals;
  // Elevated, moderately elevated (still_slow below) and judged cells per member of each
  // comparison, and per (phase, group size) over the job: groups of one size in one phase share
  // the chance of an elevated step.
  struct cells {
    std::uint64_t elevated = 0, moderate = 0, judged = 0;
  };
  std::vector<std::vector<std::uint64_t>> k_of(comps.size()), km_of(comps.size()), n_of(comps.size());
  std::map<std::pair<std::size_t, std::size_t>, cells> shape_cells;
  const auto moderately = [&](const detail::comparison& c, std::size_t i, std::size_t t) {
    return c.z[i][t] > o.bridge_z && c.rel[i][t] > o.min_effect;  // false for NaN
  };
  for (std::size_t ci = 0; ci < comps.size(); ++ci) {
    const auto& c = comps[ci];
    const std::size_t G = c.members.size();
    auto& k = k_of[ci];
    auto& km = km_of[ci];
    auto& n = n_of[ci];
    k.assign(G, 0);
    km.assign(G, 0);
    n.assign(G, 0);
    auto& shape = shape_cells[{c.phase, G}];
    for (std::size_t i = 0; i < G; ++i) {
      for (std::size_t s = 0; s < S; ++s)
        if (std::isfinite(c.z[i][s])) {
          ++n[i];
          k[i] += c.elevated[i][s] ? 1 : 0;
          km[i] += moderately(c, i, s) ? 1 : 0;
        }
      shape.elevated += k[i];
      shape.moderate += km[i];
      shape.judged += n[i];
    }
  }
  std::vector<double> design_effect_of(comps.size(), nan);  // computed where a moderate claim needs it
  for (std::size_t ci = 0; ci < comps.size(); ++ci) {
    const auto& c = comps[ci];
    const std::size_t G = c.members.size();
    const auto& k = k_of[ci];
    const auto& km = km_of[ci];
    const auto& n = n_of[ci];
    std::uint64_t K = 0, KM = 0, N = 0;
    for (std::size_t i = 0; i < G; ++i) {
      K += k[i];
      KM += km[i];
      N += n[i];
    }
    const cells shape = shape_cells[{c.phase, G}];
    const std::uint64_t shape_k = shape.elevated, shape_km = shape.moderate, shape_n = shape.judged;
    for (std::size_t i = 0; i < G; ++i) {
      ++out.tests;
      candidate cand{ci, i, 0, 0, 0, 1.0, false};
      // The run with the most marked steps, gaps of at most max_gap normal steps; a step that
      // passes `bridge` is no gap: on a noisy machine a straggler's steps dip under the bar now
      // and then without it having recovered, and two such dips in a row would cut its claim in
      // two and misplace its onset. Returns (first, last, marked, marked + bridged).
      const auto best_run = [&](auto marked, auto bridge) {
        std::array<std::size_t, 4> best{0, 0, 0, 0};
        std::size_t s = 0;
        while (s < S) {
          if (!marked(s)) {
            ++s;
            continue;
          }
          std::size_t e = s, count = 1, slow = 1, gap = 0, slow_in_gap = 0;
          for (std::size_t t = s + 1; t < S; ++t) {
            if (marked(t)) {
              e = t;
              ++count;
              slow += 1 + slow_in_gap;
              gap = 0;
              slow_in_gap = 0;
            } else if (bridge(t)) {
              ++slow_in_gap;
            } else if (++gap > o.max_gap) {
              break;
            }
          }
          if (count > best[2]) best = {s, e, count, slow};
          s = e + 1;
        }
        return best;
      };
      const auto elevated = [&](std::size_t t) { return c.elevated[i][t] != 0; };
      const auto still_slow = [&](std::size_t t) { return moderately(c, i, t); };
      const auto persistent = [&](const std::array<std::size_t, 4>& run, std::size_t need) {
        return run[2] >= need &&
               static_cast<double>(run[3]) >= o.min_fraction * static_cast<double>(run[1] - run[0] + 1);
      };
      if (n[i] > 0) {
        // The peers' rate as the Jeffreys estimate (K + 1/2) / (N + 1): with 3 peers x 30 steps
        // and none elevated the rate is not known to be below about 1 %, and a heavy-tailed
        // step time (bimodal kernels) elevates about that often; the raw 0 (then the normal
        // tail's 2e-4) made 3 chance steps of a healthy rank "significant".
        // The same over every other rank of the job's groups of this size in this phase: with 3
        // peers x 16 steps one group's 0 elevated cells put the rate at 1 %, and 4 chance steps
        // of 16 on bimodal kernel noise were a straggler at p 2e-5.
        const auto rate_of = [&](std::uint64_t k_own, std::uint64_t k_group, std::uint64_t k_shape, double floor) {
          const double rate =
              detail::jeffreys_rate(static_cast<double>(k_group - k_own), static_cast<double>(N - n[i]));
          const double pooled =
              detail::jeffreys_rate(static_cast<double>(k_shape - k_own), static_cast<double>(shape_n - n[i]));
          return std::max({rate, pooled, floor});
        };
        const auto strong = best_run(elevated, still_slow);
        const auto claim = [&](const std::array<std::size_t, 4>& run, double p, bool moderate) {
          return candidate{ci, i, run[0], run[1], run[2], p, moderate};
        };
        if (persistent(strong, o.min_steps))
          cand = claim(strong, detail::binomial_upper_tail(k[i], n[i], rate_of(k[i], K, shape_k, p_floor)), false);
        if (o.moderate_count) {
          // The same test one bar lower: a rank moderately slower in most steps, where the
          // machine's own noise is so wide (processes sharing cores) that few of its steps
          // clear z_threshold. Twice min_steps such steps; two looks, so each p counts twice.
          // Moderate steps come in runs where the noise persists (a GPU's clock and thermal
          // state): the counts are deflated by the design effect of AR(1) noise, (1 - rho) /
          // (1 + rho), rho the group's lag-1 autocorrelation (as in the own-history test);
          // without it healthy ranks under rho 0.6 made 12 claims in 192 simulated jobs.
          const auto moderate = best_run(still_slow, [&](std::size_t t) { return c.z[i][t] > 0; });
          // ... and the typical step of the run at least twice min_effect over its peers, not only
          // its moderate ones: the count is for a large excess hidden in wide noise. GPUs 2-3 %
          // slower than their peers throughout cross 3 % in runs by chance (6 claims in 192
          // healthy simulated jobs without this, 1 with the typical step over min_effect, none
          // at twice it); a few-percent change is the own-history test's.
          const auto typical = [&](std::size_t a, std::size_t b) {
            col.clear();
            for (std::size_t t = a; t <= b; ++t)
              if (std::isfinite(c.rel[i][t])) col.push_back(c.rel[i][t]);
            return col.empty() ? nan : stats::median(col);
          };
          if (persistent(moderate, 2 * o.min_steps) && typical(moderate[0], moderate[1]) > 2 * o.min_effect) {
            if (std::isnan(design_effect_of[ci]))
              design_effect_of[ci] = detail::group_ratio_noise(m, c.phase, c.members).design_effect();
            const double keep = 1 / design_effect_of[ci];
            const auto deflate = [keep](std::uint64_t x, bool up) {
              const double v = static_cast<double>(x) * keep;
              return static_cast<std::uint64_t>(up ? std::ceil(v) : std::floor(v));
            };
            const double p2 =
                detail::binomial_upper_tail(deflate(km[i], false), std::max<std::uint64_t>(1, deflate(n[i], true)),
                                            rate_of(km[i], KM, shape_km, moderate_floor));
            // The better test places the claim: a short run of steps over z_threshold late in a
            // long moderate one would put the onset at the late run.
            if (p2 < cand.p) cand = claim(moderate, p2, true);
          }
          cand.p = std::min(1.0, 2 * cand.p);
        }
      }
      pvals.push_back(cand.p);
      cands.push_back(cand);
    }
  }
  // Ranks without enough peers: their own history, relative to the other ranks (which removes
  // what changed for the whole job).
  std::vector<straggler> own_claims;
  std::vector<bool> own_in_group;
  std::map<std::size_t, detail::ratio_noise> job_noise;
  if (o.own_history && present.size() >= 2)
    for (const auto& [p, members, in_group] : lonely) {
      const bool with_peers = in_group && !mixed_groups;
      // Without peers, how much the noise persists comes from every rank's series relative to
      // the others (their sd is not the rank's: other work), once per phase.
      detail::ratio_noise noise;
      if (with_peers) {
        noise = detail::group_ratio_noise(m, p, members);
      } else {
        auto it = job_noise.find(p);
        if (it == job_noise.end()) it = job_noise.emplace(p, detail::group_ratio_noise(m, p, present)).first;
        noise.lag1 = it->second.lag1;
      }
      for (int r : members) {
        ++out.tests;
        // A rank with peers is referred to them (the same work); one without, to the whole job.
        // (A guessed layout's group may mix work: there, the whole job, as before.)
        auto st = with_peers ? detail::own_history_claim(m, r, p, members, o, o.own_history_min_effect, noise)
                             : detail::own_history_claim(m, r, p, present, o, o.min_effect, noise);
        pvals.push_back(st.p_value);
        own_claims.push_back(std::move(st));
        own_in_group.push_back(in_group);
      }
    }
  if (pvals.empty()) return out;
  const auto fdr = detect::false_discovery_control(pvals, o.fdr_q);

  // Communication of member i over steps [a, b] against the other members': median z (on the
  // group's pooled robust scale of communication) and median ratio.
  // The communication statistics of a group (per-step median and pooled robust scale), once per
  // group: the phases of one group share them.
  struct comm_stats {
    std::vector<double> median;
    double scale = 1;
  };
  std::map<std::vector<int>, comm_stats> comm_of_group;
  auto comm_check = [&](const detail::comparison& c, std::size_t i, std::size_t a, std::size_t b) {
    auto it = comm_of_group.find(c.members);
    if (it == comm_of_group.end()) {
      comm_stats cs;
      cs.median.assign(S, nan);
      std::vector<double> abs_e;
      abs_e.reserve(c.members.size() * S);
      for (std::size_t s = 0; s < S; ++s) {
        col.clear();
        for (int r : c.members) col.push_back(m.phase_ns(static_cast<std::size_t>(r), communication_phase, s));
        cs.median[s] = detail::finite_median(col);
        for (int r : c.members) {
          const double x = m.phase_ns(static_cast<std::size_t>(r), communication_phase, s);
          if (std::isfinite(x) && std::isfinite(cs.median[s])) abs_e.push_back(std::fabs(x - cs.median[s]));
        }
      }
      std::vector<double> meds = cs.median;
      const double level = detail::finite_median(meds);
      cs.scale = std::max({abs_e.empty() ? 0.0 : stats::mad_to_sigma * stats::median(abs_e),
                           o.resolution * (std::isfinite(level) ? level : 0.0), 1.0});
      it = comm_of_group.emplace(c.members, std::move(cs)).first;
    }
    const auto& cs = it->second;
    std::vector<double> zs, ratios;
    for (std::size_t s = a; s <= b; ++s) {
      const double own = m.phase_ns(static_cast<std::size_t>(c.members[i]), communication_phase, s);
      if (!std::isfinite(own) || !std::isfinite(cs.median[s])) continue;
      if (cs.median[s] > 0) ratios.push_back(own / cs.median[s]);
      zs.push_back((own - cs.median[s]) / cs.scale);
    }
    return std::make_pair(zs.empty() ? nan : stats::median(zs), ratios.empty() ? nan : stats::median(ratios));
  };

  // Significant claims, grouped by rank; ranks withheld, for one note each.
  std::vector<int> different_from_start, waiting_too, like_others, too_small_share, warm_up, steady, sporadic;
  // A work phase's excess that costs less than min_step_share of a step holds nothing back
  // (an idle excess is already judged as a share of the iteration).
  auto negligible = [&](const straggler& st) {
    if (m.phases[st.phase].role == phase_role::idle) return false;
    const double iter = detail::median_iteration(m, present, st.first, st.last, st.rank);  // the others'
    return std::isfinite(iter) && st.excess_ns < o.min_step_share * iter;
  };
  // Whether a rank's excess over its peers (rel, one value per step) rose at some step up to
  // `first` and stayed up to the end of the series: the rank-sum test of the steps before
  // against the steps from there on, at the most telling start (Bonferroni over the starts),
  // at fdr_q. A shift just above the bar crosses it only now and then after its onset, so the
  // crossings alone cannot tell it from a sporadic excess; its level can.
  auto level_rose = [&](const std::vector<double>& rel, std::size_t first) {
    std::vector<double> v;
    std::size_t first_at = 0;  // index in v of the first valid step at or after `first`
    for (std::size_t s = 0; s < rel.size(); ++s) {
      if (!std::isfinite(rel[s])) continue;
      if (s < first) first_at = v.size() + 1;
      v.push_back(rel[s]);
    }
    if (first_at < o.min_steps || first_at >= v.size()) return false;
    double p = 1;
    for (std::size_t start = o.min_steps; start <= first_at; ++start)
      p = std::min(p, detail::rank_sum_upper_p(v.data(), start, v.data() + start, v.size() - start));
    return static_cast<double>(first_at - o.min_steps + 1) * p <= o.fdr_q;
  };
  std::map<int, std::vector<std::size_t>> by_rank;
  for (std::size_t j : fdr.rejected)
    by_rank[j < cands.size() ? comps[cands[j].comp].members[cands[j].member] : own_claims[j - cands.size()].rank]
        .push_back(j);
  const std::size_t R = m.rank_count();
  for (auto& [rank, js] : by_rank) {
    std::vector<straggler> claims;
    for (std::size_t j : js) {
      if (j >= cands.size()) {
        auto& st = own_claims[j - cands.size()];
        st.q_value = fdr.adjusted[j];
        if (st.guarded) {
          waiting_too.push_back(rank);
          continue;
        }
        // The shift must clear the same robust bar as a cross-rank step (the p-value assumes
        // independent steps; scheduling noise is not), come after min_steps steps of the rank (a
        // rank slower in its first steps than later got faster: there is no "before" to be slower
        // than), and cost a share of the step.
        // A rank with peers is held to its shift's standard error instead (the BH test on its
        // p-value), over at least twice min_steps steps, and must end above the others (below):
        // a few-percent change is below one step's noise but not below that of a dozen steps'.
        const bool in_group = own_in_group[j - cands.size()], with_peers = in_group && !mixed_groups;
        if (with_peers) {
          if (st.elevated_steps < 2 * o.min_steps) continue;
        } else if (!(st.z >= o.z_threshold)) {
          continue;
        }
        std::size_t before = 0;
        for (std::size_t s = 0; s < st.first; ++s)
          before += std::isfinite(m.phase_ns(static_cast<std::size_t>(rank), st.phase, s)) ? 1 : 0;
        if (before < o.min_steps) continue;
        if (negligible(st)) {
          too_small_share.push_back(rank);
          continue;
        }
        // Within a group of ranks compared as equals (guessed layout), a rank that was faster
        // than the others and became like them has changed but holds nothing back.
        if (in_group && !(st.above_others >= (with_peers ? 0.5 * o.own_history_min_effect : o.min_effect))) {
          like_others.push_back(rank);
          continue;
        }
        st.had_peers = in_group;
        st.referred_to_peers = with_peers;
        claims.push_back(st);
        continue;
      }
      const auto& cand = cands[j];
      const auto& c = comps[cand.comp];
      straggler st;
      st.rank = rank;
      st.phase = c.phase;
      st.group = c.group;
      st.compared_within = c.scope;
      for (int x : c.members)
        if (x != rank) st.peers.push_back(x);
      if (o.layout_assumed) {
        std::size_t before = 0;
        for (std::size_t s = 0; s < cand.first; ++s) before += std::isfinite(c.z[cand.member][s]) ? 1 : 0;
        if (before < o.min_steps) {
          different_from_start.push_back(rank);
          continue;
        }
      }
      {
        // Warm-up: a claim from the rank's first min_steps steps that is over, the rank back
        // with its peers for min_steps steps or more before the run ends, is its start-up
        // (caches, allocator, a data loader's first batches), not a rank that became slow.
        std::size_t before = 0, after = 0;
        for (std::size_t s = 0; s < cand.first; ++s) before += std::isfinite(c.z[cand.member][s]) ? 1 : 0;
        for (std::size_t s = cand.last + 1; s < c.z[cand.member].size(); ++s)
          after += std::isfinite(c.z[cand.member][s]) ? 1 : 0;
        if (before < o.min_steps && after >= o.min_steps) {
          warm_up.push_back(rank);
          continue;
        }
      }
      {
        // A steady offset: a rank already (at least half) as far above its peers in its first
        // steps as over its claim did not change; its run is where a constant excess near
        // min_effect happened to cross the bar (a GPU 3 % slower than its 3 peers in all 24
        // steps, 7 of them over the bar). It is a straggler when most of all its steps are
        // elevated. The first steps, not all steps outside the claim: a fault's steps before
        // its run crossed the bar are outside it too.
        const std::size_t head_steps = std::max<std::size_t>(o.min_steps, S / 4);
        std::vector<double> inside, head;
        for (std::size_t s = 0; s < S; ++s) {
          const double e = c.rel[cand.member][s];
          if (!std::isfinite(e)) continue;
          if (s >= cand.first && s <= cand.last)
            inside.push_back(e);
          else if (s < cand.first && head.size() < head_steps)
            head.push_back(e);
        }
        const auto& k = k_of[cand.comp][cand.member];
        const auto& n = n_of[cand.comp][cand.member];
        if (!inside.empty() && head.size() >= o.min_steps) {
          const double in = stats::median(inside), at_start = stats::median(head);
          if (in > 0 && at_start >= 0.5 * in &&
              (cand.moderate || static_cast<double>(k) < o.min_fraction * static_cast<double>(n))) {
            steady.push_back(rank);
            continue;
          }
        } else if (cand.moderate) {
          // Moderate steps from the first ones on are a GPU a few percent slower than its peers
          // throughout (their spread), not one that became slow: a moderate claim needs a before.
          steady.push_back(rank);
          continue;
        }
        // A sporadic excess: a rank whose steps cross the bar now and then before its claim too
        // (a GPU a little slower than its peers, whose upper tail crosses more often) puts a
        // few of them next to each other by chance. The claim is a change if so many of the
        // rank's elevated steps up to its end falling inside its run is unlikely were their
        // places random (hypergeometric), over the places such a run can start, or if the
        // rank's level rose and stayed up (level_rose); else, as a steady offset, it stands
        // only when most of all the rank's steps are elevated. Steps
        // after the claim do not count: a fault that goes on crossing now and then is no null.
        // Needs elevated steps before: without them the run is all there is. Only short runs
        // (fewer than 2 min_steps elevated steps): chance puts a few crossings together, not
        // many, and a run over most of a short series leaves the test no places to compare.
        // The run the claim is part of may start before it: a shift near the bar crosses it in
        // a few steps after its onset, then in a run. So the test takes the start, from the
        // first step to the claim's, that makes the concentration least likely (the steps
        // before it are the rank's own rate), over the same places.
        if (!cand.moderate && cand.elevated < 2 * o.min_steps &&
            static_cast<double>(k) < o.min_fraction * static_cast<double>(n)) {
          std::vector<std::uint8_t> ups;  // the rank's valid steps up to the claim's end: elevated?
          std::size_t claim_at = 0;       // index in ups of the claim's first valid step
          for (std::size_t s = 0; s <= cand.last && s < S; ++s) {
            const double z = c.z[cand.member][s], e = c.rel[cand.member][s];
            if (!std::isfinite(z) || !std::isfinite(e)) continue;
            if (s < cand.first) claim_at = ups.size() + 1;
            ups.push_back(c.elevated[cand.member][s] ? 1 : 0);
          }
          std::uint64_t k_total = 0, k_before_claim = 0;
          for (std::size_t i = 0; i < ups.size(); ++i) {
            k_total += ups[i];
            k_before_claim += i < claim_at ? ups[i] : 0;
          }
          if (k_before_claim > 0 && claim_at < ups.size()) {
            double p_run = 1;
            std::uint64_t k_out = 0;
            for (std::size_t start = 0; start <= claim_at; ++start) {  // the run is ups[start..]
              if (start > 0) k_out += ups[start - 1];
              const std::uint64_t span = ups.size() - start;
              p_run = std::min(p_run, detail::hypergeometric_upper_tail(k_total - k_out, k_total, span, ups.size()));
            }
            const double places = static_cast<double>(claim_at + 1);
            if (places * p_run > o.fdr_q && !level_rose(c.rel[cand.member], cand.first)) {
              sporadic.push_back(rank);
              continue;
            }
          }
        }
      }
      st.first = cand.first;
      st.last = cand.last;
      st.elevated_steps = cand.elevated;
      if (cand.moderate) st.elevated_z = o.bridge_z;
      st.p_value = pvals[j];
      st.q_value = fdr.adjusted[j];
      std::vector<double> own, base, zs;
      for (std::size_t s = cand.first; s <= cand.last; ++s) {
        const double x = m.phase_ns(static_cast<std::size_t>(rank), c.phase, s);
        if (!std::isfinite(x) || !std::isfinite(c.median[s])) continue;
        own.push_back(x);
        base.push_back(c.median[s]);
        zs.push_back(c.z[cand.member][s]);
      }
      if (own.empty()) continue;
      st.observed_ns = stats::median(own);
      st.baseline_ns = stats::median(base);
      st.ratio = st.baseline_ns > 0 ? st.observed_ns / st.baseline_ns : nan;
      st.excess_ns = st.observed_ns - st.baseline_ns;
      st.z = stats::median(zs);
      if (negligible(st)) {
        too_small_share.push_back(rank);
        continue;
      }
      const auto [comm_z, comm_ratio] = comm_check(c, cand.member, cand.first, cand.last);
      st.communication_ratio = comm_ratio;
      if (std::isfinite(comm_z) && comm_z > o.z_threshold) {
        waiting_too.push_back(rank);
        continue;
      }
      std::vector<double> during, before;
      for (std::size_t s = 0; s < S; ++s)
        if (std::isfinite(c.cv[s])) (s >= cand.first && s <= cand.last ? during : before).push_back(c.cv[s]);
      st.group_cv = during.empty() ? nan : stats::median(during);
      st.group_cv_before = before.empty() ? nan : stats::median(before);
      claims.push_back(std::move(st));
    }
    if (claims.empty()) continue;
    // The reported phase: the annotated one with the largest excess, else the class one.
    auto better = [&](const straggler& a, const straggler& b) {
      const bool aa = m.phases[a.phase].annotated, ba = m.phases[b.phase].annotated;
      if (aa != ba) return aa;
      return a.excess_ns > b.excess_ns;
    };
    std::stable_sort(claims.begin(), claims.end(), [](const straggler& a, const straggler& b) {
      if (a.phase != b.phase) return a.phase < b.phase;
      return a.compared_within != "own history" && b.compared_within == "own history";
    });
    // One claim per phase (a rank can be significant against its peers and its own history).
    claims.erase(std::unique(claims.begin(), claims.end(),
                             [](const straggler& a, const straggler& b) { return a.phase == b.phase; }),
                 claims.end());
    std::sort(claims.begin(), claims.end(), better);
    straggler st = std::move(claims.front());
    for (std::size_t i = 1; i < claims.size(); ++i) st.also_slow.emplace_back(claims[i].phase, claims[i].ratio);
    // Who waits for it: communication up by half the job's loss per step over the claim (when
    // L1 measured one), else by a quarter of the straggler's excess.
    double job_excess = 0;
    if (l1 && std::isfinite(l1->job.baseline_ns)) {
      std::vector<double> in_run;
      for (std::size_t s = st.first; s <= st.last && s < l1->job_series.size(); ++s)
        in_run.push_back(l1->job_series[s]);
      job_excess = detail::finite_median(in_run) - l1->job.baseline_ns;
    }
    const double need = job_excess > 0 ? 0.5 * job_excess : 0.25 * std::max(st.excess_ns, 0.0);
    for (std::size_t q = 0; q < R && need > 0; ++q) {
      if (static_cast<int>(q) == rank || !m.has_rank[q]) continue;
      std::vector<double> in, outside, gap;
      for (std::size_t s = 0; s < S; ++s) {
        const double x = m.phase_ns(q, communication_phase, s);
        if (!std::isfinite(x)) continue;
        if (s >= st.first && s <= st.last) {
          in.push_back(x);
          const double own = m.phase_ns(static_cast<std::size_t>(rank), communication_phase, s);
          if (std::isfinite(own)) gap.push_back(x - own);
        } else {
          outside.push_back(x);
        }
      }
      if (in.empty()) continue;
      const double up =
          outside.size() >= 2 ? stats::median(in) - stats::median(outside) : (gap.empty() ? 0.0 : stats::median(gap));
      if (up > need) ++st.waiting_ranks;
    }
    // Job impact over the claimed steps.
    if (l1 && std::isfinite(l1->job.baseline_ns)) {
      double excess = 0, total = 0;
      for (std::size_t s = st.first; s <= st.last && s < l1->job_series.size(); ++s)
        if (std::isfinite(l1->job_series[s])) {
          excess += std::max(0.0, l1->job_series[s] - l1->job.baseline_ns);
          total += l1->job_series[s];
        }
      st.job_slowdown = total > 0 ? excess / total : 0;
    }
    if (st.job_slowdown <= 0) {
      // No slow window to measure against (the rank was slow from the first step): the share of
      // the iteration its excess would cost if the job waited for all of it.
      std::vector<double> it;
      for (std::size_t s = st.first; s <= st.last; ++s) it.push_back(m.iteration_ns(static_cast<std::size_t>(rank), s));
      const double iter = detail::finite_median(it);
      st.job_slowdown = iter > 0 ? std::clamp(st.excess_ns / iter, 0.0, 1.0) : 0;
    }
    out.stragglers.push_back(std::move(st));
  }
  auto rank_list = [](std::vector<int> v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return std::make_pair(v.size(), detail::rank_list(v, 12));
  };
  if (!waiting_too.empty()) {
    const auto [n, t] = rank_list(waiting_too);
    out.notes.push_back("L2: " + std::to_string(n) + " rank(s) (" + t +
                        ") are slow in a phase but also wait longer in collectives than their peers or than "
                        "before: not called stragglers");
  }
  // A rank reported as a straggler in one phase is not also listed as withheld in another.
  for (auto* list : {&waiting_too, &like_others, &too_small_share, &different_from_start, &warm_up, &steady, &sporadic})
    list->erase(std::remove_if(list->begin(), list->end(),
                               [&](int r) {
                                 return std::any_of(out.stragglers.begin(), out.stragglers.end(),
                                                    [r](const straggler& st) { return st.rank == r; });
                               }),
                list->end());
  if (!too_small_share.empty()) {
    const auto [n, t] = rank_list(too_small_share);
    out.notes.push_back("L2: " + std::to_string(n) + " rank(s) (" + t + ") are slow in a phase that costs less than " +
                        std::to_string(o.min_step_share * 100).substr(0, 4) + " % of a step: not called stragglers");
  }
  if (!like_others.empty()) {
    const auto [n, t] = rank_list(like_others);
    out.notes.push_back("L2: " + std::to_string(n) + " rank(s) (" + t +
                        ") are slower than in their own earlier steps but no slower than the other ranks: not "
                        "called stragglers");
  }
  if (!warm_up.empty()) {
    const auto [n, t] = rank_list(warm_up);
    out.notes.push_back("L2: " + std::to_string(n) + " rank(s) (" + t +
                        ") are slower than their peers only in their first steps (warm-up): not called stragglers");
  }
  if (!steady.empty()) {
    const auto [n, t] = rank_list(steady);
    out.notes.push_back("L2: " + std::to_string(n) + " rank(s) (" + t +
                        ") run about as much slower than their peers in their first steps as in their slowest, and "
                        "cross the bar in fewer than " +
                        std::to_string(static_cast<int>(std::lround(o.min_fraction * 100))) +
                        " % of their steps: a steady offset at the floor, not called stragglers");
  }
  if (!sporadic.empty()) {
    const auto [n, t] = rank_list(sporadic);
    out.notes.push_back("L2: " + std::to_string(n) + " rank(s) (" + t +
                        ") cross the bar now and then before their slowest run too, and that many of their elevated "
                        "steps in one run is not unlikely by chance (a sporadic excess, not a change); elevated in "
                        "fewer than " +
                        std::to_string(static_cast<int>(std::lround(o.min_fraction * 100))) +
                        " % of their steps: not called stragglers");
  }
  if (!different_from_start.empty()) {
    const auto [n, t] = rank_list(different_from_start);
    out.notes.push_back("L2: " + std::to_string(n) + " rank(s) (" + t +
                        ") differ from the other ranks from their first steps on; the layout is assumed, so they "
                        "may run other work (a pipeline stage): give the layout to compare them");
  }
  std::sort(out.stragglers.begin(), out.stragglers.end(), [](const straggler& a, const straggler& b) {
    return a.job_slowdown != b.job_slowdown ? a.job_slowdown > b.job_slowdown : a.z > b.z;
  });
  return out;
}

}  // namespace failslow::diagnose
