// failslow/diagnose/impl/l4_waits.ipp -- the definitions of diagnose/l4_waits.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "failslow/core/kernel_class.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/detect/fdr.hpp"
#include "failslow/diagnose/detail/binomial_tail.hpp"
#include "failslow/diagnose/detail/instance_transfer.hpp"
#include "failslow/diagnose/detail/rank_list.hpp"
#include "failslow/diagnose/job_model.hpp"
#include "failslow/diagnose/l4_waits.hpp"
#include "failslow/stats/descriptive.hpp"
#include "failslow/trace/clock_align.hpp"
#include "failslow/trace/collective_match.hpp"
#include "failslow/trace/steps.hpp"
#include "failslow/trace/trace_set.hpp"

namespace failslow::diagnose {

namespace detail {

// Blame of one wait: (trace, fraction) pairs summing to 1.
using blame_map = std::vector<std::pair<std::size_t, double>>;

template <class = void>
inline void add_blame(blame_map& into, const blame_map& from, double weight) {
  for (const auto& entry : from) {
    const std::size_t trace = entry.first;
    auto it = std::find_if(into.begin(), into.end(), [trace](const auto& p) { return p.first == trace; });
    if (it == into.end())
      into.emplace_back(trace, entry.second * weight);
    else
      it->second += entry.second * weight;
  }
}

template <class = void>
inline void cap_blame(blame_map& b, std::size_t keep) {
  std::sort(b.begin(), b.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
  if (b.size() > keep) b.resize(keep);
  double total = 0;
  for (const auto& p : b) total += p.second;
  if (total > 0)
    for (auto& p : b) p.second /= total;
}

// What a trace ran before time t: the innermost GPU annotation around the start of its last
// non-collective GPU activity that ended by t, else that activity's kernel class.
class activity_lookup {
 public:
  activity_lookup(const io::trace_data& d, const name_table& names, const kernel_classifier& classifier)
      : d_(d), names_(names), classifier_(classifier) {
    for (std::uint32_t i = 0; i < d.events.size(); ++i) {
      const auto& e = d.events[i];
      if (is_device_activity(e.kind) && e.kind != event_kind::collective) by_end_.emplace_back(e.end_ns, i);
      if (e.kind == event_kind::annotation && e.device >= 0 && !trace::profiler_step_number(names.name(e.name)))
        annotations_.emplace_back(e.start_ns, i);
    }
    std::sort(by_end_.begin(), by_end_.end());
    std::sort(annotations_.begin(), annotations_.end());
  }

  template <class = void>
  std::string before(std::int64_t t) const {
    auto it = std::upper_bound(by_end_.begin(), by_end_.end(), std::make_pair(t, ~std::uint32_t{0}));
    if (it == by_end_.begin()) return {};
    const auto& act = d_.events[std::prev(it)->second];
    // Innermost annotation containing the activity's start: the latest-starting one that
    // still covers it, among the few that start before it.
    auto a =
        std::upper_bound(annotations_.begin(), annotations_.end(), std::make_pair(act.start_ns, ~std::uint32_t{0}));
    for (int looked = 0; a != annotations_.begin() && looked < 64; ++looked) {
      --a;
      const auto& ann = d_.events[a->second];
      if (ann.end_ns > act.start_ns) return std::string(names_.name(ann.name));
    }
    return std::string(to_string(classifier_.classify(act.kind, names_.name(act.name))));
  }

 private:
  const io::trace_data& d_;
  const name_table& names_;
  const kernel_classifier& classifier_;
  std::vector<std::pair<std::int64_t, std::uint32_t>> by_end_, annotations_;
};

}  // namespace detail

FAILSLOW_FUNC_DEF void attribute_waits(job_model& m, const trace::trace_set& set, const topology& topo,
                                       const wait_options& options, const kernel_classifier& classifier) {
  auto& w = m.waits;
  w = wait_attribution{};
  const std::size_t R = m.rank_count(), S = m.step_count(), n = set.traces.size();
  w.waited_ns = dense_array<double, 2>({R, S});
  w.caused_ns = dense_array<double, 2>({R, S});
  w.late_ns = dense_array<double, 2>({R, S});
  w.p2p_waited_ns = dense_array<double, 2>({R, S});
  w.phase_before_late.assign(R, std::string());
  if (n < 2 || S == 0) return;

  trace::collective_match_options mo;
  if (topo.size(parallel_dim::pp) > 1)
    mo.partners = [&topo](int rank) {
      std::vector<int> out;
      if (rank < 0 || rank >= topo.world_size()) return out;
      auto c = topo.coords(rank);
      const int stage = c[parallel_dim::pp];
      for (int s : {stage - 1, stage + 1})
        if (s >= 0 && s < topo.size(parallel_dim::pp)) {
          auto d = c;
          d[parallel_dim::pp] = s;
          out.push_back(topo.rank(d));
        }
      return out;
    };
  const auto matching = trace::match_collectives(set, mo);
  // Offsets from every instance, transfers included: they link the pipeline stages.
  const auto clocks = trace::estimate_clock_offsets(set, matching);
  std::vector<std::int64_t> offset(n, 0);
  for (std::size_t t = 0; t < n; ++t) {
    offset[t] = clocks.traces[t].offset_ns;
    w.clocks_aligned = w.clocks_aligned || clocks.traces[t].aligned;
  }
  w.collectives = matching.collectives_seen;
  w.instances = matching.instances.size();
  w.pairs = matching.pairs;
  w.unmatched = matching.unmatched;
  w.keys_skipped = matching.keys_skipped;
  if (matching.instances.empty()) return;
  w.available = true;

  // Per trace: its rank's row, the step index (into m.steps) of each event.
  std::vector<std::int64_t> row(n, -1);
  std::vector<std::vector<std::int32_t>> step_of(n);
  std::vector<detail::activity_lookup> lookups;
  lookups.reserve(n);
  for (std::size_t t = 0; t < n; ++t) {
    const auto& tr = set.traces[t];
    lookups.emplace_back(tr.data, set.names, classifier);
    if (tr.rank < 0 || static_cast<std::size_t>(tr.rank) >= R) continue;
    row[t] = tr.rank;
    const auto map = trace::map_steps(tr.data, set.names);
    step_of[t].assign(tr.data.events.size(), -1);
    for (std::size_t i = 0; i < tr.data.events.size(); ++i) {
      const auto k = map.step_of_event[i];
      if (k < 0) continue;
      const auto it = std::lower_bound(m.steps.begin(), m.steps.end(), map.steps[static_cast<std::size_t>(k)].number);
      if (it != m.steps.end() && *it == map.steps[static_cast<std::size_t>(k)].number)
        step_of[t][i] = static_cast<std::int32_t>(it - m.steps.begin());
    }
  }
  detail::record_transfers(m, set, matching, row, step_of);  // L3's link test reads them
  auto arrival = [&](const trace::collective_member& mem) {
    return set.traces[mem.trace].data.events[mem.event].start_ns - offset[mem.trace];
  };
  // Instances by their last arrival.
  std::vector<std::pair<std::int64_t, std::size_t>> order;
  order.reserve(matching.instances.size());
  for (std::size_t i = 0; i < matching.instances.size(); ++i) {
    std::int64_t last = std::numeric_limits<std::int64_t>::min();
    for (const auto& mem : matching.instances[i].members) last = std::max(last, arrival(mem));
    order.emplace_back(last, i);
  }
  std::sort(order.begin(), order.end());

  // Per trace: the aligned end of its previous instance and who made that instance end late.
  struct previous_state {
    std::int64_t end = std::numeric_limits<std::int64_t>::min();
    detail::blame_map blame;
  };
  std::vector<previous_state> prev(n);
  std::map<std::pair<std::size_t, std::size_t>, double> edges;  // (root trace, victim trace)
  std::vector<std::map<std::string, double>> before(n);
  for (const auto& [last_arrival, idx] : order) {
    const auto& inst = matching.instances[idx];
    std::size_t L = 0, S2 = inst.members.size();
    for (std::size_t j = 1; j < inst.members.size(); ++j)
      if (arrival(inst.members[j]) > arrival(inst.members[L])) L = j;
    for (std::size_t j = 0; j < inst.members.size(); ++j)
      if (j != L && (S2 == inst.members.size() || arrival(inst.members[j]) > arrival(inst.members[S2]))) S2 = j;
    const auto& ml = inst.members[L];
    const auto& ms = inst.members[S2];
    // L's excess over S: inherited where L's previous instance ended later than S's (whoever
    // held that one back), L's own where its work since then took longer.
    const double excess = static_cast<double>(arrival(ml) - arrival(ms));
    const auto& pl = prev[ml.trace];
    const auto& ps = prev[ms.trace];
    double inherited = 0;
    if (excess > 0 && pl.end != std::numeric_limits<std::int64_t>::min() && !pl.blame.empty()) {
      const double lead = ps.end == std::numeric_limits<std::int64_t>::min() ? 0.0 : static_cast<double>(ps.end);
      inherited = std::clamp(static_cast<double>(pl.end) - lead, 0.0, excess);
    }
    detail::blame_map blame;
    if (inherited > 0) {
      detail::add_blame(blame, pl.blame, inherited / excess);
      if (inherited < excess) detail::add_blame(blame, {{ml.trace, 1.0}}, 1 - inherited / excess);
    } else {
      blame = {{ml.trace, 1.0}};
    }
    detail::cap_blame(blame, options.max_blame_roots);
    const double own = excess - inherited;
    if (row[ml.trace] >= 0 && own > 0) {
      const auto k = step_of[ml.trace][ml.event];
      if (k >= 0) w.late_ns(static_cast<std::size_t>(row[ml.trace]), static_cast<std::size_t>(k)) += own;
      const auto what = lookups[ml.trace].before(arrival(ml) + offset[ml.trace]);
      if (!what.empty()) before[ml.trace][what] += own;
    }
    for (std::size_t j = 0; j < inst.members.size(); ++j) {
      const auto& mem = inst.members[j];
      const double wait = static_cast<double>(arrival(ml) - arrival(mem));
      prev[mem.trace].end = set.traces[mem.trace].data.events[mem.event].end_ns - offset[mem.trace];
      prev[mem.trace].blame = blame;
      if (j == L || wait <= 0 || row[mem.trace] < 0) continue;
      const auto k = step_of[mem.trace][mem.event];
      if (k < 0) continue;
      w.waited_ns(static_cast<std::size_t>(row[mem.trace]), static_cast<std::size_t>(k)) += wait;
      if (inst.point_to_point)
        w.p2p_waited_ns(static_cast<std::size_t>(row[mem.trace]), static_cast<std::size_t>(k)) += wait;
      for (const auto& [root, f] : blame) {
        if (row[root] < 0) continue;
        w.caused_ns(static_cast<std::size_t>(row[root]), static_cast<std::size_t>(k)) += wait * f;
        edges[{root, mem.trace}] += wait * f;
      }
    }
  }
  for (const auto& [key, ns] : edges)
    w.edges.push_back({static_cast<int>(row[key.first]), static_cast<int>(row[key.second]), ns});
  std::sort(w.edges.begin(), w.edges.end(), [](const auto& a, const auto& b) {
    return a.ns != b.ns ? a.ns > b.ns : std::tie(a.root, a.victim) < std::tie(b.root, b.victim);
  });
  for (std::size_t t = 0; t < n; ++t) {
    if (row[t] < 0 || before[t].empty()) continue;
    const auto top = std::max_element(before[t].begin(), before[t].end(),
                                      [](const auto& a, const auto& b) { return a.second < b.second; });
    w.phase_before_late[static_cast<std::size_t>(row[t])] = top->first;
  }
  // Victim counts need every edge; the kept list is bounded.
  w.victims.assign(R, 0);
  for (const auto& e : w.edges)
    if (e.root >= 0) ++w.victims[static_cast<std::size_t>(e.root)];
  if (w.edges.size() > options.max_edges) w.edges.resize(options.max_edges);
}

FAILSLOW_FUNC_DEF std::vector<double> pipeline_wait_change(const job_model& m, const topology& topo, std::size_t first,
                                                           std::size_t last) {
  const int pp = topo.size(parallel_dim::pp);
  const std::size_t R = m.rank_count(), S = m.step_count();
  if (!m.waits.available || pp < 2 || topo.world_size() != m.world_size || first > last || last >= S ||
      m.waits.p2p_waited_ns.shape()[0] != R)
    return {};
  std::vector<std::vector<double>> per_stage(static_cast<std::size_t>(pp));
  bool outside = false;
  for (std::size_t r = 0; r < R; ++r) {
    if (!m.has_rank[r]) continue;
    double in = 0, out = 0;
    std::size_t n_in = 0, n_out = 0;
    for (std::size_t k = 1; k < S; ++k) {
      if (std::isnan(m.iteration_ns(r, k))) continue;
      const double v = m.waits.p2p_waited_ns(r, k);
      if (k >= first && k <= last) {
        in += v;
        ++n_in;
      } else {
        out += v;
        ++n_out;
      }
    }
    if (n_in == 0 || n_out == 0) continue;
    outside = true;
    per_stage[static_cast<std::size_t>(topo.coordinate(static_cast<int>(r), parallel_dim::pp))].push_back(
        in / static_cast<double>(n_in) - out / static_cast<double>(n_out));
  }
  if (!outside) return {};
  std::vector<double> change;
  for (auto& v : per_stage) change.push_back(v.empty() ? std::numeric_limits<double>::quiet_NaN() : stats::median(v));
  return change;
}

FAILSLOW_FUNC_DEF l4_result find_holdbacks(const job_model& m, const topology& topo, const l4_options& o) {
  l4_result out;
  const auto& w = m.waits;
  if (!w.available) {
    if (m.source == "traces")
      out.notes.push_back("L4: no collective matched across ranks (" + std::to_string(w.collectives) +
                          " collective kernels), so no wait-for attribution");
    else
      out.notes.push_back("L4: who waited for whom needs traces (summaries keep no collective instances)");
    return out;
  }
  out.notes.push_back("L4: " + std::to_string(w.collectives - w.unmatched) + " of " + std::to_string(w.collectives) +
                      " collective kernels matched across ranks into " + std::to_string(w.instances) + " instances (" +
                      std::to_string(w.pairs) + " point-to-point pairs); clocks " +
                      (w.clocks_aligned ? "aligned on them" : "not aligned (no instance links the traces)"));
  if (w.unmatched > 0)
    out.notes.push_back("L4: " + std::to_string(w.unmatched) + " of " + std::to_string(w.collectives) +
                        " collective kernels were matched to no instance (" + std::to_string(w.keys_skipped) +
                        " process groups with differing counts, transfers without a partner) and carry no wait");
  const std::size_t R = m.rank_count(), S = m.step_count();
  if (topo.world_size() != m.world_size || S == 0) return out;
  std::vector<double> iters;
  for (std::size_t r = 0; r < R; ++r)
    for (std::size_t s = 0; s < S; ++s)
      if (std::isfinite(m.iteration_ns(r, s))) iters.push_back(m.iteration_ns(r, s));
  if (iters.empty()) return out;
  const double iter_med = stats::median(iters);
  const double floor_ns = o.min_excess_fraction * iter_med;
  std::vector<double> own(R, 0.0);
  for (std::size_t r = 0; r < R; ++r) {
    for (std::size_t s = 0; s < S; ++s) own[r] += w.late_ns(r, s);
    own[r] /= static_cast<double>(S);
  }
  // Per step, member x of `set`: late by the floor over the median of the others of `set`.
  std::vector<double> step_buf;
  auto elevated = [&](std::size_t x, const std::vector<int>& set, std::size_t s) {
    step_buf.clear();
    for (int q : set)
      if (static_cast<std::size_t>(q) != x) step_buf.push_back(w.late_ns(static_cast<std::size_t>(q), s));
    return w.late_ns(x, s) - stats::median(step_buf) >= floor_ns;
  };
  std::vector<holdback> cands;
  std::vector<double> pvals;
  std::vector<int> from_start;  // late from the first steps by less than from_start_min_excess_fraction
  std::vector<int> cascade;     // waited for others far longer than it was late itself
  std::size_t tested = 0;
  std::vector<double> buf;
  // Peers: the ranks in its place in the other data-parallel replicas (same stage and shard),
  // else its stage, else the job -- ranks whose arrivals the schedule makes alike.
  std::vector<std::vector<int>> peers_of(R);
  std::vector<double> peer_median(R, 0.0);  // of the peers' mean lateness
  std::vector<double> excess_of_all;        // each rank's mean lateness over its peers' median
  std::vector<double> excess(R, std::numeric_limits<double>::quiet_NaN());
  for (std::size_t r = 0; r < R; ++r) {
    if (!m.has_rank[r]) continue;
    auto& peers = peers_of[r];
    for (const dim_set vary :
         {dim_set{parallel_dim::dp}, dim_set::all() & ~dim_set{parallel_dim::pp}, dim_set::all()}) {
      peers.clear();
      for (int q : topo.group(static_cast<int>(r), vary))
        if (q != static_cast<int>(r) && m.has_rank[static_cast<std::size_t>(q)]) peers.push_back(q);
      if (peers.size() >= 3) break;
    }
    if (peers.size() < 3) continue;
    buf.clear();
    for (int q : peers) buf.push_back(own[static_cast<std::size_t>(q)]);
    peer_median[r] = stats::median(buf);
    excess[r] = own[r] - peer_median[r];
    excess_of_all.push_back(excess[r]);
  }
  // How much healthy ranks differ in their mean lateness, over the whole job: GPUs of one
  // model differ by a percent or so in speed, and in a few peers' means that spread is not
  // seen (a rank 1.7 % of a step later than its 3 peers, at z 6.6 against them, was the job's
  // usual spread: 1.4826 MAD over its 8 ranks).
  const double job_spread = excess_of_all.size() >= 3 ? stats::mad_normal(excess_of_all) : 0.0;
  // And over its stage, where the stage has min_stage_ranks ranks with peers, for a rank late
  // from the first steps (no change seen): a host-paced pipeline's last stage races at every
  // collective (healthy ranks 1-5 ms of a 54 ms step late over their peers, in 2-18 of 24
  // steps), its first stages do not, so the job's spread is that of the quiet stages.
  auto stage_spread = [&](std::size_t r) {
    if (topo.size(parallel_dim::pp) < 2) return 0.0;
    std::vector<double> stage;
    for (int q : topo.group(static_cast<int>(r), dim_set::all() & ~dim_set{parallel_dim::pp}))
      if (std::isfinite(excess[static_cast<std::size_t>(q)])) stage.push_back(excess[static_cast<std::size_t>(q)]);
    return stage.size() >= o.min_stage_ranks ? stats::mad_normal(stage) : 0.0;
  };
  for (std::size_t r = 0; r < R; ++r) {
    if (!m.has_rank[r] || r >= w.victims.size() || w.victims[r] == 0) continue;
    const auto& peers = peers_of[r];
    if (peers.size() < 3) continue;
    ++tested;
    const double med = peer_median[r];
    if (own[r] - med < floor_ns) continue;
    buf.clear();
    for (int q : peers) buf.push_back(own[static_cast<std::size_t>(q)]);
    const double spread_of_means = stats::mad_normal(buf);
    // Per step: the peers' deviations from their median (for the standard error) and the
    // steps where the rank is late by the floor over that median.
    std::vector<std::size_t> hit;
    buf.clear();
    for (std::size_t s = 0; s < S; ++s) {
      step_buf.clear();
      for (int q : peers) step_buf.push_back(w.late_ns(static_cast<std::size_t>(q), s));
      const double step_med = stats::median(step_buf);
      for (double v : step_buf) buf.push_back(v - step_med);
      if (w.late_ns(r, s) - step_med >= floor_ns) hit.push_back(s);
    }
    const double step_sd = stats::mad_normal(buf);
    const double scale =
        std::max({spread_of_means, step_sd / std::sqrt(static_cast<double>(S)), job_spread, 0.002 * iter_med});
    const double z = (own[r] - med) / scale;
    if (z < o.min_z || hit.size() < o.min_steps) continue;
    const std::size_t first = hit.front(), last = hit.back(), range = last - first + 1;
    if (static_cast<double>(hit.size()) < o.persistence * static_cast<double>(range)) continue;
    // Persistence against the peers' own rate of such steps (each against the others, the
    // rank among them): in a host-paced job every rank has runs of late steps.
    std::vector<int> members = peers;
    members.push_back(static_cast<int>(r));
    std::size_t peer_hits = 0;
    for (int q : peers)
      for (std::size_t s = 0; s < S; ++s) peer_hits += elevated(static_cast<std::size_t>(q), members, s) ? 1 : 0;
    const double rate =
        std::max(o.min_peer_rate, static_cast<double>(peer_hits) / static_cast<double>(peers.size() * S));
    double caused = 0, late = 0, waited = 0;
    for (std::size_t s = first; s <= last; ++s) {
      caused += w.caused_ns(r, s);
      late += w.late_ns(r, s);
      waited += w.waited_ns(r, s) - w.p2p_waited_ns(r, s);
    }
    // A rank that waited at collectives for others many times longer than it was late itself is
    // a link in their cascade: what it brings late is what remained of its waits.
    if (waited >= o.cascade_wait_ratio * late) {
      cascade.push_back(static_cast<int>(r));
      continue;
    }
    holdback h;
    h.rank = static_cast<int>(r);
    h.first = first;
    h.last = last;
    h.steps = hit.size();
    h.caused_ns_per_step = caused / static_cast<double>(range);
    h.victims = w.victims[r];
    h.per_victim_ns = h.caused_ns_per_step / static_cast<double>(h.victims);
    h.late_ns_per_step = late / static_cast<double>(range);
    h.peer_late_ns_per_step = med;
    h.z = z;
    h.peer_rate = rate;
    h.p_value = detail::binomial_upper_tail(hit.size(), range, rate);
    h.peers = peers;
    h.phase_before = r < w.phase_before_late.size() ? w.phase_before_late[r] : std::string();
    h.job_slowdown = std::max(0.0, h.late_ns_per_step - med) / iter_med;
    if (first < o.min_steps && (h.job_slowdown < o.from_start_min_excess_fraction ||
                                (own[r] - med) / std::max(scale, stage_spread(r)) < o.min_z)) {
      from_start.push_back(h.rank);
      continue;
    }
    for (const auto& e : w.edges)
      if (e.root == h.rank && h.top_victims.size() < 8) h.top_victims.emplace_back(e.victim, e.ns);
    pvals.push_back(h.p_value);
    cands.push_back(std::move(h));
  }
  if (!cascade.empty()) {
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.3g", o.cascade_wait_ratio);
    out.notes.push_back("L4: " + std::to_string(cascade.size()) + " rank(s) (" + detail::rank_list(cascade, 12) +
                        ") arrive last at collectives over steps where they waited for other ranks at least " + ratio +
                        "x as long: a link in another rank's cascade, not called holding the job back");
  }
  if (!from_start.empty()) {
    char floor[32];
    std::snprintf(floor, sizeof floor, "%.3g %%", o.from_start_min_excess_fraction * 100);
    out.notes.push_back("L4: " + std::to_string(from_start.size()) + " rank(s) (" + detail::rank_list(from_start, 12) +
                        ") arrive last from the first steps on, by less than " + floor +
                        " of a step over their peers or within the spread of their stage's ranks: the slowest of "
                        "like ranks, not a change; not called holding the job back");
  }
  // Benjamini-Hochberg over every rank tested (those not candidates count with p = 1).
  if (!cands.empty()) {
    pvals.resize(std::max(tested, pvals.size()), 1.0);
    const auto fdr = detect::false_discovery_control(pvals, o.fdr_q);
    for (std::size_t j : fdr.rejected)
      if (j < cands.size()) {
        cands[j].q_value = fdr.adjusted[j];
        out.holdbacks.push_back(std::move(cands[j]));
      }
  }
  std::sort(out.holdbacks.begin(), out.holdbacks.end(),
            [](const holdback& a, const holdback& b) { return a.caused_ns_per_step > b.caused_ns_per_step; });
  return out;
}

}  // namespace failslow::diagnose
