// failslow/trace/impl/step_breakdown.ipp -- the definitions of trace/step_breakdown.hpp: included by that
// header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "failslow/core/event.hpp"
#include "failslow/core/kernel_class.hpp"
#include "failslow/core/name_table.hpp"
#include "failslow/io/trace_data.hpp"
#include "failslow/trace/detail/correlation_map.hpp"
#include "failslow/trace/detail/intervals.hpp"
#include "failslow/trace/step_breakdown.hpp"
#include "failslow/trace/steps.hpp"

namespace failslow::trace {

FAILSLOW_FUNC_DEF device_time device_time_by_class(const io::trace_data& trace, const name_table& names,
                                                   const kernel_classifier& classifier) {
  device_time out;
  std::vector<std::int32_t> slot;      // name id -> index in by_name, -1 when unseen
  std::vector<event_kind> first_kind;  // per slot: the kind its class was found for
  for (const auto& e : trace.events) {
    if (!is_device_activity(e.kind)) continue;
    if (e.name >= slot.size()) slot.resize(static_cast<std::size_t>(e.name) + 1, -1);
    if (slot[e.name] < 0) {  // classified once per name (the rules are tried per name, not per event)
      slot[e.name] = static_cast<std::int32_t>(out.by_name.size());
      out.by_name.push_back({e.name, classifier.classify(e.kind, names.name(e.name)), 0, 0});
      first_kind.push_back(e.kind);
    }
    const auto k = static_cast<std::size_t>(slot[e.name]);
    auto& n = out.by_name[k];
    ++n.count;
    n.total_ns += e.duration_ns();
    out.by_class.add(e.kind == first_kind[k] ? n.cls : classifier.classify(e.kind, names.name(e.name)),
                     static_cast<double>(e.duration_ns()));
  }
  std::sort(out.by_name.begin(), out.by_name.end(),
            [](const name_time& a, const name_time& b) { return a.name < b.name; });
  return out;
}

namespace detail {

// Class of every name id that labels a GPU activity, classified once per id.
template <class = void>
inline std::vector<std::int8_t> classes_of_names(const io::trace_data& trace, const name_table& names,
                                                 const kernel_classifier& classifier) {
  std::vector<std::int8_t> cls;
  for (const auto& e : trace.events) {
    if (!is_device_activity(e.kind)) continue;
    if (e.name >= cls.size()) cls.resize(static_cast<std::size_t>(e.name) + 1, -1);
    if (cls[e.name] < 0) cls[e.name] = static_cast<std::int8_t>(classifier.classify(e.kind, names.name(e.name)));
  }
  return cls;
}

// Phases into `out`, most time first (ties by name, for a deterministic order), at most
// options.max_phases; a range with no compute inside it is no phase.
template <class = void>
inline void keep_phases(const std::vector<name_id>& slot_name, std::vector<std::vector<double>>& sums,
                        const name_table& names, const step_breakdown_options& options, step_breakdown& out) {
  std::vector<std::size_t> idx(sums.size());
  std::iota(idx.begin(), idx.end(), std::size_t{0});
  std::vector<double> total(sums.size());
  for (std::size_t s = 0; s < sums.size(); ++s) total[s] = std::accumulate(sums[s].begin(), sums[s].end(), 0.0);
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
    if (total[a] != total[b]) return total[a] > total[b];
    return names.name(slot_name[a]) < names.name(slot_name[b]);
  });
  for (std::size_t j = 0; j < idx.size(); ++j) {
    if (total[idx[j]] <= 0) continue;
    if (out.phase_names.size() >= options.max_phases) {
      ++out.phases_dropped;
      continue;
    }
    out.phase_names.emplace_back(names.name(slot_name[idx[j]]));
    out.phase_compute.push_back(std::move(sums[idx[j]]));
  }
}

// The breakdown of a trace without GPU activity, from its host operators (file synopsis).
template <class = void>
inline void breakdown_from_host(const io::trace_data& trace, const step_map& steps, const name_table& names,
                                const step_breakdown_options& options, step_breakdown& out) {
  out.from_host = true;
  std::vector<time_interval> collective, other;
  std::unordered_map<name_id, std::vector<time_interval>> scopes;
  std::unordered_map<name_id, std::int8_t> role;  // per name: 0 op, 1 collective, 2 step, 3 scope
  for (const auto& e : trace.events) {
    const bool op = e.kind == event_kind::cpu_op || e.kind == event_kind::runtime;
    if (!op && !(e.kind == event_kind::annotation && e.device < 0)) continue;
    auto it = role.find(e.name);
    if (it == role.end()) {
      const auto name = names.name(e.name);
      const bool comm = options.classifier.classify(name) == kernel_class::communication;
      const std::int8_t r = comm ? 1 : op ? 0 : profiler_step_number(name) ? 2 : 3;
      it = role.emplace(e.name, r).first;
    }
    const time_interval iv{e.start_ns, e.end_ns};
    switch (it->second) {
      case 0:
        other.push_back(iv);
        break;
      case 1:
        collective.push_back(iv);
        break;
      case 3:
        scopes[e.name].push_back(iv);
        break;
      default:
        break;
    }
  }
  std::vector<time_interval> all = other;
  all.insert(all.end(), collective.begin(), collective.end());
  const interval_set comm = interval_union(std::move(collective));
  const interval_set work = subtract(interval_union(std::move(other)), comm);
  const interval_set busy = interval_union(std::move(all));
  const std::size_t n_steps = steps.steps.size();
  for (std::size_t k = 0; k < n_steps; ++k) {
    const auto& s = steps.steps[k];
    auto& t = out.steps[k];
    t.has_work = true;
    t.period_ns = static_cast<double>(s.cpu_end_ns - s.cpu_start_ns);
    if (k > 0 && steps.steps[k - 1].number + 1 == s.number && steps.steps[k - 1].cpu_end_ns < s.cpu_end_ns)
      t.period_ns = static_cast<double>(s.cpu_end_ns - steps.steps[k - 1].cpu_end_ns);
    t.compute_ns = static_cast<double>(work.measure(s.cpu_start_ns, s.cpu_end_ns));
    t.communication_ns = static_cast<double>(comm.measure(s.cpu_start_ns, s.cpu_end_ns));
    t.busy_ns = static_cast<double>(busy.measure(s.cpu_start_ns, s.cpu_end_ns));
    t.idle_ns = std::max(0.0, t.period_ns - t.busy_ns);
  }
  std::vector<name_id> slot_name;
  std::vector<std::vector<double>> sums;
  for (auto& [name, list] : scopes) {
    const interval_set inside = intersect(work, interval_union(std::move(list)));
    slot_name.push_back(name);
    auto& v = sums.emplace_back(n_steps, 0.0);
    for (std::size_t k = 0; k < n_steps; ++k)
      v[k] = static_cast<double>(inside.measure(steps.steps[k].cpu_start_ns, steps.steps[k].cpu_end_ns));
  }
  keep_phases(slot_name, sums, names, options, out);
}

}  // namespace detail

FAILSLOW_FUNC_DEF step_breakdown breakdown_steps(const io::trace_data& trace, const step_map& steps,
                                                 const name_table& names, const step_breakdown_options& options) {
  step_breakdown out;
  const auto& ev = trace.events;
  const std::size_t n_steps = steps.steps.size();
  out.steps.resize(n_steps);
  for (std::size_t k = 0; k < n_steps; ++k) {
    const auto& s = steps.steps[k];
    auto& t = out.steps[k];
    t.number = s.number;
    t.has_gpu_work = s.gpu_start_ns >= 0;
    t.has_work = t.has_gpu_work;
    if (!t.has_gpu_work) continue;
    t.period_ns = static_cast<double>(s.gpu_end_ns - s.gpu_start_ns);
    if (k > 0 && steps.steps[k - 1].number + 1 == s.number && steps.steps[k - 1].gpu_end_ns >= 0 &&
        steps.steps[k - 1].gpu_end_ns < s.gpu_end_ns)
      t.period_ns = static_cast<double>(s.gpu_end_ns - steps.steps[k - 1].gpu_end_ns);
  }
  const auto cls = detail::classes_of_names(trace, names, options.classifier);
  auto class_of = [&](const event& e) { return static_cast<kernel_class>(cls[e.name]); };

  // Class sums, and the step's activities bucketed for the union (counting sort by step).
  std::vector<std::uint32_t> bucket_start(n_steps + 1, 0);
  for (std::size_t i = 0; i < ev.size(); ++i) {
    if (!is_device_activity(ev[i].kind)) continue;
    ++out.device_events;
    const std::int32_t k = i < steps.step_of_event.size() ? steps.step_of_event[i] : -1;
    if (k < 0 || static_cast<std::size_t>(k) >= n_steps) {
      ++out.outside_steps;
      continue;
    }
    auto& t = out.steps[static_cast<std::size_t>(k)];
    const double d = static_cast<double>(ev[i].duration_ns());
    switch (class_of(ev[i])) {
      case kernel_class::compute:
        t.compute_ns += d;
        break;
      case kernel_class::communication:
        t.communication_ns += d;
        break;
      case kernel_class::memory:
        t.memory_ns += d;
        break;
    }
    ++bucket_start[static_cast<std::size_t>(k) + 1];
  }
  if (out.device_events == 0 && n_steps > 0) {
    detail::breakdown_from_host(trace, steps, names, options, out);
    return out;
  }
  std::partial_sum(bucket_start.begin(), bucket_start.end(), bucket_start.begin());
  std::vector<std::uint32_t> order(bucket_start.back());
  {
    auto fill = bucket_start;
    for (std::size_t i = 0; i < ev.size(); ++i) {
      if (!is_device_activity(ev[i].kind)) continue;
      const std::int32_t k = i < steps.step_of_event.size() ? steps.step_of_event[i] : -1;
      if (k < 0 || static_cast<std::size_t>(k) >= n_steps) continue;
      order[fill[static_cast<std::size_t>(k)]++] = static_cast<std::uint32_t>(i);
    }
  }
  for (std::size_t k = 0; k < n_steps; ++k) {
    const auto first = order.begin() + bucket_start[k], last = order.begin() + bucket_start[k + 1];
    std::sort(first, last, [&](std::uint32_t a, std::uint32_t b) { return ev[a].start_ns < ev[b].start_ns; });
    std::int64_t busy = 0, cur_start = 0, cur_end = -1;
    for (auto it = first; it != last; ++it) {
      const auto& e = ev[*it];
      if (e.start_ns > cur_end) {
        if (cur_end >= 0) busy += cur_end - cur_start;
        cur_start = e.start_ns;
        cur_end = e.end_ns;
      } else {
        cur_end = std::max(cur_end, e.end_ns);
      }
    }
    if (cur_end >= 0) busy += cur_end - cur_start;
    auto& t = out.steps[k];
    t.busy_ns = static_cast<double>(busy);
    t.idle_ns = std::max(0.0, t.period_ns - t.busy_ns);
  }

  // Annotated phases: GPU ranges if there are any, else host ranges (not ProfilerStep#N).
  struct range {
    name_id name;
    std::int64_t start, end;
    std::int32_t device;
  };
  std::vector<range> gpu_ranges, host_ranges;
  std::unordered_map<name_id, bool> is_step_name;
  for (const auto& e : ev) {
    if (e.kind != event_kind::annotation) continue;
    auto it = is_step_name.find(e.name);
    if (it == is_step_name.end())
      it = is_step_name.emplace(e.name, profiler_step_number(names.name(e.name)).has_value()).first;
    if (it->second) continue;
    (e.device >= 0 ? gpu_ranges : host_ranges).push_back({e.name, e.start_ns, e.end_ns, e.device});
  }
  out.phases_from_gpu = !gpu_ranges.empty();
  const auto& ranges = out.phases_from_gpu ? gpu_ranges : host_ranges;
  if (ranges.empty() || n_steps == 0) return out;

  // Non-communication activities in a step, keyed by the time that places them in a range:
  // their own start (GPU ranges, per device) or their launch's start (host ranges).
  struct placed {
    std::int64_t at;
    std::int32_t device;
    std::uint32_t event;
  };
  std::vector<placed> acts;
  if (out.phases_from_gpu) {
    for (std::size_t i = 0; i < ev.size(); ++i)
      if (is_device_activity(ev[i].kind) && steps.step_of_event[i] >= 0 &&
          class_of(ev[i]) != kernel_class::communication)
        acts.push_back({ev[i].start_ns, ev[i].device, static_cast<std::uint32_t>(i)});
  } else {
    auto launch_of = detail::correlation_map::for_launches(ev);
    for (std::size_t i = 0; i < ev.size(); ++i)
      if (ev[i].kind == event_kind::runtime && ev[i].correlation != 0)
        launch_of.emplace(ev[i].correlation, static_cast<std::uint32_t>(i));
    for (std::size_t i = 0; i < ev.size(); ++i) {
      if (!is_device_activity(ev[i].kind) || steps.step_of_event[i] < 0 ||
          class_of(ev[i]) == kernel_class::communication || ev[i].correlation == 0)
        continue;
      if (const auto* l = launch_of.find(ev[i].correlation))
        acts.push_back({ev[*l].start_ns, -1, static_cast<std::uint32_t>(i)});
    }
  }
  std::sort(acts.begin(), acts.end(),
            [](const placed& a, const placed& b) { return a.device != b.device ? a.device < b.device : a.at < b.at; });

  std::vector<name_id> slot_name;
  std::vector<std::vector<double>> sums;
  // Ranges of one name rarely overlap; when they do, an activity counts once: ranges of a name are
  // merged per device before counting.
  std::unordered_map<name_id, std::vector<range>> by_name;
  for (const auto& r : ranges) by_name[r.name].push_back(r);
  for (auto& [name, list] : by_name) {
    std::sort(list.begin(), list.end(), [](const range& a, const range& b) {
      return a.device != b.device ? a.device < b.device : a.start < b.start;
    });
    std::vector<range> merged;
    for (const auto& r : list) {
      if (!merged.empty() && merged.back().device == r.device && r.start <= merged.back().end)
        merged.back().end = std::max(merged.back().end, r.end);
      else
        merged.push_back(r);
    }
    const std::size_t slot = sums.size();
    slot_name.push_back(name);
    sums.emplace_back(n_steps, 0.0);
    for (const auto& r : merged) {
      const std::int32_t dev = out.phases_from_gpu ? r.device : -1;
      auto lo = std::lower_bound(acts.begin(), acts.end(), std::make_pair(dev, r.start),
                                 [](const placed& a, const std::pair<std::int32_t, std::int64_t>& key) {
                                   return a.device != key.first ? a.device < key.first : a.at < key.second;
                                 });
      for (; lo != acts.end() && lo->device == dev && lo->at < r.end; ++lo) {
        const auto& e = ev[lo->event];
        sums[slot][static_cast<std::size_t>(steps.step_of_event[lo->event])] += static_cast<double>(e.duration_ns());
      }
    }
  }
  detail::keep_phases(slot_name, sums, names, options, out);
  return out;
}

}  // namespace failslow::trace
