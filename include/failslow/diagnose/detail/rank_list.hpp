// failslow/diagnose/detail/rank_list.hpp -- ranks in words for notes and findings: ascending,
// each rank once, runs of three or more consecutive ranks as "a-b" (a pipeline stage's eight
// ranks read "24-31"), at most `show` items, then ", ..." and the count.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "failslow/core/compile_mode.hpp"

namespace failslow::diagnose::detail {

FAILSLOW_FUNC std::string rank_list(std::vector<int> ranks, std::size_t show = 6);

}  // namespace failslow::diagnose::detail

#if FAILSLOW_HEADER_ONLY
#include "failslow/diagnose/detail/impl/rank_list.ipp"
#endif
