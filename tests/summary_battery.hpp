// The fidelity battery of tests/test_summary_fidelity.cpp (and bench/bench_compress.cpp): kernel
// duration streams of the shapes fail-slow takes and the simulator does not make (rare slow
// tails, keys spread over decades, a handful of launches, wide lognormals, constants, bimodal
// mixtures), run through the window compressor, the .fsum encoder and decoder, and scored by
// W1(decoded, exact) / mean computed here from the CDFs (not through compress/fidelity.hpp):
//     W1 = integral |F_decoded(x) - F_exact(x)| dx
// over the union of both supports, F_decoded from the mixture's own cdf() at the midpoint of
// intervals at most 0.5 % wide in log x (the same figures as 0.1 % to 3 digits) whose ends include every sample and
// every component bound (so each interval has F_exact constant and F_decoded smooth or constant).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <failslow/compress/codec.hpp>
#include <failslow/compress/window_compressor.hpp>
#include <random>
#include <string>
#include <vector>

namespace battery {

enum class shape { rare_tail, log_uniform, small_count, wide_lognormal, constant, bimodal };
inline const char* shape_name(shape s) {
  switch (s) {
    case shape::rare_tail:
      return "rare tail (0.5-2 %, 5-20x)";
    case shape::log_uniform:
      return "log-uniform (2-6 decades)";
    case shape::small_count:
      return "small count (n = 1-20)";
    case shape::wide_lognormal:
      return "lognormal (sigma 0.05-0.8)";
    case shape::constant:
      return "constant";
    case shape::bimodal:
      return "bimodal (1.5-4x, 20-50 %)";
  }
  return "?";
}
inline constexpr shape all_shapes[] = {shape::rare_tail,      shape::log_uniform, shape::small_count,
                                       shape::wide_lognormal, shape::constant,    shape::bimodal};

/// One key's durations in one window (ns, >= 1).
inline std::vector<std::int64_t> draw(shape s, std::mt19937_64& rng, double* tail_share = nullptr,
                                      double* tail_factor = nullptr) {
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<double> z(0, 1);
  const double median = 2e3 * std::pow(500.0, u(rng));  // 2 us .. 1 ms
  auto lognormal = [&](double m, double sigma) {
    return std::max<std::int64_t>(1, std::llround(m * std::exp(sigma * z(rng))));
  };
  std::vector<std::int64_t> d;
  switch (s) {
    case shape::rare_tail: {
      const double share = 0.005 + 0.015 * u(rng), factor = 5 + 15 * u(rng), sigma = 0.02 + 0.08 * u(rng);
      const auto n = static_cast<std::size_t>(400 + 1600 * u(rng));
      const auto tail = static_cast<std::size_t>(std::llround(share * static_cast<double>(n)));
      for (std::size_t i = 0; i < n; ++i) d.push_back(lognormal(i < tail ? median * factor : median, sigma));
      if (tail_share) *tail_share = static_cast<double>(tail) / static_cast<double>(n);
      if (tail_factor) *tail_factor = factor;
      break;
    }
    case shape::log_uniform: {
      const double decades = 2 + 4 * u(rng);
      const auto n = static_cast<std::size_t>(100 + 900 * u(rng));
      for (std::size_t i = 0; i < n; ++i)
        d.push_back(std::max<std::int64_t>(1, std::llround(100.0 * std::pow(10.0, decades * u(rng)))));
      break;
    }
    case shape::small_count: {
      const auto n = static_cast<std::size_t>(1 + 20 * u(rng));
      const double sigma = 0.02 + 0.3 * u(rng);
      for (std::size_t i = 0; i < std::min<std::size_t>(n, 20); ++i) d.push_back(lognormal(median, sigma));
      break;
    }
    case shape::wide_lognormal: {
      const double sigma = 0.05 + 0.75 * u(rng);
      const auto n = static_cast<std::size_t>(50 + 1950 * u(rng));
      for (std::size_t i = 0; i < n; ++i) d.push_back(lognormal(median, sigma));
      break;
    }
    case shape::constant: {
      const auto n = static_cast<std::size_t>(20 + 500 * u(rng));
      d.assign(n, std::llround(median));
      break;
    }
    case shape::bimodal: {
      const double ratio = 1.5 + 2.5 * u(rng), share = 0.2 + 0.3 * u(rng), sigma = 0.02 + 0.08 * u(rng);
      const auto n = static_cast<std::size_t>(100 + 1900 * u(rng));
      for (std::size_t i = 0; i < n; ++i) d.push_back(lognormal(u(rng) < share ? median * ratio : median, sigma));
      break;
    }
  }
  std::shuffle(d.begin(), d.end(), rng);
  return d;
}

/// W1(F_decoded, F_exact) / mean(exact), integrated over x (see the synopsis).
inline double relative_w1_by_cdf(const failslow::stats::lognormal_mixture& m, std::vector<double> exact) {
  std::sort(exact.begin(), exact.end());
  double mean = 0;
  for (double x : exact) mean += x;
  mean /= static_cast<double>(exact.size());
  std::vector<double> cuts(exact.begin(), exact.end());
  for (const auto& c : m.components()) {
    if (c.is_point_mass()) {
      cuts.push_back(c.point);
    } else {
      if (c.lo > 0) cuts.push_back(c.lo);
      if (std::isfinite(c.hi)) cuts.push_back(c.hi);
      if (!m.truncated())  // the untruncated tails: out to 12 sigma
        for (double k : {-12.0, 12.0}) cuts.push_back(std::exp(c.mu + k * c.sigma));
    }
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  double w1 = 0;
  std::size_t below = 0;  // exact values <= the interval's start
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
    const double a = cuts[i], b = cuts[i + 1];
    while (below < exact.size() && exact[below] <= a) ++below;
    const double fe = static_cast<double>(below) / static_cast<double>(exact.size());
    const auto pieces = static_cast<std::size_t>(std::ceil(std::log(b / a) / 5e-3));
    for (std::size_t j = 0; j < pieces; ++j) {
      const double x0 = a * std::exp(std::log(b / a) * static_cast<double>(j) / static_cast<double>(pieces));
      const double x1 = a * std::exp(std::log(b / a) * static_cast<double>(j + 1) / static_cast<double>(pieces));
      w1 += std::abs(m.cdf(0.5 * (x0 + x1)) - fe) * (x1 - x0);
    }
  }
  return w1 / mean;
}

struct key_result {
  shape kind;
  double w1;             ///< W1 / mean
  bool tail_expected;    ///< a rare tail (0.5-2 % of launches at 5-20x)
  bool tail_kept;        ///< the decoded distribution holds its mass (within +-50 %)
  bool tail_cluster;     ///< and the summary has a cluster of its own for it
  std::size_t launches;  ///< durations of the key in the window
};

struct battery_result {
  std::vector<key_result> keys;
  std::size_t bytes = 0;  ///< of the .fsum
};

/// `windows` windows of one rank, each holding `keys_per_shape` keys of every shape in `shapes`
/// (all: the mixture across keys), through compressor -> encoder -> decoder.
inline battery_result run(std::uint64_t seed, int windows, int keys_per_shape,
                          const failslow::compress::compressor_config& cc = {},
                          const failslow::compress::codec_options& co = {},
                          const std::vector<shape>& shapes = {std::begin(all_shapes), std::end(all_shapes)}) {
  using namespace failslow;
  std::mt19937_64 rng(seed);
  std::vector<compress::window_summary> summaries;
  compress::window_compressor c(
      0, [&](compress::window_summary&& w) { summaries.push_back(std::move(w)); }, cc);
  struct truth {
    shape kind;
    std::vector<double> exact;
    double tail_share = 0, tail_factor = 0;
  };
  std::vector<std::vector<truth>> truths;  // per window, per key id
  for (int w = 0; w < windows; ++w) {
    std::vector<truth> keys;
    std::int64_t t = std::int64_t{w} * 10'000'000'000;
    for (shape s : shapes)
      for (int k = 0; k < keys_per_shape; ++k) {
        truth tr{s, {}, 0, 0};
        for (std::int64_t d : draw(s, rng, &tr.tail_share, &tr.tail_factor)) {
          c.add(static_cast<name_id>(keys.size()), t, d);
          tr.exact.push_back(static_cast<double>(d));
          t += d + 100;
        }
        keys.push_back(std::move(tr));
      }
    c.close_window(t);
    truths.push_back(std::move(keys));
  }
  compress::summary_encoder enc([](name_id id) { return "kernel_" + std::to_string(id); }, co);
  std::string bytes = enc.header();
  for (const auto& w : summaries) enc.encode(w, bytes);
  enc.flush(bytes);
  const auto dec = compress::decode_summaries(bytes);
  battery_result out;
  out.bytes = bytes.size();
  for (const auto& w : dec.windows) {
    const auto& keys = truths.at(static_cast<std::size_t>(w.window_id));
    for (const auto& k : w.kernels) {
      const truth& tr = keys.at(k.key);
      key_result r{tr.kind, relative_w1_by_cdf(k.distribution(), tr.exact), false, false, false, tr.exact.size()};
      if (tr.kind == shape::rare_tail) {  // every one: 0.5-2 % at 5-20x
        r.tail_expected = true;
        // Kept: the decoded distribution's mass beyond sqrt(factor) x the median (a point the
        // body, sigma <= 0.1, and the tail do not reach) is the tail's share within +-50 %.
        const auto m = k.distribution();
        const double beyond = m.survival(std::sqrt(tr.tail_factor) * m.quantile(0.5));
        r.tail_kept = std::abs(beyond - tr.tail_share) <= 0.5 * tr.tail_share;
        const double cut = std::sqrt(tr.tail_factor) * k.clusters.front().p50;
        r.tail_cluster =
            k.clusters.size() >= 2 && k.clusters.back().min >= cut && k.clusters[k.clusters.size() - 2].max < cut;
      }
      out.keys.push_back(r);
    }
  }
  return out;
}

}  // namespace battery
