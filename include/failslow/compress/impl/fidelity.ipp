// failslow/compress/impl/fidelity.ipp -- the definitions of compress/fidelity.hpp: included by that
// header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "failslow/compress/fidelity.hpp"
#include "failslow/compress/window_summary.hpp"
#include "failslow/core/error.hpp"
#include "failslow/io/trace_data.hpp"
#include "failslow/stats/descriptive.hpp"
#include "failslow/stats/wasserstein.hpp"

namespace failslow::compress {

FAILSLOW_FUNC_DEF double relative_w1(const kernel_summary& summary, std::vector<double> durations,
                                     std::size_t quantiles, bool truncated) {
  if (durations.empty()) throw invalid_argument("relative_w1: no durations");
  if (summary.clusters.empty()) throw invalid_argument("relative_w1: the summary has no clusters");
  if (quantiles == 0) throw invalid_argument("relative_w1: quantiles must be >= 1");
  double mean = 0;
  for (double d : durations) {
    if (!std::isfinite(d)) throw domain_error("relative_w1: a duration is NaN or infinite");
    mean += d;
  }
  mean /= static_cast<double>(durations.size());
  if (!(mean > 0)) throw domain_error("relative_w1: the mean duration must be positive");
  std::sort(durations.begin(), durations.end());
  const auto exact = stats::quantile_vector_sorted(durations.data(), durations.size(), quantiles);
  thread_local stats::quantile_grid grid(quantiles);  // one grid per K, not one per call
  if (grid.size() != quantiles) grid = stats::quantile_grid(quantiles);
  const auto rebuilt = stats::quantile_vector(summary.distribution(truncated), grid);
  return stats::wasserstein1_quantiles(exact, rebuilt) / mean;
}

FAILSLOW_FUNC_DEF void fidelity_figures::add(const kernel_summary& summary, std::vector<double> durations) {
  if (!durations.empty() && !(*std::max_element(durations.begin(), durations.end()) > 0)) {
    ++zero_duration_pairs;
    return;
  }
  relative_w1.push_back(compress::relative_w1(summary, std::move(durations)));
}

FAILSLOW_FUNC_DEF void add_trace_fidelity(fidelity_figures& figures, const io::trace_data& trace,
                                          const std::vector<std::int64_t>& window_of_event,
                                          std::vector<std::pair<std::int64_t, const window_summary*>> windows,
                                          const std::vector<name_id>* keys) {
  if (window_of_event.size() != trace.events.size())
    throw invalid_argument("add_trace_fidelity: window_of_event has " + std::to_string(window_of_event.size()) +
                           " entries for " + std::to_string(trace.events.size()) + " events");
  if (windows.empty()) return;
  std::sort(windows.begin(), windows.end());
  const auto& ev = trace.events;
  std::map<std::pair<std::size_t, name_id>, std::vector<double>> exact;  // (index in windows, key)
  for (std::size_t i = 0; i < ev.size(); ++i) {
    if (window_of_event[i] < 0) continue;
    const auto it = std::lower_bound(windows.begin(), windows.end(), window_of_event[i],
                                     [](const auto& w, std::int64_t id) { return w.first < id; });
    if (it == windows.end() || it->first != window_of_event[i]) continue;  // a window not listed
    exact[{static_cast<std::size_t>(it - windows.begin()), keys && i < keys->size() ? (*keys)[i] : ev[i].name}]
        .push_back(static_cast<double>(ev[i].duration_ns()));
  }
  for (auto& [key, durations] : exact) {
    const kernel_summary* k = windows[key.first].second->find(key.second);
    if (!k)
      throw domain_error("add_trace_fidelity: window " + std::to_string(windows[key.first].first) +
                         " has no summary of a key its events have");
    figures.add(*k, std::move(durations));
  }
}

}  // namespace failslow::compress
