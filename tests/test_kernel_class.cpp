#include <catch2/catch.hpp>
#include <failslow/core/kernel_class.hpp>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "support/kineto_data.hpp"

using namespace failslow;

TEST_CASE("default rules know legacy and current NCCL names") {
  const auto c = kernel_classifier::defaults();
  for (const char* n : {"ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)",
                        "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
                        "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                        "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL", "ncclDevKernel_SendRecv",
                        "void deep_ep::intranode::dispatch<8, 768>(int4*, float*)",
                        "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(...)",
                        "void c10d::symmetric_memory::one_shot_all_reduce_kernel<float, 8>(...)"}) {
    INFO(n);
    CHECK(c.classify(n) == kernel_class::communication);
    CHECK(c.device_kind(n) == event_kind::collective);
  }
}

TEST_CASE("default rules: memory and compute") {
  const auto c = kernel_classifier::defaults();
  CHECK(c.classify("Memcpy HtoD (Pinned -> Device)") == kernel_class::memory);
  CHECK(c.device_kind("Memcpy DtoD (Device -> Device)") == event_kind::memcpy);
  CHECK(c.device_kind("Memset (Device)") == event_kind::memset);
  CHECK(c.classify("void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<at::native::"
                   "direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}>>") == kernel_class::memory);
  CHECK(c.classify("__amd_rocclr_copyBuffer") == kernel_class::memory);
  for (const char* n : {"volta_sgemm_128x64_nn", "ampere_sgemm_128x128_tn",
                        "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_nt_align4>(...)",
                        "flash_fwd_kernel", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64",
                        "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(...)",
                        "Cijk_Ailk_Bjlk_SB_Bias_AS_SAV_UserArgs_MT64x16x16_MI16x16x1_SN", "triton__0d1d2d3d"}) {
    INFO(n);
    CHECK(c.classify(n) == kernel_class::compute);
    CHECK(c.device_kind(n) == event_kind::kernel);
  }
}

TEST_CASE("event kind overrides the name for copies and collectives") {
  const auto c = kernel_classifier::defaults();
  CHECK(c.classify(event_kind::memcpy, "anything") == kernel_class::memory);
  CHECK(c.classify(event_kind::memset, "anything") == kernel_class::memory);
  CHECK(c.classify(event_kind::collective, "my_custom_allgather") == kernel_class::communication);
  CHECK(c.classify(event_kind::kernel, "volta_sgemm_128x64_nn") == kernel_class::compute);
  CHECK(kernel_classifier{}.classify("ncclDevKernel_AllReduce") == kernel_class::compute);  // no rules
}

TEST_CASE("rules are data: users add, override and load them") {
  auto c = kernel_classifier::defaults();
  const auto n_default = c.rules().size();
  c.add(name_pattern("my_ring_exchange", match_kind::prefix), kernel_class::communication);
  CHECK(c.classify("my_ring_exchange_v2") == kernel_class::communication);
  c.add_front(name_pattern("ncclDevKernel_Debug*"), kernel_class::compute);
  CHECK(c.classify("ncclDevKernel_DebugProbe") == kernel_class::compute);
  CHECK(c.classify("ncclDevKernel_AllGather") == kernel_class::communication);
  CHECK(c.rules().size() == n_default + 2);

  std::istringstream file(
      "# in-house collectives\n"
      "communication prefix   hccl_\n"
      "\n"
      "memory        contains/i  Gather Scatter copy   # with blanks in the pattern\n");
  kernel_classifier user;
  parse_classification_rules(file, user, "rules.txt");
  REQUIRE(user.rules().size() == 2);
  CHECK(user.classify("hccl_allreduce") == kernel_class::communication);
  CHECK(user.classify("the gather scatter COPY kernel") == kernel_class::memory);
  CHECK(user.rules()[1].pattern.text() == "Gather Scatter copy");
}

TEST_CASE("rule files: errors name line and column") {
  auto parse = [](const std::string& text) {
    std::istringstream in(text);
    kernel_classifier c;
    parse_classification_rules(in, c, "rules.txt");
  };
  try {
    parse("communication prefix ncclKernel_\ncompute\tprefix\n");
    FAIL("expected a parse error");
  } catch (const parse_error& e) {
    CHECK(e.where().source == "rules.txt");
    CHECK(e.where().line == 2);
  }
  try {
    parse("\n  computing prefix foo\n");
    FAIL("expected a parse error");
  } catch (const parse_error& e) {
    CHECK(e.where().line == 2);
    CHECK(e.where().column == 3);
    CHECK(e.where().offset == 3);
    CHECK_THAT(e.expected(), Catch::Contains("compute, communication or memory"));
  }
  try {
    parse("memory regex foo.*\n");
    FAIL("expected a parse error");
  } catch (const parse_error& e) {
    CHECK(e.where().column == 8);
    CHECK_THAT(std::string(e.what()), Catch::Contains("match kind"));
  }
  CHECK_THROWS_AS(parse_kernel_class("gpu"), invalid_argument);
}

TEST_CASE("real kernel names from PyTorch profiler traces") {
  const auto dir = failslow_test::kineto_dir_or_skip();
  const auto c = kernel_classifier::defaults();
  std::map<std::string, int> per_class;
  std::set<std::string> nccl_names;
  int checked = 0;
  for (const auto& file : failslow_test::kineto_files(dir)) {
    const auto trace = failslow_test::load_trace(file);
    if (!trace.contains("traceEvents")) continue;
    for (const auto& ev : trace["traceEvents"]) {
      if (!ev.contains("cat") || !ev.contains("name") || !ev["name"].is_string()) continue;
      const std::string cat = ev["cat"].get<std::string>();
      const std::string name = ev["name"].get<std::string>();
      if (cat == "gpu_memcpy" || cat == "gpu_memset") {
        INFO(name);
        CHECK(c.classify(name) == kernel_class::memory);
        CHECK(c.device_kind(name) == (cat == "gpu_memcpy" ? event_kind::memcpy : event_kind::memset));
        ++checked;
      } else if (cat == "kernel") {
        const kernel_class k = c.classify(name);
        ++per_class[std::string(to_string(k))];
        ++checked;
        const bool is_nccl = name.find("nccl") != std::string::npos;
        INFO(name);
        CHECK((k == kernel_class::communication) == is_nccl);  // no compute kernel mistaken
        if (is_nccl) nccl_names.insert(name.substr(0, name.find('(')));
        const bool gemm = name.find("gemm") != std::string::npos || name.find("Cijk_") == 0;
        if (gemm) CHECK(k == kernel_class::compute);
      }
    }
  }
  INFO("kernels per class: compute " << per_class["compute"] << ", communication " << per_class["communication"]
                                     << ", memory " << per_class["memory"]);
  CHECK(checked > 10000);
  CHECK(per_class["communication"] > 1000);
  CHECK(per_class["compute"] > 1000);
  CHECK(nccl_names.count("ncclKernel_AllReduce_RING_LL_Sum_float") == 1);
  CHECK(nccl_names.count("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t") == 1);
}

TEST_CASE("point-to-point NCCL kernels are told from group collectives") {
  for (const char* p2p : {"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)",
                          "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)", "ncclDevKernel_Send(args)",
                          "ncclDevKernel_Recv(args)"})
    CHECK(is_point_to_point(p2p));
  for (const char* coll : {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                           "ncclDevKernel_ReduceScatter_Sum_f32_RING_SIMPLE", "ncclKernel_AllGather_RING_LL_Sum_int8_t",
                           "ncclDevKernel_Broadcast_RING_LL", "sm90_xmma_gemm_bf16bf16_bf16f32"})
    CHECK_FALSE(is_point_to_point(coll));
}
