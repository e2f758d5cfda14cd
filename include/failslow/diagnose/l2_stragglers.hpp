// failslow/diagnose/l2_stragglers.hpp -- L2: which rank holds the job back, in which phase,
// from which step; and never the ranks that only wait for it.
//
// Synopsis
//   l2_result find_stragglers(model, topo, l1, options)
//   Comparable ranks: for each phase the routing rules (core/routing.hpp) give the dimensions
//   along which ranks do the same work (compute: same pipeline stage and tp index, i.e.
//   cp+ep+dp); a group with fewer than min_group ranks with data is widened along tp (tensor
//   shards do equal work), else not compared (a note says so).
//   Phases compared: those whose role is work (compute, memory, annotated phases) or idle. The
//   communication phase is never blamed: in a synchronous job a slow rank makes its peers wait
//   inside the next collective, so the culprit shows long work and short collectives and its
//   victims the reverse.
//   Per group G and phase p, steps t, ranks i of G:
//     m_t = median_i x_it,  e_it = x_it - m_t,  s = max(1.4826 median_it |e_it|, resolution * median_t m_t)
//     z_it = e_it / s       (the spread of comparable ranks, pooled over steps: robust to one
//                            slow rank in G, so the culprit cannot hide in its own scale)
//     rel_it = e_it / d_t   (d_t = m_t; for idle, the group's median iteration time: idle is
//                            judged by the share of the step it costs)
//     elevated_it = z_it > z_threshold and rel_it > min_effect
//   Test per (rank, phase): k_i elevated steps of n_i; under "rank i is like its peers" each step
//   is elevated with the peers' rate p_i = (elevated cells of the others) / (their cells), at
//   least P(N(0,1) > z_threshold); p-value P(Binomial(n_i, p_i) >= k_i)
//   (detail/binomial_tail.hpp). Noise that rotates between ranks (GC pauses) raises p_i and
//   gives each rank few elevated steps: no straggler.
//   Persistence: the claim's steps are the run of elevated steps (gaps of at most max_gap
//   steps) with the most elevated steps; it needs at least min_steps elevated steps and a
//   fraction min_fraction of its span.
//   Multiple testing: Benjamini-Hochberg (detect/fdr.hpp) at fdr_q over every (rank, phase)
//   tested in the job.
//   Victim guard: a claim is withheld when the rank's own communication time over the claimed
//   steps is elevated against its peers (median z above z_threshold): it waited, too.
//   One straggler per rank: the phase reported is the annotated phase with the largest excess
//   (time lost, ns) if an annotated phase is significant, else the class phase with the
//   largest excess; the other significant phases are listed (also_slow).
//   Evidence per straggler: observed (median over the claimed steps) vs baseline (the peers'
//   median over the same steps), ratio, median z, p and BH-adjusted q, peers, the rank's
//   communication over its peers' (< 1: the others wait for it), how many ranks of the job
//   wait for it (communication up, against their own steps outside the claim or, with no such
//   steps, against the straggler's, by half the job's loss per step over the claim, or a
//   quarter of the straggler's excess when L1 measured no loss), the group's CV in the phase
//   during and before the claim, and job_slowdown (L1: the job's time lost over the steps).
//   phase_cv: per phase, the median over groups and steps of the CV across comparable ranks
//   (ARGUS L2's "phase where ranks disagree").
// Accuracy: with S steps and the defaults a healthy rank is called a straggler only if three
//   or more of its steps exceed 3.5 robust scales and 3 % of its peers' median while its peers'
//   rarely do; the FDR over all tests is at most fdr_q when the p-values are valid.
// Complexity: O(phases x ranks x steps log(group size)).
// Errors: invalid_argument for options out of range; a topology whose world size differs from
//   the model's throws invalid_argument.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/core/routing.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/detect/fdr.hpp"
#include "failslow/diagnose/detail/binomial_tail.hpp"
#include "failslow/diagnose/job_model.hpp"
#include "failslow/diagnose/l1_windows.hpp"
#include "failslow/stats/descriptive.hpp"

namespace failslow::diagnose {

struct l2_options {
  double z_threshold = 3.5;    ///< robust z of an elevated step (Iglewicz-Hoaglin's cut-off)
  double min_effect = 0.03;    ///< ... and at least 3 % over the peers' median
  std::size_t min_steps = 3;   ///< elevated steps a claim needs (persistence)
  double min_fraction = 0.6;   ///< elevated fraction of the claimed span
  std::size_t max_gap = 1;     ///< normal steps allowed inside a claimed span
  double fdr_q = 0.01;         ///< Benjamini-Hochberg level over all (rank, phase) tests
  std::size_t min_group = 3;   ///< comparable ranks with data needed (the rank included)
  double min_phase_ns = 1000;  ///< phases whose peers' median is below this are not compared
  double resolution = 1e-3;    ///< the robust scale is at least this fraction of the median
  router routing = router::defaults();
};

struct straggler {
  int rank = -1;
  std::size_t phase = 0;            ///< model phase index reported
  std::string group;                ///< "dp:3", "stage:1", "" (whole job)
  std::string compared_within;      ///< the dimensions compared along, e.g. "cp+ep+dp"
  std::vector<int> peers;           ///< comparable ranks with data, without the rank
  std::size_t first = 0, last = 0;  ///< claimed steps (model step indices)
  std::size_t elevated_steps = 0;
  double observed_ns = 0, baseline_ns = 0, ratio = 1, z = 0;
  double p_value = 1, q_value = 1;
  double excess_ns = 0;  ///< observed - baseline
  double communication_ratio = std::numeric_limits<double>::quiet_NaN();
  std::size_t waiting_ranks = 0;
  double group_cv = 0, group_cv_before = std::numeric_limits<double>::quiet_NaN();
  double job_slowdown = 0;
  std::vector<std::pair<std::size_t, double>> also_slow;  ///< (phase, ratio) also significant
};

struct phase_disagreement {
  std::size_t phase = 0;
  double cv = 0;  ///< median over groups and steps of the CV across comparable ranks
};

struct l2_result {
  std::vector<straggler> stragglers;  ///< by job_slowdown, then z
  std::vector<phase_disagreement> phase_cv;
  std::size_t tests = 0;
  std::vector<std::string> notes;
};

namespace detail {

inline void check(const l2_options& o) {
  if (!(o.z_threshold > 0) || !(o.min_effect >= 0) || o.min_steps == 0 || !(o.min_fraction > 0) ||
      !(o.min_fraction <= 1) || !(o.fdr_q > 0) || !(o.fdr_q <= 1) || o.min_group < 2 || !(o.min_phase_ns >= 0) ||
      !(o.resolution >= 0))
    throw invalid_argument(
        "l2_options: z_threshold > 0, min_effect >= 0, min_steps >= 1, min_fraction in (0, 1], "
        "fdr_q in (0, 1], min_group >= 2, min_phase_ns >= 0, resolution >= 0");
}

/// "dp:3" / "stage:1" when the compared dimensions (those of size > 1) are one communication
/// dimension or a whole stage; "" otherwise.
inline std::string group_label(const topology& topo, int rank, dim_set scope) {
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

inline double finite_median(std::vector<double>& v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x); }), v.end());
  return v.empty() ? std::numeric_limits<double>::quiet_NaN() : stats::median(v);
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

}  // namespace detail

inline l2_result find_stragglers(const job_model& m, const topology& topo, const l1_result* l1,
                                 const l2_options& o = {}) {
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

  // Build every (group, phase) comparison.
  std::vector<detail::comparison> comps;
  std::map<std::string, int> too_small;  // note per phase/scope
  for (std::size_t p = 0; p < P; ++p) {
    const auto& ph = m.phases[p];
    if (ph.role == phase_role::wait) continue;
    auto scope = o.routing.scope(routing_subject::phase, ph.name, ph.cls);
    if (!scope) continue;
    std::vector<bool> done(m.rank_count(), false);
    for (int r : present) {
      if (done[static_cast<std::size_t>(r)]) continue;
      dim_set sc = *scope;
      auto group = topo.group(r, sc);
      auto with_data = [&](const std::vector<int>& g) {
        std::vector<int> v;
        for (int x : g)
          if (m.has_rank[static_cast<std::size_t>(x)]) v.push_back(x);
        return v;
      };
      auto members = with_data(group);
      if (members.size() < o.min_group && topo.size(parallel_dim::tp) > 1 && !sc.contains(parallel_dim::tp)) {
        sc = sc | dim_set{parallel_dim::tp};
        group = topo.group(r, sc);
        members = with_data(group);
      }
      for (int x : group) done[static_cast<std::size_t>(x)] = true;
      if (members.size() < o.min_group) {
        ++too_small[ph.name];
        continue;
      }
      detail::comparison c;
      c.members = members;
      c.phase = p;
      c.group = detail::group_label(topo, r, sc);
      c.scope = sc.to_string();
      comps.push_back(std::move(c));
    }
  }
  for (const auto& [name, count] : too_small)
    out.notes.push_back("L2: " + std::to_string(count) + " group(s) have fewer than " + std::to_string(o.min_group) +
                        " comparable ranks with data for phase '" + name + "': not compared");

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
  };
  std::vector<candidate> cands;
  std::vector<double> pvals;
  for (std::size_t ci = 0; ci < comps.size(); ++ci) {
    const auto& c = comps[ci];
    const std::size_t G = c.members.size();
    std::vector<std::uint64_t> k(G, 0), n(G, 0);
    std::uint64_t K = 0, N = 0;
    for (std::size_t i = 0; i < G; ++i) {
      for (std::size_t s = 0; s < S; ++s)
        if (std::isfinite(c.z[i][s])) {
          ++n[i];
          k[i] += c.elevated[i][s] ? 1 : 0;
        }
      K += k[i];
      N += n[i];
    }
    for (std::size_t i = 0; i < G; ++i) {
      ++out.tests;
      candidate cand{ci, i, 0, 0, 0, 1.0};
      // The run with the most elevated steps, gaps of at most max_gap.
      std::size_t s = 0;
      while (s < S) {
        if (!c.elevated[i][s]) {
          ++s;
          continue;
        }
        std::size_t e = s, count = 1, gap = 0;
        for (std::size_t t = s + 1; t < S; ++t) {
          if (c.elevated[i][t]) {
            e = t;
            ++count;
            gap = 0;
          } else if (++gap > o.max_gap) {
            break;
          }
        }
        if (count > cand.elevated) {
          cand.first = s;
          cand.last = e;
          cand.elevated = count;
        }
        s = e + 1;
      }
      const bool persistent =
          cand.elevated >= o.min_steps &&
          static_cast<double>(cand.elevated) >= o.min_fraction * static_cast<double>(cand.last - cand.first + 1);
      if (persistent && n[i] > 0) {
        const double rate = N > n[i] ? static_cast<double>(K - k[i]) / static_cast<double>(N - n[i]) : 0.0;
        cand.p = detail::binomial_upper_tail(k[i], n[i], std::max(rate, p_floor));
      }
      pvals.push_back(cand.p);
      cands.push_back(cand);
    }
  }
  if (cands.empty()) return out;
  const auto fdr = detect::false_discovery_control(pvals, o.fdr_q);

  // Communication of member i over steps [a, b] against the other members': median z (on the
  // group's pooled robust scale of communication) and median ratio.
  auto comm_check = [&](const detail::comparison& c, std::size_t i, std::size_t a, std::size_t b) {
    std::vector<double> med(S, nan), abs_e;
    for (std::size_t s = 0; s < S; ++s) {
      col.clear();
      for (int r : c.members) col.push_back(m.phase_ns(static_cast<std::size_t>(r), communication_phase, s));
      med[s] = detail::finite_median(col);
      for (int r : c.members) {
        const double x = m.phase_ns(static_cast<std::size_t>(r), communication_phase, s);
        if (std::isfinite(x) && std::isfinite(med[s])) abs_e.push_back(std::fabs(x - med[s]));
      }
    }
    std::vector<double> meds = med;
    const double level = detail::finite_median(meds);
    const double scale = std::max({abs_e.empty() ? 0.0 : stats::mad_to_sigma * stats::median(abs_e),
                                   o.resolution * (std::isfinite(level) ? level : 0.0), 1.0});
    std::vector<double> zs, ratios;
    for (std::size_t s = a; s <= b; ++s) {
      const double own = m.phase_ns(static_cast<std::size_t>(c.members[i]), communication_phase, s);
      if (!std::isfinite(own) || !std::isfinite(med[s])) continue;
      if (med[s] > 0) ratios.push_back(own / med[s]);
      zs.push_back((own - med[s]) / scale);
    }
    return std::make_pair(zs.empty() ? nan : stats::median(zs), ratios.empty() ? nan : stats::median(ratios));
  };

  // Significant claims, grouped by rank.
  std::map<int, std::vector<std::size_t>> by_rank;
  for (std::size_t j : fdr.rejected) by_rank[comps[cands[j].comp].members[cands[j].member]].push_back(j);
  const std::size_t R = m.rank_count();
  for (auto& [rank, js] : by_rank) {
    std::vector<straggler> claims;
    for (std::size_t j : js) {
      const auto& cand = cands[j];
      const auto& c = comps[cand.comp];
      straggler st;
      st.rank = rank;
      st.phase = c.phase;
      st.group = c.group;
      st.compared_within = c.scope;
      for (int x : c.members)
        if (x != rank) st.peers.push_back(x);
      st.first = cand.first;
      st.last = cand.last;
      st.elevated_steps = cand.elevated;
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
      const auto [comm_z, comm_ratio] = comm_check(c, cand.member, cand.first, cand.last);
      st.communication_ratio = comm_ratio;
      if (std::isfinite(comm_z) && comm_z > o.z_threshold) {
        out.notes.push_back("L2: rank " + std::to_string(rank) + " is slow in '" + m.phases[c.phase].name +
                            "' but also waits in collectives more than its peers: not called a straggler");
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
  std::sort(out.stragglers.begin(), out.stragglers.end(), [](const straggler& a, const straggler& b) {
    return a.job_slowdown != b.job_slowdown ? a.job_slowdown > b.job_slowdown : a.z > b.z;
  });
  return out;
}

}  // namespace failslow::diagnose
