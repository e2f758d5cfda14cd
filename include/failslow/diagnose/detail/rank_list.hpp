// failslow/diagnose/detail/rank_list.hpp -- ranks in words for notes and findings.
//   rank_list: ascending, each rank once, runs of three or more consecutive ranks as "a-b" (a
//   pipeline stage's eight ranks read "24-31"), at most `show` items, then ", ..." and the count.
//   placement / rank_placed: where one rank sits in the layout. Light on purpose: the report
//   writers in io/ name ranks this way without including the diagnosis.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/topology.hpp"

namespace failslow::diagnose::detail {

FAILSLOW_FUNC std::string rank_list(std::vector<int> ranks, std::size_t show = 6);

/// "tp:1, dp:4, stage 2": where a rank sits (dimensions of size > 1).
FAILSLOW_FUNC std::string placement(const topology& topo, int rank);

/// "rank 39 (tp:19, dp:5, stage 2)": a rank as sentences name it.
FAILSLOW_FUNC std::string rank_placed(const topology& topo, int rank);

}  // namespace failslow::diagnose::detail

#if FAILSLOW_HEADER_ONLY
#include "failslow/diagnose/detail/impl/rank_list.ipp"
#endif
