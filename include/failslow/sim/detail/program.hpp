// failslow/sim/detail/program.hpp -- the per-rank program of one training step: the ordered
// kernels, collectives, point-to-point transfers and phase markers a rank issues, from the
// job layout and the pipeline schedule (Megatron's 1F1B or GPipe). Internal to simulator.hpp.
// Point-to-point peers are stored relative to the rank (peer = rank + offset; rank =
// sum coord * stride, so the neighbouring stage is always +-stride(pp)): the program depends
// only on the rank's pipeline stage, and the ranks of one stage share it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

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
  program_builder(const job_config& cfg, const topology& topo, int rank) : cfg_(cfg), topo_(topo), rank_(rank) {
    const coordinates c = topo.coords(rank);
    stage_ = c[parallel_dim::pp];
    stages_ = topo.size(parallel_dim::pp);
    if (stage_ > 0) {
      coordinates p = c;
      p[parallel_dim::pp] = stage_ - 1;
      prev_ = topo.rank(p);
    }
    if (stage_ + 1 < stages_) {
      coordinates n = c;
      n[parallel_dim::pp] = stage_ + 1;
      next_ = topo.rank(n);
    }
    tokens_ = cfg.seq_length / topo.size(parallel_dim::cp);
    if (tokens_ < 1) tokens_ = 1;
  }

  std::vector<op> build() {
    const int m = cfg_.microbatches;
    if (cfg_.schedule == pipeline_schedule::gpipe || stages_ == 1) {
      for (int i = 0; i < m; ++i) {
        p2p(-1, prev_);
        forward();
        p2p(next_, -1);
      }
      for (int i = 0; i < m; ++i) {
        p2p(-1, next_);
        backward();
        p2p(prev_, -1);
      }
    } else {
      // Megatron-LM forward_backward_pipelining_without_interleaving.
      const int warmup = std::min(stages_ - stage_ - 1, m);
      const int remaining = m - warmup;
      for (int i = 0; i < warmup; ++i) {
        p2p(-1, prev_);
        forward();
        p2p(next_, -1);
      }
      if (remaining > 0) p2p(-1, prev_);
      for (int i = 0; i < remaining; ++i) {
        forward();
        p2p(next_, next_);  // send_forward_recv_backward
        backward();
        if (i == remaining - 1)
          p2p(prev_, -1);  // send_backward
        else
          p2p(prev_, prev_);  // send_backward_recv_forward
      }
      for (int i = remaining; i < m; ++i) {
        p2p(-1, next_);
        backward();
        p2p(prev_, -1);
      }
    }
    optimizer_step();
    return std::move(ops_);
  }

 private:
  void kernel(kernel_role r) {
    op o;
    o.type = op_type::kernel;
    o.role = r;
    ops_.push_back(o);
  }
  void push(phase p) {
    op o;
    o.type = op_type::push;
    o.ph = p;
    ops_.push_back(o);
  }
  void pop() {
    op o;
    o.type = op_type::pop;
    ops_.push_back(o);
  }
  /// A collective in rank's group along d; none when the group has one member. Ring
  /// algorithms move (n-1)/n of the data per member: ring_factor scales the base time.
  void collective(kernel_role r, parallel_dim d, comm_op c, std::int64_t nelems, double base_us, double ring_factor) {
    const int n = topo_.size(d);
    if (n <= 1) return;
    op o;
    o.type = op_type::collective;
    o.role = r;
    o.dim = d;
    o.comm = c;
    o.nelems = nelems;
    o.transfer_us =
        base_us * ring_factor * static_cast<double>(n - 1) / static_cast<double>(n) * transfer_shape_factor(cfg_, d);
    ops_.push_back(o);
  }
  void tp_allreduce(std::int64_t nelems, double base_us) {
    collective(kernel_role::nccl_allreduce, parallel_dim::tp, comm_op::allreduce, nelems, base_us, 2.0);
  }
  void p2p(int send_to, int recv_from) {
    if (send_to < 0 && recv_from < 0) return;
    op o;
    o.type = op_type::p2p;
    o.role = kernel_role::nccl_send_recv;
    o.dim = parallel_dim::pp;
    o.send_offset = send_to >= 0 ? send_to - rank_ : 0;
    o.recv_offset = recv_from >= 0 ? recv_from - rank_ : 0;
    o.comm = send_to >= 0 && recv_from >= 0 ? comm_op::coalesced : send_to >= 0 ? comm_op::send : comm_op::recv;
    o.nelems = tokens_ * cfg_.hidden;
    o.transfer_us = spec_of(kernel_role::nccl_send_recv).base_us * transfer_shape_factor(cfg_, parallel_dim::pp);
    ops_.push_back(o);
  }

  void forward() {
    const std::int64_t act = tokens_ * cfg_.hidden;
    const double ar_us = spec_of(kernel_role::nccl_allreduce).base_us;
    push(phase::forward);
    if (stage_ == 0) {
      push(phase::embedding);
      kernel(kernel_role::embedding_fwd);
      tp_allreduce(act, ar_us);
      pop();
    }
    for (int l = 0; l < cfg_.layers_per_stage; ++l) {
      push(phase::self_attention);
      kernel(kernel_role::layer_norm_fwd);
      kernel(kernel_role::gemm_qkv_fwd);
      kernel(kernel_role::rope_fwd);
      collective(kernel_role::nccl_all_gather, parallel_dim::cp, comm_op::allgather,
                 2 * act / topo_.size(parallel_dim::tp), 150.0, 1.0);
      kernel(kernel_role::flash_fwd);
      kernel(kernel_role::gemm_proj_fwd);
      tp_allreduce(act, ar_us);
      kernel(kernel_role::residual_add);
      pop();
      push(phase::mlp);
      kernel(kernel_role::layer_norm_fwd);
      if (topo_.size(parallel_dim::ep) > 1) {
        all_to_all(act);
        kernel(kernel_role::grouped_gemm_expert);
        all_to_all(act);
      } else {
        kernel(kernel_role::gemm_fc1_fwd);
        kernel(kernel_role::gelu_fwd);
        kernel(kernel_role::gemm_fc2_fwd);
      }
      tp_allreduce(act, ar_us);
      kernel(kernel_role::residual_add);
      pop();
    }
    if (stage_ == stages_ - 1) {
      push(phase::loss);
      kernel(kernel_role::layer_norm_fwd);
      kernel(kernel_role::lm_head_fwd);
      kernel(kernel_role::loss_max);
      tp_allreduce(tokens_, 12.0);
      kernel(kernel_role::log_softmax_fwd);
      tp_allreduce(tokens_, 12.0);
      pop();
    }
    pop();
  }

  void all_to_all(std::int64_t nelems) {
    collective(kernel_role::nccl_all_to_all, parallel_dim::ep, comm_op::all_to_all, nelems,
               spec_of(kernel_role::nccl_all_to_all).base_us, 1.0);
  }

  void backward() {
    const std::int64_t act = tokens_ * cfg_.hidden;
    const double ar_us = spec_of(kernel_role::nccl_allreduce).base_us;
    push(phase::backward);
    if (stage_ == stages_ - 1) {
      push(phase::loss);
      kernel(kernel_role::log_softmax_bwd);
      kernel(kernel_role::lm_head_dgrad);
      kernel(kernel_role::lm_head_wgrad);
      kernel(kernel_role::layer_norm_bwd_input);
      kernel(kernel_role::layer_norm_bwd_gamma);
      pop();
    }
    for (int l = 0; l < cfg_.layers_per_stage; ++l) {
      push(phase::mlp);
      if (topo_.size(parallel_dim::ep) > 1) {
        all_to_all(act);
        kernel(kernel_role::grouped_gemm_expert);
        kernel(kernel_role::grouped_gemm_expert);
        all_to_all(act);
        tp_allreduce(act, ar_us);
      } else {
        kernel(kernel_role::gemm_fc2_dgrad);
        kernel(kernel_role::gemm_fc2_wgrad);
        kernel(kernel_role::gelu_bwd);
        kernel(kernel_role::gemm_fc1_dgrad);
        tp_allreduce(act, ar_us);
        kernel(kernel_role::gemm_fc1_wgrad);
      }
      kernel(kernel_role::layer_norm_bwd_input);
      kernel(kernel_role::layer_norm_bwd_gamma);
      pop();
      push(phase::self_attention);
      kernel(kernel_role::gemm_proj_dgrad);
      kernel(kernel_role::gemm_proj_wgrad);
      kernel(kernel_role::flash_bwd_dot_do_o);
      kernel(kernel_role::flash_bwd);
      kernel(kernel_role::flash_bwd_convert_dq);
      collective(kernel_role::nccl_reduce_scatter, parallel_dim::cp, comm_op::reduce_scatter,
                 2 * act / topo_.size(parallel_dim::tp), 150.0, 1.0);
      kernel(kernel_role::rope_bwd);
      kernel(kernel_role::gemm_qkv_dgrad);
      tp_allreduce(act, ar_us);
      kernel(kernel_role::gemm_qkv_wgrad);
      kernel(kernel_role::layer_norm_bwd_input);
      kernel(kernel_role::layer_norm_bwd_gamma);
      pop();
    }
    if (stage_ == 0) {
      push(phase::embedding);
      kernel(kernel_role::embedding_bwd);
      pop();
    }
    pop();
  }

  void optimizer_step() {
    const std::int64_t params =
        std::int64_t{12} * cfg_.hidden * cfg_.hidden * cfg_.layers_per_stage / topo_.size(parallel_dim::tp);
    const std::int64_t bucket = std::max<std::int64_t>(1, params / cfg_.dp_buckets);
    const int dp = topo_.size(parallel_dim::dp);
    const double buckets = static_cast<double>(cfg_.dp_buckets);
    if (dp > 1) {
      push(phase::dp_reduce_scatter);
      for (int b = 0; b < cfg_.dp_buckets; ++b)
        collective(kernel_role::nccl_reduce_scatter, parallel_dim::dp, comm_op::reduce_scatter, bucket,
                   spec_of(kernel_role::nccl_reduce_scatter).base_us, 2.0 / buckets);
      pop();
    }
    push(phase::optimizer);
    kernel(kernel_role::grad_norm);
    for (int i = 0; i < 3; ++i) kernel(kernel_role::adam_step);
    pop();
    if (dp > 1) {
      push(phase::dp_all_gather);
      for (int b = 0; b < cfg_.dp_buckets; ++b)
        collective(kernel_role::nccl_all_gather, parallel_dim::dp, comm_op::allgather,
                   std::max<std::int64_t>(1, bucket / dp), spec_of(kernel_role::nccl_all_gather).base_us,
                   2.0 / buckets);
      pop();
    }
  }

  const job_config& cfg_;
  const topology& topo_;
  int rank_;
  int stage_ = 0, stages_ = 1, prev_ = -1, next_ = -1;
  std::int64_t tokens_ = 1;
  std::vector<op> ops_;
};

}  // namespace failslow::sim::detail
