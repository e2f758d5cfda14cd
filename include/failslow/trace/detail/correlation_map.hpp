// failslow/trace/detail/correlation_map.hpp -- correlation id -> 32-bit value, for the analyses
// that link runtime launches to GPU work (trace/steps.hpp, trace/idle.hpp).
//
// Kineto's correlation ids are small dense counters, so the map is a flat array indexed by the
// id when the largest id is at most 4 x the number of keys + 4096 (16 bytes per key at most),
// and a hash map otherwise. Values must be below 0xFFFFFFFF (event and step indices are).
// Complexity: O(1) per operation; memory O(max id) or O(keys).
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/event.hpp"

namespace failslow::trace::detail {

class correlation_map {
 public:
  /// `max_key`: the largest id that will be stored; `keys`: about how many will be.
  FAILSLOW_FUNC correlation_map(std::uint32_t max_key, std::size_t keys);

  /// Sized for the correlation ids of the runtime calls (launches) among `events`.
  FAILSLOW_FUNC static correlation_map for_launches(const std::vector<event>& events);

  /// Stores v under key, replacing what was there.
  void assign(std::uint32_t key, std::uint32_t v) {
    if (flat_)
      slots_[key] = v;
    else
      map_[key] = v;
  }
  /// Stores v under key unless the key is there already.
  void emplace(std::uint32_t key, std::uint32_t v) {
    if (flat_) {
      if (slots_[key] == none) slots_[key] = v;
    } else {
      map_.emplace(key, v);
    }
  }
  /// The value under key, or nullptr.
  const std::uint32_t* find(std::uint32_t key) const {
    if (flat_) return key < slots_.size() && slots_[key] != none ? &slots_[key] : nullptr;
    const auto it = map_.find(key);
    return it == map_.end() ? nullptr : &it->second;
  }

 private:
  static constexpr std::uint32_t none = 0xFFFFFFFFu;
  bool flat_ = true;
  std::vector<std::uint32_t> slots_;
  std::unordered_map<std::uint32_t, std::uint32_t> map_;
};

/// Per event, 1 for the runtime calls that launched GPU work (a device activity shares their
/// correlation id), the first call of an id when several share it: the host's kernel launches,
/// whose pace diagnose/l4_host.hpp and compress/trace_windows.hpp measure. O(events).
FAILSLOW_FUNC std::vector<char> launch_calls(const std::vector<event>& ev);

}  // namespace failslow::trace::detail

#if FAILSLOW_HEADER_ONLY
#include "failslow/trace/detail/impl/correlation_map.ipp"
#endif
