// The CUPTI collector without a GPU: hand-built CUDA 13 activity records (the real structs)
// through the parser, the pool, the step windows, the flight recorder and the whole collector
// driven by a fake CUPTI (tests/support/fake_cupti.hpp).
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstring>
#include <failslow/collect/buffer_pool.hpp>
#include <failslow/collect/clock_anchor.hpp>
#include <failslow/collect/cupti_collector.hpp>
#include <failslow/collect/cupti_parser.hpp>
#include <failslow/collect/flight_recorder.hpp>
#include <failslow/collect/step_windows.hpp>
#include <failslow/io/kineto_reader.hpp>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "support/fake_cupti.hpp"

using namespace failslow;
using namespace failslow::collect;

namespace {

struct collect_test_handler {
  std::vector<activity_record> records;
  std::vector<step_mark> marks;
  void record(const activity_record& r) { records.push_back(r); }
  void mark(const step_mark& m) { marks.push_back(m); }
};

// A buffer laid out like CUPTI's: records back to back, each its struct's size.
struct collect_test_buffer {
  alignas(64) std::uint8_t bytes[1 << 16];
  std::size_t used = 0;
  template <class R>
  void add(const R& r) {
    std::memcpy(bytes + used, &r, sizeof r);
    used += sizeof r;
  }
};

struct collect_window_log {
  std::vector<compress::window_summary> windows;
  compress::window_sink sink() {
    return [this](compress::window_summary&& w) { windows.push_back(std::move(w)); };
  }
};

std::uint64_t collect_count_key(const compress::window_summary& w, name_id key) {
  const auto* k = w.find(key);
  return k ? k->count : 0;
}

}  // namespace

TEST_CASE("collect: CUDA 13 record layouts are the ones CUPTI documents") {
  // Offsets the parser reads, from the CUDA 13.0 cupti_activity.h (PACKED_ALIGNMENT = 8).
  CHECK(sizeof(CUpti_ActivityKernel10) % 8 == 0);
  CHECK(offsetof(CUpti_ActivityKernel10, start) == 16);
  CHECK(offsetof(CUpti_ActivityKernel10, end) == 24);
  CHECK(offsetof(CUpti_ActivityMemcpy6, bytes) == 8);
  CHECK(offsetof(CUpti_ActivityMemset4, start) == 16);
  CHECK(CUPTI_API_VERSION >= 130001);
}

TEST_CASE("collect: compute kernels are keyed by launch shape, collectives and dimensionless records are not") {
  name_table names;
  clock_anchor clock;
  clock.set({1000, 5, 0});
  collect_test_buffer buf;
  const char* gemm = "sm90_gemm";
  const char* nccl = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL";
  auto shaped = [](const char* name, std::uint64_t t, std::int32_t gx, std::int32_t bx) {
    auto k = fake_cupti::kernel(name, t, t + 100, static_cast<std::uint32_t>(t));
    k.gridX = gx;
    k.gridY = k.gridZ = 1;
    k.blockX = bx;
    k.blockY = k.blockZ = 1;
    return k;
  };
  buf.add(shaped(gemm, 1000, 132, 384));
  buf.add(shaped(gemm, 2000, 66, 384));
  buf.add(shaped(gemm, 3000, 132, 384));
  buf.add(shaped(nccl, 4000, 4, 512));
  buf.add(fake_cupti::kernel(gemm, 5000, 5100, 9));  // no dimensions recorded
  for (const bool by_shape : {true, false}) {
    parser_options o;
    o.key_by_launch_shape = by_shape;
    activity_parser parser(names, clock, o);
    collect_test_handler h;
    const auto api = fake_cupti::api();
    parser.parse(api, buf.bytes, buf.used, h);
    REQUIRE(h.records.size() == 5);
    CHECK(parser.counts().accounted());
    if (by_shape) {
      CHECK(names.name(h.records[0].ev.name) == "sm90_gemm <<<132x1x1, 384x1x1>>>");
      CHECK(names.name(h.records[1].ev.name) == "sm90_gemm <<<66x1x1, 384x1x1>>>");
      CHECK(h.records[2].ev.name == h.records[0].ev.name);
    } else {
      CHECK(names.name(h.records[0].ev.name) == "sm90_gemm");
      CHECK(h.records[1].ev.name == h.records[0].ev.name);
    }
    CHECK(names.name(h.records[3].ev.name) == nccl);
    CHECK(names.name(h.records[4].ev.name) == "sm90_gemm");
  }
}

TEST_CASE("collect: the parser turns kernels, copies and sets into records") {
  name_table names;
  clock_anchor clock;
  clock.set({1000, 5, 0});  // host = CUPTI + 1 us
  activity_parser parser(names, clock);
  collect_test_buffer buf;
  // One name pointer per kernel function, as CUPTI does; a mangled one is demangled.
  const char* gemm = "_Z11gemm_kernelPfS_i";
  const char* nccl = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL";
  buf.add(fake_cupti::kernel(gemm, 5000, 7000, 11, 7, 2));
  buf.add(fake_cupti::kernel(nccl, 6000, 9500, 12, 9, 2));
  buf.add(fake_cupti::kernel(gemm, 8000, 8600, 13, 7, 2));
  auto g1 = fake_cupti::kernel(gemm, 10000, 10100, 40, 7, 2);
  g1.graphId = 3;
  g1.graphNodeId = 77;
  auto g2 = fake_cupti::kernel(gemm, 10200, 10300, 40, 7, 2);  // same graph launch: same correlation
  g2.graphId = 3;
  g2.graphNodeId = 78;
  buf.add(g1);
  buf.add(g2);
  buf.add(fake_cupti::memcpy_record(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
                                    CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 100, 400, 4096));
  CUpti_ActivityMemcpyPtoP4 p2p;
  std::memset(&p2p, 0, sizeof p2p);
  p2p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  p2p.srcKind = p2p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  p2p.start = 500;
  p2p.end = 900;
  p2p.bytes = 1 << 20;
  p2p.deviceId = 1;
  buf.add(p2p);
  CUpti_ActivityMemset4 ms;
  std::memset(&ms, 0, sizeof ms);
  ms.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  ms.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  ms.start = 1000;
  ms.end = 1010;
  ms.bytes = 64;
  buf.add(ms);

  collect_test_handler h;
  const auto api = fake_cupti::api();
  parser.parse(api, buf.bytes, buf.used, h);
  REQUIRE(h.records.size() == 8);
  const auto& c = parser.counts();
  CHECK(c.records == 8);
  CHECK(c.kernels == 4);
  CHECK(c.collectives == 1);
  CHECK(c.memcpys == 2);
  CHECK(c.memsets == 1);
  CHECK(c.accounted());
  CHECK(c.invalid_buffer_end == 0);

  const auto& k0 = h.records[0].ev;
  CHECK(names.name(k0.name) == "gemm_kernel(float*, float*, int)");
  CHECK(k0.kind == event_kind::kernel);
  CHECK(k0.start_ns == 6000);  // + the anchor's 1000 ns
  CHECK(k0.end_ns == 8000);
  CHECK(k0.correlation == 11);
  CHECK(k0.stream == 7);
  CHECK(k0.device == 2);
  CHECK(h.records[2].ev.name == k0.name);  // interned once, by pointer
  CHECK(h.records[1].ev.kind == event_kind::collective);
  CHECK(names.name(h.records[1].ev.name) == nccl);
  // Graph kernels: one correlation id, told apart by their node ids.
  CHECK(h.records[3].ev.correlation == h.records[4].ev.correlation);
  CHECK((h.records[3].ev.flags & record_flag_graph) != 0);
  CHECK(h.records[3].graph_id == 3);
  CHECK(h.records[3].graph_node_id == 77);
  CHECK(h.records[4].graph_node_id == 78);
  CHECK((h.records[0].ev.flags & record_flag_graph) == 0);
  // Kineto's copy names, which core/kernel_class.hpp classifies as memory.
  CHECK(names.name(h.records[5].ev.name) == "Memcpy HtoD (Pinned -> Device)");
  CHECK(h.records[5].bytes == 4096);
  CHECK(h.records[5].ev.kind == event_kind::memcpy);
  CHECK(names.name(h.records[6].ev.name) == "Memcpy PtoP (Device -> Device)");
  CHECK(h.records[6].ev.device == 1);
  CHECK(names.name(h.records[7].ev.name) == "Memset (Device)");
  CHECK(h.records[7].ev.kind == event_kind::memset);
  CHECK(kernel_classifier::defaults().classify(names.name(h.records[5].ev.name)) == kernel_class::memory);
}

TEST_CASE("collect: bad records are counted, not used, and a cut buffer stops at the cut") {
  name_table names;
  clock_anchor clock;
  activity_parser parser(names, clock);
  const auto api = fake_cupti::api();
  collect_test_buffer buf;
  buf.add(fake_cupti::kernel("k", 0, 500, 1));      // no start timestamp
  buf.add(fake_cupti::kernel("k", 500, 0, 2));      // no end timestamp
  buf.add(fake_cupti::kernel("k", 900, 800, 3));    // end before start
  buf.add(fake_cupti::kernel("k", 1000, 1000, 4));  // zero duration is fine
  CUpti_ActivityAPI driver;
  std::memset(&driver, 0, sizeof driver);
  driver.kind = CUPTI_ACTIVITY_KIND_DRIVER;  // a kind CUPTI knows and the parser does not use
  buf.add(driver);
  buf.add(fake_cupti::kernel("k", 2000, 2500, 5));
  collect_test_handler h;
  parser.parse(api, buf.bytes, buf.used, h);
  CHECK(h.records.size() == 2);
  auto c = parser.counts();
  CHECK(c.zero_timestamp == 2);
  CHECK(c.end_before_start == 1);
  CHECK(c.unknown_kind == 1);
  CHECK(c.kernels == 2);
  CHECK(c.accounted());

  // The same buffer cut in the middle of its last record: the complete ones are used.
  SECTION("truncated") {
    collect_test_handler h2;
    activity_parser p2(names, clock);
    p2.parse(api, buf.bytes, buf.used - 8, h2);
    CHECK(h2.records.size() == 1);
    CHECK(p2.counts().invalid_buffer_end == 1);
    CHECK(p2.counts().accounted());
  }
  SECTION("a kind CUPTI itself does not know ends the buffer") {
    collect_test_buffer b2;
    b2.add(fake_cupti::kernel("k", 10, 20, 1));
    CUpti_ActivityKernel10 odd = fake_cupti::kernel("k", 30, 40, 2);
    odd.kind = static_cast<CUpti_ActivityKind>(0x7ff0);
    b2.add(odd);
    collect_test_handler h3;
    activity_parser p3(names, clock);
    p3.parse(api, b2.bytes, b2.used, h3);
    CHECK(h3.records.size() == 1);
    CHECK(p3.counts().invalid_buffer_end == 1);
  }
  SECTION("empty and null buffers") {
    activity_parser p4(names, clock);
    collect_test_handler h4;
    p4.parse(api, nullptr, 0, h4);
    p4.parse(api, buf.bytes, 0, h4);
    CHECK(h4.records.empty());
    CHECK(p4.counts().buffers == 2);
  }
}

TEST_CASE("collect: a reused name pointer is interned afresh, and a full name cache still interns") {
  name_table names;
  clock_anchor clock;
  parser_options opt;
  opt.name_cache_entries = 16;
  activity_parser parser(names, clock, opt);
  const auto api = fake_cupti::api();
  char storage[64] = "attention_fwd_kernel_v1";
  collect_test_buffer buf;
  buf.add(fake_cupti::kernel(storage, 10, 20, 1));
  collect_test_handler h;
  parser.parse(api, buf.bytes, buf.used, h);
  std::strcpy(storage, "layernorm_bwd");  // the module was unloaded, its memory reused
  parser.parse(api, buf.bytes, buf.used, h);
  REQUIRE(h.records.size() == 2);
  CHECK(names.name(h.records[0].ev.name) == "attention_fwd_kernel_v1");
  CHECK(names.name(h.records[1].ev.name) == "layernorm_bwd");
  CHECK(parser.counts().name_pointer_reused == 1);

  // 200 distinct names through a 16-slot cache: every record keeps its own name.
  std::vector<std::string> many;
  for (int i = 0; i < 200; ++i) many.push_back("kernel_" + std::to_string(i));
  collect_test_buffer b2;
  for (int i = 0; i < 200; ++i)
    b2.add(fake_cupti::kernel(many[static_cast<std::size_t>(i)].c_str(), 100, 200, static_cast<std::uint32_t>(i)));
  collect_test_handler h2;
  parser.parse(api, b2.bytes, b2.used, h2);
  REQUIRE(h2.records.size() == 200);
  for (std::size_t i = 0; i < 200; ++i) CHECK(names.name(h2.records[i].ev.name) == many[i]);
  CHECK(parser.counts().name_cache_full > 0);
  CHECK_THROWS_AS(activity_parser(names, clock,
                                  [] {
                                    parser_options o;
                                    o.name_cache_entries = 100;
                                    return o;
                                  }()),
                  failslow::invalid_argument);
}

TEST_CASE("collect: NVTX ranges become step marks and phases") {
  name_table names;
  clock_anchor clock;
  activity_parser parser(names, clock);
  const auto api = fake_cupti::api();
  collect_test_buffer buf;
  auto marker = [](std::uint32_t flags, std::uint32_t id, std::uint64_t t, const char* name) {
    CUpti_ActivityMarker2 m;
    std::memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MARKER;
    m.flags = static_cast<CUpti_ActivityFlag>(flags);
    m.id = id;
    m.timestamp = t;
    m.name = name;
    m.objectId.pt.threadId = 4242;
    return m;
  };
  buf.add(marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 100, "ProfilerStep#41"));
  buf.add(marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 2, 150, "forward"));
  buf.add(marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 2, 400, nullptr));
  buf.add(marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 1, 900, nullptr));
  buf.add(marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 9, 950, nullptr));  // never started
  collect_test_handler h;
  parser.parse(api, buf.bytes, buf.used, h);
  REQUIRE(h.marks.size() == 2);
  CHECK(h.marks[0].kind == mark_kind::step);
  CHECK(h.marks[0].step == 41);
  CHECK(h.marks[0].time_ns == 100);
  CHECK(h.marks[1].kind == mark_kind::phase);
  CHECK(names.name(h.marks[1].name) == "forward");
  CHECK(h.marks[1].time_ns == 150);
  CHECK(h.marks[1].end_ns == 400);
  CHECK(h.marks[1].step == 41);
  REQUIRE(h.records.size() == 1);  // the phase as a host annotation
  CHECK(h.records[0].ev.kind == event_kind::annotation);
  CHECK(h.records[0].ev.stream == 4242);
  CHECK(parser.counts().unmatched_range_ends == 1);
  CHECK(parser.counts().accounted());
}

TEST_CASE("collect: the buffer pool hands out fixed buffers and refuses when empty") {
  buffer_pool pool(4096, 3);
  std::uint8_t* a = pool.acquire();
  std::uint8_t* b = pool.acquire();
  std::uint8_t* c = pool.acquire();
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(c);
  CHECK(reinterpret_cast<std::uintptr_t>(a) % 8 == 0);
  CHECK(std::set<std::uint8_t*>{a, b, c}.size() == 3);
  CHECK(pool.acquire() == nullptr);
  CHECK(pool.refused() == 1);
  CHECK(pool.outstanding() == 3);
  std::uint8_t foreign[16];
  CHECK_FALSE(pool.release(foreign));
  CHECK_FALSE(pool.release(a + 8));  // inside a buffer, not its start
  CHECK(pool.release(a));
  CHECK_FALSE(pool.release(a));  // twice
  CHECK(pool.foreign_releases() == 3);
  CHECK(pool.acquire() == a);
  CHECK_THROWS_AS(buffer_pool(100, 2), failslow::invalid_argument);
  CHECK_THROWS_AS(buffer_pool(4096, 0), failslow::invalid_argument);
}

TEST_CASE("collect: the pool under concurrent request and completion threads") {
  buffer_pool pool(1024, 8);
  std::atomic<std::uint64_t> got{0}, bad_releases{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        std::uint8_t* p = pool.acquire();
        if (!p) continue;
        p[0] = static_cast<std::uint8_t>(i);  // the buffer is ours alone until released
        got.fetch_add(1);
        if (!pool.release(p)) bad_releases.fetch_add(1);  // Catch2 assertions are not thread-safe
      }
    });
  for (auto& t : threads) t.join();
  CHECK(pool.available() == 8);
  CHECK(pool.acquired() == got.load());
  CHECK(got.load() + pool.refused() == 8000);
  CHECK(pool.foreign_releases() == 0);
  CHECK(bad_releases == 0);
}

TEST_CASE("collect: clock anchoring keeps the narrowest bracket") {
  std::int64_t host = 1000;
  std::vector<std::int64_t> steps = {50, 50, 4, 4, 30, 30};  // second bracket is the narrowest
  std::size_t i = 0;
  std::uint64_t device = 0;
  auto host_now = [&] {
    host += steps[i++ % steps.size()];
    return host;
  };
  auto device_now = [&]() -> std::optional<std::uint64_t> {
    device = static_cast<std::uint64_t>(host) - 700;  // device = host - 700 at the read
    return device;
  };
  const auto s = measure_offset(device_now, host_now, 3);
  REQUIRE(s);
  CHECK(s->uncertainty_ns == 2);
  // The device read happened at the first host_now of the bracket + 0; offset ~ 700 + 2.
  CHECK(s->offset_ns == 702);
  CHECK_FALSE(
      measure_offset([]() -> std::optional<std::uint64_t> { return std::nullopt; }, [] { return std::int64_t{0}; }));
  clock_anchor a;
  a.set(*s);
  CHECK(a.to_host(1000) == 1702);
}

TEST_CASE("collect: step windows hold the records that start in each step, whatever their order") {
  collect_window_log log;
  step_window_options opt;
  opt.close_lag_ns = 100;
  step_windows sw(5, log.sink(), opt);
  const name_id a = 0, b = 1;
  auto rec = [](name_id n, std::int64_t s, std::int64_t e, event_kind k = event_kind::kernel) {
    activity_record r;
    r.ev.name = n;
    r.ev.start_ns = s;
    r.ev.end_ns = e;
    r.ev.kind = k;
    return r;
  };
  // A record before any step is counted, not compressed.
  std::vector<activity_record> batch = {rec(a, 10, 20)};
  sw.records(batch.data(), batch.size());
  sw.mark({1000, 1000, 7, 0, mark_kind::step});
  sw.mark({2000, 2000, 8, 0, mark_kind::step});
  sw.mark({3000, 3000, 9, 0, mark_kind::step});
  // Step 8's and 9's records arrive before step 7's last one.
  batch = {rec(a, 1100, 1200), rec(b, 2100, 2300), rec(a, 1500, 2500),
           rec(b, 3100, 3200), rec(a, 2900, 2950), rec(b, 1900, 1950)};
  sw.records(batch.data(), batch.size());
  sw.delivered(2050);  // 2000 + 100 lag not passed: nothing closes
  CHECK(log.windows.empty());
  sw.delivered(2100);  // step 7 closes
  REQUIRE(log.windows.size() == 1);
  batch = {rec(b, 1990, 1995)};  // late: step 7 is closed, so it goes into step 8
  sw.records(batch.data(), batch.size());
  sw.finish(4000);
  REQUIRE(log.windows.size() == 3);
  CHECK(log.windows[0].window_id == 7);
  CHECK(log.windows[1].window_id == 8);
  CHECK(log.windows[2].window_id == 9);
  CHECK(log.windows[0].rank == 5);
  // By hand: step 7 = starts in [1000, 2000): a@1100, a@1500, b@1900.
  CHECK(collect_count_key(log.windows[0], a) == 2);
  CHECK(collect_count_key(log.windows[0], b) == 1);
  CHECK(log.windows[0].start_ns == 1000);
  // Step 8 = [2000, 3000): b@2100, a@2900, plus the late b@1990.
  CHECK(collect_count_key(log.windows[1], a) == 1);
  CHECK(collect_count_key(log.windows[1], b) == 2);
  CHECK(collect_count_key(log.windows[2], b) == 1);
  const auto& c = sw.counts();
  CHECK(c.before_first_window == 1);
  CHECK(c.late == 1);
  CHECK(c.device_records == 8);
  CHECK(c.compressed == 7);
  CHECK(c.windows == 3);
  std::uint64_t total = 0;
  for (const auto& w : log.windows) total += w.event_count();
  CHECK(total == c.compressed);
  // Phases close nothing; host records are not compressed.
  step_windows sw2(0, log.sink(), opt);
  sw2.mark({10, 20, 0, 3, mark_kind::phase});
  batch = {rec(a, 15, 16, event_kind::annotation)};
  sw2.records(batch.data(), batch.size());
  CHECK(sw2.counts().phase_marks == 1);
  CHECK(sw2.counts().host_records == 1);
}

TEST_CASE("collect: step windows agree with a reference on random out-of-order streams") {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    std::mt19937_64 rng(seed);
    collect_window_log log;
    step_window_options opt;
    opt.close_lag_ns = 5000;
    opt.pending_capacity = 4096;
    step_windows sw(0, log.sink(), opt);
    const int steps = 20;
    std::vector<std::int64_t> marks;
    for (int s = 0; s < steps; ++s) marks.push_back(100000 + s * 10000);
    for (int s = 0; s < steps; ++s) sw.mark({marks[static_cast<std::size_t>(s)], 0, s, 0, mark_kind::step});
    // Records in start order, then shuffled within blocks of 16 (a bounded disorder), then
    // delivered with the watermark after each block.
    std::vector<activity_record> all;
    std::uniform_int_distribution<std::int64_t> start(100000, 100000 + steps * 10000 - 1);
    std::uniform_int_distribution<int> key(0, 4);
    for (int i = 0; i < 3000; ++i) {
      activity_record r;
      r.ev.start_ns = start(rng);
      r.ev.end_ns = r.ev.start_ns + 100;
      r.ev.name = static_cast<name_id>(key(rng));
      all.push_back(r);
    }
    std::sort(all.begin(), all.end(), [](const auto& x, const auto& y) { return x.ev.start_ns < y.ev.start_ns; });
    for (std::size_t i = 0; i < all.size(); i += 16)
      std::shuffle(all.begin() + static_cast<std::ptrdiff_t>(i),
                   all.begin() + static_cast<std::ptrdiff_t>(std::min(all.size(), i + 16)), rng);
    std::map<std::pair<std::int64_t, name_id>, std::uint64_t> expected;
    for (const auto& r : all) {
      const auto s = std::upper_bound(marks.begin(), marks.end(), r.ev.start_ns) - marks.begin() - 1;
      ++expected[{s, r.ev.name}];
    }
    std::int64_t wm = 0;
    for (std::size_t i = 0; i < all.size(); i += 16) {
      const std::size_t n = std::min<std::size_t>(16, all.size() - i);
      sw.records(all.data() + i, n);
      for (std::size_t j = i; j < i + n; ++j) wm = std::max(wm, all[j].ev.end_ns);
      sw.delivered(wm);
    }
    sw.finish(100000 + steps * 10000);
    REQUIRE(log.windows.size() == static_cast<std::size_t>(steps));
    CHECK(sw.counts().late == 0);
    for (const auto& w : log.windows)
      for (name_id k = 0; k < 5; ++k)
        CHECK(collect_count_key(w, k) == expected[{static_cast<std::int64_t>(w.window_id), k}]);
  }
}

TEST_CASE("collect: time windows line up on multiples of their length, and a full pending area closes early") {
  collect_window_log log;
  step_window_options opt;
  opt.time_window_ns = 1000;
  opt.close_lag_ns = 0;
  opt.pending_capacity = 2;
  step_windows sw(0, log.sink(), opt);
  std::vector<activity_record> batch(6);
  const std::int64_t starts[] = {5100, 5900, 6100, 6200, 6300, 8500};
  for (std::size_t i = 0; i < 6; ++i) {
    batch[i].ev.start_ns = starts[i];
    batch[i].ev.end_ns = starts[i] + 10;
  }
  sw.records(batch.data(), batch.size());  // no watermark: 6100..8500 wait, the third overflows
  sw.finish(9000);
  REQUIRE(log.windows.size() == 3);
  CHECK(log.windows[0].window_id == 5);
  CHECK(log.windows[0].event_count() == 2);
  CHECK(log.windows[1].window_id == 6);
  CHECK(log.windows[1].event_count() == 3);
  CHECK(log.windows[2].window_id == 8);
  CHECK(sw.counts().pending_overflow == 1);
  CHECK(sw.counts().compressed == 6);
  CHECK_THROWS_AS(step_windows(0, log.sink(),
                               [] {
                                 step_window_options o;
                                 o.pending_capacity = 0;
                                 return o;
                               }()),
                  failslow::invalid_argument);
}

TEST_CASE("collect: the flight recorder keeps the newest records and dumps a trace the reader reads back") {
  name_table names;
  flight_recorder rec(64 * 100);
  REQUIRE(rec.capacity() == 100);
  const name_id k = names.intern("gemm");
  const name_id m = names.intern("Memcpy HtoD (Pinned -> Device)");
  const name_id ph = names.intern("backward");
  std::vector<activity_record> batch(250);
  for (std::size_t i = 0; i < batch.size(); ++i) {
    auto& e = batch[i].ev;
    e.start_ns = 1'700'000'000'000'000'000 + static_cast<std::int64_t>(i) * 1000 + 1;
    e.end_ns = e.start_ns + 333 + static_cast<std::int64_t>(i);
    e.name = i % 5 == 0 ? m : k;
    e.kind = i % 5 == 0 ? event_kind::memcpy : event_kind::kernel;
    e.device = 1;
    e.stream = 7;
    e.correlation = static_cast<std::uint32_t>(i);
  }
  batch[240].ev.flags = record_flag_graph;
  batch[240].graph_id = 9;
  batch[240].graph_node_id = 5;
  rec.records(batch.data(), 120);
  rec.records(batch.data() + 120, 130);
  rec.mark({batch[160].ev.start_ns, batch[160].ev.start_ns, 3, 0, mark_kind::step});
  rec.mark({batch[170].ev.start_ns, batch[180].ev.start_ns, 3, ph, mark_kind::phase});
  const auto snap = rec.snapshot();
  REQUIRE(snap.records.size() == 100);
  CHECK(snap.total_records == 250);
  CHECK(snap.overwritten == 0);
  for (std::size_t i = 0; i < 100; ++i) CHECK(snap.records[i].ev.correlation == 150 + i);
  REQUIRE(snap.marks.size() == 2);

  std::string json;
  write_kineto_json(snap, names, json, {3, 4242, -1});
  CHECK(json.find("\"graph id\":9") != std::string::npos);
#if defined(FAILSLOW_HAS_SIMDJSON)
  name_table read_names;
  const auto t = io::read_kineto_buffer(json, read_names);
  CHECK(t.stats.accounted());
  std::vector<event> gpu, host;
  for (const auto& e : t.events) (is_device_activity(e.kind) ? gpu : host).push_back(e);
  REQUIRE(gpu.size() == 100);
  for (std::size_t i = 0; i < 100; ++i) {
    const auto& want = snap.records[i].ev;
    CHECK(gpu[i].start_ns == want.start_ns);  // exact integer nanoseconds
    CHECK(gpu[i].end_ns == want.end_ns);
    CHECK(gpu[i].kind == want.kind);
    CHECK(gpu[i].correlation == want.correlation);
    CHECK(gpu[i].device == 1);
    CHECK(gpu[i].stream == 7);
    CHECK(read_names.name(gpu[i].name) == names.name(want.name));
  }
  REQUIRE(host.size() == 2);
  CHECK(read_names.name(host[0].name) == "ProfilerStep#3");
  CHECK(read_names.name(host[1].name) == "backward");
  CHECK(host[1].duration_ns() == batch[180].ev.start_ns - batch[170].ev.start_ns);
  REQUIRE(t.distributed);
  CHECK(t.distributed->rank == 3);
#endif
}

TEST_CASE("collect: snapshots taken while the writer runs are consistent") {
  flight_recorder rec(64 * 4096);
  std::atomic<bool> done{false};
  std::thread writer([&] {
    std::vector<activity_record> batch(300);
    std::uint32_t next = 0;
    for (int round = 0; round < 300; ++round) {
      for (auto& r : batch) r.ev.correlation = next++;
      rec.records(batch.data(), batch.size());
    }
    done = true;
  });
  int snaps = 0;
  while (!done || snaps < 3) {
    const auto s = rec.snapshot();
    // Oldest first and contiguous: what survived the copy is a run of consecutive ids.
    for (std::size_t i = 1; i < s.records.size(); ++i)
      REQUIRE(s.records[i].ev.correlation == s.records[i - 1].ev.correlation + 1);
    CHECK(s.records.size() + s.overwritten <= rec.capacity());
    ++snaps;
  }
  writer.join();
  CHECK(rec.total_records() == 90000);
}

namespace {

struct collect_fake_fixture {
  name_table names;
  collect_window_log log;
  step_windows windows;
  collect_fake_fixture(step_window_options o = collect_close_fast()) : windows(0, log.sink(), o) {
    fake_cupti::reset();
  }
  static step_window_options collect_close_fast() {
    step_window_options o;
    o.close_lag_ns = 0;
    return o;
  }
};

// Device-clock time of a host time: the fake runs CUPTI's clock 1 s behind.
std::uint64_t collect_device_time(std::int64_t host_ns) {
  return static_cast<std::uint64_t>(host_ns + fake_cupti::s().device_minus_host_ns);
}

}  // namespace

TEST_CASE("collect: the collector captures through CUPTI's callbacks into step windows") {
  for (bool on_worker : {true, false}) {
    collect_fake_fixture f;
    collector_options opt;
    opt.buffer_bytes = 4096;
    opt.buffer_count = 32;  // room for every record even if the worker lags (drops: next test)
    opt.deliver_on_worker = on_worker;
    opt.flight_recorder_bytes = 64 * 1024;
    cupti_collector c(fake_cupti::api(), f.windows, f.names, opt);
    const auto st = c.start();
    REQUIRE(st.state == collector_state::running);
    // Concurrent kernels, memcpy, memcpy2 and memset; never the serialising KERNEL kind.
    CHECK(fake_cupti::s().enabled.count(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == 1);
    CHECK(fake_cupti::s().enabled.count(CUPTI_ACTIVITY_KIND_MEMCPY2) == 1);
    CHECK(fake_cupti::s().enabled.count(CUPTI_ACTIVITY_KIND_MEMSET) == 1);
    CHECK(fake_cupti::s().enabled.count(CUPTI_ACTIVITY_KIND_KERNEL) == 0);
    CHECK(fake_cupti::s().subscribers == 0);  // the probe holds no subscriber
    CHECK(fake_cupti::s().flush_period == opt.flush_period_ms);
    CHECK(c.stats().anchors == 1);
    CHECK(std::abs(c.clock().offset_ns() - 1'000'000'000) < 1'000'000);  // the fake's 1 s

    const char* gemm = "gemm";
    const char* ar = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
    std::map<std::int64_t, std::uint64_t> launched;  // step -> kernels
    for (std::int64_t step = 0; step < 5; ++step) {
      c.begin_step(step);
      const std::int64_t t0 = host_clock_ns() + 1000;
      for (int i = 0; i < 40; ++i) {
        const std::int64_t s = t0 + i * 100;
        fake_cupti::emit(fake_cupti::kernel(i % 10 == 0 ? ar : gemm, collect_device_time(s),
                                            collect_device_time(s + 50), static_cast<std::uint32_t>(i)));
        ++launched[step];
      }
      while (host_clock_ns() < t0 + 4000) {  // the next step's mark comes after this one's work
      }
      if (step == 2) c.flush();
    }
    c.stop();
    CHECK(c.status().state == collector_state::stopped);
    CHECK(fake_cupti::s().enabled.empty());
    CHECK(fake_cupti::s().flush_forced == 1);
    const auto stats = c.stats();
    CHECK(stats.buffers_outstanding == 0);
    CHECK(stats.parse.kernels + stats.parse.collectives == 200);
    CHECK(stats.parse.collectives == 20);
    CHECK(stats.dropped == 0);
    CHECK(stats.sink_failures == 0);
    REQUIRE(f.log.windows.size() == 5);
    for (std::size_t w = 0; w < 5; ++w) {
      CHECK(f.log.windows[w].window_id == w);
      CHECK(f.log.windows[w].event_count() == launched[static_cast<std::int64_t>(w)]);
    }
    const auto gemm_id = f.names.find("gemm");
    REQUIRE(gemm_id);
    CHECK(collect_count_key(f.log.windows[3], *gemm_id) == 36);
    REQUIRE(c.recorder());
    CHECK(c.recorder()->total_records() == 200);
  }
}

TEST_CASE("collect: an empty pool makes CUPTI drop records, and the drops are counted") {
  collect_fake_fixture f;
  collector_options opt;
  opt.buffer_bytes = 1024;  // 3 kernel records per buffer
  opt.buffer_count = 1;
  cupti_collector c(fake_cupti::api(), f.windows, f.names, opt);
  REQUIRE(c.start().running());
  c.begin_step(0);
  const std::int64_t t0 = host_clock_ns() + 100;
  int written = 0;
  // The worker returns the buffer asynchronously: while it holds it, writes find no buffer.
  for (int i = 0; i < 200; ++i)
    written +=
        fake_cupti::emit(fake_cupti::kernel("k", collect_device_time(t0 + i), collect_device_time(t0 + i + 1), 1));
  c.stop();
  const auto s = c.stats();
  CHECK(s.parse.kernels == static_cast<std::uint64_t>(written));
  CHECK(s.dropped == fake_cupti::s().dropped_total);
  CHECK(s.dropped + static_cast<std::uint64_t>(written) == 200);
  CHECK(s.buffers_refused + s.buffers_completed >= s.buffers_requested);
}

TEST_CASE("collect: start fails open when CUPTI is in use, absent or refuses a kind") {
  SECTION("another tool holds CUPTI") {
    collect_fake_fixture f;
    fake_cupti::s().subscribe_result = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    cupti_collector c(fake_cupti::api(), f.windows, f.names);
    const auto st = c.start();
    CHECK(st.state == collector_state::in_use);
    CHECK(st.message.find("another tool") != std::string::npos);
    CHECK(fake_cupti::s().enable_calls.empty());  // stepped aside: nothing enabled
    CHECK(fake_cupti::s().request == nullptr);    // nor callbacks registered
    c.stop();                                     // harmless
  }
  SECTION("no driver") {
    collect_fake_fixture f;
    fake_cupti::s().subscribe_result = CUPTI_ERROR_UNKNOWN;
    cupti_collector c(fake_cupti::api(), f.windows, f.names);
    const auto st = c.start();
    CHECK(st.state == collector_state::unavailable);
    CHECK(st.message.find("CUPTI_ERROR_UNKNOWN") != std::string::npos);
  }
  SECTION("a kind cannot be enabled: the others are disabled again") {
    collect_fake_fixture f;
    fake_cupti::s().enable_result = CUPTI_ERROR_NOT_SUPPORTED;
    cupti_collector c(fake_cupti::api(), f.windows, f.names);
    CHECK(c.start().state == collector_state::failed);
    CHECK(fake_cupti::s().enabled.empty());
  }
  SECTION("no CUPTI functions") {
    collect_fake_fixture f;
    cupti_collector c(cupti_api{}, f.windows, f.names);
    CHECK(c.start().state == collector_state::unavailable);
  }
  SECTION("one collector per process") {
    collect_fake_fixture f;
    cupti_collector a(fake_cupti::api(), f.windows, f.names);
    collect_window_log log2;
    step_windows w2(0, log2.sink());
    cupti_collector b(fake_cupti::api(), w2, f.names);
    REQUIRE(a.start().running());
    CHECK(b.start().state == collector_state::in_use);
    a.stop();
  }
}

TEST_CASE("collect: a throwing sink is cut off without reaching CUPTI") {
  struct collect_throwing_sink : record_sink {
    int calls = 0;
    void records(const activity_record*, std::size_t) override {
      ++calls;
      throw std::runtime_error("disk full");
    }
  } sink;
  fake_cupti::reset();
  name_table names;
  collector_options opt;
  opt.buffer_bytes = 1024;
  cupti_collector c(fake_cupti::api(), sink, names, opt);
  REQUIRE(c.start().running());
  for (int i = 0; i < 20; ++i) fake_cupti::emit(fake_cupti::kernel("k", 100 + static_cast<std::uint64_t>(i), 200, 1));
  c.stop();
  CHECK(sink.calls == 1);
  CHECK(c.stats().sink_failures == 1);
  CHECK(c.stats().parse.kernels == 20);
}

TEST_CASE("collect: capture, steps and dumps from several threads at once") {
  collect_fake_fixture f;
  collector_options opt;
  opt.buffer_bytes = 2048;
  opt.buffer_count = 8;
  opt.flush_period_ms = 10;
  opt.flight_recorder_bytes = 64 * 512;
  std::atomic<int> dumps{0};
  std::atomic<std::size_t> largest_dump{0};
  opt.on_dump = [&](recorder_snapshot&& s) {  // on the dump thread: no Catch2 assertions here
    if (s.records.size() > largest_dump) largest_dump = s.records.size();
    dumps.fetch_add(1);
  };
  cupti_collector c(fake_cupti::api(), f.windows, f.names, opt);
  REQUIRE(c.start().running());
  std::atomic<bool> stop{false};
  std::thread stepper([&] {
    for (std::int64_t s = 0; s < 50; ++s) {
      c.begin_step(s);
      auto g = c.phase("forward");
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    stop = true;
  });
  std::vector<std::thread> devices;
  std::atomic<int> written{0};
  for (int t = 0; t < 2; ++t)
    devices.emplace_back([&, t] {
      while (!stop) {
        const std::int64_t now = host_clock_ns();
        written += fake_cupti::emit(
            fake_cupti::kernel(t ? "a" : "b", collect_device_time(now), collect_device_time(now + 10), 1));
        if (written % 100 == 0) c.request_dump();
      }
    });
  stepper.join();
  for (auto& d : devices) d.join();
  c.stop();
  const auto s = c.stats();
  CHECK(s.parse.kernels == static_cast<std::uint64_t>(written.load()));
  CHECK(s.parse.kernels + s.dropped == static_cast<std::uint64_t>(written.load()) + fake_cupti::s().dropped_total);
  CHECK(f.windows.counts().device_records == s.parse.kernels);
  std::uint64_t in_windows = 0;
  for (const auto& w : f.log.windows) in_windows += w.event_count();
  CHECK(in_windows + f.windows.counts().before_first_window == f.windows.counts().device_records);
  CHECK(s.dumps == static_cast<std::uint64_t>(dumps.load()));
  CHECK(largest_dump <= 512);
  CHECK(s.marks_dropped == 0);
}

TEST_CASE("collect: kernel launch calls become runtime records and each step window's launch pace",
          "[collect][launch]") {
  // The parser: launch calls (cudaLaunchKernel and kin, graph launches) are handed on, other
  // runtime calls counted; a launch without timing is counted like any record.
  name_table names;
  clock_anchor clock;
  activity_parser parser(names, clock);
  const auto api = fake_cupti::api();
  collect_test_buffer buf;
  buf.add(fake_cupti::runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1000, 1400, 1, 21));
  buf.add(fake_cupti::runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060, 2000, 2300, 2, 22));
  buf.add(fake_cupti::runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, 3000, 3100, 3, 21));
  buf.add(fake_cupti::runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 4000, 4500, 4, 21));
  buf.add(fake_cupti::runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 0, 5000, 5, 21));
  buf.add(fake_cupti::kernel("k", 1500, 1900, 1));
  collect_test_handler h;
  parser.parse(api, buf.bytes, buf.used, h);
  const auto& c = parser.counts();
  CHECK(c.launch_calls == 3);
  CHECK(c.other_runtime_calls == 1);
  CHECK(c.zero_timestamp == 1);
  CHECK(c.kernels == 1);
  CHECK(c.accounted());
  REQUIRE(h.records.size() == 4);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(h.records[i].ev.kind == event_kind::runtime);
    CHECK(names.name(h.records[i].ev.name) == "cudaLaunchKernel");
    CHECK(h.records[i].ev.device == -1);
    CHECK(h.records[i].ev.correlation == i + 1);
  }
  CHECK(h.records[1].ev.stream == 22);  // the calling thread
  CHECK(h.records[1].ev.end_ns - h.records[1].ev.start_ns == 300);

  // The step windows: the launch calls that start in a step, in time order whatever the
  // threads' delivery order, give its window's count and median interval; one of a window
  // already closed is counted, not used.
  collect_window_log log;
  step_window_options opt;
  opt.close_lag_ns = 100;
  step_windows sw(2, log.sink(), opt);
  auto rec = [](std::int64_t s, event_kind k) {
    activity_record r;
    r.ev.start_ns = s;
    r.ev.end_ns = s + 50;
    r.ev.kind = k;
    return r;
  };
  sw.mark({1000, 1000, 7, 0, mark_kind::step});
  sw.mark({2000, 2000, 8, 0, mark_kind::step});
  std::vector<activity_record> batch = {rec(1300, event_kind::runtime), rec(1100, event_kind::runtime),
                                        rec(1150, event_kind::kernel),  rec(2100, event_kind::runtime),
                                        rec(1600, event_kind::runtime), rec(1200, event_kind::runtime),
                                        rec(2400, event_kind::runtime), rec(2150, event_kind::kernel)};
  sw.records(batch.data(), batch.size());
  sw.delivered(2200);  // step 7 closes
  REQUIRE(log.windows.size() == 1);
  batch = {rec(1900, event_kind::runtime)};  // step 7's, too late
  sw.records(batch.data(), batch.size());
  sw.finish(3000);
  REQUIRE(log.windows.size() == 2);
  CHECK(log.windows[0].launch.launches == 4);  // 1100, 1200, 1300, 1600
  CHECK(log.windows[0].launch.median_interval_ns == 100);
  CHECK(log.windows[1].launch.launches == 2);  // 2100, 2400
  CHECK(log.windows[1].launch.median_interval_ns == 300);
  CHECK(log.windows[0].event_count() == 1);
  CHECK(sw.counts().launch_calls == 7);
  CHECK(sw.counts().launches_late == 1);
  CHECK(sw.counts().host_records == 0);

  // The collector enables RUNTIME only when asked (every runtime call costs a record).
  for (const bool launches : {false, true}) {
    collect_fake_fixture f;
    collector_options co;
    co.launches = launches;
    cupti_collector col(fake_cupti::api(), f.windows, f.names, co);
    REQUIRE(col.start().state == collector_state::running);
    CHECK(fake_cupti::s().enabled.count(CUPTI_ACTIVITY_KIND_RUNTIME) == (launches ? 1u : 0u));
    col.begin_step(0);
    const std::int64_t t0 = host_clock_ns() + 1000;
    for (int i = 0; i < 5; ++i) {
      const std::int64_t t = t0 + i * 1000;
      fake_cupti::emit(fake_cupti::runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, collect_device_time(t),
                                                collect_device_time(t + 200), static_cast<std::uint32_t>(i + 1)));
      fake_cupti::emit(fake_cupti::kernel("gemm", collect_device_time(t + 300), collect_device_time(t + 800),
                                          static_cast<std::uint32_t>(i + 1)));
    }
    while (host_clock_ns() < t0 + 6000) {
    }
    col.stop();
    REQUIRE(f.log.windows.size() == 1);
    CHECK(f.log.windows[0].event_count() == 5);
    CHECK(f.log.windows[0].launch.launches == (launches ? 5u : 0u));
    if (launches) CHECK(std::abs(f.log.windows[0].launch.median_interval_ns - 1000) <= 2);
  }
#if defined(FAILSLOW_HAS_SIMDJSON)
  // A flight-recorder dump writes them as Kineto's runtime calls, linked to their kernels.
  flight_recorder fr(64 * 16);
  std::vector<activity_record> pair(2);
  pair[0] = h.records[0];  // the cudaLaunchKernel call, correlation 1
  pair[1] = h.records[3];  // its kernel
  fr.records(pair.data(), pair.size());
  std::string json;
  write_kineto_json(fr.snapshot(), names, json, {0, 1, -1});
  name_table read_names;
  const auto t = io::read_kineto_buffer(json, read_names);
  CHECK(t.stats.accounted());
  REQUIRE(t.events.size() == 2);
  std::size_t runtime = 0;
  for (const auto& e : t.events)
    if (e.kind == event_kind::runtime) {
      ++runtime;
      CHECK(read_names.name(e.name) == "cudaLaunchKernel");
      CHECK(e.correlation == 1);
    }
  CHECK(runtime == 1);
#endif
}
