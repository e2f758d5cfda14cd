// failslow/core/impl/topology.ipp -- the definitions of core/topology.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/core/topology.hpp"

namespace failslow {

FAILSLOW_FUNC_DEF dim_set parse_dim_set(std::string_view s) {
  dim_set out;
  while (true) {
    const auto plus = s.find('+');
    const parallel_dim d = parse_parallel_dim(s.substr(0, plus));
    if (out.contains(d)) throw invalid_argument("dimension set repeats '" + std::string(to_string(d)) + "'");
    out = out | dim_set{d};
    if (plus == std::string_view::npos) break;
    s.remove_prefix(plus + 1);
  }
  return out;
}

FAILSLOW_FUNC_DEF parallel_sizes parse_parallel_sizes(std::string_view s) {
  parallel_sizes out;
  dim_set seen;
  while (!s.empty()) {
    const auto comma = s.find(',');
    const std::string_view item = s.substr(0, comma);
    const auto eq = item.find('=');
    if (eq == std::string_view::npos)
      throw invalid_argument("layout '" + std::string(item) + "': expected dim=size, e.g. tp=2,pp=4,dp=8");
    const parallel_dim d = parse_parallel_dim(item.substr(0, eq));
    if (seen.contains(d)) throw invalid_argument("layout repeats '" + std::string(to_string(d)) + "'");
    seen = seen | dim_set{d};
    const std::string_view num = item.substr(eq + 1);
    long long v = 0;
    if (num.empty() || num.size() > 9) v = -1;
    for (char c : num) v = c >= '0' && c <= '9' && v >= 0 ? v * 10 + (c - '0') : -1;
    if (v < 1) throw invalid_argument("layout '" + std::string(item) + "': the size must be an integer >= 1");
    out[d] = static_cast<int>(v);
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return out;
}

FAILSLOW_FUNC_DEF std::string dim_set::to_string() const {
  std::string s;
  for (parallel_dim d : all_parallel_dims) {
    if (!contains(d)) continue;
    if (!s.empty()) s += '+';
    s += failslow::to_string(d);
  }
  return s;
}

FAILSLOW_FUNC_DEF topology::topology(const parallel_sizes& sizes, std::string_view order) : sizes_(sizes) {
  std::int64_t world = 1;
  for (parallel_dim d : all_parallel_dims) {
    if (sizes_[d] < 1)
      throw invalid_argument("topology: " + std::string(to_string(d)) + " = " + std::to_string(sizes_[d]) +
                             ", every size must be >= 1");
    world *= sizes_[d];
    if (world > std::numeric_limits<int>::max())
      throw invalid_argument("topology: world size exceeds " + std::to_string(std::numeric_limits<int>::max()) +
                             " ranks");
  }
  world_ = static_cast<int>(world);
  parse_order(order);
  int stride = 1;
  for (parallel_dim d : order_) {
    stride_[index(d)] = stride;
    stride *= sizes_[d];
  }
}

FAILSLOW_FUNC_DEF topology::topology(const parallel_sizes& sizes, std::string_view order, int world_size)
    : topology(sizes, order) {
  if (world_size != world_)
    throw invalid_argument("topology: world size " + std::to_string(world_size) +
                           " != tp*cp*ep*dp*pp = " + std::to_string(sizes.tp) + "*" + std::to_string(sizes.cp) + "*" +
                           std::to_string(sizes.ep) + "*" + std::to_string(sizes.dp) + "*" + std::to_string(sizes.pp) +
                           " = " + std::to_string(world_));
}

FAILSLOW_FUNC_DEF std::string topology::order_string() const {
  std::string s;
  for (parallel_dim d : order_) {
    if (!s.empty()) s += '-';
    s += to_string(d);
  }
  return s;
}

FAILSLOW_FUNC_DEF coordinates topology::coords(int rank) const {
  check_rank(rank);
  coordinates c;
  for (parallel_dim d : all_parallel_dims) c[d] = (rank / stride(d)) % size(d);
  return c;
}

FAILSLOW_FUNC_DEF int topology::rank(const coordinates& c) const {
  int r = 0;
  for (parallel_dim d : all_parallel_dims) {
    if (c[d] < 0 || c[d] >= size(d))
      throw domain_error("topology: " + std::string(to_string(d)) + " coordinate " + std::to_string(c[d]) +
                         " outside [0, " + std::to_string(size(d)) + ")");
    r += c[d] * stride(d);
  }
  return r;
}

FAILSLOW_FUNC_DEF std::vector<int> topology::group(int rank, dim_set vary) const {
  check_rank(rank);
  int base = rank;
  for (parallel_dim d : all_parallel_dims)
    if (vary.contains(d)) base -= coordinate(rank, d) * stride(d);
  return enumerate(base, vary);
}

FAILSLOW_FUNC_DEF int topology::group_size(dim_set vary) const noexcept {
  int n = 1;
  for (parallel_dim d : all_parallel_dims)
    if (vary.contains(d)) n *= size(d);
  return n;
}

FAILSLOW_FUNC_DEF int topology::group_index(int rank, dim_set vary) const {
  check_rank(rank);
  // Mixed-radix number of the fixed coordinates, fastest first: monotone in the lowest rank.
  int idx = 0, radix = 1;
  for (parallel_dim d : order_) {
    if (vary.contains(d)) continue;
    idx += coordinate(rank, d) * radix;
    radix *= size(d);
  }
  return idx;
}

FAILSLOW_FUNC_DEF std::vector<int> topology::group_members(dim_set vary, int index) const {
  if (index < 0 || index >= group_count(vary))
    throw domain_error("topology: group index " + std::to_string(index) + " outside [0, " +
                       std::to_string(group_count(vary)) + ") for " + vary.to_string());
  int base = 0;
  for (parallel_dim d : order_) {
    if (vary.contains(d)) continue;
    base += (index % size(d)) * stride(d);
    index /= size(d);
  }
  return enumerate(base, vary);
}

FAILSLOW_FUNC_DEF std::vector<int> topology::stage(int s) const {
  if (s < 0 || s >= sizes_.pp)
    throw domain_error("topology: stage " + std::to_string(s) + " outside [0, " + std::to_string(sizes_.pp) + ")");
  return group_members(~dim_set{parallel_dim::pp}, s);
}

FAILSLOW_FUNC_DEF void topology::parse_order(std::string_view order) {
  dim_set seen;
  std::size_t n = 0;
  std::string_view rest = order;
  while (!rest.empty()) {
    const auto dash = rest.find('-');
    const std::string_view token = rest.substr(0, dash);
    parallel_dim d;
    try {
      d = parse_parallel_dim(token);
    } catch (const invalid_argument&) {
      throw invalid_argument("topology: order '" + std::string(order) + "' has unknown dimension '" +
                             std::string(token) + "' (expected tp, cp, ep, dp, pp joined by '-')");
    }
    if (seen.contains(d))
      throw invalid_argument("topology: order '" + std::string(order) + "' repeats '" + std::string(token) + "'");
    seen = seen | dim_set{d};
    order_[n++] = d;
    if (dash == std::string_view::npos) break;
    rest.remove_prefix(dash + 1);
    if (rest.empty()) throw invalid_argument("topology: order '" + std::string(order) + "' ends with '-'");
  }
  if (n == 0) throw invalid_argument("topology: empty order string");
  for (parallel_dim d : all_parallel_dims) {
    if (seen.contains(d)) continue;
    if (size(d) != 1)
      throw invalid_argument("topology: order '" + std::string(order) + "' lacks " + std::string(to_string(d)) +
                             " but " + std::string(to_string(d)) + " = " + std::to_string(size(d)));
    order_[n++] = d;
  }
}

FAILSLOW_FUNC_DEF std::vector<int> topology::enumerate(int base, dim_set vary) const {
  std::vector<int> out;
  out.reserve(static_cast<std::size_t>(group_size(vary)));
  out.push_back(base);
  // Fastest dimension innermost, so the ranks come out ascending.
  for (parallel_dim d : order_) {
    if (!vary.contains(d)) continue;
    const std::size_t n = out.size();
    for (int k = 1; k < size(d); ++k)
      for (std::size_t i = 0; i < n; ++i) out.push_back(out[i] + k * stride(d));
  }
  return out;
}

}  // namespace failslow
