// Uses the core types through the umbrella header; exits non-zero when anything is off.
#include <failslow/failslow.hpp>
#include <iostream>

int main() {
  const failslow::topology topo({2, 1, 1, 4, 2});
  failslow::name_table names;
  const auto id = names.intern("ncclDevKernel_AllReduce_Sum_bf16_RING_LL");
  const auto cls = failslow::kernel_classifier::defaults().classify(names.name(id));
  const bool ok =
      topo.group_name(13, failslow::parallel_dim::dp) == "dp:3" && cls == failslow::kernel_class::communication;
  std::cout << "failslow " << failslow::version_string << ": " << (ok ? "ok" : "FAILED") << '\n';
  return ok ? 0 : 1;
}
