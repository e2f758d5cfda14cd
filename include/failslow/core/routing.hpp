// failslow/core/routing.hpp -- which ranks a kernel or phase may be compared with.
//
// Synopsis
//   Ranks of a hybrid-parallel job do different work: a pipeline stage runs other layers than
//   the next, a tensor-parallel shard other shapes, a MoE rank other experts. A fair
//   comparison only puts side by side the ranks that run the same work. A router maps an
//   event name (kernel) or a phase name (annotation) to a *scope*: the set of parallel
//   dimensions along which comparable ranks may differ. The comparable ranks of rank r are
//   then topology::group(r, scope).
//
//   Rules are data: an ordered list of (subject, name_pattern, scope), first match wins.
//   The defaults follow the ARGUS routing table:
//       self_attention, gated_mla_self_attention, MLP     -> dp group
//       moe_layer, moe_experts                             -> ep group
//       dp-allreduce, dp-reduce-scatter                    -> dp group
//       ep-alltoall                                        -> ep group
//   and, when no rule matches, a per-class default: compute and memory kernels vary along
//   cp+ep+dp (same pipeline stage, same tp index); communication kernels have no default
//   (nullopt): they are compared within the process group that ran them, which only the
//   trace metadata knows.
//   `fixed_for_compute` (default tp+pp) is removed from the scope of every compute or memory
//   kernel, whatever rule matched: compute is only comparable within one pp stage and one tp
//   index.
// Rule file format (one rule per line, '#' comments):
//     SUBJECT SCOPE KIND[/i] PATTERN     e.g.   phase dp contains/i self_attention
//   SUBJECT is kernel or phase; SCOPE a dimension set such as dp or cp+ep+dp.
// Complexity: scope() is O(rules * pattern cost); comparable_ranks O(group size).
// Errors: parse_routing_rules throws failslow::parse_error (line, column); a rank outside the
//   topology throws failslow::domain_error.
#pragma once

#include <cstddef>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/detail/enum_count.hpp"
#include "failslow/core/kernel_class.hpp"
#include "failslow/core/name_pattern.hpp"
#include "failslow/core/topology.hpp"

namespace failslow {

enum class routing_subject : std::uint8_t { kernel = 0, phase = 1 };
/// Number of routing_subject values (they are 0 .. routing_subject_count - 1).
inline constexpr std::size_t routing_subject_count = 2;

constexpr std::string_view to_string(routing_subject s) noexcept {
  return s == routing_subject::kernel ? "kernel" : "phase";
}
static_assert(failslow::detail::enum_count_matches<routing_subject>(routing_subject_count),
              "routing_subject_count is not the number of routing_subject values");

struct routing_rule {
  routing_subject subject;
  name_pattern pattern;
  dim_set scope;  ///< dimensions along which comparable ranks may differ
};

class router {
 public:
  /// No rules; per-class defaults only.
  router() = default;

  /// The ARGUS table (see the file synopsis).
  FAILSLOW_FUNC static router defaults();

  router& add(routing_rule rule) {
    rules_.push_back(std::move(rule));
    return *this;
  }
  router& add_front(routing_rule rule) {
    rules_.insert(rules_.begin(), std::move(rule));
    return *this;
  }

  /// Scope used when no rule matches, per class (nullopt: the collective's process group).
  void set_default_scope(kernel_class cls, std::optional<dim_set> scope) {
    default_scope_[static_cast<std::size_t>(cls)] = scope;
  }
  std::optional<dim_set> default_scope(kernel_class cls) const { return default_scope_[static_cast<std::size_t>(cls)]; }

  /// Dimensions never crossed when comparing compute or memory kernels (default tp+pp).
  void set_fixed_for_compute(dim_set fixed) noexcept { fixed_for_compute_ = fixed; }
  dim_set fixed_for_compute() const noexcept { return fixed_for_compute_; }

  /// Scope of a kernel name of class `cls`, or of a phase name (cls then says what the phase
  /// is mostly made of; compute by default). nullopt: compare within the process group.
  FAILSLOW_FUNC std::optional<dim_set> scope(routing_subject subject, std::string_view name,
                                             kernel_class cls = kernel_class::compute) const;

  /// The ranks that may be compared with `rank` under `scope` (rank included, ascending).
  static std::vector<int> comparable_ranks(const topology& topo, int rank, dim_set scope) {
    return topo.group(rank, scope);
  }

  const std::vector<routing_rule>& rules() const noexcept { return rules_; }
  void clear() noexcept { rules_.clear(); }

 private:
  std::vector<routing_rule> rules_;
  std::optional<dim_set> default_scope_[3] = {
      dim_set{parallel_dim::cp, parallel_dim::ep, parallel_dim::dp},  // compute
      std::nullopt,                                                   // communication
      dim_set{parallel_dim::cp, parallel_dim::ep, parallel_dim::dp},  // memory
  };
  dim_set fixed_for_compute_{parallel_dim::tp, parallel_dim::pp};
};

/// Reads rules "SUBJECT SCOPE KIND[/i] PATTERN" from `in` and appends them to `into`.
FAILSLOW_FUNC void parse_routing_rules(std::istream& in, router& into, std::string_view source = "<routing rules>");

}  // namespace failslow

#if FAILSLOW_HEADER_ONLY
#include "failslow/core/impl/routing.ipp"
#endif
