// failslow/trace/impl/tree.ipp -- the definitions of trace/tree.hpp: included by that
// header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/core/event.hpp"
#include "failslow/io/trace_data.hpp"
#include "failslow/trace/tree.hpp"

namespace failslow::trace {
FAILSLOW_FUNC_DEF std::vector<std::uint32_t> trace_tree::children(std::uint32_t i) const {
  std::vector<std::uint32_t> out;
  const std::uint32_t end = i + nodes_[i].subtree_size;
  for (std::uint32_t c = i + 1; c < end; c += nodes_[c].subtree_size) out.push_back(c);
  return out;
}

FAILSLOW_FUNC_DEF void build_tree_into(trace_tree& t, const std::vector<event>& events,
                                       const std::vector<std::uint32_t>& indices) {
  if (indices.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    throw domain_error("build_tree: more than 2^31 - 1 events");
  for (const auto i : indices)
    if (i >= events.size()) throw invalid_argument("build_tree: event index out of range");
  auto before = [&](std::uint32_t a, std::uint32_t b) {
    const event& x = events[a];
    const event& y = events[b];
    if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
    if (x.end_ns != y.end_ns) return x.end_ns > y.end_ns;
    return a < b;
  };
  const std::vector<std::uint32_t>* order = &indices;
  t.stats_ = tree_stats{};
  t.roots_.clear();
  t.stats_.input_sorted = std::is_sorted(indices.begin(), indices.end(), before);
  if (!t.stats_.input_sorted) {
    t.sorted_ = indices;
    std::sort(t.sorted_.begin(), t.sorted_.end(), before);
    order = &t.sorted_;
  }
  auto& nodes = t.nodes_;
  nodes.resize(order->size());  // every node is overwritten below
  auto& stack = t.stack_;
  stack.clear();
  for (std::size_t k = 0; k < order->size(); ++k) {
    const std::uint32_t ei = (*order)[k];
    const event& e = events[ei];
    while (!stack.empty() && nodes[static_cast<std::size_t>(stack.back())].end_ns <= e.start_ns) stack.pop_back();
    tree_node& n = nodes[k];
    n = tree_node{};
    n.event = ei;
    n.start_ns = e.start_ns;
    n.end_ns = e.end_ns;
    if (e.start_ns == e.end_ns) ++t.stats_.zero_length;
    if (!stack.empty()) {
      tree_node& p = nodes[static_cast<std::size_t>(stack.back())];
      n.parent = stack.back();
      n.depth = p.depth + 1;
      if (n.start_ns == p.start_ns && e.end_ns == events[p.event].end_ns) ++t.stats_.identical;
      if (n.end_ns > p.end_ns) {
        ++t.stats_.partial_overlaps;
        t.stats_.clipped_ns += n.end_ns - p.end_ns;
        n.end_ns = p.end_ns;
      }
      ++p.child_count;
      p.children_ns += n.end_ns - n.start_ns;
    } else {
      t.roots_.push_back(static_cast<std::uint32_t>(k));
    }
    stack.push_back(static_cast<std::int32_t>(k));
  }
  for (std::size_t k = nodes.size(); k-- > 0;)
    if (nodes[k].parent >= 0) nodes[static_cast<std::size_t>(nodes[k].parent)].subtree_size += nodes[k].subtree_size;
}

FAILSLOW_FUNC_DEF std::vector<scoped_tree> build_trees(const io::trace_data& trace) {
  std::map<std::tuple<bool, std::int16_t, std::uint32_t>, std::vector<std::uint32_t>> groups;
  const auto& ev = trace.events;
  for (std::size_t i = 0; i < ev.size(); ++i) {
    const bool device_side = is_device_activity(ev[i].kind) || ev[i].device >= 0;
    groups[{device_side, device_side ? ev[i].device : std::int16_t{-1}, ev[i].stream}].push_back(
        static_cast<std::uint32_t>(i));
  }
  std::vector<scoped_tree> out;
  for (const auto& [key, idx] : groups) {
    scoped_tree s;
    s.device_side = std::get<0>(key);
    s.device = std::get<1>(key);
    s.stream = std::get<2>(key);
    s.tree = build_tree(ev, idx);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace failslow::trace