// failslow/core/impl/routing.ipp -- the definitions of core/routing.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <cstddef>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "failslow/core/detail/rule_text.hpp"
#include "failslow/core/error.hpp"
#include "failslow/core/routing.hpp"

namespace failslow {

FAILSLOW_FUNC_DEF router router::defaults() {
  router r;
  const auto ci = case_sensitivity::insensitive;
  const dim_set dp{parallel_dim::dp}, ep{parallel_dim::ep};
  auto phase = [&](const char* text, match_kind kind, dim_set scope) {
    r.add({routing_subject::phase, name_pattern(text, kind, ci), scope});
  };
  // Communication phases first: "dp-allreduce" must not fall into a compute rule.
  phase("dp-allreduce", match_kind::exact, dp);
  phase("dp-reduce-scatter", match_kind::exact, dp);
  phase("ep-alltoall", match_kind::exact, ep);
  phase("self_attention", match_kind::contains, dp);  // also gated_mla_self_attention
  phase("moe", match_kind::contains, ep);             // moe_layer, moe_experts
  phase("mlp", match_kind::contains, dp);
  auto kernel = [&](const char* text, match_kind kind, dim_set scope) {
    r.add({routing_subject::kernel, name_pattern(text, kind, ci), scope});
  };
  kernel("moe", match_kind::contains, ep);  // fused MoE / grouped-GEMM expert kernels
  kernel("flash_fwd", match_kind::contains, dp);
  kernel("flash_bwd", match_kind::contains, dp);
  kernel("fmha", match_kind::contains, dp);
  return r;
}

FAILSLOW_FUNC_DEF std::optional<dim_set> router::scope(routing_subject subject, std::string_view name,
                                                       kernel_class cls) const {
  std::optional<dim_set> s = default_scope(cls);
  name = kernel_base_name(name);  // a kernel key's launch shape is not part of its name
  for (const auto& r : rules_) {
    if (r.subject == subject && r.pattern.matches(name)) {
      s = r.scope;
      break;
    }
  }
  if (s && cls != kernel_class::communication) s = *s & ~fixed_for_compute_;
  return s;
}

FAILSLOW_FUNC_DEF void parse_routing_rules(std::istream& in, router& into, std::string_view source) {
  detail::for_each_rule_line(in, source, 3, "SUBJECT SCOPE KIND PATTERN (e.g. 'phase dp contains/i self_attention')",
                             [&](const detail::rule_line& line) {
                               routing_subject subject;
                               if (line.fields[0].text == "kernel")
                                 subject = routing_subject::kernel;
                               else if (line.fields[0].text == "phase")
                                 subject = routing_subject::phase;
                               else
                                 throw detail::rule_error(line, line.fields[0], "a subject: kernel or phase");
                               dim_set scope;
                               try {
                                 scope = parse_dim_set(line.fields[1].text);
                               } catch (const invalid_argument&) {
                                 throw detail::rule_error(line, line.fields[1],
                                                          "a scope: dimensions tp, cp, ep, dp, pp joined by '+'");
                               }
                               into.add({subject, detail::rule_pattern(line, line.fields[2], line.fields[3]), scope});
                             });
}

}  // namespace failslow
