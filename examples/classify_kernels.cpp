// Sort GPU activity names into compute, communication and memory, with a rule of your own.
//   ./example_classify_kernels
#include <failslow/core/kernel_class.hpp>
#include <iostream>
#include <sstream>

int main() {
  auto classifier = failslow::kernel_classifier::defaults();
  // An in-house collective library the defaults cannot know about; rules are data.
  std::istringstream rules("communication prefix hccl_\n");
  failslow::parse_classification_rules(rules, classifier, "my_rules.txt");

  for (const char* name : {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t",
                           "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn", "flash_fwd_kernel",
                           "Memcpy DtoD (Device -> Device)", "hccl_all_gather_v2"}) {
    std::cout << failslow::to_string(classifier.classify(name)) << "\t"
              << failslow::to_string(classifier.device_kind(name)) << "\t" << name << '\n';
  }
}
