// failslow/sim/kineto_writer.hpp -- writes a simulated rank as a PyTorch-profiler (Kineto)
// Chrome-trace JSON document.
//
// Synopsis
//   std::string kineto_trace(job, rank, options)           the document of one rank
//   void write_kineto_trace(job, rank, out, options)       appends it to `out`
//   The layout follows what PyTorch 2.x writes (see ../shared/data/kineto/README.md):
//     schemaVersion, deviceProperties[] (gpus_per_node devices), distributedInfo {backend
//     "nccl", rank, world_size, pg_count, pg_config[] (the default group and every tp, cp,
//     ep, dp, pp group of more than one rank this rank belongs to, with its ranks),
//     nccl_version}, traceEvents[], baseTimeNanoseconds.
//   Process groups are numbered as torch.distributed numbers them when every rank creates
//   every group in the same order: "0" = default_pg, then for tp, cp, ep, dp, pp (sizes > 1)
//   each group k of that dimension (core/topology.hpp numbering) in order. Descriptions are
//   Megatron's (TENSOR_MODEL_PARALLEL_GROUP, DATA_PARALLEL_GROUP, ...).
//   traceEvents: "M" process/thread names; host events on pid = host pid, tid = pid:
//     user_annotation    ProfilerStep#N and the phases (forward, backward, ...)
//     cuda_runtime       cudaLaunchKernel / cudaStreamSynchronize with args.correlation
//     cpu_op             host stalls (CompiledFunction, gc.collect)
//   GPU events on pid = device (rank % gpus_per_node), tid = stream:
//     kernel             args: External id, device, stream, correlation, grid, block; NCCL
//                        kernels also Collective name, In/Out msg nelems, Group size, dtype,
//                        In/Out split size, Process Group Name/Description/Ranks
//     gpu_user_annotation  phases on the compute stream
//   ts and dur are microseconds with a three-digit nanosecond fraction, on the rank's own
//   clock (true time + its clock offset + epoch_ns) relative to baseTimeNanoseconds.
//   Strings are JSON-escaped (quotes, backslashes, control characters as \u00XX).
//   The output depends only on the job: the same job gives the same bytes.
// Complexity: O(events log events) (host and GPU events are each sorted by start, enclosing
//   ranges before what they enclose).
// Errors: a rank outside the job throws failslow::domain_error.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/sim/simulator.hpp"

namespace failslow::sim {

struct kineto_write_options {
  std::int64_t base_time_ns = 1712000000000000000;  ///< baseTimeNanoseconds
  std::int64_t epoch_ns = 4000000000000000;         ///< added to every rank's clock (a boot-time clock)
  std::string device_name = "NVIDIA H100 80GB HBM3";
  std::string nccl_version = "2.21.5";
  std::int64_t host_pid_base = 2910000;  ///< host pid of rank r = host_pid_base + r
};

/// torch.distributed name of rank's process group along d ("0" is the default group);
/// empty when the group has one rank.
FAILSLOW_FUNC std::string process_group_name(const topology& topo, int rank, parallel_dim d);

/// Megatron's description of the groups along d.
constexpr std::string_view process_group_description(parallel_dim d) noexcept {
  switch (d) {
    case parallel_dim::tp:
      return "TENSOR_MODEL_PARALLEL_GROUP";
    case parallel_dim::cp:
      return "CONTEXT_PARALLEL_GROUP";
    case parallel_dim::ep:
      return "EXPERT_MODEL_PARALLEL_GROUP";
    case parallel_dim::dp:
      return "DATA_PARALLEL_GROUP";
    case parallel_dim::pp:
      return "PIPELINE_MODEL_PARALLEL_GROUP";
  }
  return "";
}

/// Appends the Kineto JSON document of `rank` to `out`.
FAILSLOW_FUNC void write_kineto_trace(const simulated_job& job, int rank, std::string& out,
                                      const kineto_write_options& opt = {});

/// The Kineto JSON document of `rank`.
FAILSLOW_FUNC std::string kineto_trace(const simulated_job& job, int rank, const kineto_write_options& opt = {});

}  // namespace failslow::sim

#if FAILSLOW_HEADER_ONLY
#include "failslow/sim/impl/kineto_writer.ipp"
#endif
