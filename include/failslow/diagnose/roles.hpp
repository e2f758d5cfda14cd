// failslow/diagnose/roles.hpp -- which ranks run the same work, read from their kernels, for a
// job whose layout is not known.
//
// Synopsis
//   rank_roles infer_roles(model, options)
//
//   Without a layout (no flags, no process groups in the files: a .fsum from an always-on
//   collector, a plain Chrome trace) every rank is first taken for a data-parallel replica of
//   every other. In a pipeline the stages run different kernels (the embedding on the first,
//   the loss and the LM head on the last) and take different time, so comparing them as equals
//   makes the last stage's ranks look slow or host-bound in every step. The kernel mix tells the
//   roles apart without any layout:
//       steady set of rank r = { work kernel keys (compute and memory classes) in at least
//                                steady_share of r's kept windows }
//       role(r) = role(r') <=> steady set of r = steady set of r'
//   Communication kernels are left out (a collective's algorithm may differ between groups of
//   the same work), as are kernels a rank ran in few steps (a JIT compilation, a checkpoint):
//   faults change how long kernels take, not which ones a step runs. Ranks without kept
//   windows share one role, with an empty set.
//   L2 and L3 compare a rank only within its role (l2_options::roles): a role of fewer than
//   min_group ranks is judged against its own history, as a rank without peers is.
// Complexity: O(windows x kernels per window + ranks x log ranks) time, O(ranks x keys) memory.
// Accuracy: exact set equality; a kernel present in close to steady_share of a rank's windows
//   may fall on either side of it and split a role (then those ranks are compared with their
//   own history: fewer peers, never a wrong one).
// Errors: invalid_argument for steady_share outside (0, 1].
#pragma once

#include <cstddef>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/diagnose/job_model.hpp"

namespace failslow::diagnose {

struct role_options {
  double steady_share = 0.5;  ///< a key is in a rank's set when in at least this share of its windows
};

struct rank_roles {
  std::vector<int> role;                  ///< per rank of the model; -1 for ranks without data
  std::vector<std::vector<int>> members;  ///< per role: its ranks, ascending; roles by first rank
  std::vector<std::size_t> kernels;       ///< per role: the size of its steady set
  std::size_t count() const noexcept { return members.size(); }
};

/// The roles of a model's ranks by their steady sets of work kernels (see the synopsis).
FAILSLOW_FUNC rank_roles infer_roles(const job_model& m, const role_options& o = {});

}  // namespace failslow::diagnose

#if FAILSLOW_HEADER_ONLY
#include "failslow/diagnose/impl/roles.ipp"
#endif
