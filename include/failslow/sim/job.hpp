// failslow/sim/job.hpp -- the simulated training job: parallel layout, model and schedule.
//
// Synopsis
//   struct job_config: what the simulator runs.
//     sizes, order       tp x cp x ep x dp x pp ranks in a Megatron order string
//                        (core/topology.hpp; default "tp-cp-ep-dp-pp", tp fastest)
//     steps, first_step  S profiled steps numbered ProfilerStep#first_step ...
//     microbatches       m micro-batches per step and pipeline
//     layers_per_stage   transformer layers per pipeline stage
//     schedule           one_f_one_b (Megatron's 1F1B, PipeDream-flush) or gpipe (all forwards,
//                        then all backwards); the pipeline bubble (p-1)/(m+p-1) of either
//                        arises from the send/receive dependencies, it is not drawn in
//     gpus_per_node      ranks r and r' share a host clock iff r / g == r' / g; device = r % g
//     seq_length, hidden message sizes written to NCCL args ("In msg nelems"), and the
//                        shape the durations scale to from the catalogue's 4096 x 4096
//                        (kernels.hpp): GEMMs and attention x (seq/4096)(hidden/4096)^2,
//                        memory-bound kernels and TP/CP/EP/PP transfers x (seq/4096)(hidden/4096),
//                        DP transfers x (hidden/4096)^2 (exactly 1 at the defaults)
//     dp_buckets         gradient buckets: DP reduce-scatters before and all-gathers after
//                        the optimizer
//     seed, noise        noise scales every jitter (kernel lognormal sigma, bimodal excess,
//                        host overheads, rank heterogeneity); noise = 0 gives exact base times
//     max_clock_offset_us  per-node clock offsets are uniform in +-this
//     host               the CPU side (host_config): cudaLaunchKernel time, the CPU time between
//                        launches in forward (main thread) and backward (autograd thread), the
//                        host work opening each step
//   calibrate(cfg) / calibrated_job(): the shape 2048 x 2048 and host_config::calibrated(),
//   calibrated against real PyTorch traces (docs/simulator.md; `failslow simulate
//   --calibrated`). The plain defaults, which the tests and `failslow simulate` without the
//   flag run, keep the earlier GPU-bound model (the host ~30x faster than the GPU).
//   validate(cfg) checks everything and returns the topology.
//   Model per micro-batch and stage: first stage adds the embedding (and its TP all-reduce),
//   every layer runs LN, QKV GEMM, rotary, flash attention, projection GEMM, TP all-reduce,
//   residual add, LN, FC1 GEMM, GELU, FC2 GEMM, TP all-reduce, residual add (cp > 1: a KV
//   all-gather in the cp group; ep > 1: the MLP is a grouped expert GEMM between two
//   all-to-alls in the ep group); the last stage adds the LM head and the vocab-parallel
//   loss; backward mirrors it with about twice the compute. After the last backward: DP
//   reduce-scatter of gradient buckets, gradient norm and Adam kernels, DP all-gather.
//   Gradient synchronisation runs in the dp group alone (cp and ep ranks are not folded
//   into it): the groups "dp:k" of core/topology.hpp are exactly the gradient groups.
// Complexity: validate is O(1).
// Errors: validate throws failslow::invalid_argument for sizes < 1, steps < 1,
//   microbatches < 1, layers_per_stage < 1, gpus_per_node < 1, first_step < 0, noise < 0
//   or not finite, max_clock_offset_us < 0, host times or sigma < 0 or not finite (launch_us
//   <= 0), and the topology's own errors (bad order).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/detail/enum_count.hpp"
#include "failslow/core/error.hpp"
#include "failslow/core/topology.hpp"

namespace failslow::sim {

enum class pipeline_schedule : std::uint8_t { one_f_one_b = 0, gpipe = 1 };
/// Number of pipeline_schedule values (they are 0 .. pipeline_schedule_count - 1).
inline constexpr std::size_t pipeline_schedule_count = 2;

constexpr std::string_view to_string(pipeline_schedule s) noexcept {
  return s == pipeline_schedule::gpipe ? "gpipe" : "1f1b";
}
static_assert(failslow::detail::enum_count_matches<pipeline_schedule>(pipeline_schedule_count),
              "pipeline_schedule_count is not the number of pipeline_schedule values");

/// Parses "1f1b" or "gpipe"; throws invalid_argument otherwise.
FAILSLOW_FUNC pipeline_schedule parse_pipeline_schedule(std::string_view s);

/// The host (CPU) side of the timing model (microseconds).
struct host_config {
  double launch_us = 4.5;        ///< a cudaLaunchKernel call, median (lognormal)
  double gap_forward_us = 7.0;   ///< CPU time from a launch's return to the next launch, outside backward
  double gap_backward_us = 7.0;  ///< the same in backward (PyTorch's autograd thread)
  double gap_sigma = 0.3;        ///< lognormal sigma of those gaps at noise = 1
  double step_head_us = 0.0;     ///< host work opening each ProfilerStep before its first launch

  /// Calibrated against real PyTorch traces (df_index_resolver, docs/simulator.md): launch
  /// 6 us; start-to-start 28 us in forward, 80 us in backward (gaps 22 and 72 us, sigma 0.65
  /// from their interquartile ranges); 1.5 ms of data loading and zero_grad per step.
  static constexpr host_config calibrated() noexcept { return {6.0, 22.0, 72.0, 0.65, 1500.0}; }
};

struct job_config {
  parallel_sizes sizes{2, 1, 1, 8, 4};  ///< tp, cp, ep, dp, pp: 64 ranks
  std::string order = std::string(topology::default_order);
  int steps = 30;
  std::int64_t first_step = 100;
  int microbatches = 4;
  int layers_per_stage = 2;
  pipeline_schedule schedule = pipeline_schedule::one_f_one_b;
  int gpus_per_node = 8;
  std::int64_t seq_length = 4096;
  std::int64_t hidden = 4096;
  int dp_buckets = 2;
  std::uint64_t seed = 1;
  double noise = 1.0;
  double max_clock_offset_us = 800.0;
  host_config host{};
};

/// Sets cfg's shape (2048 x 2048) and host to the values calibrated against real traces
/// (docs/simulator.md); the layout, schedule, steps, seed and the rest stay.
FAILSLOW_FUNC job_config& calibrate(job_config& cfg) noexcept;

/// The default job, calibrated (calibrate).
inline job_config calibrated_job() {
  job_config c;
  return calibrate(c);
}

/// Checks cfg and returns its topology (see the file synopsis for the errors).
FAILSLOW_FUNC topology validate(const job_config& cfg);

}  // namespace failslow::sim

#if FAILSLOW_HEADER_ONLY
#include "failslow/sim/impl/job.ipp"
#endif
