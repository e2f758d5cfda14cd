// failslow/trace/detail/impl/correlation_map.ipp -- the definitions of trace/detail/correlation_map.hpp: included by
// that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "failslow/core/event.hpp"
#include "failslow/trace/detail/correlation_map.hpp"

namespace failslow::trace::detail {
FAILSLOW_FUNC_DEF correlation_map::correlation_map(std::uint32_t max_key, std::size_t keys) {
  flat_ = static_cast<std::uint64_t>(max_key) <= 4 * static_cast<std::uint64_t>(keys) + 4096;
  if (flat_)
    slots_.assign(static_cast<std::size_t>(max_key) + 1, none);
  else
    map_.reserve(keys);
}

FAILSLOW_FUNC_DEF correlation_map correlation_map::for_launches(const std::vector<event>& events) {
  std::uint32_t max_key = 0;
  std::size_t keys = 0;
  for (const auto& e : events)
    if (e.kind == event_kind::runtime && e.correlation != 0) {
      max_key = std::max(max_key, e.correlation);
      ++keys;
    }
  return correlation_map(max_key, keys);
}

FAILSLOW_FUNC_DEF std::vector<char> launch_calls(const std::vector<event>& ev) {
  auto call_of = correlation_map::for_launches(ev);  // correlation -> runtime call
  for (std::size_t i = 0; i < ev.size(); ++i)
    if (ev[i].kind == event_kind::runtime && ev[i].correlation != 0)
      call_of.emplace(ev[i].correlation, static_cast<std::uint32_t>(i));
  std::vector<char> is_launch(ev.size(), 0);
  for (const auto& e : ev)
    if (is_device_activity(e.kind) && e.correlation != 0)
      if (const std::uint32_t* l = call_of.find(e.correlation)) is_launch[*l] = 1;
  return is_launch;
}

}  // namespace failslow::trace::detail