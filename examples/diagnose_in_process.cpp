// Diagnose a job in process, the always-on way: each rank's kernel durations go into its own
// window compressor (one window per training step), the windows into a job model, and the
// model through the diagnosis -- no trace file anywhere. Here 16 data-parallel ranks run a
// GEMM-heavy step; rank 11's GPU slows down by 30 % from step 20, and the others wait for it in
// the gradient all-reduce.
//   ./example_diagnose_in_process
#include <algorithm>
#include <failslow/compress/window_compressor.hpp>
#include <failslow/core/name_table.hpp>
#include <failslow/diagnose/diagnose.hpp>
#include <failslow/diagnose/job_model.hpp>
#include <failslow/io/report_text.hpp>
#include <iostream>
#include <random>
#include <vector>

int main() {
  using namespace failslow;
  const int ranks = 16, steps = 40;
  name_table names;
  const name_id gemm = names.intern("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64");
  const name_id norm = names.intern("vectorized_layer_norm_kernel");
  const name_id allreduce = names.intern("ncclDevKernel_AllReduce_Sum_bf16_RING_LL");

  // The sink of every compressor: its windows go into the model, classified by kernel name.
  diagnose::model_options keep;
  keep.keep_windows = true;  // the windows themselves too: L3 compares kernels across ranks
  diagnose::job_model_builder model(keep);
  std::vector<compress::window_compressor> compressors;
  for (int r = 0; r < ranks; ++r)
    compressors.emplace_back(r, [&](compress::window_summary&& w) {
      model.add_window(std::move(w), [&](name_id k) { return names.name(k); });
    });

  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> jitter(0.0, 0.02);
  std::vector<std::int64_t> clock(ranks, 0);
  for (int s = 0; s < steps; ++s) {
    // Compute: 200 GEMMs and 50 norms per step; rank 11 is slow from step 20.
    std::vector<std::int64_t> ready(ranks);
    for (int r = 0; r < ranks; ++r) {
      const double slow = (r == 11 && s >= 20) ? 1.3 : 1.0;
      for (int k = 0; k < 250; ++k) {
        const bool is_gemm = k % 5 != 0;
        const auto d = static_cast<std::int64_t>((is_gemm ? 350e3 : 40e3) * slow * jitter(rng));
        compressors[static_cast<std::size_t>(r)].add(is_gemm ? gemm : norm, clock[static_cast<std::size_t>(r)], d);
        clock[static_cast<std::size_t>(r)] += d + 2000;
      }
      ready[static_cast<std::size_t>(r)] = clock[static_cast<std::size_t>(r)];
    }
    // The all-reduce ends together on every rank, after the last one arrived: early ranks wait.
    const std::int64_t last = *std::max_element(ready.begin(), ready.end());
    for (int r = 0; r < ranks; ++r) {
      auto& c = clock[static_cast<std::size_t>(r)];
      const std::int64_t end = last + 3'000'000;
      compressors[static_cast<std::size_t>(r)].add(allreduce, c, end - c);
      c = end + 50'000;
      compressors[static_cast<std::size_t>(r)].close_window(end);  // window id = step number
    }
  }
  const auto job = model.finish();
  // The model's figures are core/dense_array tables: rank x step, rank x phase x step.
  const auto& iteration = job.iteration_ns;
  std::cout << "step time of rank 11 in steps 10 and 30: " << iteration(11, 10) / 1e6 << " and "
            << iteration(11, 30) / 1e6 << " ms (" << iteration.shape(0) << " ranks x " << iteration.shape(1)
            << " steps)\n\n";
  parallel_sizes layout;
  layout.dp = ranks;
  const auto report = diagnose::diagnose(job, topology(layout));
  std::cout << io::report_to_text(report);
}
