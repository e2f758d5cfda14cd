// failslow/trace/impl/simhash.ipp -- the definitions of trace/simhash.hpp: included by that
// header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <array>
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/core/event.hpp"
#include "failslow/core/name_table.hpp"
#include "failslow/trace/simhash.hpp"
#include "failslow/trace/tree.hpp"

namespace failslow::trace {
FAILSLOW_FUNC_DEF std::uint64_t fnv1a64(std::string_view s) noexcept {
  std::uint64_t h = 1469598103934665603ull;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

FAILSLOW_FUNC_DEF std::uint32_t child_bucket(std::uint32_t c) noexcept {
  std::uint32_t b = 0;
  while (c != 0 && b < 32) {
    ++b;
    c >>= 1;
  }
  return b;
}

namespace detail {
template <class = void>
inline std::uint64_t simhash_range(const trace_tree& t, std::uint32_t first, std::uint32_t last,
                                   std::uint32_t base_depth, const std::vector<event>& events,
                                   const name_table& names) {
  std::array<std::int64_t, 64> v{};
  for (std::uint32_t i = first; i < last; ++i) {
    const auto& n = t[i];
    const std::uint64_t h = node_feature(names.name(events[n.event].name), n.depth - base_depth, n.child_count);
    for (int b = 0; b < 64; ++b) v[static_cast<std::size_t>(b)] += ((h >> b) & 1u) ? 1 : -1;
  }
  std::uint64_t out = 0;
  for (int b = 0; b < 64; ++b)
    if (v[static_cast<std::size_t>(b)] > 0) out |= std::uint64_t{1} << b;
  return out;
}

}  // namespace detail
FAILSLOW_FUNC_DEF std::uint64_t subtree_simhash(const trace_tree& t, std::uint32_t node,
                                                const std::vector<event>& events, const name_table& names) {
  if (node >= t.size()) throw invalid_argument("subtree_simhash: node out of range");
  return detail::simhash_range(t, node, node + t[node].subtree_size, t[node].depth, events, names);
}

FAILSLOW_FUNC_DEF std::uint64_t tree_simhash(const trace_tree& t, const std::vector<event>& events,
                                             const name_table& names) {
  return detail::simhash_range(t, 0, static_cast<std::uint32_t>(t.size()), 0, events, names);
}

FAILSLOW_FUNC_DEF std::vector<std::uint32_t> find_named(const trace_tree& t, const std::vector<event>& events,
                                                        const name_table& names, std::string_view name) {
  std::vector<std::uint32_t> out;
  const auto id = names.find(name);
  if (!id) return out;
  for (std::uint32_t i = 0; i < t.size(); ++i)
    if (events[t[i].event].name == *id) out.push_back(i);
  return out;
}

FAILSLOW_FUNC_DEF tree_comparison compare_subtrees(const tree_ref& a, std::uint32_t node_a, const tree_ref& b,
                                                   std::uint32_t node_b) {
  if (node_a >= a.tree.size() || node_b >= b.tree.size()) throw invalid_argument("compare_subtrees: node out of range");
  tree_comparison out;
  const auto ha = subtree_simhash(a.tree, node_a, a.events, a.names);
  const auto hb = subtree_simhash(b.tree, node_b, b.events, b.names);
  out.similarity = simhash_similarity(ha, hb);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> work{{node_a, node_b}};
  while (!work.empty()) {
    const auto [x, y] = work.back();
    work.pop_back();
    // children keyed by (name, occurrence)
    std::map<std::pair<std::string_view, std::uint32_t>, std::uint32_t> cb;
    std::map<std::string_view, std::uint32_t> seen_b, seen_a;
    for (const auto c : b.tree.children(y)) {
      const auto nm = b.names.name(b.events[b.tree[c].event].name);
      cb.emplace(std::make_pair(nm, seen_b[nm]++), c);
    }
    for (const auto c : a.tree.children(x)) {
      const auto nm = a.names.name(a.events[a.tree[c].event].name);
      const auto it = cb.find({nm, seen_a[nm]++});
      if (it == cb.end()) {
        out.differences.push_back({tree_difference::kind::only_in_a, c, x, y});
        continue;
      }
      const std::uint32_t d = it->second;
      cb.erase(it);
      if (a.tree[c].subtree_size == 1 && b.tree[d].subtree_size == 1) continue;
      if (subtree_simhash(a.tree, c, a.events, a.names) != subtree_simhash(b.tree, d, b.events, b.names) ||
          a.tree[c].subtree_size != b.tree[d].subtree_size)
        work.emplace_back(c, d);
    }
    for (const auto& [key, d] : cb) out.differences.push_back({tree_difference::kind::only_in_b, d, x, y});
  }
  return out;
}

}  // namespace failslow::trace