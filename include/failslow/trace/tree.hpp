// failslow/trace/tree.hpp -- trace trees (KAT, section 3.1): the nesting of events on one
// thread or one stream.
//
// Synopsis
//   trace_tree build_tree(events, indices)   the forest of events[indices[...]]
//   build_tree_into(tree, events, indices)   the same into an existing tree, reusing its memory
//   std::vector<scoped_tree> build_trees(trace)
//       one tree per host thread (cpu_op, runtime and host annotations, key = tid) and one
//       per GPU stream (kernels, collectives, memcpy, memset, GPU annotations, key =
//       (device, stream))
//   Construction (O(n) on sorted input, O(n log n) otherwise; sortedness is checked first):
//       sort by (start ascending, end descending, input order); a stack;
//       for each event: pop while top.end <= start; the top (if any) is the parent; push.
//   Intervals are half-open [start, end): an event starting exactly when another ends is
//   its sibling, not its child. Policy for the cases real traces contain, each counted in
//   tree_stats:
//     partial overlap   a child that ends after its parent (clock jitter, async ranges):
//                       its end is clipped to the parent's end in the tree (node end_ns),
//                       so self and subtree times stay consistent; the event is unchanged.
//                       clipped_ns sums what was cut.
//     zero length       start == end: always a leaf; the child of the innermost event that
//                       is open at that instant (started before or at it, ends after it).
//     identical         equal start and end: nested in input order (the first is the parent).
//   Node access: parent, children (child_count and iteration), depth (roots 0),
//   subtree_size (nodes, itself included; nodes are stored in preorder, so a subtree is the
//   range [i, i + subtree_size)), inclusive_ns (end - start after clipping: subtree time),
//   self_ns (inclusive minus the children's inclusive time).
// Complexity: O(n) time and memory after sorting; nodes are 48 bytes.
// Errors: indices outside events throw invalid_argument; more than 2^31 - 1 nodes throws
//   domain_error.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/event.hpp"
#include "failslow/io/trace_data.hpp"

namespace failslow::trace {

struct tree_node {
  std::uint32_t event = 0;         ///< index into the events the tree was built from
  std::int32_t parent = -1;        ///< node index, -1 for a root
  std::uint32_t depth = 0;         ///< 0 for a root
  std::uint32_t subtree_size = 1;  ///< nodes in the subtree, itself included
  std::uint32_t child_count = 0;
  std::uint32_t reserved = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;       ///< clipped to the parent's end
  std::int64_t children_ns = 0;  ///< sum of the children's inclusive time

  std::int64_t inclusive_ns() const noexcept { return end_ns - start_ns; }
  std::int64_t self_ns() const noexcept { return end_ns - start_ns - children_ns; }
};

struct tree_stats {
  std::uint64_t partial_overlaps = 0;
  std::int64_t clipped_ns = 0;
  std::uint64_t zero_length = 0;
  std::uint64_t identical = 0;
  bool input_sorted = false;  ///< the indices came sorted: no sort was needed
};

class trace_tree;

/// Builds into `t`, reusing its memory (for building many trees, e.g. one per step).
FAILSLOW_FUNC void build_tree_into(trace_tree& t, const std::vector<event>& events,
                                   const std::vector<std::uint32_t>& indices);

class trace_tree {
 public:
  const std::vector<tree_node>& nodes() const noexcept { return nodes_; }
  const tree_node& operator[](std::size_t i) const { return nodes_[i]; }
  std::size_t size() const noexcept { return nodes_.size(); }
  const std::vector<std::uint32_t>& roots() const noexcept { return roots_; }
  const tree_stats& stats() const noexcept { return stats_; }

  /// Node indices of the children of `i`, in start order.
  FAILSLOW_FUNC std::vector<std::uint32_t> children(std::uint32_t i) const;
  /// Maximum depth + 1 (0 for an empty tree).
  std::uint32_t height() const noexcept {
    std::uint32_t h = 0;
    for (const auto& n : nodes_) h = std::max(h, n.depth + 1);
    return h;
  }

 private:
  FAILSLOW_FRIEND_FUNC void build_tree_into(trace_tree&, const std::vector<event>&, const std::vector<std::uint32_t>&);
  std::vector<tree_node> nodes_;
  std::vector<std::uint32_t> roots_;
  tree_stats stats_;
  std::vector<std::uint32_t> sorted_;  // scratch, kept for reuse
  std::vector<std::int32_t> stack_;    // scratch, kept for reuse
};

inline trace_tree build_tree(const std::vector<event>& events, const std::vector<std::uint32_t>& indices) {
  trace_tree t;
  build_tree_into(t, events, indices);
  return t;
}

/// A tree and what it covers.
struct scoped_tree {
  bool device_side = false;  ///< a GPU stream (true) or a host thread (false)
  std::int16_t device = -1;
  std::uint32_t stream = 0;  ///< CUDA stream, or thread id
  trace_tree tree;
};

/// One tree per host thread and per GPU stream of a trace, host threads first, each group
/// ordered by (device, stream).
FAILSLOW_FUNC std::vector<scoped_tree> build_trees(const io::trace_data& trace);

}  // namespace failslow::trace

#if FAILSLOW_HEADER_ONLY
#include "failslow/trace/impl/tree.ipp"
#endif
