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

#include <algorithm>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "failslow/core/error.hpp"
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
template <class = void>
rank_roles infer_roles(const job_model& m, const role_options& o = {}) {
  if (!(o.steady_share > 0 && o.steady_share <= 1))
    throw invalid_argument("infer_roles: steady_share must be in (0, 1]");
  const std::size_t R = m.rank_count();
  std::vector<std::size_t> windows(R, 0);
  std::vector<std::map<std::size_t, std::size_t>> seen(R);  // key -> windows of the rank with it
  for (const auto& w : m.windows) {
    if (w.rank < 0 || static_cast<std::size_t>(w.rank) >= R) continue;
    const auto r = static_cast<std::size_t>(w.rank);
    ++windows[r];
    for (const auto& k : w.kernels) {
      const std::size_t key = k.key;
      if (key < m.kernel_classes.size() && m.kernel_classes[key] == kernel_class::communication) continue;
      ++seen[r][key];
    }
  }
  rank_roles out;
  out.role.assign(R, -1);
  std::map<std::vector<std::size_t>, int> role_of;  // steady set -> role
  for (std::size_t r = 0; r < R; ++r) {
    if (r >= m.has_rank.size() || !m.has_rank[r]) continue;
    std::vector<std::size_t> steady;  // ascending: the map's order
    for (const auto& [key, n] : seen[r])
      if (static_cast<double>(n) >= o.steady_share * static_cast<double>(windows[r])) steady.push_back(key);
    const auto [it, fresh] = role_of.emplace(std::move(steady), static_cast<int>(out.members.size()));
    if (fresh) {
      out.members.emplace_back();
      out.kernels.push_back(it->first.size());
    }
    out.role[r] = it->second;
    out.members[static_cast<std::size_t>(it->second)].push_back(static_cast<int>(r));
  }
  return out;
}

}  // namespace failslow::diagnose
