// failslow/trace/clock_align.hpp -- clock offsets between ranks from collectives that must
// end together.
//
// Synopsis
//   clock_alignment estimate_clock_offsets(set, options)
//   clock_alignment estimate_clock_offsets(set, matching, options)   from given instances
//   void apply_clock_offsets(set, alignment)        shifts every event by -offset
//   A collective kernel cannot finish on any rank before its last participant arrived: the
//   last one releases everyone, so the k-th collective of a process group ends at nearly the
//   same true time T_k on every member. With rank r's clock reading t_r = t + o_r,
//       e_r(k) = T_k + o_r + noise.
//   Instances: trace/collective_match.hpp without partners -- group collectives by process
//   group (or kernel name) and order, point-to-point transfers of keys only two traces share;
//   keys whose count differs between traces are skipped (keys_skipped).
//   Estimator (robust alternating medians, L1-style):
//       T_k = median_r (e_r(k) - o_r);   o_r = median_k (e_r(k) - T_k)
//   from a start found link by link (o_b - o_a = median over the instances a and b share of
//   e_b - e_a, along a maximum spanning forest of the links weighted by shared instances;
//   from o = 0 the alternation stalls when a group spans two clocks), repeated until no offset moves by more than
//   tolerance_ns (or max_iterations), with the gauge fixed per connected component of traces (traces linked by shared
//   instances): the lowest rank of each component has offset 0. Traces in no instance keep
//   offset 0 and aligned = false.
//   spread_ns per trace is the median absolute residual |e_r(k) - T_k - o_r|: how well the
//   "end together" model fits (tens of microseconds of queueing are normal).
// Accuracy: with I instances and independent noise of scale s, offsets are within about
//   s * 1.25 / sqrt(I) of the truth (the tests check recovery within the noise scale).
// Complexity: O(iterations * sum of instance sizes * log) time, O(instances * members) memory.
// Errors: none; fewer than two traces give all offsets 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/trace/collective_match.hpp"
#include "failslow/trace/trace_set.hpp"

namespace failslow::trace {

struct clock_estimate {
  std::int32_t rank = -1;
  std::size_t trace = 0;        ///< index into trace_set::traces
  std::int64_t offset_ns = 0;   ///< estimated clock offset: aligned time = local time - offset
  double spread_ns = 0;         ///< median |residual| of its collective ends
  std::uint64_t instances = 0;  ///< collective instances it took part in
  bool reference = false;       ///< offset 0 by definition (lowest rank of its component)
  bool aligned = false;         ///< linked to a reference through shared collectives
};

struct clock_align_options {
  int max_iterations = 200;
  double tolerance_ns = 0.5;
};

struct clock_alignment {
  std::vector<clock_estimate> traces;  ///< one per trace of the set, in its order
  std::uint64_t keys_used = 0, keys_skipped = 0, instances = 0;
  int iterations = 0;
};

/// Offsets from already matched instances (e.g. with point-to-point pairs between pipeline
/// stages, which link stages that share no group collective).
FAILSLOW_FUNC clock_alignment estimate_clock_offsets(const trace_set& set, const collective_matching& matching,
                                                     const clock_align_options& options = {});

/// Offsets from the instances match_collectives finds without partners.
FAILSLOW_FUNC clock_alignment estimate_clock_offsets(const trace_set& set, const clock_align_options& options = {});

/// Shifts every event of every trace by -offset (aligned time = local time - offset).
/// Events that would leave [0, 2^63) are clamped to it.
FAILSLOW_FUNC void apply_clock_offsets(trace_set& set, const clock_alignment& a);

}  // namespace failslow::trace

#if FAILSLOW_HEADER_ONLY
#include "failslow/trace/impl/clock_align.ipp"
#endif
