// failslow/diagnose/detail/instance_transfer.hpp -- the transfer time of every matched group
// collective: what a link took, without the waits of its members.
//
// record_transfers(model, set, matching, row, step_of) fills model.waits.transfer_groups and
// model.waits.transfers (diagnose/job_model.hpp), called by attribute_waits (l4_waits.hpp) with
// its matching. Per group-collective instance (trace/collective_match.hpp; point-to-point pairs
// are skipped) with members m and kernel durations d_m = end_m - start_m on their own clocks:
//     transfer = min_m d_m
// Member m waited a_L - a_m for the last arriver L before the transfer began, and every member
// ends with the transfer, so d_m = (a_L - a_m) + transfer and the minimum is L's duration, the
// aligned end minus the last arrival; taken as the minimum it needs no clock alignment (each
// duration is measured on one clock) and no inherited wait can raise it. The instance's step is
// its shortest member's (trace/steps.hpp); its key, the model's kernel key of that member's
// name (collectives are keyed by name); an instance whose members ran differently named kernels,
// lack a step or a rank, or whose name the model did not keep (model_options::keep_windows off)
// is not recorded.
// Complexity: O(members) per instance, plus O(groups log groups) to number the groups.
// Errors: none.
#pragma once

#include <cstdint>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/diagnose/job_model.hpp"
#include "failslow/trace/collective_match.hpp"
#include "failslow/trace/trace_set.hpp"

namespace failslow::diagnose::detail {

FAILSLOW_FUNC void record_transfers(job_model& m, const trace::trace_set& set,
                                    const trace::collective_matching& matching, const std::vector<std::int64_t>& row,
                                    const std::vector<std::vector<std::int32_t>>& step_of);

}  // namespace failslow::diagnose::detail

#if FAILSLOW_HEADER_ONLY
#include "failslow/diagnose/detail/impl/instance_transfer.ipp"
#endif
