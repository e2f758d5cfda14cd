// failslow/trace/collective_match.hpp -- which collective kernels of different ranks are one
// collective: the instances that clock alignment and wait-for attribution read.
//
// Synopsis
//   collective_matching match_collectives(set, options)
//   clock offsets: trace/clock_align.hpp estimates them from these instances.
//   Group collectives. Every collective kernel (event_kind::collective) of a trace gets a key:
//   the NCCL "Process Group Name" when the trace carries it, else the kernel name. NCCL runs
//   the collectives of one communicator in the same order on every member, so the k-th kernel
//   of a key (in start order) on every trace that has the key is one instance. A key whose
//   count differs between traces is not matched (keys_skipped, its kernels counted in
//   unmatched): its k-th kernels are not known to be the same collective.
//   Point-to-point transfers (core/kernel_class.hpp is_point_to_point: NCCL send/receive) are
//   pairs, not group operations: a key shared by exactly two traces is matched by order like a
//   group; otherwise, when options.partners names the ranks a rank exchanges with (its
//   neighbouring pipeline stages), a transfer is paired with the partner's transfer that ends
//   at the same time -- the two kernels of a send/receive complete together. Clocks differ
//   between hosts, and group collectives never link two pipeline stages, so the pair of
//   clocks' offset is found from the transfers themselves: the difference of end times most
//   transfers agree on within offset_resolution_ns (searched up to max_pair_offset_ns; at
//   least two agreeing; ties: more agreeing within pair_tolerance_ns, then the smaller
//   offset). The two ends of one transfer agree to the microsecond, while a periodic schedule
//   makes unrelated ends agree by chance at other offsets, spread evenly: in a window as wide
//   as the pairing tolerance such coincidences can outnumber the true pairs (seen on a
//   host-paced 1F1B job: 185 chance differences 1.2 ms off against 180 true ones), in a
//   window a fifth as wide they are a fifth as many while the true pairs all stay. Where the
//   traces say which kernel is a send and which a receive ("Collective name" send / recv), a
//   send is only compared and paired with a receive: at low noise a 1F1B schedule lined sends
//   up with sends one micro-batch off more often (243 to 240) than with their receives. Then ends
//   within pair_tolerance_ns of each other are paired, each kernel in at most one pair,
//   closest ends first. Transfers left over are counted in unmatched.
//   Instances list their members as (trace index, event index); ordinal is k for group
//   instances and the pair's number for point-to-point ones.
// Accounting: collectives_seen == sum of instance sizes + unmatched.
// Complexity: O(n log n) for n collective kernels, plus, per pair of partners, the end
//   differences within max_pair_offset_ns.
// Errors: none; traces without collectives give no instances.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/event.hpp"
#include "failslow/trace/trace_set.hpp"
namespace failslow::trace {

struct collective_member {
  std::size_t trace = 0;    ///< index into trace_set::traces
  std::uint32_t event = 0;  ///< index into that trace's events
};

struct collective_instance {
  name_id key = 0;  ///< process-group name or kernel name (an id of the set's name table)
  std::uint32_t ordinal = 0;
  bool point_to_point = false;
  std::vector<collective_member> members;  ///< at least two, in trace order
};

struct collective_match_options {
  /// Ranks a rank exchanges point-to-point transfers with; empty function: none known.
  std::function<std::vector<int>(int rank)> partners;
  /// The two kernels of a transfer end within this of each other (after the clock offset).
  std::int64_t pair_tolerance_ns = 50'000;
  /// Largest clock offset between two partners the pairing looks for.
  std::int64_t max_pair_offset_ns = 50'000'000;
  /// The offset is where most end differences agree within this (<= pair_tolerance_ns).
  std::int64_t offset_resolution_ns = 10'000;
};

struct collective_matching {
  std::vector<collective_instance> instances;
  std::uint64_t collectives_seen = 0;
  std::uint64_t unmatched = 0;  ///< collective kernels in no instance
  std::uint64_t keys_used = 0, keys_skipped = 0;
  std::uint64_t pairs = 0;  ///< point-to-point instances
};

FAILSLOW_FUNC collective_matching match_collectives(const trace_set& set, const collective_match_options& options = {});

}  // namespace failslow::trace

#if FAILSLOW_HEADER_ONLY
#include "failslow/trace/impl/collective_match.ipp"
#endif
