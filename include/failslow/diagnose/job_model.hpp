// failslow/diagnose/job_model.hpp -- the one data model every diagnosis level reads: per rank
// and step, the iteration time and where the time went.
//
// Synopsis
//   job_model: world_size ranks, the ProfilerStep numbers `steps` (ascending, the union over
//   ranks), and
//     iteration_ns(rank, step)          dense_array<double, 2>: the time between two step
//                                       completions on the GPU (trace/step_breakdown.hpp: the
//                                       step's last GPU end - the previous step's; the first step
//                                       of a rank, or one after a gap in the step numbers: its
//                                       last GPU end - its first GPU start)
//     phase_ns(rank, phase, step)       dense_array<double, 3>, phases described by `phases`:
//       0 compute        sum of compute-kernel durations           role work
//       1 communication  sum of collective durations (waits included)  role wait
//       2 memory         sum of memcpy/memset/copy-kernel durations     role work
//       3 idle           period - union of GPU activity             role idle (from summaries,
//                        which do not keep the union: period - sum of all durations, at least
//                        0, a lower bound when streams overlap)
//       4...             annotated phases (trace/step_breakdown.hpp): compute time inside each
//                        user annotation (forward, backward, ...), role work
//     A trace without GPU activity (a CPU job) is measured on the host instead
//     (trace/step_breakdown.hpp, from_host): the same phases from CPU operators inside each
//     ProfilerStep's CPU range -- compute = operator time outside collectives, communication =
//     collective operators' time (c10d::*, gloo:*, nccl:*), memory 0, idle = no operator ran,
//     annotated phases = operator time inside each record_function scope; a note says so.
//     NaN marks what a rank did not record (a missing rank, a step it lacks).
//   has_rank[r] says whether rank r contributed anything; notes say what was skipped and why.
//   windows: the per-step kernel summaries (compress/window_summary.hpp: per kernel key the
//   exact count and total and the duration clusters) when the builder was asked to keep them
//   (model_options::keep_windows; from traces they are compressed per step with
//   compress/trace_windows.hpp), for the kernel-level diagnosis; window id = step number; their
//   keys index kernel_names / kernel_classes (one key space for all sources); window_index
//   finds them by (rank, step index).
//
//   job_model_builder assembles a model from any source, one piece at a time:
//     add_trace(rank, trace, names)    a recorded trace: steps (trace/steps.hpp), breakdown
//                                      and (keep_windows) its kernels per step, keyed by name
//                                      and launch shape where the trace has grid and block
//                                      (interned into `names`)
//     add_window(window, name_of)      a window summary (window id = ProfilerStep number): from a
//                                      .fsum file or in process from a window_compressor; the
//                                      kernel keys are classified by name_of(key) once per key;
//                                      a rank's windows must come in increasing window id
//     add_steps(rank, breakdown)       an already computed step breakdown
//     finish()                         the model (the builder is left empty)
//   build_job_model(set, options)                    every trace of a trace set
//   A model from .fsum window summaries: diagnose/model_from_summaries.hpp (it brings in the
//   .fsum decoder); from files of either kind: diagnose/load_job.hpp.
// Complexity: add_trace O(n log n) per trace; add_window O(keys); finish O(ranks x phases x steps).
// Memory: the builder keeps per rank and step the phase values (5 + annotated phases doubles),
//   never the events or (unless asked) the windows.
// Errors: a rank < 0 throws invalid_argument; a window of a rank whose id does not increase
//   throws invalid_argument; decoding errors of the .fsum header throw parse_error (damage
//   later in the file is reported in the notes and skipped).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "failslow/compress/trace_windows.hpp"
#include "failslow/compress/window_summary.hpp"
#include "failslow/core/compile_mode.hpp"
#include "failslow/core/dense_array.hpp"
#include "failslow/core/detail/enum_count.hpp"
#include "failslow/core/error.hpp"
#include "failslow/core/kernel_class.hpp"
#include "failslow/core/name_table.hpp"
#include "failslow/core/routing.hpp"
#include "failslow/trace/step_breakdown.hpp"
#include "failslow/trace/trace_set.hpp"

namespace failslow::diagnose {

/// What a phase's time is: the rank's own work, a wait for others, or nothing at all.
enum class phase_role : std::uint8_t {
  work,  ///< compute, memory, annotated phases: a rank slow here is slow itself
  wait,  ///< communication: includes the time spent waiting for the slowest peer
  idle,  ///< the GPU ran nothing of this rank (host-bound, stalls)
};
/// Number of phase_role values (they are 0 .. phase_role_count - 1).
inline constexpr std::size_t phase_role_count = 3;

constexpr std::string_view to_string(phase_role r) noexcept {
  return r == phase_role::work ? "work" : r == phase_role::wait ? "wait" : "idle";
}
static_assert(failslow::detail::enum_count_matches<phase_role>(phase_role_count),
              "phase_role_count is not the number of phase_role values");

struct phase_info {
  std::string name;
  phase_role role = phase_role::work;
  kernel_class cls = kernel_class::compute;  ///< what the phase is made of (routing uses it)
  bool annotated = false;                    ///< a user annotation, not a kernel class
  /// How the routing rules look the phase up: by phase (annotation) name, or, for the
  /// per-kernel models of L3, by kernel name.
  routing_subject subject = routing_subject::phase;
  bool compared = true;  ///< L2 compares it across ranks (L3's models carry some only as context)
};

/// Indices of the phases every model has.
inline constexpr std::size_t compute_phase = 0, communication_phase = 1, memory_phase = 2, idle_phase = 3,
                             class_phase_count = 4;

/// Who waited for whom in the collectives and transfers of the traces (diagnose/l4_waits.hpp
/// fills it; summaries carry no instances, so it stays unavailable for .fsum models).
struct wait_attribution {
  struct edge {
    int root = -1;    ///< the rank whose late arrival the wait is blamed on (cascades resolved)
    int victim = -1;  ///< the rank that waited
    double ns = 0;    ///< wait, summed over the job
  };
  bool available = false;
  dense_array<double, 2> waited_ns;      ///< rank x step: time spent waiting for a later arrival
  dense_array<double, 2> caused_ns;      ///< rank x step: others' wait blamed on the rank (root-resolved)
  dense_array<double, 2> late_ns;        ///< rank x step: its own lateness as the last arriver (over the second last)
  dense_array<double, 2> p2p_waited_ns;  ///< rank x step: the part of waited_ns in point-to-point transfers (pipeline)
  std::vector<edge> edges;               ///< root -> victim, largest first (wait_options::max_edges)
  std::vector<std::size_t> victims;      ///< per rank: how many ranks waited for it (all edges)
  std::vector<std::string> phase_before_late;  ///< per rank: what it ran before its late arrivals
  std::uint64_t collectives = 0, instances = 0, pairs = 0, unmatched = 0, keys_skipped = 0;
  bool clocks_aligned = false;
  /// One group-collective instance's transfer time (diagnose/detail/instance_transfer.hpp): its
  /// shortest member's duration -- the last arriver waits for nobody, so no wait, inherited or
  /// not, is in it. L3's link test reads these.
  struct transfer {
    std::uint32_t group = 0;  ///< index into transfer_groups
    std::uint32_t key = 0;    ///< the collective's kernel key (job_model::kernel_names)
    std::uint32_t step = 0;   ///< model step index
    double ns = 0;
  };
  std::vector<std::vector<int>> transfer_groups;  ///< the ranks of each instance's group, ascending
  std::vector<transfer> transfers;
};

/// One launch gap of a rank's host in which its GPU ran nothing (diagnose/l4_host.hpp).
struct host_gap {
  std::size_t step = 0;                                 ///< model step index
  std::int64_t start_ns = 0, end_ns = 0;                ///< the launches around the gap, on the rank's clock
  double gpu_idle_ns = 0;                               ///< no activity of the rank on any stream
  double cpu_busy_ns = 0;                               ///< union of host operators inside the gap
  std::vector<std::pair<std::string, double>> top_ops;  ///< host operators by time inside
};

/// What the hosts did around their launches (diagnose/l4_host.hpp fills it from traces;
/// summaries keep no host events, so it stays unmeasured for .fsum models, but for the launch
/// pace where their windows carry one: compress::window_summary::launch).
struct host_activity {
  bool measured = false;                    ///< gaps, new kernels and launch pace, from traces
  bool launch_pace_measured = false;        ///< launch_interval_ns holds values (traces, or summaries' paces)
  std::vector<std::vector<host_gap>> gaps;  ///< per rank: the largest gap of each step that has one
  dense_array<double, 2> new_kernels;       ///< rank x step: kernels launched for the first time
  std::map<std::pair<int, std::size_t>, std::vector<std::string>> new_kernel_names;  ///< (rank, step): a few
  dense_array<double, 2> launch_interval_ns;  ///< rank x step: median time between launch calls (NaN: none)
};

struct job_model {
  int world_size = 0;
  std::vector<std::int64_t> steps;  ///< ProfilerStep numbers, ascending
  std::vector<phase_info> phases;
  dense_array<double, 2> iteration_ns;  ///< rank x step
  dense_array<double, 3> phase_ns;      ///< rank x phase x step
  std::vector<bool> has_rank;
  /// Ranks whose traces have no GPU activity: their steps were measured from host operators
  /// (idle is time no operator ran, not GPU idle).
  std::vector<bool> measured_on_host;
  std::vector<std::string> notes;
  std::vector<compress::window_summary> windows;  ///< kept only with model_options::keep_windows
  /// The kernel keys of `windows`: one id space for the whole model (traces and .fsum files
  /// each number their names; the builder re-keys every kept window by name).
  std::vector<std::string> kernel_names;
  std::vector<kernel_class> kernel_classes;  ///< per kernel key, by the model's classifier
  std::string source;                        ///< "traces", "summaries", "windows"
  wait_attribution waits;                    ///< L4's who-waited-for-whom (traces only)
  host_activity host;                        ///< L4's host gaps and launch pace (traces only)

  std::size_t rank_count() const noexcept { return static_cast<std::size_t>(world_size); }
  std::size_t step_count() const noexcept { return steps.size(); }
  std::size_t phase_count() const noexcept { return phases.size(); }
  /// Index of a phase by name, or phases.size().
  std::size_t phase_index(std::string_view name) const noexcept {
    for (std::size_t p = 0; p < phases.size(); ++p)
      if (phases[p].name == name) return p;
    return phases.size();
  }
  /// Ranks with data, ascending.
  FAILSLOW_FUNC std::vector<int> present_ranks() const;
};

/// The kept windows of a model by (rank, step index), for the levels that read kernels.
/// O(windows) to build; window() and find() O(1) and O(log keys).
class window_index {
 public:
  FAILSLOW_FUNC explicit window_index(const job_model& m);
  /// The window of `rank` at model step index `step`, or null.
  const compress::window_summary* window(int rank, std::size_t step) const {
    return at_[static_cast<std::size_t>(rank) * steps_ + step];
  }
  /// Its summary of kernel key `key`, or null.
  const compress::kernel_summary* find(int rank, std::size_t step, std::size_t key) const {
    const auto* w = window(rank, step);
    return w ? w->find(static_cast<name_id>(key)) : nullptr;
  }

 private:
  std::size_t steps_ = 0;
  std::vector<const compress::window_summary*> at_;
};

struct model_options {
  trace::step_breakdown_options breakdown;       ///< classifier and annotated-phase limit
  bool keep_windows = false;                     ///< keep per-step kernel summaries (traces: compressed per step)
  compress::trace_window_options trace_windows;  ///< how traces are compressed when kept
  int world_size = 0;                            ///< 0: the largest rank seen + 1 (or the trace set's)
};

class job_model_builder {
 public:
  FAILSLOW_FUNC explicit job_model_builder(model_options options = {});

  /// A recorded trace of `rank` (names: the name_table the trace was read into).
  FAILSLOW_FUNC void add_trace(int rank, const io::trace_data& trace, name_table& names);

  /// An already computed breakdown of `rank`.
  FAILSLOW_FUNC void add_steps(int rank, const trace::step_breakdown& b);

  /// A window summary; window_id is the ProfilerStep number. name_of(key) gives a key's name.
  template <class NameOf>
  void add_window(compress::window_summary w, NameOf&& name_of) {
    auto& rs = rank_state(w.rank);
    const auto id = static_cast<std::int64_t>(w.window_id);
    if (rs.seen && id <= rs.last_step)
      throw invalid_argument("job model: rank " + std::to_string(w.rank) + " window " + std::to_string(w.window_id) +
                             " after window " + std::to_string(rs.last_step) + " (ids must increase)");
    double sums[3] = {0, 0, 0};
    for (const auto& k : w.kernels) {
      if (k.key >= key_class_.size()) key_class_.resize(static_cast<std::size_t>(k.key) + 1, -1);
      auto& c = key_class_[k.key];
      if (c < 0) {
        const std::string_view name = name_of(k.key);
        c = static_cast<std::int8_t>(opt_.breakdown.classifier.classify(name));
      }
      sums[static_cast<std::uint8_t>(c)] += k.total_ns;  // c >= 0 here: a kernel_class
    }
    auto& v = rs.values[id];
    v.assign(1 + phases_.size(), nan);
    const bool consecutive = rs.seen && rs.last_step + 1 == id && rs.last_end < w.end_ns;
    v[0] = static_cast<double>(w.end_ns - (consecutive ? rs.last_end : w.start_ns));
    v[1 + compute_phase] = sums[static_cast<std::size_t>(kernel_class::compute)];
    v[1 + communication_phase] = sums[static_cast<std::size_t>(kernel_class::communication)];
    v[1 + memory_phase] = sums[static_cast<std::size_t>(kernel_class::memory)];
    v[1 + idle_phase] = std::max(0.0, v[0] - sums[0] - sums[1] - sums[2]);
    if (w.launch.measured()) rs.launch_interval[id] = w.launch.median_interval_ns;
    rs.seen = true;
    rs.last_step = id;
    rs.last_end = w.end_ns;
    skipped_events_ += w.skipped.total();
    if (opt_.keep_windows) keep_window(std::move(w), name_of);
    source_windows_ = true;
  }

  void add_note(std::string note) { notes_.push_back(std::move(note)); }

  /// Kernel keys of the windows added from now on are another file's (.fsum key ids are per
  /// file): classify them afresh.
  void new_key_space() { key_class_.clear(); }

  /// The model; the builder is empty afterwards.
  FAILSLOW_FUNC job_model finish();

 private:
  static constexpr double nan = std::numeric_limits<double>::quiet_NaN();

  struct rank_data {
    std::map<std::int64_t, std::vector<double>> values;  // step -> [iteration, phase 0, phase 1, ...]
    std::map<std::int64_t, double> launch_interval;      // step -> the window's median launch interval
    bool seen = false;                                   // a window of this rank was added
    std::int64_t last_step = 0, last_end = 0;
  };

  template <class = void>
  rank_data& rank_state(int rank) {
    if (rank < 0) throw invalid_argument("job model: rank " + std::to_string(rank) + " < 0");
    return ranks_[rank];
  }

  // Keeps a window with its keys renumbered into the model's one key space (by name).
  template <class NameOf>
  void keep_window(compress::window_summary&& w, NameOf&& name_of) {
    for (auto& k : w.kernels) {
      const std::string_view name = name_of(k.key);
      auto it = model_key_.find(name);
      if (it == model_key_.end()) {
        const auto id = static_cast<name_id>(kernel_names_.size());
        kernel_names_.emplace_back(name);
        kernel_classes_.push_back(opt_.breakdown.classifier.classify(name));
        it = model_key_.emplace(kernel_names_.back(), id).first;
      }
      k.key = it->second;
    }
    std::sort(w.kernels.begin(), w.kernels.end(),
              [](const compress::kernel_summary& a, const compress::kernel_summary& b) { return a.key < b.key; });
    windows_.push_back(std::move(w));
  }

  FAILSLOW_FUNC std::size_t phase_slot(std::string_view name, bool annotated = false);

  model_options opt_;
  std::vector<phase_info> phases_;
  std::map<int, rank_data> ranks_;
  std::vector<std::int8_t> key_class_;
  std::vector<compress::window_summary> windows_;
  std::vector<std::string> kernel_names_;
  std::vector<kernel_class> kernel_classes_;
  std::map<std::string, name_id, std::less<>> model_key_;
  std::vector<std::string> notes_;
  std::uint64_t skipped_events_ = 0;
  std::size_t host_traces_ = 0;                  // traces without GPU activity, measured from host operators
  std::vector<int> host_ranks_;                  // their ranks
  std::map<std::string, std::size_t> inferred_;  // optimizer-step marker -> traces cut at it
  bool source_traces_ = false, source_windows_ = false;
};

/// The model of every trace of a loaded trace set (missing and duplicate ranks become notes).
FAILSLOW_FUNC job_model build_job_model(const trace::trace_set& set, model_options options = {});

}  // namespace failslow::diagnose

#if FAILSLOW_HEADER_ONLY
#include "failslow/diagnose/impl/job_model.ipp"
#endif
