// failslow/detect/impl/pelt.ipp -- the definitions of detect/pelt.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "failslow/detect/pelt.hpp"

namespace failslow::detect::detail {

FAILSLOW_FUNC_DEF changepoint_result penalised_search(const segment_cost& cost, std::size_t m, bool prune) {
  const std::size_t n = cost.size();
  const double beta = cost.beta(), k = cost.pruning_constant();
  const double inf = std::numeric_limits<double>::infinity();
  if (n < 2 * m) return cost.make_result({}, 1);  // no admissible change point
  std::vector<double> f(n + 1, inf);
  std::vector<std::size_t> last(n + 1, 0);
  f[0] = -beta;
  std::vector<std::size_t> cand, kept;
  std::vector<double> vals;
  std::vector<std::vector<std::size_t>> doomed(m);  // candidates pruned at t, removed at t + m
  std::vector<char> dead(n + 1, 0);
  std::uint64_t evals = 0;
  for (std::size_t t = m; t <= n; ++t) {
    auto& bucket = doomed[t % m];
    if (!bucket.empty()) {
      for (std::size_t s : bucket) dead[s] = 1;
      bucket.clear();
      kept.clear();
      for (std::size_t s : cand)
        if (!dead[s]) kept.push_back(s);
      cand.swap(kept);
    }
    const std::size_t s_new = t - m;
    if (f[s_new] < inf) cand.push_back(s_new);
    vals.resize(cand.size());
    double best = inf;
    std::size_t arg = 0;
    for (std::size_t i = 0; i < cand.size(); ++i) {
      const double v = f[cand[i]] + cost(cand[i], t) + beta;
      vals[i] = v;
      if (v < best) {
        best = v;
        arg = cand[i];
      }
    }
    evals += cand.size();
    f[t] = best;
    last[t] = arg;
    if (prune && t < n)
      for (std::size_t i = 0; i < cand.size(); ++i)
        if (vals[i] - beta + k > best) bucket.push_back(cand[i]);
  }
  std::vector<std::size_t> changes;
  for (std::size_t t = last[n]; t > 0; t = last[t]) changes.push_back(t);
  std::vector<std::size_t> ascending(changes.rbegin(), changes.rend());
  return cost.make_result(std::move(ascending), evals);
}

}  // namespace failslow::detect::detail
