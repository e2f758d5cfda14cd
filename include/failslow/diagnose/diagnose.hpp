// failslow/diagnose/diagnose.hpp -- the progressive diagnosis: L1 slow windows, L2 stragglers,
// L3 degraded kernels, links and stages and L4 who-waits-for-whom, composed into a
// failslow.report/1 report.
//
// Synopsis
//   report diagnose(model, topo, options)
//   Runs find_slow_windows (l1_windows.hpp), find_stragglers (l2_stragglers.hpp) and, when the
//   model kept per-step kernel summaries (model_options::keep_windows), find_degraded
//   (l3_degraded.hpp) on the model (job_model.hpp), and find_holdbacks (l4_waits.hpp) when the
//   model carries wait attribution (models from traces), and turns what they found into findings
//   (core/report.hpp), sorted by
//   severity; every threshold is in diagnose_options (l1, l2), with its default documented
//   there. options.topology_source says where the layout came from (the report repeats it).
//   Findings and their score:
//     L1 slow_window   ranks [] (the job) or [r] (one rank's own series); score = observed /
//                      baseline iteration time (peak / baseline for spikes, warm-up and
//                      recurring spikes); evidence: pattern, baseline_ns, observed_ns, peak_ns,
//                      peak_step, noise_ns, z, ratio, job_slowdown, slope_ns_per_step, steps
//                      (the slow steps), gate_peak_ratio
//     L2 straggler     ranks [r], group (the compared group, e.g. "dp:3"), phase; score = the
//                      median robust z over the claimed steps; evidence: observed_ns,
//                      baseline_ns, ratio, z, p_value, q_value, peers, elevated_steps,
//                      communication_ratio, waiting_ranks, group_cv, group_cv_before,
//                      job_slowdown, compared_within, also_slow, elevated_z (only for a
//                      claim of L2's moderate count: the z bar its elevated_steps are over)
//     L3 degraded_kernel  ranks [r], group, kernel (the costliest), phase (its class); score =
//                      the median robust z of its W1 over the claimed steps; evidence:
//                      observed_ns, baseline_ns (mean per launch: rank, peers), ratio, w1_ns,
//                      peer_w1_ns (the group's own spread), w1_to_peers_ns, launches_per_step,
//                      lost_ns_per_step, z, p_value, q_value, elevated_steps, peers,
//                      job_slowdown, compared_within, also_degraded, detector ("cross-rank",
//                      "ewma-trend", or "pooled": every compute kernel of the rank, with
//                      pooled_keys and pooled_ratio, the index's change; only where no other
//                      finding names the rank)
//     L3 degraded_link group ("dp:3", "tp:5"), kernel (the collective), phase communication;
//                      score = median robust z; evidence: transfer_ns, baseline_transfer_ns,
//                      ratio, wait_ns, z, p_value, q_value, elevated_steps, group_ranks,
//                      job_slowdown, compared_within, transfer_from ("collective instances"
//                      from traces, else "kernel summaries"), also_slow
//     L3 slow_stage    group ("stage:2"; a role under a guessed layout: ranks [...] instead),
//                      kernel (the one that lost most time); score = z;
//                      evidence: observed_ns, baseline_ns, ratio, z, p_value, q_value,
//                      elevated_steps, stage_ranks, job_slowdown, kernels
//     L4 holds_back    ranks [r], phase (what it ran before arriving late); score = robust z
//                      of its caused wait (l4_waits.hpp); evidence: z, elevated_steps,
//                      job_slowdown, caused_wait_ns_per_step, wait_per_victim_ns,
//                      late_ns_per_step, peer_late_ns_per_step, victims, top_victims,
//                      before_late_arrival. Only when no L2/L3 finding names the rank; on
//                      those findings the same wait-for evidence is added instead. Nor when
//                      an L2/L3 finding names a rank of its pipeline (its place in another
//                      stage) from its first step, within a step: the delay passed on through
//                      their transfers (a note).
//     L4 host_stall    ranks (those that stalled), phase = the cause (jit_compilation,
//                      garbage_collection, data_loader, host_busy, host_absent,
//                      host_unrecorded; l4_host.hpp); kernel (jit_compilation): the first
//                      kernel launched for the first time; score = the largest robust z; evidence:
//                      cause, gpu_idle_ns, excess_ns, cpu_busy_fraction (traces), z, steps,
//                      period_steps (0: not periodic), job_slowdown, caused_wait_ns, host_ops,
//                      new_kernels. From traces' launch gaps, or from summaries' idle phase
//                      (rank-local stalls only; cause jit_compilation or host_unrecorded), or
//                      from CPU traces' idle phase (no GPU: cause host_absent, "ran no
//                      profiled operator for X").
//     An L2 straggler in the idle phase whose host launches options.late_launch_ratio or more
//     slower than its peers' (l4_host.hpp late_launch) gets evidence launch_interval_ns,
//     peer_launch_interval_ns, launch_interval_ratio and the words "its host launches late".
//     L4 slow_host     ranks [r], phase "launch interval" (l4_slow_host.hpp: its host's pace
//                      against its peers', traces only); score = median robust z; evidence:
//                      launch_interval_ns, peer_launch_interval_ns, launch_interval_ratio,
//                      gpu_idle_ns, peer_gpu_idle_ns, z, p_value, q_value, elevated_steps,
//                      compared_within. Only when no L2 idle-phase finding names the rank over
//                      those steps (that one carries the pace).
//     L1 recurring windows with a regular period add period_steps.
//   A finding that names one rank (straggler, degraded_kernel, holds_back) or a stage
//     (slow_stage) in a pipeline, with wait attribution, gets pipeline_wait_change_ns (per stage,
//     l4_waits.hpp pipeline_wait_change) and, when another stage's transfers wait 1 % of a step
//     more, pipeline_bubble_ns (the largest) and the words "the pipeline waits for stage s".
//   Co-occurring findings: findings of different kinds (not two L1 windows) that share at least
//     two steps, or the one step of a single-step finding, name each other in evidence
//     "co_occurs_with" (their kinds and step ranges), so a slow allocator call and all-reduce
//     spikes in the same steps read as one story.
//   A guessed layout (options.layout_assumed) with kept kernel summaries: ranks whose work
//     kernels differ (roles.hpp infer_roles: pipeline stages, the LM head) are compared in L2
//     and L3 only within their role, and a note lists the roles.
//   Notes collect what the levels could not do (too few steps, ranks without peers, missing
//   ranks) so that a report without findings says why.
// Complexity: that of the levels.
// Errors: the levels' invalid_argument (options, a topology of another world size).
#pragma once

#include <string>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/report.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/diagnose/job_model.hpp"
#include "failslow/diagnose/l1_windows.hpp"
#include "failslow/diagnose/l2_stragglers.hpp"
#include "failslow/diagnose/l3_degraded.hpp"
#include "failslow/diagnose/l4_host.hpp"
#include "failslow/diagnose/l4_slow_host.hpp"
#include "failslow/diagnose/l4_waits.hpp"
#include "failslow/diagnose/roles.hpp"

namespace failslow::diagnose {

struct diagnose_options {
  l1_options l1;
  l2_options l2;
  l3_options l3;
  l4_options l4;
  host_stall_options host;
  role_options roles;                     ///< how ranks' roles are told apart under a guessed layout (roles.hpp)
  double late_launch_ratio = 1.5;         ///< an idle-phase straggler whose host launches this much slower: late launch
  slow_host_options slow_hosts;           ///< hosts that launch slower than their peers' (l4_slow_host.hpp)
  std::string topology_source = "given";  ///< repeated in the report: "flags", "pg_config", ...
  bool layout_assumed = false;            ///< the layout was guessed: l2_options::layout_assumed
};

/// L1 + L2 on a model; the report of failslow.report/1.
FAILSLOW_FUNC report diagnose(const job_model& m, const topology& topo, const diagnose_options& o = {});

}  // namespace failslow::diagnose

#if FAILSLOW_HEADER_ONLY
#include "failslow/diagnose/impl/diagnose.ipp"
#endif
