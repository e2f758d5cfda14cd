// failslow/collect/impl/flight_recorder.ipp -- the definitions of collect/flight_recorder.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "failslow/collect/flight_recorder.hpp"
#include "failslow/core/error.hpp"

namespace failslow::collect {

FAILSLOW_INLINE void flight_recorder::records(const activity_record* batch, std::size_t n) {
  // Only the newest capacity records of a batch can survive it.
  if (n > ring_.size()) {
    batch += n - ring_.size();
    head_add(n - ring_.size());
    n = ring_.size();
  }
  while (n > 0) {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::size_t at = static_cast<std::size_t>(head_ % ring_.size());
    const std::size_t k = std::min({n, ring_.size() - at, chunk_records});
    std::memcpy(ring_.data() + at, batch, k * sizeof(activity_record));
    head_ += k;
    batch += k;
    n -= k;
  }
}

FAILSLOW_FUNC_DEF recorder_snapshot flight_recorder::snapshot() const {
  recorder_snapshot s;
  std::uint64_t from, to;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    to = head_;
    s.marks.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(marks_head_, marks_.size())));
    for (std::uint64_t i = marks_head_ - std::min<std::uint64_t>(marks_head_, marks_.size()); i < marks_head_; ++i)
      s.marks.push_back(marks_[static_cast<std::size_t>(i % marks_.size())]);
  }
  from = to - std::min<std::uint64_t>(to, ring_.size());
  s.total_records = to;
  s.records.reserve(static_cast<std::size_t>(to - from));
  for (std::uint64_t i = from; i < to;) {
    std::lock_guard<std::mutex> lock(mutex_);
    // Records below head - size were overwritten since the copy began.
    const std::uint64_t oldest = head_ - std::min<std::uint64_t>(head_, ring_.size());
    if (i < oldest) {
      s.overwritten += std::min(oldest, to) - i;
      i = std::min(oldest, to);
      continue;
    }
    const std::size_t at = static_cast<std::size_t>(i % ring_.size());
    const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>({to - i, ring_.size() - at, chunk_records}));
    s.records.insert(s.records.end(), ring_.begin() + static_cast<std::ptrdiff_t>(at),
                     ring_.begin() + static_cast<std::ptrdiff_t>(at + k));
    i += k;
  }
  return s;
}

FAILSLOW_FUNC_DEF std::size_t flight_recorder::check(std::size_t bytes) {
  if (bytes < 16 * sizeof(activity_record))
    throw invalid_argument("flight_recorder: capacity_bytes must be >= " +
                           std::to_string(16 * sizeof(activity_record)));
  return bytes;
}

namespace detail {

FAILSLOW_FUNC_DEF void append_us(std::string& out, std::int64_t ns) {
  std::uint64_t mag = ns < 0 ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  if (ns < 0) out += '-';
  out += std::to_string(mag / 1000);
  const auto frac = static_cast<unsigned>(mag % 1000);
  out += '.';
  out += static_cast<char>('0' + frac / 100);
  out += static_cast<char>('0' + frac / 10 % 10);
  out += static_cast<char>('0' + frac % 10);
}

FAILSLOW_FUNC_DEF std::string_view kineto_category(const event& e) noexcept {
  switch (e.kind) {
    case event_kind::memcpy:
      return "gpu_memcpy";
    case event_kind::memset:
      return "gpu_memset";
    case event_kind::annotation:  // NVTX ranges are host ranges
      return e.device < 0 ? "user_annotation" : "gpu_user_annotation";
    case event_kind::runtime:  // launch calls (collector_options::launches)
      return "cuda_runtime";
    default:
      return "kernel";
  }
}

}  // namespace detail

}  // namespace failslow::collect
