// Which ranks may a kernel or a phase of rank 13 be compared with?
//   ./example_routing_rules
#include <failslow/core/routing.hpp>
#include <iostream>

int main() {
  using namespace failslow;
  parallel_sizes sizes;
  sizes.tp = 2;
  sizes.ep = 2;
  sizes.dp = 4;
  sizes.pp = 2;
  const topology job(sizes);
  const router routes = router::defaults();
  const kernel_classifier classes = kernel_classifier::defaults();

  auto show = [&](routing_subject subject, const char* name) {
    const kernel_class cls = subject == routing_subject::kernel ? classes.classify(name) : kernel_class::compute;
    const auto scope = routes.scope(subject, name, cls);
    std::cout << to_string(subject) << " " << name << ": ";
    if (!scope) {
      std::cout << "compare within the collective's own process group\n";
      return;
    }
    std::cout << "vary " << scope->to_string() << " ->";
    for (int r : router::comparable_ranks(job, 13, *scope)) std::cout << ' ' << r;
    std::cout << '\n';
  };
  show(routing_subject::phase, "gated_mla_self_attention");
  show(routing_subject::phase, "moe_experts");
  show(routing_subject::kernel, "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn");
  show(routing_subject::kernel, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL");
}
