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

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/detail/enum_count.hpp"
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
FAILSLOW_FUNC bool is_point_to_point(std::string_view name) noexcept;

/// Parses "compute", "communication" or "memory"; throws invalid_argument otherwise.
FAILSLOW_FUNC kernel_class parse_kernel_class(std::string_view s);

struct classification_rule {
  name_pattern pattern;
  kernel_class cls;
};

class kernel_classifier {
 public:
  /// No rules: every name is compute.
  kernel_classifier() = default;

  /// The rules for the kernel names real traces carry (see the file synopsis).
  FAILSLOW_FUNC static kernel_classifier defaults();

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
  FAILSLOW_FUNC kernel_class classify(std::string_view name) const noexcept;

  /// Class of an event whose kind is known: memcpy/memset are memory and collectives are
  /// communication whatever their name; kernels are classified by name.
  FAILSLOW_FUNC kernel_class classify(event_kind kind, std::string_view name) const noexcept;

  /// The event_kind a reader stores for a GPU activity with this name.
  FAILSLOW_FUNC event_kind device_kind(std::string_view name) const noexcept;

  const std::vector<classification_rule>& rules() const noexcept { return rules_; }
  void clear() noexcept { rules_.clear(); }

 private:
  std::vector<classification_rule> rules_;
};

/// Reads rules "CLASS KIND[/i] PATTERN" from `in` and appends them to `into` (in file order).
FAILSLOW_FUNC void parse_classification_rules(std::istream& in, kernel_classifier& into,
                                              std::string_view source = "<classification rules>");

}  // namespace failslow

#if FAILSLOW_HEADER_ONLY
#include "failslow/core/impl/kernel_class.ipp"
#endif
