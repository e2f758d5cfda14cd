// failslow/sim/detail/impl/program.ipp -- the definitions of sim/detail/program.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "failslow/core/topology.hpp"
#include "failslow/sim/detail/program.hpp"
#include "failslow/sim/job.hpp"
#include "failslow/sim/kernels.hpp"
#include "failslow/sim/timeline.hpp"

namespace failslow::sim::detail {

FAILSLOW_FUNC_DEF program_builder::program_builder(const job_config& cfg, const topology& topo, int rank)
    : cfg_(cfg), topo_(topo), rank_(rank) {
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

FAILSLOW_FUNC_DEF std::vector<op> program_builder::build() {
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

FAILSLOW_FUNC_DEF void program_builder::kernel(kernel_role r) {
  op o;
  o.type = op_type::kernel;
  o.role = r;
  ops_.push_back(o);
}

FAILSLOW_FUNC_DEF void program_builder::push(phase p) {
  op o;
  o.type = op_type::push;
  o.ph = p;
  ops_.push_back(o);
}

FAILSLOW_FUNC_DEF void program_builder::pop() {
  op o;
  o.type = op_type::pop;
  ops_.push_back(o);
}

FAILSLOW_FUNC_DEF void program_builder::collective(kernel_role r, parallel_dim d, comm_op c, std::int64_t nelems,
                                                   double base_us, double ring_factor) {
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

FAILSLOW_FUNC_DEF void program_builder::p2p(int send_to, int recv_from) {
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

FAILSLOW_FUNC_DEF void program_builder::forward() {
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

FAILSLOW_FUNC_DEF void program_builder::backward() {
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

FAILSLOW_FUNC_DEF void program_builder::optimizer_step() {
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
                 std::max<std::int64_t>(1, bucket / dp), spec_of(kernel_role::nccl_all_gather).base_us, 2.0 / buckets);
    pop();
  }
}

}  // namespace failslow::sim::detail
