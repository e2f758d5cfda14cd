// Host-side cost of the CUPTI collector per activity record (no GPU: the buffers are built from
// the real CUDA 13 record structs, tests/support/fake_cupti.hpp walks them as CUPTI does):
//   BM_collect_parse      cuptiActivityGetNextRecord walk + parse into activity_records (names by
//                         pointer, host-clock conversion, classification), handed on in batches
//   BM_collect_to_windows the same into step_windows and the window compressor (steps of 2,000
//                         records; the window closes' clustering included)
//   BM_collect_copy_peer  the peer: the same walk copying each record's start, end, name pointer
//                         and correlation into an array, nothing else -- the least a collector does
// Counter ns/record = wall time / records. Issue 16's target: well under 50 ns per parsed record.
#include <benchmark/benchmark.h>

#include <failslow/collect/cupti_parser.hpp>
#include <failslow/collect/step_windows.hpp>
#include <string>
#include <vector>

#include "../tests/support/fake_cupti.hpp"

namespace {

using namespace failslow;
using namespace failslow::collect;

// A realistic buffer: 60 kernel names (a few NCCL), 1 in 20 records a memcpy, 4 MiB.
struct bench_buffer {
  std::vector<std::string> names;
  std::vector<std::uint8_t> bytes;
  std::size_t records = 0;
  bench_buffer() {
    for (int i = 0; i < 60; ++i)
      names.push_back(i % 15 == 0 ? "ncclDevKernel_AllReduce_Sum_bf16_RING_LL_" + std::to_string(i)
                                  : "void at::native::vectorized_elementwise_kernel<4, op_" + std::to_string(i) +
                                        ">(int, float*)");
    bytes.resize(std::size_t{4} << 20);
    std::size_t used = 0;
    std::uint64_t t = 1'000'000'000;
    for (std::uint32_t i = 0;; ++i) {
      t += 3000;
      if (i % 20 == 19) {
        const auto m = fake_cupti::memcpy_record(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
                                                 CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, t, t + 900, 1 << 16);
        if (used + sizeof m > bytes.size()) break;
        std::memcpy(bytes.data() + used, &m, sizeof m);
        used += sizeof m;
      } else {
        const auto k = fake_cupti::kernel(names[(i * 7u) % names.size()].c_str(), t, t + 2000 + (i % 13) * 100, i);
        if (used + sizeof k > bytes.size()) break;
        std::memcpy(bytes.data() + used, &k, sizeof k);
        used += sizeof k;
      }
      ++records;
    }
    bytes.resize(used);
  }
};

const bench_buffer& the_buffer() {
  static const bench_buffer b;
  return b;
}

struct batching_handler {
  std::vector<activity_record> batch = std::vector<activity_record>(256);
  std::size_t n = 0;
  record_sink* sink = nullptr;
  std::uint64_t seen = 0;
  void record(const activity_record& r) {
    batch[n++] = r;
    if (n == batch.size()) flush();
  }
  void mark(const step_mark& m) {
    if (sink) sink->mark(m);
  }
  void flush() {
    if (sink) sink->records(batch.data(), n);
    seen += n;
    n = 0;
  }
};

void BM_collect_parse(benchmark::State& state) {
  const auto& b = the_buffer();
  name_table names;
  clock_anchor clock;
  activity_parser parser(names, clock);
  const auto api = fake_cupti::api();
  batching_handler h;
  auto* data = const_cast<std::uint8_t*>(b.bytes.data());
  for (auto _ : state) {
    parser.parse(api, data, b.bytes.size(), h);
    h.flush();
  }
  benchmark::DoNotOptimize(h.seen);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * b.records));
  state.counters["ns/record"] = benchmark::Counter(static_cast<double>(state.iterations() * b.records),
                                                   benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_collect_to_windows(benchmark::State& state) {
  const auto& b = the_buffer();
  name_table names;
  clock_anchor clock;
  activity_parser parser(names, clock);
  const auto api = fake_cupti::api();
  std::uint64_t windows = 0;
  step_window_options opt;
  opt.close_lag_ns = 0;
  step_windows sink(
      0, [&](compress::window_summary&&) { ++windows; }, opt);
  batching_handler h;
  h.sink = &sink;
  auto* data = const_cast<std::uint8_t*>(b.bytes.data());
  std::int64_t step = 0, shift = 0;
  for (auto _ : state) {
    // Each pass is a new stretch of time: step marks every 2,000 records (6 ms).
    clock.set({shift, 0, 0});
    const std::int64_t first = 1'000'000'000 + shift;
    for (std::size_t r = 0; r < b.records; r += 2000)
      sink.mark({first + static_cast<std::int64_t>(r) * 3000, 0, step++, 0});
    parser.parse(api, data, b.bytes.size(), h);
    h.flush();
    sink.delivered(std::numeric_limits<std::int64_t>::max() / 2);
    shift += static_cast<std::int64_t>(b.records + 10) * 3000;
  }
  benchmark::DoNotOptimize(windows);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * b.records));
  state.counters["ns/record"] = benchmark::Counter(static_cast<double>(state.iterations() * b.records),
                                                   benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_collect_copy_peer(benchmark::State& state) {
  const auto& b = the_buffer();
  struct plain {
    std::uint64_t start, end;
    const char* name;
    std::uint32_t correlation;
  };
  std::vector<plain> out(b.records);
  auto* data = const_cast<std::uint8_t*>(b.bytes.data());
  for (auto _ : state) {
    CUpti_Activity* rec = nullptr;
    std::size_t i = 0;
    while (fake_cupti::get_next_record(data, b.bytes.size(), &rec) == CUPTI_SUCCESS) {
      if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
        out[i++] = {k->start, k->end, k->name, k->correlationId};
      } else {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec);
        out[i++] = {m->start, m->end, nullptr, m->correlationId};
      }
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * b.records));
  state.counters["ns/record"] = benchmark::Counter(static_cast<double>(state.iterations() * b.records),
                                                   benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

}  // namespace

BENCHMARK(BM_collect_parse)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_collect_to_windows)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_collect_copy_peer)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
