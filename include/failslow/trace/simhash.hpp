// failslow/trace/simhash.hpp -- SimHash fingerprints of trace trees and the comparison of
// two workers' trees (KAT, section 3.1).
//
// Synopsis
//   Node feature: h = mix(FNV-1a-64(name), depth, child_bucket(child_count)), depth relative
//   to the fingerprinted subtree's root, child_bucket(c) = 0 for c = 0, else
//   1 + floor(log2 c) (capped at 32), so 1 / 2-3 / 4-7 / ... children look alike.
//   SimHash: V[b] = sum over nodes of (+1 if bit b of h is set, else -1); fingerprint bit b =
//   V[b] > 0. Similar trees have fingerprints at a small Hamming distance:
//       similarity(a, b) = 1 - popcount(a xor b) / 64.
//   subtree_simhash(tree, node, events, names)   fingerprint of one subtree
//   tree_simhash(tree, events, names)            of the whole forest (roots at depth 0)
//   compare_subtrees(A, a, B, b)                 what differs between two subtrees of two
//       workers' trees (e.g. the same ProfilerStep on two ranks): children are matched by
//       (name, occurrence among same-named siblings); a child without a partner is reported
//       (only_in_a / only_in_b: a rank that launched work nobody else launched, such as a
//       JIT compilation); matched pairs whose fingerprints differ are compared recursively.
//       Names are compared as strings, so the two trees may use different name tables.
//   find_named(tree, events, names, name)         nodes whose event has that name
// Complexity: subtree_simhash O(size * 64); compare_subtrees O(sum of compared subtree sizes
//   * depth) in the worst case, O(size) when the trees agree.
// Errors: node indices outside the tree throw invalid_argument.
#pragma once

#include <bitset>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/detail/splitmix.hpp"
#include "failslow/core/event.hpp"
#include "failslow/core/name_table.hpp"
#include "failslow/trace/tree.hpp"

namespace failslow::trace {

FAILSLOW_FUNC std::uint64_t fnv1a64(std::string_view s) noexcept;

FAILSLOW_FUNC std::uint32_t child_bucket(std::uint32_t c) noexcept;

inline std::uint64_t node_feature(std::string_view name, std::uint32_t depth, std::uint32_t child_count) noexcept {
  return failslow::detail::splitmix64(
      fnv1a64(name) ^
      failslow::detail::splitmix64((static_cast<std::uint64_t>(depth) << 8) | child_bucket(child_count)));
}

inline double simhash_similarity(std::uint64_t a, std::uint64_t b) noexcept {
  return 1.0 - static_cast<double>(std::bitset<64>(a ^ b).count()) / 64.0;
}

FAILSLOW_FUNC std::uint64_t subtree_simhash(const trace_tree& t, std::uint32_t node, const std::vector<event>& events,
                                            const name_table& names);

FAILSLOW_FUNC std::uint64_t tree_simhash(const trace_tree& t, const std::vector<event>& events,
                                         const name_table& names);

/// Nodes whose event is named `name`.
FAILSLOW_FUNC std::vector<std::uint32_t> find_named(const trace_tree& t, const std::vector<event>& events,
                                                    const name_table& names, std::string_view name);

/// One side of a comparison.
struct tree_ref {
  const trace_tree& tree;
  const std::vector<event>& events;
  const name_table& names;
};

struct tree_difference {
  enum class kind : std::uint8_t { only_in_a, only_in_b };
  /// Number of kind values (they are 0 .. kind_count - 1).
  static constexpr std::size_t kind_count = 2;
  kind what = kind::only_in_a;
  std::uint32_t node = 0;      ///< node in the tree of that side
  std::uint32_t parent_a = 0;  ///< the matched pair under which it was found
  std::uint32_t parent_b = 0;
};

struct tree_comparison {
  double similarity = 1.0;  ///< of the two compared subtrees' fingerprints
  std::vector<tree_difference> differences;
};

FAILSLOW_FUNC tree_comparison compare_subtrees(const tree_ref& a, std::uint32_t node_a, const tree_ref& b,
                                               std::uint32_t node_b);

}  // namespace failslow::trace

#if FAILSLOW_HEADER_ONLY
#include "failslow/trace/impl/simhash.ipp"
#endif
