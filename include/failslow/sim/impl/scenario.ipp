// failslow/sim/impl/scenario.ipp -- the definitions of sim/scenario.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/sim/detail/random.hpp"
#include "failslow/sim/job.hpp"
#include "failslow/sim/kernels.hpp"
#include "failslow/sim/scenario.hpp"

namespace failslow::sim {

FAILSLOW_FUNC_DEF scenario parse_scenario(std::string_view s) {
  for (scenario x : all_scenarios)
    if (to_string(x) == s) return x;
  std::string list;
  for (scenario x : all_scenarios) list += (list.empty() ? "" : ", ") + std::string(to_string(x));
  throw invalid_argument("unknown scenario '" + std::string(s) + "' (expected one of " + list + ")");
}

FAILSLOW_FUNC_DEF fault_kind parse_fault_kind(std::string_view s) {
  std::string list;
  for (std::size_t i = 0; i < fault_kind_count; ++i) {
    const auto k = static_cast<fault_kind>(i);
    if (to_string(k) == s) return k;
    list += (list.empty() ? "" : ", ") + std::string(to_string(k));
  }
  throw invalid_argument("unknown fault kind '" + std::string(s) + "' (expected one of " + list + ")");
}

namespace detail {

inline std::string join_ranks(const std::vector<int>& r) {
  std::string s;
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(r[i]);
  }
  return s;
}

inline std::string fmt_factor(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", f);
  return buf;
}

/// One placement (plan_faults): the job's layout, the faulty steps [first, last], the
/// severity and the generator seeded from cfg.seed, whose draws, in order, decide where the
/// faults go. One member function per fault family.
class fault_planner {
 public:
  /// Checks the options against the job (see the file synopsis for the errors).
  fault_planner(scenario s, const job_config& cfg, const scenario_options& opt)
      : s_(s), opt_(opt), topo_(validate(cfg)), gen_(key(cfg.seed, 0x5CE4A210ull)) {
    if (!std::isfinite(opt.severity) || opt.severity < 0)
      throw invalid_argument("scenario_options: severity must be finite and >= 0");
    const int onset = opt.onset < 0 ? cfg.steps / 3 : opt.onset;
    if (onset >= cfg.steps)
      throw invalid_argument("scenario_options: onset " + std::to_string(onset) + " outside [0, " +
                             std::to_string(cfg.steps) + ") (a step index, 0 = ProfilerStep#" +
                             std::to_string(cfg.first_step) + ")");
    if (opt.fault_rank >= topo_.world_size())
      throw invalid_argument("scenario_options: fault_rank " + std::to_string(opt.fault_rank) + " outside [0, " +
                             std::to_string(topo_.world_size()) + ")");
    if (opt.gc_period < 1) throw invalid_argument("scenario_options: gc_period must be >= 1");
    first_ = cfg.first_step + onset;
    last_ = cfg.first_step + cfg.steps - 1;
  }

  /// One rank's kernels or launches slowed from the onset on: compute_straggler,
  /// masked_straggler (a rank outside the last pipeline stage), thermal_drift,
  /// memory_bound, host_launch_delay.
  fault slowdown(fault_kind k) {
    switch (k) {
      case fault_kind::masked_straggler: {
        std::vector<int> slack;
        const int pp = topo_.size(parallel_dim::pp);
        for (int r = 0; r < topo_.world_size(); ++r)
          if (pp == 1 || topo_.coordinate(r, parallel_dim::pp) != pp - 1) slack.push_back(r);
        return slowdown_of(k, draw_rank(slack));
      }
      default:
        return slowdown_of(k, draw_rank(everyone()));
    }
  }

  /// A dp or tp group's link degraded (dp-link, tp-link): a group drawn from the seed.
  fault degraded_link(parallel_dim d) {
    need(topo_.size(d) > 1, d == parallel_dim::dp ? "dp > 1" : "tp > 1");
    return link_fault(d, static_cast<int>(uniform_index(gen_, static_cast<std::uint64_t>(topo_.group_count(d)))));
  }

  /// Every rank of one pipeline stage slowed: the fault rank's stage, else one drawn.
  fault slow_stage() {
    need(topo_.size(parallel_dim::pp) > 1, "pp > 1");
    const int st =
        opt_.fault_rank >= 0
            ? topo_.coordinate(opt_.fault_rank, parallel_dim::pp)
            : static_cast<int>(uniform_index(gen_, static_cast<std::uint64_t>(topo_.size(parallel_dim::pp))));
    fault f;
    f.kind = fault_kind::slow_stage;
    f.ranks = topo_.stage(st);
    f.group = "stage:" + std::to_string(st);
    f.first_step = first_;
    f.last_step = last_;
    f.factor = eff(fault_effects::slow_stage);
    f.description = "pipeline stage " + std::to_string(st) + " slow: compute kernels x" + fmt_factor(f.factor) +
                    " from step " + std::to_string(first_);
    return f;
  }

  /// A host stall in the onset step only, then three new Triton kernels.
  fault jit_stall() {
    fault f = rank_fault(fault_kind::jit_stall, draw_rank(everyone()), 1.0, "JIT-compile stall");
    f.last_step = f.first_step;
    f.stall_ms = fault_effects::jit_stall_ms * opt_.severity;
    f.kernels = {std::string(spec_of(kernel_role::triton_fused_0).name),
                 std::string(spec_of(kernel_role::triton_fused_1).name),
                 std::string(spec_of(kernel_role::triton_fused_2).name)};
    f.description += ": " + fmt_factor(f.stall_ms) + " ms host stall, then 3 new Triton kernels";
    return f;
  }

  /// Transient host pauses every gc_period steps from the onset, each on another rank.
  std::vector<fault> gc_pauses() {
    std::vector<fault> out;
    const int world = topo_.world_size();
    int rank = draw_rank(everyone());
    for (std::int64_t st = first_; st <= last_; st += opt_.gc_period) {
      fault f = rank_fault(fault_kind::gc_pause, rank, 1.0, "GC pause");
      f.first_step = f.last_step = st;
      f.stall_ms = fault_effects::gc_pause_ms * opt_.severity;
      f.transient = true;
      f.description =
          fmt_factor(f.stall_ms) + " ms GC pause on rank " + std::to_string(rank) + " in step " + std::to_string(st);
      out.push_back(f);
      // The next pause lands on another rank.
      if (world > 1) {
        const int step_by = 1 + static_cast<int>(uniform_index(gen_, static_cast<std::uint64_t>(world - 1)));
        rank = (rank + step_by) % world;
      }
    }
    return out;
  }

  /// A compute straggler and a degraded link in a dp group without it (tp when dp cannot host it).
  std::vector<fault> two_faults() {
    const int dp_groups = topo_.group_count(parallel_dim::dp);
    need((topo_.size(parallel_dim::dp) > 1 && dp_groups > 1) || topo_.size(parallel_dim::tp) > 1,
         "dp > 1 with at least two dp groups, or tp > 1");
    const int r = draw_rank(everyone());
    std::vector<fault> out{slowdown_of(fault_kind::compute_straggler, r)};
    const parallel_dim d = topo_.size(parallel_dim::dp) > 1 && dp_groups > 1 ? parallel_dim::dp : parallel_dim::tp;
    const int own = topo_.group_index(r, d);
    const int n = topo_.group_count(d);
    int g = own;
    if (n > 1) g = (own + 1 + static_cast<int>(uniform_index(gen_, static_cast<std::uint64_t>(n - 1)))) % n;
    out.push_back(link_fault(d, g));
    return out;
  }

 private:
  double eff(double f) const { return 1.0 + (f - 1.0) * opt_.severity; }

  std::vector<int> everyone() const {
    std::vector<int> r(static_cast<std::size_t>(topo_.world_size()));
    for (std::size_t i = 0; i < r.size(); ++i) r[i] = static_cast<int>(i);
    return r;
  }

  int draw_rank(const std::vector<int>& candidates) {
    if (opt_.fault_rank >= 0) return opt_.fault_rank;
    return candidates[uniform_index(gen_, candidates.size())];
  }

  void need(bool ok, const char* why) const {
    if (!ok)
      throw invalid_argument(std::string("plan_faults: scenario ") + std::string(to_string(s_)) + " needs " + why);
  }

  fault rank_fault(fault_kind k, int rank, double factor, const char* what) const {
    fault f;
    f.kind = k;
    f.ranks = {rank};
    f.first_step = first_;
    f.last_step = last_;
    f.factor = factor;
    f.description = std::string(what) + " on rank " + std::to_string(rank) + " from step " + std::to_string(first_);
    return f;
  }

  /// A one-rank slowdown: its base effect and the words of its description.
  struct slowdown_text {
    double effect;
    const char* what;
    const char* changes;  ///< what the factor multiplies, up to the "x"
    const char* tail;
  };

  static slowdown_text text_of(fault_kind k) {
    switch (k) {
      case fault_kind::compute_straggler:
        return {fault_effects::compute_straggler, "compute straggler", "compute kernels x", ""};
      case fault_kind::masked_straggler:
        return {fault_effects::masked_straggler, "masked straggler", "compute kernels x",
                ", hidden in pipeline and collective waits"};
      case fault_kind::thermal_drift:
        return {fault_effects::thermal_drift, "thermal drift", "compute slows linearly to x", ""};
      case fault_kind::memory_bound:
        return {fault_effects::memory_bound, "memory-bound slowdown", "memory-bound kernels x",
                ", GEMMs and attention unchanged"};
      case fault_kind::host_launch_delay:
        return {fault_effects::host_launch_delay, "host launch delay", "host overhead per launch x",
                ", the GPU idles between kernels"};
      default:
        throw domain_error("plan_faults: " + std::string(to_string(k)) + " is not a one-rank slowdown");
    }
  }

  fault slowdown_of(fault_kind k, int rank) const {
    const slowdown_text t = text_of(k);
    fault f = rank_fault(k, rank, eff(t.effect), t.what);
    f.description += ": " + std::string(t.changes) + fmt_factor(f.factor) + t.tail;
    return f;
  }

  fault link_fault(parallel_dim d, int index) const {
    fault f;
    f.kind = fault_kind::degraded_link;
    f.ranks = topo_.group_members(d, index);
    f.link_dim = d;
    f.link_group = index;
    f.group = std::string(to_string(d)) + ":" + std::to_string(index);
    f.first_step = first_;
    f.last_step = last_;
    f.factor = eff(d == parallel_dim::dp ? fault_effects::dp_link : fault_effects::tp_link);
    if (d == parallel_dim::dp) {
      f.kernels = {std::string(spec_of(kernel_role::nccl_reduce_scatter).name),
                   std::string(spec_of(kernel_role::nccl_all_gather).name)};
      f.phase = "dp-reduce-scatter";
    } else {
      f.kernels = {std::string(spec_of(kernel_role::nccl_allreduce).name)};
    }
    f.description = "link of " + f.group + " (ranks " + join_ranks(f.ranks) + ") degraded: transfers x" +
                    fmt_factor(f.factor) + " from step " + std::to_string(first_);
    return f;
  }

  scenario s_;
  const scenario_options& opt_;
  topology topo_;
  std::mt19937_64 gen_;
  std::int64_t first_ = 0, last_ = 0;
};

}  // namespace detail

FAILSLOW_FUNC_DEF std::vector<fault> plan_faults(scenario s, const job_config& cfg, const scenario_options& opt) {
  detail::fault_planner p(s, cfg, opt);
  switch (s) {
    case scenario::healthy:
      return {};
    case scenario::compute_straggler:
      return {p.slowdown(fault_kind::compute_straggler)};
    case scenario::masked_straggler:
      return {p.slowdown(fault_kind::masked_straggler)};
    case scenario::dp_link:
      return {p.degraded_link(parallel_dim::dp)};
    case scenario::tp_link:
      return {p.degraded_link(parallel_dim::tp)};
    case scenario::slow_stage:
      return {p.slow_stage()};
    case scenario::jit_stall:
      return {p.jit_stall()};
    case scenario::thermal_drift:
      return {p.slowdown(fault_kind::thermal_drift)};
    case scenario::memory_bound:
      return {p.slowdown(fault_kind::memory_bound)};
    case scenario::host_launch_delay:
      return {p.slowdown(fault_kind::host_launch_delay)};
    case scenario::gc_pauses:
      return p.gc_pauses();
    case scenario::two_faults:
      return p.two_faults();
  }
  return {};
}

}  // namespace failslow::sim
