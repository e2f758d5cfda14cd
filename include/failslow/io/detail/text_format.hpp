// failslow/io/detail/text_format.hpp -- numbers and names as people read them in reports:
// durations with their unit ("45.7 ms"), ratios ("1.49x"), kernel names without their
// parameter lists ("flash::flash_bwd_kernel<Flash_bwd_kernel_traits<128, 64, ...").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "failslow/core/compile_mode.hpp"

namespace failslow::io::detail {

/// ns as "1.23 s", "45.7 ms" or "40.4 us"; "n/a" when not finite.
FAILSLOW_FUNC std::string format_duration(double ns);

/// r as "1.49x"; "n/a" when not finite.
FAILSLOW_FUNC std::string format_ratio(double r);

/// A kernel's demangled name for a sentence: no leading "void ", no parameter list, at most
/// `max` characters ("..." marks a cut). Reports keep the full name in their fields.
/// A kernel key's launch shape (core/launch_shape.hpp) follows the name, never cut.
FAILSLOW_FUNC std::string format_kernel_name(std::string_view name, std::size_t max = 90);

}  // namespace failslow::io::detail

#if FAILSLOW_HEADER_ONLY
#include "failslow/io/detail/impl/text_format.ipp"
#endif
