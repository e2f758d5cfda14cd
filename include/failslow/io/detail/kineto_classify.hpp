// failslow/io/detail/kineto_classify.hpp -- what a Kineto trace event is, from its "cat" or,
// without one, from its name (part of io/kineto_reader.hpp; needs no simdjson).
//
// Synopsis
//   key_is(key, "lit")           key == lit with the length known at compile time
//   kineto_category              the "cat" values the reader keeps: kernel, gpu_memcpy, gpu_memset,
//                                cuda_runtime / cuda_driver, cpu_op, user_annotation,
//                                gpu_user_annotation (unknown: everything else)
//   categorize_kineto(cat)       the category of a "cat" string
//   host_kind_by_name(name, c)   (failslow::io) cpu_op or annotation for a host event without
//                                "cat" (torch.profiler's plain Chrome trace)
// Complexity: categorize_kineto O(1) (a switch on the length, one compare);
//   host_kind_by_name O(|name|) plus one classifier call.
// Errors: none (unknown categories are kineto_category::unknown).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/event.hpp"
#include "failslow/core/kernel_class.hpp"

namespace failslow::io {

/// Kind of a host event known only by its name (a Chrome trace without "cat", as torch.profiler
/// writes it without Kineto): cpu_op for operators -- a name with "::" (aten::mm,
/// c10d::allreduce_, autograd::engine::evaluate_function: ...), an autograd node
/// (AddmmBackward0, MseLossBackward, the [A-Za-z0-9_]*Backward<digits> form) or a name the
/// classifier calls communication (gloo:all_reduce, nccl:*, record_param_comms) -- and
/// annotation for the rest: ProfilerStep#N and user scopes (record_function: "forward",
/// "Optimizer.step#SGD.step", "DistributedDataParallel.forward").
FAILSLOW_FUNC event_kind host_kind_by_name(std::string_view name, const kernel_classifier& classifier) noexcept;

namespace detail {

/// key == lit, with the length known at compile time (inlined compares, no memcmp call).
template <std::size_t N>
bool key_is(std::string_view key, const char (&lit)[N]) noexcept {
  return key.size() == N - 1 && std::memcmp(key.data(), lit, N - 1) == 0;
}

/// The "cat" of a complete event, as far as the reader keeps it.
enum class kineto_category : std::uint8_t {
  unknown,
  kernel,
  memcpy,
  memset,
  runtime,
  cpu_op,
  annotation,
  gpu_annotation
};

/// Number of kineto_category values (they are 0 .. kineto_category_count - 1).
inline constexpr std::size_t kineto_category_count = 8;

/// The category of a "cat" string.
inline kineto_category categorize_kineto(std::string_view cat) noexcept {
  switch (cat.size()) {
    case 6:
      if (key_is(cat, "kernel")) return kineto_category::kernel;
      if (key_is(cat, "cpu_op")) return kineto_category::cpu_op;
      break;
    case 10:
      if (key_is(cat, "gpu_memcpy")) return kineto_category::memcpy;
      if (key_is(cat, "gpu_memset")) return kineto_category::memset;
      break;
    case 11:
      if (key_is(cat, "cuda_driver")) return kineto_category::runtime;
      break;
    case 12:
      if (key_is(cat, "cuda_runtime")) return kineto_category::runtime;
      break;
    case 15:
      if (key_is(cat, "user_annotation")) return kineto_category::annotation;
      break;
    case 19:
      if (key_is(cat, "gpu_user_annotation")) return kineto_category::gpu_annotation;
      break;
    default:
      break;
  }
  return kineto_category::unknown;
}

/// Whether events of this category happen on a device (their device and stream come from
/// args.device / args.stream, else pid / tid).
constexpr bool device_side(kineto_category c) noexcept {
  return c == kineto_category::kernel || c == kineto_category::memcpy || c == kineto_category::memset ||
         c == kineto_category::gpu_annotation;
}

}  // namespace detail
}  // namespace failslow::io

#if FAILSLOW_HEADER_ONLY
#include "failslow/io/detail/impl/kineto_classify.ipp"
#endif
