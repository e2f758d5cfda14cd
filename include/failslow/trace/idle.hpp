// failslow/trace/idle.hpp -- host-side analysis: why GPU streams sit idle, how long launches
// take to reach the GPU, and when launching stops while the CPU is busy.
//
// Synopsis
//   idle_report analyze_idle(trace, options)
//   GPU idle gaps per stream (HTA's idle-time breakdown): the stream's activities (kernels,
//   collectives, memcpy, memset) sorted by start; a gap is the time between the latest end so
//   far and the next start. The next activity's launch (the runtime call with its
//   correlation id) classifies the gap:
//     host_wait    the launch started at or after the previous activity ended: the GPU
//                  waited for the CPU to enqueue work;
//     kernel_wait  otherwise, a gap of at most kernel_wait_ns (default 30 us): the cost of
//                  issuing back-to-back work on the stream;
//     other        otherwise (the work was queued but waited: cross-stream dependencies,
//                  events, synchronisation), and gaps whose launch is unknown.
//   Each stream's busy, span (first start to last end), idle = span - busy and the three
//   parts (idle = host_wait + kernel_wait + other) are reported.
//   Per device (and summed over devices in busy_ns / idle_ns): busy is the length of the union
//   of its streams' activities, span the first start to the last end on any of its streams,
//   idle = span - busy: the time when no stream of the device ran anything. The per-stream
//   gaps summed over streams (stream_idle_ns = host_wait + kernel_wait + other) count a moment
//   once per idle stream, so on 4 streams it can be 4x the device's idle time: it says how
//   the streams waited, not how long the GPU did.
//   Launch delay per GPU activity with a known launch: start(activity) - end(launch) (can be
//   negative: the GPU may start before the launch call returns); summarised by count,
//   median and p99 (stats::quantile, numpy's linear definition).
//   Launch stalls: the launches (runtime calls whose correlation id starts GPU work) of all
//   host threads in time order; a gap of at least stall_min_gap_ns between two consecutive
//   launch starts, during which host CPU operators cover at least stall_busy_fraction of the
//   gap (union of cpu_op intervals), is a window where the CPU was busy but launched
//   nothing: the signature of JIT compilation, garbage collection or a data-loader stall.
//   Each stall lists its CPU-busy time, the GPU time spent idle (no activity on any stream)
//   and the top operators by time inside the window.
// Complexity: O(n log n).
// Errors: options with negative thresholds or a busy fraction outside [0, 1] throw
//   invalid_argument.
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

namespace failslow::trace {

struct idle_options {
  std::int64_t kernel_wait_ns = 30000;
  std::int64_t stall_min_gap_ns = 5000000;
  double stall_busy_fraction = 0.5;
  std::size_t stall_top_ops = 5;
};

struct stream_idle {
  std::int16_t device = -1;
  std::uint32_t stream = 0;
  std::uint64_t activities = 0, gaps = 0;
  std::int64_t busy_ns = 0, span_ns = 0, idle_ns = 0;
  std::int64_t host_wait_ns = 0, kernel_wait_ns = 0, other_ns = 0;
};

struct launch_stall {
  std::int64_t start_ns = 0, end_ns = 0;                  ///< the two launches around the gap
  std::int64_t cpu_busy_ns = 0;                           ///< union of CPU operators inside
  std::int64_t gpu_idle_ns = 0;                           ///< no GPU activity on any stream
  std::vector<std::pair<name_id, std::int64_t>> top_ops;  ///< by time inside the window
};

/// One device: its streams together.
struct device_idle {
  std::int16_t device = -1;
  std::uint32_t streams = 0;
  std::int64_t busy_ns = 0, span_ns = 0, idle_ns = 0;  ///< union of the streams' activities
};

struct idle_report {
  std::vector<stream_idle> streams;
  std::vector<device_idle> devices;
  std::int64_t busy_ns = 0, idle_ns = 0;  ///< per device (no stream busy), summed over devices
  std::int64_t stream_idle_ns = 0;        ///< per-stream idle summed over streams (file synopsis)
  std::int64_t host_wait_ns = 0, kernel_wait_ns = 0, other_ns = 0;    ///< parts of stream_idle_ns
  std::uint64_t unknown_launch = 0;                                   ///< gaps whose next activity has no known launch
  std::vector<std::pair<std::uint32_t, std::int64_t>> launch_delays;  ///< (event index, delay ns)
  double launch_delay_median_ns = 0, launch_delay_p99_ns = 0;
  std::vector<launch_stall> stalls;
};

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

template <class = void>
inline idle_report analyze_idle(const io::trace_data& trace, const idle_options& options = {}) {
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
