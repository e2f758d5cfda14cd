// failslow/core/kernel_class.hpp -- classification of GPU activity names into compute,
// communication and memory.
//
// Synopsis
//   kernel_classifier holds an ordered list of (name_pattern, kernel_class) rules; the first
//   rule that matches a name decides, and a name no rule matches is `compute`. The rules are
//   data: kernel_classifier::defaults() knows the names real traces carry, and users add
//   their own (add_front for overrides, add for fall-backs, or a rule file read by
//   parse_classification_rules).
//     communication  NCCL/RCCL kernels, legacy `ncclKernel_*` and current `ncclDevKernel_*`,
//                    NVSHMEM, DeepEP, TransformerEngine userbuffers, vLLM custom all-reduce,
//                    torch symmetric-memory all-reduce kernels; and the host operators of
//                    torch.distributed (c10d::*, gloo:*, nccl:*, ucc:*, mpi:*,
//                    record_param_comms) for jobs without GPU work
//     memory         Kineto's `Memcpy ...`/`Memset ...`, copy/fill kernels of PyTorch and
//                    ROCclr (data movement inside one device)
//     compute        everything else: GEMMs, convolutions, attention, elementwise, norms...
//   device_kind(name) turns the class into the event_kind a reader stores.
// Rule file format (one rule per line, '#' comments):
//     CLASS KIND[/i] PATTERN      e.g.   communication prefix ncclDevKernel_
//   CLASS is compute, communication or memory; KIND exact, prefix, contains or glob.
// Complexity: classify is O(rules * |name|) for prefix rules, O(rules * |name| * |pattern|)
//   worst case for contains/glob; cache the result per name id on hot paths.
// Errors: parse_classification_rules throws failslow::parse_error with line and column.
#pragma once

#include <cstddef>
#include <istream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "failslow/core/detail/enum_count.hpp"
#include "failslow/core/detail/rule_text.hpp"
#include "failslow/core/error.hpp"
#include "failslow/core/event.hpp"
#include "failslow/core/launch_shape.hpp"
#include "failslow/core/name_pattern.hpp"

namespace failslow {

enum class kernel_class : std::uint8_t { compute = 0, communication = 1, memory = 2 };
/// Number of kernel_class values (they are 0 .. kernel_class_count - 1).
inline constexpr std::size_t kernel_class_count = 3;

constexpr std::string_view to_string(kernel_class c) noexcept {
  switch (c) {
    case kernel_class::compute:
      return "compute";
    case kernel_class::communication:
      return "communication";
    case kernel_class::memory:
      return "memory";
  }
  return "compute";
}
static_assert(failslow::detail::enum_count_matches<kernel_class>(kernel_class_count),
              "kernel_class_count is not the number of kernel_class values");

/// Whether a communication kernel is a point-to-point transfer (NCCL/RCCL send and receive
/// between two ranks, e.g. neighbouring pipeline stages) rather than a collective of a process
/// group: its duration includes waiting for the other side's schedule, so it is not compared
/// like a group's collective. ncclDevKernel_SendRecv, ncclKernel_SendRecv_*, *_Send, *_Recv.
inline bool is_point_to_point(std::string_view name) noexcept {
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

/// Parses "compute", "communication" or "memory"; throws invalid_argument otherwise.
inline kernel_class parse_kernel_class(std::string_view s) {
  if (s == "compute") return kernel_class::compute;
  if (s == "communication") return kernel_class::communication;
  if (s == "memory") return kernel_class::memory;
  throw invalid_argument("unknown kernel class '" + std::string(s) + "' (expected compute, communication or memory)");
}

struct classification_rule {
  name_pattern pattern;
  kernel_class cls;
};

class kernel_classifier {
 public:
  /// No rules: every name is compute.
  kernel_classifier() = default;

  /// The rules for the kernel names real traces carry (see the file synopsis).
  static kernel_classifier defaults() {
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

  /// Appends a rule (tried after the existing ones).
  kernel_classifier& add(name_pattern pattern, kernel_class cls) {
    rules_.push_back({std::move(pattern), cls});
    return *this;
  }

  /// Prepends a rule (tried before the existing ones): the way to override a default.
  kernel_classifier& add_front(name_pattern pattern, kernel_class cls) {
    rules_.insert(rules_.begin(), classification_rule{std::move(pattern), cls});
    return *this;
  }

  /// Class of a GPU activity name: the first matching rule, else compute. A kernel key's
  /// launch shape (core/launch_shape.hpp) is not part of the name the rules see.
  kernel_class classify(std::string_view name) const noexcept {
    name = kernel_base_name(name);
    for (const auto& r : rules_)
      if (r.pattern.matches(name)) return r.cls;
    return kernel_class::compute;
  }

  /// Class of an event whose kind is known: memcpy/memset are memory and collectives are
  /// communication whatever their name; kernels are classified by name.
  kernel_class classify(event_kind kind, std::string_view name) const noexcept {
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

  /// The event_kind a reader stores for a GPU activity with this name.
  event_kind device_kind(std::string_view name) const noexcept {
    if (classify(name) == kernel_class::communication) return event_kind::collective;
    constexpr std::string_view memcpy_prefix = "Memcpy", memset_prefix = "Memset";
    if (name.substr(0, memcpy_prefix.size()) == memcpy_prefix) return event_kind::memcpy;
    if (name.substr(0, memset_prefix.size()) == memset_prefix) return event_kind::memset;
    return event_kind::kernel;
  }

  const std::vector<classification_rule>& rules() const noexcept { return rules_; }
  void clear() noexcept { rules_.clear(); }

 private:
  std::vector<classification_rule> rules_;
};

/// Reads rules "CLASS KIND[/i] PATTERN" from `in` and appends them to `into` (in file order).
inline void parse_classification_rules(std::istream& in, kernel_classifier& into,
                                       std::string_view source = "<classification rules>") {
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

}  // namespace failslow
