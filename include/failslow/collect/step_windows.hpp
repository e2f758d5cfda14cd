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

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "failslow/collect/record_sink.hpp"
#include "failslow/compress/window_compressor.hpp"
#include "failslow/core/compile_mode.hpp"
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
  FAILSLOW_FUNC step_windows(std::int32_t rank, compress::window_sink out, step_window_options options = {});

  void records(const activity_record* batch, std::size_t n) override {
    for (std::size_t i = 0; i < n; ++i) add(batch[i].ev);
  }

  FAILSLOW_INLINE void mark(const step_mark& m) override;

  FAILSLOW_INLINE void delivered(std::int64_t watermark_ns) override;

  FAILSLOW_INLINE void finish(std::int64_t end_ns) override;

  const step_window_counts& counts() const noexcept { return counts_; }
  /// Windows handed on so far.
  std::uint64_t windows() const noexcept { return counts_.windows; }

 private:
  static constexpr std::int64_t min_time = std::numeric_limits<std::int64_t>::min();
  static constexpr std::int64_t no_boundary = std::numeric_limits<std::int64_t>::max();

  FAILSLOW_FUNC static step_window_options check(step_window_options o);
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

  FAILSLOW_FUNC void pop_mark_and_open();

  FAILSLOW_FUNC void open_time_window(std::int64_t t);

  FAILSLOW_FUNC void add(const event& e);

  FAILSLOW_FUNC void compress_event(const event& e);

  // The window's launch calls go to the compressor in time order (CUPTI delivers each thread's
  // records in its own buffers), then the window closes.
  FAILSLOW_FUNC void close_compressor(std::int64_t end_ns);

  // Closes the open window at its boundary and opens the next one.
  FAILSLOW_FUNC void advance();

  FAILSLOW_FUNC void close_open(std::int64_t end_ns);

  // Moves the pending records of the open window into the compressor, keeps the rest in order.
  FAILSLOW_FUNC void release_pending();

  FAILSLOW_FUNC void emit(compress::window_summary&& w);

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

#if FAILSLOW_HEADER_ONLY
#include "failslow/collect/impl/step_windows.ipp"
#endif
