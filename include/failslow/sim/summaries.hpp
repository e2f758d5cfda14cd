// failslow/sim/summaries.hpp -- scale mode: the simulator's timing model emitting per-rank
// window summaries directly, instead of timelines, for jobs of 1,024 to 2^20 ranks.
//
// Synopsis
//   summary_run simulate_summaries(cfg, faults, sink, name, severity, options)
//   summary_run simulate_summaries(cfg, scenario, scenario_options, sink, options)
//   summary_run collect_summaries(cfg, scenario, scenario_options, options)   windows kept
//   The same engine as simulate() (simulator.hpp): same program, fault semantics and
//   counter-based randomness, so the kernels are exactly those of the job's timelines. Each
//   rank's GPU kernels (compute and collectives, in start order) go straight into that rank's
//   compress::window_compressor, one window per step: once every rank has finished step k,
//   the windows of ranks 0, 1, ..., world - 1 are closed and handed to `sink`, then step k + 1
//   runs. The sink thus sees world x steps windows, step by step, ranks ascending. Of the host
//   calls, the kernel launches give each window's launch pace (window_summary::launch: their
//   count and the median time between consecutive ones); the rest, and annotations, are not
//   kept.
//   A window: rank; window_id = its ProfilerStep number; start/end = first kernel start and
//   last kernel end on the rank's own clock (true time + clock offset + options.epoch_ns, as
//   the Kineto writer's timestamps); per kernel key the exact count and total and the
//   duration clusters (window_summary.hpp).
//   Keys: kernel_key(role) numbers the distinct kernel names of the catalogue densely, in
//   catalogue order (kernel_key_count() of them; roles that share a name, NCCL all-to-all and
//   send/receive, share the key, as they would in a trace); kernel_key_name(id) is the name,
//   what the codec's summary_encoder asks for.
//   summary_run: the config, topology and truth (as simulate() gives them), the windows and
//   kernels handed over, and for collect_summaries the windows themselves (small jobs, tests).
// Memory does not grow with steps: per rank a compressor (its buffers hold one step's
//   durations) and the model's state, per pipeline stage one program. Measured on the default
//   model (tp 8 x pp 8 x dp 256 = 16,384 ranks, ~300 kernels per rank and step): 13 MB peak
//   for the model alone, 104 MB with the compressors, the same for 3 or 6 steps.
// Complexity: the simulator's time plus one window close per rank and step.
// Errors: those of simulate() (job.hpp, scenario.hpp, simulator.hpp); invalid_argument for an
//   empty sink, a compressor configuration the compressor rejects, compressor.max_window_ns
//   != 0 (the windows are the steps) or epoch_ns < 0; kernel_key_name of an id >=
//   kernel_key_count() throws domain_error. Exceptions of the sink propagate (the run stops).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "failslow/compress/window_compressor.hpp"
#include "failslow/compress/window_summary.hpp"
#include "failslow/core/error.hpp"
#include "failslow/core/event.hpp"
#include "failslow/sim/kernels.hpp"
#include "failslow/sim/simulator.hpp"

namespace failslow::sim {

namespace detail {

struct kernel_key_table {
  std::array<name_id, kernel_role_count> of_role{};
  std::vector<std::string_view> names;
};

inline const kernel_key_table& kernel_keys() {
  static const kernel_key_table table = [] {
    kernel_key_table t;
    for (std::size_t i = 0; i < kernel_role_count; ++i) {
      const std::string_view name = kernel_catalogue()[i].name;
      const auto it = std::find(t.names.begin(), t.names.end(), name);
      t.of_role[i] = static_cast<name_id>(it - t.names.begin());
      if (it == t.names.end()) t.names.push_back(name);
    }
    return t;
  }();
  return table;
}

}  // namespace detail

/// Key of a kernel role's name in the summaries (dense, catalogue order).
inline name_id kernel_key(kernel_role role) {
  const auto i = static_cast<std::size_t>(role);
  if (i >= kernel_role_count) throw domain_error("kernel_key: not a kernel role");
  return detail::kernel_keys().of_role[i];
}

/// Number of distinct kernel names, i.e. of keys.
inline std::size_t kernel_key_count() { return detail::kernel_keys().names.size(); }

/// The kernel name of a key.
inline std::string_view kernel_key_name(name_id key) {
  const auto& names = detail::kernel_keys().names;
  if (key >= names.size())
    throw domain_error("kernel_key_name: key " + std::to_string(key) + " outside [0, " + std::to_string(names.size()) +
                       ")");
  return names[key];
}

struct summary_options {
  compress::compressor_config compressor{};  ///< per rank; max_window_ns must stay 0
  std::int64_t epoch_ns = 4000000000000000;  ///< added to each rank's clock (the Kineto writer's default)
};

using summary_sink = std::function<void(compress::window_summary&&)>;

struct summary_run {
  job_config config;
  topology topo;
  sim::truth truth;
  std::uint64_t windows = 0;                        ///< handed to the sink: world x steps
  std::uint64_t kernels = 0;                        ///< kernel events compressed
  std::vector<compress::window_summary> summaries;  ///< collect_summaries only
};

namespace detail {

// The engine's recorder of scale mode: kernels into per-rank compressors, the rest dropped.
class summary_recorder {
 public:
  summary_recorder(const job_config& cfg, int world, const summary_options& options, const summary_sink& sink)
      : sink_(sink) {
    compressors_.reserve(static_cast<std::size_t>(world));
    shift_.reserve(static_cast<std::size_t>(world));
    for (int r = 0; r < world; ++r) {
      compressors_.emplace_back(
          r,
          [this](compress::window_summary&& w) {
            w.window_id = step_;
            ++windows_;
            sink_(std::move(w));
          },
          options.compressor);
      shift_.push_back(clock_offset_ns(cfg, r) + options.epoch_ns);
    }
  }
  summary_recorder(const summary_recorder&) = delete;  // the compressors' sinks point here
  summary_recorder& operator=(const summary_recorder&) = delete;

  void kernel(int r, const gpu_kernel& k) {
    const auto i = static_cast<std::size_t>(r);
    compressors_[i].add(kernel_key(k.role), k.start_ns + shift_[i], k.duration_ns());
    ++kernels_;
  }
  // Kernel launch calls give the window's launch pace (window_summary::launch); the host's
  // other calls are not kept.
  void host(int r, const host_call& h) {
    if (h.name != host_name::launch_kernel) return;
    const auto i = static_cast<std::size_t>(r);
    compressors_[i].add_launch(h.start_ns + shift_[i]);
  }
  void annotate(int, const annotation&) noexcept {}

  /// Closes every rank's window of ProfilerStep `step`, ranks ascending.
  void close_step(std::int64_t step) {
    step_ = static_cast<std::uint64_t>(step);
    for (auto& c : compressors_) c.close_window();
  }

  std::uint64_t windows() const noexcept { return windows_; }
  std::uint64_t kernels() const noexcept { return kernels_; }

 private:
  const summary_sink& sink_;
  std::vector<compress::window_compressor> compressors_;
  std::vector<std::int64_t> shift_;  // true time -> rank clock
  std::uint64_t step_ = 0, windows_ = 0, kernels_ = 0;
};

}  // namespace detail

/// Runs the job with the given faults and hands each rank's window of each step to `sink`
/// (see the synopsis); `name` and `severity` are recorded in the truth.
template <class = void>
inline summary_run simulate_summaries(const job_config& cfg, std::vector<fault> faults, const summary_sink& sink,
                                      std::string name = "custom", double severity = 1.0,
                                      const summary_options& options = {}) {
  topology topo = detail::checked_topology(cfg, faults);
  if (!sink) throw invalid_argument("simulate_summaries: no sink");
  if (options.compressor.max_window_ns != 0)
    throw invalid_argument("simulate_summaries: compressor.max_window_ns must be 0 (a window is a step)");
  if (options.epoch_ns < 0) throw invalid_argument("simulate_summaries: epoch_ns must be >= 0");
  detail::summary_recorder rec(cfg, topo.world_size(), options, sink);
  detail::engine<detail::summary_recorder> eng(cfg, topo, faults, rec);
  eng.run([&](int k) { rec.close_step(cfg.first_step + k); });
  summary_run out{
      cfg,           topo,          detail::make_truth(cfg, topo, std::move(faults), std::move(name), severity),
      rec.windows(), rec.kernels(), {}};
  return out;
}

/// Places the faults of scenario `s` (plan_faults) and runs the job into `sink`.
template <class = void>
inline summary_run simulate_summaries(const job_config& cfg, scenario s, const scenario_options& scenario_opt,
                                      const summary_sink& sink, const summary_options& options = {}) {
  return simulate_summaries(cfg, plan_faults(s, cfg, scenario_opt), sink, std::string(to_string(s)),
                            scenario_opt.severity, options);
}

/// simulate_summaries keeping the windows in summary_run::summaries (step by step, ranks
/// ascending): for jobs small enough to hold them.
template <class = void>
inline summary_run collect_summaries(const job_config& cfg, scenario s, const scenario_options& scenario_opt = {},
                                     const summary_options& options = {}) {
  std::vector<compress::window_summary> windows;
  summary_run out = simulate_summaries(
      cfg, s, scenario_opt, [&windows](compress::window_summary&& w) { windows.push_back(std::move(w)); }, options);
  out.summaries = std::move(windows);
  return out;
}

}  // namespace failslow::sim
