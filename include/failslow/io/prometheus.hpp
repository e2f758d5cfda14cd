// failslow/io/prometheus.hpp -- a diagnosis as Prometheus metrics, text exposition format 0.0.4,
// for a node exporter's textfile collector (or any scraper that reads the text format).
//
// Synopsis
//   std::string prometheus_metrics(report, model, topo, options)
//   Families (all gauges: every value is the state of the last diagnosis, which the next one
//   replaces, so none is a counter and none carries the counters' `_total` suffix), each
//   written once, as `# HELP`, `# TYPE`, then its samples; times in seconds (ns / 1e9):
//     failslow_info{schema,source,topology_source,order} 1      what was diagnosed
//     failslow_world_size                                    ranks of the layout
//     failslow_parallel_size{dim}                            tp, cp, ep, dp, pp sizes
//     failslow_report_step{bound="first"|"last"}             ProfilerStep range of the report
//     failslow_findings{level,kind}                          findings per level and kind (every
//                                                            kind the diagnosis emits, 0 when
//                                                            absent, and any other kind present)
//     failslow_rank_findings{rank,level}                     findings naming the rank (> 0 only)
//     failslow_finding_score{finding,level,kind,rank,group,phase,kernel,first_step,last_step}
//     failslow_finding_job_slowdown_ratio{...}               share of the job's time lost
//     failslow_finding_observed_ratio{...}                   observed / baseline (evidence ratio)
//         finding = 1-based position in the report (severity order); rank = the first rank
//         named, "" for job- or group-wide findings; empty labels are written as "" (Prometheus
//         treats them as absent)
//     failslow_kernel_w1_seconds{rank,group,kernel}          W1 of the rank's duration
//                                                            distribution to its peers' (L3
//                                                            degraded_kernel evidence w1_ns)
//     failslow_kernel_peer_w1_seconds{rank,group,kernel}     the peers' own W1 (peer_w1_ns)
//     failslow_kernel_launch_seconds{rank,group,kernel,of="rank"|"peers"}  mean per launch
//     Per rank with data and per window (step) -- the last options.last_steps steps of the
//     model (0: every step):
//     failslow_iteration_seconds{rank,stage,step}            time between step completions
//     failslow_phase_seconds{rank,stage,step,phase,role}     every model phase (compute,
//                                                            communication, memory, idle,
//                                                            annotated phases)
//     failslow_gpu_time_seconds{rank,stage,step,role}        role "work": compute + memory
//                                                            kernels (the rank's own time),
//                                                            "wait": collectives (waits for
//                                                            peers included), "idle": no GPU work
//     failslow_job_iteration_median_seconds{step}            median over ranks
//   Cells the model marks NaN (a rank or step not recorded) have no sample: absent, not 0.
//   Format: names match [a-zA-Z_:][a-zA-Z0-9_:]*, label names [a-zA-Z_][a-zA-Z0-9_]*; label
//   values escape backslash, double quote and line feed (\\, \", \n) and HELP texts backslash
//   and line feed; bytes that are not UTF-8 become U+FFFD; numbers are the shortest decimal
//   that reads back as the same double ("+Inf", "-Inf", "NaN" for the non-finite); one line
//   per sample, a final line feed. No timestamps (the textfile collector refuses them).
//   The same inputs give the same bytes.
//   write_prometheus_file(path, text) writes PATH.tmp and renames it to PATH, so a collector
//   never reads a half-written file (io/output_file.hpp: rename is atomic within a file system).
// Complexity: O(ranks x phases x steps shown + findings x evidence).
// Errors: invalid_argument when the topology's world size is not the model's, or when the
//   file cannot be written or renamed.
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/report.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/diagnose/job_model.hpp"
#include "failslow/io/output_file.hpp"

namespace failslow::io {

struct prometheus_options {
  std::size_t last_steps = 1;  ///< per-rank samples for the last N steps (windows); 0 = every step
};

namespace detail {

/// A label value: backslash, double quote and line feed escaped (exposition format 0.0.4).
FAILSLOW_FUNC void append_prometheus_label_value(std::string& out, std::string_view v);

/// A HELP text: backslash and line feed escaped.
FAILSLOW_FUNC void append_prometheus_help(std::string& out, std::string_view v);

/// A sample value as Go's ParseFloat reads it: shortest round-trip decimal, +Inf, -Inf, NaN.
FAILSLOW_FUNC void append_prometheus_value(std::string& out, double v);

/// Writes families one after the other; a family's samples follow its HELP and TYPE lines.
class prometheus_writer {
 public:
  explicit prometheus_writer(std::string& out) : out_(out) {}

  FAILSLOW_FUNC void family(std::string_view name, std::string_view type, std::string_view help);

  using labels = std::vector<std::pair<std::string_view, std::string>>;

  /// One sample of the current family; a NaN value writes nothing (not measured).
  FAILSLOW_FUNC void sample(const labels& l, double value);

 private:
  std::string& out_;
  std::string name_;
  std::set<std::string, std::less<>> families_;
};

}  // namespace detail

FAILSLOW_FUNC std::string prometheus_metrics(const report& rep, const diagnose::job_model& m, const topology& topo,
                                             const prometheus_options& o = {});

/// Writes `text` to PATH.tmp, then renames it to PATH (what a textfile collector needs).
inline void write_prometheus_file(const std::string& path, std::string_view text) { write_file_atomically(path, text); }

}  // namespace failslow::io

#if FAILSLOW_HEADER_ONLY
#include "failslow/io/impl/prometheus.ipp"
#endif
