// failslow/compress/window_compressor.hpp -- always-on, per-rank compression of kernel events
// into per-window statistical summaries (ARGUS section 3.4).
//
// Synopsis
//   basic_window_compressor<Allocator>: one per rank. The hot path add(key, start, duration)
//   appends a duration to the key's buffer and updates its exact count and total; a window
//   closes on a step marker (close_window) or, with max_window_ns set, when an event starts
//   past the window's time bound. Closing clusters each key's durations at the valleys of
//   their density (stats/valleys.hpp, log space) and hands a window_summary to the sink.
//   add_launch(start) records a host kernel launch call: the window's launch count and the
//   median time between its consecutive calls (window_summary::launch, the host's pace).
//   basic_async_window_compressor does the same with the clustering on a worker thread: the
//   producer only swaps two buffer sets at a window close.
// Memory is bounded and does not grow with the number of windows: buffers are reused (cleared,
//   capacity kept); per key and window at most `per_key_cap` durations are kept. Past the cap,
//   a uniform reservoir sample (Vitter's algorithm R) of `per_key_cap` durations stands for
//   the key: its count and total stay exact, its clusters and quantiles come from the sample,
//   and window_summary::subsampled counts the events represented only through the sample.
//   Keys are dense name ids (core/name_table.hpp); ids at or above `key_limit` are counted
//   as invalid_key, which bounds the slot table.
// Accounting: every add() either adds the event or counts it in skip_counts (invalid_duration,
//   invalid_key), every add_launch() likewise (invalid_duration: a call before the window's
//   previous one); event_count() + launch.launches + skipped.total() = everything offered.
// Thread model: a compressor is used by one producer thread (not synchronised). The async
//   variant's sink runs on its worker thread; its producer blocks in close_window() only
//   while the worker is still summarising the previous window, i.e. at most one window's
//   clustering time (measured in bench/README.md), and never in add().
// Complexity: add O(1) amortised (O(1) worst case once buffers have grown); a window close
//   O(sum over keys of n_k + G), n_k <= per_key_cap, G the KDE grid (64..4096 points): keys of
//   64 or more durations are radix-sorted (stats/detail/radix_sort.hpp), smaller ones std::sort.
// Errors: a zero per_key_cap or key_limit throws failslow::invalid_argument; exceptions of the
//   sink propagate out of close_window (async: out of the next close_window or flush).
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "failslow/compress/window_summary.hpp"
#include "failslow/core/compile_mode.hpp"
#include "failslow/core/detail/splitmix.hpp"
#include "failslow/core/error.hpp"
#include "failslow/core/event.hpp"
#include "failslow/stats/descriptive.hpp"
#include "failslow/stats/detail/radix_sort.hpp"
#include "failslow/stats/quantile_grid.hpp"
#include "failslow/stats/summary.hpp"
#include "failslow/stats/valleys.hpp"

namespace failslow::compress {

struct compressor_config {
  std::size_t per_key_cap = 4096;              ///< durations kept per key and window
  std::size_t min_samples_to_cluster = 2;      ///< fewer durations: one cluster, no KDE
  std::int64_t max_window_ns = 0;              ///< time bound of a window; 0 = step markers only
  name_id key_limit = name_id{1} << 24;        ///< keys >= this are counted as invalid_key
  std::uint64_t seed = 0x9E3779B97F4A7C15ull;  ///< reservoir sampling
  stats::valley_options clustering = default_clustering();
  /// With the default clustering (min_fraction 0), a cluster under this fraction of a key's
  /// durations is kept only when far from its neighbour (a log gap of max(ln 1.5, half the
  /// neighbour's log range)), else merged into it; a clustering with min_fraction > 0 decides
  /// by mass alone.
  static constexpr double small_cluster_fraction = 0.01;
  /// A key of at most this many launches (none subsampled) keeps its durations (values form):
  /// exact, and at the codec's precision no larger than its clusters. 0: never.
  std::size_t exact_up_to = 16;
  /// A key whose clusters rebuild it worse than this (W1 / mean, measured on 32 quantiles of
  /// the retained durations) keeps knots too (window_summary.hpp), when they do better. Past 1
  /// it never does. 3 %: the battery of tests/test_summary_fidelity.cpp keeps its p95 under
  /// 2.5 %; 2 % gives it 1.9 % for 27 % more bytes on bench_compress's steps (bench/README.md).
  double knots_above_w1 = 0.03;

  /// Valley clustering with a grid that starts at 64 points and widens only as the bandwidth
  /// needs (most keys are unimodal and narrow), in log space. Unlike the statistics core's
  /// defaults, a cluster may hold a single duration of any mass (min_count 1, min_fraction 0:
  /// a slow tail of 1 % of launches, the shape an intermittent fail-slow takes, is a cluster of
  /// its own, not merged into the body, as soon as the valley before it is deep), the
  /// bandwidth is the robust rule of thumb and a valley must be 30 % deep (core: 20 %): real
  /// traces reuse one kernel name for several tensor shapes, so a window's key is often a few
  /// modes of a few samples each, or a body with one far outlier, which one lognormal from p50
  /// and p99 cannot describe. Measured in bench/README.md (real traces: median W1/mean 6.2 % with
  /// the core defaults, 0.0 % with these; p95 62.9 % and 44.9 %).
  FAILSLOW_FUNC static stats::valley_options default_clustering();
};

using window_sink = std::function<void(window_summary&&)>;

namespace detail {

// One window's accumulation state; reused across windows.
template <class Allocator>
class window_buffer {
  using alloc_traits = std::allocator_traits<Allocator>;
  template <class T>
  using vec = std::vector<T, typename alloc_traits::template rebind_alloc<T>>;

  struct slot {
    std::uint64_t count = 0;
    double total = 0;
    std::uint64_t epoch = 0;  // window in which the slot was last touched
    vec<double> samples;
    explicit slot(const Allocator& a) : samples(a) {}
  };

 public:
  // Keeps copies of the limits it needs (no pointer back into its owner: owners may move).
  window_buffer(const compressor_config& cfg, const Allocator& alloc, std::uint64_t seed)
      : cap_(cfg.per_key_cap),
        key_limit_(cfg.key_limit),
        alloc_(alloc),
        slots_(alloc),
        active_(alloc),
        scratch_(alloc),
        intervals_(alloc),
        rng_(seed) {}

  bool add(name_id key, std::int64_t start_ns, std::int64_t duration_ns) {
    if (duration_ns < 0 || start_ns < 0 || duration_ns > std::numeric_limits<std::int64_t>::max() - start_ns) {
      ++skipped_.invalid_duration;
      return false;
    }
    if (key >= key_limit_) {
      ++skipped_.invalid_key;
      return false;
    }
    if (key >= slots_.size()) {
      slots_.reserve(std::max<std::size_t>(key + 1, slots_.size() * 2));
      while (slots_.size() <= key) slots_.emplace_back(alloc_);
    }
    slot& s = slots_[key];
    if (s.epoch != epoch_) {  // first event of this key in the window
      s.epoch = epoch_;
      s.count = 0;
      s.total = 0;
      s.samples.clear();
      active_.push_back(key);
    }
    const auto d = static_cast<double>(duration_ns);
    ++s.count;
    s.total += d;
    if (!keep_sample(s.samples, s.count, d)) ++subsampled_;
    if (events_ == 0 || start_ns < start_) start_ = start_ns;
    end_ = std::max(end_, start_ns + duration_ns);
    ++events_;
    return true;
  }

  // A host launch call at start_ns: its interval from the window's previous one is kept (a
  // reservoir of cap_ beyond that); a call before the previous one is counted as skipped.
  bool add_launch(std::int64_t start_ns) {
    if (start_ns < 0 || (launches_ > 0 && start_ns < last_launch_)) {
      ++skipped_.invalid_duration;
      return false;
    }
    if (launches_++ > 0) keep_sample(intervals_, ++intervals_seen_, static_cast<double>(start_ns - last_launch_));
    last_launch_ = start_ns;
    return true;
  }

  std::int64_t start() const noexcept { return start_; }
  std::uint64_t events() const noexcept { return events_; }

  // Summarises the window into `out` and resets the buffer for the next one.
  void summarize(window_summary& out, const compressor_config& cfg) {
    out.start_ns = start_;
    out.end_ns = std::max(end_, out.end_ns);
    out.skipped = skipped_;
    out.subsampled = subsampled_;
    out.launch = {launches_, intervals_.empty() ? 0.0 : stats::detail::median_inplace(intervals_)};
    intervals_.clear();
    launches_ = intervals_seen_ = 0;
    last_launch_ = 0;
    std::sort(active_.begin(), active_.end());
    out.kernels.reserve(active_.size());
    for (name_id key : active_) out.kernels.push_back(summarize_key(key, slots_[key], cfg, scratch_));
    active_.clear();
    skipped_ = {};
    subsampled_ = 0;
    events_ = 0;
    start_ = end_ = 0;
    ++epoch_;
  }

  skip_counts& skipped() noexcept { return skipped_; }

 private:
  // The `seen`-th value of a stream into `kept`: all of them up to cap_, then a uniform reservoir
  // (Vitter's algorithm R: kept with probability cap / seen). False once past the cap.
  bool keep_sample(vec<double>& kept, std::uint64_t seen, double x) {
    if (kept.size() < cap_) {
      kept.push_back(x);
      return true;
    }
    const auto j = static_cast<std::uint64_t>(uniform01() * static_cast<double>(seen));
    if (j < kept.size()) kept[j] = x;
    return false;
  }

  static kernel_summary summarize_key(name_id key, slot& s, const compressor_config& cfg, vec<double>& scratch) {
    kernel_summary k;
    k.key = key;
    k.count = s.count;
    k.total_ns = s.total;
    k.sampled = s.samples.size();
    stats::detail::sort_nonnegative(s.samples.data(), s.samples.size(), scratch);  // durations are >= 0
    const double* x = s.samples.data();
    const std::size_t n = s.samples.size();
    std::vector<double> boundaries;
    if (n >= cfg.min_samples_to_cluster && x[0] < x[n - 1]) {
      stats::valley_options clustering = cfg.clustering;
      clustering.kde.sorted_input = true;
      boundaries = stats::find_valleys(s.samples.begin(), s.samples.end(), clustering).boundaries;
    }
    std::vector<std::size_t> ends;  // of the clusters' slices of x, ascending
    std::size_t begin = 0;
    for (std::size_t c = 0; c <= boundaries.size(); ++c) {
      const std::size_t end =
          c < boundaries.size() ? static_cast<std::size_t>(std::lower_bound(x + begin, x + n, boundaries[c]) - x) : n;
      if (end > begin) ends.push_back(end);
      begin = std::max(begin, end);
    }
    keep_far_small_clusters(x, n, cfg.clustering.min_fraction > 0 ? 0.0 : compressor_config::small_cluster_fraction,
                            ends);
    begin = 0;
    for (std::size_t end : ends) {
      k.clusters.push_back(stats::summarize_sorted(x + begin, end - begin));
      begin = end;
    }
    if (n == k.count && n <= cfg.exact_up_to) {
      k.values.assign(x, x + n);
    } else if (cfg.knots_above_w1 < 1 && n > 2 && x[0] < x[n - 1]) {
      keep_knots_if_better(k, x, n, cfg.knots_above_w1);
    }
    return k;
  }

  // A cluster under `fraction` of the key's durations stays only when it is far from its
  // neighbour: a log gap of at least max(ln 1.5, half the neighbour's log range). A rare slow
  // tail at 5x is; the extreme launches of one lognormal are not (they merge back).
  static void keep_far_small_clusters(const double* x, std::size_t n, double fraction, std::vector<std::size_t>& ends) {
    auto first = [&](std::size_t c) { return c == 0 ? std::size_t{0} : ends[c - 1]; };
    auto log_gap = [&](std::size_t lower) {  // between cluster lower and lower + 1
      const double a = x[ends[lower] - 1], b = x[ends[lower]];
      return a > 0 ? std::log(b / a) : std::numeric_limits<double>::infinity();
    };
    auto log_range = [&](std::size_t c) {
      const double a = x[first(c)], b = x[ends[c] - 1];
      return a > 0 ? std::log(b / a) : std::numeric_limits<double>::infinity();
    };
    for (std::size_t c = 0; c < ends.size() && ends.size() > 1;) {
      const std::size_t size = ends[c] - first(c);
      if (static_cast<double>(size) >= fraction * static_cast<double>(n)) {
        ++c;
        continue;
      }
      // The nearer neighbour in log space; merge when the gap to it is small.
      const bool has_left = c > 0, has_right = c + 1 < ends.size();
      const bool left = has_left && (!has_right || log_gap(c - 1) <= log_gap(c));
      const std::size_t neighbour = left ? c - 1 : c + 1;
      const double gap = left ? log_gap(c - 1) : log_gap(c);
      if (gap >= std::max(std::log(1.5), 0.5 * log_range(neighbour))) {
        ++c;
        continue;
      }
      ends.erase(ends.begin() + static_cast<std::ptrdiff_t>(left ? c - 1 : c));  // join the two slices
      c = left ? c - 1 : c;
    }
  }

  // The clusters' fit against the sorted durations x[0..n) on 32 quantiles; knots instead when
  // it is above `limit` and they fit better.
  static void keep_knots_if_better(kernel_summary& k, const double* x, std::size_t n, double limit) {
    constexpr std::size_t m = 32;
    thread_local const stats::quantile_grid grid(m);
    double exact[m], rebuilt[m], mean = 0;
    for (std::size_t i = 0; i < m; ++i) exact[i] = stats::quantile_sorted(x, n, grid.u()[i]);
    for (const auto& c : k.clusters) mean += c.sum;
    mean /= static_cast<double>(n);
    auto misfit = [&] {
      stats::quantile_vector(k.distribution(), grid, rebuilt);
      double w = 0;
      for (std::size_t i = 0; i < m; ++i) w += std::abs(rebuilt[i] - exact[i]);
      return w / static_cast<double>(m) / mean;
    };
    const double clusters = misfit();
    if (!(clusters > limit)) return;
    const std::size_t top = std::min(top_values_limit, n / 10), rest = n - top;
    k.values.assign(x + rest, x + n);
    for (double p : knot_probabilities) k.knots.push_back(stats::quantile_sorted(x, rest, p));
    if (!(misfit() < clusters)) {
      k.knots.clear();
      k.values.clear();
    }
  }

  double uniform01() noexcept { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }

  std::size_t cap_;
  name_id key_limit_;
  Allocator alloc_;
  vec<slot> slots_;
  vec<name_id> active_;
  vec<double> scratch_;    // the radix sort's buffer, reused
  vec<double> intervals_;  // between the window's consecutive launch calls (a reservoir past cap_)
  std::uint64_t launches_ = 0, intervals_seen_ = 0;
  std::int64_t last_launch_ = 0;
  skip_counts skipped_{};
  std::uint64_t subsampled_ = 0, events_ = 0, epoch_ = 1;
  std::int64_t start_ = 0, end_ = 0;
  failslow::detail::splitmix64_engine rng_;
};

inline void check_config(const compressor_config& cfg) {
  if (cfg.per_key_cap == 0) throw invalid_argument("window_compressor: per_key_cap must be >= 1");
  if (cfg.key_limit == 0) throw invalid_argument("window_compressor: key_limit must be >= 1");
  if (cfg.max_window_ns < 0) throw invalid_argument("window_compressor: max_window_ns must be >= 0");
}

}  // namespace detail

template <class Allocator = std::allocator<char>>
class basic_window_compressor {
 public:
  basic_window_compressor(std::int32_t rank, window_sink sink, compressor_config cfg = {},
                          const Allocator& alloc = Allocator())
      : rank_(rank),
        sink_(std::move(sink)),
        cfg_(std::move(cfg)),
        buffer_(cfg_, alloc, cfg_.seed ^ static_cast<std::uint64_t>(rank)) {
    detail::check_config(cfg_);
    if (!sink_) throw invalid_argument("window_compressor: no sink");
  }

  /// Adds one kernel duration; false when it is counted as skipped instead.
  bool add(name_id key, std::int64_t start_ns, std::int64_t duration_ns) {
    if (cfg_.max_window_ns > 0 && buffer_.events() > 0 && start_ns - buffer_.start() >= cfg_.max_window_ns)
      close_window(start_ns);
    return buffer_.add(key, start_ns, duration_ns);
  }

  /// Adds a GPU activity event (its name is the key); malformed events are counted.
  bool add(const event& e) {
    if (!e.is_well_formed()) {
      ++buffer_.skipped().invalid_duration;
      return false;
    }
    return add(e.name, e.start_ns, e.duration_ns());
  }

  /// Records a host kernel launch call (window_summary::launch: the host's pace); false when a
  /// call before the window's previous one is counted as skipped instead.
  bool add_launch(std::int64_t start_ns) { return buffer_.add_launch(start_ns); }

  /// Closes the current window (a step marker at `end_ns`) and hands its summary to the sink.
  /// An empty window is emitted too (a step without kernels is information).
  void close_window(std::int64_t end_ns = 0) {
    window_summary w;
    w.rank = rank_;
    w.window_id = next_id_++;
    w.end_ns = end_ns;
    buffer_.summarize(w, cfg_);
    sink_(std::move(w));
  }

  std::uint64_t windows_closed() const noexcept { return next_id_; }
  /// Events added since the last close_window() (they reach a summary at the next close).
  std::uint64_t pending_events() const noexcept { return buffer_.events(); }
  const compressor_config& config() const noexcept { return cfg_; }

 private:
  std::int32_t rank_;
  window_sink sink_;
  compressor_config cfg_;
  detail::window_buffer<Allocator> buffer_;
  std::uint64_t next_id_ = 0;
};

using window_compressor = basic_window_compressor<>;

/// The same compressor with the clustering on a worker thread (see the synopsis).
template <class Allocator = std::allocator<char>>
class basic_async_window_compressor {
 public:
  basic_async_window_compressor(std::int32_t rank, window_sink sink, compressor_config cfg = {},
                                const Allocator& alloc = Allocator())
      : rank_(rank),
        sink_(std::move(sink)),
        cfg_(std::move(cfg)),
        front_(cfg_, alloc, cfg_.seed ^ static_cast<std::uint64_t>(rank)),
        back_(cfg_, alloc, ~(cfg_.seed ^ static_cast<std::uint64_t>(rank))) {
    detail::check_config(cfg_);
    if (!sink_) throw invalid_argument("async_window_compressor: no sink");
    worker_ = std::thread([this] { work(); });
  }
  basic_async_window_compressor(const basic_async_window_compressor&) = delete;
  basic_async_window_compressor& operator=(const basic_async_window_compressor&) = delete;

  /// Joins the worker after it has summarised every closed window. Events added after the
  /// last close_window() belong to no window: close it first (pending_events() tells).
  ~basic_async_window_compressor() {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      stop_ = true;
    }
    ready_.notify_all();
    worker_.join();
  }

  bool add(name_id key, std::int64_t start_ns, std::int64_t duration_ns) {
    if (cfg_.max_window_ns > 0 && front_.events() > 0 && start_ns - front_.start() >= cfg_.max_window_ns)
      close_window(start_ns);
    return front_.add(key, start_ns, duration_ns);
  }

  bool add(const event& e) {
    if (!e.is_well_formed()) {
      ++front_.skipped().invalid_duration;
      return false;
    }
    return add(e.name, e.start_ns, e.duration_ns());
  }

  bool add_launch(std::int64_t start_ns) { return front_.add_launch(start_ns); }

  /// Swaps the filled buffers with the worker's (waiting while it is still busy with the
  /// previous window) and returns; the worker summarises and calls the sink.
  void close_window(std::int64_t end_ns = 0) {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return !pending_; });
    rethrow_failure();
    std::swap(front_, back_);
    pending_ = true;
    pending_id_ = next_id_++;
    pending_end_ = end_ns;
    lock.unlock();
    ready_.notify_one();
  }

  /// Waits until every closed window has reached the sink.
  void flush() {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return !pending_; });
    rethrow_failure();
  }

  std::uint64_t windows_closed() const noexcept { return next_id_; }
  /// Events added since the last close_window().
  std::uint64_t pending_events() const noexcept { return front_.events(); }

 private:
  void rethrow_failure() {
    if (failure_) {
      auto f = failure_;
      failure_ = nullptr;
      std::rethrow_exception(f);
    }
  }

  void work() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      ready_.wait(lock, [this] { return pending_ || stop_; });
      if (!pending_) return;
      lock.unlock();
      try {
        window_summary w;
        w.rank = rank_;
        w.window_id = pending_id_;
        w.end_ns = pending_end_;
        back_.summarize(w, cfg_);
        sink_(std::move(w));
      } catch (...) {
        lock.lock();
        failure_ = std::current_exception();
        lock.unlock();
      }
      lock.lock();
      pending_ = false;
      done_.notify_all();
    }
  }

  std::int32_t rank_;
  window_sink sink_;
  compressor_config cfg_;
  detail::window_buffer<Allocator> front_, back_;
  std::mutex mutex_;
  std::condition_variable ready_, done_;
  bool pending_ = false, stop_ = false;
  std::uint64_t pending_id_ = 0, next_id_ = 0;
  std::int64_t pending_end_ = 0;
  std::exception_ptr failure_;
  std::thread worker_;
};

using async_window_compressor = basic_async_window_compressor<>;

}  // namespace failslow::compress

#if FAILSLOW_HEADER_ONLY
#include "failslow/compress/impl/window_compressor.ipp"
#endif
