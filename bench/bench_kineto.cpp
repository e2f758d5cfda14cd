// Trace ingestion: failslow's Kineto reader on the decompressed df_index_resolver trace (54 MB,
// 216k events) against Python's json.loads on the same bytes (which only parses), and trace
// tree building in events per second.
#include <benchmark/benchmark.h>
#include <zlib.h>

#include <chrono>
#include <failslow/io/kineto_reader.hpp>
#include <failslow/trace/tree.hpp>
#include <filesystem>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "peer.hpp"

namespace {

const std::string& df_index_resolver() {
  static const std::string text = [] {
    const std::string path = std::string(FAILSLOW_KINETO_DIR) + "/df_index_resolver/df_index_resolver.json.gz";
    std::string out;
    gzFile f = gzopen(path.c_str(), "rb");
    if (!f) return out;
    char buf[1 << 16];
    int n;
    while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
    gzclose(f);
    return out;
  }();
  return text;
}

void BM_kineto_read(benchmark::State& state) {
  const auto& text = df_index_resolver();
  if (text.empty()) {
    state.SkipWithError("df_index_resolver.json.gz not found under FAILSLOW_KINETO_DIR");
    return;
  }
  failslow::io::kineto_reader reader;  // a reused reader, as a trace set's worker thread has
  double seconds = 0;
  std::uint64_t events = 0;
  for (auto _ : state) {
    failslow::name_table names;
    const auto t0 = std::chrono::steady_clock::now();
    auto t = reader.read_buffer(text, names);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    events = t.stats.events_seen;
    benchmark::DoNotOptimize(t.events.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * events));
  const double ours = seconds / static_cast<double>(state.iterations() * events);
  failslow_bench::report_peer(
      state, "json_loads.py",
      std::string(FAILSLOW_KINETO_DIR) + "/df_index_resolver/df_index_resolver.json.gz " + std::to_string(events),
      ours);
}
BENCHMARK(BM_kineto_read)->Unit(benchmark::kMillisecond)->UseRealTime();

// Nested synthetic events: a tree of fan-out `fan` to depth 4, repeated.
std::vector<failslow::event> nested_events(std::size_t n) {
  std::vector<failslow::event> ev;
  ev.reserve(n);
  std::int64_t t = 0;
  while (ev.size() < n) {
    const std::size_t root = ev.size();
    failslow::event e;
    e.start_ns = t;
    ev.push_back(e);
    std::int64_t c = t + 1;
    for (int a = 0; a < 8 && ev.size() < n; ++a) {
      failslow::event x;
      x.start_ns = c;
      std::int64_t d = c + 1;
      ev.push_back(x);
      const std::size_t xi = ev.size() - 1;
      for (int b = 0; b < 8 && ev.size() < n; ++b) {
        failslow::event y;
        y.start_ns = d;
        y.end_ns = d + 10;
        ev.push_back(y);
        d += 11;
      }
      ev[xi].end_ns = d + 1;
      c = d + 2;
    }
    ev[root].end_ns = c + 1;
    t = c + 5;
  }
  return ev;
}

void BM_tree_build(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const bool shuffled = state.range(1) != 0;
  const auto ev = nested_events(n);
  std::vector<std::uint32_t> idx(ev.size());
  std::iota(idx.begin(), idx.end(), 0u);
  if (shuffled) std::shuffle(idx.begin(), idx.end(), std::mt19937_64(1));
  failslow::trace::trace_tree tree;  // reused: the memory is allocated once
  for (auto _ : state) {
    failslow::trace::build_tree_into(tree, ev, idx);
    benchmark::DoNotOptimize(tree.nodes().data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
  state.SetLabel(shuffled ? "shuffled input (sort + build)" : "sorted input (O(n) build)");
}
BENCHMARK(BM_tree_build)->Args({1 << 20, 0})->Args({1 << 20, 1})->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
