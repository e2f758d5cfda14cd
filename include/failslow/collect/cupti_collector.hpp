// failslow/collect/cupti_collector.hpp -- always-on capture of every kernel, memcpy and memset
// with CUPTI's activity API, handed to a record sink (by default per-step window summaries).
//
// Synopsis
//   cupti_collector c(api, sink, names, options);   api: collect/cupti_api.hpp (load_cupti_api()
//                                                    in production, a fake in tests)
//   collector_status s = c.start();   never throws for CUPTI's sake: fails open with a status
//     running      capturing CONCURRENT_KERNEL (never KERNEL, which serialises kernels), MEMCPY,
//                  MEMCPY2, MEMSET (+ MARKER with options.nvtx, RUNTIME with options.launches:
//                  the kernel launch calls, each window's host launch pace)
//     unavailable  no usable CUPTI, driver or GPU (the message has CUPTI's result string)
//     in_use       another tool holds CUPTI (Nsight Systems, compute-sanitizer, cuda-gdb, a
//                  profiler that subscribed): the collector steps aside and touches nothing
//     failed       enabling an activity kind failed; what was enabled is disabled again
//   c.begin_step(n)          step n starts now (host clock): closes the previous step's window
//   auto g = c.phase("fwd")  a scoped phase: a phase mark when g ends (flight recorder)
//   c.flush()                asks CUPTI for completed buffers (not forced) and waits until they
//                            reached the sink
//   c.stop()                 disables the kinds, forces a flush, hands everything to the sink,
//                            calls sink.finish(); idempotent; the destructor calls it
//   c.request_dump()         the flight recorder (options.flight_recorder_bytes > 0) is dumped
//                            by a dump thread through options.on_dump; install_dump_signal(sig)
//                            does the same on a signal (the handler only posts a semaphore)
// How it runs:
//   * Buffers: a buffer_pool (collect/buffer_pool.hpp) of buffer_count x buffer_bytes allocated
//     at construction, handed to CUPTI in its request callback and returned in the completion
//     callback; an empty pool returns no buffer and CUPTI drops records, which the worker
//     reads with cuptiActivityGetNumDroppedRecords outside any lock of ours (stats().dropped).
//   * Delivery: cuptiActivityFlushPeriod(flush_period_ms); forced flush only at stop. The
//     completion callback only queues the buffer; a worker thread parses it
//     (collect/cupti_parser.hpp) and calls the sink, so a slow sink never blocks CUPTI's
//     thread (options.deliver_on_worker = false parses in the callback instead).
//   * Clock: CUPTI timestamps become host-clock times (options.host_clock, CLOCK_REALTIME) by
//     bracketing cuptiGetTimestamp with clock_gettime (collect/clock_anchor.hpp), again every
//     reanchor_period_ms.
//   * Coexistence: start() probes with cuptiSubscribe and unsubscribes at once (no subscriber
//     is held); CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED means another tool is there.
//     Never cuptiFinalize, never cuptiActivityRegisterTimestampCallback. A tool that registers
//     its own activity callbacks later (the PyTorch profiler does when it starts) takes the
//     buffers over; ours that CUPTI still holds are then never returned (the pool outlives
//     the collector if any are outstanding at stop: stats().buffers_outstanding).
//   * One collector per process (CUPTI's callbacks are global): a second start() is in_use.
// Memory: buffer_count x buffer_bytes + the flight recorder + the sink's own bound; nothing on
//   the hot path allocates except first-seen names.
// Errors: bad options throw failslow::invalid_argument from the constructor; CUPTI failures
//   are statuses, sink exceptions are caught (stats().sink_failures; the sink is not called
//   again) so nothing reaches CUPTI's threads.
#pragma once

#include <cupti.h>
#include <semaphore.h>
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "failslow/collect/buffer_pool.hpp"
#include "failslow/collect/clock_anchor.hpp"
#include "failslow/collect/cupti_api.hpp"
#include "failslow/collect/cupti_parser.hpp"
#include "failslow/collect/flight_recorder.hpp"
#include "failslow/collect/record_sink.hpp"
#include "failslow/core/detail/enum_count.hpp"
#include "failslow/core/error.hpp"
#include "failslow/core/name_table.hpp"

namespace failslow::collect {

struct collector_options {
  std::size_t buffer_bytes = std::size_t{4} << 20;  ///< one CUPTI activity buffer
  std::size_t buffer_count = 16;                    ///< buffers in the pool (64 MiB by default)
  std::uint32_t flush_period_ms = 200;              ///< cuptiActivityFlushPeriod
  bool memcpy = true;                               ///< MEMCPY and MEMCPY2
  bool memset = true;                               ///< MEMSET
  bool nvtx = false;  ///< MARKER: NVTX ranges as steps/phases (needs NVTX_INJECTION64_PATH=libcupti)
  /// RUNTIME: the kernel launch calls, so that each window carries its host's launch pace
  /// (compress::window_summary::launch: a host that launches slower than its peers' is found
  /// before its GPU idles for it). CUPTI then records every runtime call (one record each, the
  /// parser keeps the launches): off by default.
  bool launches = false;
  bool deliver_on_worker = true;            ///< parse on the worker thread, not CUPTI's
  std::uint32_t reanchor_period_ms = 1000;  ///< clock re-anchoring
  clockid_t host_clock = CLOCK_REALTIME;    ///< the clock of marks and record times
  std::size_t flight_recorder_bytes = 0;    ///< 0: no flight recorder
  std::size_t batch_records = 256;          ///< records per sink call
  std::size_t marks_capacity = 4096;        ///< begin_step/phase marks not yet handed on
  parser_options parser;
  /// Receives a flight-recorder snapshot on the dump thread (request_dump, signal).
  std::function<void(recorder_snapshot&&)> on_dump;
};

enum class collector_state : std::uint8_t { idle, running, unavailable, in_use, failed, stopped };
/// Number of collector_state values (they are 0 .. collector_state_count - 1).
inline constexpr std::size_t collector_state_count = 6;

constexpr std::string_view to_string(collector_state s) noexcept {
  switch (s) {
    case collector_state::idle:
      return "idle";
    case collector_state::running:
      return "running";
    case collector_state::unavailable:
      return "unavailable";
    case collector_state::in_use:
      return "in_use";
    case collector_state::failed:
      return "failed";
    case collector_state::stopped:
      return "stopped";
  }
  return "unknown";
}
static_assert(failslow::detail::enum_count_matches<collector_state>(collector_state_count),
              "collector_state_count is not the number of collector_state values");

struct collector_status {
  collector_state state = collector_state::idle;
  std::string message;
  bool running() const noexcept { return state == collector_state::running; }
};

struct collector_stats {
  parse_counts parse;
  std::uint64_t buffers_requested = 0;    ///< CUPTI's request callbacks
  std::uint64_t buffers_refused = 0;      ///< requests that found the pool empty
  std::uint64_t buffers_completed = 0;    ///< completion callbacks with one of our buffers
  std::uint64_t foreign_buffers = 0;      ///< completion callbacks with a buffer not ours (ignored)
  std::uint64_t dropped = 0;              ///< records CUPTI dropped (cuptiActivityGetNumDroppedRecords)
  std::uint64_t marks_dropped = 0;        ///< marks lost because the mark queue was full
  std::uint64_t sink_failures = 0;        ///< exceptions from the sink (it is not called after one)
  std::uint64_t dumps = 0;                ///< flight-recorder snapshots handed to on_dump
  std::uint64_t anchors = 0;              ///< clock anchor samples taken
  std::int64_t clock_offset_ns = 0;       ///< host = CUPTI + offset
  std::int64_t clock_uncertainty_ns = 0;  ///< half the narrowest bracket
  std::size_t buffers_outstanding = 0;    ///< buffers CUPTI holds now
};

class cupti_collector {
 public:
  cupti_collector(cupti_api api, record_sink& sink, name_table& names, collector_options options = {})
      : api_(std::move(api)),
        sink_(&sink),
        names_(names),
        opt_(check(std::move(options))),
        pool_(std::make_unique<buffer_pool>(opt_.buffer_bytes, opt_.buffer_count)),
        parser_(names, clock_, opt_.parser),
        batch_(opt_.batch_records),
        queue_(opt_.buffer_count),
        marks_(opt_.marks_capacity) {
    if (opt_.flight_recorder_bytes > 0) recorder_ = std::make_unique<flight_recorder>(opt_.flight_recorder_bytes);
    sem_init(&dump_sem_, 0, 0);
  }
  cupti_collector(const cupti_collector&) = delete;
  cupti_collector& operator=(const cupti_collector&) = delete;

  ~cupti_collector() {
    try {
      stop();
    } catch (...) {  // a destructor must not throw; stop() already catches the sink's exceptions
    }
    if (pool_ && pool_->outstanding() > 0) (void)pool_.release();  // CUPTI may still write into them
    sem_destroy(&dump_sem_);
  }

  /// Starts capturing; see the synopsis for the states. Never throws for CUPTI's sake.
  collector_status start() {
    std::lock_guard<std::mutex> lock(control_);
    if (status_.state == collector_state::running) return status_;
    if (!api_.complete()) return set_status(collector_state::unavailable, "CUPTI functions not resolved");
    cupti_collector* expected = nullptr;
    if (!active().compare_exchange_strong(expected, this))
      return set_status(collector_state::in_use, "another failslow collector is running in this process");
    auto fail = [&](collector_state s, std::string msg) {
      active().store(nullptr);
      return set_status(s, std::move(msg));
    };
    std::uint32_t version = 0;
    CUptiResult r = api_.get_version(&version);
    if (r != CUPTI_SUCCESS) return fail(collector_state::unavailable, "cuptiGetVersion: " + result_string(api_, r));
    if (version < CUPTI_API_VERSION)
      return fail(collector_state::unavailable, "CUPTI API " + std::to_string(version) + " is older than " +
                                                    std::to_string(CUPTI_API_VERSION) +
                                                    " (the record layouts this collector reads)");
    // Probe: is another tool subscribed? Hold no subscriber ourselves.
    CUpti_SubscriberHandle probe = nullptr;
    r = api_.subscribe(&probe, &probe_callback, nullptr);
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
      return fail(collector_state::in_use,
                  "CUPTI is in use by another tool (Nsight Systems, compute-sanitizer, a profiler): stepping aside");
    if (r != CUPTI_SUCCESS)
      return fail(collector_state::unavailable,
                  "cuptiSubscribe (probe): " + result_string(api_, r) + " -- no CUDA driver or GPU?");
    api_.unsubscribe(probe);
    anchor();
    r = api_.register_callbacks(&on_request, &on_complete);
    if (r != CUPTI_SUCCESS)
      return fail(collector_state::failed, "cuptiActivityRegisterCallbacks: " + result_string(api_, r));
    enabled_.clear();
    std::vector<CUpti_ActivityKind> kinds = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL};
    if (opt_.memcpy) kinds.insert(kinds.end(), {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2});
    if (opt_.memset) kinds.push_back(CUPTI_ACTIVITY_KIND_MEMSET);
    if (opt_.nvtx) kinds.push_back(CUPTI_ACTIVITY_KIND_MARKER);
    if (opt_.launches) kinds.push_back(CUPTI_ACTIVITY_KIND_RUNTIME);
    for (CUpti_ActivityKind k : kinds) {
      r = api_.enable(k);
      if (r != CUPTI_SUCCESS) {
        for (CUpti_ActivityKind e : enabled_) api_.disable(e);
        enabled_.clear();
        return fail(collector_state::failed,
                    "cuptiActivityEnable(kind " + std::to_string(static_cast<int>(k)) + "): " + result_string(api_, r));
      }
      enabled_.push_back(k);
    }
    api_.flush_period(opt_.flush_period_ms);
    stop_worker_ = false;
    dumper_stop_ = false;
    worker_ = std::thread([this] { work(); });
    if (recorder_) dumper_ = std::thread([this] { dump_loop(); });
    return set_status(collector_state::running,
                      "capturing " + std::to_string(enabled_.size()) + " activity kinds with " + api_.source);
  }

  /// Disables the kinds, forces a flush, delivers everything, finishes the sink. Idempotent.
  void stop() {
    std::lock_guard<std::mutex> lock(control_);
    if (status_.state != collector_state::running) return;
    for (CUpti_ActivityKind k : enabled_) api_.disable(k);
    enabled_.clear();
    api_.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    {
      std::lock_guard<std::mutex> q(queue_mutex_);
      stop_worker_ = true;
    }
    queue_cv_.notify_all();
    worker_.join();  // the worker drains the queue and the marks first
    active().store(nullptr);
    while (in_callback().load() != 0) std::this_thread::yield();
    drain();         // buffers an inline or late completion queued after the worker left
    poll_dropped();  // a CUPTI call: outside our locks (CUPTI calls back holding its own)
    {
      std::lock_guard<std::mutex> p(process_mutex_);
      if (sink_) guarded([&] { sink_->finish(host_clock_ns(opt_.host_clock)); });
    }
    if (dumper_.joinable()) {
      dumper_stop_ = true;
      sem_post(&dump_sem_);
      dumper_.join();
    }
    set_status(collector_state::stopped, "stopped");
  }

  /// Asks CUPTI for the completed buffers (a default, not forced, flush) and waits until the
  /// worker has handed them to the sink.
  void flush() {
    if (!status().running()) return;
    api_.flush_all(0);
    std::unique_lock<std::mutex> q(queue_mutex_);
    idle_cv_.wait(q, [&] { return queue_size_ == 0 && !busy_; });
  }

  /// Step n begins now: the previous step's window closes once its records are in.
  void begin_step(std::int64_t n) {
    step_mark m;
    m.kind = mark_kind::step;
    m.time_ns = m.end_ns = host_clock_ns(opt_.host_clock);
    m.step = n;
    current_step_.store(n, std::memory_order_relaxed);
    push_mark(m);
  }

  class phase_guard {
   public:
    phase_guard(phase_guard&& o) noexcept : c_(o.c_), name_(o.name_), start_(o.start_) { o.c_ = nullptr; }
    phase_guard(const phase_guard&) = delete;
    phase_guard& operator=(const phase_guard&) = delete;
    phase_guard& operator=(phase_guard&&) = delete;
    ~phase_guard() {
      if (!c_) return;
      step_mark m;
      m.kind = mark_kind::phase;
      m.time_ns = start_;
      m.end_ns = host_clock_ns(c_->opt_.host_clock);
      m.step = c_->current_step_.load(std::memory_order_relaxed);
      m.name = name_;
      c_->push_mark(m);
    }

   private:
    friend class cupti_collector;
    phase_guard(cupti_collector* c, name_id name) : c_(c), name_(name), start_(host_clock_ns(c->opt_.host_clock)) {}
    cupti_collector* c_;
    name_id name_;
    std::int64_t start_;
  };

  /// A phase that ends when the guard is destroyed.
  phase_guard phase(std::string_view name) { return phase_guard(this, names_.intern(name)); }

  /// Asks the dump thread for a flight-recorder snapshot; false without a recorder or when
  /// the collector is not running.
  bool request_dump() noexcept {
    if (!recorder_ || !running_.load()) return false;  // async-signal-safe: no lock
    return sem_post(&dump_sem_) == 0;
  }

  /// Dumps on `signo` (e.g. SIGUSR2): the handler only posts the dump semaphore.
  static void install_dump_signal(int signo) {
    struct sigaction sa {};
    sa.sa_handler = [](int) {
      in_callback().fetch_add(1);
      if (cupti_collector* c = active().load()) c->request_dump();
      in_callback().fetch_sub(1);
    };
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(signo, &sa, nullptr);
  }

  collector_status status() const {
    std::lock_guard<std::mutex> lock(status_mutex_);
    return status_;
  }

  collector_stats stats() const {
    collector_stats s;
    {
      std::lock_guard<std::mutex> p(process_mutex_);
      s.parse = parser_.counts();
    }
    s.buffers_requested = requested_.load();
    s.buffers_refused = pool_->refused();
    s.buffers_completed = completed_.load();
    s.foreign_buffers = foreign_.load();
    s.dropped = dropped_.load();
    s.marks_dropped = marks_dropped_.load();
    s.sink_failures = sink_failures_.load();
    s.dumps = dumps_.load();
    s.anchors = anchors_.load();
    s.clock_offset_ns = clock_.offset_ns();
    s.clock_uncertainty_ns = clock_.uncertainty_ns();
    s.buffers_outstanding = pool_->outstanding();
    return s;
  }

  flight_recorder* recorder() noexcept { return recorder_.get(); }
  const clock_anchor& clock() const noexcept { return clock_; }
  const collector_options& options() const noexcept { return opt_; }

 private:
  struct completed_buffer {
    std::uint8_t* data = nullptr;
    std::size_t valid = 0;
  };

  static std::atomic<cupti_collector*>& active() noexcept {
    static std::atomic<cupti_collector*> a{nullptr};
    return a;
  }
  static std::atomic<int>& in_callback() noexcept {
    static std::atomic<int> n{0};
    return n;
  }

  static collector_options check(collector_options o) {
    if (o.batch_records == 0) throw invalid_argument("cupti_collector: batch_records must be >= 1");
    if (o.marks_capacity == 0) throw invalid_argument("cupti_collector: marks_capacity must be >= 1");
    if (o.reanchor_period_ms == 0) throw invalid_argument("cupti_collector: reanchor_period_ms must be >= 1");
    return o;
  }

  static void CUPTIAPI probe_callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

  static void CUPTIAPI on_request(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
    in_callback().fetch_add(1);
    *buffer = nullptr;
    *size = 0;
    *max_records = 0;
    if (cupti_collector* c = active().load()) {
      c->requested_.fetch_add(1, std::memory_order_relaxed);
      if (std::uint8_t* b = c->pool_->acquire()) {
        *buffer = b;
        *size = c->pool_->buffer_bytes();
      }
    }
    in_callback().fetch_sub(1);
  }

  static void CUPTIAPI on_complete(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t, std::size_t valid) {
    in_callback().fetch_add(1);
    cupti_collector* c = active().load();
    if (c && c->pool_->owns(buffer)) {
      c->completed_.fetch_add(1, std::memory_order_relaxed);
      if (c->opt_.deliver_on_worker) {
        c->enqueue({buffer, valid});
      } else {
        c->process(buffer, valid);
        c->pool_->release(buffer);
      }
    } else if (c) {
      c->foreign_.fetch_add(1, std::memory_order_relaxed);
    }
    in_callback().fetch_sub(1);
  }

  collector_status set_status(collector_state s, std::string message) {
    std::lock_guard<std::mutex> lock(status_mutex_);
    status_.state = s;
    status_.message = std::move(message);
    running_.store(s == collector_state::running);
    return status_;
  }

  void enqueue(completed_buffer b) {
    {
      std::lock_guard<std::mutex> q(queue_mutex_);
      // Capacity = pool size and a buffer is queued at most once, so this never overflows.
      queue_[(queue_head_ + queue_size_) % queue_.size()] = b;
      ++queue_size_;
    }
    queue_cv_.notify_one();
  }

  void push_mark(const step_mark& m) {
    std::lock_guard<std::mutex> q(marks_mutex_);
    if (marks_size_ == marks_.size()) {
      marks_dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    marks_[(marks_head_ + marks_size_) % marks_.size()] = m;
    ++marks_size_;
  }

  // Hands queued marks to the sink (called with process_mutex_ held).
  void deliver_marks() {
    while (true) {
      step_mark m;
      {
        std::lock_guard<std::mutex> q(marks_mutex_);
        if (marks_size_ == 0) return;
        m = marks_[marks_head_];
        marks_head_ = (marks_head_ + 1) % marks_.size();
        --marks_size_;
      }
      deliver_mark(m);
    }
  }

  void deliver_mark(const step_mark& m) {
    if (recorder_) recorder_->mark(m);
    if (sink_) guarded([&] { sink_->mark(m); });
  }

  template <class F>
  void guarded(F&& f) {
    try {
      f();
    } catch (...) {  // never let a sink's exception reach CUPTI or the worker's loop
      sink_failures_.fetch_add(1, std::memory_order_relaxed);
      sink_ = nullptr;
    }
  }

  struct batch_handler {
    cupti_collector& c;
    void record(const activity_record& r) {
      c.batch_[c.batch_size_++] = r;
      if (r.ev.end_ns > c.watermark_ && r.ev.kind != event_kind::annotation) c.watermark_ = r.ev.end_ns;
      if (c.batch_size_ == c.batch_.size()) c.flush_batch();
    }
    void mark(const step_mark& m) {
      c.flush_batch();
      c.deliver_mark(m);
    }
  };

  void flush_batch() {
    if (batch_size_ == 0) return;
    if (recorder_) recorder_->records(batch_.data(), batch_size_);
    if (sink_) guarded([&] { sink_->records(batch_.data(), batch_size_); });
    batch_size_ = 0;
  }

  // Parses one buffer into the sink (worker, or CUPTI's thread when delivering inline).
  void process(std::uint8_t* data, std::size_t valid) {
    std::lock_guard<std::mutex> p(process_mutex_);
    deliver_marks();
    batch_handler h{*this};
    try {
      parser_.parse(api_, data, valid, h);
    } catch (...) {  // the name table's limits: count as a sink failure, keep CUPTI safe
      sink_failures_.fetch_add(1, std::memory_order_relaxed);
    }
    flush_batch();
    if (sink_) guarded([&] { sink_->delivered(watermark_); });
  }

  void drain() {
    while (true) {
      completed_buffer b;
      {
        std::lock_guard<std::mutex> q(queue_mutex_);
        if (queue_size_ == 0) return;
        b = queue_[queue_head_];
        queue_head_ = (queue_head_ + 1) % queue_.size();
        --queue_size_;
      }
      process(b.data, b.valid);
      pool_->release(b.data);
    }
  }

  void poll_dropped() {
    std::size_t n = 0;
    if (api_.get_num_dropped_records(nullptr, 0, &n) == CUPTI_SUCCESS && n > 0)
      dropped_.fetch_add(n, std::memory_order_relaxed);
  }

  void anchor() {
    const auto s = measure_offset(
        [&]() -> std::optional<std::uint64_t> {
          std::uint64_t t = 0;
          if (api_.get_timestamp(&t) != CUPTI_SUCCESS) return std::nullopt;
          return t;
        },
        [&] { return host_clock_ns(opt_.host_clock); });
    if (s) {
      clock_.set(*s);
      anchors_.fetch_add(1, std::memory_order_relaxed);
    }
    last_anchor_ = std::chrono::steady_clock::now();
  }

  void work() {
    const auto tick = std::chrono::milliseconds(std::max<std::uint32_t>(10, opt_.flush_period_ms));
    while (true) {
      completed_buffer b;
      bool have = false, stopping = false;
      {
        std::unique_lock<std::mutex> q(queue_mutex_);
        queue_cv_.wait_for(q, tick, [&] { return queue_size_ > 0 || stop_worker_; });
        if (queue_size_ > 0) {
          b = queue_[queue_head_];
          queue_head_ = (queue_head_ + 1) % queue_.size();
          --queue_size_;
          have = busy_ = true;
        }
        stopping = stop_worker_ && !have;
      }
      if (have) {
        process(b.data, b.valid);
        pool_->release(b.data);
      } else {
        std::lock_guard<std::mutex> p(process_mutex_);
        deliver_marks();
      }
      // CUPTI calls, outside every lock of ours.
      poll_dropped();
      if (std::chrono::steady_clock::now() - last_anchor_ >= std::chrono::milliseconds(opt_.reanchor_period_ms))
        anchor();
      {
        std::lock_guard<std::mutex> q(queue_mutex_);
        busy_ = false;
        if (queue_size_ == 0) idle_cv_.notify_all();
      }
      if (stopping) {
        std::lock_guard<std::mutex> p(process_mutex_);
        deliver_marks();
        return;
      }
    }
  }

  void dump_loop() {
    while (true) {
      while (sem_wait(&dump_sem_) != 0) {
      }
      if (dumper_stop_) return;
      if (!opt_.on_dump) continue;
      recorder_snapshot s = recorder_->snapshot();
      try {
        opt_.on_dump(std::move(s));
        dumps_.fetch_add(1, std::memory_order_relaxed);
      } catch (...) {
        sink_failures_.fetch_add(1, std::memory_order_relaxed);
      }
    }
  }

  cupti_api api_;
  record_sink* sink_;
  name_table& names_;
  collector_options opt_;
  std::unique_ptr<buffer_pool> pool_;
  clock_anchor clock_;
  activity_parser parser_;
  std::unique_ptr<flight_recorder> recorder_;

  std::mutex control_;               // start/stop
  mutable std::mutex status_mutex_;  // status_
  collector_status status_;
  std::vector<CUpti_ActivityKind> enabled_;

  mutable std::mutex process_mutex_;  // parser, batch, sink calls
  std::vector<activity_record> batch_;
  std::size_t batch_size_ = 0;
  std::int64_t watermark_ = 0;

  std::mutex queue_mutex_;
  std::condition_variable queue_cv_, idle_cv_;
  std::vector<completed_buffer> queue_;
  std::size_t queue_head_ = 0, queue_size_ = 0;
  bool stop_worker_ = false, busy_ = false;
  std::thread worker_;
  std::chrono::steady_clock::time_point last_anchor_{};

  std::mutex marks_mutex_;
  std::vector<step_mark> marks_;
  std::size_t marks_head_ = 0, marks_size_ = 0;
  std::atomic<std::int64_t> current_step_{-1};

  std::atomic<bool> running_{false};
  sem_t dump_sem_{};
  std::atomic<bool> dumper_stop_{false};
  std::thread dumper_;

  std::atomic<std::uint64_t> requested_{0}, completed_{0}, foreign_{0}, dropped_{0}, marks_dropped_{0},
      sink_failures_{0}, dumps_{0}, anchors_{0};
};

}  // namespace failslow::collect
