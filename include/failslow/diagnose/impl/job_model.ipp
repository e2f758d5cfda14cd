// failslow/diagnose/impl/job_model.ipp -- the definitions of diagnose/job_model.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "failslow/compress/trace_windows.hpp"
#include "failslow/compress/window_summary.hpp"
#include "failslow/core/dense_array.hpp"
#include "failslow/core/error.hpp"
#include "failslow/core/kernel_class.hpp"
#include "failslow/core/name_table.hpp"
#include "failslow/diagnose/job_model.hpp"
#include "failslow/trace/step_breakdown.hpp"
#include "failslow/trace/steps.hpp"
#include "failslow/trace/trace_set.hpp"

namespace failslow::diagnose {

FAILSLOW_FUNC_DEF std::vector<int> job_model::present_ranks() const {
  std::vector<int> r;
  for (std::size_t i = 0; i < has_rank.size(); ++i)
    if (has_rank[i]) r.push_back(static_cast<int>(i));
  return r;
}

FAILSLOW_FUNC_DEF window_index::window_index(const job_model& m)
    : steps_(m.step_count()), at_(m.rank_count() * m.step_count(), nullptr) {
  for (const auto& w : m.windows) {
    if (w.rank < 0 || static_cast<std::size_t>(w.rank) >= m.rank_count()) continue;
    const auto it = std::lower_bound(m.steps.begin(), m.steps.end(), static_cast<std::int64_t>(w.window_id));
    if (it == m.steps.end() || *it != static_cast<std::int64_t>(w.window_id)) continue;
    at_[static_cast<std::size_t>(w.rank) * steps_ + static_cast<std::size_t>(it - m.steps.begin())] = &w;
  }
}

FAILSLOW_FUNC_DEF job_model_builder::job_model_builder(model_options options) : opt_(std::move(options)) {
  for (const char* n : {"compute", "communication", "memory", "idle"}) phase_slot(n);
}

FAILSLOW_FUNC_DEF void job_model_builder::add_trace(int rank, const io::trace_data& trace, name_table& names) {
  const auto steps = trace::map_steps(trace, names);
  const auto b = trace::breakdown_steps(trace, steps, names, opt_.breakdown);
  if (steps.steps.empty())
    notes_.push_back(trace.source + " (rank " + std::to_string(rank) +
                     "): no ProfilerStep#N annotations and no optimizer steps, so no steps to diagnose");
  else if (!steps.inferred_from.empty())
    ++inferred_[steps.inferred_from];
  if (!steps.steps.empty() && b.outside_steps > 0)
    notes_.push_back(trace.source + " (rank " + std::to_string(rank) + "): " + std::to_string(b.outside_steps) +
                     " of " + std::to_string(b.device_events) + " GPU activities were launched outside every step");
  if (b.phases_dropped > 0)
    notes_.push_back(trace.source + ": " + std::to_string(b.phases_dropped) + " annotated phases past the limit of " +
                     std::to_string(opt_.breakdown.max_phases) + " were not kept");
  if (b.from_host) {
    ++host_traces_;
    host_ranks_.push_back(rank);
  }
  add_steps(rank, b);
  if (opt_.keep_windows) {
    // Kernels keyed by name and launch shape where the trace has them (core/launch_shape.hpp).
    const auto keys = compress::launch_shape_keys(trace, names);
    auto wo = opt_.trace_windows;
    if (!wo.keys) wo.keys = &keys;
    compress::summarize_trace(trace, steps, rank, wo, [&](compress::window_summary&& w) {
      keep_window(std::move(w), [&](name_id key) { return names.name(key); });
    });
  }
  source_traces_ = true;
}

FAILSLOW_FUNC_DEF void job_model_builder::add_steps(int rank, const trace::step_breakdown& b) {
  auto& rs = rank_state(rank);
  std::vector<std::size_t> slot(b.phase_names.size());
  for (std::size_t p = 0; p < b.phase_names.size(); ++p) slot[p] = phase_slot(b.phase_names[p], true);
  for (std::size_t k = 0; k < b.steps.size(); ++k) {
    const auto& t = b.steps[k];
    if (!t.has_work) continue;
    auto& v = rs.values[t.number];
    v.resize(std::max(v.size(), 1 + phases_.size()), nan);
    v[0] = t.period_ns;
    v[1 + compute_phase] = t.compute_ns;
    v[1 + communication_phase] = t.communication_ns;
    v[1 + memory_phase] = t.memory_ns;
    v[1 + idle_phase] = t.idle_ns;
    for (std::size_t p = 0; p < slot.size(); ++p) v[1 + slot[p]] = b.phase_compute[p][k];
  }
}

FAILSLOW_FUNC_DEF job_model job_model_builder::finish() {
  job_model m;
  int max_rank = -1;
  std::vector<std::int64_t> steps;
  for (const auto& [rank, rs] : ranks_) {
    max_rank = std::max(max_rank, rank);
    for (const auto& kv : rs.values) steps.push_back(kv.first);
  }
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  m.world_size = std::max(opt_.world_size, max_rank + 1);
  m.steps = steps;
  m.phases = phases_;
  const std::size_t R = m.rank_count(), P = phases_.size(), S = steps.size();
  m.iteration_ns = dense_array<double, 2>({R, S});
  m.iteration_ns.fill(nan);
  m.phase_ns = dense_array<double, 3>({R, P, S});
  m.phase_ns.fill(nan);
  m.has_rank.assign(R, false);
  m.measured_on_host.assign(R, false);
  for (int r : host_ranks_)
    if (r >= 0 && static_cast<std::size_t>(r) < R) m.measured_on_host[static_cast<std::size_t>(r)] = true;
  m.host.launch_interval_ns = dense_array<double, 2>({R, S});
  m.host.launch_interval_ns.fill(nan);
  for (const auto& [rank, rs] : ranks_) {
    const auto r = static_cast<std::size_t>(rank);
    for (const auto& [number, v] : rs.values) {
      const auto s = static_cast<std::size_t>(std::lower_bound(steps.begin(), steps.end(), number) - steps.begin());
      m.has_rank[r] = true;
      m.iteration_ns(r, s) = v[0];
      for (std::size_t p = 0; p < P && p + 1 < v.size(); ++p) m.phase_ns(r, p, s) = v[p + 1];
    }
    for (const auto& [number, x] : rs.launch_interval) {  // summaries that carry the host's pace
      const auto s = static_cast<std::size_t>(std::lower_bound(steps.begin(), steps.end(), number) - steps.begin());
      m.host.launch_interval_ns(r, s) = x;
      m.host.launch_pace_measured = true;
    }
  }
  int missing = 0;
  std::string first_missing;
  for (std::size_t r = 0; r < R; ++r)
    if (!m.has_rank[r]) {
      if (missing < 8) first_missing += (missing ? ", " : "") + std::to_string(r);
      ++missing;
    }
  if (missing > 0)
    notes_.push_back(std::to_string(missing) + " of " + std::to_string(R) + " ranks have no data (" + first_missing +
                     (missing > 8 ? ", ..." : "") + "): diagnosed without them");
  if (host_traces_ > 0)
    notes_.push_back(std::to_string(host_traces_) +
                     " trace(s) have no GPU activity: their steps are measured on the host (compute and "
                     "communication are CPU operator time, collectives' waits included; idle is time no operator "
                     "ran)");
  for (const auto& [marker, traces] : inferred_)
    notes_.push_back(std::to_string(traces) +
                     " trace(s) have no ProfilerStep#N annotations (profiled without "
                     "prof.step()): their steps are the iterations between the ends of consecutive \"" +
                     marker + "\" annotations, numbered from 0");
  if (skipped_events_ > 0)
    notes_.push_back(std::to_string(skipped_events_) +
                     " kernel events were skipped by the compressor (see the summaries)");
  m.notes = std::move(notes_);
  m.windows = std::move(windows_);
  m.kernel_names = std::move(kernel_names_);
  m.kernel_classes = std::move(kernel_classes_);
  m.source = source_traces_ && source_windows_ ? "traces and summaries" : source_traces_ ? "traces" : "summaries";
  *this = job_model_builder(opt_);
  return m;
}

FAILSLOW_FUNC_DEF std::size_t job_model_builder::phase_slot(std::string_view name, bool annotated) {
  for (std::size_t p = 0; p < phases_.size(); ++p)
    if (phases_[p].name == name && phases_[p].annotated == annotated) return p;
  phase_info info;
  info.name = std::string(name);
  info.annotated = annotated;
  if (!annotated) {
    const std::size_t p = phases_.size();
    info.role = p == communication_phase ? phase_role::wait : p == idle_phase ? phase_role::idle : phase_role::work;
    info.cls = p == communication_phase ? kernel_class::communication
               : p == memory_phase      ? kernel_class::memory
                                        : kernel_class::compute;
  }
  phases_.push_back(std::move(info));
  return phases_.size() - 1;
}

FAILSLOW_FUNC_DEF job_model build_job_model(const trace::trace_set& set, model_options options) {
  if (options.world_size == 0 && set.world_size > 0)
    options.world_size = static_cast<int>(std::min<std::int64_t>(set.world_size, std::numeric_limits<int>::max()));
  job_model_builder b(options);
  std::vector<bool> seen(static_cast<std::size_t>(std::max<std::int64_t>(set.world_size, 0)), false);
  std::vector<std::string> duplicates, unranked;
  for (const auto& t : set.traces) {
    if (t.rank < 0) {
      unranked.push_back(t.data.source);
      continue;
    }
    if (static_cast<std::size_t>(t.rank) < seen.size() && seen[static_cast<std::size_t>(t.rank)]) {
      duplicates.push_back(t.data.source);
      continue;
    }
    if (static_cast<std::size_t>(t.rank) < seen.size()) seen[static_cast<std::size_t>(t.rank)] = true;
    b.add_trace(t.rank, t.data, set.names);
  }
  if (!duplicates.empty()) {
    std::string list;
    for (std::size_t i = 0; i < duplicates.size() && i < 4; ++i) list += (i ? ", " : "") + duplicates[i];
    if (duplicates.size() > 4) list += ", ...";
    b.add_note(std::to_string(duplicates.size()) + " trace(s) of a rank that has a trace already, not diagnosed (the " +
               "first trace of each rank is): " + list);
  }
  if (!unranked.empty()) {
    std::string list;
    for (std::size_t i = 0; i < unranked.size() && i < 4; ++i) list += (i ? ", " : "") + unranked[i];
    if (unranked.size() > 4) list += ", ...";
    b.add_note(std::to_string(unranked.size()) + " trace(s) of unknown rank (no distributedInfo, no rank in the file " +
               "name), not diagnosed: " + list);
  }
  for (const auto& f : set.skipped_files) b.add_note(f + ": not a trace (no traceEvents), skipped");
  return b.finish();
}

}  // namespace failslow::diagnose
