// failslow/collect/step_windows.hpp -- the default record sink: GPU activity records cut into
// per-step windows and compressed (compress/window_compressor.hpp), in bounded memory.
//
// Synopsis
//   step_windows sink(rank, window_sink, options)   a record_sink (collect/record_sink.hpp)
//   Windows: window n holds the device records (kernels, collectives, memcpy, memset) that
//   start in [mark n, mark n+1), where mark n is a step mark (begin_step(n)); the summary's
//   window_id is n, so the diagnosis reads it as step n. With options.time_window_ns = W > 0
//   and no step marks, window k holds the records starting in [kW, (k+1)W) of the host clock
//   (window ids line up across ranks whose clocks do); the first step mark switches to steps.
//   Records arrive late and out of order (CUPTI delivers a record when the work completes and
//   fills its buffers per stream), so a window is not closed at its end mark but once the
//   delivered() watermark (the latest end seen) passes the mark by close_lag_ns; records of
//   later windows that come meanwhile wait in a fixed-capacity pending area. Phase marks do
//   not close windows (a summary has no phases; the flight recorder keeps them).
// Accounting (counts()): every device record is compressed into exactly one window, or
//   counted: before_first_window (no step mark or time window yet), or the compressor's skips
//   (window_summary::skipped). `late` counts records that started before the open window
//   (their window had closed): they are added to the open window, not dropped.
//   `pending_overflow` counts times the pending area filled up and the open window was
//   closed early. Host records (annotations) are not compressed (host_records). Kernel launch
//   calls (runtime records: the collector's options.launches) give each window its host's
//   launch pace (window_summary::launch) by the same routing as device records, added in time
//   order at the window's close (launch_calls; one of a window already closed is counted in
//   launches_late, not used).
// Memory: pending_capacity records (64 bytes each) reserved up front, marks_capacity marks,
//   and the compressor's bounded buffers; nothing grows with run time.
// Thread model: a record_sink: one caller at a time.
// Complexity: records O(1) per record (amortised, plus the compressor's window closes);
//   closing a window O(pending) to move the records of the next one.
// Errors: pending_capacity or marks_capacity 0, time_window_ns or close_lag_ns < 0 throw
//   failslow::invalid_argument; the compressor's configuration errors; exceptions of the
//   window sink propagate.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "failslow/collect/record_sink.hpp"
#include "failslow/compress/window_compressor.hpp"
#include "failslow/core/error.hpp"

namespace failslow::collect {

struct step_window_options {
  compress::compressor_config compressor;  ///< max_window_ns is ignored (marks close windows)
  std::int64_t time_window_ns = 0;         ///< windows of this length until the first step mark; 0 = none
  std::int64_t close_lag_ns = 50'000'000;  ///< close a window once the watermark is this far past its end
  std::size_t pending_capacity = 1 << 16;  ///< records of later windows held while one is open
  std::size_t marks_capacity = 4096;       ///< step marks not yet reached by the records
};

struct step_window_counts {
  std::uint64_t device_records = 0;       ///< kernels, collectives, memcpy, memset received
  std::uint64_t compressed = 0;           ///< handed to the compressor (it may still skip some)
  std::uint64_t before_first_window = 0;  ///< no window open yet: counted, not compressed
  std::uint64_t late = 0;                 ///< started before the open window: put into it
  std::uint64_t host_records = 0;         ///< annotations and other host records: not compressed
  std::uint64_t pending_overflow = 0;     ///< windows closed early because pending was full
  std::uint64_t marks_dropped = 0;        ///< step marks lost: mark queue full or out of order
  std::uint64_t phase_marks = 0;          ///< phase marks seen (they close nothing)
  std::uint64_t launch_calls = 0;         ///< kernel launch calls (runtime records) received
  std::uint64_t launches_late = 0;        ///< launch calls of a window already closed: counted, not used
  std::uint64_t windows = 0;              ///< summaries handed to the window sink
};

class step_windows final : public record_sink {
 public:
  step_windows(std::int32_t rank, compress::window_sink out, step_window_options options = {})
      : opt_(check(std::move(options))),
        out_(std::move(out)),
        compressor_(
            rank, [this](compress::window_summary&& w) { emit(std::move(w)); }, compressor_options(opt_)) {
    if (!out_) throw invalid_argument("step_windows: no window sink");
    pending_.reserve(opt_.pending_capacity);
    marks_.resize(opt_.marks_capacity);
  }

  void records(const activity_record* batch, std::size_t n) override {
    for (std::size_t i = 0; i < n; ++i) add(batch[i].ev);
  }

  void mark(const step_mark& m) override {
    if (m.kind == mark_kind::phase) {
      ++counts_.phase_marks;
      return;
    }
    const std::int64_t last = marks_size_ ? mark_at(marks_size_ - 1).time_ns : open_ ? open_start_ : min_time;
    if (marks_size_ == marks_.size() || m.time_ns < last) {
      ++counts_.marks_dropped;
      return;
    }
    marks_[(marks_head_ + marks_size_) % marks_.size()] = m;
    ++marks_size_;
    if (!open_ || time_mode_) {  // the first step mark opens a window (or ends the time windows)
      if (open_) close_open(m.time_ns);
      time_mode_ = false;
      pop_mark_and_open();
      release_pending();
    }
  }

  void delivered(std::int64_t watermark_ns) override {
    while (open_) {
      const std::int64_t b = boundary();
      if (b == no_boundary || b > std::numeric_limits<std::int64_t>::max() - opt_.close_lag_ns ||
          b + opt_.close_lag_ns > watermark_ns)
        break;
      advance();
    }
  }

  void finish(std::int64_t end_ns) override {
    while (open_ && boundary() != no_boundary && (!time_mode_ || !pending_.empty())) advance();
    if (open_) {
      close_compressor(std::max(end_ns, last_end_));
      open_ = false;
    }
    counts_.before_first_window += pending_.size();  // records that no window took
    pending_.clear();
  }

  const step_window_counts& counts() const noexcept { return counts_; }
  /// Windows handed on so far.
  std::uint64_t windows() const noexcept { return counts_.windows; }

 private:
  static constexpr std::int64_t min_time = std::numeric_limits<std::int64_t>::min();
  static constexpr std::int64_t no_boundary = std::numeric_limits<std::int64_t>::max();

  static step_window_options check(step_window_options o) {
    if (o.pending_capacity == 0) throw invalid_argument("step_windows: pending_capacity must be >= 1");
    if (o.marks_capacity == 0) throw invalid_argument("step_windows: marks_capacity must be >= 1");
    if (o.time_window_ns < 0) throw invalid_argument("step_windows: time_window_ns must be >= 0");
    if (o.close_lag_ns < 0) throw invalid_argument("step_windows: close_lag_ns must be >= 0");
    return o;
  }
  static compress::compressor_config compressor_options(const step_window_options& o) {
    compress::compressor_config c = o.compressor;
    c.max_window_ns = 0;
    return c;
  }

  const step_mark& mark_at(std::size_t i) const { return marks_[(marks_head_ + i) % marks_.size()]; }

  // End of the open window: the next step mark, or the time window's end.
  std::int64_t boundary() const {
    if (time_mode_) return open_start_ + opt_.time_window_ns;
    return marks_size_ ? mark_at(0).time_ns : no_boundary;
  }

  void pop_mark_and_open() {
    const step_mark m = mark_at(0);
    marks_head_ = (marks_head_ + 1) % marks_.size();
    --marks_size_;
    open_ = true;
    open_id_ = m.step;
    open_start_ = m.time_ns;
  }

  void open_time_window(std::int64_t t) {
    const std::int64_t w = opt_.time_window_ns;
    const std::int64_t k = t >= 0 ? t / w : -((-t + w - 1) / w);
    open_ = true;
    time_mode_ = true;
    open_id_ = k;
    open_start_ = k * w;
  }

  void add(const event& e) {
    const bool launch = e.kind == event_kind::runtime;
    if (launch) {
      ++counts_.launch_calls;
    } else if (!is_device_activity(e.kind)) {
      ++counts_.host_records;
      return;
    } else {
      ++counts_.device_records;
    }
    if (!open_) {
      if (opt_.time_window_ns > 0 && marks_size_ == 0) {
        open_time_window(e.start_ns);
      } else {
        ++counts_.before_first_window;
        return;
      }
    }
    if (e.start_ns < open_start_) {
      if (launch) {  // its window's pace is closed
        ++counts_.launches_late;
        return;
      }
      ++counts_.late;
    }
    const std::int64_t b = boundary();
    if (e.start_ns >= b) {
      if (pending_.size() == pending_.capacity()) {
        ++counts_.pending_overflow;
        advance();  // closes the open window early; pending records move on
        if (open_ && e.start_ns < boundary()) {
          compress_event(e);
          return;
        }
        if (pending_.size() == pending_.capacity()) {  // still full: one window's worth at least
          compress_event(e);
          return;
        }
      }
      pending_.push_back(e);
      return;
    }
    compress_event(e);
  }

  void compress_event(const event& e) {
    if (e.kind == event_kind::runtime) {  // a launch call: the window's pace, at its close
      launches_.push_back(e.start_ns);
      return;
    }
    ++counts_.compressed;
    last_end_ = std::max(last_end_, e.end_ns);
    compressor_.add(e);
  }

  // The window's launch calls go to the compressor in time order (CUPTI delivers each thread's
  // records in its own buffers), then the window closes.
  void close_compressor(std::int64_t end_ns) {
    std::sort(launches_.begin(), launches_.end());
    for (std::int64_t t : launches_) compressor_.add_launch(t);
    launches_.clear();
    compressor_.close_window(end_ns);
  }

  // Closes the open window at its boundary and opens the next one.
  void advance() {
    const std::int64_t b = boundary();
    close_open(b);
    if (time_mode_) {
      // The next time window that holds something: the earliest pending record's.
      if (pending_.empty()) {
        open_ = false;
        return;
      }
      std::int64_t first = pending_.front().start_ns;
      for (const auto& e : pending_) first = std::min(first, e.start_ns);
      open_time_window(std::max(first, b));
    } else {
      pop_mark_and_open();
    }
    release_pending();
  }

  void close_open(std::int64_t end_ns) {
    close_compressor(end_ns);
    open_ = false;
  }

  // Moves the pending records of the open window into the compressor, keeps the rest in order.
  void release_pending() {
    const std::int64_t b = boundary();
    std::size_t kept = 0;
    for (std::size_t i = 0; i < pending_.size(); ++i) {
      if (pending_[i].start_ns < b) {
        if (pending_[i].start_ns < open_start_) {
          if (pending_[i].kind == event_kind::runtime) {
            ++counts_.launches_late;
            continue;
          }
          ++counts_.late;
        }
        compress_event(pending_[i]);
      } else {
        pending_[kept++] = pending_[i];
      }
    }
    pending_.resize(kept);
  }

  void emit(compress::window_summary&& w) {
    w.window_id = static_cast<std::uint64_t>(open_id_);
    w.start_ns = std::min(w.start_ns == 0 ? open_start_ : w.start_ns, open_start_);
    ++counts_.windows;
    out_(std::move(w));
  }

  step_window_options opt_;
  compress::window_sink out_;
  compress::window_compressor compressor_;
  std::vector<event> pending_;
  std::vector<std::int64_t> launches_;  // the open window's launch calls (one window's worth at most)
  std::vector<step_mark> marks_;
  std::size_t marks_head_ = 0, marks_size_ = 0;
  bool open_ = false, time_mode_ = false;
  std::int64_t open_id_ = 0, open_start_ = 0, last_end_ = 0;
  step_window_counts counts_;
};

}  // namespace failslow::collect
