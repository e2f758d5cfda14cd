// failslow/io/perfetto_trace.hpp -- the worst window of a diagnosed job as a Chrome JSON trace
// (Trace Event Format) that Perfetto (ui.perfetto.dev) and chrome://tracing open, with every
// finding as an annotation on the affected rank's track.
//
// Synopsis
//   perfetto_view choose_perfetto_view(report, model, topo, options)
//     Which ranks and steps to show. The finding: the most severe one that names a rank (else
//     one that names a group's ranks, evidence group_ranks or stage_ranks; else the first).
//     The culprit: its first rank (a group's: its lowest); with no such finding, the rank with
//     the most compute time in the worst step. Peers: up to options.peers ranks with data that
//     the finding compared it with (evidence peers; a group's other members), else its
//     data-parallel group. Steps: up to options.max_steps consecutive model steps centred on the
//     worst step of the finding (evidence peak_step, else the culprit's longest iteration in
//     the finding's range; with no finding, the job's slowest step).
//   perfetto_result perfetto_trace(report, model, topo, traces, options)
//     traces: the job's trace set (trace/trace_set.hpp), or null when the job comes from .fsum
//     summaries. Writes {"traceEvents": [...], "displayTimeUnit": "ms",
//     "baseTimeNanoseconds": origin, "otherData": {...}}:
//     - per shown rank one process (pid = rank), named "rank 39 (tp:19, dp:5, stage 2) --
//       culprit" or "-- peer", sorted culprit first ("M" process_name, process_sort_index);
//       threads named ("M" thread_name): "stream S (GPU d)", "host thread T", "iterations
//       (failslow)", "findings (failslow)"
//     - from traces: every event of the shown steps on those ranks ("X" complete events),
//       attributed to steps as trace/steps.hpp does (GPU work by its launch's correlation id,
//       host events by the step range they start in; events in no step when they start inside
//       the window's span), with Kineto's categories (kernel, gpu_memcpy, gpu_memset,
//       user_annotation, gpu_user_annotation, cpu_op, cuda_runtime) and args (device, stream,
//       correlation, grid, block, the NCCL fields), so that failslow's Kineto reader
//       (io/kineto_reader.hpp) reads them back as the same events; options.host_events = false
//       keeps of the host events only the ProfilerStep ranges
//     - clock-aligned: each rank's events shifted by the offset trace/clock_align.hpp estimates
//       from the collectives of the traces in `traces` (aligned = local - offset); a rank the
//       estimate cannot link keeps its own clock, and otherData says so
//     - per rank and shown step an "iteration N" slice (cat "failslow") from the previous
//       step's last GPU end to this step's, args: the model's iteration and phase times (ns)
//     - each finding whose steps overlap the window: on every shown rank it names (ranks,
//       group_ranks, stage_ranks) an instant event ("i", scope thread) at the start of the
//       overlap with args level, kind, summary, ranks, group, phase, kernel, first_step,
//       last_step, score and the evidence, plus a slice over the overlap (cat
//       "failslow_finding"); a job-wide finding is a global instant (scope "g")
//     - from summaries (traces null, or a shown rank without a trace): what the model knows --
//       the iteration slices placed at the window summaries' [start, end] on the rank's own
//       clock (not aligned: summaries hold no collective instances), or laid end to end from
//       0 when the model kept no windows; one track per phase with its per-step total as a
//       slice from the step's start (its place inside the step is not recorded; its args hold
//       the exact total); the step's costliest kernels in the iteration slice's args; the
//       process name and otherData say "from summaries: no events"
//     ts and dur are microseconds with three decimals (exact nanoseconds), relative to origin =
//     the earliest aligned time written (so none is negative); baseTimeNanoseconds = origin,
//     which Kineto readers add back. otherData: generator, view (ranks, steps, why), source,
//     clock alignment (offsets in ns), events written and cut, every finding's summary, notes.
//   At most options.max_events trace events are written (the culprit's first); the rest are
//   counted in events_cut and named in the notes.
// Complexity: O(events of the shown ranks) plus the clock estimate over `traces`.
// Errors: invalid_argument when the topology's world size is not the model's; none otherwise
//   (a rank without data is left out and noted).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/report.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/diagnose/job_model.hpp"
#include "failslow/trace/trace_set.hpp"

namespace failslow::io {

struct perfetto_options {
  std::size_t peers = 3;             ///< healthy peers shown beside the culprit
  std::size_t max_steps = 3;         ///< consecutive steps shown around the worst one
  bool host_events = true;           ///< host annotations, runtime calls and CPU ops (ProfilerStep ranges always)
  bool align_clocks = true;          ///< shift each rank by its estimated clock offset
  std::size_t max_events = 2000000;  ///< trace events written at most
};

struct perfetto_view {
  static constexpr std::size_t none = static_cast<std::size_t>(-1);
  std::vector<int> ranks;                       ///< the culprit first, then its peers
  std::int64_t first_step = 0, last_step = 0;   ///< ProfilerStep numbers shown
  std::size_t first_index = 0, last_index = 0;  ///< the same as model step indices
  std::size_t finding = none;                   ///< the finding the view centres on
  std::string why;                              ///< one sentence: what is shown and why
};

struct perfetto_result {
  std::string json;
  perfetto_view view;
  bool from_traces = false;
  bool clock_aligned = false;    ///< every shown rank from traces was linked by collectives
  std::uint64_t events = 0;      ///< trace events written
  std::uint64_t events_cut = 0;  ///< trace events of the window past max_events
  std::vector<std::string> notes;
};

FAILSLOW_FUNC perfetto_view choose_perfetto_view(const report& rep, const diagnose::job_model& m, const topology& topo,
                                                 const perfetto_options& o = {});

FAILSLOW_FUNC perfetto_result perfetto_trace(const report& rep, const diagnose::job_model& m, const topology& topo,
                                             const trace::trace_set* traces, const perfetto_options& o = {});

}  // namespace failslow::io

#if FAILSLOW_HEADER_ONLY
#include "failslow/io/impl/perfetto_trace.ipp"
#endif
