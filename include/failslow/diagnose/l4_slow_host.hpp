// failslow/diagnose/l4_slow_host.hpp -- L4 on the host side: a rank whose host launches its
// kernels slower than the hosts of its peers, whether or not its GPU idles for it yet.
//
// Synopsis
//   slow_host_result find_slow_hosts(model, topo, options)
//   Where the model has the hosts' launch pace (traces, by l4_host.hpp's measure_host_activity;
//   summaries whose windows carry it, compress::window_summary::launch): x_rt =
//   launch_interval_ns(r, t), the median time between rank r's consecutive kernel launch calls
//   in step t -- its host's pace. One derived model (as L3's questions, l3_degraded.hpp) with x
//   as its only compared phase goes through L2's test (l2_stragglers.hpp) with options.test:
//   comparable ranks (the routing rules' compute groups: same pipeline stage and tp index, so the
//   same program), pooled robust z, an elevated step min_effect (50 %) over the peers' median,
//   persistence, the binomial test against the peers' rate, Benjamini-Hochberg at fdr_q; a rank
//   without peers against its own history, relative to the others.
//   Why a finding of its own: a host that launches 20x slower in a GPU-bound job (the host ran
//   well ahead of its GPU) costs no step time while the queue of launched kernels lasts, so
//   neither the GPU's idle (L2) nor the waits (L4) show it; the step time does the moment the
//   margin is gone. Where the GPU does idle for it, L2 names the rank as a host-bound straggler
//   and diagnose() adds the launch pace to that finding instead.
//   Evidence per claim: the rank's and its peers' median launch interval over the claim, their
//   ratio, and the rank's and its peers' median GPU idle per step over it (how much of the
//   margin is used).
// Complexity: O(ranks x steps log(group size)) (L2's on one phase).
// Accuracy: a step's launch interval is a median over its launches: a few slow calls (a pause)
//   do not move it; stalls are l4_host.hpp's find_host_stalls.
// Errors: invalid_argument for a topology whose world size differs from the model's, and for
//   options L2 rejects.
#pragma once

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/diagnose/job_model.hpp"
#include "failslow/diagnose/l2_stragglers.hpp"
#include "failslow/diagnose/l3_degraded.hpp"

namespace failslow::diagnose {

/// L2's options for the launch pace: an elevated step is 50 % slower than the peers' median
/// (healthy hosts of one program differ by a few percent per step; a degraded one by several
/// times); the pace is not a share of the step, and a rank with peers is compared with them.
template <class = void>
inline l2_options default_slow_host_test() {
  l2_options o;
  o.min_effect = 0.5;
  o.min_step_share = 0;
  o.own_history_with_peers = false;
  o.moderate_count = false;  // a launch pace is no phase under scheduling noise (l3_degraded.hpp)
  return o;
}

struct slow_host_options {
  l2_options test = default_slow_host_test();
};

/// A rank whose host launches slower than its peers' hosts.
struct slow_host {
  int rank = -1;
  std::vector<int> peers;
  std::string group, compared_within;
  std::size_t first = 0, last = 0, elevated_steps = 0;  ///< model step indices
  double launch_interval_ns = 0;                        ///< median over the claim
  double peer_launch_interval_ns = 0;                   ///< the peers' median over the claim
  double ratio = 0;
  double gpu_idle_ns = 0;       ///< the rank's median GPU idle per step over the claim
  double peer_gpu_idle_ns = 0;  ///< its peers' median
  double z = 0, p_value = 1, q_value = 1;
};

struct slow_host_result {
  std::vector<slow_host> hosts;
  std::vector<std::string> notes;
  std::size_t tests = 0;
};

template <class = void>
inline slow_host_result find_slow_hosts(const job_model& m, const topology& topo, const slow_host_options& o = {}) {
  if (topo.world_size() != m.world_size)
    throw invalid_argument("find_slow_hosts: topology of " + std::to_string(topo.world_size()) +
                           " ranks for a job of " + std::to_string(m.world_size));
  slow_host_result out;
  if (!m.host.launch_pace_measured) return out;
  const std::size_t R = m.rank_count(), S = m.step_count();
  phase_info ph;
  ph.name = "launch interval";
  ph.role = phase_role::work;
  ph.cls = kernel_class::compute;
  ph.annotated = true;  // reported in preference to the (uncompared) class phases
  job_model hm = detail::derived_model(m, R, {ph});
  hm.iteration_ns = m.iteration_ns;
  for (std::size_t r = 0; r < R; ++r)
    for (std::size_t s = 0; s < S; ++s) {
      const double x = m.host.launch_interval_ns(r, s);
      if (!(x > 0)) continue;
      hm.phase_ns(r, class_phase_count, s) = x;
      hm.has_rank[r] = true;
    }
  const auto res = find_stragglers(hm, topo, nullptr, o.test);
  out.tests = res.tests;
  for (const auto& n : res.notes) out.notes.push_back("L4 hosts: " + n.substr(n.rfind("L2: ", 0) == 0 ? 4 : 0));
  for (const auto& st : res.stragglers) {
    if (st.phase != class_phase_count || detail::weak_own_history(st, o.test)) continue;
    slow_host h;
    h.rank = st.rank;
    h.peers = st.peers;
    h.group = st.group;
    h.compared_within = st.compared_within;
    h.first = st.first;
    h.last = st.last;
    h.elevated_steps = st.elevated_steps;
    h.z = st.z;
    h.p_value = st.p_value;
    h.q_value = st.q_value;
    // The pace and the GPU's idle, the rank's and its peers' medians over the claim.
    std::vector<double> own, others, own_idle, others_idle;
    for (std::size_t s = st.first; s <= st.last && s < S; ++s) {
      own.push_back(m.host.launch_interval_ns(static_cast<std::size_t>(st.rank), s));
      own_idle.push_back(m.phase_ns(static_cast<std::size_t>(st.rank), idle_phase, s));
      for (int q : st.peers) {
        others.push_back(m.host.launch_interval_ns(static_cast<std::size_t>(q), s));
        others_idle.push_back(m.phase_ns(static_cast<std::size_t>(q), idle_phase, s));
      }
    }
    h.launch_interval_ns = detail::finite_median(own);
    h.peer_launch_interval_ns = detail::finite_median(others);
    h.ratio = h.peer_launch_interval_ns > 0 ? h.launch_interval_ns / h.peer_launch_interval_ns : st.ratio;
    h.gpu_idle_ns = detail::finite_median(own_idle);
    h.peer_gpu_idle_ns = detail::finite_median(others_idle);
    out.hosts.push_back(std::move(h));
  }
  return out;
}

}  // namespace failslow::diagnose
