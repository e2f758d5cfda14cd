// failslow/collect/impl/step_windows.ipp -- the definitions of collect/step_windows.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "failslow/collect/record_sink.hpp"
#include "failslow/collect/step_windows.hpp"
#include "failslow/compress/window_compressor.hpp"
#include "failslow/core/error.hpp"

namespace failslow::collect {

FAILSLOW_FUNC_DEF step_windows::step_windows(std::int32_t rank, compress::window_sink out, step_window_options options)
    : opt_(check(std::move(options))),
      out_(std::move(out)),
      compressor_(
          rank, [this](compress::window_summary&& w) { emit(std::move(w)); }, compressor_options(opt_)) {
  if (!out_) throw invalid_argument("step_windows: no window sink");
  pending_.reserve(opt_.pending_capacity);
  marks_.resize(opt_.marks_capacity);
}

FAILSLOW_INLINE void step_windows::mark(const step_mark& m) {
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

FAILSLOW_INLINE void step_windows::delivered(std::int64_t watermark_ns) {
  while (open_) {
    const std::int64_t b = boundary();
    if (b == no_boundary || b > std::numeric_limits<std::int64_t>::max() - opt_.close_lag_ns ||
        b + opt_.close_lag_ns > watermark_ns)
      break;
    advance();
  }
}

FAILSLOW_INLINE void step_windows::finish(std::int64_t end_ns) {
  while (open_ && boundary() != no_boundary && (!time_mode_ || !pending_.empty())) advance();
  if (open_) {
    close_compressor(std::max(end_ns, last_end_));
    open_ = false;
  }
  counts_.before_first_window += pending_.size();  // records that no window took
  pending_.clear();
}

FAILSLOW_FUNC_DEF step_window_options step_windows::check(step_window_options o) {
  if (o.pending_capacity == 0) throw invalid_argument("step_windows: pending_capacity must be >= 1");
  if (o.marks_capacity == 0) throw invalid_argument("step_windows: marks_capacity must be >= 1");
  if (o.time_window_ns < 0) throw invalid_argument("step_windows: time_window_ns must be >= 0");
  if (o.close_lag_ns < 0) throw invalid_argument("step_windows: close_lag_ns must be >= 0");
  return o;
}

FAILSLOW_FUNC_DEF void step_windows::pop_mark_and_open() {
  const step_mark m = mark_at(0);
  marks_head_ = (marks_head_ + 1) % marks_.size();
  --marks_size_;
  open_ = true;
  open_id_ = m.step;
  open_start_ = m.time_ns;
}

FAILSLOW_FUNC_DEF void step_windows::open_time_window(std::int64_t t) {
  const std::int64_t w = opt_.time_window_ns;
  const std::int64_t k = t >= 0 ? t / w : -((-t + w - 1) / w);
  open_ = true;
  time_mode_ = true;
  open_id_ = k;
  open_start_ = k * w;
}

FAILSLOW_FUNC_DEF void step_windows::add(const event& e) {
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

FAILSLOW_FUNC_DEF void step_windows::compress_event(const event& e) {
  if (e.kind == event_kind::runtime) {  // a launch call: the window's pace, at its close
    launches_.push_back(e.start_ns);
    return;
  }
  ++counts_.compressed;
  last_end_ = std::max(last_end_, e.end_ns);
  compressor_.add(e);
}

FAILSLOW_FUNC_DEF void step_windows::close_compressor(std::int64_t end_ns) {
  std::sort(launches_.begin(), launches_.end());
  for (std::int64_t t : launches_) compressor_.add_launch(t);
  launches_.clear();
  compressor_.close_window(end_ns);
}

FAILSLOW_FUNC_DEF void step_windows::advance() {
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

FAILSLOW_FUNC_DEF void step_windows::close_open(std::int64_t end_ns) {
  close_compressor(end_ns);
  open_ = false;
}

FAILSLOW_FUNC_DEF void step_windows::release_pending() {
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

FAILSLOW_FUNC_DEF void step_windows::emit(compress::window_summary&& w) {
  w.window_id = static_cast<std::uint64_t>(open_id_);
  w.start_ns = std::min(w.start_ns == 0 ? open_start_ : w.start_ns, open_start_);
  ++counts_.windows;
  out_(std::move(w));
}

}  // namespace failslow::collect
