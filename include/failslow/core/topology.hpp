// failslow/core/topology.hpp -- ranks of a hybrid-parallel job and their groups.
//
// Synopsis
//   A job is laid out along five parallel dimensions: tensor (tp), context (cp), expert (ep),
//   data (dp) and pipeline (pp) parallelism, world size = tp * cp * ep * dp * pp. The order
//   string lists the dimensions from fastest- to slowest-varying rank coordinate, as in
//   Megatron-LM's RankGenerator; the default "tp-cp-ep-dp-pp" puts tp ranks next to each
//   other (within a node) and pp stages farthest apart:
//       rank = sum_d coord_d * stride_d,   stride_d = product of the sizes of faster dims.
//   Dimensions missing from the order string must have size 1 (they are appended slowest).
//   Here dp is the data-parallel degree besides ep; all five are independent.
//
//   The group of a rank along a set of dimensions V holds the ranks whose coordinates equal
//   its own in every dimension outside V; along one dimension d that is the communication
//   group of d (its DP group: same tp, cp, ep and pp coordinates). Groups of one kind are
//   numbered 0, 1, 2, ... in the order of their lowest rank, and named "dp:3", "tp:0";
//   "stage:s" is every rank of pipeline stage s.
// Complexity: coords/rank O(1); group and members O(group size); group_index O(1).
// Errors: sizes < 1, a world size that is not the product, an order string with unknown,
//   repeated or missing-but-needed dimensions throw failslow::invalid_argument; a rank
//   outside [0, world) or a coordinate outside its size throws failslow::domain_error.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/error.hpp"

namespace failslow {

enum class parallel_dim : std::uint8_t { tp = 0, cp = 1, ep = 2, dp = 3, pp = 4 };
/// Number of parallel_dim values (they are 0 .. parallel_dim_count - 1).
inline constexpr std::size_t parallel_dim_count = 5;
inline constexpr std::array<parallel_dim, parallel_dim_count> all_parallel_dims = {
    parallel_dim::tp, parallel_dim::cp, parallel_dim::ep, parallel_dim::dp, parallel_dim::pp};

constexpr std::string_view to_string(parallel_dim d) noexcept {
  constexpr std::array<std::string_view, parallel_dim_count> names = {"tp", "cp", "ep", "dp", "pp"};
  return names[static_cast<std::size_t>(d)];
}

/// Parses "tp", "cp", "ep", "dp" or "pp"; throws invalid_argument otherwise.
inline parallel_dim parse_parallel_dim(std::string_view s) {
  for (parallel_dim d : all_parallel_dims)
    if (to_string(d) == s) return d;
  throw invalid_argument("unknown parallel dimension '" + std::string(s) + "' (expected tp, cp, ep, dp or pp)");
}

/// A set of parallel dimensions, e.g. the dimensions along which ranks may differ.
class dim_set {
 public:
  constexpr dim_set() noexcept = default;
  constexpr dim_set(std::initializer_list<parallel_dim> dims) noexcept {
    for (parallel_dim d : dims) bits_ = static_cast<std::uint8_t>(bits_ | bit(d));
  }
  static constexpr dim_set all() noexcept { return from_bits(0x1F); }
  static constexpr dim_set from_bits(std::uint8_t b) noexcept {
    dim_set s;
    s.bits_ = static_cast<std::uint8_t>(b & 0x1F);
    return s;
  }

  constexpr bool contains(parallel_dim d) const noexcept { return (bits_ & bit(d)) != 0; }
  constexpr bool empty() const noexcept { return bits_ == 0; }
  constexpr std::uint8_t bits() const noexcept { return bits_; }
  constexpr dim_set operator|(dim_set o) const noexcept { return from_bits(bits_ | o.bits_); }
  constexpr dim_set operator&(dim_set o) const noexcept { return from_bits(bits_ & o.bits_); }
  constexpr dim_set operator~() const noexcept { return from_bits(static_cast<std::uint8_t>(~bits_)); }
  constexpr bool operator==(dim_set o) const noexcept { return bits_ == o.bits_; }
  constexpr bool operator!=(dim_set o) const noexcept { return bits_ != o.bits_; }

  /// "cp+ep+dp" (canonical order), "" for the empty set.
  FAILSLOW_FUNC std::string to_string() const;

 private:
  static constexpr std::uint8_t bit(parallel_dim d) noexcept {
    return static_cast<std::uint8_t>(1u << static_cast<unsigned>(d));
  }
  std::uint8_t bits_ = 0;
};

/// Parses "dp" or "cp+ep+dp"; throws invalid_argument on unknown or repeated dimensions.
FAILSLOW_FUNC dim_set parse_dim_set(std::string_view s);

/// Sizes of the five parallel dimensions (each >= 1).
struct parallel_sizes {
  int tp = 1, cp = 1, ep = 1, dp = 1, pp = 1;

  constexpr int operator[](parallel_dim d) const noexcept {
    switch (d) {
      case parallel_dim::tp:
        return tp;
      case parallel_dim::cp:
        return cp;
      case parallel_dim::ep:
        return ep;
      case parallel_dim::dp:
        return dp;
      case parallel_dim::pp:
        return pp;
    }
    return 1;
  }
  constexpr int& operator[](parallel_dim d) noexcept {
    switch (d) {
      case parallel_dim::tp:
        return tp;
      case parallel_dim::cp:
        return cp;
      case parallel_dim::ep:
        return ep;
      case parallel_dim::dp:
        return dp;
      case parallel_dim::pp:
        break;
    }
    return pp;
  }
};

/// Parses "tp=2,pp=4,dp=8" (any subset of tp, cp, ep, dp, pp; the others are 1); throws
/// invalid_argument on an unknown or repeated dimension, or a size that is not an integer >= 1.
FAILSLOW_FUNC parallel_sizes parse_parallel_sizes(std::string_view s);

/// Coordinates of a rank, indexed by parallel_dim.
struct coordinates {
  std::array<int, parallel_dim_count> values{};

  constexpr int operator[](parallel_dim d) const noexcept { return values[static_cast<std::size_t>(d)]; }
  constexpr int& operator[](parallel_dim d) noexcept { return values[static_cast<std::size_t>(d)]; }
  friend constexpr bool operator==(const coordinates& a, const coordinates& b) noexcept {
    for (std::size_t i = 0; i < a.values.size(); ++i)
      if (a.values[i] != b.values[i]) return false;
    return true;
  }
  friend constexpr bool operator!=(const coordinates& a, const coordinates& b) noexcept { return !(a == b); }
};

class topology {
 public:
  static constexpr std::string_view default_order = "tp-cp-ep-dp-pp";

  /// A single-rank job.
  topology() : topology(parallel_sizes{}) {}

  /// A job with these sizes; world size = their product.
  FAILSLOW_FUNC explicit topology(const parallel_sizes& sizes, std::string_view order = default_order);

  /// As above, and checks that `world_size` equals tp * cp * ep * dp * pp.
  FAILSLOW_FUNC topology(const parallel_sizes& sizes, std::string_view order, int world_size);

  int world_size() const noexcept { return world_; }
  int size(parallel_dim d) const noexcept { return sizes_[d]; }
  const parallel_sizes& sizes() const noexcept { return sizes_; }
  /// Distance in ranks between neighbours along d.
  int stride(parallel_dim d) const noexcept { return stride_[index(d)]; }
  /// Dimensions from fastest to slowest, all five.
  const std::array<parallel_dim, parallel_dim_count>& order() const noexcept { return order_; }
  /// The order as a string, all five dimensions, e.g. "tp-cp-ep-dp-pp".
  FAILSLOW_FUNC std::string order_string() const;

  FAILSLOW_FUNC coordinates coords(int rank) const;

  int coordinate(int rank, parallel_dim d) const {
    check_rank(rank);
    return (rank / stride(d)) % size(d);
  }

  FAILSLOW_FUNC int rank(const coordinates& c) const;

  /// Ranks whose coordinates equal rank's outside `vary`, ascending (rank itself included).
  FAILSLOW_FUNC std::vector<int> group(int rank, dim_set vary) const;

  /// The communication group of `rank` along d, ordered by the coordinate along d.
  std::vector<int> group(int rank, parallel_dim d) const { return group(rank, dim_set{d}); }

  /// Number of distinct groups along `vary` (world size / group size).
  int group_count(dim_set vary) const noexcept { return world_ / group_size(vary); }
  int group_count(parallel_dim d) const noexcept { return group_count(dim_set{d}); }

  FAILSLOW_FUNC int group_size(dim_set vary) const noexcept;

  /// Index of rank's group among the groups along `vary`, numbered by lowest rank.
  FAILSLOW_FUNC int group_index(int rank, dim_set vary) const;
  int group_index(int rank, parallel_dim d) const { return group_index(rank, dim_set{d}); }

  /// Members of group number `index` along `vary`, ascending.
  FAILSLOW_FUNC std::vector<int> group_members(dim_set vary, int index) const;
  std::vector<int> group_members(parallel_dim d, int index) const { return group_members(dim_set{d}, index); }

  /// "dp:3": the name of rank's communication group along d.
  std::string group_name(int rank, parallel_dim d) const {
    return std::string(to_string(d)) + ':' + std::to_string(group_index(rank, d));
  }

  /// All ranks of pipeline stage s, ascending.
  FAILSLOW_FUNC std::vector<int> stage(int s) const;

 private:
  static constexpr std::size_t index(parallel_dim d) noexcept { return static_cast<std::size_t>(d); }

  void check_rank(int rank) const {
    if (rank < 0 || rank >= world_)
      throw domain_error("topology: rank " + std::to_string(rank) + " outside [0, " + std::to_string(world_) + ")");
  }

  FAILSLOW_FUNC void parse_order(std::string_view order);

  FAILSLOW_FUNC std::vector<int> enumerate(int base, dim_set vary) const;

  parallel_sizes sizes_;
  int world_ = 1;
  std::array<parallel_dim, parallel_dim_count> order_{};
  std::array<int, parallel_dim_count> stride_{};
};

}  // namespace failslow

#if FAILSLOW_HEADER_ONLY
#include "failslow/core/impl/topology.ipp"
#endif
