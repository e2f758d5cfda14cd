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
//   Durations are illustrative, of the right order for a 4096-hidden layer shard; nothing in
//   the library depends on their exact values.
// Complexity: O(1); the catalogue is a constexpr-initialised static table.
// Errors: none.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

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
  count_
};

inline constexpr std::size_t kernel_role_count = static_cast<std::size_t>(kernel_role::count_);

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
inline const std::array<kernel_spec, kernel_role_count>& catalogue_table() {
  static const std::array<kernel_spec, kernel_role_count> table = {{
      {"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, "
       "c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)",
       38,
       0.03,
       0,
       1,
       true,
       "",
       {2048, 1, 1},
       {256, 1, 1}},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__"
       "5x_cublas",
       260,
       0.02,
       0,
       1,
       false,
       "",
       {132, 1, 1},
       {384, 1, 1}},
      {"void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<c10::"
       "BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> > >(at::"
       "TensorIteratorBase&, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::"
       "binary_internal::MulFunctor<float> > const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::"
       "native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<"
       "float> > >(at::TensorIteratorBase&, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, "
       "at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1})",
       24,
       0.04,
       0,
       1,
       true,
       "",
       {16384, 1, 1},
       {128, 1, 1}},
      {"void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, "
       "Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, "
       "false>(flash::Flash_fwd_params)",
       310,
       0.02,
       0.10,
       1.20,
       false,
       "",
       {16, 16, 1},
       {128, 1, 1}},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__"
       "5x_cublas",
       120,
       0.02,
       0,
       1,
       false,
       "",
       {132, 1, 1},
       {128, 1, 1}},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::"
       "Array<char*, 3> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char*, 3>)",
       22,
       0.04,
       0,
       1,
       true,
       "",
       {8192, 1, 1},
       {128, 1, 1}},
      {"void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_256x128_32x3_tn_align8>(cutlass_80_"
       "tensorop_bf16_s16816gemm_relu_bf16_256x128_32x3_tn_align8::Params)",
       470,
       0.02,
       0.08,
       1.15,
       false,
       "",
       {16, 32, 1},
       {256, 1, 1}},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
       "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::"
       "BFloat16)#1}, at::detail::Array<char*, 2> >(int, "
       "at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() "
       "const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2>)",
       64,
       0.04,
       0,
       1,
       true,
       "",
       {32768, 1, 1},
       {128, 1, 1}},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize256x128x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__"
       "5x_cublas",
       450,
       0.02,
       0,
       1,
       false,
       "",
       {132, 1, 1},
       {384, 1, 1}},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize256x128x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__"
       "5x_cublas",
       450,
       0.02,
       0,
       1,
       false,
       "",
       {132, 1, 1},
       {384, 1, 1}},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__"
       "5x_cublas",
       470,
       0.02,
       0,
       1,
       false,
       "",
       {132, 1, 1},
       {384, 1, 1}},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::GeluBackwardCUDAKernelImpl(at::"
       "TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() "
       "const::{lambda(c10::BFloat16, c10::BFloat16)#1}, at::detail::Array<char*, 3> >(int, at::native::"
       "GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() "
       "const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16)#1}, at::detail::Array<char*, "
       "3>)",
       80,
       0.04,
       0,
       1,
       true,
       "",
       {32768, 1, 1},
       {128, 1, 1}},
      {"void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_bf16_256x128_32x3_nn_align8>(cutlass_80_tensorop_"
       "bf16_s16816gemm_bf16_256x128_32x3_nn_align8::Params)",
       480,
       0.02,
       0,
       1,
       false,
       "",
       {16, 32, 1},
       {256, 1, 1}},
      {"void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_bf16_256x128_32x3_nt_align8>(cutlass_80_tensorop_"
       "bf16_s16816gemm_bf16_256x128_32x3_nt_align8::Params)",
       500,
       0.02,
       0,
       1,
       false,
       "",
       {16, 32, 1},
       {256, 1, 1}},
      {"void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<c10::BFloat16, float>(c10::"
       "BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16 const*, c10::BFloat16*, int)",
       55,
       0.03,
       0,
       1,
       true,
       "",
       {2048, 1, 1},
       {128, 1, 1}},
      {"void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel<c10::BFloat16, float>(long, long, c10::"
       "BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16*, c10::BFloat16*)",
       45,
       0.03,
       0,
       1,
       true,
       "",
       {128, 1, 1},
       {32, 32, 1}},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__"
       "5x_cublas",
       120,
       0.02,
       0,
       1,
       false,
       "",
       {132, 1, 1},
       {128, 1, 1}},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__"
       "5x_cublas",
       125,
       0.02,
       0,
       1,
       false,
       "",
       {132, 1, 1},
       {128, 1, 1}},
      {"void flash::flash_bwd_dot_do_o_kernel<true, Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, "
       "cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 8, cutlass::bfloat16_t> > >(flash::Flash_bwd_params)",
       30,
       0.04,
       0,
       1,
       true,
       "",
       {32, 16, 1},
       {256, 1, 1}},
      {"void flash::flash_bwd_kernel<Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::"
       "bfloat16_t, Flash_kernel_traits<128, 64, 128, 8, cutlass::bfloat16_t> >, true, false, false, false, false, "
       "true, false, false>(flash::Flash_bwd_params)",
       780,
       0.02,
       0.15,
       1.25,
       false,
       "",
       {32, 16, 1},
       {256, 1, 1}},
      {"void flash::flash_bwd_convert_dq_kernel<Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, "
       "cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 8, cutlass::bfloat16_t> > >(flash::Flash_bwd_params, "
       "int)",
       20,
       0.04,
       0,
       1,
       true,
       "",
       {32, 16, 1},
       {256, 1, 1}},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<c10::BFloat16, c10::BFloat16, "
       "c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 2> >(int, at::"
       "native::AUnaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<"
       "float> >, at::detail::Array<char*, 2>)",
       24,
       0.04,
       0,
       1,
       true,
       "",
       {16384, 1, 1},
       {128, 1, 1}},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__"
       "5x_cublas",
       260,
       0.02,
       0,
       1,
       false,
       "",
       {132, 1, 1},
       {384, 1, 1}},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize256x128x64_warpgroupsize2x1x1_execute_segment_k_on_kernel__"
       "5x_cublas",
       270,
       0.02,
       0.05,
       1.10,
       false,
       "",
       {132, 1, 1},
       {384, 1, 1}},
      {"void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, "
       "true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<c10::BFloat16 "
       "const, unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, "
       "unsigned int, long)",
       35,
       0.04,
       0,
       1,
       true,
       "",
       {4096, 1, 1},
       {128, 1, 1}},
      {"void at::native::(anonymous namespace)::embedding_backward_feature_kernel<c10::BFloat16, float, long>(long "
       "const*, c10::BFloat16 const*, float*, int, long, int, int)",
       90,
       0.04,
       0,
       1,
       true,
       "",
       {128, 1, 1},
       {32, 32, 1}},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize256x128x64_warpgroupsize2x1x1_execute_segment_k_on_kernel__"
       "5x_cublas",
       900,
       0.02,
       0,
       1,
       false,
       "",
       {132, 1, 1},
       {384, 1, 1}},
      {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MaxOps<float>, unsigned int, "
       "float, 4> >(at::native::ReduceOp<float, at::native::MaxOps<float>, unsigned int, float, 4>)",
       40,
       0.04,
       0,
       1,
       true,
       "",
       {2048, 1, 1},
       {32, 16, 1}},
      {"void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous "
       "namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)",
       120,
       0.03,
       0,
       1,
       true,
       "",
       {2048, 1, 1},
       {1024, 1, 1}},
      {"void at::native::(anonymous namespace)::cunn_SoftMaxBackward<4, float, float, float, at::native::(anonymous "
       "namespace)::LogSoftMaxBackwardEpilogue>(float*, float const*, float const*, long)",
       110,
       0.03,
       0,
       1,
       true,
       "",
       {2048, 1, 1},
       {1024, 1, 1}},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize256x128x64_warpgroupsize2x1x1_execute_segment_k_on_kernel__"
       "5x_cublas",
       900,
       0.02,
       0,
       1,
       false,
       "",
       {132, 1, 1},
       {384, 1, 1}},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_on_kernel__"
       "5x_cublas",
       920,
       0.02,
       0,
       1,
       false,
       "",
       {132, 1, 1},
       {384, 1, 1}},
      {"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::"
       "TensorListMetadata<1>, at::native::(anonymous namespace)::LpNormFunctor<float, (at::native::(anonymous "
       "namespace)::NormType)1, float, float>, float*, int>(at::native::(anonymous namespace)::TensorListMetadata<1>, "
       "at::native::(anonymous namespace)::LpNormFunctor<float, (at::native::(anonymous namespace)::NormType)1, float, "
       "float>, float*, int)",
       60,
       0.03,
       0,
       1,
       true,
       "",
       {320, 1, 1},
       {512, 1, 1}},
      {"void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::"
       "TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_"
       "MODE)1, false>, double, double, double, double, double, double, bool, double*, double*>(at::native::"
       "(anonymous namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, "
       "4, (at::native::ADAM_MODE)1, false>, double, double, double, double, double, double, bool, double*, double*)",
       260,
       0.02,
       0,
       1,
       true,
       "",
       {320, 1, 1},
       {512, 1, 1}},
      {"void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_grouped_bf16_128x128_64x3_tn_align8>(cutlass_80_"
       "tensorop_bf16_s16816gemm_grouped_bf16_128x128_64x3_tn_align8::Params)",
       380,
       0.04,
       0.10,
       1.30,
       false,
       "",
       {132, 1, 1},
       {256, 1, 1}},
      {"triton_poi_fused__to_copy_add_mul_native_layer_norm_0", 45, 0.03, 0, 1, true, "", {4096, 1, 1}, {128, 1, 1}},
      {"triton_red_fused__to_copy_add_native_layer_norm_native_layer_norm_backward_1",
       70,
       0.03,
       0,
       1,
       true,
       "",
       {4096, 1, 1},
       {256, 1, 1}},
      {"triton_per_fused_gelu_gelu_backward_mul_2", 55, 0.03, 0, 1, true, "", {8192, 1, 1}, {128, 1, 1}},
      {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
       70,
       0.05,
       0,
       1,
       false,
       "allreduce",
       {8, 1, 1},
       {512, 1, 1}},
      {"ncclDevKernel_ReduceScatter_Sum_f32_RING_SIMPLE(ncclDevKernelArgsStorage<4096ul>)",
       1500,
       0.04,
       0,
       1,
       false,
       "_reduce_scatter_base",
       {16, 1, 1},
       {640, 1, 1}},
      {"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
       1200,
       0.04,
       0,
       1,
       false,
       "_allgather_base",
       {16, 1, 1},
       {640, 1, 1}},
      {"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)",
       180,
       0.05,
       0,
       1,
       false,
       "send",
       {2, 1, 1},
       {640, 1, 1}},
      {"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)",
       220,
       0.06,
       0,
       1,
       false,
       "all_to_all",
       {16, 1, 1},
       {640, 1, 1}},
  }};
  return table;
}
}  // namespace detail

/// The whole catalogue, indexed by kernel_role.
inline const std::array<kernel_spec, kernel_role_count>& kernel_catalogue() { return detail::catalogue_table(); }

/// The entry of one role.
inline const kernel_spec& spec_of(kernel_role r) { return kernel_catalogue()[static_cast<std::size_t>(r)]; }

}  // namespace failslow::sim
