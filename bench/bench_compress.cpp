// Window compressor and summary codec on simulated LLM training steps (30,000 kernels of 300
// kernel keys per step and rank): throughput of add + window close against the naive peer
// (appending 32-byte raw records), and the compression ratio and fidelity of the encoded
// summaries against the same events as minimal Kineto JSON and 32-byte records
// (compress/baselines.hpp, the definitions `failslow compress` reports against), with and
// without the codec's zstd stage; and the size and fidelity per shape of the summaries'
// battery (tests/summary_battery.hpp: rare tails, keys over decades, small counts, ...).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <failslow/compress/baselines.hpp>
#include <failslow/compress/codec.hpp>
#include <failslow/compress/fidelity.hpp>
#include <failslow/compress/window_compressor.hpp>
#include <failslow/core/name_table.hpp>
#include <failslow/stats/wasserstein.hpp>
#include <random>
#include <string>
#include <vector>

#include "../tests/summary_battery.hpp"

namespace {

struct kernel_model {
  std::string name;
  double median_ns, sigma, second_mode, second_share;
  int per_step;
};

struct step_events {
  std::vector<failslow::name_id> key;
  std::vector<std::int64_t> start, duration;
};

// 300 kernel keys with durations from 2 us to 2 ms, a fifth of them bimodal.
std::vector<kernel_model> llm_kernels(std::mt19937_64& rng) {
  std::vector<kernel_model> ks;
  std::uniform_real_distribution<double> u(0, 1);
  const char* families[] = {
      "void cutlass::Kernel<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_{}x{}_32x3_tn_align8>",
      "flash_fwd_kernel<Flash_fwd_kernel_traits<128, {}, {}, 4, false, false, cutlass::bfloat16_t>>",
      "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<c10::BFloat16, {}, {}>>",
      "ncclDevKernel_AllReduce_Sum_bf16_RING_LL_{}_{}"};
  for (int k = 0; k < 300; ++k) {
    std::string name = families[k % 4];
    name.replace(name.find("{}"), 2, std::to_string(64 * (1 + k % 7)));
    name.replace(name.find("{}"), 2, std::to_string(k));
    const double median = 2e3 * std::pow(1000.0, u(rng));
    const bool bimodal = k % 5 == 0;
    const int per_step = 8 + static_cast<int>(u(rng) * 184);
    ks.push_back({name, median, 0.02 + 0.08 * u(rng), bimodal ? 1.5 + u(rng) : 1.0, bimodal ? 0.2 : 0.0, per_step});
  }
  return ks;
}

step_events make_step(const std::vector<kernel_model>& ks, std::mt19937_64& rng, std::int64_t t0) {
  step_events s;
  std::normal_distribution<double> z(0, 1);
  std::uniform_real_distribution<double> u(0, 1);
  std::int64_t t = t0;
  for (std::size_t k = 0; k < ks.size(); ++k) {
    for (int i = 0; i < ks[k].per_step; ++i) {
      const double m = u(rng) < ks[k].second_share ? ks[k].median_ns * ks[k].second_mode : ks[k].median_ns;
      const auto d = static_cast<std::int64_t>(m * std::exp(ks[k].sigma * z(rng)));
      s.key.push_back(static_cast<failslow::name_id>(k));
      s.start.push_back(t);
      s.duration.push_back(d);
      t += d + 500;
    }
  }
  return s;
}

// The timed benchmarks' input: eight simulated steps of the same job (seed 1).
std::vector<step_events> eight_steps() {
  std::mt19937_64 rng(1);
  const auto ks = llm_kernels(rng);
  std::vector<step_events> steps;
  for (int s = 0; s < 8; ++s) steps.push_back(make_step(ks, rng, s * 1'000'000'000LL));
  return steps;
}

// The bytes of one kernel event pretty-printed with every argument a PyTorch 2.x trace carries
// (~507 bytes): the Kineto JSON of this benchmark's first version, which issue 20's 10,000x
// target for the codec was set against (ratio_vs_full_kineto_json); the minimal form
// (compress/baselines.hpp, ~200 bytes) is what `failslow compress` reports against.
std::size_t full_kineto_json_bytes(const std::string& name, std::int64_t start, std::int64_t dur, std::size_t corr) {
  char buf[1024];
  const int n = std::snprintf(
      buf, sizeof buf,
      "  {\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": 7,\n"
      "    \"ts\": %lld.%03lld, \"dur\": %lld.%03lld,\n    \"args\": {\n      \"External id\": %llu,\n"
      "      \"queued\": 0, \"device\": 0, \"context\": 1,\n      \"stream\": 7, \"correlation\": %llu,\n"
      "      \"registers per thread\": 128,\n      \"shared memory\": 49152,\n      \"blocks per SM\": 1.75,\n"
      "      \"warps per SM\": 7.00,\n      \"grid\": [224, 1, 1],\n      \"block\": [128, 1, 1],\n"
      "      \"est. achieved occupancy %%\": 11\n    }\n  },\n",
      name.c_str(), static_cast<long long>(start / 1000), static_cast<long long>(start % 1000),
      static_cast<long long>(dur / 1000), static_cast<long long>(dur % 1000), static_cast<unsigned long long>(corr),
      static_cast<unsigned long long>(corr));
  return static_cast<std::size_t>(n);
}

struct raw_record {  // the naive peer: every event kept, 32 bytes
  std::int64_t start, end;
  std::uint32_t name, correlation;
  std::int32_t rank, stream;
};
static_assert(sizeof(raw_record) == 32);

void BM_compressor_add_and_close(benchmark::State& state) {
  const auto steps = eight_steps();
  std::uint64_t windows = 0, events = 0;
  failslow::compress::window_compressor c(0, [&](failslow::compress::window_summary&&) { ++windows; });
  for (auto _ : state) {
    for (const auto& s : steps) {
      for (std::size_t i = 0; i < s.key.size(); ++i) c.add(s.key[i], s.start[i], s.duration[i]);
      c.close_window();
      events += s.key.size();
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(events));
  state.counters["events_per_window"] = static_cast<double>(steps[0].key.size());
}
BENCHMARK(BM_compressor_add_and_close)->Unit(benchmark::kMillisecond);

void BM_async_compressor_producer(benchmark::State& state) {
  const auto steps = eight_steps();
  std::uint64_t events = 0;
  double max_close_us = 0;
  failslow::compress::async_window_compressor c(0, [](failslow::compress::window_summary&&) {});
  for (auto _ : state) {
    for (const auto& s : steps) {
      for (std::size_t i = 0; i < s.key.size(); ++i) c.add(s.key[i], s.start[i], s.duration[i]);
      const auto t0 = std::chrono::steady_clock::now();
      c.close_window();
      max_close_us = std::max(max_close_us,
                              std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
      events += s.key.size();
    }
  }
  c.flush();
  state.SetItemsProcessed(static_cast<std::int64_t>(events));
  state.counters["max_close_wait_us"] = max_close_us;
}
BENCHMARK(BM_async_compressor_producer)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_naive_raw_records(benchmark::State& state) {
  const auto steps = eight_steps();
  std::uint64_t events = 0;
  std::vector<raw_record> log;
  log.reserve(steps[0].key.size() * 2);  // a reused per-window buffer, as a tracer would keep
  for (auto _ : state) {
    for (const auto& s : steps) {
      log.clear();
      for (std::size_t i = 0; i < s.key.size(); ++i)
        log.push_back({s.start[i], s.start[i] + s.duration[i], s.key[i], static_cast<std::uint32_t>(i), 0, 7});
      events += s.key.size();
      benchmark::DoNotOptimize(log.data());
      benchmark::ClobberMemory();
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(events));
}
BENCHMARK(BM_naive_raw_records)->Unit(benchmark::kMillisecond);

// Not a timing: the compression ratio and fidelity, reported as counters.
void BM_compression_ratio_and_fidelity(benchmark::State& state) {
  const auto interval = static_cast<unsigned>(state.range(0));
  const auto zstd_level = static_cast<int>(state.range(1));
  const auto format = static_cast<unsigned>(state.range(2));
  const auto coarse = static_cast<unsigned>(state.range(3));
  const auto extremes = static_cast<unsigned>(state.range(4));
  if (zstd_level > 0 && !failslow::compress::zstd_available) {
    state.SkipWithError("built without zstd (failslow::zstd)");
    return;
  }
  std::mt19937_64 rng(2);
  const auto ks = llm_kernels(rng);
  failslow::name_table names;
  for (const auto& k : ks) names.intern(k.name);
  std::vector<failslow::compress::window_summary> windows;
  failslow::compress::window_compressor c(
      0, [&](failslow::compress::window_summary&& w) { windows.push_back(std::move(w)); });
  std::size_t json = 0, events = 0;
  failslow::compress::fidelity_figures fidelity;
  constexpr int steps = 64;
  std::size_t full_json = 0;
  for (int s = 0; s < steps; ++s) {
    const auto ev = make_step(ks, rng, s * 1'000'000'000LL);
    std::vector<std::vector<double>> exact(ks.size());
    for (std::size_t i = 0; i < ev.key.size(); ++i) {
      c.add(ev.key[i], ev.start[i], ev.duration[i]);
      failslow::event e;  // as the real traces carry it: device 0, stream 7, correlation i
      e.start_ns = ev.start[i];
      e.end_ns = ev.start[i] + ev.duration[i];
      e.correlation = static_cast<std::uint32_t>(i);
      e.device = 0;
      e.stream = 7;
      json += failslow::compress::minimal_kineto_json_bytes(ks[ev.key[i]].name, e);
      full_json += full_kineto_json_bytes(ks[ev.key[i]].name, ev.start[i], ev.duration[i], i);
      exact[ev.key[i]].push_back(static_cast<double>(ev.duration[i]));
    }
    events += ev.key.size();
    c.close_window();
    if (s == steps - 1) {  // fidelity of the last window, through encode + decode
      failslow::compress::codec_options opt;
      opt.key_frame_interval = interval;
      opt.zstd_level = zstd_level;
      opt.format_version = format;
      opt.coarse_shift = coarse;
      opt.extremes_shift = extremes;
      failslow::compress::summary_encoder enc([&](failslow::name_id id) { return std::string(names.name(id)); }, opt);
      std::string bytes = enc.header();
      for (const auto& w : windows) enc.encode(w, bytes);
      enc.flush(bytes);
      const auto dec = failslow::compress::decode_summaries(bytes);
      for (const auto& k : dec.windows.back().kernels) fidelity.add(k, exact[k.key]);
      for (auto _ : state) benchmark::DoNotOptimize(bytes.size());
      state.counters["fsum_bytes_per_step"] = static_cast<double>(bytes.size()) / steps;
      state.counters["json_bytes_per_step"] = static_cast<double>(json) / steps;
      state.counters["ratio_vs_minimal_kineto_json"] = static_cast<double>(json) / static_cast<double>(bytes.size());
      state.counters["ratio_vs_full_kineto_json"] = static_cast<double>(full_json) / static_cast<double>(bytes.size());
      state.counters["ratio_vs_32B_records"] =
          static_cast<double>(events * failslow::compress::record_bytes) / static_cast<double>(bytes.size());
      state.counters["w1_rel_median_pct"] = 100 * fidelity.median();
      state.counters["w1_rel_p95_pct"] = 100 * fidelity.p95();
    }
  }
}
// Format 3 (the default) with its defaults (coarse shift 1, extremes as fine as the rest), the
// key-frame and zstd choices, the precision trade-offs of bench/README.md, and format 2.
BENCHMARK(BM_compression_ratio_and_fidelity)
    ->ArgNames({"key_frame", "zstd", "format", "coarse", "extremes"})
    ->Args({1, 0, 3, 1, 0})
    ->Args({16, 0, 3, 1, 0})
    ->Args({64, 0, 3, 1, 0})
    ->Args({16, 3, 3, 1, 0})
    ->Args({64, 3, 3, 1, 0})
    ->Args({64, 19, 3, 1, 0})
    ->Args({16, 3, 3, 1, 1})
    ->Args({16, 3, 3, 2, 0})
    ->Args({16, 3, 3, 2, 1})
    ->Args({16, 3, 3, 3, 2})
    ->Args({16, 0, 2, 1, 0})
    ->Args({16, 3, 2, 1, 0})
    ->Iterations(1);

// Not a timing: bytes and W1 / mean per shape of the summaries' battery (5 seeds x 16 windows
// x 4 keys of one shape), as the size vs fidelity table of bench/README.md.
void BM_battery_size_and_fidelity(benchmark::State& state) {
  const auto s = battery::all_shapes[state.range(0)];
  failslow::compress::codec_options co;
  co.zstd_level = failslow::compress::zstd_available ? static_cast<int>(state.range(1)) : 0;
  std::vector<double> w1;
  std::size_t bytes = 0, keys = 0;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const auto r = battery::run(seed, 16, 4, {}, co, {s});
    bytes += r.bytes;
    keys += r.keys.size();
    for (const auto& k : r.keys) w1.push_back(k.w1);
  }
  std::sort(w1.begin(), w1.end());
  for (auto _ : state) benchmark::DoNotOptimize(bytes);
  state.SetLabel(battery::shape_name(s));
  state.counters["bytes_per_key_window"] = static_cast<double>(bytes) / static_cast<double>(keys);
  state.counters["w1_rel_median_pct"] = 100 * w1[w1.size() / 2];
  state.counters["w1_rel_p95_pct"] = 100 * w1[w1.size() * 95 / 100];
  state.counters["w1_rel_max_pct"] = 100 * w1.back();
}
BENCHMARK(BM_battery_size_and_fidelity)
    ->ArgNames({"shape", "zstd"})
    ->ArgsProduct({{0, 1, 2, 3, 4, 5}, {0, 3}})
    ->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
