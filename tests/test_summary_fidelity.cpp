// The summaries' fidelity battery (issue: summaries that keep what fail-slow looks like): every
// shape of tests/summary_battery.hpp, several seeds, through compressor -> encoder -> decoder,
// W1 / mean computed from the CDFs in the battery (independent of compress/fidelity.hpp).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "summary_battery.hpp"

namespace {
double sorted_quantile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}
}  // namespace

TEST_CASE("summaries keep rare tails, wide and flat keys and small counts", "[compress][fidelity]") {
  std::vector<double> all;
  std::map<battery::shape, std::vector<double>> by_shape;
  std::size_t tails = 0, kept = 0;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    const auto r = battery::run(seed, 8, 4);
    for (const auto& k : r.keys) {
      all.push_back(k.w1);
      by_shape[k.kind].push_back(k.w1);
      tails += k.tail_expected;
      kept += k.tail_kept;
    }
  }
  for (const auto& [shape, w1] : by_shape)
    WARN(battery::shape_name(shape) << ": W1/mean median " << 100 * sorted_quantile(w1, 0.5) << " %, p95 "
                                    << 100 * sorted_quantile(w1, 0.95) << " %, max "
                                    << 100 * *std::max_element(w1.begin(), w1.end()) << " %");
  REQUIRE(all.size() == 10u * 8 * 4 * std::size(battery::all_shapes));
  CHECK(sorted_quantile(all, 0.5) <= 0.005);
  CHECK(sorted_quantile(all, 0.95) <= 0.03);
  CHECK(*std::max_element(all.begin(), all.end()) <= 0.10);
  // A slow tail of 0.5-2 % of launches at 5-20x is its own mass in the decoded summary.
  REQUIRE(tails == 10u * 8 * 4);
  CHECK(static_cast<double>(kept) >= 0.99 * static_cast<double>(tails));
}

TEST_CASE("a rare slow tail is a cluster of its own, and a lognormal's outliers are not", "[compress][fidelity]") {
  std::size_t tails = 0, own = 0;
  for (std::uint64_t seed : {4u, 5u, 6u})
    for (const auto& k : battery::run(seed, 8, 4, {}, {}, {battery::shape::rare_tail}).keys) {
      tails += k.tail_expected;
      own += k.tail_cluster;
    }
  REQUIRE(tails == 3u * 8 * 4);
  CHECK(static_cast<double>(own) >= 0.99 * static_cast<double>(tails));
  // One wide or narrow lognormal of thousands of launches stays one cluster: its extreme
  // launches are near the body, not a tail.
  std::mt19937_64 rng(9);
  std::normal_distribution<double> z;
  for (double sigma : {0.02, 0.1, 0.3, 0.8}) {
    failslow::compress::kernel_summary key;
    failslow::compress::window_compressor c(0, [&](failslow::compress::window_summary&& w) { key = w.kernels.at(0); });
    for (int i = 0; i < 4096; ++i) c.add(0, i, std::llround(50e3 * std::exp(sigma * z(rng))));
    c.close_window();
    INFO("sigma " << sigma);
    CHECK(key.clusters.size() == 1);
  }
}

TEST_CASE("the zstd stage is lossless and smaller", "[compress][fidelity][zstd]") {
  if (!failslow::compress::zstd_available) {
    failslow::compress::codec_options o;
    o.zstd_level = 3;
    CHECK_THROWS_WITH(failslow::compress::summary_encoder([](failslow::name_id) { return std::string("k"); }, o),
                      Catch::Contains("no zstd"));
    return;
  }
  failslow::compress::codec_options z;
  z.zstd_level = 3;
  const auto plain = battery::run(7, 6, 3), packed = battery::run(7, 6, 3, {}, z);
  REQUIRE(plain.keys.size() == packed.keys.size());
  for (std::size_t i = 0; i < plain.keys.size(); ++i) CHECK(plain.keys[i].w1 == packed.keys[i].w1);
  CHECK(packed.bytes < plain.bytes);
  WARN(".fsum of the battery: " << plain.bytes << " bytes plain, " << packed.bytes << " with zstd");
}
