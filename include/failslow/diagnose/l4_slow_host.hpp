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

#include <cstddef>
#include <string>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/diagnose/job_model.hpp"
#include "failslow/diagnose/l2_stragglers.hpp"

namespace failslow::diagnose {

/// L2's options for the launch pace: an elevated step is 50 % slower than the peers' median
/// (healthy hosts of one program differ by a few percent per step; a degraded one by several
/// times); the pace is not a share of the step, and a rank with peers is compared with them.
FAILSLOW_FUNC l2_options default_slow_host_test();

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

/// L4 hosts: the ranks whose hosts launch their kernels slower than their peers' hosts (synopsis).
FAILSLOW_FUNC slow_host_result find_slow_hosts(const job_model& m, const topology& topo,
                                               const slow_host_options& o = {});

}  // namespace failslow::diagnose

#if FAILSLOW_HEADER_ONLY
#include "failslow/diagnose/impl/l4_slow_host.ipp"
#endif
