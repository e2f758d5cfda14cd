// failslow/io/analyzer_context.hpp -- a diagnosis as the context a language model reads: KAT's
// three-part analyzer template (system context, anomaly events, auxiliary metrics), plain text.
//
// Synopsis
//   std::string analyzer_context(report, model, topo, options)
//   KAT (Alibaba) hands its anomalies to a fine-tuned model in three parts: the system context
//   (<inference_config>, <parallel_strategy>), the anomaly events (<trace_anomaly> lines
//   "{gpu}.{sm} | {kernel} | duration={value} (expected {ref})") and auxiliary metrics
//   (<metric>NAME: value</metric>). failslow fills the same structure:
//     [System context]
//       <inference_config>   workload (options.model_type, "not stated" by default), world
//                            size, the steps and the data source, the job's median iteration
//       <parallel_strategy>  tp x pp x dp (cp, ep), Megatron order, where the layout came from
//     [Anomaly events]
//       <trace_anomaly>      one line per finding: "{who} | {what} | duration={observed}
//                            ({unit}, expected {baseline}) | {steps} | {level} {kind} {detail}";
//                            who = "rank39" (or "job", "dp:3", "stage:2"), what = the kernel or
//                            the phase; then, per rank a finding names (up to options.max_ranks),
//                            its costliest kernels against the same peers over the finding's
//                            steps, from the model's per-step kernel summaries: "rank39.gpu |
//                            {kernel} | duration={mean per launch} (expected {peers' median
//                            mean per launch}) | {launches} launches per step, {lost} lost per
//                            step" (up to options.kernels_per_rank, only kernels slower than
//                            their peers; compute and memory kernels, collectives are waits)
//       <finding>            each finding's sentence, in severity order
//     [Auxiliary metrics]
//       <metric>             per finding its numeric evidence (name=value; items in ns as
//                            durations without the _ns suffix), per named rank its
//                            phase times over the finding's steps against its peers' median,
//                            the job's iteration time; <note> lines for the report's notes
//   Numbers: durations with their unit ("45.7 ms"), other values with 4 significant digits.
//   Kernel names without their parameter lists, at most 90 characters. No model is called.
// Complexity: O(findings x evidence + named ranks x peers x steps x kernels).
// Errors: invalid_argument when the topology's world size is not the model's.
#pragma once

#include <cstddef>
#include <string>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/report.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/diagnose/job_model.hpp"

namespace failslow::io {

struct analyzer_context_options {
  std::string model_type = "not stated";  ///< what the job trains ("Llama-3 70B", ...)
  std::size_t max_findings = 20;          ///< findings rendered (the most severe first)
  std::size_t max_ranks = 4;              ///< ranks whose kernels are listed
  std::size_t kernels_per_rank = 5;       ///< kernels listed per rank
};

FAILSLOW_FUNC std::string analyzer_context(const report& rep, const diagnose::job_model& m, const topology& topo,
                                           const analyzer_context_options& o = {});

}  // namespace failslow::io

#if FAILSLOW_HEADER_ONLY
#include "failslow/io/impl/analyzer_context.ipp"
#endif
