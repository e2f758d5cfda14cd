// failslow/diagnose/impl/l3_degraded.ipp -- the definitions of diagnose/l3_degraded.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "failslow/compress/window_summary.hpp"
#include "failslow/core/error.hpp"
#include "failslow/core/routing.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/detect/ewma.hpp"
#include "failslow/detect/fdr.hpp"
#include "failslow/detect/mahalanobis_rows.hpp"
#include "failslow/diagnose/detail/binomial_tail.hpp"
#include "failslow/diagnose/detail/median_vectors.hpp"
#include "failslow/diagnose/detail/rank_list.hpp"
#include "failslow/diagnose/job_model.hpp"
#include "failslow/diagnose/l1_windows.hpp"
#include "failslow/diagnose/l2_stragglers.hpp"
#include "failslow/diagnose/l3_degraded.hpp"
#include "failslow/io/detail/text_format.hpp"
#include "failslow/stats/descriptive.hpp"
#include "failslow/stats/detail/student_t.hpp"
#include "failslow/stats/quantile_grid.hpp"
#include "failslow/stats/wasserstein.hpp"

namespace failslow::diagnose {

FAILSLOW_FUNC_DEF l2_options default_link_options() {
  l2_options o;
  o.min_effect = 0.08;
  o.own_history = false;
  o.own_history_with_peers = false;
  o.min_step_share = 0;      // a transfer time is not a share of the step
  o.moderate_count = false;  // see default_kernel_options
  return o;
}

FAILSLOW_FUNC_DEF l2_options default_stage_options() {
  l2_options o;
  o.min_step_share = 0;
  o.own_history_with_peers = false;  // a stage has no peers: its own history is the test
  o.moderate_count = false;          // see default_kernel_options
  return o;
}

namespace detail {

FAILSLOW_FUNC_DEF bool weak_own_history(const straggler& st, double floor) {
  return st.compared_within == "own history" && !(st.ratio >= 1 + floor);
}

FAILSLOW_FUNC_DEF bool weak_own_history(const straggler& st, const l2_options& o) {
  return weak_own_history(st, o.min_effect);
}

}  // namespace detail

FAILSLOW_FUNC_DEF l2_options default_kernel_options() {
  l2_options o;
  o.min_effect = 0.01;
  o.min_step_share = 0;  // W1 per launch is not a share of the step
  // W1 of a kernel key against its group is itself the rank's change; its own history is
  // L3's (own-window W1), not L2's ratio series of one key.
  o.own_history_with_peers = false;
  // L2's moderate count is for phases under a host's scheduling noise. Kernel statistics over
  // hundreds of launches are precise, and L3 runs in L1's windows, where a few steps before a
  // window are no test of a GPU's steady 1-3 % offset: with it, healthy ranks' GEMMs were 1.03x
  // "degraded" in faulty sensitivity jobs at noise x2.
  o.moderate_count = false;
  return o;
}

namespace detail {

constexpr double l3_nan = std::numeric_limits<double>::quiet_NaN();

FAILSLOW_FUNC_DEF job_model derived_model(const job_model& m, std::size_t members,
                                          const std::vector<phase_info>& extra) {
  job_model d;
  d.world_size = static_cast<int>(members);
  d.steps = m.steps;
  d.phases.assign(m.phases.begin(), m.phases.begin() + static_cast<std::ptrdiff_t>(class_phase_count));
  for (auto& ph : d.phases) ph.compared = false;
  d.phases.insert(d.phases.end(), extra.begin(), extra.end());
  d.iteration_ns = dense_array<double, 2>({members, m.step_count()});
  d.iteration_ns.fill(l3_nan);
  d.phase_ns = dense_array<double, 3>({members, d.phases.size(), m.step_count()});
  d.phase_ns.fill(l3_nan);
  d.has_rank.assign(members, false);
  d.source = m.source;
  return d;
}

// The typical launch: the p50 of the cluster that holds the middle launch (exact for a key with
// one cluster). Robust to the long waits a few launches of a collective carry.
template <class = void>
inline double median_launch(const compress::kernel_summary& k) {
  std::uint64_t total = 0, seen = 0;
  for (const auto& c : k.clusters) total += c.count;
  for (const auto& c : k.clusters) {
    seen += c.count;
    if (2 * seen >= total) return c.p50;
  }
  return l3_nan;
}

template <class = void>
inline double per_launch(const compress::kernel_summary& k) {
  return k.count ? k.total_ns / static_cast<double>(k.count) : l3_nan;
}

template <class = void>
inline double mean_of(const double* q, std::size_t k) {
  double s = 0;
  for (std::size_t i = 0; i < k; ++i) s += q[i];
  return s / static_cast<double>(k);
}

// Per step the rank's mean per launch against the peers' median (medians over the steps); with
// no peers, against the rank's own steps outside [first, last].
template <class = void>
inline kernel_share kernel_share_of(const job_model& m, const window_index& win, int rank,
                                    const std::vector<int>& peers, std::size_t key, std::size_t first,
                                    std::size_t last) {
  kernel_share c;
  c.key = key;
  std::vector<double> own, base, launches, col;
  for (std::size_t s = 0; s < m.step_count(); ++s) {
    const auto* mine = win.find(rank, s, key);
    const bool inside = s >= first && s <= last;
    if (!peers.empty() && !inside) continue;
    if (!peers.empty()) {
      col.clear();
      for (int x : peers)
        if (const auto* ks = win.find(x, s, key); ks && ks->count) col.push_back(per_launch(*ks));
      if (!col.empty()) base.push_back(stats::median(col));
    }
    if (!mine || !mine->count) continue;
    if (inside) {
      own.push_back(per_launch(*mine));
      launches.push_back(static_cast<double>(mine->count));
    } else {
      base.push_back(per_launch(*mine));
    }
  }
  if (own.empty()) return c;
  c.observed_ns = stats::median(own);
  c.launches_per_step = stats::median(launches);
  if (!base.empty()) {
    c.baseline_ns = stats::median(base);
    c.ratio = c.baseline_ns > 0 ? c.observed_ns / c.baseline_ns : l3_nan;
    c.lost_ns_per_step = (c.observed_ns - c.baseline_ns) * c.launches_per_step;
  }
  return c;
}

// A degraded kernel claim from L2's claim on a derived model and the claim's kernels, costliest
// first: the first is named, the next (up to max_keys - 1) listed.
template <class = void>
inline degraded_kernel kernel_claim(const straggler& st, const std::vector<kernel_share>& costs, std::size_t max_keys) {
  degraded_kernel d;
  d.rank = st.rank;
  d.key = costs.front().key;
  d.group = st.group;
  d.compared_within = st.compared_within;
  d.peers = st.peers;
  d.first = st.first;
  d.last = st.last;
  d.elevated_steps = st.elevated_steps;
  d.z = st.z;
  d.p_value = st.p_value;
  d.q_value = st.q_value;
  d.job_slowdown = st.job_slowdown;
  d.observed_ns = costs.front().observed_ns;
  d.baseline_ns = costs.front().baseline_ns;
  d.ratio = costs.front().ratio;
  d.launches_per_step = costs.front().launches_per_step;
  d.lost_ns_per_step = costs.front().lost_ns_per_step;
  for (std::size_t i = 1; i < costs.size() && i < max_keys; ++i) d.also.emplace_back(costs[i].key, costs[i].ratio);
  return d;
}

}  // namespace detail

FAILSLOW_FUNC_DEF std::vector<kernel_share> attribute_kernels(const job_model& m, int rank,
                                                              const std::vector<int>& peers, std::size_t first,
                                                              std::size_t last, std::size_t max) {
  std::vector<kernel_share> out;
  if (m.windows.empty() || rank < 0 || static_cast<std::size_t>(rank) >= m.rank_count() || last >= m.step_count())
    return out;
  const window_index win(m);
  for (std::size_t key = 0; key < m.kernel_names.size(); ++key) {
    if (m.kernel_classes[key] == kernel_class::communication) continue;
    auto c = detail::kernel_share_of(m, win, rank, peers, key, first, last);
    if (c.lost_ns_per_step > 0) out.push_back(c);
  }
  std::sort(out.begin(), out.end(),
            [](const kernel_share& a, const kernel_share& b) { return a.lost_ns_per_step > b.lost_ns_per_step; });
  if (out.size() > max) out.resize(max);
  return out;
}

FAILSLOW_FUNC_DEF l3_result find_degraded(const job_model& m, const topology& topo, const l1_result* l1,
                                          const l3_options& o) {
  if (topo.world_size() != m.world_size)
    throw invalid_argument("find_degraded: topology of " + std::to_string(topo.world_size()) + " ranks for a job of " +
                           std::to_string(m.world_size));
  if (o.quantiles == 0) throw invalid_argument("find_degraded: quantiles must be >= 1");
  if (!(o.kernel_min_step_share >= 0) || !(o.kernel_min_step_share < 1))
    throw invalid_argument("find_degraded: kernel_min_step_share must be in [0, 1)");
  l3_result out;
  if (m.windows.empty()) {
    out.notes.push_back(
        "L3: no per-step kernel summaries were kept (model_options::keep_windows): no kernel, link "
        "or stage diagnosis");
    return out;
  }
  const std::size_t R = m.rank_count(), S = m.step_count(), K = o.quantiles;
  const window_index win(m);
  const stats::quantile_grid grid(K);

  // For the intra-worker charts, filled by the kernel comparison: per rank, key (index into
  // drift_keys) and step the mean per launch over the group's median minus 1, and per rank and
  // key the group's pooled robust sd of it (NaN: not compared in a group).
  dense_array<double, 3> rel;
  dense_array<double, 2> rel_sd;
  std::vector<std::size_t> drift_keys;
  // Ranks whose degraded kernels (cross-rank or drifting) cost less than kernel_min_step_share
  // of a step: the median iteration of the peers (without peers, the rank's own) over the claim.
  std::vector<int> negligible;
  const auto negligible_cost = [&](int rank, const std::vector<int>& peers, std::size_t a, std::size_t b,
                                   double lost_ns_per_step) {
    const double step = detail::median_iteration(m, peers.empty() ? std::vector<int>{rank} : peers, a, b);
    const bool small = std::isfinite(step) && lost_ns_per_step < o.kernel_min_step_share * step;
    if (small) negligible.push_back(rank);
    return small;
  };
  auto drift_peers = [&](int rank, std::size_t jj) {
    const std::size_t key = drift_keys[jj];
    const auto scope = *o.kernels.routing.scope(routing_subject::kernel, m.kernel_names[key], m.kernel_classes[key]);
    std::vector<int> peers;
    for (const auto& g : detail::comparable_groups(m, topo, scope, o.kernels.min_group, o.kernels.roles))
      if (std::find(g.members.begin(), g.members.end(), rank) != g.members.end())
        for (int x : g.members)
          if (x != rank) peers.push_back(x);
    return peers;
  };

  // ---- degraded kernels ----------------------------------------------------------------------
  if (o.find_kernels) {
    std::vector<std::size_t> keys;
    std::vector<phase_info> extra;
    for (std::size_t j = 0; j < m.kernel_names.size(); ++j) {
      const auto cls = m.kernel_classes[j];
      if (cls == kernel_class::communication) continue;
      if (!o.kernels.routing.scope(routing_subject::kernel, m.kernel_names[j], cls)) continue;
      phase_info ph;
      ph.name = m.kernel_names[j];
      ph.role = phase_role::work;
      ph.cls = cls;
      ph.annotated = true;  // reported in preference to the (uncompared) class phases
      ph.subject = routing_subject::kernel;
      keys.push_back(j);
      extra.push_back(std::move(ph));
    }
    out.kernel_keys = keys.size();
    job_model km = detail::derived_model(m, R, extra);
    km.has_rank = m.has_rank;
    km.iteration_ns = m.iteration_ns;
    for (std::size_t r = 0; r < R; ++r)
      for (std::size_t p = 0; p < class_phase_count; ++p)
        for (std::size_t s = 0; s < S; ++s) km.phase_ns(r, p, s) = m.phase_ns(r, p, s);
    std::vector<double> qbuf, med, launch;
    std::vector<int> who;
    std::vector<const double*> rows;
    rel = dense_array<double, 3>({R, keys.size(), S});
    rel.fill(detail::l3_nan);
    rel_sd = dense_array<double, 2>({R, keys.size()});
    rel_sd.fill(detail::l3_nan);
    for (std::size_t jj = 0; jj < keys.size(); ++jj) {
      const std::size_t key = keys[jj], p = class_phase_count + jj;
      const auto scope = *o.kernels.routing.scope(routing_subject::kernel, m.kernel_names[key], m.kernel_classes[key]);
      for (const auto& g : detail::comparable_groups(m, topo, scope, o.kernels.min_group, o.kernels.roles)) {
        std::vector<double> deviations;
        for (std::size_t s = 0; s < S; ++s) {
          who.clear();
          launch.clear();
          qbuf.resize(g.members.size() * K);
          for (int r : g.members) {
            const auto* ks = win.find(r, s, key);
            if (!ks || ks->clusters.empty()) continue;
            stats::quantile_vector(ks->distribution(o.truncated), grid, qbuf.data() + who.size() * K);
            who.push_back(r);
            launch.push_back(detail::per_launch(*ks));
          }
          if (who.size() < o.kernels.min_group) {  // no peers: the mean, for its own history
            for (std::size_t i = 0; i < who.size(); ++i)
              km.phase_ns(static_cast<std::size_t>(who[i]), p, s) = detail::mean_of(qbuf.data() + i * K, K);
            continue;
          }
          rows.clear();
          for (std::size_t i = 0; i < who.size(); ++i) rows.push_back(qbuf.data() + i * K);
          // Each rank against the median distribution of the others (why: the synopsis).
          detail::leave_one_out_median_vectors(rows, K, med);
          for (std::size_t i = 0; i < who.size(); ++i) {
            const double* others = med.data() + i * K;
            const double ref = detail::mean_of(others, K);
            const double w = stats::wasserstein1_quantiles(rows[i], others, K);
            const double shift = detail::mean_of(rows[i], K) - ref;
            km.phase_ns(static_cast<std::size_t>(who[i]), p, s) = ref + (shift >= 0 ? w : -w);
          }
          // The charts' series: the mean per launch over the group's median, minus 1 (a
          // continuous, centred value; the signed W1 is bimodal around 0 for a healthy rank).
          const double mid = stats::median(launch);
          if (mid > 0)
            for (std::size_t i = 0; i < who.size(); ++i) {
              const double e = launch[i] / mid - 1;
              rel(static_cast<std::size_t>(who[i]), jj, s) = e;
              deviations.push_back(std::fabs(e));
            }
        }
        if (deviations.empty()) continue;
        const double sd = std::max(stats::mad_to_sigma * stats::median(deviations), o.kernels.resolution);
        for (int r : g.members) rel_sd(static_cast<std::size_t>(r), jj) = sd;
      }
    }
    drift_keys = keys;
    const auto res = find_stragglers(km, topo, l1, o.kernels);
    out.tests += res.tests;
    for (const auto& n : res.notes) out.notes.push_back("L3 kernels: " + n.substr(n.rfind("L2: ", 0) == 0 ? 4 : 0));
    for (const auto& st : res.stragglers) {
      if (st.phase < class_phase_count || detail::weak_own_history(st, o.kernels)) continue;
      // The rank's degraded keys with their time lost per step; the costliest is reported.
      std::vector<std::pair<std::size_t, double>> found = {{st.phase, st.ratio}};
      found.insert(found.end(), st.also_slow.begin(), st.also_slow.end());
      std::vector<kernel_share> costs;
      for (const auto& [p, ratio] : found) {
        if (p < class_phase_count) continue;
        auto c = detail::kernel_share_of(m, win, st.rank, st.peers, keys[p - class_phase_count], st.first, st.last);
        if (std::isfinite(c.observed_ns)) costs.push_back(c);
      }
      if (costs.empty()) continue;
      std::stable_sort(costs.begin(), costs.end(), [](const kernel_share& a, const kernel_share& b) {
        return a.lost_ns_per_step > b.lost_ns_per_step;
      });
      // With fewer than 8 comparable ranks the deviations from a per-step median of so few
      // understate the spread (the median sits between the middle values): such a claim needs
      // L2's 3 % on the mean per launch, not the 1 % floor (a 1.01x false claim in 4-rank groups).
      // So does a claim against the rank's own history (a guessed layout asks it of every rank
      // and key): its baseline is one rank's own launches (1.01x claims on healthy pipelines).
      if ((st.peers.size() + 1 < small_group_ranks || st.compared_within == "own history") &&
          !(costs.front().ratio >= 1 + small_group_effect))
        continue;
      double lost = 0;
      for (const auto& c : costs) lost += c.lost_ns_per_step;
      if (negligible_cost(st.rank, st.peers, st.first, st.last, lost)) continue;
      auto d = detail::kernel_claim(st, costs, costs.size());
      // The group W1 matrix row over the claim: each member's quantile vectors averaged over the
      // claimed steps (their Wasserstein barycenter), against the peers' median distribution.
      std::vector<int> members = {d.rank};
      members.insert(members.end(), d.peers.begin(), d.peers.end());
      std::vector<double> bary(members.size() * K, 0.0), one(K);
      std::vector<std::size_t> n(members.size(), 0);
      for (std::size_t i = 0; i < members.size(); ++i)
        for (std::size_t s = d.first; s <= d.last; ++s)
          if (const auto* ks = win.find(members[i], s, d.key); ks && !ks->clusters.empty()) {
            stats::quantile_vector(ks->distribution(o.truncated), grid, one.data());
            for (std::size_t u = 0; u < K; ++u) bary[i * K + u] += one[u];
            ++n[i];
          }
      rows.clear();
      for (std::size_t i = 0; i < members.size(); ++i) {
        if (!n[i]) continue;
        for (std::size_t u = 0; u < K; ++u) bary[i * K + u] /= static_cast<double>(n[i]);
        if (i > 0) rows.push_back(bary.data() + i * K);
      }
      if (n[0] && !rows.empty()) {
        detail::median_vector(rows, K, med);
        d.w1_ns = stats::wasserstein1_quantiles(bary.data(), med.data(), K);
        std::vector<double> spread;
        for (const double* row : rows) spread.push_back(stats::wasserstein1_quantiles(row, med.data(), K));
        d.peer_w1_ns = stats::median(spread);
        for (std::size_t i = 1; i < members.size(); ++i)
          d.w1_row.push_back(n[i] ? stats::wasserstein1_quantiles(bary.data(), bary.data() + i * K, K)
                                  : detail::l3_nan);
      }
      out.kernels.push_back(std::move(d));
    }
  }

  // ---- drifts: intra-worker EWMA charts ------------------------------------------------------
  if (o.find_kernels && o.find_drifts && !drift_keys.empty()) {
    std::vector<double> pvals;
    struct chart_result {
      int rank;
      std::size_t jj, alarm, first;
      double excess, sd;
    };
    std::vector<chart_result> charted;
    const double excess_sd =
        std::sqrt(o.drift_lambda / (2 - o.drift_lambda) + 1.5707963267948966 / static_cast<double>(o.drift_warmup));
    // Ranks the cross-rank test already reported are not charted: their charts would only
    // loosen the Benjamini-Hochberg threshold for the others.
    std::vector<bool> reported(R, false);
    for (const auto& d : out.kernels) reported[static_cast<std::size_t>(d.rank)] = true;
    for (std::size_t r = 0; r < R; ++r)
      for (std::size_t jj = 0; jj < drift_keys.size(); ++jj) {
        if (reported[r] || !std::isfinite(rel_sd(r, jj))) continue;
        auto value = [&](std::size_t s) { return rel(r, jj, s); };
        // The rank's own level: the median of its first drift_warmup finite values.
        std::vector<std::size_t> idx;
        for (std::size_t s = 0; s < S; ++s)
          if (std::isfinite(value(s))) idx.push_back(s);
        if (idx.size() < o.drift_warmup + o.drift_trend_run + 1) continue;
        std::vector<double> warm, steps_apart;
        for (std::size_t i = 0; i < o.drift_warmup; ++i) warm.push_back(value(idx[i]));
        // The rank's own noise, from its step-to-step differences (a drift or a shift barely moves
        // their median): a rank noisier than its group must not chart against the group's sd.
        for (std::size_t i = 1; i < idx.size(); ++i)
          steps_apart.push_back(std::fabs(value(idx[i]) - value(idx[i - 1])));
        const double sd = std::max(rel_sd(r, jj), stats::mad_to_sigma * stats::median(steps_apart) / std::sqrt(2.0));
        detect::ewma_options eo;
        eo.lambda = o.drift_lambda;
        eo.L = o.drift_L;
        eo.side = detect::chart_side::upper;
        eo.trend_run = o.drift_trend_run;
        eo.trend_on = detect::trend_source::statistic;
        eo.baseline.mode = detect::baseline_mode::known;
        eo.baseline.mu = stats::median(warm);
        eo.baseline.sigma = sd;
        detect::ewma_chart<double> chart(eo);
        bool alarm = false, trend = false;
        std::size_t first_alarm = 0, first_trend = 0;
        double z = eo.baseline.mu;
        for (std::size_t i = o.drift_warmup; i < idx.size(); ++i) {
          const auto pt = chart.update(value(idx[i]));
          z = pt.z;
          if (pt.state == detect::chart_state::alarm && !alarm) {
            alarm = true;
            first_alarm = idx[i];
          }
          if (pt.trend && !trend) {
            trend = true;
            first_trend = idx[i];
          }
        }
        ++out.tests;
        const double excess = z - eo.baseline.mu;
        // p of the last statistic under "in control": the EWMA of iid values has sd
        // sigma sqrt(l/(2-l)), and the level it is measured from is itself a median of drift_warmup
        // values (variance ~ pi/2 sigma^2 / n), so the excess has sd sigma sqrt(l/(2-l) + pi/(2n)),
        // sigma the larger of the group's pooled sd and the rank's own.
        // Only a chart that alarmed, saw its statistic rise for trend_run steps and ends min_effect
        // above both the rank's own level and its group's median (z is relative to the group: a
        // rank that began 4 % faster than its peers and became like them is not degraded) is a drift.
        const bool drift = alarm && trend && excess >= o.kernels.min_effect && z >= o.kernels.min_effect;
        // Student-t with the differences' degrees of freedom: sd is estimated from this series.
        pvals.push_back(drift ? stats::detail::student_t_upper_tail(excess / (sd * excess_sd), steps_apart.size() - 1)
                              : 1.0);
        charted.push_back({static_cast<int>(r), jj, first_alarm, std::min(first_alarm, first_trend), excess, sd});
      }
    if (!pvals.empty()) {
      const auto fdr = detect::false_discovery_control(pvals, o.kernels.fdr_q);
      std::map<int, std::size_t> best;  // rank -> index into charted: the largest excess
      for (std::size_t j : fdr.rejected) {
        const auto& c = charted[j];
        auto it = best.find(c.rank);
        if (it == best.end() || charted[it->second].excess < c.excess) best[c.rank] = j;
      }
      for (const auto& [rank, j] : best) {
        const auto& c = charted[j];
        degraded_kernel d;
        d.rank = rank;
        d.key = drift_keys[c.jj];
        d.detector = "ewma-trend";
        d.compared_within = "own history (EWMA of its W1 to the group)";
        d.first = c.first;
        d.last = S - 1;
        d.alarm_step = c.alarm;
        d.ewma_excess = c.excess;
        d.p_value = pvals[j];
        d.q_value = fdr.adjusted[j];
        d.z = c.excess / (c.sd * excess_sd);
        d.peers = drift_peers(rank, c.jj);
        const auto share = detail::kernel_share_of(m, win, rank, d.peers, d.key, d.first, d.last);
        // Over its drift the kernel must also be slower than on its peers, where they are known.
        if (share.baseline_ns > 0 && !(share.ratio > 1)) continue;
        d.observed_ns = share.observed_ns;
        d.baseline_ns = share.baseline_ns;
        d.ratio = share.ratio;
        d.launches_per_step = share.launches_per_step;
        d.lost_ns_per_step = share.lost_ns_per_step;
        if (negligible_cost(rank, d.peers, d.first, d.last, d.lost_ns_per_step)) continue;
        out.kernels.push_back(std::move(d));
      }
    }
  }
  // ---- slow compute pooled over kernels --------------------------------------------------------
  // A rank whose compute kernels all slowed by one factor (a GPU clocked down, a neighbour
  // sharing it) by less than one key's noise, or the compute total's: the total is dominated by
  // its noisiest kernels, an inverse-variance weighted mean of the keys' log ratios is not.
  if (o.find_kernels && o.find_pooled && !drift_keys.empty()) {
    std::vector<std::size_t> pool;  // indices into drift_keys
    std::vector<double> weight, steps_apart;
    for (std::size_t jj = 0; jj < drift_keys.size(); ++jj) {
      if (m.kernel_classes[drift_keys[jj]] != kernel_class::compute) continue;
      // The key's noise: its step-to-step changes of ln(1 + rel), pooled over ranks (a rank's
      // steady offset from its group cancels in a difference, a shift moves few of them).
      steps_apart.clear();
      for (std::size_t r = 0; r < R; ++r) {
        double prev = detail::l3_nan;
        for (std::size_t s = 0; s < S; ++s) {
          const double v = rel(r, jj, s);
          if (!(v > -1)) continue;
          const double x = std::log1p(v);
          if (std::isfinite(prev)) steps_apart.push_back(std::fabs(x - prev));
          prev = x;
        }
      }
      if (steps_apart.size() < 2) continue;
      const double sd =
          std::max(stats::mad_to_sigma * stats::median(steps_apart) / std::sqrt(2.0), o.kernels.resolution);
      pool.push_back(jj);
      weight.push_back(1 / (sd * sd));
    }
    if (pool.size() >= 2) {
      phase_info ph;
      ph.name = "compute kernels per launch";
      ph.role = phase_role::work;
      ph.cls = kernel_class::compute;
      job_model pm = detail::derived_model(m, R, {ph});
      pm.has_rank = m.has_rank;
      pm.iteration_ns = m.iteration_ns;
      for (std::size_t r = 0; r < R; ++r)
        for (std::size_t p = 0; p < class_phase_count; ++p)
          for (std::size_t s = 0; s < S; ++s) pm.phase_ns(r, p, s) = m.phase_ns(r, p, s);
      // The index in units of the job's median compute per step, so that L2's floors in ns
      // (min_phase_ns) and its evidence read as compute time at the rank's per-launch pace.
      std::vector<double> compute;
      for (std::size_t r = 0; r < R; ++r)
        for (std::size_t s = 0; s < S; ++s)
          if (std::isfinite(m.phase_ns(r, compute_phase, s))) compute.push_back(m.phase_ns(r, compute_phase, s));
      const double unit = compute.empty() ? 1.0 : stats::median(compute);
      for (std::size_t r = 0; r < R; ++r)
        for (std::size_t s = 0; s < S; ++s) {
          double sw = 0, sx = 0;
          for (std::size_t i = 0; i < pool.size(); ++i) {
            const double v = rel(r, pool[i], s);
            if (!(v > -1)) continue;
            sw += weight[i];
            sx += weight[i] * std::log1p(v);
          }
          if (sw > 0) pm.phase_ns(r, class_phase_count, s) = unit * std::exp(sx / sw);
        }
      auto po = o.kernels;
      po.min_effect = l2_options{}.min_effect;  // across ranks: L2's floor for compute time
      po.own_history = true;
      po.own_history_with_peers = true;
      po.own_history_min_effect = o.pooled_min_effect;
      po.min_step_share = 0;  // judged below by the kernels' time lost
      const auto res = find_stragglers(pm, topo, l1, po);
      out.tests += res.tests;
      std::vector<bool> reported(R, false);
      for (const auto& d : out.kernels) reported[static_cast<std::size_t>(d.rank)] = true;
      for (const auto& st : res.stragglers) {
        if (st.phase != class_phase_count || reported[static_cast<std::size_t>(st.rank)]) continue;
        if (detail::weak_own_history(st, o.pooled_min_effect)) continue;
        const bool own = st.compared_within == "own history";
        // The kernels behind it, by time lost per step: against the rank's own launches outside
        // the claim when that was the test, else against its peers'.
        std::vector<kernel_share> costs;
        double lost = 0;
        for (std::size_t jj : pool) {
          auto c = detail::kernel_share_of(m, win, st.rank, own ? std::vector<int>{} : st.peers, drift_keys[jj],
                                           st.first, st.last);
          if (!(c.lost_ns_per_step > 0)) continue;
          lost += c.lost_ns_per_step;
          costs.push_back(c);
        }
        if (costs.empty()) continue;
        std::stable_sort(costs.begin(), costs.end(), [](const kernel_share& a, const kernel_share& b) {
          return a.lost_ns_per_step > b.lost_ns_per_step;
        });
        if (negligible_cost(st.rank, st.peers, st.first, st.last, lost)) continue;
        auto d = detail::kernel_claim(st, costs, 5);
        d.detector = "pooled";
        if (own) d.compared_within = "own history, relative to its peers";
        d.pooled_keys = pool.size();
        d.pooled_ratio = st.ratio;
        out.pooled.push_back(std::move(d));
      }
    }
  }
  if (!negligible.empty()) {
    std::sort(negligible.begin(), negligible.end());
    negligible.erase(std::unique(negligible.begin(), negligible.end()), negligible.end());
    char floor[32];
    std::snprintf(floor, sizeof floor, "%.3g %%", o.kernel_min_step_share * 100);
    out.notes.push_back(
        "L3 kernels: " + std::to_string(negligible.size()) + " rank(s) (" + detail::rank_list(negligible, 12) +
        ") run kernels slower than their peers' that cost less than " + floor + " of a step together: not reported");
  }

  // ---- inter-worker outliers (Mahalanobis) ---------------------------------------------------
  if (o.find_outliers) {
    const auto scope = o.kernels.routing.scope(routing_subject::phase, "compute", kernel_class::compute);
    const std::size_t W = o.outlier_window ? (S / o.outlier_window) : 0;
    struct candidate {
      outlier_rank o;
      std::vector<double> d;
      std::vector<std::vector<double>> dev;
      std::vector<std::size_t> flagged;
      std::vector<std::vector<double>> dev_before;  // deviations of its windows before the first flagged one
      double group_rate = 0;                        // the rate of its group's other ranks
      std::pair<std::size_t, std::size_t> nd;       // (group size, features): the null's shape
    };
    std::vector<candidate> cands;
    // Flags and (rank, window) cells per group shape: groups of one size and feature count share
    // the threshold's real false-alarm rate, which for 7 others and 3 features is ~3 % per
    // window, not the 1 % the chi-square level assumes (the covariance is estimated).
    std::map<std::pair<std::size_t, std::size_t>, std::pair<double, double>> shape_flags;
    std::vector<double> pvals;
    std::size_t small_groups = 0;
    if (scope && W >= o.outlier_min_windows)
      for (const auto& g : detail::comparable_groups(m, topo, *scope, o.kernels.min_group, o.kernels.roles)) {
        const std::size_t N = g.members.size();
        // The group's costliest compute/memory kernels over the whole trace.
        std::map<std::size_t, double> cost;
        for (int r : g.members)
          for (std::size_t s = 0; s < S; ++s)
            if (const auto* w = win.window(r, s))
              for (const auto& k : w->kernels)
                if (m.kernel_classes[k.key] != kernel_class::communication) cost[k.key] += k.total_ns;
        std::vector<std::pair<double, std::size_t>> by_cost;
        for (const auto& [k, c] : cost) by_cost.emplace_back(c, k);
        std::sort(by_cost.rbegin(), by_cost.rend());
        // d features need at least 2 d + 2 ranks for a covariance worth the name: the top
        // kernels only while the group is large enough.
        if (N < 2 * 3 + 2) {
          ++small_groups;
          continue;
        }
        const std::size_t kernels_used = std::min({o.outlier_top_kernels, by_cost.size(), (N - 2) / 2 - 3});
        std::vector<std::size_t> top;
        for (std::size_t i = 0; i < kernels_used; ++i) top.push_back(by_cost[i].second);
        std::vector<std::string> names = {"compute", "memory", "idle share"};
        for (std::size_t k : top) names.push_back(io::detail::format_kernel_name(m.kernel_names[k], 40));
        const std::size_t d = names.size();
        std::vector<candidate> gc(N);
        for (std::size_t i = 0; i < N; ++i) {
          gc[i].o.rank = g.members[i];
          gc[i].o.group = detail::group_label(topo, g.rank, g.scope);
          gc[i].o.features = names;
          for (int x : g.members)
            if (x != g.members[i]) gc[i].o.peers.push_back(x);
        }
        std::size_t windows = 0;
        for (std::size_t w = 0; w < W; ++w) {
          std::vector<double> X(N * d);  // row-major: rank i, feature f at i d + f
          bool complete = true;
          for (std::size_t i = 0; i < N && complete; ++i) {
            const auto r = static_cast<std::size_t>(g.members[i]);
            std::vector<std::vector<double>> v(d);
            for (std::size_t s = w * o.outlier_window; s < (w + 1) * o.outlier_window; ++s) {
              const double it = m.iteration_ns(r, s), c = m.phase_ns(r, compute_phase, s),
                           mem = m.phase_ns(r, memory_phase, s), idle = m.phase_ns(r, idle_phase, s);
              if (std::isfinite(c) && c > 0) v[0].push_back(std::log(c));
              if (std::isfinite(mem)) v[1].push_back(std::log1p(mem));
              if (std::isfinite(idle) && it > 0) v[2].push_back(idle / it);
              for (std::size_t t = 0; t < top.size(); ++t)
                if (const auto* ks = win.find(g.members[i], s, top[t]); ks && ks->count)
                  v[3 + t].push_back(std::log(detail::per_launch(*ks)));
            }
            for (std::size_t f = 0; f < d; ++f) {
              if (v[f].empty()) {
                complete = false;
                break;
              }
              X[i * d + f] = stats::median(v[f]);
            }
          }
          if (!complete) continue;
          ++windows;
          // Robust standardisation with a floor per feature (0.5 % in log time, 0.2 % of the
          // step in idle share): differences below what matters never make a distance.
          std::vector<double> col(N);
          std::vector<std::vector<double>> dev(N, std::vector<double>(d, 0.0));
          for (std::size_t f = 0; f < d; ++f) {
            for (std::size_t i = 0; i < N; ++i) col[i] = X[i * d + f];
            const double med_f = stats::median(col);
            std::vector<double> ad(N);
            for (std::size_t i = 0; i < N; ++i) ad[i] = std::fabs(col[i] - med_f);
            const double sd = std::max(stats::mad_to_sigma * stats::median(ad), f == 2 ? 0.002 : 0.005);
            for (std::size_t i = 0; i < N; ++i) {
              dev[i][f] = (col[i] - med_f) / sd;
              X[i * d + f] = dev[i][f];
            }
          }
          // Each rank against the covariance of the others (leave one out): in-sample, one
          // outlier inflates the covariance it is measured with, and its distance can never
          // exceed (N - 1) / sqrt(N) -- below the threshold for small groups.
          detect::mahalanobis_options mo_opt;
          mo_opt.standardize = false;
          const double lambda = detect::mahalanobis_threshold(static_cast<std::ptrdiff_t>(d),
                                                              static_cast<std::ptrdiff_t>(N - 1), mo_opt.quantile);
          std::vector<double> others((N - 1) * d);
          for (std::size_t i = 0; i < N; ++i) {
            for (std::size_t j = 0, row = 0; j < N; ++j)
              if (j != i) std::copy_n(X.data() + j * d, d, others.data() + d * row++);
            const auto model = detect::fit_mahalanobis_rows(others.data(), N - 1, d, mo_opt);
            const double dist = std::sqrt(model.squared_distance(X.data() + i * d));
            auto& c = gc[i];
            if (dist > lambda) {
              c.flagged.push_back(w);
              c.d.push_back(dist);
              c.dev.push_back(dev[i]);
              c.o.threshold = lambda;
            } else if (c.flagged.empty()) {
              c.dev_before.push_back(dev[i]);
            }
          }
        }
        if (windows < o.outlier_min_windows) continue;
        std::size_t total_flags = 0;
        for (const auto& c : gc) total_flags += c.flagged.size();
        auto& shape = shape_flags[{N, d}];
        shape.first += static_cast<double>(total_flags);
        shape.second += static_cast<double>(windows * N);
        for (auto& c : gc) {
          ++out.tests;
          c.o.windows = windows;
          c.o.windows_flagged = c.flagged.size();
          c.group_rate = static_cast<double>(total_flags - c.flagged.size()) / static_cast<double>(windows * (N - 1));
          c.nd = {N, d};
          cands.push_back(std::move(c));
        }
      }
    // Persistence against the peers' rate: P(Binomial(windows, p) >= k), p the largest of its
    // group's other ranks' rate, the Jeffreys estimate over every other rank of groups of its
    // shape in the job, and the nominal 1 % of the threshold.
    for (const auto& c : cands) {
      double p = 1;
      if (c.flagged.size() >= o.outlier_min_windows) {
        const auto& [flags, cells] = shape_flags[c.nd];
        const double k = static_cast<double>(c.flagged.size()), n = static_cast<double>(c.o.windows);
        const double pooled = detail::jeffreys_rate(flags - k, cells - n);
        p = detail::binomial_upper_tail(c.flagged.size(), c.o.windows, std::max({c.group_rate, pooled, 0.01}));
      }
      pvals.push_back(p);
    }
    if (small_groups > 0)
      out.notes.push_back("L3 inter-worker: " + std::to_string(small_groups) +
                          " group(s) of fewer than 8 comparable ranks, too few for the covariance of 3 features: "
                          "not compared");
    if (!pvals.empty()) {
      const auto fdr = detect::false_discovery_control(pvals, o.kernels.fdr_q);
      std::size_t faster = 0;
      std::vector<int> steady;
      auto row_pointers = [](const std::vector<std::vector<double>>& rows) {
        std::vector<const double*> p;
        for (const auto& r : rows) p.push_back(r.data());
        return p;
      };
      // L2's steady-offset rule on the deviation vector: the windows before the first flagged
      // one (median per feature) already hold at least half of the departure over the flagged
      // ones, projected on it -- a rank that was always this far from its peers (a slower GPU)
      // and crosses the threshold now and then did not change.
      auto steady_offset = [&](const std::vector<double>& claim, const std::vector<std::vector<double>>& before) {
        if (before.empty()) return false;
        std::vector<double> typical;
        detail::median_vector(row_pointers(before), claim.size(), typical);
        double dot = 0, norm2 = 0;
        for (std::size_t f = 0; f < claim.size(); ++f) {
          dot += typical[f] * claim[f];
          norm2 += claim[f] * claim[f];
        }
        return norm2 > 0 && dot >= 0.5 * norm2;
      };
      for (std::size_t j : fdr.rejected) {
        auto& c = cands[j];
        c.o.p_value = pvals[j];
        c.o.q_value = fdr.adjusted[j];
        c.o.first = c.flagged.front() * o.outlier_window;
        c.o.last = std::min(S, (c.flagged.back() + 1) * o.outlier_window) - 1;
        c.o.distance = stats::median(c.d);
        detail::median_vector(row_pointers(c.dev), c.o.features.size(), c.o.deviation);
        // Every feature grows when a rank slows (time, idle share): a rank that departs most
        // in the other direction (faster than its peers) holds nothing back.
        std::size_t top = 0;
        for (std::size_t f = 1; f < c.o.deviation.size(); ++f)
          if (std::fabs(c.o.deviation[f]) > std::fabs(c.o.deviation[top])) top = f;
        if (!(c.o.deviation.empty() || c.o.deviation[top] > 0)) {
          ++faster;
          continue;
        }
        if (steady_offset(c.o.deviation, c.dev_before) &&
            static_cast<double>(c.o.windows_flagged) < o.kernels.min_fraction * static_cast<double>(c.o.windows)) {
          steady.push_back(c.o.rank);
          continue;
        }
        out.outliers.push_back(std::move(c.o));
      }
      if (faster > 0)
        out.notes.push_back("L3 inter-worker: " + std::to_string(faster) +
                            " rank(s) depart from their peers' joint profile by being faster: not reported");
      if (!steady.empty()) {
        std::sort(steady.begin(), steady.end());
        out.notes.push_back("L3 inter-worker: " + std::to_string(steady.size()) + " rank(s) (" +
                            detail::rank_list(steady, 12) +
                            ") depart from their peers about as far in their windows before the first flagged one "
                            "(a steady offset, no change) and are flagged in fewer than " +
                            std::to_string(static_cast<int>(std::lround(o.kernels.min_fraction * 100))) +
                            " % of their windows: not reported");
      }
    }
  }

  // ---- degraded links ------------------------------------------------------------------------
  // T of the group of `rank` along `dim` at step s: the minimum over its ranks of the key's
  // typical launch (NaN unless every rank of the group ran it).
  auto transfer = [&](parallel_dim dim, int rank, std::size_t key, std::size_t s) {
    double t = detail::l3_nan;
    const auto ranks = topo.group(rank, dim);
    std::size_t seen = 0;
    for (int r : ranks)
      if (const auto* ks = win.find(r, s, key); ks && ks->count) {
        const double v = detail::median_launch(*ks);
        t = seen++ ? std::min(t, v) : v;
      }
    return seen == ranks.size() ? t : detail::l3_nan;
  };
  // From traces, per group (m.waits.transfer_groups) and collective key: per step the median
  // transfer time of the group's instances (detail/instance_transfer.hpp), NaN where it ran none.
  std::map<std::vector<int>, std::uint32_t> instance_group;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<double>> instance_transfer;
  if (o.find_links && m.waits.available && !m.waits.transfers.empty()) {
    for (std::size_t g = 0; g < m.waits.transfer_groups.size(); ++g)
      instance_group.emplace(m.waits.transfer_groups[g], static_cast<std::uint32_t>(g));
    std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, std::vector<double>> per_step;
    for (const auto& t : m.waits.transfers)
      if (t.step < S) per_step[{t.group, t.key, t.step}].push_back(t.ns);
    for (auto& [gks, v] : per_step) {
      auto& series = instance_transfer[{std::get<0>(gks), std::get<1>(gks)}];
      if (series.empty()) series.assign(S, detail::l3_nan);
      series[std::get<2>(gks)] = stats::median(v);
    }
  }
  std::set<std::uint32_t> keys_in_instances;  // collective keys the traces matched into instances
  for (const auto& gk : instance_transfer) keys_in_instances.insert(gk.first.second);
  // The group's series of `key` from its instances, or null where none was recorded.
  auto instance_series = [&](parallel_dim dim, int index, std::size_t key) -> const std::vector<double>* {
    auto ranks = topo.group_members(dim, index);
    std::sort(ranks.begin(), ranks.end());
    const auto g = instance_group.find(ranks);
    if (g == instance_group.end()) return nullptr;
    const auto it = instance_transfer.find({g->second, static_cast<std::uint32_t>(key)});
    return it == instance_transfer.end() ? nullptr : &it->second;
  };
  if (o.find_links) {
    std::vector<std::size_t> keys;
    std::vector<phase_info> extra;
    for (std::size_t j = 0; j < m.kernel_names.size(); ++j) {
      if (m.kernel_classes[j] != kernel_class::communication || is_point_to_point(m.kernel_names[j])) continue;
      phase_info ph;
      ph.name = m.kernel_names[j];
      ph.role = phase_role::work;  // transfer time: the group's own work
      ph.cls = kernel_class::compute;
      ph.annotated = true;
      keys.push_back(j);
      extra.push_back(std::move(ph));
    }
    const int stages = topo.size(parallel_dim::pp);
    for (parallel_dim d : {parallel_dim::tp, parallel_dim::cp, parallel_dim::ep, parallel_dim::dp}) {
      if (topo.size(d) <= 1 || keys.empty()) continue;
      const int groups = topo.group_count(d);
      // Members of the derived model ordered stage by stage: a derived topology of
      // dp' = groups per stage x pp' = stages then compares the groups of one stage.
      std::vector<std::vector<int>> by_stage(static_cast<std::size_t>(stages));
      for (int g = 0; g < groups; ++g) {
        const auto ranks = topo.group_members(d, g);
        by_stage[static_cast<std::size_t>(topo.coordinate(ranks.front(), parallel_dim::pp))].push_back(g);
      }
      const std::size_t per_stage = by_stage.front().size();
      std::vector<int> order;  // derived member -> group index along d
      for (const auto& v : by_stage) order.insert(order.end(), v.begin(), v.end());
      if (order.size() != static_cast<std::size_t>(groups) ||
          per_stage * static_cast<std::size_t>(stages) != order.size())
        continue;  // a layout whose groups straddle stages: nothing comparable
      // Transfer times per collective instance where the traces gave them for this dimension
      // (the instance's group is known, so no collective of another dimension and no wait is in
      // them), else from the summaries.
      bool from_instances = false;
      for (std::size_t gi = 0; gi < order.size() && !from_instances; ++gi)
        for (std::size_t jj = 0; jj < keys.size() && !from_instances; ++jj)
          from_instances = instance_series(d, order[gi], keys[jj]) != nullptr;
      const bool few = per_stage < o.links.min_group;
      const std::string dn(to_string(d));
      const std::string few_text = std::to_string(per_stage) + " " + dn + " group(s) per pipeline stage, fewer than " +
                                   std::to_string(o.links.min_group);
      if (few && !o.links.own_history && !from_instances) {
        out.notes.push_back("L3 links: " + few_text + ", and no " + dn + " collective instances (" +
                            (m.waits.available ? std::string("none matched to a whole ") + dn + " group"
                                               : std::string("summaries keep none; traces give them")) +
                            "): " + dn + " links are not compared");
        continue;
      }
      if (few && from_instances)
        out.notes.push_back("L3 links: " + few_text + ": each " + dn +
                            " group's transfer time per collective instance (its shortest member's duration) "
                            "is judged against its own history" +
                            (order.size() > 1 ? ", relative to the other " + dn + " groups"
                                              : std::string(" (the job's only ") + dn + " group)"));
      job_model gm = detail::derived_model(m, order.size(), extra);
      for (std::size_t gi = 0; gi < order.size(); ++gi) {
        const int first_rank = topo.group_members(d, order[gi]).front();
        for (std::size_t jj = 0; jj < keys.size(); ++jj) {
          const auto* series = from_instances ? instance_series(d, order[gi], keys[jj]) : nullptr;
          if (from_instances && !series) continue;
          // A collective the traces matched into instances of other groups (a tp all-reduce,
          // where the dimension's own exchanges are point-to-point: expert all-to-alls) is
          // theirs: seen through this dimension's groups it would only carry their waits.
          if (!from_instances && keys_in_instances.count(static_cast<std::uint32_t>(keys[jj]))) continue;
          for (std::size_t s = 0; s < S; ++s) {
            const double t = series ? (*series)[s] : transfer(d, first_rank, keys[jj], s);
            if (std::isfinite(t)) {
              gm.phase_ns(gi, class_phase_count + jj, s) = t;
              gm.has_rank[gi] = true;
            }
          }
        }
      }
      parallel_sizes ps;
      ps.dp = static_cast<int>(per_stage);
      ps.pp = stages;
      const topology gt(ps, "tp-cp-ep-dp-pp");
      auto lo = o.links;
      lo.routing = router();  // per-class defaults: groups of one stage
      // Instances keep other dimensions' collectives and inherited waits out: a group without
      // enough same-stage groups is judged against its own history.
      if (from_instances) lo.own_history = true;
      auto res = find_stragglers(gm, gt, l1, lo);
      out.tests += res.tests;
      // The job's only group along d (pure data parallelism): there is nothing to be relative
      // to, and nothing needs to cancel -- a change of its transfer times is its link's. Its
      // own history as is, per collective, Bonferroni over them at fdr_q; one claim, the
      // collective that lost the most, the others listed.
      if (from_instances && order.size() == 1) {
        std::vector<straggler> claims;
        for (std::size_t jj = 0; jj < keys.size(); ++jj) {
          ++out.tests;
          auto st = detail::own_history_claim(gm, 0, class_phase_count + jj, {0}, lo, lo.min_effect);
          const double bonferroni = st.p_value * static_cast<double>(keys.size());
          if (st.elevated_steps == 0 || !(bonferroni <= lo.fdr_q)) continue;
          st.q_value = std::min(1.0, bonferroni);
          claims.push_back(std::move(st));
        }
        std::sort(claims.begin(), claims.end(),
                  [](const straggler& a, const straggler& b) { return a.excess_ns > b.excess_ns; });
        for (std::size_t i = 1; i < claims.size(); ++i)
          claims.front().also_slow.emplace_back(claims[i].phase, claims[i].ratio);
        if (!claims.empty()) res.stragglers.push_back(std::move(claims.front()));
      }
      // A link carries all of its group's collectives: an own-history claim in one of them is
      // kept only when each other collective the group ran rose too over the claimed steps, by
      // half the floor, relative to the other groups (the median over the claim of its time over
      // the other groups' median, against the same outside the claim). A run of noisy steps in
      // one collective (few instances per step) is not a link.
      auto corroborated = [&](const straggler& st) {
        const auto gi = static_cast<std::size_t>(st.rank);
        for (std::size_t jj = 0; jj < keys.size(); ++jj) {
          if (class_phase_count + jj == st.phase) continue;
          std::vector<double> in, outside, col;
          for (std::size_t s = 0; s < S; ++s) {
            const double own = gm.phase_ns(gi, class_phase_count + jj, s);
            if (!std::isfinite(own)) continue;
            col.clear();
            for (std::size_t x = 0; x < order.size(); ++x)
              if (x != gi && std::isfinite(gm.phase_ns(x, class_phase_count + jj, s)))
                col.push_back(gm.phase_ns(x, class_phase_count + jj, s));
            if (col.empty() && order.size() > 1) continue;
            const double ref = col.empty() ? 1.0 : stats::median(col);  // the only group: as is
            if (ref > 0) (s >= st.first && s <= st.last ? in : outside).push_back(own / ref);
          }
          if (in.empty() || outside.empty()) continue;  // not run by this group over both spans
          if (!(stats::median(in) >= (1 + 0.5 * lo.min_effect) * stats::median(outside))) return false;
        }
        return true;
      };
      std::size_t uncorroborated = 0;
      for (const auto& st : res.stragglers) {
        if (st.phase < class_phase_count || detail::weak_own_history(st, lo)) continue;
        if (from_instances && st.compared_within == "own history" && !corroborated(st)) {
          ++uncorroborated;
          continue;
        }
        degraded_link dl;
        dl.dim = d;
        dl.index = order[static_cast<std::size_t>(st.rank)];
        dl.group = std::string(to_string(d)) + ":" + std::to_string(dl.index);
        dl.key = keys[st.phase - class_phase_count];
        dl.compared_within = st.compared_within == "own history" ? "own history" : "same-stage groups";
        dl.first = st.first;
        dl.last = st.last;
        dl.elevated_steps = st.elevated_steps;
        dl.z = st.z;
        dl.p_value = st.p_value;
        dl.q_value = st.q_value;
        dl.transfer_ns = st.observed_ns;
        dl.baseline_transfer_ns = st.baseline_ns;
        dl.ratio = st.ratio;
        dl.job_slowdown = st.job_slowdown;
        dl.ranks = topo.group_members(d, dl.index);
        if (from_instances) dl.transfer_from = "collective instances";
        for (const auto& [p, ratio] : st.also_slow)
          if (p >= class_phase_count) dl.also.emplace_back(keys[p - class_phase_count], ratio);
        std::vector<double> waits;
        for (int r : dl.ranks) {
          std::vector<double> own;
          for (std::size_t s = dl.first; s <= dl.last; ++s)
            if (const auto* ks = win.find(r, s, dl.key); ks && ks->count) own.push_back(detail::median_launch(*ks));
          if (!own.empty()) waits.push_back(stats::median(own) - dl.transfer_ns);
        }
        dl.wait_ns = waits.empty() ? detail::l3_nan : stats::median(waits);
        out.links.push_back(std::move(dl));
      }
      if (uncorroborated > 0)
        out.notes.push_back("L3 links: " + std::to_string(uncorroborated) + " " + dn +
                            " own-history claim(s) in one collective while the group's other collectives did not "
                            "rise with it not reported (a link carries them all)");
    }
  }

  // A link that rose far less than another, later and in another collective, inherits that
  // link's waits (the process groups are not known, so a collective of one dimension is also
  // seen through the groups of another): reported once, as the stronger link.
  if (out.links.size() > 1) {
    std::vector<bool> secondary(out.links.size(), false);
    for (std::size_t b = 0; b < out.links.size(); ++b)
      for (std::size_t a = 0; a < out.links.size(); ++a) {
        const auto &la = out.links[a], &lb = out.links[b];
        if (a == b || secondary[a] || lb.first < la.first || lb.first > la.last || lb.key == la.key) continue;
        bool shares_key = false;
        for (const auto& [k, r] : la.also) shares_key = shares_key || k == lb.key;
        if (!shares_key && lb.ratio - 1 < 0.5 * (la.ratio - 1)) secondary[b] = true;
      }
    std::size_t dropped = 0;
    for (std::size_t i = out.links.size(); i-- > 0;)
      if (secondary[i]) {
        out.links.erase(out.links.begin() + static_cast<std::ptrdiff_t>(i));
        ++dropped;
      }
    if (dropped > 0)
      out.notes.push_back("L3 links: " + std::to_string(dropped) +
                          " weaker link finding(s) in another collective during a stronger one not reported (the "
                          "waits it causes)");
  }

  // ---- slow stages ---------------------------------------------------------------------------
  // The pipeline's stages; under a guessed layout (no pipeline dimension), the ranks' roles --
  // the first and last stages run kernels the others do not.
  std::vector<std::vector<int>> stage_ranks;
  for (int st = 0; st < topo.size(parallel_dim::pp); ++st) stage_ranks.push_back(topo.stage(st));
  const bool by_role = stage_ranks.size() < 2 && !o.kernels.roles.empty();
  if (by_role) {
    stage_ranks.clear();
    for (std::size_t r = 0; r < o.kernels.roles.size() && r < m.rank_count(); ++r) {
      const int role = o.kernels.roles[r];
      if (role < 0) continue;
      if (stage_ranks.size() <= static_cast<std::size_t>(role)) stage_ranks.resize(static_cast<std::size_t>(role) + 1);
      stage_ranks[static_cast<std::size_t>(role)].push_back(static_cast<int>(r));
    }
  }
  const int stages = static_cast<int>(stage_ranks.size());
  if (o.find_stages && stages > 1) {
    phase_info ph;
    ph.name = "stage compute";
    ph.role = phase_role::work;
    ph.cls = kernel_class::compute;
    ph.annotated = true;
    job_model sm = detail::derived_model(m, static_cast<std::size_t>(stages), {ph});
    for (int st = 0; st < stages; ++st) {
      const auto& ranks = stage_ranks[static_cast<std::size_t>(st)];
      for (std::size_t s = 0; s < S; ++s) {
        double v = detail::l3_nan;
        for (int r : ranks) {
          const double x = m.phase_ns(static_cast<std::size_t>(r), compute_phase, s);
          if (std::isfinite(x)) v = std::isfinite(v) ? std::min(v, x) : x;
        }
        sm.phase_ns(static_cast<std::size_t>(st), class_phase_count, s) = v;
        if (std::isfinite(v)) sm.has_rank[static_cast<std::size_t>(st)] = true;
      }
    }
    parallel_sizes ps;
    ps.pp = stages;
    const topology stt(ps, "tp-cp-ep-dp-pp");
    auto so = o.stages;
    so.routing = router();
    const auto res = find_stragglers(sm, stt, l1, so);  // one stage per group: own history
    out.tests += res.tests;
    for (const auto& st : res.stragglers) {
      if (st.phase < class_phase_count || detail::weak_own_history(st, so)) continue;
      slow_stage ss;
      ss.stage = st.rank;
      ss.by_role = by_role;
      ss.first = st.first;
      ss.last = st.last;
      ss.elevated_steps = st.elevated_steps;
      ss.z = st.z;
      ss.p_value = st.p_value;
      ss.q_value = st.q_value;
      ss.observed_ns = st.observed_ns;
      ss.baseline_ns = st.baseline_ns;
      ss.ratio = st.ratio;
      ss.job_slowdown = st.job_slowdown;
      ss.ranks = stage_ranks[static_cast<std::size_t>(st.rank)];
      // Which kernels slowed: per key, the stage's median duration per launch inside the claim
      // against outside it, weighted by launches into time lost per step.
      std::vector<std::pair<double, std::pair<std::size_t, double>>> lost;
      std::vector<double> col, in, outside, launches;
      for (std::size_t key = 0; key < m.kernel_names.size(); ++key) {
        if (m.kernel_classes[key] == kernel_class::communication) continue;
        in.clear();
        outside.clear();
        launches.clear();
        for (std::size_t s = 0; s < S; ++s) {
          col.clear();
          for (int r : ss.ranks)
            if (const auto* ks = win.find(r, s, key); ks && ks->count) {
              col.push_back(detail::per_launch(*ks));
              if (s >= ss.first && s <= ss.last) launches.push_back(static_cast<double>(ks->count));
            }
          if (col.empty()) continue;
          (s >= ss.first && s <= ss.last ? in : outside).push_back(stats::median(col));
        }
        if (in.empty() || outside.empty()) continue;
        const double a = stats::median(in), b = stats::median(outside);
        if (b > 0 && a > b) lost.push_back({(a - b) * stats::median(launches), {key, a / b}});
      }
      std::sort(lost.begin(), lost.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
      for (std::size_t i = 0; i < lost.size() && i < 5; ++i) ss.kernels.push_back(lost[i].second);
      out.stages.push_back(std::move(ss));
    }
  }
  return out;
}

}  // namespace failslow::diagnose
