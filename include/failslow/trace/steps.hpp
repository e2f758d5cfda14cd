// failslow/trace/steps.hpp -- training steps on the GPU: which GPU work each ProfilerStep#N
// launched, although the GPU runs behind the CPU.
//
// Synopsis
//   step_map map_steps(trace, names)
//   A step is a host annotation named "ProfilerStep#N" (profiler_step_number parses N); its
//   CPU range is the annotation's [start, end). The GPU work of step N is every GPU activity
//   (kernel, collective, memcpy, memset) whose correlation id is that of a runtime call
//   (cudaLaunchKernel, cudaMemcpyAsync, hipLaunchKernel, ...) made inside the CPU range:
//       step(gpu event) = step(launch with the same correlation id)
//       step(launch)    = the step whose CPU range contains the launch's start
//   so a kernel that runs after the CPU already entered step N+1 still belongs to step N.
//   gpu_start/gpu_end of a step are the first start and last end of its GPU work. Host
//   events (cpu_op, runtime, annotations) belong to the step whose range contains their start.
//   When the trace states steps per event (trace_data::event_steps, the CSV/TSV table), those
//   are used instead, and a step's CPU range is the span of its host events (or of its GPU
//   events when it has no host events).
//   A trace profiled without a schedule (no prof.step(): no ProfilerStep#N at all) is cut into
//   iterations at its optimizer steps, which PyTorch's optimizers annotate themselves
//   ("Optimizer.step#SGD.step", any optimizer class; the most frequent such name when there
//   are several): step k, numbered from 0, is the CPU range from the end of optimizer step
//   k - 1 (for k = 0: the trace's first host event) to the end of optimizer step k, so that
//   every iteration is whole whatever the order of zero_grad, forward, backward and step in
//   the loop; inferred_from names the marker, and host work after the last optimizer step
//   is outside every step.
//   step_of_event[i] is the index into steps of event i's step, or -1.
//   group_steps(map, n): the steps taken n at a time in CPU order (the last group holds what is
//   left), one step per group numbered by its first step, its CPU and GPU ranges the group's
//   spans, its counts the sums, step_of_event pointing to the group: a window of n steps for
//   the compressor (denser summaries; the diagnosis then sees one value per n steps).
//   Counts: device events with no correlation or no matching launch (unattributed),
//   launches outside every step (launches_outside_steps), overlapping ProfilerStep ranges
//   (overlapping_steps: the later one starts inside the earlier; launches go to the later).
// Complexity: O(n log s) for n events and s steps; O(n) extra memory. group_steps: O(n + s).
// Errors: map_steps none (a trace with neither ProfilerStep nor optimizer-step annotations gives
//   no steps); group_steps invalid_argument for n = 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/event.hpp"
#include "failslow/core/name_table.hpp"
#include "failslow/io/trace_data.hpp"

namespace failslow::trace {

struct gpu_step {
  std::int64_t number = 0;  ///< N of ProfilerStep#N
  std::int64_t cpu_start_ns = 0, cpu_end_ns = 0;
  std::int64_t gpu_start_ns = -1, gpu_end_ns = -1;  ///< -1 when the step launched no GPU work
  std::uint64_t device_events = 0;                  ///< GPU activities of the step
  std::uint64_t launches = 0;                       ///< runtime calls inside the CPU range
  std::int64_t gpu_busy_ns = 0;                     ///< sum of the durations of its GPU activities
};

struct step_map {
  std::vector<gpu_step> steps;              ///< by CPU start
  std::vector<std::int32_t> step_of_event;  ///< per event: index into steps, or -1
  std::uint64_t unattributed = 0;           ///< GPU activities without a launch in a step
  std::uint64_t launches_outside_steps = 0;
  std::uint64_t overlapping_steps = 0;
  /// The annotation the steps were cut at when the trace has no ProfilerStep#N (an optimizer's
  /// "Optimizer.step#...": see the synopsis); empty otherwise.
  std::string inferred_from;
};

/// N when `name` is "ProfilerStep#N" (N a non-negative integer).
FAILSLOW_FUNC std::optional<std::int64_t> profiler_step_number(std::string_view name) noexcept;

/// Whether `name` is the annotation PyTorch's optimizers put around step():
/// "Optimizer.step#<class>.step".
FAILSLOW_FUNC bool is_optimizer_step(std::string_view name) noexcept;

FAILSLOW_FUNC step_map map_steps(const io::trace_data& trace, const name_table& names);

/// The steps of `m` taken n at a time (see the synopsis); n = 1 gives `m` as it is.
FAILSLOW_FUNC step_map group_steps(step_map m, std::size_t n);

}  // namespace failslow::trace

#if FAILSLOW_HEADER_ONLY
#include "failslow/trace/impl/steps.ipp"
#endif
