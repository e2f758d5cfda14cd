// failslow/sim/impl/summaries.ipp -- the definitions of sim/summaries.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
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
#include "failslow/sim/summaries.hpp"

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

FAILSLOW_FUNC_DEF name_id kernel_key(kernel_role role) {
  const auto i = static_cast<std::size_t>(role);
  if (i >= kernel_role_count) throw domain_error("kernel_key: not a kernel role");
  return detail::kernel_keys().of_role[i];
}

FAILSLOW_FUNC_DEF std::size_t kernel_key_count() { return detail::kernel_keys().names.size(); }

FAILSLOW_INLINE std::string_view kernel_key_name(name_id key) {
  const auto& names = detail::kernel_keys().names;
  if (key >= names.size())
    throw domain_error("kernel_key_name: key " + std::to_string(key) + " outside [0, " + std::to_string(names.size()) +
                       ")");
  return names[key];
}

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

FAILSLOW_FUNC_DEF summary_run simulate_summaries(const job_config& cfg, std::vector<fault> faults,
                                                 const summary_sink& sink, std::string name, double severity,
                                                 const summary_options& options) {
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

FAILSLOW_FUNC_DEF summary_run simulate_summaries(const job_config& cfg, scenario s,
                                                 const scenario_options& scenario_opt, const summary_sink& sink,
                                                 const summary_options& options) {
  return simulate_summaries(cfg, plan_faults(s, cfg, scenario_opt), sink, std::string(to_string(s)),
                            scenario_opt.severity, options);
}

FAILSLOW_FUNC_DEF summary_run collect_summaries(const job_config& cfg, scenario s, const scenario_options& scenario_opt,
                                                const summary_options& options) {
  std::vector<compress::window_summary> windows;
  summary_run out = simulate_summaries(
      cfg, s, scenario_opt, [&windows](compress::window_summary&& w) { windows.push_back(std::move(w)); }, options);
  out.summaries = std::move(windows);
  return out;
}

}  // namespace failslow::sim
