#include <catch2/catch.hpp>
#include <failslow/core/routing.hpp>
#include <sstream>
#include <string>

using namespace failslow;

namespace {
const dim_set dp{parallel_dim::dp};
const dim_set ep{parallel_dim::ep};
const dim_set cp_ep_dp{parallel_dim::cp, parallel_dim::ep, parallel_dim::dp};
}  // namespace

TEST_CASE("the ARGUS routing table") {
  const router r = router::defaults();
  CHECK(r.scope(routing_subject::phase, "self_attention") == dp);
  CHECK(r.scope(routing_subject::phase, "gated_mla_self_attention") == dp);
  CHECK(r.scope(routing_subject::phase, "moe_layer") == ep);
  CHECK(r.scope(routing_subject::phase, "moe_experts") == ep);
  CHECK(r.scope(routing_subject::phase, "dp-allreduce", kernel_class::communication) == dp);
  CHECK(r.scope(routing_subject::phase, "dp-reduce-scatter", kernel_class::communication) == dp);
  CHECK(r.scope(routing_subject::phase, "ep-alltoall", kernel_class::communication) == ep);
  CHECK(r.scope(routing_subject::phase, "MLP") == dp);
  CHECK(r.scope(routing_subject::kernel, "void fused_moe_kernel<bf16>(...)") == ep);
  CHECK(r.scope(routing_subject::kernel, "flash_fwd_kernel") == dp);
}

TEST_CASE("per-class defaults when no rule matches") {
  const router r = router::defaults();
  // Compute: same pp stage and tp index, any cp/ep/dp coordinate.
  CHECK(r.scope(routing_subject::kernel, "volta_sgemm_128x64_nn") == cp_ep_dp);
  CHECK(r.scope(routing_subject::kernel, "Memcpy DtoD (Device -> Device)", kernel_class::memory) == cp_ep_dp);
  // Communication: the process group from the trace decides.
  CHECK_FALSE(r.scope(routing_subject::kernel, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", kernel_class::communication)
                  .has_value());
  router custom;
  custom.set_default_scope(kernel_class::communication, dp);
  CHECK(custom.scope(routing_subject::kernel, "ncclDevKernel_SendRecv", kernel_class::communication) == dp);
  CHECK(custom.default_scope(kernel_class::compute) == cp_ep_dp);
}

TEST_CASE("compute is never compared across pp stages or tp index") {
  router r;
  r.add({routing_subject::kernel, name_pattern("*gemm*"), dim_set::all()});
  CHECK(r.scope(routing_subject::kernel, "volta_sgemm_128x64_nn") == cp_ep_dp);
  // A communication kernel keeps the whole scope the rule gives.
  CHECK(r.scope(routing_subject::kernel, "gemm_allreduce_fused", kernel_class::communication) == dim_set::all());
  r.set_fixed_for_compute(dim_set{parallel_dim::pp});
  CHECK(r.scope(routing_subject::kernel, "volta_sgemm_128x64_nn") == (dim_set::all() & ~dim_set{parallel_dim::pp}));
}

TEST_CASE("comparable ranks of a compute kernel are the DP group in a dense job") {
  const topology t({2, 1, 1, 4, 2});
  const router r = router::defaults();
  const auto scope = r.scope(routing_subject::kernel, "ampere_sgemm_128x64_nn");
  REQUIRE(scope);
  CHECK(router::comparable_ranks(t, 13, *scope) == std::vector<int>{9, 11, 13, 15});
  CHECK(router::comparable_ranks(t, 13, *scope) == t.group(13, parallel_dim::dp));
  // With experts, MoE work compares along EP only.
  const topology moe({2, 1, 4, 2, 2});
  const auto moe_scope = r.scope(routing_subject::phase, "moe_experts");
  REQUIRE(moe_scope);
  CHECK(router::comparable_ranks(moe, 3, *moe_scope) == moe.group(3, parallel_dim::ep));
  CHECK_THROWS_AS(router::comparable_ranks(t, 16, *scope), domain_error);
}

TEST_CASE("rules are data: first match wins, users prepend and load rule files") {
  router r = router::defaults();
  r.add_front({routing_subject::phase, name_pattern("moe_dense_shared", match_kind::exact), dp});
  CHECK(r.scope(routing_subject::phase, "moe_dense_shared") == dp);
  CHECK(r.scope(routing_subject::phase, "moe_layer") == ep);
  // Subjects do not mix: a kernel named like a phase is not routed by the phase rule.
  CHECK(r.scope(routing_subject::kernel, "self_attention_output_proj_gemm") == cp_ep_dp);

  std::istringstream in(
      "# subject scope kind pattern\n"
      "phase   cp+dp  contains/i ring_attention\n"
      "kernel  ep     prefix     grouped_gemm\n");
  router user;
  parse_routing_rules(in, user, "routing.txt");
  REQUIRE(user.rules().size() == 2);
  CHECK(user.scope(routing_subject::phase, "Ring_Attention_fwd") == (dim_set{parallel_dim::cp, parallel_dim::dp}));
  CHECK(user.scope(routing_subject::kernel, "grouped_gemm_fp8") == ep);
}

TEST_CASE("routing rule file errors") {
  auto parse = [](const char* text) {
    std::istringstream in(text);
    router r;
    parse_routing_rules(in, r, "routing.txt");
  };
  try {
    parse("phase dp contains x\nstage dp contains y\n");
    FAIL("expected a parse error");
  } catch (const parse_error& e) {
    CHECK(e.where().line == 2);
    CHECK(e.where().column == 1);
    CHECK_THAT(e.expected(), Catch::Contains("kernel or phase"));
  }
  try {
    parse("kernel dp+zz contains x\n");
    FAIL("expected a parse error");
  } catch (const parse_error& e) {
    CHECK(e.where().column == 8);
  }
  CHECK_THROWS_AS(parse("kernel dp contains\n"), parse_error);
  CHECK_THROWS_AS(parse("kernel dp like x\n"), parse_error);
}
