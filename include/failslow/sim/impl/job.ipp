// failslow/sim/impl/job.ipp -- the definitions of sim/job.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <cmath>
#include <string>
#include <string_view>

#include "failslow/core/error.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/sim/job.hpp"

namespace failslow::sim {

FAILSLOW_FUNC_DEF pipeline_schedule parse_pipeline_schedule(std::string_view s) {
  if (s == "1f1b") return pipeline_schedule::one_f_one_b;
  if (s == "gpipe") return pipeline_schedule::gpipe;
  throw invalid_argument("unknown pipeline schedule '" + std::string(s) + "' (expected 1f1b or gpipe)");
}

FAILSLOW_FUNC_DEF job_config& calibrate(job_config& cfg) noexcept {
  cfg.seq_length = 2048;
  cfg.hidden = 2048;
  cfg.host = host_config::calibrated();
  return cfg;
}

FAILSLOW_FUNC_DEF topology validate(const job_config& cfg) {
  auto need = [](bool ok, const std::string& what) {
    if (!ok) throw invalid_argument("job_config: " + what);
  };
  need(cfg.steps >= 1, "steps = " + std::to_string(cfg.steps) + ", need >= 1");
  need(cfg.first_step >= 0, "first_step = " + std::to_string(cfg.first_step) + ", need >= 0");
  need(cfg.microbatches >= 1, "microbatches = " + std::to_string(cfg.microbatches) + ", need >= 1");
  need(cfg.layers_per_stage >= 1, "layers_per_stage = " + std::to_string(cfg.layers_per_stage) + ", need >= 1");
  need(cfg.gpus_per_node >= 1, "gpus_per_node = " + std::to_string(cfg.gpus_per_node) + ", need >= 1");
  need(cfg.seq_length >= 1 && cfg.hidden >= 1, "seq_length and hidden must be >= 1");
  need(cfg.dp_buckets >= 1, "dp_buckets = " + std::to_string(cfg.dp_buckets) + ", need >= 1");
  need(std::isfinite(cfg.noise) && cfg.noise >= 0, "noise must be finite and >= 0");
  need(std::isfinite(cfg.max_clock_offset_us) && cfg.max_clock_offset_us >= 0,
       "max_clock_offset_us must be finite and >= 0");
  need(cfg.max_clock_offset_us <= 1e9, "max_clock_offset_us must be <= 1e9");
  const host_config& h = cfg.host;
  for (double v : {h.gap_forward_us, h.gap_backward_us, h.gap_sigma, h.step_head_us})
    need(std::isfinite(v) && v >= 0 && v <= 1e9, "host times and gap_sigma must be finite, >= 0 and <= 1e9");
  need(std::isfinite(h.launch_us) && h.launch_us > 0 && h.launch_us <= 1e9, "host.launch_us must be in (0, 1e9]");
  return topology(cfg.sizes, cfg.order);
}

}  // namespace failslow::sim
