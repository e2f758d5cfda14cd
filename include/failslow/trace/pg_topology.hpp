// failslow/trace/pg_topology.hpp -- the parallel layout of a job, read back from the process
// groups its traces list (Kineto distributedInfo.pg_config).
//
// Synopsis
//   std::optional<inferred_topology> infer_topology(infos)
//   infos: the distributedInfo blocks of any subset of a job's ranks (one per trace). The
//   process groups of all pg_config lists are pooled (duplicates counted once) and the result
//   gives tp, cp, ep, dp, pp sizes and a Megatron order string (core/topology.hpp) under which
//   every group that can be attributed to a dimension equals topology::group(member, dims).
//   world_size = the largest distributedInfo.world_size.
//   Attribution by description (case-insensitive; a "mesh_" prefix, torch DeviceMesh's, and a
//   "_GLOO" suffix are dropped):
//     tp  TENSOR_MODEL_PARALLEL_GROUP, tp, tensor        cp  CONTEXT_PARALLEL_GROUP, cp, context
//     ep  EXPERT_MODEL_PARALLEL_GROUP, ep, expert        pp  PIPELINE_MODEL_PARALLEL_GROUP, pp, pipeline
//     dp  DATA_PARALLEL_GROUP, dp, data, ddp, fsdp       (or ep+dp: Megatron's DATA_PARALLEL_GROUP
//         spans the expert ranks too when EP > 1)
//     cp+dp  DATA_PARALLEL_GROUP_WITH_CP(_AG), dp_cp     (or cp+ep+dp)
//     dp  EXPERT_DATA_PARALLEL_GROUP                     (or cp+dp)
//     dp  dp_shard, dp_replicate, shard, replicate: only when no other data-parallel group is
//         described and only one of them is present (torchtitan meshes of one dp kind)
//   The first reading of a description is preferred; the others are fallbacks. Known groups
//   that are no single dimension (EMBEDDING_GROUP, POSITION_EMBEDDING_GROUP, MODEL_PARALLEL_GROUP,
//   TENSOR_AND_*, EXPERT_TENSOR_*, HIERARCHICAL_*, INTRA_/INTER_PARTIAL_*, dp_shard_cp, ...)
//   and unknown descriptions are ignored. Every described group must be reproduced (a hard
//   constraint). Undescribed groups ("", "undefined", "default_pg", "mesh_default",
//   "mesh_dim_N") are read structurally: one with a constant stride s and n ranks, 1 < n <
//   world, whose first rank has coordinate 0 ((r0 / s) % n == 0) and with s * n dividing the
//   world, may be one dimension of size n and stride s; which one is a guess (soft: the layout
//   that explains the most of them wins, and such a group never vetoes a layout).
//   Search: the sizes of dimensions named by a one-dimension description are fixed by their
//   groups (all of a kind must agree in size and stride); the others take sizes implied by
//   the remaining groups (or 1), with product = world. Every size assignment is tried with all
//   120 orders. Preference, in turn: more undescribed groups explained; fewer described groups
//   matched only by a fallback reading; fewer dimensions of size > 1 that no group attests;
//   fewer cp/ep dimensions that only undescribed groups attest; the order first in
//   permutation order with tp < cp < ep < dp < pp (the default "tp-cp-ep-dp-pp" is the first);
//   then the size assignment found first (larger sizes on tp, then cp, ep, dp, pp).
//   evidence lists what each kind of group said, what was skipped or ignored, and whether
//   other orders (or sizes) reproduce the groups as well.
//   nullopt when: no world size >= 1; no group attributable to a dimension (e.g. only the
//   default group: the caller assumes pure data parallelism); described groups of a kind
//   disagree, or one has no constant stride; the sizes cannot multiply to the world size; or
//   no order reproduces every described group.
// Complexity: O(L log L) to pool the L ranks listed in all pg_config blocks, then
//   O(A * 120 * (K + M)) for A size assignments (at most 20000 are tried), K kinds of
//   undescribed groups and M ranks of the described groups that may span several dimensions
//   (DATA_PARALLEL_GROUP, ...). All 2048 traces of a 2048-rank job: ~70 ms, mostly pooling the
//   default group each trace lists; a few traces: well under a millisecond.
// Errors: none thrown for odd input: groups with pg_size < 1 or != the number of ranks, empty
//   rank lists, ranks outside [0, world) or repeated are skipped (and counted in evidence).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/io/trace_data.hpp"

namespace failslow::trace {

struct inferred_topology {
  parallel_sizes sizes;
  std::string order;  ///< all five dimensions, fastest first, e.g. "tp-cp-ep-dp-pp"
  int world_size = 0;
  std::vector<std::string> evidence;  ///< which process groups told what

  failslow::topology to_topology() const { return failslow::topology(sizes, order, world_size); }
};

/// The layout under which the pooled process groups of `infos` are the groups of their
/// dimensions; nullopt when there is none or nothing to go by (see the file synopsis).
FAILSLOW_FUNC std::optional<inferred_topology> infer_topology(const std::vector<io::distributed_info>& infos);

}  // namespace failslow::trace

#if FAILSLOW_HEADER_ONLY
#include "failslow/trace/impl/pg_topology.ipp"
#endif
