// failslow/trace/impl/steps.ipp -- the definitions of trace/steps.hpp: included by that
// header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/core/event.hpp"
#include "failslow/core/name_table.hpp"
#include "failslow/io/trace_data.hpp"
#include "failslow/trace/detail/correlation_map.hpp"
#include "failslow/trace/steps.hpp"

namespace failslow::trace {
FAILSLOW_FUNC_DEF std::optional<std::int64_t> profiler_step_number(std::string_view name) noexcept {
  constexpr std::string_view prefix = "ProfilerStep#";
  if (name.substr(0, prefix.size()) != prefix || name.size() == prefix.size() || name.size() > prefix.size() + 18)
    return std::nullopt;
  std::int64_t n = 0;
  for (std::size_t i = prefix.size(); i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return std::nullopt;
    n = n * 10 + (name[i] - '0');
  }
  return n;
}

FAILSLOW_FUNC_DEF bool is_optimizer_step(std::string_view name) noexcept {
  constexpr std::string_view prefix = "Optimizer.step#", suffix = ".step";
  return name.size() > prefix.size() + suffix.size() && name.substr(0, prefix.size()) == prefix &&
         name.substr(name.size() - suffix.size()) == suffix;
}

namespace detail {
// Iterations of a trace without ProfilerStep#N, cut at the ends of its optimizer steps (the
// synopsis of map_steps); empty when it has none.
template <class = void>
std::vector<gpu_step> iterations_from_optimizer_steps(const std::vector<event>& ev, const name_table& names,
                                                      std::string& marker) {
  std::unordered_map<name_id, bool> is_marker;
  std::unordered_map<name_id, std::size_t> count;
  std::int64_t first_host = std::numeric_limits<std::int64_t>::max();
  for (const auto& e : ev) {
    if (e.device >= 0 || is_device_activity(e.kind)) continue;
    first_host = std::min(first_host, e.start_ns);
    if (e.kind != event_kind::annotation && e.kind != event_kind::cpu_op) continue;
    auto it = is_marker.find(e.name);
    if (it == is_marker.end()) it = is_marker.emplace(e.name, is_optimizer_step(names.name(e.name))).first;
    if (it->second) ++count[e.name];
  }
  if (count.empty()) return {};
  // The most frequent optimizer (ties: the smaller id, for a result independent of hashing).
  name_id best = count.begin()->first;
  std::size_t best_count = count.begin()->second;
  for (const auto& [id, n] : count)
    if (n > best_count || (n == best_count && id < best)) {
      best = id;
      best_count = n;
    }
  std::vector<std::int64_t> ends;
  for (const auto& e : ev)
    if (e.name == best && e.device < 0 && !is_device_activity(e.kind)) ends.push_back(e.end_ns);
  std::sort(ends.begin(), ends.end());
  ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
  std::vector<gpu_step> steps;
  std::int64_t start = first_host;
  for (std::int64_t end : ends) {
    if (end <= start) continue;  // a nested or repeated marker ending at the same time
    gpu_step s;
    s.number = static_cast<std::int64_t>(steps.size());
    s.cpu_start_ns = start;
    s.cpu_end_ns = end;
    steps.push_back(s);
    start = end;
  }
  marker = std::string(names.name(best));
  return steps;
}

}  // namespace detail
FAILSLOW_FUNC_DEF step_map map_steps(const io::trace_data& trace, const name_table& names) {
  step_map out;
  const auto& ev = trace.events;
  out.step_of_event.assign(ev.size(), -1);
  auto add_gpu = [&](gpu_step& s, const event& e) {
    if (s.gpu_start_ns < 0 || e.start_ns < s.gpu_start_ns) s.gpu_start_ns = e.start_ns;
    if (e.end_ns > s.gpu_end_ns) s.gpu_end_ns = e.end_ns;
    ++s.device_events;
    s.gpu_busy_ns += e.duration_ns();
  };

  if (!trace.event_steps.empty() && trace.event_steps.size() == ev.size()) {
    std::vector<std::int64_t> numbers;
    for (auto n : trace.event_steps)
      if (n >= 0) numbers.push_back(n);
    std::sort(numbers.begin(), numbers.end());
    numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
    out.steps.resize(numbers.size());
    std::vector<bool> has_host(numbers.size(), false);
    for (std::size_t k = 0; k < numbers.size(); ++k) {
      out.steps[k].number = numbers[k];
      out.steps[k].cpu_start_ns = -1;
    }
    for (std::size_t i = 0; i < ev.size(); ++i) {
      if (trace.event_steps[i] < 0) {
        if (is_device_activity(ev[i].kind)) ++out.unattributed;
        continue;
      }
      const auto k = static_cast<std::size_t>(std::lower_bound(numbers.begin(), numbers.end(), trace.event_steps[i]) -
                                              numbers.begin());
      out.step_of_event[i] = static_cast<std::int32_t>(k);
      auto& s = out.steps[k];
      if (is_device_activity(ev[i].kind)) {
        add_gpu(s, ev[i]);
      } else {
        if (ev[i].kind == event_kind::runtime) ++s.launches;
        if (!has_host[k] || ev[i].start_ns < s.cpu_start_ns) s.cpu_start_ns = ev[i].start_ns;
        if (!has_host[k] || ev[i].end_ns > s.cpu_end_ns) s.cpu_end_ns = ev[i].end_ns;
        has_host[k] = true;
      }
    }
    for (std::size_t k = 0; k < out.steps.size(); ++k)
      if (!has_host[k]) {
        out.steps[k].cpu_start_ns = out.steps[k].gpu_start_ns;
        out.steps[k].cpu_end_ns = out.steps[k].gpu_end_ns;
      }
    return out;
  }

  // Steps from ProfilerStep#N host annotations; names are checked once per distinct id.
  std::unordered_map<name_id, std::optional<std::int64_t>> number_of;
  for (const auto& e : ev) {
    if (e.kind != event_kind::annotation || e.device >= 0) continue;
    auto it = number_of.find(e.name);
    if (it == number_of.end()) it = number_of.emplace(e.name, profiler_step_number(names.name(e.name))).first;
    if (!it->second) continue;
    gpu_step s;
    s.number = *it->second;
    s.cpu_start_ns = e.start_ns;
    s.cpu_end_ns = e.end_ns;
    out.steps.push_back(s);
  }
  if (out.steps.empty()) out.steps = detail::iterations_from_optimizer_steps(ev, names, out.inferred_from);
  std::sort(out.steps.begin(), out.steps.end(),
            [](const gpu_step& a, const gpu_step& b) { return a.cpu_start_ns < b.cpu_start_ns; });
  for (std::size_t k = 1; k < out.steps.size(); ++k)
    if (out.steps[k].cpu_start_ns < out.steps[k - 1].cpu_end_ns) ++out.overlapping_steps;
  // The step containing time t: the last step starting at or before t, if t is before its end.
  auto step_at = [&](std::int64_t t) -> std::int32_t {
    auto it = std::upper_bound(out.steps.begin(), out.steps.end(), t,
                               [](std::int64_t x, const gpu_step& s) { return x < s.cpu_start_ns; });
    if (it == out.steps.begin()) return -1;
    --it;
    if (t >= it->cpu_end_ns) return -1;
    return static_cast<std::int32_t>(it - out.steps.begin());
  };
  auto step_of_launch = detail::correlation_map::for_launches(ev);  // correlation -> step index
  for (std::size_t i = 0; i < ev.size(); ++i) {
    const auto& e = ev[i];
    if (is_device_activity(e.kind)) continue;
    const std::int32_t k = step_at(e.start_ns);
    out.step_of_event[i] = k;
    if (e.kind != event_kind::runtime) continue;
    if (k < 0) {
      ++out.launches_outside_steps;
      continue;
    }
    ++out.steps[static_cast<std::size_t>(k)].launches;
    if (e.correlation != 0) step_of_launch.assign(e.correlation, static_cast<std::uint32_t>(k));
  }
  for (std::size_t i = 0; i < ev.size(); ++i) {
    const auto& e = ev[i];
    if (!is_device_activity(e.kind)) continue;
    const std::uint32_t* step = e.correlation != 0 ? step_of_launch.find(e.correlation) : nullptr;
    if (!step) {
      ++out.unattributed;
      continue;
    }
    out.step_of_event[i] = static_cast<std::int32_t>(*step);
    add_gpu(out.steps[*step], e);
  }
  return out;
}

FAILSLOW_FUNC_DEF step_map group_steps(step_map m, std::size_t n) {
  if (n == 0) throw invalid_argument("group_steps: n must be at least 1");
  if (n == 1 || m.steps.empty()) return m;
  std::vector<gpu_step> groups((m.steps.size() + n - 1) / n);
  for (std::size_t k = 0; k < m.steps.size(); ++k) {
    const auto& s = m.steps[k];
    auto& g = groups[k / n];
    if (k % n == 0) {
      g = s;
      continue;
    }
    g.cpu_start_ns = std::min(g.cpu_start_ns, s.cpu_start_ns);
    g.cpu_end_ns = std::max(g.cpu_end_ns, s.cpu_end_ns);
    if (s.gpu_start_ns >= 0) {
      g.gpu_start_ns = g.gpu_start_ns < 0 ? s.gpu_start_ns : std::min(g.gpu_start_ns, s.gpu_start_ns);
      g.gpu_end_ns = std::max(g.gpu_end_ns, s.gpu_end_ns);
    }
    g.device_events += s.device_events;
    g.launches += s.launches;
    g.gpu_busy_ns += s.gpu_busy_ns;
  }
  for (auto& k : m.step_of_event)
    if (k >= 0) k = static_cast<std::int32_t>(static_cast<std::size_t>(k) / n);
  m.steps = std::move(groups);
  return m;
}

}  // namespace failslow::trace