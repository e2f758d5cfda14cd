// failslow/trace/impl/idle.ipp -- the definitions of trace/idle.hpp: included by that
// header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/core/event.hpp"
#include "failslow/io/trace_data.hpp"
#include "failslow/stats/descriptive.hpp"
#include "failslow/trace/detail/correlation_map.hpp"
#include "failslow/trace/idle.hpp"

namespace failslow::trace {
namespace detail {
// Length of the union of intervals clipped to [lo, hi).
template <class = void>
inline std::int64_t union_length(std::vector<std::pair<std::int64_t, std::int64_t>>& iv, std::int64_t lo,
                                 std::int64_t hi) {
  std::sort(iv.begin(), iv.end());
  std::int64_t total = 0, cur_s = 0, cur_e = 0;
  bool open = false;
  for (auto [s, e] : iv) {
    s = std::max(s, lo);
    e = std::min(e, hi);
    if (e <= s) continue;
    if (open && s <= cur_e) {
      cur_e = std::max(cur_e, e);
    } else {
      if (open) total += cur_e - cur_s;
      cur_s = s;
      cur_e = e;
      open = true;
    }
  }
  if (open) total += cur_e - cur_s;
  return total;
}

}  // namespace detail
FAILSLOW_FUNC_DEF idle_report analyze_idle(const io::trace_data& trace, const idle_options& options) {
  if (options.kernel_wait_ns < 0 || options.stall_min_gap_ns < 0 || !(options.stall_busy_fraction >= 0) ||
      options.stall_busy_fraction > 1)
    throw invalid_argument("analyze_idle: thresholds must be >= 0 and the busy fraction in [0, 1]");
  idle_report out;
  const auto& ev = trace.events;
  auto launch_of = detail::correlation_map::for_launches(ev);  // correlation -> runtime event
  for (std::size_t i = 0; i < ev.size(); ++i)
    if (ev[i].kind == event_kind::runtime && ev[i].correlation != 0)
      launch_of.emplace(ev[i].correlation, static_cast<std::uint32_t>(i));
  std::map<std::pair<std::int16_t, std::uint32_t>, std::vector<std::uint32_t>> streams;
  std::vector<bool> is_launch(ev.size(), false);
  for (std::size_t i = 0; i < ev.size(); ++i) {
    if (!is_device_activity(ev[i].kind)) continue;
    streams[{ev[i].device, ev[i].stream}].push_back(static_cast<std::uint32_t>(i));
    if (ev[i].correlation == 0) continue;
    const std::uint32_t* launch = launch_of.find(ev[i].correlation);
    if (!launch) continue;
    is_launch[*launch] = true;
    out.launch_delays.emplace_back(static_cast<std::uint32_t>(i), ev[i].start_ns - ev[*launch].end_ns);
  }
  for (auto& [key, idx] : streams) {
    std::sort(idx.begin(), idx.end(), [&](std::uint32_t a, std::uint32_t b) {
      return std::make_pair(ev[a].start_ns, ev[a].end_ns) < std::make_pair(ev[b].start_ns, ev[b].end_ns);
    });
    stream_idle s;
    s.device = key.first;
    s.stream = key.second;
    s.activities = idx.size();
    std::int64_t reach = ev[idx[0]].end_ns;
    s.busy_ns = ev[idx[0]].duration_ns();
    for (std::size_t k = 1; k < idx.size(); ++k) {
      const event& e = ev[idx[k]];
      if (e.start_ns > reach) {
        const std::int64_t gap = e.start_ns - reach;
        ++s.gaps;
        const std::uint32_t* launch = e.correlation ? launch_of.find(e.correlation) : nullptr;
        if (!launch) {
          ++out.unknown_launch;
          s.other_ns += gap;
        } else if (ev[*launch].start_ns >= reach) {
          s.host_wait_ns += gap;
        } else if (gap <= options.kernel_wait_ns) {
          s.kernel_wait_ns += gap;
        } else {
          s.other_ns += gap;
        }
        s.busy_ns += e.duration_ns();
      } else if (e.end_ns > reach) {
        s.busy_ns += e.end_ns - reach;  // overlapping activities count once
      }
      reach = std::max(reach, e.end_ns);
    }
    s.span_ns = reach - ev[idx[0]].start_ns;
    s.idle_ns = s.span_ns - s.busy_ns;
    out.host_wait_ns += s.host_wait_ns;
    out.kernel_wait_ns += s.kernel_wait_ns;
    out.other_ns += s.other_ns;
    out.stream_idle_ns += s.idle_ns;
    out.streams.push_back(s);
  }
  // Devices: the union of their streams' activities (the map is ordered by device, then stream).
  for (auto it = streams.begin(); it != streams.end();) {
    device_idle d;
    d.device = it->first.first;
    std::vector<std::pair<std::int64_t, std::int64_t>> iv;
    std::int64_t first = 0, last = 0;
    for (; it != streams.end() && it->first.first == d.device; ++it) {
      ++d.streams;
      for (const auto i : it->second) {
        if (iv.empty() || ev[i].start_ns < first) first = ev[i].start_ns;
        if (iv.empty() || ev[i].end_ns > last) last = ev[i].end_ns;
        iv.emplace_back(ev[i].start_ns, ev[i].end_ns);
      }
    }
    d.busy_ns = detail::union_length(iv, first, last);
    d.span_ns = last - first;
    d.idle_ns = d.span_ns - d.busy_ns;
    out.busy_ns += d.busy_ns;
    out.idle_ns += d.idle_ns;
    out.devices.push_back(d);
  }
  if (!out.launch_delays.empty()) {
    std::vector<double> d;
    d.reserve(out.launch_delays.size());
    for (const auto& [i, x] : out.launch_delays) d.push_back(static_cast<double>(x));
    out.launch_delay_median_ns = stats::quantile(d, 0.5);
    out.launch_delay_p99_ns = stats::quantile(d, 0.99);
  }

  // Launch stalls.
  std::vector<std::int64_t> launches;
  for (std::size_t i = 0; i < ev.size(); ++i)
    if (is_launch[i]) launches.push_back(ev[i].start_ns);
  std::sort(launches.begin(), launches.end());
  std::vector<std::uint32_t> cpu_ops;
  std::vector<std::pair<std::int64_t, std::int64_t>> gpu;
  for (std::size_t i = 0; i < ev.size(); ++i) {
    if (ev[i].kind == event_kind::cpu_op) cpu_ops.push_back(static_cast<std::uint32_t>(i));
    if (is_device_activity(ev[i].kind)) gpu.emplace_back(ev[i].start_ns, ev[i].end_ns);
  }
  std::sort(cpu_ops.begin(), cpu_ops.end(),
            [&](std::uint32_t a, std::uint32_t b) { return ev[a].start_ns < ev[b].start_ns; });
  std::sort(gpu.begin(), gpu.end());
  // Longest CPU op and GPU activity, to bound the search for those overlapping a window.
  std::int64_t longest = 0, longest_gpu = 0;
  for (const auto i : cpu_ops) longest = std::max(longest, ev[i].duration_ns());
  for (const auto& [s, e] : gpu) longest_gpu = std::max(longest_gpu, e - s);
  for (std::size_t k = 1; k < launches.size(); ++k) {
    const std::int64_t lo = launches[k - 1], hi = launches[k];
    if (hi - lo < options.stall_min_gap_ns || hi == lo) continue;
    const auto first = std::lower_bound(cpu_ops.begin(), cpu_ops.end(), lo - longest,
                                        [&](std::uint32_t i, std::int64_t t) { return ev[i].start_ns < t; });
    std::vector<std::pair<std::int64_t, std::int64_t>> busy;
    std::map<name_id, std::int64_t> by_name;
    for (auto it = first; it != cpu_ops.end() && ev[*it].start_ns < hi; ++it) {
      const event& e = ev[*it];
      const std::int64_t s = std::max(e.start_ns, lo), t = std::min(e.end_ns, hi);
      if (t <= s) continue;
      busy.emplace_back(s, t);
      by_name[e.name] += t - s;
    }
    const std::int64_t cpu_busy = detail::union_length(busy, lo, hi);
    if (static_cast<double>(cpu_busy) < options.stall_busy_fraction * static_cast<double>(hi - lo)) continue;
    launch_stall st;
    st.start_ns = lo;
    st.end_ns = hi;
    st.cpu_busy_ns = cpu_busy;
    std::vector<std::pair<std::int64_t, std::int64_t>> g;  // GPU activities overlapping the window
    for (auto it = std::lower_bound(gpu.begin(), gpu.end(), std::make_pair(lo - longest_gpu, std::int64_t{0}));
         it != gpu.end() && it->first < hi; ++it)
      g.push_back(*it);
    st.gpu_idle_ns = (hi - lo) - detail::union_length(g, lo, hi);
    st.top_ops.assign(by_name.begin(), by_name.end());
    std::sort(st.top_ops.begin(), st.top_ops.end(), [](const auto& a, const auto& b) {
      return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    if (st.top_ops.size() > options.stall_top_ops) st.top_ops.resize(options.stall_top_ops);
    out.stalls.push_back(std::move(st));
  }
  return out;
}

}  // namespace failslow::trace