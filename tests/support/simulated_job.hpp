// Test support: a simulated job as the diagnosis sees it -- its Kineto traces read back into a
// trace set (the path real traces take), or its window summaries (the always-on path).
#pragma once

#include <cstdint>
#include <failslow/core/report.hpp>
#include <failslow/diagnose/diagnose.hpp>
#include <failslow/diagnose/job_model.hpp>
#include <failslow/diagnose/l4_host.hpp>
#include <failslow/diagnose/l4_waits.hpp>
#include <failslow/io/kineto_reader.hpp>
#include <failslow/sim/kineto_writer.hpp>
#include <failslow/sim/simulator.hpp>
#include <failslow/sim/summaries.hpp>
#include <failslow/trace/trace_set.hpp>
#include <string>
#include <utility>

namespace failslow_test {

/// The calibrated (host-paced) job of a layout ("tp=2,pp=4,dp=4"), seed and length.
inline failslow::sim::job_config calibrated_config(const char* layout, std::uint64_t seed, int steps) {
  failslow::sim::job_config cfg;
  failslow::sim::calibrate(cfg);
  cfg.sizes = failslow::parse_parallel_sizes(layout);
  cfg.seed = seed;
  cfg.steps = steps;
  return cfg;
}

struct traced_job {
  failslow::sim::simulated_job job{};
  failslow::trace::trace_set set;
};

/// Simulates the job and reads every rank's Kineto document back (no files).
inline traced_job simulate_traces(const failslow::sim::job_config& cfg, failslow::sim::scenario s,
                                  const failslow::sim::scenario_options& so = {}) {
  traced_job out;
  out.job = failslow::sim::simulate(cfg, s, so);
  const int world = out.job.topo.world_size();
  out.set.world_size = world;
  failslow::io::kineto_reader reader;
  for (int r = 0; r < world; ++r) {
    const std::string doc = failslow::sim::kineto_trace(out.job, r);
    failslow::trace::rank_trace t;
    t.rank = r;
    t.data = reader.read_buffer(doc, out.set.names, {}, "rank_" + std::to_string(r) + ".json");
    for (auto& e : t.data.events) e.rank = r;
    out.set.traces.push_back(std::move(t));
  }
  out.job.ranks.clear();  // the timelines are not needed once written
  return out;
}

/// The same job's window summaries straight from the simulator's scale mode, into a model.
inline std::pair<failslow::diagnose::job_model, failslow::sim::truth> simulate_summaries_model(
    const failslow::sim::job_config& cfg, failslow::sim::scenario s, const failslow::sim::scenario_options& so = {},
    const failslow::diagnose::model_options& mo = {}) {
  failslow::diagnose::job_model_builder b(mo);
  auto run = failslow::sim::simulate_summaries(
      cfg, s, so,
      [&](failslow::compress::window_summary&& w) {
        b.add_window(std::move(w), [](failslow::name_id k) { return failslow::sim::kernel_key_name(k); });
      },
      {});
  return {b.finish(), run.truth};
}

/// The summaries model of a job by layout, length and seed, with its kernel windows kept (L3's
/// input).
inline std::pair<failslow::diagnose::job_model, failslow::sim::truth> windowed_summaries_model(
    const char* layout, int steps, std::uint64_t seed, failslow::sim::scenario s) {
  failslow::sim::job_config cfg;
  cfg.sizes = failslow::parse_parallel_sizes(layout);
  cfg.steps = steps;
  cfg.seed = seed;
  failslow::diagnose::model_options mo;
  mo.keep_windows = true;
  return simulate_summaries_model(cfg, s, {}, mo);
}

/// A simulated job's summaries (kernel windows kept), its layout and its diagnosis.
struct diagnosed_summaries {
  failslow::diagnose::job_model model;
  failslow::sim::truth truth;
  failslow::topology topo;
  failslow::report rep;
};

inline diagnosed_summaries diagnose_simulated_summaries(const char* layout, int steps, std::uint64_t seed,
                                                        failslow::sim::scenario s) {
  auto [model, truth] = windowed_summaries_model(layout, steps, seed, s);
  failslow::topology topo(failslow::parse_parallel_sizes(layout));
  auto rep = failslow::diagnose::diagnose(model, topo);
  return {std::move(model), std::move(truth), std::move(topo), std::move(rep)};
}

/// A job as bench/random_sweep.py draws it, by its `failslow simulate` arguments (the calibrated
/// host model): the regression tests of the jobs the sweep found.
struct sweep_job {
  const char* layout;
  failslow::sim::scenario scenario;
  std::uint64_t seed;
  int steps;
  double noise;
  int microbatches;
  int layers;
  std::int64_t first_step;
  int onset;
  double severity = 1;
};

inline traced_job simulate_sweep_job(const sweep_job& j) {
  auto cfg = calibrated_config(j.layout, j.seed, j.steps);
  cfg.noise = j.noise;
  cfg.microbatches = j.microbatches;
  cfg.layers_per_stage = j.layers;
  cfg.first_step = j.first_step;
  failslow::sim::scenario_options so;
  so.onset = j.onset;
  so.severity = j.severity;
  return simulate_traces(cfg, j.scenario, so);
}

/// One line per finding, for a failed check's message.
inline std::string describe(const failslow::report& rep) {
  std::string s;
  for (const auto& f : rep.findings) s += "  " + f.level + " " + f.kind + ": " + f.summary + "\n";
  return s;
}

// The model `failslow diagnose` builds from a job's traces: kept windows, collectives matched
// into instances (L4's waits), the hosts' launch gaps.
inline failslow::diagnose::job_model model_of_traces(const traced_job& tj) {
  failslow::diagnose::model_options mo;
  mo.keep_windows = true;
  auto m = failslow::diagnose::build_job_model(tj.set, mo);
  failslow::diagnose::attribute_waits(m, tj.set, tj.job.topo);
  failslow::diagnose::measure_host_activity(m, tj.set);
  return m;
}

}  // namespace failslow_test
