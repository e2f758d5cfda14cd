// failslow/sim/impl/simulator.ipp -- the definitions of sim/simulator.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/sim/job.hpp"
#include "failslow/sim/scenario.hpp"
#include "failslow/sim/simulator.hpp"
#include "failslow/sim/truth.hpp"

namespace failslow::sim {

namespace detail {

FAILSLOW_FUNC_DEF timeline_recorder::timeline_recorder(const job_config& cfg, int world)
    : ranks(static_cast<std::size_t>(world)) {
  for (int r = 0; r < world; ++r) {
    ranks[static_cast<std::size_t>(r)].rank = r;
    ranks[static_cast<std::size_t>(r)].clock_offset_ns = clock_offset_ns(cfg, r);
  }
}

FAILSLOW_FUNC_DEF void check_faults(const std::vector<fault>& faults, const job_config& cfg, const topology& topo) {
  const std::int64_t last = cfg.first_step + cfg.steps - 1;
  for (const auto& f : faults) {
    for (int r : f.ranks)
      if (r < 0 || r >= topo.world_size())
        throw invalid_argument("fault: rank " + std::to_string(r) + " outside the world");
    if (!std::is_sorted(f.ranks.begin(), f.ranks.end())) throw invalid_argument("fault: ranks must be ascending");
    if (f.first_step < cfg.first_step || f.last_step > last || f.first_step > f.last_step)
      throw invalid_argument("fault: steps [" + std::to_string(f.first_step) + ", " + std::to_string(f.last_step) +
                             "] outside the run [" + std::to_string(cfg.first_step) + ", " + std::to_string(last) +
                             "]");
    if (!std::isfinite(f.factor) || f.factor <= 0) throw invalid_argument("fault: factor must be finite and > 0");
    if (!std::isfinite(f.stall_ms) || f.stall_ms < 0) throw invalid_argument("fault: stall must be finite and >= 0");
    if (f.kind == fault_kind::degraded_link && (f.link_group < 0 || f.link_group >= topo.group_count(f.link_dim)))
      throw invalid_argument("fault: degraded link group index outside the layout");
  }
}

FAILSLOW_FUNC_DEF topology checked_topology(const job_config& cfg, const std::vector<fault>& faults) {
  topology topo = validate(cfg);
  if (topo.world_size() > (1 << 20))
    throw invalid_argument("job_config: " + std::to_string(topo.world_size()) +
                           " ranks: the simulator handles at most 2^20");
  check_faults(faults, cfg, topo);
  return topo;
}

FAILSLOW_FUNC_DEF truth make_truth(const job_config& cfg, const topology& topo, std::vector<fault> faults,
                                   std::string name, double severity) {
  truth t;
  t.scenario_name = std::move(name);
  t.seed = cfg.seed;
  t.severity = severity;
  t.noise = cfg.noise;
  t.sizes = cfg.sizes;
  t.order = topo.order_string();
  t.world_size = topo.world_size();
  t.first_step = cfg.first_step;
  t.last_step = cfg.first_step + cfg.steps - 1;
  t.schedule = std::string(to_string(cfg.schedule));
  t.microbatches = cfg.microbatches;
  t.layers_per_stage = cfg.layers_per_stage;
  t.faults = std::move(faults);
  t.clock_offsets_ns.reserve(static_cast<std::size_t>(t.world_size));
  for (int r = 0; r < t.world_size; ++r) t.clock_offsets_ns.push_back(clock_offset_ns(cfg, r));
  return t;
}

}  // namespace detail

FAILSLOW_FUNC_DEF simulated_job simulate(const job_config& cfg, std::vector<fault> faults, std::string name,
                                         double severity) {
  simulated_job job{cfg, detail::checked_topology(cfg, faults), {}, {}};
  detail::timeline_recorder rec(cfg, job.topo.world_size());
  detail::engine<detail::timeline_recorder> eng(cfg, job.topo, faults, rec);
  eng.run([](int) {});
  job.ranks = std::move(rec.ranks);
  job.truth = detail::make_truth(cfg, job.topo, std::move(faults), std::move(name), severity);
  return job;
}

FAILSLOW_FUNC_DEF simulated_job simulate(const job_config& cfg, scenario s, const scenario_options& options) {
  return simulate(cfg, plan_faults(s, cfg, options), std::string(to_string(s)), options.severity);
}

}  // namespace failslow::sim
