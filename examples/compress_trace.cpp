// Compress a job's recorded traces into per-step window summaries, write them as .fsum, read
// them back, and compare each rank's busiest kernel with the group baseline.
//   ./example_compress_trace ../shared/data/kineto/trace_filter_2_of_128 [out.fsum]
#include <failslow/compress/codec.hpp>
#include <failslow/compress/fidelity.hpp>
#include <failslow/compress/merge.hpp>
#include <failslow/compress/trace_windows.hpp>
#include <failslow/stats/wasserstein.hpp>
#include <failslow/trace/load_trace_set.hpp>
#include <failslow/trace/steps.hpp>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: example_compress_trace TRACE_DIR [out.fsum]\n";
    return 2;
  }
  const std::string out = argc > 2 ? argv[2] : "job.fsum";
  failslow::trace::trace_set_options options;
  options.threads = 2;
  const auto set = failslow::trace::load_trace_set({argv[1]}, options);

  // One window per ProfilerStep and rank, encoded as they come; the encoder writes each kernel
  // name once and delta-codes a rank's windows against its previous one.
  failslow::compress::summary_encoder encoder([&](failslow::name_id id) { return std::string(set.names.name(id)); });
  std::string bytes = encoder.header();
  for (const auto& t : set.traces) {
    const auto steps = failslow::trace::map_steps(t.data, set.names);
    // A kernel launched with several grid/block shapes is one key per shape: each shape is its
    // own duration distribution.
    const auto keys = failslow::compress::launch_shape_keys(t.data, set.names);
    failslow::compress::trace_window_options wo;
    wo.keys = &keys;
    const auto counts = failslow::compress::summarize_trace(
        t.data, steps, t.rank, wo, [&](failslow::compress::window_summary&& w) { encoder.encode(w, bytes); });
    std::cout << "rank " << t.rank << ": " << counts.windows << " windows, " << counts.compressed
              << " GPU events compressed, " << counts.outside_steps << " outside steps, " << counts.skipped
              << " skipped\n";
  }
  std::ofstream(out, std::ios::binary) << bytes;
  std::cout << "wrote " << bytes.size() << " bytes to " << out << "\n";

  // Reading back: damage would be listed, not thrown.
  const auto decoded = failslow::compress::decode_summaries(bytes, out);
  std::cout << decoded.windows.size() << " windows decoded, " << decoded.damaged.size() << " damaged blocks\n";
  if (decoded.windows.empty()) return 0;

  // All windows of all ranks merged: a group baseline to hold each rank against.
  const auto baseline = failslow::compress::merge_windows(decoded.windows);
  const failslow::compress::kernel_summary* busiest = nullptr;
  for (const auto& k : baseline.kernels)
    if (!busiest || k.total_ns > busiest->total_ns) busiest = &k;
  if (!busiest) return 0;
  std::cout << "busiest kernel: " << decoded.names.at(busiest->key).substr(0, 80) << "\n  baseline: " << busiest->count
            << " runs, " << busiest->clusters.size() << " cluster(s), median of the first "
            << busiest->clusters.front().p50 / 1e3 << " us\n";
  for (const auto& w : decoded.windows)
    if (const auto* k = w.find(busiest->key))
      std::cout << "  rank " << w.rank << " step " << w.window_id << ": " << k->count << " runs, mean "
                << k->total_ns / static_cast<double>(k->count) / 1e3 << " us, W1 to the baseline "
                << failslow::stats::wasserstein1(k->distribution(), busiest->distribution()) / 1e3 << " us\n";
  return 0;
}
