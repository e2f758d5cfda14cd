// A recorded trace as per-step window summaries (compress/trace_windows.hpp) and the fidelity
// figure (compress/fidelity.hpp): windows follow the steps the GPU work was launched in, every
// GPU activity is compressed or counted, and the summaries survive the codec.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <failslow/compress/baselines.hpp>
#include <failslow/compress/codec.hpp>
#include <failslow/compress/fidelity.hpp>
#include <failslow/compress/trace_windows.hpp>
#include <failslow/core/kernel_class.hpp>
#include <failslow/io/detail/text_format.hpp>
#include <map>
#include <random>

namespace {

using failslow::event;
using failslow::event_kind;
using failslow::name_id;

struct trace_builder {
  failslow::name_table& names;
  failslow::io::trace_data t;
  std::uint32_t next_correlation = 1;

  event& add(event_kind kind, std::string_view name, std::int64_t start, std::int64_t dur) {
    event e;
    e.kind = kind;
    e.name = names.intern(name);
    e.start_ns = start;
    e.end_ns = start + dur;
    e.device = failslow::is_device_activity(kind) ? 0 : -1;
    t.events.push_back(e);
    return t.events.back();
  }
  // A launch at host time h and its kernel at GPU time g.
  void launch(std::string_view kernel, std::int64_t h, std::int64_t g, std::int64_t dur,
              event_kind kind = event_kind::kernel) {
    const auto c = next_correlation++;
    add(event_kind::runtime, "cudaLaunchKernel", h, 3'000).correlation = c;
    add(kind, kernel, g, dur).correlation = c;
  }
};

}  // namespace

TEST_CASE("trace windows: one window per ProfilerStep, GPU work by launching step", "[trace_windows]") {
  std::mt19937_64 rng(GENERATE(1u, 2u, 3u));
  std::lognormal_distribution<double> jitter(0.0, 0.05);
  failslow::name_table names;
  trace_builder b{names, {}};
  const std::int64_t step_ns = 10'000'000;
  std::map<std::pair<std::int64_t, std::string>, std::vector<double>> expected;  // (step, kernel) -> durations
  for (int s = 0; s < 4; ++s) {
    const std::int64_t h0 = 1'000'000 + s * step_ns;
    b.add(event_kind::annotation, "ProfilerStep#" + std::to_string(40 + s), h0, step_ns - 100'000);
    for (int k = 0; k < 30; ++k) {
      const std::string name = k % 3 == 0 ? "ampere_bf16_gemm" : "vectorized_elementwise_kernel";
      const auto dur = static_cast<std::int64_t>((k % 3 == 0 ? 200'000.0 : 20'000.0) * jitter(rng));
      // The GPU runs 9 ms behind the host: most of a step's kernels run during the next step.
      b.launch(name, h0 + 10'000 + k * 20'000, h0 + 9'000'000 + k * 25'000, dur);
      expected[{40 + s, name}].push_back(static_cast<double>(dur));
    }
  }
  b.add(event_kind::kernel, "orphan_kernel_without_launch", 500'000, 1'000);    // outside every step
  b.add(event_kind::kernel, "broken_kernel", 2'000'000, 0).end_ns = 1'000'000;  // end before start
  b.t.events.back().correlation = 1;                                            // launched in step 40, but malformed
  b.add(event_kind::cpu_op, "aten::mm", 1'200'000, 50'000);

  const auto steps = failslow::trace::map_steps(b.t, names);
  REQUIRE(steps.steps.size() == 4);
  std::vector<failslow::compress::window_summary> windows;
  std::vector<std::int64_t> window_of;
  const auto counts = failslow::compress::summarize_trace(
      b.t, steps, 7, {}, [&](failslow::compress::window_summary&& w) { windows.push_back(std::move(w)); }, &window_of);

  CHECK(counts.accounted());
  CHECK(counts.device_events == 4 * 30 + 2);
  CHECK(counts.compressed == 4 * 30);
  CHECK(counts.outside_steps == 1);
  CHECK(counts.skipped == 1);
  CHECK(counts.host_events == 4 + 4 * 30 + 1);
  CHECK(counts.host_events + counts.device_events == b.t.events.size());
  REQUIRE(counts.windows == 4);
  REQUIRE(windows.size() == 4);
  for (std::size_t w = 0; w < windows.size(); ++w) {
    const auto& ws = windows[w];
    CHECK(ws.rank == 7);
    CHECK(ws.window_id == 40 + w);  // the step number
    CHECK(ws.event_count() == 30);
    CHECK(ws.end_ns == steps.steps[w].gpu_end_ns);
    for (const auto& k : ws.kernels) {
      const auto& exact = expected.at({static_cast<std::int64_t>(ws.window_id), std::string(names.name(k.key))});
      CHECK(k.count == exact.size());
      double total = 0;
      for (double d : exact) total += d;
      CHECK(k.total_ns == Approx(total).epsilon(1e-12));
      // Tight unimodal jitter: the reconstruction is within a few percent.
      CHECK(failslow::compress::relative_w1(k, exact) < 0.05);
    }
  }
  CHECK(windows.front().skipped.invalid_duration == 1);  // the malformed event of step 40
  // window_of_event: each kernel's step number, -1 for host events and uncompressed activities.
  for (std::size_t i = 0; i < b.t.events.size(); ++i) {
    const auto& e = b.t.events[i];
    if (!failslow::is_device_activity(e.kind) || !e.is_well_formed() || steps.step_of_event[i] < 0)
      CHECK(window_of[i] == -1);
    else
      CHECK(window_of[i] == steps.steps[static_cast<std::size_t>(steps.step_of_event[i])].number);
  }
  // add_trace_fidelity: every listed (window, key) pair against the events put in that window.
  std::vector<std::pair<std::int64_t, const failslow::compress::window_summary*>> listed;
  std::vector<double> by_hand;
  for (const auto& w : windows) {
    listed.emplace_back(static_cast<std::int64_t>(w.window_id), &w);
    for (const auto& k : w.kernels)
      by_hand.push_back(failslow::compress::relative_w1(
          k, expected.at({static_cast<std::int64_t>(w.window_id), std::string(names.name(k.key))})));
  }
  failslow::compress::fidelity_figures fid;
  failslow::compress::add_trace_fidelity(fid, b.t, window_of, {listed.rbegin(), listed.rend()});  // any order
  CHECK(fid.pairs() == by_hand.size());
  CHECK(fid.zero_duration_pairs == 0);
  CHECK(fid.median() == Approx(failslow::stats::quantile(by_hand, 0.5)).epsilon(1e-12));
  CHECK(fid.p95() == Approx(failslow::stats::quantile(by_hand, 0.95)).epsilon(1e-12));
  failslow::compress::fidelity_figures part;
  failslow::compress::add_trace_fidelity(part, b.t, window_of, {listed.front()});  // other windows ignored
  CHECK(part.pairs() == windows.front().kernels.size());
  CHECK_THROWS_AS(failslow::compress::add_trace_fidelity(part, b.t, {}, listed), failslow::invalid_argument);

  // Windows of two steps (trace::group_steps): each holds its steps' kernels, numbered by its
  // first step, and a key's count is the sum of its steps'.
  std::vector<failslow::compress::window_summary> pairs;
  const auto two = failslow::compress::summarize_trace(
      b.t, failslow::trace::group_steps(steps, 2), 7, {},
      [&](failslow::compress::window_summary&& w) { pairs.push_back(std::move(w)); });
  CHECK(two.accounted());
  CHECK(two.compressed == counts.compressed);
  REQUIRE(pairs.size() == 2);
  for (std::size_t w = 0; w < 2; ++w) {
    CHECK(pairs[w].window_id == 40 + 2 * w);
    CHECK(pairs[w].event_count() == 60);
    CHECK(pairs[w].end_ns == steps.steps[2 * w + 1].gpu_end_ns);
    for (const auto& k : pairs[w].kernels) {
      const std::string name(names.name(k.key));
      const auto n = expected.at({static_cast<std::int64_t>(40 + 2 * w), name}).size() +
                     expected.at({static_cast<std::int64_t>(41 + 2 * w), name}).size();
      CHECK(k.count == n);
    }
  }
}

TEST_CASE("trace windows: without steps, time-bounded windows in start order", "[trace_windows]") {
  failslow::name_table names;
  trace_builder b{names, {}};
  // Events out of start order in the file, 100 us apart over 1 ms: three windows of 400 us.
  for (int i = 9; i >= 0; --i)
    b.add(event_kind::memcpy, "Memcpy DtoD (Device -> Device)", 1'000'000 + i * 100'000, 5'000 + i);
  failslow::compress::trace_window_options o;
  o.compressor.max_window_ns = 400'000;
  std::vector<failslow::compress::window_summary> windows;
  std::vector<std::int64_t> window_of;
  const auto steps = failslow::trace::map_steps(b.t, names);
  const auto counts = failslow::compress::summarize_trace(
      b.t, steps, 0, o, [&](failslow::compress::window_summary&& w) { windows.push_back(std::move(w)); }, &window_of);
  CHECK(counts.accounted());
  CHECK(counts.compressed == 10);
  REQUIRE(windows.size() == 3);
  CHECK(windows[0].event_count() == 4);
  CHECK(windows[1].event_count() == 4);
  CHECK(windows[2].event_count() == 2);
  for (std::size_t w = 0; w < 3; ++w) CHECK(windows[w].window_id == w);
  for (std::size_t i = 0; i < b.t.events.size(); ++i) {
    const auto slot = (b.t.events[i].start_ns - 1'000'000) / 400'000;
    CHECK(window_of[i] == slot);
  }

  SECTION("a trace without GPU work still gives one (empty) window") {
    failslow::io::trace_data host_only;
    host_only.events.push_back(b.t.events.front());
    host_only.events.front().kind = event_kind::cpu_op;
    windows.clear();
    const auto c = failslow::compress::summarize_trace(
        host_only, failslow::trace::map_steps(host_only, names), 0, {},
        [&](failslow::compress::window_summary&& w) { windows.push_back(std::move(w)); });
    CHECK(c.device_events == 0);
    CHECK(c.host_events == 1);
    REQUIRE(windows.size() == 1);
    CHECK(windows[0].kernels.empty());
  }
}

TEST_CASE("trace windows: several ranks through the codec", "[trace_windows]") {
  failslow::name_table names;
  failslow::compress::summary_encoder enc([&](name_id id) { return std::string(names.name(id)); });
  std::string bytes = enc.header();
  std::vector<failslow::compress::window_summary> all;
  std::mt19937_64 rng(11);
  std::lognormal_distribution<double> bimodal_low(std::log(30'000.0), 0.03), bimodal_high(std::log(90'000.0), 0.03);
  std::map<std::tuple<int, std::int64_t, name_id>, std::vector<double>> exact;
  for (int rank = 0; rank < 3; ++rank) {
    failslow::io::trace_data t;
    t.event_steps.clear();
    for (int s = 0; s < 20; ++s)
      for (int k = 0; k < 40; ++k) {
        event e;
        e.kind = event_kind::kernel;
        e.name = names.intern(k % 2 ? "flash_fwd_kernel" : "sm90_xmma_gemm_bf16");
        e.start_ns = s * 10'000'000LL + k * 100'000;
        e.end_ns = e.start_ns + static_cast<std::int64_t>(k % 4 < 2 ? bimodal_low(rng) : bimodal_high(rng));
        e.device = 0;
        t.events.push_back(e);
        t.event_steps.push_back(s);
        exact[{rank, s, e.name}].push_back(static_cast<double>(e.duration_ns()));
      }
    const auto c = failslow::compress::summarize_trace(t, failslow::trace::map_steps(t, names), rank, {},
                                                       [&](failslow::compress::window_summary&& w) {
                                                         enc.encode(w, bytes);
                                                         all.push_back(std::move(w));
                                                       });
    CHECK(c.windows == 20);
    CHECK(c.accounted());
  }
  const auto decoded = failslow::compress::decode_summaries(bytes);
  CHECK(decoded.damaged.empty());
  REQUIRE(decoded.windows.size() == all.size());
  for (const auto& w : decoded.windows)
    for (const auto& k : w.kernels) {
      const auto& x = exact.at({w.rank, static_cast<std::int64_t>(w.window_id), k.key});
      CHECK(k.count == x.size());
      CHECK(k.clusters.size() == 2);  // both kernels are bimodal, 30 us / 90 us
      CHECK(failslow::compress::relative_w1(k, x) < 0.03);
    }
}

TEST_CASE("relative_w1: exact for point masses, errors on bad input", "[trace_windows][fidelity]") {
  failslow::compress::kernel_summary k;
  k.count = 3;
  k.sampled = 3;
  std::vector<double> d{5000, 5000, 5000};
  k.clusters.push_back(failslow::stats::summarize_sorted(d.data(), d.size()));
  CHECK(failslow::compress::relative_w1(k, d) == Approx(0).margin(1e-12));
  CHECK(failslow::compress::relative_w1(k, {5500, 5500, 5500}) == Approx(500.0 / 5500).epsilon(1e-9));
  CHECK_THROWS_AS(failslow::compress::relative_w1(k, {}), failslow::invalid_argument);
  CHECK_THROWS_AS(failslow::compress::relative_w1(k, {0, 0}), failslow::domain_error);
  CHECK_THROWS_AS(failslow::compress::relative_w1(k, {1, NAN}), failslow::domain_error);
  CHECK_THROWS_AS(failslow::compress::relative_w1(k, d, 0), failslow::invalid_argument);
  failslow::compress::kernel_summary empty;
  CHECK_THROWS_AS(failslow::compress::relative_w1(empty, d), failslow::invalid_argument);
}

TEST_CASE("fidelity figures: zero-duration pairs counted, quantiles of the rest", "[trace_windows][fidelity]") {
  failslow::compress::kernel_summary k;
  k.count = 3;
  k.sampled = 3;
  std::vector<double> d{5000, 5000, 5000};
  k.clusters.push_back(failslow::stats::summarize_sorted(d.data(), d.size()));
  failslow::compress::fidelity_figures f;
  CHECK(std::isnan(f.median()));
  f.add(k, {0, 0});
  CHECK(f.zero_duration_pairs == 1);
  CHECK(f.relative_w1.empty());
  f.add(k, d);
  f.add(k, {5500, 5500, 5500});
  CHECK(f.pairs() == 3);
  CHECK(f.median() == Approx(0.5 * 500.0 / 5500).margin(1e-9));  // numpy's linear quantile of two values
  failslow::compress::fidelity_figures g;
  g.merge(f);
  g.merge(f);
  CHECK(g.pairs() == 6);
  CHECK(g.zero_duration_pairs == 2);
}

TEST_CASE("minimal Kineto JSON: the bytes printf writes for the event", "[trace_windows][baselines]") {
  const char* name = "void gemm<128>(float*)";
  for (std::int64_t start : {std::int64_t{0}, std::int64_t{999}, std::int64_t{1'700'000'000'123'456'789}}) {
    for (std::int64_t dur : {std::int64_t{0}, std::int64_t{1}, std::int64_t{25'004}}) {
      event e;
      e.start_ns = start;
      e.end_ns = start + dur;
      e.correlation = 4'000'000'000u;
      e.device = 7;
      e.stream = 13;
      char buf[512];
      const int n = std::snprintf(buf, sizeof buf,
                                  "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"pid\":%d,\"tid\":%u,\"ts\":%.3f,"
                                  "\"dur\":%.3f,\"args\":{\"device\":%d,\"stream\":%u,\"correlation\":%llu}},",
                                  name, 7, 13u, static_cast<double>(start) / 1e3, static_cast<double>(dur) / 1e3, 7,
                                  13u, 4'000'000'000ull);
      CHECK(failslow::compress::minimal_kineto_json_bytes(name, e) == static_cast<std::size_t>(n));
    }
  }
  CHECK(failslow::compress::record_bytes == 32);
}

TEST_CASE("trace windows: kernels keyed by name and launch shape", "[trace_windows][launch_shape]") {
  using failslow::kernel_base_name;
  using failslow::launch_shape_key;
  using failslow::launch_shape_of;
  const auto key = launch_shape_key("void gemm<float>(Params)", {128, 2, 1}, {256, 1, 1});
  CHECK(key == "void gemm<float>(Params) <<<128x2x1, 256x1x1>>>");
  CHECK(kernel_base_name(key) == "void gemm<float>(Params)");
  CHECK(launch_shape_of(key) == "128x2x1, 256x1x1");
  CHECK(kernel_base_name("plain_kernel") == "plain_kernel");
  CHECK(launch_shape_of("operator>>>") == "");
  CHECK(failslow::io::detail::format_kernel_name(key) == "gemm<float> <<<128x2x1, 256x1x1>>>");
  // Classification and routing see the name without its shape.
  const auto classifier = failslow::kernel_classifier::defaults();
  CHECK(classifier.classify(launch_shape_key("ncclDevKernel_AllReduce_Sum_f32_RING_LL", {4, 1, 1}, {512, 1, 1})) ==
        classifier.classify("ncclDevKernel_AllReduce_Sum_f32_RING_LL"));

  // One GEMM launched with two shapes: 100 us at one, 400 us at the other. Step 2 launches more of
  // the large shape: by name its distribution moves, by name and shape neither key does.
  std::mt19937_64 rng(GENERATE(7u, 8u));
  std::lognormal_distribution<double> jitter(0.0, 0.03);
  failslow::name_table names;
  trace_builder b{names, {}};
  const std::int64_t step_ns = 20'000'000;
  for (int s = 0; s < 4; ++s) {
    const std::int64_t h0 = 1'000'000 + s * step_ns;
    b.add(event_kind::annotation, "ProfilerStep#" + std::to_string(s), h0, step_ns - 100'000);
    const int large = s == 2 ? 24 : 8;
    for (int k = 0; k < 32; ++k) {
      const bool big = k < large;
      const auto dur = static_cast<std::int64_t>((big ? 400'000.0 : 100'000.0) * jitter(rng));
      b.launch("sm90_gemm", h0 + 10'000 + k * 20'000, h0 + 1'000'000 + k * 500'000, dur);
      b.t.launches.push_back({static_cast<std::uint32_t>(b.t.events.size() - 1),
                              big ? std::array<std::uint32_t, 3>{132, 1, 1} : std::array<std::uint32_t, 3>{66, 1, 1},
                              {384, 1, 1}});
    }
    b.launch("ncclDevKernel_AllReduce", h0 + 900'000, h0 + 17'000'000, 300'000, event_kind::collective);
    b.t.launches.push_back({static_cast<std::uint32_t>(b.t.events.size() - 1), {4, 1, 1}, {512, 1, 1}});
  }
  const auto steps = failslow::trace::map_steps(b.t, names);
  REQUIRE(steps.steps.size() == 4);
  const auto keys = failslow::compress::launch_shape_keys(b.t, names);
  REQUIRE(keys.size() == b.t.events.size());
  const auto small = names.find("sm90_gemm <<<66x1x1, 384x1x1>>>"),
             large = names.find("sm90_gemm <<<132x1x1, 384x1x1>>>");
  REQUIRE(small);
  REQUIRE(large);
  CHECK(!names.find("ncclDevKernel_AllReduce <<<4x1x1, 512x1x1>>>"));  // collectives keep their name
  for (const bool by_shape : {false, true}) {
    failslow::compress::trace_window_options wo;
    if (by_shape) wo.keys = &keys;
    std::vector<failslow::compress::window_summary> windows;
    std::vector<std::int64_t> window_of;
    const auto counts = failslow::compress::summarize_trace(
        b.t, steps, 0, wo, [&](failslow::compress::window_summary&& w) { windows.push_back(std::move(w)); },
        &window_of);
    CHECK(counts.accounted());
    REQUIRE(windows.size() == 4);
    std::vector<std::pair<std::int64_t, const failslow::compress::window_summary*>> list;
    for (const auto& w : windows) list.emplace_back(static_cast<std::int64_t>(w.window_id), &w);
    failslow::compress::fidelity_figures fid;
    failslow::compress::add_trace_fidelity(fid, b.t, window_of, list, by_shape ? &keys : nullptr);
    CHECK(fid.quantile(1.0) < 0.05);
    const auto gemm = names.find("sm90_gemm");
    if (!by_shape) {
      // The mix: step 2's mean per launch 1.6x step 1's although no launch got slower.
      const auto* k1 = windows[1].find(*gemm);
      const auto* k2 = windows[2].find(*gemm);
      REQUIRE(k1);
      REQUIRE(k2);
      CHECK((k2->total_ns / static_cast<double>(k2->count)) / (k1->total_ns / static_cast<double>(k1->count)) > 1.5);
      continue;
    }
    CHECK(!windows[1].find(*gemm));
    for (const auto id : {*small, *large}) {
      const auto* k1 = windows[1].find(id);
      const auto* k2 = windows[2].find(id);
      REQUIRE(k1);
      REQUIRE(k2);
      CHECK((k2->total_ns / static_cast<double>(k2->count)) / (k1->total_ns / static_cast<double>(k1->count)) ==
            Approx(1.0).epsilon(0.05));
    }
  }
  std::vector<name_id> wrong(3);
  failslow::compress::trace_window_options bad;
  bad.keys = &wrong;
  CHECK_THROWS_AS(failslow::compress::summarize_trace(b.t, steps, 0, bad, [](failslow::compress::window_summary&&) {}),
                  failslow::invalid_argument);
}
