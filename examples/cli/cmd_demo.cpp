// failslow demo: what the core types say about a built-in 64-rank job. This is the README's
// main job until the simulator and the diagnosis land.
#include <failslow/failslow.hpp>
#include <iomanip>
#include <iostream>
#include <string>

#include "commands.hpp"

namespace failslow_cli {
namespace {

void run() {
  using namespace failslow;
  parallel_sizes sizes;
  sizes.tp = 2;
  sizes.pp = 4;
  sizes.dp = 8;
  const topology job(sizes);
  const kernel_classifier classes = kernel_classifier::defaults();
  const router routes = router::defaults();
  name_table names;

  std::cout << "failslow " << version_string << " demo: a " << job.world_size() << "-rank job, tp=" << sizes.tp
            << " pp=" << sizes.pp << " dp=" << sizes.dp << ", order " << job.order_string() << "\n\n";
  const int suspect = 13;
  std::cout << "rank " << suspect << " belongs to " << job.group_name(suspect, parallel_dim::tp) << ", "
            << job.group_name(suspect, parallel_dim::dp) << " and stage:" << job.coordinate(suspect, parallel_dim::pp)
            << "\n\n";

  // Kernels one step of a Megatron-style transformer launches on rank 13.
  const char* step_kernels[] = {
      "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel",
      "flash_fwd_kernel",
      "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>",
      "ncclDevKernel_AllReduce_Sum_bf16_RING_LL",
      "ncclDevKernel_SendRecv",
      "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL",
      "Memcpy DtoD (Device -> Device)",
  };
  std::cout << std::left << std::setw(14) << "class" << std::setw(12) << "id"
            << "compare with        kernel\n";
  for (const char* k : step_kernels) {
    const name_id id = names.intern(k);
    const kernel_class cls = classes.classify(k);
    const auto scope = routes.scope(routing_subject::kernel, k, cls);
    std::string peers = "process group";
    if (scope) {
      peers.clear();
      for (int r : router::comparable_ranks(job, suspect, *scope)) peers += std::to_string(r) + ' ';
    }
    std::string shown(k);
    if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
    std::cout << std::setw(14) << to_string(cls) << std::setw(12) << id << std::setw(20) << peers << shown << '\n';
  }
  std::cout << "\nA whole job with a fault and its diagnosis: scripts/main-job.sh, or failslow simulate then failslow "
               "diagnose.\n";
}

}  // namespace

void add_demo_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("demo", "Show what failslow's core types make of a built-in 64-rank job");
  cmd->callback([] { run(); });
}

}  // namespace failslow_cli
