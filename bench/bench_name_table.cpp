// Name interning: failslow::name_table against the naive C++ alternative (std::unordered_map of
// std::string under a mutex) and a Python dict, on a stream of realistic kernel names.
#include <benchmark/benchmark.h>

#include <chrono>
#include <failslow/core/name_table.hpp>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "peer.hpp"

namespace {

std::vector<std::string> name_stream(int distinct, int lookups) {
  std::vector<std::string> names;
  for (int i = 0; i < distinct; ++i)
    names.push_back("void at::native::elementwise_kernel<128, 4, op_" + std::to_string(i) + ">(int, float*)");
  std::vector<std::string> stream;
  stream.reserve(static_cast<std::size_t>(lookups));
  for (long k = 0; k < lookups; ++k) stream.push_back(names[static_cast<std::size_t>((k * 7919) % distinct)]);
  return stream;
}

void BM_name_table_intern(benchmark::State& state) {
  const int distinct = static_cast<int>(state.range(0)), lookups = 200000;
  const auto stream = name_stream(distinct, lookups);
  double seconds = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    failslow::name_table table;
    for (const auto& s : stream) benchmark::DoNotOptimize(table.intern(s));
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  state.SetItemsProcessed(state.iterations() * lookups);
  const double ours = seconds / static_cast<double>(state.iterations() * lookups);
  failslow_bench::report_peer(state, "intern_names.py", std::to_string(distinct) + " " + std::to_string(lookups), ours);
}
BENCHMARK(BM_name_table_intern)->Arg(300)->Arg(30000)->Unit(benchmark::kMillisecond);

void BM_naive_map_under_mutex(benchmark::State& state) {
  const int distinct = static_cast<int>(state.range(0)), lookups = 200000;
  const auto stream = name_stream(distinct, lookups);
  for (auto _ : state) {
    std::mutex m;
    std::unordered_map<std::string, std::uint32_t> table;
    for (const auto& s : stream) {
      std::lock_guard<std::mutex> lock(m);
      benchmark::DoNotOptimize(table.emplace(s, static_cast<std::uint32_t>(table.size())).first->second);
    }
  }
  state.SetItemsProcessed(state.iterations() * lookups);
}
BENCHMARK(BM_naive_map_under_mutex)->Arg(300)->Arg(30000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
