// failslow/sim/kernels.hpp -- the kernel catalogue of the simulated transformer.
//
// Synopsis
//   kernel_role names every GPU kernel the simulator emits (GEMMs, attention, norms,
//   elementwise, embedding, loss, optimizer, NCCL collectives, JIT-compiled Triton kernels);
//   kernel_catalogue() gives, per role, what a real Megatron-style bf16 job on Hopper shows
//   in a Kineto trace:
//     name            the full kernel name (cuBLAS sm90_xmma_*, CUTLASS Kernel2<...>,
//                     flash-attention flash_fwd_kernel / flash_bwd_kernel, ATen
//                     vectorized_layer_norm_kernel / vectorized_elementwise_kernel,
//                     ncclDevKernel_AllReduce_Sum_bf16_RING_LL(...), ncclDevKernel_SendRecv...)
//     base_us         median duration (compute) or transfer time (collectives), microseconds
//     sigma           lognormal jitter of the duration at noise = 1
//     bimodal_p/x     probability and size of a slow mode (kernel-selection / L2-cache effects)
//     memory_bound    true for bandwidth-bound kernels (norms, elementwise, embedding, softmax)
//     collective      the NCCL "Collective name" ("" for compute kernels)
//     grid, block     the launch configuration written to args.grid / args.block
//   The table (detail::catalogue_rows) has one row per role that names its role; a
//   static_assert checks that row i describes kernel_role i. A kernel family's rows come
//   from the family's helper (cublas_gemm, cutlass_gemm, flash_bwd, elementwise,
//   elementwise_nocast, multi_tensor_apply, triton, nccl), which writes once what the
//   family's names and launch configurations share; names are joined at compile time.
//   Durations are those of a 4096-hidden layer shard at 4096 tokens per micro-batch (tp 2,
//   bf16, H100), the reference shape: the simulator scales them to the job's hidden size and
//   sequence length (job.hpp); nothing in the library depends on their exact values.
// Complexity: O(1); the catalogue is a constexpr table.
// Errors: none (a name longer than detail::kernel_name_text::capacity does not compile).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string_view>

#include "failslow/core/error.hpp"

namespace failslow::sim {

enum class kernel_role : std::uint8_t {
  layer_norm_fwd,
  gemm_qkv_fwd,
  rope_fwd,
  flash_fwd,
  gemm_proj_fwd,
  residual_add,
  gemm_fc1_fwd,
  gelu_fwd,
  gemm_fc2_fwd,
  gemm_fc2_dgrad,
  gemm_fc2_wgrad,
  gelu_bwd,
  gemm_fc1_dgrad,
  gemm_fc1_wgrad,
  layer_norm_bwd_input,
  layer_norm_bwd_gamma,
  gemm_proj_dgrad,
  gemm_proj_wgrad,
  flash_bwd_dot_do_o,
  flash_bwd,
  flash_bwd_convert_dq,
  rope_bwd,
  gemm_qkv_dgrad,
  gemm_qkv_wgrad,
  embedding_fwd,
  embedding_bwd,
  lm_head_fwd,
  loss_max,
  log_softmax_fwd,
  log_softmax_bwd,
  lm_head_dgrad,
  lm_head_wgrad,
  grad_norm,
  adam_step,
  grouped_gemm_expert,
  triton_fused_0,
  triton_fused_1,
  triton_fused_2,
  nccl_allreduce,
  nccl_reduce_scatter,
  nccl_all_gather,
  nccl_send_recv,
  nccl_all_to_all,
};

/// Number of kernel_role values (they are 0 .. kernel_role_count - 1).
inline constexpr std::size_t kernel_role_count = 43;

struct kernel_spec {
  std::string_view name;
  double base_us = 0;
  double sigma = 0;
  double bimodal_p = 0;
  double bimodal_x = 1;
  bool memory_bound = false;
  std::string_view collective;  ///< "" for compute kernels
  std::array<std::uint32_t, 3> grid{1, 1, 1};
  std::array<std::uint32_t, 3> block{1, 1, 1};

  bool is_collective() const noexcept { return !collective.empty(); }
};

namespace detail {

using launch_dims = std::array<std::uint32_t, 3>;

/// A kernel name joined at compile time from pieces (join), so that a family writes what
/// its names share once.
struct kernel_name_text {
  static constexpr std::size_t capacity = 768;
  std::array<char, capacity> text{};
  std::size_t size = 0;

  constexpr std::string_view view() const { return {text.data(), size}; }
};

constexpr kernel_name_text join(std::initializer_list<std::string_view> parts) {
  kernel_name_text out;
  for (std::string_view p : parts) {
    if (p.size() > kernel_name_text::capacity - out.size)
      throw domain_error("kernel catalogue: a kernel name is longer than kernel_name_text::capacity");
    for (char c : p) out.text[out.size++] = c;
  }
  return out;
}

enum class bound : std::uint8_t { compute, memory };
/// Number of bound values (they are 0 .. bound_count - 1).
inline constexpr std::size_t bound_count = 2;

/// One row of the catalogue: the role it describes, its name, its spec (the catalogue
/// fills spec.name from `name`).
struct catalogue_row {
  /// kernel_role_count (no role): a row the table lacks, caught by rows_in_role_order
  kernel_role role = static_cast<kernel_role>(kernel_role_count);
  kernel_name_text name;
  kernel_spec spec;

  /// With probability p the kernel takes x times its duration.
  constexpr catalogue_row slow_mode(double p, double x) const {
    catalogue_row r = *this;
    r.spec.bimodal_p = p;
    r.spec.bimodal_x = x;
    return r;
  }
};

constexpr catalogue_row row(kernel_role role, const kernel_name_text& name, double base_us, double sigma, bound b,
                            launch_dims grid, launch_dims block, std::string_view collective = {}) {
  catalogue_row r;
  r.role = role;
  r.name = name;
  r.spec.base_us = base_us;
  r.spec.sigma = sigma;
  r.spec.memory_bound = b == bound::memory;
  r.spec.collective = collective;
  r.spec.grid = grid;
  r.spec.block = block;
  return r;
}

// ---- the families

/// An ATen kernel outside the families below: memory-bound, named in full after
/// "void at::native::".
constexpr catalogue_row aten(kernel_role role, std::string_view name, double base_us, double sigma, launch_dims grid,
                             launch_dims block) {
  return row(role, join({"void at::native::", name}), base_us, sigma, bound::memory, grid, block);
}

/// cuBLAS's Hopper bf16 GEMM sm90_xmma_gemm_..._<layout>_n_tilesize<tile>_warpgroupsize<w>
/// _execute_segment_k_<on|off>_kernel__5x_cublas: one CTA per SM (132); the 128x128x64
/// tile runs one warp group (128 threads), the 256-wide tiles two (384 threads).
constexpr catalogue_row cublas_gemm(kernel_role role, std::string_view layout, std::string_view tile,
                                    std::string_view segment_k, double base_us) {
  const bool one_group = tile == "128x128x64";
  return row(role,
             join({"sm90_xmma_gemm_bf16bf16_bf16f32_f32_", layout, "_n_tilesize", tile, "_warpgroupsize",
                   one_group ? "1x1x1" : "2x1x1", "_execute_segment_k_", segment_k, "_kernel__5x_cublas"}),
             base_us, 0.02, bound::compute, {132, 1, 1}, {one_group ? 128u : 384u, 1, 1});
}

/// CUTLASS 2 (Ampere tensor-op) bf16 GEMM void cutlass::Kernel2<K>(K::Params) with
/// K = cutlass_80_tensorop_bf16_s16816gemm_<kernel>_align8; 256 threads.
constexpr catalogue_row cutlass_gemm(kernel_role role, std::string_view kernel, double base_us, double sigma,
                                     launch_dims grid) {
  return row(role,
             join({"void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_", kernel,
                   "_align8>(cutlass_80_tensorop_bf16_s16816gemm_", kernel, "_align8::Params)"}),
             base_us, sigma, bound::compute, grid, {256, 1, 1});
}

/// flash-attention 2's backward kernels (head dim 128, bf16): void flash::<head><traits><tail>
/// with these traits; grid 32 x 16, 256 threads.
inline constexpr std::string_view flash_bwd_traits =
    "Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, "
    "64, 128, 8, cutlass::bfloat16_t> >";

constexpr catalogue_row flash_bwd(kernel_role role, std::string_view head, std::string_view tail, double base_us,
                                  double sigma, bound b) {
  return row(role, join({"void flash::", head, flash_bwd_traits, tail}), base_us, sigma, b, {32, 16, 1}, {256, 1, 1});
}

/// ATen's vectorized elementwise kernel over `tensors` tensors (inputs and output):
/// void at::native::vectorized_elementwise_kernel<4, F, at::detail::Array<char*, N> >(int, F,
/// at::detail::Array<char*, N>); memory-bound, 128 threads.
constexpr catalogue_row elementwise(kernel_role role, std::string_view functor, std::string_view tensors,
                                    double base_us, std::uint32_t blocks) {
  return row(role,
             join({"void at::native::vectorized_elementwise_kernel<4, ", functor, ", at::detail::Array<char*, ",
                   tensors, "> >(int, ", functor, ", at::detail::Array<char*, ", tensors, ">)"}),
             base_us, 0.04, bound::memory, {blocks, 1, 1}, {128, 1, 1});
}

/// A functor through ATen's non-vectorized path (a gpu_kernel_impl_nocast lambda in
/// elementwise_kernel<128, 4, ...>); memory-bound, 128 threads.
constexpr catalogue_row elementwise_nocast(kernel_role role, std::string_view functor, double base_us,
                                           std::uint32_t blocks) {
  constexpr std::string_view impl = "at::native::gpu_kernel_impl_nocast<";
  return row(role,
             join({"void at::native::elementwise_kernel<128, 4, ", impl, functor, " >(at::TensorIteratorBase&, ",
                   functor, " const&)::{lambda(int)#1}>(int, ", impl, functor, " >(at::TensorIteratorBase&, ", functor,
                   " const&)::{lambda(int)#1})"}),
             base_us, 0.04, bound::memory, {blocks, 1, 1}, {128, 1, 1});
}

/// ATen's multi_tensor_apply_kernel over `lists` tensor lists, with a functor of ATen's
/// anonymous namespace and its extra arguments (optimizer and norm kernels); memory-bound,
/// 320 x 512 threads.
constexpr catalogue_row multi_tensor_apply(kernel_role role, std::string_view lists, std::string_view functor,
                                           std::string_view args, double base_us, double sigma) {
  constexpr std::string_view anon = "at::native::(anonymous namespace)::";
  return row(role,
             join({"void ",
                   anon,
                   "multi_tensor_apply_kernel<",
                   anon,
                   "TensorListMetadata<",
                   lists,
                   ">, ",
                   anon,
                   functor,
                   ", ",
                   args,
                   ">(",
                   anon,
                   "TensorListMetadata<",
                   lists,
                   ">, ",
                   anon,
                   functor,
                   ", ",
                   args,
                   ")"}),
             base_us, sigma, bound::memory, {320, 1, 1}, {512, 1, 1});
}

/// A kernel Inductor (torch.compile) generated: a fused pointwise or reduction kernel,
/// memory-bound.
constexpr catalogue_row triton(kernel_role role, std::string_view name, double base_us, std::uint32_t blocks,
                               std::uint32_t threads) {
  return row(role, join({name}), base_us, 0.03, bound::memory, {blocks, 1, 1}, {threads, 1, 1});
}

/// An NCCL 2.19+ device kernel ncclDevKernel_<kernel>(ncclDevKernelArgsStorage<4096ul>), one
/// block per channel; base_us is the transfer time.
constexpr catalogue_row nccl(kernel_role role, std::string_view kernel, std::string_view collective, double base_us,
                             double sigma, std::uint32_t channels, std::uint32_t threads) {
  return row(role, join({"ncclDevKernel_", kernel, "(ncclDevKernelArgsStorage<4096ul>)"}), base_us, sigma,
             bound::compute, {channels, 1, 1}, {threads, 1, 1}, collective);
}

// ---- names of the kernels outside the families (after "void at::native::")

inline constexpr std::string_view layer_norm_fwd_name =
    "(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, "
    "c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)";
inline constexpr std::string_view layer_norm_bwd_input_name =
    "(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<c10::BFloat16, float>(c10::BFloat16 const*, "
    "c10::BFloat16 const*, float const*, float const*, c10::BFloat16 const*, c10::BFloat16*, int)";
inline constexpr std::string_view layer_norm_bwd_gamma_name =
    "(anonymous namespace)::GammaBetaBackwardCUDAKernel<c10::BFloat16, float>(long, long, c10::BFloat16 const*, "
    "c10::BFloat16 const*, float const*, float const*, c10::BFloat16*, c10::BFloat16*)";
inline constexpr std::string_view embedding_fwd_name =
    "(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, true>(at::cuda::"
    "detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned "
    "int>, at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, unsigned int, long)";
inline constexpr std::string_view embedding_bwd_name =
    "(anonymous namespace)::embedding_backward_feature_kernel<c10::BFloat16, float, long>(long const*, "
    "c10::BFloat16 const*, float*, int, long, int, int)";
inline constexpr std::string_view loss_max_name =
    "reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MaxOps<float>, unsigned int, float, 4> >(at::"
    "native::ReduceOp<float, at::native::MaxOps<float>, unsigned int, float, 4>)";
inline constexpr std::string_view log_softmax_fwd_name =
    "(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::"
    "LogSoftMaxForwardEpilogue>(float*, float const*, int)";
inline constexpr std::string_view log_softmax_bwd_name =
    "(anonymous namespace)::cunn_SoftMaxBackward<4, float, float, float, at::native::(anonymous namespace)::"
    "LogSoftMaxBackwardEpilogue>(float*, float const*, float const*, long)";
inline constexpr std::string_view flash_fwd_name =
    "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, "
    "Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, "
    "false>(flash::Flash_fwd_params)";

// ---- functors of the elementwise kernels

inline constexpr std::string_view gelu_fwd_functor =
    "at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() "
    "const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}";
inline constexpr std::string_view gelu_bwd_functor =
    "at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()"
    "() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16)#1}";
inline constexpr std::string_view bf16_mul_functor =
    "at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<"
    "float> >";
inline constexpr std::string_view bf16_scalar_mul_functor =
    "at::native::AUnaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<"
    "float> >";

// ---- the table: one row per kernel_role, in its order
//   family helper (role, family arguments, base_us[, sigma][, launch]) [.slow_mode(p, x)]

inline constexpr std::array<catalogue_row, kernel_role_count> catalogue_rows = {{
    aten(kernel_role::layer_norm_fwd, layer_norm_fwd_name, 38, 0.03, {2048, 1, 1}, {256, 1, 1}),
    cublas_gemm(kernel_role::gemm_qkv_fwd, "tn", "128x256x64", "off", 260),
    elementwise_nocast(kernel_role::rope_fwd, bf16_mul_functor, 24, 16384),
    row(kernel_role::flash_fwd, join({flash_fwd_name}), 310, 0.02, bound::compute, {16, 16, 1}, {128, 1, 1})
        .slow_mode(0.10, 1.20),
    cublas_gemm(kernel_role::gemm_proj_fwd, "tn", "128x128x64", "off", 120),
    elementwise(kernel_role::residual_add, "at::native::CUDAFunctor_add<c10::BFloat16>", "3", 22, 8192),
    cutlass_gemm(kernel_role::gemm_fc1_fwd, "relu_bf16_256x128_32x3_tn", 470, 0.02, {16, 32, 1}).slow_mode(0.08, 1.15),
    elementwise(kernel_role::gelu_fwd, gelu_fwd_functor, "2", 64, 32768),
    cublas_gemm(kernel_role::gemm_fc2_fwd, "tn", "256x128x64", "off", 450),
    cublas_gemm(kernel_role::gemm_fc2_dgrad, "nn", "256x128x64", "off", 450),
    cublas_gemm(kernel_role::gemm_fc2_wgrad, "nt", "128x256x64", "off", 470),
    elementwise(kernel_role::gelu_bwd, gelu_bwd_functor, "3", 80, 32768),
    cutlass_gemm(kernel_role::gemm_fc1_dgrad, "bf16_256x128_32x3_nn", 480, 0.02, {16, 32, 1}),
    cutlass_gemm(kernel_role::gemm_fc1_wgrad, "bf16_256x128_32x3_nt", 500, 0.02, {16, 32, 1}),
    aten(kernel_role::layer_norm_bwd_input, layer_norm_bwd_input_name, 55, 0.03, {2048, 1, 1}, {128, 1, 1}),
    aten(kernel_role::layer_norm_bwd_gamma, layer_norm_bwd_gamma_name, 45, 0.03, {128, 1, 1}, {32, 32, 1}),
    cublas_gemm(kernel_role::gemm_proj_dgrad, "nn", "128x128x64", "off", 120),
    cublas_gemm(kernel_role::gemm_proj_wgrad, "nt", "128x128x64", "off", 125),
    flash_bwd(kernel_role::flash_bwd_dot_do_o, "flash_bwd_dot_do_o_kernel<true, ", " >(flash::Flash_bwd_params)", 30,
              0.04, bound::memory),
    flash_bwd(kernel_role::flash_bwd, "flash_bwd_kernel<",
              ", true, false, false, false, false, true, false, false>(flash::Flash_bwd_params)", 780, 0.02,
              bound::compute)
        .slow_mode(0.15, 1.25),
    flash_bwd(kernel_role::flash_bwd_convert_dq, "flash_bwd_convert_dq_kernel<", " >(flash::Flash_bwd_params, int)", 20,
              0.04, bound::memory),
    elementwise(kernel_role::rope_bwd, bf16_scalar_mul_functor, "2", 24, 16384),
    cublas_gemm(kernel_role::gemm_qkv_dgrad, "nn", "128x256x64", "off", 260),
    cublas_gemm(kernel_role::gemm_qkv_wgrad, "nt", "256x128x64", "on", 270).slow_mode(0.05, 1.10),
    aten(kernel_role::embedding_fwd, embedding_fwd_name, 35, 0.04, {4096, 1, 1}, {128, 1, 1}),
    aten(kernel_role::embedding_bwd, embedding_bwd_name, 90, 0.04, {128, 1, 1}, {32, 32, 1}),
    cublas_gemm(kernel_role::lm_head_fwd, "tn", "256x128x64", "on", 900),
    aten(kernel_role::loss_max, loss_max_name, 40, 0.04, {2048, 1, 1}, {32, 16, 1}),
    aten(kernel_role::log_softmax_fwd, log_softmax_fwd_name, 120, 0.03, {2048, 1, 1}, {1024, 1, 1}),
    aten(kernel_role::log_softmax_bwd, log_softmax_bwd_name, 110, 0.03, {2048, 1, 1}, {1024, 1, 1}),
    cublas_gemm(kernel_role::lm_head_dgrad, "nn", "256x128x64", "on", 900),
    cublas_gemm(kernel_role::lm_head_wgrad, "nt", "128x256x64", "on", 920),
    multi_tensor_apply(kernel_role::grad_norm, "1",
                       "LpNormFunctor<float, (at::native::(anonymous namespace)::NormType)1, float, float>",
                       "float*, int", 60, 0.03),
    multi_tensor_apply(kernel_role::adam_step, "4", "FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>",
                       "double, double, double, double, double, double, bool, double*, double*", 260, 0.02),
    cutlass_gemm(kernel_role::grouped_gemm_expert, "grouped_bf16_128x128_64x3_tn", 380, 0.04, {132, 1, 1})
        .slow_mode(0.10, 1.30),
    triton(kernel_role::triton_fused_0, "triton_poi_fused__to_copy_add_mul_native_layer_norm_0", 45, 4096, 128),
    triton(kernel_role::triton_fused_1, "triton_red_fused__to_copy_add_native_layer_norm_native_layer_norm_backward_1",
           70, 4096, 256),
    triton(kernel_role::triton_fused_2, "triton_per_fused_gelu_gelu_backward_mul_2", 55, 8192, 128),
    nccl(kernel_role::nccl_allreduce, "AllReduce_Sum_bf16_RING_LL", "allreduce", 70, 0.05, 8, 512),
    nccl(kernel_role::nccl_reduce_scatter, "ReduceScatter_Sum_f32_RING_SIMPLE", "_reduce_scatter_base", 1500, 0.04, 16,
         640),
    nccl(kernel_role::nccl_all_gather, "AllGather_RING_LL", "_allgather_base", 1200, 0.04, 16, 640),
    nccl(kernel_role::nccl_send_recv, "SendRecv", "send", 180, 0.05, 2, 640),
    nccl(kernel_role::nccl_all_to_all, "SendRecv", "all_to_all", 220, 0.06, 16, 640),
}};

constexpr bool rows_in_role_order(const std::array<catalogue_row, kernel_role_count>& rows) {
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i].role != static_cast<kernel_role>(i)) return false;
  return true;
}
static_assert(rows_in_role_order(catalogue_rows),
              "kernel catalogue: row i must describe kernel_role i (one row per role, in the enum's order)");

constexpr std::array<kernel_spec, kernel_role_count> specs_of(
    const std::array<catalogue_row, kernel_role_count>& rows) {
  std::array<kernel_spec, kernel_role_count> out{};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    out[i] = rows[i].spec;
    out[i].name = rows[i].name.view();
  }
  return out;
}

inline constexpr std::array<kernel_spec, kernel_role_count> catalogue_specs = specs_of(catalogue_rows);

}  // namespace detail

/// The whole catalogue, indexed by kernel_role.
constexpr const std::array<kernel_spec, kernel_role_count>& kernel_catalogue() noexcept {
  return detail::catalogue_specs;
}

/// The entry of one role.
constexpr const kernel_spec& spec_of(kernel_role r) noexcept {
  return detail::catalogue_specs[static_cast<std::size_t>(r)];
}

}  // namespace failslow::sim
