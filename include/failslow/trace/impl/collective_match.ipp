// failslow/trace/impl/collective_match.ipp -- the definitions of trace/collective_match.hpp: included by that
// header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "failslow/core/event.hpp"
#include "failslow/core/kernel_class.hpp"
#include "failslow/trace/collective_match.hpp"
#include "failslow/trace/trace_set.hpp"

namespace failslow::trace {

FAILSLOW_FUNC_DEF collective_matching match_collectives(const trace_set& set, const collective_match_options& options) {
  collective_matching out;
  const std::size_t n = set.traces.size();
  // key -> per trace: (start, event index) of its collectives.
  struct key_events {
    bool p2p = false;
    std::vector<std::vector<std::pair<std::int64_t, std::uint32_t>>> per_trace;
  };
  std::map<std::pair<name_id, bool>, key_events> keys;  // (key, point-to-point)
  // Per trace and event: +1 a send, -1 a receive ("Collective name"), 0 not known.
  std::vector<std::vector<std::int8_t>> direction(n);
  const auto send_id = set.names.find("send"), recv_id = set.names.find("recv");
  for (std::size_t t = 0; t < n; ++t) {
    const auto& d = set.traces[t].data;
    std::vector<name_id> key_of;
    for (const auto& c : d.collectives) {
      if (c.event >= d.events.size()) continue;
      if (c.pg_name != io::collective_args::no_name) {
        if (key_of.empty()) key_of.assign(d.events.size(), io::collective_args::no_name);
        key_of[c.event] = c.pg_name;
      }
      if (c.collective != io::collective_args::no_name && (c.collective == send_id || c.collective == recv_id)) {
        if (direction[t].empty()) direction[t].assign(d.events.size(), 0);
        direction[t][c.event] = c.collective == send_id ? 1 : -1;
      }
    }
    for (std::size_t i = 0; i < d.events.size(); ++i) {
      const auto& e = d.events[i];
      if (e.kind != event_kind::collective) continue;
      ++out.collectives_seen;
      const bool p2p = is_point_to_point(set.names.name(e.name));
      name_id key = key_of.empty() || key_of[i] == io::collective_args::no_name ? e.name : key_of[i];
      // Transfers and group collectives of one process group are matched apart.
      auto& k = keys[{key, p2p}];
      k.p2p = p2p;
      if (k.per_trace.empty()) k.per_trace.resize(n);
      k.per_trace[t].emplace_back(e.start_ns, static_cast<std::uint32_t>(i));
    }
  }
  // Point-to-point kernels of keys shared by more than two traces, per trace, for pairing.
  std::vector<std::vector<std::uint32_t>> loose(n);
  for (auto& [slot, k] : keys) {
    const name_id key = slot.first;
    std::size_t members = 0, count = 0, total = 0;
    bool consistent = true;
    for (auto& v : k.per_trace) {
      if (v.empty()) continue;
      std::sort(v.begin(), v.end());
      total += v.size();
      if (members++ == 0)
        count = v.size();
      else if (v.size() != count)
        consistent = false;
    }
    if (k.p2p && members > 2) {
      for (std::size_t t = 0; t < n; ++t)
        for (const auto& [s, i] : k.per_trace[t]) loose[t].push_back(i);
      continue;
    }
    if (members < 2 || !consistent) {
      if (members >= 2) ++out.keys_skipped;
      out.unmatched += total;
      continue;
    }
    ++out.keys_used;
    for (std::size_t j = 0; j < count; ++j) {
      collective_instance inst;
      inst.key = key;
      inst.ordinal = static_cast<std::uint32_t>(j);
      inst.point_to_point = k.p2p;
      for (std::size_t t = 0; t < n; ++t)
        if (!k.per_trace[t].empty()) inst.members.push_back({t, k.per_trace[t][j].second});
      out.pairs += k.p2p ? 1 : 0;
      out.instances.push_back(std::move(inst));
    }
  }
  // Pairing by common end time with the partners' transfers.
  std::size_t loose_total = 0;
  for (const auto& v : loose) loose_total += v.size();
  if (loose_total == 0) return out;
  if (!options.partners) {
    out.unmatched += loose_total;
    return out;
  }
  std::map<int, std::size_t> trace_of_rank;
  for (std::size_t t = 0; t < n; ++t)
    if (set.traces[t].rank >= 0) trace_of_rank.emplace(set.traces[t].rank, t);
  struct candidate {
    std::int64_t distance;
    std::size_t a, b;  // traces, a < b
    std::uint32_t ea, eb;
  };
  std::vector<candidate> cands;
  std::vector<std::int64_t> diffs;
  for (std::size_t a = 0; a < n; ++a) {
    if (loose[a].empty() || set.traces[a].rank < 0) continue;
    for (int partner : options.partners(set.traces[a].rank)) {
      const auto it = trace_of_rank.find(partner);
      if (it == trace_of_rank.end() || it->second <= a || loose[it->second].empty()) continue;
      const std::size_t b = it->second;
      std::vector<std::pair<std::int64_t, std::uint32_t>> ends_a, ends_b;
      for (auto i : loose[a]) ends_a.emplace_back(set.traces[a].data.events[i].end_ns, i);
      for (auto i : loose[b]) ends_b.emplace_back(set.traces[b].data.events[i].end_ns, i);
      std::sort(ends_a.begin(), ends_a.end());
      std::sort(ends_b.begin(), ends_b.end());
      // A send pairs with a receive: where the traces say which each kernel is, a send's end
      // is never compared with another send's (a periodic pipeline schedule lines up unrelated
      // ends one micro-batch off: 243 chance differences against 240 true ones on a 1F1B job
      // at low noise, 96 against none with the directions).
      auto dir = [&](std::size_t t, std::uint32_t i) -> int { return direction[t].empty() ? 0 : direction[t][i]; };
      auto compatible = [&](std::uint32_t i, std::uint32_t j) {
        const int x = dir(a, i), y = dir(b, j);
        return x == 0 || y == 0 || x == -y;
      };
      // The two clocks' offset: the difference of ends that most transfers agree on (within
      // the tolerance), among all differences up to max_pair_offset_ns.
      diffs.clear();
      std::size_t lo = 0;
      for (const auto& [end, i] : ends_a) {
        while (lo < ends_b.size() && ends_b[lo].first < end - options.max_pair_offset_ns) ++lo;
        for (std::size_t j = lo; j < ends_b.size() && ends_b[j].first <= end + options.max_pair_offset_ns; ++j)
          if (compatible(i, ends_b[j].second)) diffs.push_back(end - ends_b[j].first);
      }
      if (diffs.empty()) continue;
      std::sort(diffs.begin(), diffs.end());
      // The densest window of offset_resolution_ns; ties: the denser at the pairing tolerance
      // (centred on the window's median), then the smaller offset (a periodic schedule agrees
      // with itself one period off too).
      const std::int64_t fine = std::min(options.offset_resolution_ns, options.pair_tolerance_ns);
      std::size_t best = 0, best_wide = 0;
      std::int64_t delta = 0;
      for (std::size_t i = 0, j = 0; i < diffs.size(); ++i) {
        while (diffs[i] - diffs[j] > fine) ++j;
        const std::size_t count = i - j + 1;
        if (count < best) continue;
        const std::int64_t mid = diffs[j + (count - 1) / 2];  // the window's median
        const auto wide =
            static_cast<std::size_t>(std::upper_bound(diffs.begin(), diffs.end(), mid + options.pair_tolerance_ns / 2) -
                                     std::lower_bound(diffs.begin(), diffs.end(), mid - options.pair_tolerance_ns / 2));
        if (count > best || wide > best_wide || (wide == best_wide && std::llabs(mid) < std::llabs(delta))) {
          best = count;
          best_wide = wide;
          delta = mid;
        }
      }
      // A lone coincidence is no clock: two agreeing pairs at least.
      if (best < 2) continue;
      for (const auto& [end, i] : ends_a) {
        const std::int64_t target = end - delta;
        auto pos = std::lower_bound(ends_b.begin(), ends_b.end(), std::make_pair(target, std::uint32_t{0}));
        // The nearest compatible ends on either side.
        for (auto p = pos; p != ends_b.end() && p->first - target <= options.pair_tolerance_ns; ++p)
          if (compatible(i, p->second)) {
            cands.push_back({p->first - target, a, b, i, p->second});
            break;
          }
        for (auto p = pos; p != ends_b.begin();) {
          --p;
          if (target - p->first > options.pair_tolerance_ns) break;
          if (compatible(i, p->second)) {
            cands.push_back({target - p->first, a, b, i, p->second});
            break;
          }
        }
      }
    }
  }
  std::sort(cands.begin(), cands.end(), [](const candidate& x, const candidate& y) {
    return std::tie(x.distance, x.a, x.ea, x.b, x.eb) < std::tie(y.distance, y.a, y.ea, y.b, y.eb);
  });
  std::vector<std::vector<bool>> used(n);
  for (std::size_t t = 0; t < n; ++t) used[t].assign(set.traces[t].data.events.size(), false);
  std::uint32_t ordinal = 0;
  std::size_t paired = 0;
  for (const auto& c : cands) {
    if (used[c.a][c.ea] || used[c.b][c.eb]) continue;
    used[c.a][c.ea] = used[c.b][c.eb] = true;
    collective_instance inst;
    inst.key = set.traces[c.a].data.events[c.ea].name;
    inst.ordinal = ordinal++;
    inst.point_to_point = true;
    inst.members = {{c.a, c.ea}, {c.b, c.eb}};
    out.instances.push_back(std::move(inst));
    ++out.pairs;
    paired += 2;
  }
  out.unmatched += loose_total - paired;
  return out;
}

}  // namespace failslow::trace
