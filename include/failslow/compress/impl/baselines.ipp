// failslow/compress/impl/baselines.ipp -- the definitions of compress/baselines.hpp: included by that
// header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "failslow/compress/baselines.hpp"
#include "failslow/core/event.hpp"

namespace failslow::compress {

FAILSLOW_FUNC_DEF std::size_t minimal_kineto_json_bytes(std::string_view name, const event& e) noexcept {
  constexpr std::string_view fixed =
      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"\",\"pid\":,\"tid\":,\"ts\":,\"dur\":,"
      "\"args\":{\"device\":,\"stream\":,\"correlation\":}},";
  char buf[128];  // %.3f of an int64 count of ns / 1e3: at most 21 characters
  const auto len = [&buf](auto... value_and_format) {
    return static_cast<std::size_t>(std::to_chars(buf, buf + sizeof buf, value_and_format...).ptr - buf);
  };
  const auto us = [](std::int64_t ns) { return static_cast<double>(ns) / 1e3; };
  const std::size_t device = len(static_cast<int>(e.device)), stream = len(static_cast<unsigned>(e.stream));
  return fixed.size() + 2 * (device + stream) + len(us(e.start_ns), std::chars_format::fixed, 3) +
         len(us(e.duration_ns()), std::chars_format::fixed, 3) + len(static_cast<unsigned long long>(e.correlation)) +
         name.size();
}

}  // namespace failslow::compress
