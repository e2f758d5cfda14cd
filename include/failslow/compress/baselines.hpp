// failslow/compress/baselines.hpp -- the sizes a compression ratio of .fsum is taken against.
//
// Synopsis
//   minimal_kineto_json_bytes(name, e)   the bytes of GPU event e written as Kineto does with
//       only the fields a reader needs:
//         {"ph":"X","cat":"kernel","name":"<name>","pid":<device>,"tid":<stream>,"ts":<us>,
//          "dur":<us>,"args":{"device":<device>,"stream":<stream>,"correlation":<id>}},
//       ts and dur in microseconds with three decimals (printf's %.3f), the name as it is (no
//       JSON escaping counted). A lower bound on what PyTorch writes, which also carries grid,
//       block, registers, occupancy, External id, ...: the one definition of "minimal Kineto
//       JSON" that `failslow compress` and bench/bench_compress.cpp report ratios against.
//   record_bytes = 32                    one event as a fixed binary record (start, duration,
//       key, rank, stream, device): the other baseline both report.
// Complexity: O(1) per event, no allocation: the digits are counted with std::to_chars (the
//   same digits as printf, whose exact decimal expansion took a tenth of `failslow compress`).
// Errors: none.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "failslow/core/event.hpp"

namespace failslow::compress {

inline constexpr std::size_t record_bytes = 32;

/// Bytes of e as minimal Kineto JSON (see the synopsis).
inline std::size_t minimal_kineto_json_bytes(std::string_view name, const event& e) noexcept {
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
