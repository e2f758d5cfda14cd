// failslow/core/event.hpp -- the compact event record every reader produces.
//
// Synopsis
//   struct event: one GPU kernel, memcpy, memset, collective kernel, annotation (phase or
//   step), CPU operator or runtime call, as the profilers record them:
//     start_ns, end_ns   integer nanoseconds on the rank's own clock (end >= start)
//     correlation        CUPTI/Kineto correlation id linking a launch to its GPU activity
//     name               an id interned in a name_table (see core/name_table.hpp)
//     rank, device, stream, kind
//   The record is trivially copyable and 40 bytes, so vectors of events are memcpy-able and
//   cache-friendly; strings live once in the name table.
// Complexity: O(1) everything.
// Errors: none; is_well_formed() tells whether the fields are consistent (readers count
//   malformed events instead of storing them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "failslow/core/detail/enum_count.hpp"

namespace failslow {

/// Dense id of a string interned in a name_table.
using name_id = std::uint32_t;

/// What an event records.
enum class event_kind : std::uint8_t {
  kernel = 0,      ///< a GPU compute kernel
  memcpy = 1,      ///< a GPU memory copy
  memset = 2,      ///< a GPU memory set
  collective = 3,  ///< a GPU kernel that runs a collective or point-to-point transfer (NCCL...)
  annotation = 4,  ///< a user range: a step (ProfilerStep#N) or a phase (forward, backward...)
  cpu_op = 5,      ///< a CPU-side operator (aten::mm, ...)
  runtime = 6,     ///< a CUDA/HIP runtime or driver call (cudaLaunchKernel, ...)
};

/// Number of event_kind values (they are 0 .. event_kind_count - 1).
inline constexpr std::size_t event_kind_count = 7;

/// Lower-case name of a kind, e.g. "collective".
constexpr std::string_view to_string(event_kind k) noexcept {
  switch (k) {
    case event_kind::kernel:
      return "kernel";
    case event_kind::memcpy:
      return "memcpy";
    case event_kind::memset:
      return "memset";
    case event_kind::collective:
      return "collective";
    case event_kind::annotation:
      return "annotation";
    case event_kind::cpu_op:
      return "cpu_op";
    case event_kind::runtime:
      return "runtime";
  }
  return "unknown";
}
static_assert(failslow::detail::enum_count_matches<event_kind>(event_kind_count),
              "event_kind_count is not the number of event_kind values");

/// True for the kinds that run on the GPU (their duration is device time).
constexpr bool is_device_activity(event_kind k) noexcept {
  return k == event_kind::kernel || k == event_kind::memcpy || k == event_kind::memset || k == event_kind::collective;
}

struct event {
  std::int64_t start_ns = 0;      ///< start, integer nanoseconds
  std::int64_t end_ns = 0;        ///< end, integer nanoseconds (>= start_ns when well formed)
  std::uint32_t correlation = 0;  ///< correlation id; 0 when the source has none
  name_id name = 0;               ///< interned name
  std::int32_t rank = -1;         ///< global rank; -1 when unknown
  std::uint32_t stream = 0;       ///< CUDA stream (or thread id for CPU events)
  std::int16_t device = -1;       ///< device index; -1 for host events
  event_kind kind = event_kind::kernel;
  std::uint8_t flags = 0;  ///< reserved for readers; 0 by default

  constexpr std::int64_t duration_ns() const noexcept { return end_ns - start_ns; }
  /// Consistent fields: end >= start and start >= 0.
  constexpr bool is_well_formed() const noexcept { return start_ns >= 0 && end_ns >= start_ns; }
};

static_assert(std::is_trivially_copyable_v<event>, "event must stay memcpy-able");
static_assert(std::is_standard_layout_v<event>, "event must stay standard-layout");
static_assert(sizeof(event) == 40, "event layout changed: update the documentation");

}  // namespace failslow
