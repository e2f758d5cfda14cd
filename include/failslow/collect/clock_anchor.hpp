// failslow/collect/clock_anchor.hpp -- relates a device-side timestamp source (CUPTI's) to a
// host clock.
//
// Synopsis
//   anchor_sample measure_offset(device_now, host_now, tries)
//     takes `tries` brackets h0 = host_now(), d = device_now(), h1 = host_now() and keeps the
//     narrowest: offset = (h0 + h1) / 2 - d, uncertainty = (h1 - h0) / 2. A host time is then
//     device time + offset, within +-uncertainty (plus the drift since the sample).
//   clock_anchor   holds the current offset (an atomic: read by the parser, written by the
//                  re-anchoring thread); to_host(d) = d + offset. Re-anchoring every second or
//                  so keeps the drift between the two clocks (CUPTI normalises GPU times to its
//                  own CPU clock, CLOCK_REALTIME unless a tool registered a timestamp callback)
//                  below a microsecond, so windows line up with step marks taken on the host.
//   host_clock_ns(id)  clock_gettime(id) in nanoseconds (CLOCK_REALTIME by default: comparable
//                      across NTP-synchronised hosts, as the diagnosis's window ids need).
// Complexity: measure_offset O(tries); to_host O(1).
// Accuracy: the uncertainty is half the narrowest bracket (typically 20-50 ns for
//   cuptiGetTimestamp). Errors: tries == 0 throws failslow::invalid_argument; a device clock
//   that fails (returns nullopt) yields no sample.
#pragma once

#include <time.h>

#include <atomic>
#include <cstdint>
#include <limits>
#include <optional>

#include "failslow/core/error.hpp"

namespace failslow::collect {

inline std::int64_t host_clock_ns(clockid_t id = CLOCK_REALTIME) noexcept {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

struct anchor_sample {
  std::int64_t offset_ns = 0;       ///< host = device + offset
  std::int64_t uncertainty_ns = 0;  ///< half the narrowest bracket
  std::int64_t host_ns = 0;         ///< when it was taken (host clock)
};

/// DeviceNow: () -> std::optional<std::uint64_t>; HostNow: () -> std::int64_t.
template <class DeviceNow, class HostNow>
std::optional<anchor_sample> measure_offset(DeviceNow&& device_now, HostNow&& host_now, unsigned tries = 5) {
  if (tries == 0) throw invalid_argument("measure_offset: tries must be >= 1");
  std::optional<anchor_sample> best;
  for (unsigned i = 0; i < tries; ++i) {
    const std::int64_t h0 = host_now();
    const std::optional<std::uint64_t> d = device_now();
    const std::int64_t h1 = host_now();
    if (!d || *d > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return best;
    const std::int64_t half = (h1 - h0) / 2;
    if (best && half >= best->uncertainty_ns) continue;
    best = anchor_sample{h0 + half - static_cast<std::int64_t>(*d), half, h0 + half};
  }
  return best;
}

class clock_anchor {
 public:
  void set(const anchor_sample& s) noexcept {
    offset_.store(s.offset_ns, std::memory_order_relaxed);
    uncertainty_.store(s.uncertainty_ns, std::memory_order_relaxed);
    anchored_.store(true, std::memory_order_release);
  }
  /// Host time of a device timestamp (the raw value before the first set()).
  std::int64_t to_host(std::uint64_t device_ns) const noexcept {
    return static_cast<std::int64_t>(device_ns) + offset_.load(std::memory_order_relaxed);
  }
  std::int64_t offset_ns() const noexcept { return offset_.load(std::memory_order_relaxed); }
  std::int64_t uncertainty_ns() const noexcept { return uncertainty_.load(std::memory_order_relaxed); }
  bool anchored() const noexcept { return anchored_.load(std::memory_order_acquire); }

 private:
  std::atomic<std::int64_t> offset_{0}, uncertainty_{0};
  std::atomic<bool> anchored_{false};
};

}  // namespace failslow::collect
