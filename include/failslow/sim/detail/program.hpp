// failslow/sim/detail/program.hpp -- the per-rank program of one training step: the ordered
// kernels, collectives, point-to-point transfers and phase markers a rank issues, from the
// job layout and the pipeline schedule (Megatron's 1F1B or GPipe). Internal to simulator.hpp.
// Point-to-point peers are stored relative to the rank (peer = rank + offset; rank =
// sum coord * stride, so the neighbouring stage is always +-stride(pp)): the program depends
// only on the rank's pipeline stage, and the ranks of one stage share it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/sim/job.hpp"
#include "failslow/sim/kernels.hpp"
#include "failslow/sim/timeline.hpp"

namespace failslow::sim::detail {

enum class op_type : std::uint8_t { kernel, collective, p2p, push, pop };

struct op {
  op_type type = op_type::kernel;
  kernel_role role = kernel_role::layer_norm_fwd;
  phase ph = phase::forward;
  parallel_dim dim = parallel_dim::tp;
  comm_op comm = comm_op::none;
  int send_offset = 0;  ///< p2p: the rank it sends to minus this rank (0: no send)
  int recv_offset = 0;  ///< p2p: the rank it receives from minus this rank (0: no receive)
  std::int64_t nelems = 0;
  double transfer_us = 0;  ///< collectives: transfer time for this group size, before jitter
};

/// The job's shape against the kernel catalogue's reference (seq_length = hidden = 4096):
/// the factor on a compute kernel's duration, (seq/4096)(hidden/4096) for memory-bound kernels
/// and (seq/4096)(hidden/4096)^2 for the others (GEMMs, attention); exactly 1 at the reference.
inline double compute_shape_factor(const job_config& cfg, const kernel_spec& spec) {
  const double s = static_cast<double>(cfg.seq_length) / 4096.0, h = static_cast<double>(cfg.hidden) / 4096.0;
  return spec.memory_bound ? s * h : s * h * h;
}

/// The same for a transfer along d: gradients (dp) scale as hidden^2, activations as seq x hidden.
inline double transfer_shape_factor(const job_config& cfg, parallel_dim d) {
  const double s = static_cast<double>(cfg.seq_length) / 4096.0, h = static_cast<double>(cfg.hidden) / 4096.0;
  return d == parallel_dim::dp ? h * h : s * h;
}

/// Kernel launches of one step of `program` (kernels, collectives and point-to-point ops).
inline std::size_t launch_count(const std::vector<op>& program) {
  return static_cast<std::size_t>(std::count_if(program.begin(), program.end(), [](const op& o) {
    return o.type == op_type::kernel || o.type == op_type::collective || o.type == op_type::p2p;
  }));
}

class program_builder {
 public:
  FAILSLOW_FUNC program_builder(const job_config& cfg, const topology& topo, int rank);

  FAILSLOW_FUNC std::vector<op> build();

 private:
  FAILSLOW_FUNC void kernel(kernel_role r);
  FAILSLOW_FUNC void push(phase p);
  FAILSLOW_FUNC void pop();
  /// A collective in rank's group along d; none when the group has one member. Ring
  /// algorithms move (n-1)/n of the data per member: ring_factor scales the base time.
  FAILSLOW_FUNC void collective(kernel_role r, parallel_dim d, comm_op c, std::int64_t nelems, double base_us,
                                double ring_factor);
  void tp_allreduce(std::int64_t nelems, double base_us) {
    collective(kernel_role::nccl_allreduce, parallel_dim::tp, comm_op::allreduce, nelems, base_us, 2.0);
  }
  FAILSLOW_FUNC void p2p(int send_to, int recv_from);

  FAILSLOW_FUNC void forward();

  void all_to_all(std::int64_t nelems) {
    collective(kernel_role::nccl_all_to_all, parallel_dim::ep, comm_op::all_to_all, nelems,
               spec_of(kernel_role::nccl_all_to_all).base_us, 1.0);
  }

  FAILSLOW_FUNC void backward();

  FAILSLOW_FUNC void optimizer_step();

  const job_config& cfg_;
  const topology& topo_;
  int rank_;
  int stage_ = 0, stages_ = 1, prev_ = -1, next_ = -1;
  std::int64_t tokens_ = 1;
  std::vector<op> ops_;
};

}  // namespace failslow::sim::detail

#if FAILSLOW_HEADER_ONLY
#include "failslow/sim/detail/impl/program.ipp"
#endif
