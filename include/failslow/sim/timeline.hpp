// failslow/sim/timeline.hpp -- what the timing model produces for one rank: GPU kernels, host
// calls and annotations on the true (global) clock.
//
// Synopsis
//   rank_timeline: one rank's simulated activity, all times integer nanoseconds on the true
//   clock of the job (0 = the start of the simulation). The rank's own clock reads
//   true + clock_offset_ns; the Kineto writer converts.
//     kernels      gpu_kernel: start/end, role (kernel_catalogue() gives the name), stream,
//                  correlation id of the launch, step number, and for collectives the
//                  process-group dimension, message size and collective name
//     host         host_call: cudaLaunchKernel (with the correlation id of its kernel),
//                  cudaStreamSynchronize at the end of each step, and the CPU operators of
//                  host stalls (CompiledFunction, gc.collect)
//     annotations  ProfilerStep#N ranges (host), and phases on the host (user_annotation)
//                  and on the GPU (gpu_user_annotation: first kernel start to last kernel end)
//   Vectors are in the order the model produced them (host and GPU each in time order).
// Complexity: plain data.
// Errors: none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "failslow/core/detail/enum_count.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/sim/kernels.hpp"

namespace failslow::sim {

/// Annotated phases (the names the writer uses).
enum class phase : std::uint8_t {
  profiler_step,  ///< "ProfilerStep#N"
  forward,
  backward,
  embedding,
  self_attention,
  mlp,
  loss,
  dp_reduce_scatter,
  optimizer,
  dp_all_gather,
};
/// Number of phase values (they are 0 .. phase_count - 1).
inline constexpr std::size_t phase_count = 10;

constexpr std::string_view to_string(phase p) noexcept {
  switch (p) {
    case phase::profiler_step:
      return "ProfilerStep";
    case phase::forward:
      return "forward";
    case phase::backward:
      return "backward";
    case phase::embedding:
      return "embedding";
    case phase::self_attention:
      return "self_attention";
    case phase::mlp:
      return "MLP";
    case phase::loss:
      return "loss";
    case phase::dp_reduce_scatter:
      return "dp-reduce-scatter";
    case phase::optimizer:
      return "optimizer";
    case phase::dp_all_gather:
      return "dp-all-gather";
  }
  return "forward";
}
static_assert(failslow::detail::enum_count_matches<phase>(phase_count),
              "phase_count is not the number of phase values");

/// "Collective name" of a point-to-point or collective kernel.
enum class comm_op : std::uint8_t { none, allreduce, reduce_scatter, allgather, send, recv, coalesced, all_to_all };
/// Number of comm_op values (they are 0 .. comm_op_count - 1).
inline constexpr std::size_t comm_op_count = 8;

constexpr std::string_view to_string(comm_op c) noexcept {
  switch (c) {
    case comm_op::none:
      return "";
    case comm_op::allreduce:
      return "allreduce";
    case comm_op::reduce_scatter:
      return "_reduce_scatter_base";
    case comm_op::allgather:
      return "_allgather_base";
    case comm_op::send:
      return "send";
    case comm_op::recv:
      return "recv";
    case comm_op::coalesced:
      return "coalesced";
    case comm_op::all_to_all:
      return "all_to_all";
  }
  return "";
}
static_assert(failslow::detail::enum_count_matches<comm_op>(comm_op_count),
              "comm_op_count is not the number of comm_op values");

/// Host-side call names.
enum class host_name : std::uint8_t { launch_kernel, stream_synchronize, compiled_function, gc_collect, data_loader };
/// Number of host_name values (they are 0 .. host_name_count - 1).
inline constexpr std::size_t host_name_count = 5;

constexpr std::string_view to_string(host_name h) noexcept {
  switch (h) {
    case host_name::launch_kernel:
      return "cudaLaunchKernel";
    case host_name::stream_synchronize:
      return "cudaStreamSynchronize";
    case host_name::compiled_function:
      return "CompiledFunction";
    case host_name::gc_collect:
      return "gc.collect";
    case host_name::data_loader:
      return "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__";
  }
  return "cudaLaunchKernel";
}
static_assert(failslow::detail::enum_count_matches<host_name>(host_name_count),
              "host_name_count is not the number of host_name values");

/// True for the runtime calls (cuda_runtime), false for CPU operators (cpu_op).
constexpr bool is_runtime_call(host_name h) noexcept {
  return h == host_name::launch_kernel || h == host_name::stream_synchronize;
}

struct gpu_kernel {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t step = 0;    ///< ProfilerStep number that launched it
  std::int64_t nelems = 0;  ///< collectives: "In msg nelems"
  std::uint32_t correlation = 0;
  std::uint16_t stream = 7;
  kernel_role role = kernel_role::layer_norm_fwd;
  comm_op comm = comm_op::none;
  parallel_dim comm_dim = parallel_dim::tp;  ///< collectives: the process group's dimension

  std::int64_t duration_ns() const noexcept { return end_ns - start_ns; }
  bool is_collective() const noexcept { return comm != comm_op::none; }
};

struct host_call {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::uint32_t correlation = 0;  ///< launches: the kernel's; others: their own id
  host_name name = host_name::launch_kernel;
};

struct annotation {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t step = 0;  ///< the ProfilerStep it lies in (its own number for profiler_step)
  phase what = phase::forward;
  bool on_gpu = false;  ///< gpu_user_annotation (on the compute stream) vs user_annotation
};

struct rank_timeline {
  int rank = 0;
  std::int64_t clock_offset_ns = 0;  ///< this rank's clock = true time + offset
  std::vector<gpu_kernel> kernels;
  std::vector<host_call> host;
  std::vector<annotation> annotations;
};

}  // namespace failslow::sim
