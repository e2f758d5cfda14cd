// failslow/sim/scenario.hpp -- fail-slow scenarios and the faults they inject.
//
// Synopsis
//   scenario names a situation; plan_faults(scenario, cfg, options) places its faults in a job
//   (which rank, group or stage, from which step), deterministically from cfg.seed
//   (std::mt19937_64 + rejection sampling, see detail/random.hpp). Each fault is both what
//   the timing model applies and the ground truth written to truth.json.
//
//   scenario            fault(s)                                   base effect f
//   healthy             none
//   compute-straggler   one rank: every compute kernel x f         1.5
//   masked-straggler    one rank outside the last pipeline stage   1.1
//                       (the slowest stage carries the LM head, so the others have slack
//                       and the extra time hides in pipeline/communication waits)
//   dp-link             one dp group: DP reduce-scatter and        4.0 (transfer time)
//                       all-gather transfers x f (the wait they cause is not scaled)
//   tp-link             one tp group: TP all-reduce transfers x f  3.0
//   slow-stage          every rank of one pipeline stage x f       1.3
//   jit-stall           one rank, one step: a host stall of 450 ms (cpu_op
//                       "CompiledFunction"), then three new Triton kernels
//   thermal-drift       one rank: compute x (1 + (f-1) k/K) in the k-th of K faulty steps  1.6
//   memory-bound        one rank: memory-bound kernels (norms, elementwise, softmax,
//                       embedding, optimizer) x f, GEMMs and attention unchanged           2.0
//   host-launch-delay   one rank: host overhead per launch x f (GPU idles between kernels,
//                       kernel durations unchanged)                                       40
//   gc-pauses           every 4th step from the onset, a 180 ms host pause (cpu_op
//                       "gc.collect") on a different rank: transient faults, no straggler
//   two-faults          compute-straggler on one rank + dp-link on a dp group without it
//   Severity: effective factor 1 + (f - 1) * severity, stalls 450 ms * severity (severity 0
//   keeps the faults in the truth with no effect). The onset is a step index in [0, steps):
//   faults act from ProfilerStep#(first_step + onset) to the last step (default steps / 3).
//   fault::kernels lists the names of the kernels a fault changes; the simulator fills it for
//   compute faults with exactly the kernels it modified.
//   parse_scenario / parse_fault_kind read the names to_string prints (truth.json's "kind").
// Complexity: O(world) for placement.
// Errors: invalid_argument for an unknown scenario name or fault kind, severity < 0 or not
//   finite, onset outside [0, steps), a fault rank outside the world, a scenario the layout cannot host
//   (dp-link needs dp > 1, tp-link tp > 1, slow-stage pp > 1, two-faults dp > 1 with two dp
//   groups or tp > 1).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/detail/enum_count.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/sim/job.hpp"

namespace failslow::sim {

enum class scenario : std::uint8_t {
  healthy,
  compute_straggler,
  masked_straggler,
  dp_link,
  tp_link,
  slow_stage,
  jit_stall,
  thermal_drift,
  memory_bound,
  host_launch_delay,
  gc_pauses,
  two_faults,
};
/// Number of scenario values (they are 0 .. scenario_count - 1).
inline constexpr std::size_t scenario_count = 12;

inline constexpr std::array<scenario, 12> all_scenarios = {
    scenario::healthy,      scenario::compute_straggler, scenario::masked_straggler, scenario::dp_link,
    scenario::tp_link,      scenario::slow_stage,        scenario::jit_stall,        scenario::thermal_drift,
    scenario::memory_bound, scenario::host_launch_delay, scenario::gc_pauses,        scenario::two_faults};

constexpr std::string_view to_string(scenario s) noexcept {
  switch (s) {
    case scenario::healthy:
      return "healthy";
    case scenario::compute_straggler:
      return "compute-straggler";
    case scenario::masked_straggler:
      return "masked-straggler";
    case scenario::dp_link:
      return "dp-link";
    case scenario::tp_link:
      return "tp-link";
    case scenario::slow_stage:
      return "slow-stage";
    case scenario::jit_stall:
      return "jit-stall";
    case scenario::thermal_drift:
      return "thermal-drift";
    case scenario::memory_bound:
      return "memory-bound";
    case scenario::host_launch_delay:
      return "host-launch-delay";
    case scenario::gc_pauses:
      return "gc-pauses";
    case scenario::two_faults:
      return "two-faults";
  }
  return "healthy";
}
static_assert(failslow::detail::enum_count_matches<scenario>(scenario_count),
              "scenario_count is not the number of scenario values");

/// Parses a scenario name (as printed by to_string); throws invalid_argument otherwise.
FAILSLOW_FUNC scenario parse_scenario(std::string_view s);

/// What a fault does.
enum class fault_kind : std::uint8_t {
  compute_straggler,  ///< compute kernels of its ranks x factor
  masked_straggler,   ///< same, small, on a rank with slack
  degraded_link,      ///< collective transfers of its group x factor
  slow_stage,         ///< compute kernels of a whole stage x factor
  jit_stall,          ///< host stall + new kernels, one step
  thermal_drift,      ///< compute x a factor growing linearly to `factor`
  memory_bound,       ///< memory-bound kernels x factor
  host_launch_delay,  ///< host overhead per launch x factor
  gc_pause,           ///< host pause, one step (transient)
};
/// The number of fault kinds (checked against to_string below).
inline constexpr std::size_t fault_kind_count = 9;

constexpr std::string_view to_string(fault_kind k) noexcept {
  switch (k) {
    case fault_kind::compute_straggler:
      return "compute_straggler";
    case fault_kind::masked_straggler:
      return "masked_straggler";
    case fault_kind::degraded_link:
      return "degraded_link";
    case fault_kind::slow_stage:
      return "slow_stage";
    case fault_kind::jit_stall:
      return "jit_stall";
    case fault_kind::thermal_drift:
      return "thermal_drift";
    case fault_kind::memory_bound:
      return "memory_bound";
    case fault_kind::host_launch_delay:
      return "host_launch_delay";
    case fault_kind::gc_pause:
      return "gc_pause";
  }
  return "compute_straggler";
}

static_assert(failslow::detail::enum_count_matches<fault_kind>(fault_kind_count),
              "fault_kind_count is not the number of fault kinds");

/// Parses a fault kind's name (as printed by to_string, e.g. "compute_straggler"); throws
/// invalid_argument naming the kinds otherwise.
FAILSLOW_FUNC fault_kind parse_fault_kind(std::string_view s);

/// One injected fault: what the model applies and what the truth states.
struct fault {
  fault_kind kind = fault_kind::compute_straggler;
  std::vector<int> ranks;                    ///< affected ranks, ascending
  std::string group;                         ///< "dp:3", "tp:5", "stage:2"; empty for single-rank faults
  parallel_dim link_dim = parallel_dim::dp;  ///< degraded_link: the dimension of the group
  int link_group = -1;                       ///< degraded_link: the group's index along link_dim
  std::int64_t first_step = 0;               ///< ProfilerStep number, inclusive
  std::int64_t last_step = 0;                ///< inclusive
  double factor = 1;                         ///< effective slowdown (after severity); 1 for stalls
  double stall_ms = 0;                       ///< effective host stall (jit_stall, gc_pause)
  bool transient = false;                    ///< one-off noise (gc_pause): not a persistent straggler
  std::vector<std::string> kernels;          ///< names of the kernels it changes (empty: none named)
  std::string phase;                         ///< the phase it concerns, when one ("" otherwise)
  std::string description;                   ///< one sentence
};

struct scenario_options {
  double severity = 1.0;  ///< scales each fault's excess effect (see the synopsis)
  int onset = -1;         ///< step index of the onset; -1 = steps / 3
  int fault_rank = -1;    ///< rank of single-rank faults; -1 = drawn from the seed
  int gc_period = 4;      ///< gc-pauses: steps between two pauses (>= 1)
};

/// Base effect sizes before severity scaling.
struct fault_effects {
  static constexpr double compute_straggler = 1.5;
  static constexpr double masked_straggler = 1.1;
  static constexpr double dp_link = 4.0;
  static constexpr double tp_link = 3.0;
  static constexpr double slow_stage = 1.3;
  static constexpr double jit_stall_ms = 450.0;
  static constexpr double thermal_drift = 1.6;
  static constexpr double memory_bound = 2.0;
  static constexpr double host_launch_delay = 40.0;
  static constexpr double gc_pause_ms = 180.0;
};

/// Places the faults of `s` in the job `cfg` (see the file synopsis).
FAILSLOW_FUNC std::vector<fault> plan_faults(scenario s, const job_config& cfg, const scenario_options& opt = {});

}  // namespace failslow::sim

#if FAILSLOW_HEADER_ONLY
#include "failslow/sim/impl/scenario.ipp"
#endif
