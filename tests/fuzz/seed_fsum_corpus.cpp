// Writes valid .fsum files into a folder, the seed corpus of fuzz_summary_decoder: windows of a
// few ranks made by the window compressor (key and delta windows, new names mid-stream,
// one-sample and bimodal keys, a key of a few launches kept as its values, a key spread over
// decades kept as knots, counted skips), with key frames every 1, 3 and 16 windows.
//   ./seed_fsum_corpus DIR
#include <cmath>
#include <cstdio>
#include <failslow/compress/codec.hpp>
#include <failslow/compress/window_compressor.hpp>
#include <fstream>
#include <random>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: seed_fsum_corpus DIR\n");
    return 2;
  }
  const std::vector<std::string> names{
      "ampere_bf16_s16816gemm",         "flash_fwd_kernel", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL",
      "Memcpy DtoD (Device -> Device)", "index_put_kernel", "embedding_backward_kernel"};
  for (unsigned interval : {1u, 3u, 16u}) {
    failslow::compress::codec_options opt;
    opt.key_frame_interval = interval;
    failslow::compress::summary_encoder enc([&](failslow::name_id id) { return names.at(id); }, opt);
    std::string bytes = enc.header();
    std::mt19937_64 rng(interval);
    std::normal_distribution<double> z;
    for (std::int32_t rank = 0; rank < 3; ++rank) {
      failslow::compress::window_compressor c(rank,
                                              [&](failslow::compress::window_summary&& w) { enc.encode(w, bytes); });
      for (int window = 0; window < 6; ++window) {
        const auto keys = static_cast<failslow::name_id>(window < 2 ? 2 : names.size());  // names appear later
        for (failslow::name_id k = 0; k < keys; ++k)
          for (int i = 0; i < (k == 3 ? 1 : k == 4 ? 5 : k == 5 ? 200 : 24); ++i) {
            const double median = (k + 1) * 10'000.0 * (k == 1 && i % 3 == 0 ? 3.0 : 1.0);
            const double spread = k == 5 ? 4.0 * std::log(10.0) * (std::uniform_real_distribution<double>()(rng) - 0.5)
                                         : 0.05 * z(rng);  // key 5: log-uniform over 4 decades (knots)
            c.add(k, window * 1'000'000'000LL + i * 1000, static_cast<std::int64_t>(median * std::exp(spread)));
          }
        c.add(0, window * 1'000'000'000LL, -5);  // counted as invalid_duration
        c.close_window(window * 1'000'000'000LL + 900'000'000);
      }
    }
    std::ofstream(std::string(argv[1]) + "/seed_k" + std::to_string(interval) + ".fsum", std::ios::binary) << bytes;
  }
  return 0;
}
