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

#include <cstddef>
#include <string_view>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/event.hpp"

namespace failslow::compress {

inline constexpr std::size_t record_bytes = 32;

/// Bytes of e as minimal Kineto JSON (see the synopsis).
FAILSLOW_FUNC std::size_t minimal_kineto_json_bytes(std::string_view name, const event& e) noexcept;

}  // namespace failslow::compress

#if FAILSLOW_HEADER_ONLY
#include "failslow/compress/impl/baselines.ipp"
#endif
