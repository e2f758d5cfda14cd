// failslow/compress/trace_windows.hpp -- one rank's recorded trace as per-step window summaries.
//
// Synopsis
//   trace_window_counts summarize_trace(trace, steps, rank, options, sink, window_of_event)
//   Feeds the GPU activities of a trace (kernels, collectives, memcpy, memset; io/trace_data.hpp)
//   through a window_compressor (window_compressor.hpp) and hands each window_summary to `sink`:
//     with steps (trace/steps.hpp found ProfilerStep#N): one window per step, holding the GPU
//       work the step launched, window id = N, closed at the step's last GPU end; a step
//       without GPU work gives an empty window; GPU activities outside every step are counted
//       (outside_steps), not compressed;
//     without steps, or with options.use_steps = false: the activities in start order, windows
//       closed by the compressor's time bound (compressor.max_window_ns; 0 = one window for the
//       whole trace), window ids 0, 1, ...
//   The key of an event is its name id, so summaries of several ranks compare when their traces
//   share one name_table (trace/trace_set.hpp does that); with options.keys (launch_shape_keys)
//   a compute kernel whose grid and block the reader kept is keyed by name plus launch shape:
//   one kernel launched with several shapes runs several distributions, and their mix must not
//   pass for a slowdown (core/launch_shape.hpp).
//   launch_shape_keys(trace, names)   those keys, per event: one intern per distinct
//     (name, grid, block), into the table the trace's names are in.
//   window_of_event (optional) receives, per event of the trace, the id of the window it went
//   to, or -1: what a caller needs to compare summaries with the exact durations
//   (compress/fidelity.hpp).
//   With steps, each window also gets its host's launch pace (window_summary::launch): the
//   runtime calls that launched GPU work (a device activity shares their correlation id) whose
//   start lies in the step's CPU range -- what diagnose/l4_host.hpp measures on traces.
// Accounting: device_events = compressed + outside_steps + skipped (the compressor's counted
//   skips: negative duration, key over the limit); host_events are the other events (CPU ops,
//   runtime calls, annotations), which are not kernel durations and are not compressed (the
//   launch calls among them are counted in their window's launch pace).
// Complexity: O(n log n) for n GPU activities (a sort by start) plus the compressor's window
//   closes; O(n) extra memory for the order.
// Errors: the compressor's configuration errors and options.keys of another size than the
//   trace's events (failslow::invalid_argument); exceptions of the
//   sink propagate.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "failslow/compress/window_compressor.hpp"
#include "failslow/core/error.hpp"
#include "failslow/core/event.hpp"
#include "failslow/core/launch_shape.hpp"
#include "failslow/io/trace_data.hpp"
#include "failslow/trace/detail/correlation_map.hpp"
#include "failslow/trace/steps.hpp"

namespace failslow::compress {

struct trace_window_options {
  compressor_config compressor;  ///< max_window_ns bounds windows only when steps are not used
  bool use_steps = true;         ///< one window per ProfilerStep when the trace has steps
  /// Per event of the trace, the key to file it under (launch_shape_keys); null: its name.
  const std::vector<name_id>* keys = nullptr;
};

/// Per event of `trace`, its compression key (see the synopsis): the name id, or for a compute
/// kernel with launch dimensions the id of launch_shape_key(name, grid, block) in `names` (a
/// name_table, or anything with intern(string) and name(id)). O(events + launches log shapes).
template <class Table>
std::vector<name_id> launch_shape_keys(const io::trace_data& trace, Table& names) {
  const auto& ev = trace.events;
  std::vector<name_id> keys(ev.size());
  for (std::size_t i = 0; i < ev.size(); ++i) keys[i] = ev[i].name;
  launch_shape_interner<Table> shapes(names);
  for (const auto& l : trace.launches)
    if (l.event < ev.size() && ev[l.event].kind == event_kind::kernel)
      keys[l.event] = shapes.key(ev[l.event].name, l.grid, l.block);
  return keys;
}

struct trace_window_counts {
  std::uint64_t device_events = 0;  ///< GPU activities in the trace
  std::uint64_t compressed = 0;     ///< added to a window
  std::uint64_t outside_steps = 0;  ///< GPU activities no step launched (step mode only)
  std::uint64_t skipped = 0;        ///< counted by the compressor (see skip_counts)
  std::uint64_t host_events = 0;    ///< CPU ops, runtime calls, annotations: not compressed
  std::uint64_t windows = 0;        ///< summaries handed to the sink

  bool accounted() const noexcept { return device_events == compressed + outside_steps + skipped; }
};

template <class Sink>
trace_window_counts summarize_trace(const io::trace_data& trace, const trace::step_map& steps, std::int32_t rank,
                                    const trace_window_options& options, Sink&& sink,
                                    std::vector<std::int64_t>* window_of_event = nullptr) {
  const auto& ev = trace.events;
  if (options.keys && options.keys->size() != ev.size())
    throw invalid_argument("summarize_trace: " + std::to_string(options.keys->size()) + " keys for " +
                           std::to_string(ev.size()) + " events");
  trace_window_counts counts;
  if (window_of_event) window_of_event->assign(ev.size(), -1);
  // The event as the compressor files it: under its key.
  auto keyed = [&](std::size_t i) {
    event e = ev[i];
    if (options.keys) e.name = (*options.keys)[i];
    return e;
  };
  const bool by_step = options.use_steps && !steps.steps.empty();

  // GPU activities in (window, start) order: a step's work may run after the next step began.
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < ev.size(); ++i) {
    if (!is_device_activity(ev[i].kind)) {
      ++counts.host_events;
      continue;
    }
    ++counts.device_events;
    if (by_step && (i >= steps.step_of_event.size() || steps.step_of_event[i] < 0)) {
      ++counts.outside_steps;
      continue;
    }
    order.push_back(i);
  }
  auto step_index = [&](std::size_t i) { return by_step ? steps.step_of_event[i] : 0; };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto sa = step_index(a), sb = step_index(b);
    return sa != sb ? sa < sb : ev[a].start_ns < ev[b].start_ns;
  });

  compressor_config cfg = options.compressor;
  if (by_step) cfg.max_window_ns = 0;  // steps close the windows
  std::int64_t next_window_id = 0;
  window_compressor compressor(
      rank,
      [&](window_summary&& w) {
        w.window_id = static_cast<std::uint64_t>(next_window_id);
        counts.skipped += w.skipped.total();
        ++counts.windows;
        sink(std::move(w));
      },
      cfg);

  if (by_step) {
    // The host's launch pace: the calls that launched GPU work, by the step their start is in.
    std::vector<std::vector<std::int64_t>> launches(steps.steps.size());
    const std::vector<char> is_launch = trace::detail::launch_calls(ev);
    for (std::size_t i = 0; i < ev.size(); ++i)
      if (is_launch[i] && i < steps.step_of_event.size() && steps.step_of_event[i] >= 0)
        launches[static_cast<std::size_t>(steps.step_of_event[i])].push_back(ev[i].start_ns);
    std::size_t k = 0;
    for (std::size_t s = 0; s < steps.steps.size(); ++s) {
      const auto& step = steps.steps[s];
      next_window_id = step.number;
      std::sort(launches[s].begin(), launches[s].end());
      for (std::int64_t t : launches[s]) compressor.add_launch(t);
      for (; k < order.size() && steps.step_of_event[order[k]] == static_cast<std::int32_t>(s); ++k) {
        const std::size_t i = order[k];
        if (compressor.add(keyed(i)) && window_of_event) (*window_of_event)[i] = step.number;
      }
      compressor.close_window(std::max<std::int64_t>(step.gpu_end_ns, 0));
    }
  } else {
    for (std::size_t i : order) {
      // add() may first close the previous window on the time bound; the event then opens the
      // window numbered windows_closed().
      const bool added = compressor.add(keyed(i));
      next_window_id = static_cast<std::int64_t>(compressor.windows_closed());
      if (added && window_of_event) (*window_of_event)[i] = next_window_id;
    }
    next_window_id = static_cast<std::int64_t>(compressor.windows_closed());
    compressor.close_window();
  }
  counts.compressed = counts.device_events - counts.outside_steps - counts.skipped;
  return counts;
}

}  // namespace failslow::compress
