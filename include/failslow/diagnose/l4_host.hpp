// failslow/diagnose/l4_host.hpp -- L4 on the host side: steps in which a rank's GPU sat idle
// because its host stopped launching (JIT compilation, garbage collection, a data-loader stall,
// a host that recorded nothing), and hosts that launch late.
//
// Synopsis
//   measure_host_activity(model, set, options)   traces only: fills model.host from each
//     rank's trace (trace/idle.hpp launch gaps, trace/steps.hpp steps):
//       gaps[rank]            per step, the largest launch gap (two consecutive kernel launches
//                             of the rank's host, at least options.min_gap_ns apart) in which the
//                             GPU ran nothing, with the GPU idle time in it, the CPU time covered
//                             by host operators (union) and the top operators by time; a gap
//                             belongs to the step whose CPU range holds the launch that ends it
//       new_kernels(r, s)     kernel names the rank launches for the first time in step s (0 in
//                             its first step: everything is new there), with up to
//                             options.new_kernel_names of them
//       launch_interval_ns(r, s)  the median time between consecutive launch calls in the step:
//                             the host's pace (NaN where the step launched fewer than 2 kernels)
//   find_host_stalls(model, options)   the stalls that stand out, grouped:
//     A rank's step is a stall when the GPU idle x of its largest gap exceeds the rank's own
//     median over its steps (its first step, warm-up, excluded) by at least
//     max(min_stall_ns, min_fraction x the rank's median iteration), and stands out both in
//     absolute and in relative terms, z >= options.z and z_rel >= options.z:
//       z     = excess / max(1.4826 MAD(x), scale_floor x median iteration)
//       z_rel = (ln x' - median ln x') / max(1.4826 MAD(ln x'), the median of that spread
//               over the job's ranks, relative_floor),
//               x' = max(x, min_stall_ns): steps without a gap count as the smallest stall
//     Host work varies multiplicatively (a data loader's batch, Python between launches), so
//     in a host-paced job idle of 1-3 ms per step has a right tail that the absolute z alone
//     takes for stalls (a 2.7 ms step against a 1.5 ms median reached z 6 in 1 of 1,856
//     rank-steps of a healthy simulated job; z_rel 4.6); a real stall is far out on both.
//     From traces x' must also stand out among every judged step of the job: ln x', the
//     logarithm of a maximum over a step's gaps, follows a Gumbel law fitted by quartiles over
//     the judged (rank, step)s (b = IQR / 1.5725, mu = median - 0.3665 b), and x' must reach
//     mu - b ln(-ln(1 - job_alpha / n)), n the steps judged (for a step that launched new
//     kernels, the steps that did): a family-wise false-alarm rate job_alpha where the per-rank
//     z above has none. Per cause, the k steps with the smallest upper tails t under that law
//     stand out when P(Binomial(n, t_k) >= k) <= job_alpha (k = 1: the level above; k > 1: a
//     pause that recurs is judged by how many steps reach its tail). A rank's MAD over 30 steps
//     does not see the host's rare long gaps; the job's steps do (noise x2 of the calibrated
//     simulated job: an 18.6 ms gap, z 28, where this level is 60 ms; an 18 ms pause at noise
//     x1, where it is 10 ms, is found).
//     Cause, in this order: jit_compilation when the step launched kernels the rank had never
//     launched; else, when host operators cover at least busy_fraction of the gap, by the top
//     operator's name: garbage_collection ("gc", "garbage"), data_loader ("dataloader",
//     "__next__", "data_loader"), else host_busy; else host_absent (the host recorded nothing:
//     a garbage-collection pause outside profiled operators, preemption, paging).
//     Models of window summaries (.fsum; no host events, m.host unmeasured): x is the step's
//     GPU idle (the idle phase, period - the kernels' summed durations), the same tests apply,
//     and a rank's step counts only when at most max(1, local_share x ranks) ranks idled by
//     half its excess or more in it (without the host's launch gaps a rank-local stall cannot be told
//     from a bubble every rank of other stages waits in) and the job's median iteration in it
//     exceeds the job's median pace by max(a tenth of the excess, 3 x 1.4826 MAD of the job's
//     iterations) -- the stall held the job back -- or z_rel >= 2 z (idle that delayed no one
//     and is within a few spreads of the host's jitter is, from summaries, as likely a data
//     loader's tail on a rank with slack); cause jit_compilation when the
//     rank's window holds kernel keys its earlier windows did not, else host_unrecorded.
//     Traces without GPU activity (a CPU job; model.measured_on_host) have no launches: their
//     idle phase, the time no profiled operator ran, is x and the same tests apply, cause
//     host_absent (host_stall::on_host), and x must exceed the far-out fence of the other
//     ranks' routine idle, q95 + 3 (q95 - q50) of their judged steps (hosts that hiccup 4-10 ms
//     in a fifth of their steps against a steady 1 ms: every hiccup passes the tests above).
//     Recurring pauses: a pause in a quarter of a rank's steps shifts the median of its ln x'
//     and doubles their MAD, so each stays under z_rel's bar (80 ms every 4 steps on a host
//     that idles 1.5-10 ms: z_rel 2-4). A step that passes every other test with z_rel_clean >=
//     recurring_z, z_rel_clean taken against the rank's steps that are not absolute outliers
//     (excess under the bar or z < options.z), is a stall when its rank has period_min or more
//     such steps (those over the bar included) and P(Binomial(n, rate) >= k) <= job_alpha /
//     ranks judged, rate the Jeffreys estimate (k' + 1/2) / (n' + 1) from the other ranks'
//     steps: the count is the evidence, judged against how often the job's other hosts do it.
//     Occurrences of one cause in the same step form one stall (its ranks); a cause that
//     occurs in period_min or more steps forms one recurring stall, periodic with period p when
//     every step difference is a multiple of p and most are exactly p.
//   late_launch(model, rank, peers, first, last)   for a rank whose GPU idles: its launch
//     interval against its peers' (medians over [first, last]) -- the host launches late when
//     the ratio is large while kernel durations are unchanged (diagnose.hpp adds it to an
//     idle-phase straggler's evidence).
// Complexity: measure O(n log n) per trace; find O(ranks x steps log steps).
// Accuracy: gaps are measured on each rank's own clock (no alignment needed); a gap's GPU idle
//   counts the time no activity of the rank ran on any stream.
// Errors: invalid_argument for thresholds out of range (negative times, z or fractions <= 0,
//   busy_fraction outside [0, 1], period_min < 2, local_share outside (0, 1]).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/detail/enum_count.hpp"
#include "failslow/diagnose/job_model.hpp"
#include "failslow/trace/trace_set.hpp"

namespace failslow::diagnose {

struct host_measure_options {
  std::int64_t min_gap_ns = 1000000;  ///< launch gaps shorter than this are not measured
  std::size_t top_ops = 3;            ///< host operators kept per gap
  std::size_t new_kernel_names = 3;   ///< names kept per (rank, step)
};

/// Why a host stopped launching.
enum class host_cause : std::uint8_t {
  jit_compilation,
  garbage_collection,
  data_loader,
  host_busy,
  host_absent,
  host_unrecorded  ///< window summaries: the GPU idled, the source keeps no host events to say why
};
/// Number of host_cause values (they are 0 .. host_cause_count - 1).
inline constexpr std::size_t host_cause_count = 6;

constexpr const char* to_string(host_cause c) noexcept {
  switch (c) {
    case host_cause::jit_compilation:
      return "jit_compilation";
    case host_cause::garbage_collection:
      return "garbage_collection";
    case host_cause::data_loader:
      return "data_loader";
    case host_cause::host_busy:
      return "host_busy";
    case host_cause::host_absent:
      return "host_absent";
    case host_cause::host_unrecorded:
      return "host_unrecorded";
  }
  return "host_absent";
}
static_assert(failslow::detail::enum_count_matches<host_cause>(host_cause_count),
              "host_cause_count is not the number of host_cause values");

struct host_stall_options {
  std::int64_t min_stall_ns = 1000000;  ///< an excess below this is not a stall
  double min_fraction = 0.05;           ///< nor one below this share of the rank's median iteration
  double z = 5;                         ///< robust z of the excess against the rank's own steps
  double scale_floor = 0.01;            ///< spread floor, share of the median iteration
  double relative_floor = 0.05;         ///< spread floor of ln(idle) (z_rel)
  /// A rank's steps with z_rel at least this (and every other test passed) are stalls when the
  /// rank has period_min or more of them: a pause that recurs on one host widens its own spread.
  double recurring_z = 3;
  double busy_fraction = 0.5;  ///< host operators cover this share of the gap: host busy
  std::size_t period_min = 3;  ///< steps of one cause that make a recurring stall
  /// Window summaries only: an idle excess that more than this share of the ranks reach by half
  /// in the same step is the job's (a pipeline bubble, a synchronised pause), not a rank's stall.
  double local_share = 0.25;
  /// Traces only: a stall's idle must also stand out from every judged step's, at this
  /// family-wise false-alarm rate over the steps judged (see the synopsis).
  double job_alpha = 0.01;
};

/// One rank's stalled step.
struct host_occurrence {
  int rank = -1;
  std::size_t step = 0;  ///< model step index
  double gpu_idle_ns = 0, excess_ns = 0, z = 0, cpu_busy_fraction = 0;
};

/// Stalls of one cause: one step, or recurring over several.
struct host_stall {
  host_cause cause = host_cause::host_absent;
  std::vector<host_occurrence> occurrences;  ///< by step, then rank
  std::vector<int> ranks;                    ///< ascending
  std::vector<std::int64_t> steps;           ///< step numbers, ascending
  std::int64_t period_steps = 0;             ///< > 0: recurs every this many steps
  double gpu_idle_ns = 0;                    ///< median over occurrences
  double excess_ns = 0;                      ///< summed over occurrences
  double cpu_busy_fraction = 0;              ///< median over occurrences
  double z = 0;                              ///< the largest
  bool from_idle_phase = false;              ///< measured from the idle phase (summaries, CPU traces)
  bool on_host = false;                      ///< CPU traces: gpu_idle_ns is time no profiled operator ran
  double job_slowdown = 0;                   ///< excess / the job's median iteration summed over first..last
  double caused_wait_ns = 0;                 ///< others' wait blamed on its ranks in its steps (L4 waits; 0 without)
  std::vector<std::pair<std::string, double>> top_ops;  ///< host operators in the gaps, summed
  std::vector<std::string> new_kernels;                 ///< kernels first launched there
};

struct host_stall_result {
  std::vector<host_stall> stalls;  ///< by first step
  std::vector<std::string> notes;
};

/// Fills m.host from the traces the model was built from (see the synopsis).
FAILSLOW_FUNC void measure_host_activity(job_model& m, const trace::trace_set& set, const host_measure_options& o = {});

/// The host stalls of a model measured by measure_host_activity or, for a model of window
/// summaries (no host events), from its idle phase (see the synopsis).
FAILSLOW_FUNC host_stall_result find_host_stalls(const job_model& m, const host_stall_options& o = {});

/// A rank's launch pace against its peers' over model steps [first, last]: (rank's median
/// launch interval, peers' median, ratio); NaN figures when either side has none.
struct launch_pace {
  double rank_ns = std::numeric_limits<double>::quiet_NaN();
  double peers_ns = std::numeric_limits<double>::quiet_NaN();
  double ratio = std::numeric_limits<double>::quiet_NaN();
};

FAILSLOW_FUNC launch_pace late_launch(const job_model& m, int rank, const std::vector<int>& peers, std::size_t first,
                                      std::size_t last);

}  // namespace failslow::diagnose

#if FAILSLOW_HEADER_ONLY
#include "failslow/diagnose/impl/l4_host.ipp"
#endif
