// failslow/diagnose/impl/l4_slow_host.ipp -- the definitions of diagnose/l4_slow_host.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/diagnose/l3_degraded.hpp"
#include "failslow/diagnose/l4_slow_host.hpp"

namespace failslow::diagnose {

FAILSLOW_FUNC_DEF l2_options default_slow_host_test() {
  l2_options o;
  o.min_effect = 0.5;
  o.min_step_share = 0;
  o.own_history_with_peers = false;
  o.moderate_count = false;  // a launch pace is no phase under scheduling noise (l3_degraded.hpp)
  return o;
}

FAILSLOW_FUNC_DEF slow_host_result find_slow_hosts(const job_model& m, const topology& topo,
                                                   const slow_host_options& o) {
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
