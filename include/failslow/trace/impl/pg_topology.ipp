// failslow/trace/impl/pg_topology.ipp -- the definitions of trace/pg_topology.hpp: included by that
// header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "failslow/core/topology.hpp"
#include "failslow/io/trace_data.hpp"
#include "failslow/trace/pg_topology.hpp"

namespace failslow::trace {

namespace detail {

/// How a process-group description is read.
enum class pg_role : std::uint8_t {
  undescribed,  ///< read structurally
  dimension,    ///< one of `alts` (first preferred), a hard constraint
  weak_dp,      ///< dp_shard / dp_replicate: dp when it is the only data-parallel kind
  ignored,      ///< a known group that is no single dimension
  unknown       ///< a description not recognised: ignored
};

struct pg_reading {
  pg_role role = pg_role::unknown;
  std::array<dim_set, 3> alts{};
  int n_alts = 0;
};

inline std::string pg_lower(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) out += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  // Trim blanks.
  const auto b = out.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  const auto e = out.find_last_not_of(" \t\r\n");
  return out.substr(b, e - b + 1);
}

inline bool pg_starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
inline bool pg_ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

template <class = void>
inline pg_reading read_pg_description(std::string_view desc) {
  using D = parallel_dim;
  pg_reading r;
  auto one = [&](dim_set a) {
    r.role = pg_role::dimension;
    r.alts[0] = a;
    r.n_alts = 1;
  };
  auto two = [&](dim_set a, dim_set b) {
    one(a);
    r.alts[1] = b;
    r.n_alts = 2;
  };
  std::string s = pg_lower(desc);
  if (pg_starts_with(s, "mesh_")) s.erase(0, 5);
  if (pg_ends_with(s, "_gloo")) s.erase(s.size() - 5);
  auto is = [&](std::initializer_list<std::string_view> names) {
    return std::find(names.begin(), names.end(), std::string_view(s)) != names.end();
  };
  bool mesh_dim = pg_starts_with(s, "dim_") && s.size() > 4;
  for (std::size_t i = 4; mesh_dim && i < s.size(); ++i) mesh_dim = s[i] >= '0' && s[i] <= '9';
  if (s.empty() || mesh_dim || is({"undefined", "default_pg", "default"})) {
    r.role = pg_role::undescribed;
  } else if (is({"tensor_model_parallel_group", "tp", "tensor", "tensor_parallel"})) {
    one({D::tp});
  } else if (is({"context_parallel_group", "cp", "context", "context_parallel"})) {
    one({D::cp});
  } else if (is({"expert_model_parallel_group", "ep", "expert", "expert_parallel"})) {
    one({D::ep});
  } else if (is({"pipeline_model_parallel_group", "pp", "pipeline", "pipeline_parallel"})) {
    one({D::pp});
  } else if (is({"data_parallel_group", "dp", "data", "data_parallel", "ddp", "fsdp"})) {
    two({D::dp}, {D::ep, D::dp});
  } else if (is({"data_parallel_group_with_cp", "data_parallel_group_with_cp_ag", "dp_cp", "cp_dp"})) {
    two({D::cp, D::dp}, {D::cp, D::ep, D::dp});
  } else if (is({"expert_data_parallel_group"})) {
    two({D::dp}, {D::cp, D::dp});
  } else if (is({"dp_shard", "dp_replicate", "shard", "replicate"})) {
    r.role = pg_role::weak_dp;
    r.alts[0] = dim_set{D::dp};
    r.n_alts = 1;
  } else if (is({"embedding_group", "position_embedding_group", "model_parallel_group",
                 "tensor_and_data_parallel_group", "tensor_and_data_parallel_group_with_cp",
                 "tensor_and_context_parallel_group", "expert_tensor_parallel_group",
                 "expert_tensor_and_model_parallel_group", "expert_tensor_model_pipeline_parallel_group",
                 "intra_distributed_optimizer_instance_group", "amax_reduction_group", "dp_shard_cp",
                 "dp_replicate_shard"}) ||
             pg_starts_with(s, "hierarchical_") || pg_starts_with(s, "hybrid_dp_cp_group") ||
             pg_starts_with(s, "intra_partial_") || pg_starts_with(s, "inter_partial_")) {
    r.role = pg_role::ignored;
  }
  return r;
}

/// "[0, 2, 4, ..., 14] (8 ranks)" style, at most `max_shown` ranks.
template <class = void>
inline std::string pg_rank_text(const std::vector<int>& ranks, std::size_t max_shown = 8) {
  std::string s = "[";
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i) s += ", ";
    if (ranks.size() > max_shown && i == max_shown - 1) {
      s += "..., " + std::to_string(ranks.back());
      break;
    }
    s += std::to_string(ranks[i]);
  }
  s += ']';
  if (ranks.size() > max_shown) s += " (" + std::to_string(ranks.size()) + " ranks)";
  return s;
}

/// Constant stride of sorted distinct ranks (>= 2 of them), else 0.
inline std::int64_t pg_stride(const std::vector<int>& ranks) {
  if (ranks.size() < 2) return 0;
  const std::int64_t s = static_cast<std::int64_t>(ranks[1]) - ranks[0];
  for (std::size_t i = 2; i < ranks.size(); ++i)
    if (static_cast<std::int64_t>(ranks[i]) - ranks[i - 1] != s) return 0;
  return s;
}

/// Whether a group of n ranks at stride s starting at r0 can be one dimension's group.
inline bool pg_dimension_like(std::int64_t r0, std::int64_t n, std::int64_t s, std::int64_t world) {
  if (n < 2 || s < 1 || s * n > world || world % (s * n) != 0) return false;
  return (r0 / s) % n == 0;
}

/// Pooled, de-duplicated groups of one description (as first written).
struct pg_kind {
  std::string desc;     ///< the description as written (first seen)
  std::string example;  ///< "pg 3 [0, 1]" of the first group seen
  pg_reading reading;
  std::vector<std::vector<int>> groups;  ///< sorted rank lists, distinct
};

inline std::string pg_kind_label(const pg_kind& k) { return k.desc.empty() ? "(no description)" : k.desc; }

template <class = void>
inline std::string pg_sizes_text(const std::vector<std::vector<int>>& groups) {
  std::set<std::size_t> sizes;
  for (const auto& g : groups) sizes.insert(g.size());
  std::string s;
  for (auto n : sizes) {
    if (!s.empty()) s += "/";
    s += std::to_string(n);
  }
  return s;
}

inline std::string pg_count_text(std::size_t n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

template <class = void>
inline std::string pg_order_text(const std::array<parallel_dim, parallel_dim_count>& order) {
  std::string s;
  for (parallel_dim d : order) {
    if (!s.empty()) s += '-';
    s += to_string(d);
  }
  return s;
}

template <class = void>
inline std::string pg_sizes_line(const std::array<int, parallel_dim_count>& sz) {
  std::string s;
  for (parallel_dim d : all_parallel_dims) {
    if (!s.empty()) s += ' ';
    s += std::string(to_string(d)) + "=" + std::to_string(sz[static_cast<std::size_t>(d)]);
  }
  return s;
}

/// A hard constraint spanning (possibly) several dimensions: the group must equal the group
/// of its first rank along one of the alternatives.
struct pg_multi {
  const std::vector<int>* ranks = nullptr;
  const pg_reading* reading = nullptr;
  std::size_t kind = 0;
};

/// Undescribed groups that look like one dimension, by (size, stride).
struct pg_structural {
  std::int64_t n = 0, s = 0;
  std::size_t groups = 0;
  std::string example;
};

struct pg_score {
  std::int64_t explained = 0;  ///< undescribed groups explained (more is better)
  int fallback = 0;            ///< described groups matched only by a fallback reading
  int unattested = 0;          ///< dimensions of size > 1 no group attests
  int guessed_cp_ep = 0;       ///< cp / ep of size > 1 attested only by undescribed groups
  std::uint8_t attested = 0;   ///< dims (bits) attested by some group
  /// Better ignoring the order and the enumeration position.
  bool same_fit(const pg_score& o) const {
    return explained == o.explained && fallback == o.fallback && unattested == o.unattested &&
           guessed_cp_ep == o.guessed_cp_ep;
  }
  bool better_fit(const pg_score& o) const {
    if (explained != o.explained) return explained > o.explained;
    if (fallback != o.fallback) return fallback < o.fallback;
    if (unattested != o.unattested) return unattested < o.unattested;
    return guessed_cp_ep < o.guessed_cp_ep;
  }
};

}  // namespace detail

FAILSLOW_FUNC_DEF std::optional<inferred_topology> infer_topology(const std::vector<io::distributed_info>& infos) {
  using namespace detail;
  constexpr std::size_t n_dims = static_cast<std::size_t>(parallel_dim_count);
  auto idx = [](parallel_dim d) { return static_cast<std::size_t>(d); };

  // World size.
  std::int64_t world64 = -1;
  std::set<std::int64_t> stated_worlds;
  for (const auto& info : infos) {
    world64 = std::max(world64, info.world_size);
    if (info.world_size >= 1) stated_worlds.insert(info.world_size);
  }
  if (world64 < 1 || world64 > std::numeric_limits<int>::max()) return std::nullopt;
  const int world = static_cast<int>(world64);

  std::vector<std::string> evidence;
  {
    std::string w = "world size " + std::to_string(world) + ": the largest distributedInfo.world_size of " +
                    pg_count_text(infos.size(), "trace");
    if (stated_worlds.size() > 1) {
      w += " (they disagree:";
      for (auto v : stated_worlds) w += " " + std::to_string(v);
      w += ")";
    }
    evidence.push_back(std::move(w));
  }

  // Pool the groups by description, skipping malformed ones.
  std::vector<pg_kind> kinds;
  std::map<std::string, std::size_t, std::less<>> kind_of;  // lower-cased description -> kinds index
  std::set<std::pair<std::size_t, std::vector<int>>> seen;
  std::map<std::string, std::size_t> skipped;  // reason -> count
  for (const auto& info : infos) {
    for (const auto& pg : info.pg_config) {
      if (pg.ranks.empty()) {
        ++skipped["empty rank list"];
        continue;
      }
      if (pg.size < 1) {
        ++skipped["pg_size missing or < 1"];
        continue;
      }
      if (pg.size != static_cast<std::int64_t>(pg.ranks.size())) {
        ++skipped["pg_size != number of ranks"];
        continue;
      }
      std::vector<int> ranks;
      ranks.reserve(pg.ranks.size());
      bool in_range = true;
      for (auto r : pg.ranks) {
        if (r < 0 || r >= world) {
          in_range = false;
          break;
        }
        ranks.push_back(static_cast<int>(r));
      }
      if (!in_range) {
        ++skipped["rank outside [0, world)"];
        continue;
      }
      std::sort(ranks.begin(), ranks.end());
      if (std::adjacent_find(ranks.begin(), ranks.end()) != ranks.end()) {
        ++skipped["repeated rank"];
        continue;
      }
      const std::string key = pg_lower(pg.desc);
      auto it = kind_of.find(key);
      if (it == kind_of.end()) {
        it = kind_of.emplace(key, kinds.size()).first;
        pg_kind k;
        k.desc = pg.desc;
        k.example = "pg " + (pg.name.empty() ? std::string("?") : pg.name) + " " + pg_rank_text(ranks);
        k.reading = read_pg_description(pg.desc);
        kinds.push_back(std::move(k));
      }
      if (seen.emplace(it->second, ranks).second) kinds[it->second].groups.push_back(std::move(ranks));
    }
  }
  if (!skipped.empty()) {
    std::string s = "skipped malformed process groups:";
    bool first = true;
    for (const auto& [why, n] : skipped) {
      s += (first ? " " : ", ") + why + " (" + std::to_string(n) + ")";
      first = false;
    }
    evidence.push_back(std::move(s));
  }

  // Weak data-parallel kinds count only alone.
  {
    bool strong_dp = false;
    std::size_t weak = 0;
    for (const auto& k : kinds) {
      if (k.reading.role == pg_role::dimension && k.reading.alts[0].contains(parallel_dim::dp)) strong_dp = true;
      if (k.reading.role == pg_role::weak_dp) ++weak;
    }
    for (auto& k : kinds) {
      if (k.reading.role != pg_role::weak_dp) continue;
      if (!strong_dp && weak == 1) {
        k.reading.role = pg_role::dimension;
        evidence.push_back(pg_kind_label(k) + ": the only data-parallel groups described, read as dp");
      } else {
        k.reading.role = pg_role::ignored;
        evidence.push_back(pg_kind_label(k) + ": ignored, part of the data-parallel dimension only (" +
                           (strong_dp ? "a dp group is described" : "dp_shard and dp_replicate both present") + ")");
      }
    }
  }

  // Constraints.
  std::array<std::int64_t, n_dims> fixed_size{}, fixed_stride{};  // 0 = free; stride 0 = any
  std::array<std::size_t, n_dims> fixed_kind{};
  std::vector<pg_multi> multi;
  std::map<std::pair<std::int64_t, std::int64_t>, pg_structural> structural;
  std::size_t hard_groups = 0;
  for (std::size_t ki = 0; ki < kinds.size(); ++ki) {
    const auto& k = kinds[ki];
    switch (k.reading.role) {
      case pg_role::ignored:
        evidence.push_back(pg_kind_label(k) + ": " + pg_count_text(k.groups.size(), "group") +
                           " ignored (not a single parallel dimension)");
        continue;
      case pg_role::unknown:
        evidence.push_back(pg_kind_label(k) + ": " + pg_count_text(k.groups.size(), "group") +
                           " ignored (unknown description)");
        continue;
      case pg_role::undescribed: {
        std::size_t whole = 0, single = 0, other = 0;
        for (const auto& g : k.groups) {
          const auto n = static_cast<std::int64_t>(g.size());
          if (n == world) {
            ++whole;
          } else if (n == 1) {
            ++single;
          } else {
            const std::int64_t s = pg_stride(g);
            if (s > 0 && pg_dimension_like(g[0], n, s, world)) {
              auto& st = structural[{n, s}];
              st.n = n;
              st.s = s;
              if (st.groups++ == 0) st.example = "pg of " + pg_kind_label(k) + " " + pg_rank_text(g);
            } else {
              ++other;
            }
          }
        }
        if (whole)
          evidence.push_back(pg_kind_label(k) + ": " + pg_count_text(whole, "group") + " of all " +
                             std::to_string(world) + " ranks (says nothing about the layout)");
        if (single)
          evidence.push_back(pg_kind_label(k) + ": " + pg_count_text(single, "group") + " of one rank ignored");
        if (other)
          evidence.push_back(pg_kind_label(k) + ": " + pg_count_text(other, "group") +
                             " ignored (no constant stride that fits one dimension)");
        continue;
      }
      case pg_role::weak_dp:  // resolved above
      case pg_role::dimension:
        break;
    }
    const auto& rd = k.reading;
    hard_groups += k.groups.size();
    bool single_dim = rd.n_alts == 1;
    parallel_dim the_dim = parallel_dim::tp;
    if (single_dim) {
      int count = 0;
      for (parallel_dim d : all_parallel_dims)
        if (rd.alts[0].contains(d)) {
          the_dim = d;
          ++count;
        }
      single_dim = count == 1;
    }
    for (const auto& g : k.groups) {
      const auto n = static_cast<std::int64_t>(g.size());
      if (world % n != 0) return std::nullopt;  // no layout has a group of this size
      if (!single_dim) {
        multi.push_back({&g, &rd, ki});
        continue;
      }
      const std::int64_t s = n == 1 ? 0 : pg_stride(g);
      if (n > 1 && (s == 0 || !pg_dimension_like(g[0], n, s, world))) return std::nullopt;  // no layout fits
      auto& fs = fixed_size[idx(the_dim)];
      auto& ft = fixed_stride[idx(the_dim)];
      if (fs == 0) {
        fs = n;
        ft = s;
        fixed_kind[idx(the_dim)] = ki;
      } else if (fs != n || ft != s) {
        return std::nullopt;  // groups of one dimension disagree
      }
    }
  }
  if (hard_groups == 0 && structural.empty()) return std::nullopt;  // e.g. only the default group

  // Candidate sizes of the free dimensions.
  std::int64_t fixed_product = 1;
  for (std::size_t d = 0; d < n_dims; ++d)
    if (fixed_size[d] > 0) fixed_product *= fixed_size[d];
  if (fixed_product > world || world % fixed_product != 0) return std::nullopt;
  const std::int64_t rest = world / fixed_product;
  std::array<std::vector<std::int64_t>, n_dims> cand;
  for (std::size_t d = 0; d < n_dims; ++d) {
    if (fixed_size[d] > 0) {
      cand[d] = {fixed_size[d]};
      continue;
    }
    std::set<std::int64_t> v{1};
    for (const auto& [key, st] : structural)
      if (rest % st.n == 0) v.insert(st.n);
    for (const auto& m : multi) {
      const auto n = static_cast<std::int64_t>(m.ranks->size());
      for (int a = 0; a < m.reading->n_alts; ++a) {
        const dim_set alt = m.reading->alts[static_cast<std::size_t>(a)];
        if (!alt.contains(static_cast<parallel_dim>(d))) continue;
        std::int64_t fp = 1;
        for (parallel_dim x : all_parallel_dims)
          if (alt.contains(x) && fixed_size[idx(x)] > 0) fp *= fixed_size[idx(x)];
        if (n % fp == 0 && rest % (n / fp) == 0) v.insert(n / fp);
      }
    }
    cand[d].assign(v.rbegin(), v.rend());  // larger first
  }
  std::vector<std::array<int, n_dims>> assignments;
  constexpr std::size_t max_assignments = 20000;
  {
    std::array<int, n_dims> cur{};
    auto rec = [&](auto&& self, std::size_t d, std::int64_t left) -> void {
      if (assignments.size() >= max_assignments) return;
      if (d == n_dims) {
        if (left == 1) assignments.push_back(cur);
        return;
      }
      for (auto v : cand[d]) {
        if (fixed_size[d] == 0 && left % v != 0) continue;
        cur[d] = static_cast<int>(v);
        self(self, d + 1, fixed_size[d] > 0 ? left : left / v);
      }
    };
    rec(rec, 0, rest);
  }
  if (assignments.empty()) return std::nullopt;
  if (assignments.size() >= max_assignments)
    evidence.push_back("search stopped after " + std::to_string(max_assignments) + " size assignments");

  // All orders, in permutation order (the default order first).
  std::vector<std::array<parallel_dim, parallel_dim_count>> orders;
  {
    std::array<parallel_dim, parallel_dim_count> p = all_parallel_dims;
    do orders.push_back(p);
    while (std::next_permutation(p.begin(), p.end(), [](parallel_dim a, parallel_dim b) { return a < b; }));
  }

  const std::uint8_t cp_ep_bits = dim_set{parallel_dim::cp, parallel_dim::ep}.bits();
  std::uint8_t hard_single_bits = 0;
  for (parallel_dim d : all_parallel_dims)
    if (fixed_size[idx(d)] > 1) hard_single_bits = static_cast<std::uint8_t>(hard_single_bits | (1u << idx(d)));

  // Scores one candidate; false when a described group is not reproduced.
  std::array<std::int64_t, n_dims> stride{};
  auto evaluate = [&](const std::array<int, n_dims>& sz, const std::array<parallel_dim, parallel_dim_count>& order,
                      pg_score& out, std::vector<int>* alts_out) -> bool {
    std::int64_t st = 1;
    for (parallel_dim d : order) {
      stride[idx(d)] = st;
      st *= sz[idx(d)];
    }
    for (std::size_t d = 0; d < n_dims; ++d)
      if (fixed_size[d] > 1 && stride[d] != fixed_stride[d]) return false;
    pg_score sc;
    std::uint8_t hard_bits = hard_single_bits;
    for (std::size_t i = 0; i < multi.size(); ++i) {
      const auto& g = *multi[i].ranks;
      const auto& rd = *multi[i].reading;
      int found = -1;
      for (int a = 0; a < rd.n_alts && found < 0; ++a) {
        const dim_set alt = rd.alts[static_cast<std::size_t>(a)];
        std::int64_t n = 1;
        for (parallel_dim x : all_parallel_dims)
          if (alt.contains(x)) n *= sz[idx(x)];
        if (n != static_cast<std::int64_t>(g.size())) continue;
        // Same size, distinct ranks: equal iff every rank shares r0's coordinates outside alt.
        bool ok = true;
        const std::int64_t r0 = g[0];
        for (std::size_t j = 1; j < g.size() && ok; ++j)
          for (parallel_dim x : all_parallel_dims) {
            const auto xi = idx(x);
            if (alt.contains(x) || sz[xi] == 1) continue;
            if ((g[j] / stride[xi]) % sz[xi] != (r0 / stride[xi]) % sz[xi]) {
              ok = false;
              break;
            }
          }
        if (ok) found = a;
      }
      if (found < 0) return false;
      if (found > 0) ++sc.fallback;
      if (alts_out) (*alts_out)[i] = found;
      hard_bits = static_cast<std::uint8_t>(hard_bits | rd.alts[static_cast<std::size_t>(found)].bits());
    }
    std::uint8_t soft_bits = 0;
    for (const auto& [key, s] : structural)
      for (std::size_t d = 0; d < n_dims; ++d)
        if (sz[d] == s.n && stride[d] == s.s) {
          sc.explained += static_cast<std::int64_t>(s.groups);
          soft_bits = static_cast<std::uint8_t>(soft_bits | (1u << d));
          break;
        }
    sc.attested = static_cast<std::uint8_t>(hard_bits | soft_bits);
    for (std::size_t d = 0; d < n_dims; ++d) {
      if (sz[d] <= 1) continue;
      const auto bit = static_cast<std::uint8_t>(1u << d);
      if (!(sc.attested & bit)) ++sc.unattested;
      if ((cp_ep_bits & bit) && !(hard_bits & bit)) ++sc.guessed_cp_ep;
    }
    out = sc;
    return true;
  };

  bool have = false;
  pg_score best;
  std::size_t best_a = 0, best_o = 0;
  for (std::size_t a = 0; a < assignments.size(); ++a)
    for (std::size_t o = 0; o < orders.size(); ++o) {
      pg_score sc;
      if (!evaluate(assignments[a], orders[o], sc, nullptr)) continue;
      // Orders and assignments are visited in preference order: keep the first of equal fit
      // unless a later one has a better order.
      if (!have || sc.better_fit(best) || (sc.same_fit(best) && o < best_o)) {
        have = true;
        best = sc;
        best_a = a;
        best_o = o;
      }
    }
  if (!have) return std::nullopt;
  if (hard_groups == 0 && best.explained == 0) return std::nullopt;

  const auto& sz = assignments[best_a];
  pg_score final_score;
  std::vector<int> alts(multi.size(), 0);
  evaluate(sz, orders[best_o], final_score, &alts);

  inferred_topology out;
  for (parallel_dim d : all_parallel_dims) out.sizes[d] = sz[idx(d)];
  out.order = pg_order_text(orders[best_o]);
  out.world_size = world;

  out.evidence.push_back(pg_sizes_line(sz) + ", order " + out.order);
  for (auto& e : evidence) out.evidence.push_back(std::move(e));

  // What each described kind said.
  for (std::size_t ki = 0; ki < kinds.size(); ++ki) {
    const auto& k = kinds[ki];
    if (k.reading.role != pg_role::dimension) continue;
    std::set<int> used;
    for (std::size_t i = 0; i < multi.size(); ++i)
      if (multi[i].kind == ki) used.insert(alts[i]);
    std::string dims;
    if (used.empty()) {
      dims = k.reading.alts[0].to_string();
    } else {
      for (int a : used) {
        if (!dims.empty()) dims += " / ";
        dims += k.reading.alts[static_cast<std::size_t>(a)].to_string();
      }
    }
    std::string line = pg_kind_label(k) + ": " + pg_count_text(k.groups.size(), "group") + " of " +
                       pg_sizes_text(k.groups) + " ranks (e.g. " + k.example + ") -> " + dims;
    if (used.size() == 1 && *used.begin() > 0) line += " (fallback reading)";
    for (parallel_dim d : all_parallel_dims)
      if (fixed_size[idx(d)] > 1 && fixed_kind[idx(d)] == ki)
        line += ", stride " + std::to_string(fixed_stride[idx(d)]);
    out.evidence.push_back(std::move(line));
  }
  // What the undescribed groups said.
  {
    std::array<std::int64_t, n_dims> st{};
    std::int64_t p = 1;
    for (parallel_dim d : orders[best_o]) {
      st[idx(d)] = p;
      p *= sz[idx(d)];
    }
    for (const auto& [key, s] : structural) {
      std::string line = pg_count_text(s.groups, "undescribed group") + " of " + std::to_string(s.n) +
                         " ranks at stride " + std::to_string(s.s) + " (e.g. " + s.example + ")";
      bool hit = false;
      for (parallel_dim d : all_parallel_dims)
        if (sz[idx(d)] == s.n && st[idx(d)] == s.s) {
          line += " -> " + std::string(to_string(d));
          if (!(fixed_size[idx(d)] > 1)) line += " (the dimension's name is a guess)";
          hit = true;
          break;
        }
      if (!hit) line += ": not one dimension of this layout";
      out.evidence.push_back(std::move(line));
    }
  }
  // Ambiguity.
  {
    std::set<std::string> layouts;  // orders of the dimensions of size > 1
    std::size_t n_orders = 0;
    for (const auto& order : orders) {
      pg_score sc;
      if (!evaluate(sz, order, sc, nullptr) || !sc.same_fit(best)) continue;
      ++n_orders;
      std::string l;
      for (parallel_dim d : order)
        if (sz[idx(d)] > 1) l += (l.empty() ? "" : "-") + std::string(to_string(d));
      layouts.insert(l.empty() ? "(one rank)" : l);
    }
    const bool is_default = best_o == 0;
    const std::string which = is_default ? "the default order" : "the first consistent order in permutation order";
    if (layouts.size() > 1) {
      std::string l;
      for (const auto& x : layouts) l += (l.empty() ? "" : ", ") + x;
      out.evidence.push_back("ambiguous: " + std::to_string(layouts.size()) +
                             " layouts reproduce every attributed group (" + l + "); chose " + out.order + ", " +
                             which);
    } else if (n_orders > 1) {
      out.evidence.push_back(std::to_string(n_orders) + " orders reproduce every attributed group, differing only in " +
                             "dimensions of size 1; chose " + out.order + ", " + which);
    } else {
      out.evidence.push_back("order " + out.order + " is the only one that reproduces every attributed group");
    }
    std::size_t other_sizes = 0;
    for (std::size_t a = 0; a < assignments.size(); ++a) {
      if (a == best_a) continue;
      for (const auto& order : orders) {
        pg_score sc;
        if (evaluate(assignments[a], order, sc, nullptr) && sc.same_fit(best)) {
          ++other_sizes;
          break;
        }
      }
    }
    if (other_sizes)
      out.evidence.push_back("ambiguous: " + pg_count_text(other_sizes, "other size assignment") +
                             " explain the groups as well (undescribed groups do not name their dimension)");
  }
  return out;
}

}  // namespace failslow::trace
