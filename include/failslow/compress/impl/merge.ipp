// failslow/compress/impl/merge.ipp -- the definitions of compress/merge.hpp: included by that
// header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>
#include <vector>

#include "failslow/compress/merge.hpp"
#include "failslow/compress/window_summary.hpp"
#include "failslow/core/error.hpp"
#include "failslow/stats/lognormal.hpp"

namespace failslow::compress {

namespace detail {

// Clusters with overlapping ranges, pooled into one.
template <class = void>
inline stats::cluster_summary pool_clusters(const std::vector<stats::cluster_summary>& group) {
  if (group.size() == 1) return group.front();
  stats::cluster_summary m;
  m.min = group.front().min;
  m.max = group.front().max;
  for (const auto& c : group) {
    m.count += c.count;
    m.sum += c.sum;
    m.min = std::min(m.min, c.min);
    m.max = std::max(m.max, c.max);
  }
  const double n = static_cast<double>(m.count);
  m.mean = m.sum / n;
  double m2 = 0;
  for (const auto& c : group)
    m2 += c.variance * static_cast<double>(c.count - 1) +
          static_cast<double>(c.count) * (c.mean - m.mean) * (c.mean - m.mean);
  m.variance = m.count > 1 ? m2 / (n - 1) : 0.0;
  std::vector<stats::lognormal_component> comps;
  for (const auto& c : group)
    for (auto k : stats::reconstruct_cluster(c)) {
      k.weight *= static_cast<double>(c.count) / n;
      comps.push_back(k);
    }
  const stats::lognormal_mixture mix(std::move(comps), true);
  m.p50 = mix.quantile(0.50);
  m.p90 = mix.quantile(0.90);
  m.p99 = mix.quantile(0.99);
  return m;
}

// The finer form of a key merged from `parts` (see the synopsis), into k.
template <class = void>
inline void merge_forms(const std::vector<const kernel_summary*>& parts, kernel_summary& k) {
  bool all_values = true, any_finer = false;
  std::size_t values = 0;
  for (const kernel_summary* p : parts) {
    const bool full = p->knots.empty() && !p->values.empty() && p->values.size() == p->count;
    all_values = all_values && full;
    any_finer = any_finer || !p->values.empty() || !p->knots.empty();
    values += p->values.size();
  }
  if (!any_finer) return;
  if (all_values && values <= merged_values_limit) {
    for (const kernel_summary* p : parts) k.values.insert(k.values.end(), p->values.begin(), p->values.end());
    std::sort(k.values.begin(), k.values.end());
    return;
  }
  std::vector<stats::lognormal_component> comps;
  double total = 0;
  for (const kernel_summary* p : parts) total += static_cast<double>(std::max<std::uint64_t>(p->sampled, 1));
  for (const kernel_summary* p : parts) {
    if (p->clusters.empty()) continue;
    const auto m = p->distribution(true);
    const double w = static_cast<double>(std::max<std::uint64_t>(p->sampled, 1)) / total;
    for (auto c : m.components()) {
      c.weight *= w;
      comps.push_back(c);
    }
  }
  if (comps.empty()) return;
  const stats::lognormal_mixture mix(std::move(comps), true);
  for (double p : knot_probabilities) k.knots.push_back(mix.quantile(p));
}

}  // namespace detail

FAILSLOW_FUNC_DEF window_summary merge_windows(const std::vector<window_summary>& windows) {
  if (windows.empty()) throw invalid_argument("merge_windows: no window");
  window_summary out;
  out.rank = windows.front().rank;
  out.window_id = windows.front().window_id;
  out.start_ns = windows.front().start_ns;
  out.end_ns = windows.front().end_ns;
  std::map<name_id, std::vector<const kernel_summary*>> by_key;
  std::vector<std::pair<double, double>> paces;  // (median interval, intervals) of each input
  for (const auto& w : windows) {
    if (w.rank != out.rank) out.rank = -1;
    out.start_ns = std::min(out.start_ns, w.start_ns);
    out.end_ns = std::max(out.end_ns, w.end_ns);
    out.skipped.invalid_duration += w.skipped.invalid_duration;
    out.skipped.invalid_key += w.skipped.invalid_key;
    out.skipped.no_window += w.skipped.no_window;
    out.subsampled += w.subsampled;
    out.launch.launches += w.launch.launches;
    if (w.launch.measured())
      paces.emplace_back(w.launch.median_interval_ns, static_cast<double>(w.launch.launches - 1));
    for (const auto& k : w.kernels) by_key[k.key].push_back(&k);
  }
  if (!paces.empty()) {  // weighted median of the medians
    std::sort(paces.begin(), paces.end());
    double total = 0, acc = 0;
    for (const auto& p : paces) total += p.second;
    for (const auto& p : paces) {
      acc += p.second;
      if (acc >= 0.5 * total) {
        out.launch.median_interval_ns = p.first;
        break;
      }
    }
  }
  for (const auto& [key, parts] : by_key) {
    kernel_summary k;
    k.key = key;
    std::vector<stats::cluster_summary> all;
    for (const kernel_summary* p : parts) {
      k.count += p->count;
      k.total_ns += p->total_ns;
      k.sampled += p->sampled;
      all.insert(all.end(), p->clusters.begin(), p->clusters.end());
    }
    std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.min < b.min; });
    std::vector<stats::cluster_summary> group;
    double group_max = 0;
    for (const auto& c : all) {
      if (!group.empty() && c.min > group_max) {
        k.clusters.push_back(detail::pool_clusters(group));
        group.clear();
      }
      group_max = group.empty() ? c.max : std::max(group_max, c.max);
      group.push_back(c);
    }
    if (!group.empty()) k.clusters.push_back(detail::pool_clusters(group));
    detail::merge_forms(parts, k);
    out.kernels.push_back(std::move(k));
  }
  return out;
}

}  // namespace failslow::compress
