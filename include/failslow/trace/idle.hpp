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

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/event.hpp"
#include "failslow/io/trace_data.hpp"

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

FAILSLOW_FUNC idle_report analyze_idle(const io::trace_data& trace, const idle_options& options = {});

}  // namespace failslow::trace

#if FAILSLOW_HEADER_ONLY
#include "failslow/trace/impl/idle.ipp"
#endif
