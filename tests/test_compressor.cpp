#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <failslow/compress/merge.hpp>
#include <failslow/compress/window_compressor.hpp>
#include <limits>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <vector>

using namespace failslow;
using namespace failslow::compress;

namespace {
struct collector {
  std::vector<window_summary> windows;
  window_sink sink() {
    return [this](window_summary&& w) { windows.push_back(std::move(w)); };
  }
};

std::int64_t lognormal_ns(std::mt19937_64& rng, double median, double sigma) {
  std::normal_distribution<double> z(0, 1);
  return static_cast<std::int64_t>(std::llround(median * std::exp(sigma * z(rng))));
}
}  // namespace

TEST_CASE("every event is added or counted, counts and totals are exact") {
  collector out;
  window_compressor c(3, out.sink());
  std::mt19937_64 rng(1);
  std::uint64_t offered = 0;
  double total_key0 = 0;
  std::int64_t t = 0;
  for (int i = 0; i < 5000; ++i) {
    const auto d = lognormal_ns(rng, i % 3 ? 20e3 : 60e3, 0.03);
    total_key0 += static_cast<double>(d);
    c.add(0, t, d);
    c.add(1, t, lognormal_ns(rng, 5e3, 0.1));
    t += 100000;
    offered += 2;
  }
  c.add(2, 10, -5);                // negative duration
  c.add(name_id{1} << 30, 10, 5);  // key past the limit
  event bad{};
  bad.start_ns = 100;
  bad.end_ns = 50;
  c.add(bad);  // end before start
  offered += 3;
  c.close_window(t);
  REQUIRE(out.windows.size() == 1);
  const auto& w = out.windows[0];
  CHECK(w.rank == 3);
  CHECK(w.window_id == 0);
  CHECK(w.event_count() + w.skipped.total() == offered);
  CHECK(w.skipped.invalid_duration == 2);
  CHECK(w.skipped.invalid_key == 1);
  REQUIRE(w.kernels.size() == 2);
  CHECK(w.kernels[0].count == 5000);
  CHECK(w.kernels[0].total_ns == total_key0);
  // Key 0 is bimodal (20 us twice as often as 60 us): two clusters with the right weights.
  REQUIRE(w.kernels[0].clusters.size() == 2);
  CHECK(w.kernels[0].sampled == 4096);  // the default cap: a reservoir of 4096 stands for 5000
  CHECK(w.kernels[0].clusters[0].count + w.kernels[0].clusters[1].count == 4096);
  CHECK(static_cast<double>(w.kernels[0].clusters[0].count) == Approx(4096 * 2.0 / 3.0).margin(120));
  CHECK(w.kernels[0].clusters[0].p50 == Approx(20e3).epsilon(0.01));
  CHECK(w.kernels[0].clusters[1].p50 == Approx(60e3).epsilon(0.01));
  CHECK(w.kernels[1].clusters.size() == 1);
  CHECK(w.start_ns == 0);
  CHECK(w.end_ns == t);
}

TEST_CASE("past the cap a uniform reservoir stands for the key") {
  compressor_config cfg;
  cfg.per_key_cap = 200;
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    cfg.seed = seed;
    collector out;
    window_compressor c(0, out.sink(), cfg);
    std::mt19937_64 rng(seed);
    // The first half of the window runs at 10 us, the second at 30 us: keeping the first
    // `cap` values would see only the fast half.
    for (int i = 0; i < 20000; ++i) c.add(7, i * 1000, lognormal_ns(rng, i < 10000 ? 10e3 : 30e3, 0.02));
    c.close_window();
    const auto& k = out.windows[0].kernels.at(0);
    CHECK(k.count == 20000);
    CHECK(k.sampled == 200);
    CHECK(out.windows[0].subsampled == 19800);
    REQUIRE(k.clusters.size() == 2);
    const double fast_share = static_cast<double>(k.clusters[0].count) / 200.0;
    INFO("seed " << seed << ": fast share " << fast_share);
    CHECK(fast_share == Approx(0.5).margin(0.15));
  }
}

TEST_CASE("windows close on step markers and on a time bound") {
  collector out;
  compressor_config cfg;
  cfg.max_window_ns = 1'000'000;
  window_compressor c(1, out.sink(), cfg);
  for (int i = 0; i < 35; ++i) c.add(0, i * 100'000, 5'000);  // 3.5 ms of events
  c.close_window(3'500'000);
  REQUIRE(out.windows.size() == 4);
  for (std::size_t i = 0; i < 3; ++i) CHECK(out.windows[i].kernels.at(0).count == 10);
  CHECK(out.windows[3].kernels.at(0).count == 5);
  for (std::size_t i = 0; i < 4; ++i) CHECK(out.windows[i].window_id == i);
  CHECK(c.windows_closed() == 4);
  // An empty window is still emitted (a step without kernels is information).
  c.close_window(4'000'000);
  CHECK(out.windows.back().kernels.empty());
}

namespace {
struct allocation_stats {
  std::size_t live = 0, peak = 0, calls = 0;
};
template <class T>
struct counting_allocator {
  using value_type = T;
  std::shared_ptr<allocation_stats> stats;
  explicit counting_allocator(std::shared_ptr<allocation_stats> s) : stats(std::move(s)) {}
  template <class U>
  counting_allocator(const counting_allocator<U>& o) noexcept : stats(o.stats) {}
  T* allocate(std::size_t n) {
    stats->live += n * sizeof(T);
    stats->peak = std::max(stats->peak, stats->live);
    ++stats->calls;
    return std::allocator<T>{}.allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    stats->live -= n * sizeof(T);
    std::allocator<T>{}.deallocate(p, n);
  }
  template <class U>
  bool operator==(const counting_allocator<U>& o) const noexcept {
    return stats == o.stats;
  }
  template <class U>
  bool operator!=(const counting_allocator<U>& o) const noexcept {
    return stats != o.stats;
  }
};
}  // namespace

TEST_CASE("memory stays flat over a million windows") {
  auto stats = std::make_shared<allocation_stats>();
  std::uint64_t windows = 0;
  basic_window_compressor<counting_allocator<char>> c(
      0, [&](window_summary&&) { ++windows; }, compressor_config{}, counting_allocator<char>(stats));
  std::mt19937_64 rng(5);
  auto one_window = [&](std::int64_t w, int only_key = -1) {
    // A varying number of events and keys per window, up to 40 events of 4 keys. The draws are
    // sequenced: argument evaluation order differs between compilers, and so would the data.
    const int events = only_key >= 0 ? 40 : 1 + static_cast<int>(rng() % 40);
    for (int e = 0; e < events; ++e) {
      const auto key = static_cast<name_id>(only_key >= 0 ? only_key : static_cast<int>(rng() % 4));
      const auto duration = 100 + static_cast<std::int64_t>(rng() % 50);
      c.add(key, w * 1000 + e, duration);
    }
    c.close_window(w * 1000 + 999);
  };
  // Buffers reach their working size: random windows, then the largest ones the data can make
  // (40 events of one key), which random draws reach only rarely.
  for (std::int64_t w = 0; w < 1000; ++w) one_window(w);
  for (int k = 0; k < 4; ++k) one_window(1000 + k, k);
  for (std::int64_t w = 1004; w < 2000; ++w) one_window(w);
  const std::size_t live = stats->live, peak = stats->peak, calls = stats->calls;
  for (std::int64_t w = 2000; w < 1'000'000; ++w) one_window(w);
  CHECK(windows == 1'000'000);
  CHECK(stats->live == live);
  CHECK(stats->peak == peak);
  CHECK(stats->calls == calls);  // no allocation at all in steady state
}

TEST_CASE("the async compressor gives the same summaries off the producer thread") {
  collector sync_out;
  std::vector<window_summary> async_windows;
  std::mutex m;
  {
    window_compressor s(2, sync_out.sink());
    async_window_compressor a(2, [&](window_summary&& w) {
      std::lock_guard<std::mutex> lock(m);
      async_windows.push_back(std::move(w));
    });
    std::mt19937_64 rng(9);
    for (int w = 0; w < 50; ++w) {
      for (int e = 0; e < 500; ++e) {
        const auto key = static_cast<name_id>(rng() % 7);
        const auto d = lognormal_ns(rng, 1e4 * (1 + key), 0.05);
        s.add(key, w * 1'000'000 + e, d);
        a.add(key, w * 1'000'000 + e, d);
      }
      s.close_window();
      a.close_window();
    }
    a.flush();
    CHECK(a.pending_events() == 0);
  }
  REQUIRE(async_windows.size() == sync_out.windows.size());
  for (std::size_t i = 0; i < async_windows.size(); ++i) {
    const auto &x = async_windows[i], &y = sync_out.windows[i];
    CHECK(x.window_id == y.window_id);
    REQUIRE(x.kernels.size() == y.kernels.size());
    for (std::size_t k = 0; k < x.kernels.size(); ++k) {
      CHECK(x.kernels[k].count == y.kernels[k].count);
      CHECK(x.kernels[k].total_ns == y.kernels[k].total_ns);
      REQUIRE(x.kernels[k].clusters.size() == y.kernels[k].clusters.size());
      CHECK(x.kernels[k].clusters[0].p99 == y.kernels[k].clusters[0].p99);
    }
  }
}

TEST_CASE("sink failures reach the caller") {
  window_compressor c(0, [](window_summary&&) { throw std::runtime_error("disk full"); });
  c.add(0, 0, 10);
  CHECK_THROWS_WITH(c.close_window(), "disk full");
  async_window_compressor a(0, [](window_summary&&) { throw std::runtime_error("disk full"); });
  a.add(0, 0, 10);
  a.close_window();
  CHECK_THROWS_WITH(a.flush(), "disk full");
  compressor_config zero;
  zero.per_key_cap = 0;
  CHECK_THROWS_AS(window_compressor(
                      0, [](window_summary&&) {}, zero),
                  invalid_argument);
  CHECK_THROWS_AS(window_compressor(0, window_sink{}), invalid_argument);
}

TEST_CASE("merging windows of a rank and ranks of a group") {
  collector out;
  window_compressor c(4, out.sink());
  std::mt19937_64 rng(3);
  for (int w = 0; w < 4; ++w) {
    for (int e = 0; e < 3000; ++e) c.add(0, w * 10'000'000 + e * 1000, lognormal_ns(rng, e % 4 ? 20e3 : 45e3, 0.03));
    c.close_window();
  }
  const window_summary merged = merge_windows(out.windows);
  CHECK(merged.rank == 4);
  const auto& k = merged.kernels.at(0);
  CHECK(k.count == 12000);
  double total = 0;
  for (const auto& w : out.windows) total += w.kernels[0].total_ns;
  CHECK(k.total_ns == total);
  REQUIRE(k.clusters.size() == 2);  // the 20 us clusters of the four windows overlap: one
  CHECK(k.clusters[0].count + k.clusters[1].count == 12000);
  CHECK(k.clusters[0].p50 == Approx(20e3).epsilon(0.01));
  CHECK(k.clusters[1].p50 == Approx(45e3).epsilon(0.01));
  // Pooled moments are exact.
  double sum = 0;
  for (const auto& w : out.windows) sum += w.kernels[0].clusters[0].sum;
  CHECK(k.clusters[0].sum == Approx(sum).epsilon(1e-12));
  auto other = out.windows;
  for (auto& w : other) w.rank = 5;
  other.insert(other.end(), out.windows.begin(), out.windows.end());
  CHECK(merge_windows(other).rank == -1);
  CHECK_THROWS_AS(merge_windows({}), invalid_argument);
}

TEST_CASE("the compressor's radix sort of durations equals std::sort", "[compressor][sort]") {
  std::mt19937_64 rng(GENERATE(1u, 2u, 3u));
  std::vector<double> scratch;
  for (std::size_t n : {0u, 1u, 5u, 63u, 64u, 65u, 100u, 1000u, 4096u, 20000u}) {
    std::lognormal_distribution<double> body(std::log(40e3), 0.3);
    std::uniform_int_distribution<int> pick(0, 9);
    std::vector<double> x;
    for (std::size_t i = 0; i < n; ++i) {
      const int p = pick(rng);
      x.push_back(p == 0   ? 0.0                                  // zero-length events
                  : p == 1 ? std::round(body(rng) / 1000) * 1000  // microsecond ties
                  : p == 2 ? std::numeric_limits<double>::denorm_min()
                  : p == 3 ? 1e15  // a huge outlier
                           : body(rng));
    }
    auto expected = x;
    std::sort(expected.begin(), expected.end());
    failslow::stats::detail::sort_nonnegative(x.data(), x.size(), scratch);
    CHECK(x == expected);
  }
  // Negative values and NaN go to std::sort; NaNs sort last.
  std::vector<double> mixed(200);
  for (std::size_t i = 0; i < mixed.size(); ++i) mixed[i] = static_cast<double>(i % 7) - 3.0;
  auto expected = mixed;
  std::sort(expected.begin(), expected.end());
  failslow::stats::detail::sort_nonnegative(mixed.data(), mixed.size(), scratch);
  CHECK(mixed == expected);
  mixed[17] = std::nan("");
  mixed[150] = std::nan("");
  failslow::stats::detail::sort_nonnegative(mixed.data(), mixed.size(), scratch);
  CHECK(std::isnan(mixed[198]));
  CHECK(std::isnan(mixed[199]));
  CHECK(std::is_sorted(mixed.begin(), mixed.begin() + 198));
  // -0.0 is >= 0, but its sign bit would put it after every positive value in the radix order.
  std::vector<double> signed_zero(100);
  for (std::size_t i = 0; i < signed_zero.size(); ++i) signed_zero[i] = static_cast<double>((i * 37) % 100);
  signed_zero[42] = -0.0;
  failslow::stats::detail::sort_nonnegative(signed_zero.data(), signed_zero.size(), scratch);
  CHECK(std::is_sorted(signed_zero.begin(), signed_zero.end()));
  CHECK(signed_zero.back() == 99.0);
}

TEST_CASE("launch calls give each window its host's pace: the exact median interval, calls out of order counted",
          "[compressor][launch]") {
  for (const bool async : {false, true}) {
    collector out;
    std::mutex m;
    const window_sink sink = [&](window_summary&& w) {
      std::lock_guard<std::mutex> lock(m);
      out.windows.push_back(std::move(w));
    };
    compressor_config cfg;
    cfg.per_key_cap = 64;  // past it, the intervals are a uniform sample
    std::unique_ptr<window_compressor> s;
    std::unique_ptr<async_window_compressor> a;
    if (async)
      a = std::make_unique<async_window_compressor>(1, sink, cfg);
    else
      s = std::make_unique<window_compressor>(1, sink, cfg);
    auto launch = [&](std::int64_t t) { return async ? a->add_launch(t) : s->add_launch(t); };
    auto add = [&](std::int64_t t) { return async ? a->add(0, t, 1000) : s->add(0, t, 1000); };
    auto close = [&] { async ? a->close_window() : s->close_window(); };
    // Window 0: launches at 0, 10, 30, 60 us (intervals 10, 20, 30: median 20 us), one call
    // before the previous one (counted), a kernel.
    for (std::int64_t t : {0, 10'000, 30'000, 60'000}) CHECK(launch(t));
    CHECK_FALSE(launch(50'000));
    add(5'000);
    close();
    // Window 1: 4 intervals (even: the mean of the middle two), no kernel.
    for (std::int64_t t : {100'000, 101'000, 104'000, 110'000, 111'000}) CHECK(launch(t));
    close();
    // Window 2: a kernel, no launch calls (not measured).
    add(200'000);
    close();
    // Window 3: 1001 launches 5 us apart but every 10th 50 us: past the cap, the median of
    // the sample is still 5 us.
    std::int64_t t = 300'000;
    for (int i = 0; i < 1001; ++i) {
      t += i % 10 == 9 ? 50'000 : 5'000;
      launch(t);
    }
    close();
    if (async) a->flush();
    REQUIRE(out.windows.size() == 4);
    const auto& w = out.windows;
    CHECK(w[0].launch.launches == 4);
    CHECK(w[0].launch.median_interval_ns == 20'000);
    CHECK(w[0].skipped.invalid_duration == 1);
    CHECK(w[0].event_count() + w[0].launch.launches + w[0].skipped.total() == 6);  // everything offered
    CHECK(w[1].launch.launches == 5);
    CHECK(w[1].launch.median_interval_ns == 2'000);  // intervals 1, 3, 6, 1 us
    CHECK(w[1].event_count() == 0);
    CHECK(w[2].launch.launches == 0);
    CHECK_FALSE(w[2].launch.measured());
    CHECK(w[3].launch.launches == 1001);
    CHECK(w[3].launch.median_interval_ns == 5'000);
  }
  // A time-bounded window opens at its first kernel: launch calls before it do not close it.
  collector timed;
  compressor_config bounded;
  bounded.max_window_ns = 1'000'000;
  window_compressor tc(0, timed.sink(), bounded);
  CHECK(tc.add_launch(5'000'000));
  CHECK(tc.add_launch(5'010'000));
  CHECK(tc.add(0, 5'020'000, 1000));
  CHECK(tc.add(0, 5'500'000, 1000));
  CHECK(timed.windows.empty());
  CHECK(tc.add(0, 6'100'000, 1000));  // past the bound: the first window closes
  REQUIRE(timed.windows.size() == 1);
  CHECK(timed.windows[0].event_count() == 2);
  CHECK(timed.windows[0].launch.launches == 2);
  // Merged windows: the counts add, the median is the interval-weighted median of the medians.
  window_summary a, b, c;
  a.launch = {101, 10e3};
  b.launch = {301, 20e3};
  c.launch = {0, 0};
  const auto merged = merge_windows({a, b, c});
  CHECK(merged.launch.launches == 402);
  CHECK(merged.launch.median_interval_ns == 20e3);
}
