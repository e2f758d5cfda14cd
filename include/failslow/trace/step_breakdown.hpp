// failslow/trace/step_breakdown.hpp -- where one rank's time went in each training step: GPU
// time per kernel class, busy and idle time, and the compute time of each annotated phase.
//
// Synopsis
//   step_breakdown breakdown_steps(trace, steps, names, options)
//   For every step of `steps` (trace/steps.hpp: the GPU work each ProfilerStep#N launched):
//     period_ns         gpu_end(this step) - gpu_end(previous step) when the previous step
//                       (N - 1) has GPU work, else gpu_end - gpu_start: the time between two step
//                       completions, so the gap before the step's first kernel (data loading, a
//                       host stall at the start of the step) counts for the step that waited
//     compute_ns, communication_ns, memory_ns
//                       sums of the durations of the step's GPU activities by kernel class
//                       (core/kernel_class.hpp: collectives and NCCL-family kernels are
//                       communication, memcpy/memset and copy kernels memory, the rest compute).
//                       In a synchronous job a rank's communication time includes the time it
//                       waited in collectives for slower peers.
//     busy_ns           length of the union of the step's GPU activity intervals (all streams)
//     idle_ns           max(0, period_ns - busy_ns): the GPU ran nothing of this rank
//   Annotated phases (forward, backward, optimizer, ... whatever the user annotated): from
//   gpu_user_annotation ranges when the trace has any (a GPU activity belongs to an annotation
//   of its device when it starts inside the range), else from host user_annotation ranges (an
//   activity belongs to it when its launch -- the runtime call with the same correlation id --
//   starts inside the range, on any host thread). ProfilerStep#N annotations are steps, not
//   phases. phase_compute_ns[p][k] is the time of the non-communication (compute and memory)
//   activities of step k inside phase p: the work of the phase without the time spent waiting
//   in its collectives, so a rank that waits for a slow peer inside "forward" does not look
//   slow in "forward". An activity inside two ranges of the same name counts once; inside
//   nested phases of different names (self_attention in forward) it counts for each.
//   Phases are ordered by total time, at most options.max_phases kept (the rest are counted in
//   phases_dropped).
//   Traces without GPU activity (a CPU job: gloo, torch.profiler's CPU activity; from_host):
//   the same quantities from the host operators, inside each step's CPU range W (the
//   ProfilerStep#N annotation):
//     ops          cpu_op and runtime events; collectives are ops, and host annotations, whose
//                  name the classifier calls communication (c10d::allreduce_, gloo:all_reduce,
//                  nccl:*, record_param_comms)
//     period_ns    cpu_end(this step) - cpu_end(previous step) when consecutive, else |W|
//     communication_ns  |union(collectives) & W|: their wall time; nested and overlapping
//                  collectives (c10d::allreduce_ on the caller and gloo:all_reduce on gloo's
//                  thread) count once, waits for slower peers included
//     compute_ns   |union(other ops) & W - union(collectives)|: the time some operator ran on
//                  some thread, outside communication (nested operators count once)
//     memory_ns    0; busy_ns = |union(all ops) & W|; idle_ns = max(0, period - busy)
//     phases       the other host annotations (record_function scopes): phase_compute[p][k]
//                  = |union(other ops) & union(ranges named p) & W - union(collectives)|
//   has_work is true for every step then (has_gpu_work stays false).
//   device_time device_time_by_class(trace, names, classifier)
//   The whole trace's GPU time by kernel class (the same rule: classifier.classify(kind, name),
//   memcpy/memset memory and collectives communication whatever their name), and per name:
//   count and total time of the activities with that name, in name-id order. class_times is
//   the per-class sum on its own, for callers that classify other things (window summaries'
//   kernel keys) by the same rule.
// Accounting: every GPU activity is either in a step (counted by class) or in
//   outside_steps.
// Complexity: O(n log n + sum over annotations of the activities inside them); from the host
//   O(n log n + phases x (n + steps log n)).
// Errors: none; a trace without steps gives an empty breakdown.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/event.hpp"
#include "failslow/core/kernel_class.hpp"
#include "failslow/core/name_table.hpp"
#include "failslow/io/trace_data.hpp"
#include "failslow/trace/steps.hpp"

namespace failslow::trace {

/// Time per kernel class (ns).
struct class_times {
  double compute_ns = 0, communication_ns = 0, memory_ns = 0;
  void add(kernel_class c, double ns) noexcept {
    (c == kernel_class::compute ? compute_ns : c == kernel_class::communication ? communication_ns : memory_ns) += ns;
  }
  class_times& operator+=(const class_times& o) noexcept {
    compute_ns += o.compute_ns;
    communication_ns += o.communication_ns;
    memory_ns += o.memory_ns;
    return *this;
  }
  double total() const noexcept { return compute_ns + communication_ns + memory_ns; }
};

/// GPU time of one activity name.
struct name_time {
  name_id name = 0;
  kernel_class cls = kernel_class::compute;
  std::uint64_t count = 0;
  std::int64_t total_ns = 0;
};

/// GPU time of a trace by class and by name (device_time_by_class).
struct device_time {
  class_times by_class;
  std::vector<name_time> by_name;  ///< names that label GPU activities, in id order
};

FAILSLOW_FUNC device_time device_time_by_class(const io::trace_data& trace, const name_table& names,
                                               const kernel_classifier& classifier = kernel_classifier::defaults());

struct step_breakdown_options {
  kernel_classifier classifier = kernel_classifier::defaults();
  std::size_t max_phases = 32;  ///< annotated phases kept, the most time-consuming first
};

/// One step of one rank.
struct step_times {
  std::int64_t number = 0;  ///< N of ProfilerStep#N
  double period_ns = 0;
  double compute_ns = 0, communication_ns = 0, memory_ns = 0;
  double busy_ns = 0, idle_ns = 0;
  bool has_gpu_work = false;
  bool has_work = false;  ///< measured: the step has GPU work, or the breakdown is from_host
};

struct step_breakdown {
  std::vector<step_times> steps;                   ///< one per step of the step_map, same order
  std::vector<std::string> phase_names;            ///< annotated phases, most time first
  std::vector<std::vector<double>> phase_compute;  ///< [phase][step] compute time inside the phase (ns)
  bool phases_from_gpu = false;                    ///< gpu_user_annotation (true) or host ranges (false)
  bool from_host = false;                          ///< no GPU activity: measured from host operators
  std::uint64_t device_events = 0;                 ///< GPU activities of the trace
  std::uint64_t outside_steps = 0;                 ///< GPU activities no step launched
  std::uint64_t phases_dropped = 0;                ///< annotated phase names past max_phases
};

FAILSLOW_FUNC step_breakdown breakdown_steps(const io::trace_data& trace, const step_map& steps,
                                             const name_table& names, const step_breakdown_options& options = {});

}  // namespace failslow::trace

#if FAILSLOW_HEADER_ONLY
#include "failslow/trace/impl/step_breakdown.ipp"
#endif
