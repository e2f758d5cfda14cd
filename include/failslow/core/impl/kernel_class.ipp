// failslow/core/impl/kernel_class.ipp -- the definitions of core/kernel_class.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <cstddef>
#include <istream>
#include <string>
#include <string_view>
#include <utility>

#include "failslow/core/detail/rule_text.hpp"
#include "failslow/core/error.hpp"
#include "failslow/core/event.hpp"
#include "failslow/core/kernel_class.hpp"
#include "failslow/core/launch_shape.hpp"
#include "failslow/core/name_pattern.hpp"

namespace failslow {

FAILSLOW_FUNC_DEF bool is_point_to_point(std::string_view name) noexcept {
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  auto contains = [&](std::string_view needle) {
    for (std::size_t i = 0; i + needle.size() <= name.size(); ++i) {
      std::size_t j = 0;
      while (j < needle.size() && lower(name[i + j]) == needle[j]) ++j;
      if (j == needle.size()) return true;
    }
    return false;
  };
  return contains("sendrecv") || contains("_send") || contains("_recv");
}

FAILSLOW_FUNC_DEF kernel_class parse_kernel_class(std::string_view s) {
  if (s == "compute") return kernel_class::compute;
  if (s == "communication") return kernel_class::communication;
  if (s == "memory") return kernel_class::memory;
  throw invalid_argument("unknown kernel class '" + std::string(s) + "' (expected compute, communication or memory)");
}

FAILSLOW_FUNC_DEF void parse_classification_rules(std::istream& in, kernel_classifier& into, std::string_view source) {
  detail::for_each_rule_line(in, source, 2, "CLASS KIND PATTERN (e.g. 'communication prefix ncclDevKernel_')",
                             [&](const detail::rule_line& line) {
                               kernel_class cls;
                               try {
                                 cls = parse_kernel_class(line.fields[0].text);
                               } catch (const invalid_argument&) {
                                 throw detail::rule_error(line, line.fields[0],
                                                          "a class: compute, communication or memory");
                               }
                               into.add(detail::rule_pattern(line, line.fields[1], line.fields[2]), cls);
                             });
}

FAILSLOW_FUNC_DEF kernel_classifier kernel_classifier::defaults() {
  using mk = match_kind;
  const auto ci = case_sensitivity::insensitive;
  kernel_classifier c;
  auto comm = [&](const char* text, mk kind, case_sensitivity cs = case_sensitivity::sensitive) {
    c.add(name_pattern(text, kind, cs), kernel_class::communication);
  };
  auto mem = [&](const char* text, mk kind, case_sensitivity cs = case_sensitivity::sensitive) {
    c.add(name_pattern(text, kind, cs), kernel_class::memory);
  };
  // Kineto names its copies "Memcpy HtoD (Pinned -> Device)", "Memset (Device)".
  mem("Memcpy", mk::prefix);
  mem("Memset", mk::prefix);
  comm("ncclKernel_", mk::prefix);     // NCCL < 2.19 and RCCL
  comm("ncclDevKernel_", mk::prefix);  // NCCL >= 2.19
  comm("nccl", mk::contains, ci);      // other NCCL-family device functions
  comm("rccl", mk::contains, ci);
  comm("nvshmem", mk::contains, ci);
  comm("deep_ep::", mk::contains);            // DeepEP dispatch/combine
  comm("userbuffers", mk::contains, ci);      // TransformerEngine comm-GEMM overlap
  comm("cross_device_reduce", mk::contains);  // vLLM custom all-reduce
  comm("all_reduce", mk::contains, ci);       // torch symmetric memory, one/two-shot
  comm("allreduce", mk::contains, ci);
  comm("all_gather", mk::contains, ci);
  comm("allgather", mk::contains, ci);
  comm("reduce_scatter", mk::contains, ci);
  comm("reducescatter", mk::contains, ci);
  comm("all_to_all", mk::contains, ci);
  comm("alltoall", mk::contains, ci);
  // Host operators of torch.distributed, for traces without GPU work (CPU jobs on gloo):
  // c10d::allreduce_, c10d::broadcast_, gloo:all_reduce, record_param_comms, ...
  comm("c10d::", mk::prefix);
  comm("gloo:", mk::prefix);
  comm("ucc:", mk::prefix);
  comm("mpi:", mk::prefix);
  comm("record_param_comms", mk::exact);
  mem("direct_copy_kernel", mk::contains);   // at::native copies (.to(), .copy_())
  mem("CatArrayBatchedCopy", mk::contains);  // torch.cat
  mem("FillFunctor", mk::contains);          // torch.fill_/zero_
  mem("__amd_rocclr_copy", mk::prefix);      // ROCm blit kernels
  mem("__amd_rocclr_fill", mk::prefix);
  return c;
}

FAILSLOW_FUNC_DEF kernel_class kernel_classifier::classify(std::string_view name) const noexcept {
  name = kernel_base_name(name);
  for (const auto& r : rules_)
    if (r.pattern.matches(name)) return r.cls;
  return kernel_class::compute;
}

FAILSLOW_FUNC_DEF kernel_class kernel_classifier::classify(event_kind kind, std::string_view name) const noexcept {
  switch (kind) {
    case event_kind::memcpy:
    case event_kind::memset:
      return kernel_class::memory;
    case event_kind::collective:
      return kernel_class::communication;
    default:
      return classify(name);
  }
}

FAILSLOW_FUNC_DEF event_kind kernel_classifier::device_kind(std::string_view name) const noexcept {
  if (classify(name) == kernel_class::communication) return event_kind::collective;
  constexpr std::string_view memcpy_prefix = "Memcpy", memset_prefix = "Memset";
  if (name.substr(0, memcpy_prefix.size()) == memcpy_prefix) return event_kind::memcpy;
  if (name.substr(0, memset_prefix.size()) == memset_prefix) return event_kind::memset;
  return event_kind::kernel;
}

}  // namespace failslow
