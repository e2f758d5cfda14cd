// failslow/trace/impl/clock_align.ipp -- the definitions of trace/clock_align.hpp: included by that
// header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <tuple>
#include <utility>
#include <vector>

#include "failslow/core/event.hpp"
#include "failslow/stats/descriptive.hpp"
#include "failslow/trace/clock_align.hpp"
#include "failslow/trace/collective_match.hpp"
#include "failslow/trace/trace_set.hpp"

namespace failslow::trace {
FAILSLOW_FUNC_DEF clock_alignment estimate_clock_offsets(const trace_set& set, const collective_matching& matching,
                                                         const clock_align_options& options) {
  clock_alignment out;
  const std::size_t n = set.traces.size();
  out.traces.resize(n);
  for (std::size_t t = 0; t < n; ++t) {
    out.traces[t].rank = set.traces[t].rank;
    out.traces[t].trace = t;
  }
  // Instances (trace/collective_match.hpp): members (trace, end).
  out.keys_used = matching.keys_used;
  out.keys_skipped = matching.keys_skipped;
  std::vector<std::vector<std::pair<std::size_t, std::int64_t>>> inst;
  inst.reserve(matching.instances.size());
  for (const auto& in : matching.instances) {
    std::vector<std::pair<std::size_t, std::int64_t>> m;
    for (const auto& mem : in.members) m.emplace_back(mem.trace, set.traces[mem.trace].data.events[mem.event].end_ns);
    inst.push_back(std::move(m));
  }
  out.instances = inst.size();
  if (inst.empty()) return out;

  // Components of traces linked by instances (union-find); reference = lowest rank.
  std::vector<std::size_t> parent(n);
  std::iota(parent.begin(), parent.end(), std::size_t{0});
  auto find = [&](std::size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (const auto& m : inst)
    for (std::size_t j = 1; j < m.size(); ++j) parent[find(m[j].first)] = find(m[0].first);
  std::vector<std::size_t> ref(n, n);
  for (std::size_t t = 0; t < n; ++t) {
    const std::size_t c = find(t);
    if (ref[c] == n || set.traces[t].rank < set.traces[ref[c]].rank) ref[c] = t;
  }
  std::vector<std::vector<std::pair<std::size_t, std::int64_t>>> of_trace(n);  // (instance, end) per trace
  for (std::size_t i = 0; i < inst.size(); ++i)
    for (const auto& [t, e] : inst[i]) of_trace[t].emplace_back(i, e);

  // Offsets and T relative to a per-instance base (the first member's end) keep the
  // arithmetic in small doubles.
  std::vector<double> o(n, 0.0), T(inst.size(), 0.0);
  std::vector<double> buf;
  // Start from a spanning forest of pairwise offsets: alternating medians started at 0 can
  // stall far from the optimum when a group spans two clocks (the median of a two-cluster
  // instance sits between them and stays there), so each link between traces that share
  // instances is estimated on its own, o_b - o_a = median(e_b - e_a), and the links shared by
  // most instances are followed out from each component's reference (Kruskal, then a walk).
  {
    std::map<std::pair<std::size_t, std::size_t>, std::vector<double>> link;
    for (const auto& m : inst) {
      auto sorted = m;
      std::sort(sorted.begin(), sorted.end());
      for (std::size_t j = 1; j < sorted.size(); ++j)
        if (sorted[j].first != sorted[j - 1].first)
          link[{sorted[j - 1].first, sorted[j].first}].push_back(
              static_cast<double>(sorted[j].second - sorted[j - 1].second));
    }
    std::vector<std::tuple<std::size_t, std::size_t, std::size_t, double>> edges;  // (count, a, b, o_b - o_a)
    for (auto& [ab, d] : link) edges.emplace_back(d.size(), ab.first, ab.second, stats::median(d));
    std::sort(edges.begin(), edges.end(), [](const auto& x, const auto& y) {
      return std::get<0>(x) != std::get<0>(y)
                 ? std::get<0>(x) > std::get<0>(y)
                 : std::tie(std::get<1>(x), std::get<2>(x)) < std::tie(std::get<1>(y), std::get<2>(y));
    });
    std::vector<std::size_t> forest(n);
    std::iota(forest.begin(), forest.end(), std::size_t{0});
    auto root = [&](std::size_t x) {
      while (forest[x] != x) x = forest[x] = forest[forest[x]];
      return x;
    };
    std::vector<std::vector<std::pair<std::size_t, double>>> tree(n);
    for (const auto& [count, a, b, d] : edges) {
      if (root(a) == root(b)) continue;
      forest[root(a)] = root(b);
      tree[a].emplace_back(b, d);
      tree[b].emplace_back(a, -d);
    }
    std::vector<bool> placed(n, false);
    std::vector<std::size_t> stack;
    for (std::size_t t = 0; t < n; ++t) {
      if (ref[find(t)] != t) continue;
      placed[t] = true;
      stack.push_back(t);
      while (!stack.empty()) {
        const std::size_t a = stack.back();
        stack.pop_back();
        for (const auto& [b, d] : tree[a])
          if (!placed[b]) {
            placed[b] = true;
            o[b] = o[a] + d;
            stack.push_back(b);
          }
      }
    }
  }
  int it = 0;
  for (; it < options.max_iterations; ++it) {
    for (std::size_t i = 0; i < inst.size(); ++i) {
      buf.clear();
      const auto base = inst[i][0].second;
      for (const auto& [t, e] : inst[i]) buf.push_back(static_cast<double>(e - base) - o[t]);
      T[i] = stats::median(buf);
    }
    double moved = 0;
    for (std::size_t t = 0; t < n; ++t) {
      if (of_trace[t].empty()) continue;
      buf.clear();
      for (const auto& [i, e] : of_trace[t]) buf.push_back(static_cast<double>(e - inst[i][0].second) - T[i]);
      const double nv = stats::median(buf);
      moved = std::max(moved, std::abs(nv - o[t]));
      o[t] = nv;
    }
    std::vector<double> shift(n, 0.0);
    for (std::size_t t = 0; t < n; ++t) shift[t] = o[ref[find(t)]];
    for (std::size_t t = 0; t < n; ++t) o[t] -= shift[t];
    if (moved <= options.tolerance_ns && it > 0) {
      ++it;
      break;
    }
  }
  out.iterations = it;
  for (std::size_t t = 0; t < n; ++t) {
    auto& c = out.traces[t];
    c.instances = of_trace[t].size();
    c.aligned = !of_trace[t].empty();
    c.reference = c.aligned && ref[find(t)] == t;
    c.offset_ns = static_cast<std::int64_t>(std::llround(o[t]));
    if (!c.aligned) continue;
    buf.clear();
    for (const auto& [i, e] : of_trace[t])
      buf.push_back(std::abs(static_cast<double>(e - inst[i][0].second) - T[i] - o[t]));
    c.spread_ns = stats::median(buf);
  }
  return out;
}

FAILSLOW_FUNC_DEF clock_alignment estimate_clock_offsets(const trace_set& set, const clock_align_options& options) {
  return estimate_clock_offsets(set, match_collectives(set), options);
}

FAILSLOW_FUNC_DEF void apply_clock_offsets(trace_set& set, const clock_alignment& a) {
  for (const auto& c : a.traces) {
    if (c.trace >= set.traces.size() || c.offset_ns == 0) continue;
    for (auto& e : set.traces[c.trace].data.events) {
      const auto shift = [&](std::int64_t t) {
        if (c.offset_ns > 0) return t < c.offset_ns ? std::int64_t{0} : t - c.offset_ns;
        return t > std::numeric_limits<std::int64_t>::max() + c.offset_ns ? std::numeric_limits<std::int64_t>::max()
                                                                          : t - c.offset_ns;
      };
      e.start_ns = shift(e.start_ns);
      e.end_ns = shift(e.end_ns);
    }
  }
}

}  // namespace failslow::trace