// failslow/trace/clock_align.hpp -- clock offsets between ranks from collectives that must
// end together.
//
// Synopsis
//   clock_alignment estimate_clock_offsets(set, options)
//   void apply_clock_offsets(set, alignment)        shifts every event by -offset
//   A collective kernel cannot finish on any rank before its last participant arrived: the
//   last one releases everyone, so the k-th collective of a process group ends at nearly the
//   same true time T_k on every member. With rank r's clock reading t_r = t + o_r,
//       e_r(k) = T_k + o_r + noise.
//   Instances: collective events (event_kind::collective) of each trace are grouped by key
//   (the NCCL "Process Group Name" when the trace carries it, else the kernel name) and
//   numbered in start order; the k-th of a key on every trace that has the key is one
//   instance. Keys whose count differs between traces are skipped (counted in
//   keys_skipped): their k-th kernels are not known to be the same collective.
//   Estimator (robust alternating medians, L1-style):
//       T_k = median_r (e_r(k) - o_r);   o_r = median_k (e_r(k) - T_k)
//   from o = 0, repeated until no offset moves by more than tolerance_ns (or max_iterations),
//   with the gauge fixed per connected component of traces (traces linked by shared
//   instances): the lowest rank of each component has offset 0. Traces in no instance keep
//   offset 0 and aligned = false.
//   spread_ns per trace is the median absolute residual |e_r(k) - T_k - o_r|: how well the
//   "end together" model fits (tens of microseconds of queueing are normal).
// Accuracy: with I instances and independent noise of scale s, offsets are within about
//   s * 1.25 / sqrt(I) of the truth (the tests check recovery within the noise scale).
// Complexity: O(iterations * sum of instance sizes * log) time, O(instances * members) memory.
// Errors: none; fewer than two traces give all offsets 0.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <utility>
#include <vector>

#include "failslow/core/event.hpp"
#include "failslow/stats/descriptive.hpp"
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

inline clock_alignment estimate_clock_offsets(const trace_set& set, const clock_align_options& options = {}) {
  clock_alignment out;
  const std::size_t n = set.traces.size();
  out.traces.resize(n);
  for (std::size_t t = 0; t < n; ++t) {
    out.traces[t].rank = set.traces[t].rank;
    out.traces[t].trace = t;
  }
  // key -> per trace: end times of its collectives in start order.
  std::map<name_id, std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>>> groups;
  for (std::size_t t = 0; t < n; ++t) {
    const auto& d = set.traces[t].data;
    std::vector<name_id> key_of(d.events.size(), 0);
    for (std::size_t i = 0; i < d.events.size(); ++i) key_of[i] = d.events[i].name;
    for (const auto& c : d.collectives)
      if (c.pg_name != io::collective_args::no_name && c.event < key_of.size()) key_of[c.event] = c.pg_name;
    for (std::size_t i = 0; i < d.events.size(); ++i) {
      const auto& e = d.events[i];
      if (e.kind != event_kind::collective) continue;
      auto& per_trace = groups[key_of[i]];
      if (per_trace.empty()) per_trace.resize(n);
      per_trace[t].emplace_back(e.start_ns, e.end_ns);
    }
  }
  // Instances: members (trace, end).
  std::vector<std::vector<std::pair<std::size_t, std::int64_t>>> inst;
  for (auto& [key, per_trace] : groups) {
    std::size_t count = 0, members = 0;
    bool consistent = true;
    for (auto& v : per_trace) {
      if (v.empty()) continue;
      std::sort(v.begin(), v.end());
      if (members++ == 0)
        count = v.size();
      else if (v.size() != count)
        consistent = false;
    }
    if (members < 2) continue;
    if (!consistent) {
      ++out.keys_skipped;
      continue;
    }
    ++out.keys_used;
    for (std::size_t k = 0; k < count; ++k) {
      std::vector<std::pair<std::size_t, std::int64_t>> m;
      for (std::size_t t = 0; t < n; ++t)
        if (!per_trace[t].empty()) m.emplace_back(t, per_trace[t][k].second);
      inst.push_back(std::move(m));
    }
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

/// Shifts every event of every trace by -offset (aligned time = local time - offset).
/// Events that would leave [0, 2^63) are clamped to it.
inline void apply_clock_offsets(trace_set& set, const clock_alignment& a) {
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
