// The diagnosis's sensitivity table: every simulator scenario at two sizes, four severities and
// two noise levels, several seeds; recall, precision and kernel/group accuracy per cell from the
// scorer (sim/score.hpp), beside two rules people run today, scored the same way:
//   relative score (NVIDIA's straggler detection): per kernel, the fastest rank's mean duration
//     per launch over the rank's, the rank's score the median over kernels; a rank scoring below
//     0.75 in a window of 5 steps is a straggler;
//   same-position groups: a rank's compute time per step >= 1.2x the median of the ranks at its
//     position (same stage and tp index), and a tp/dp group's collective time per launch >= 1.2x
//     the median of the same-stage groups, in a window of 5 steps.
// Jobs come from the simulator's scale mode (per-rank window summaries, the always-on path), so
// the 512-rank cells take seconds, not minutes.
//   ./sensitivity [--seeds N] [--steps N] [--quick] [--scenario NAME]...   prints Markdown tables
//   (--scenario: only those rows, e.g. to rerun one fault kind)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <failslow/diagnose/diagnose.hpp>
#include <failslow/sim/score.hpp>
#include <failslow/sim/summaries.hpp>
#include <failslow/stats/descriptive.hpp>
#include <map>
#include <string>
#include <vector>

using namespace failslow;

namespace {

constexpr std::size_t window = 5;  // steps per window of the simple rules

struct layout_case {
  const char* name;
  const char* sizes;
};

// Findings of a rule: per rank (or group) the windows it flags, merged into runs.
void add_runs(report& rep, const diagnose::job_model& m, const std::vector<std::vector<char>>& flagged,
              const std::vector<std::string>& groups, const char* level, const char* kind) {
  for (std::size_t i = 0; i < flagged.size(); ++i) {
    const auto& f = flagged[i];
    for (std::size_t w = 0; w < f.size();) {
      if (!f[w]) {
        ++w;
        continue;
      }
      std::size_t e = w;
      while (e + 1 < f.size() && f[e + 1]) ++e;
      finding x;
      x.level = level;
      x.kind = kind;
      if (groups.empty())
        x.ranks = {static_cast<int>(i)};
      else
        x.group = groups[i];
      x.first_step = m.steps[w * window];
      x.last_step = m.steps[std::min(m.step_count(), (e + 1) * window) - 1];
      rep.findings.push_back(x);
      w = e + 1;
    }
  }
}

report relative_score_rule(const diagnose::job_model& m) {
  report rep;
  rep.world_size = m.world_size;
  const diagnose::window_index win(m);
  const std::size_t R = m.rank_count(), W = (m.step_count() + window - 1) / window;
  std::vector<std::vector<char>> flagged(R, std::vector<char>(W, 0));
  for (std::size_t w = 0; w < W; ++w) {
    // Per rank and kernel key: mean duration per launch over the window.
    std::vector<std::map<name_id, std::pair<double, double>>> sums(R);
    for (std::size_t r = 0; r < R; ++r)
      for (std::size_t s = w * window; s < std::min(m.step_count(), (w + 1) * window); ++s)
        if (const auto* x = win.window(static_cast<int>(r), s))
          for (const auto& k : x->kernels) {
            if (m.kernel_classes[k.key] == kernel_class::communication) continue;
            auto& v = sums[r][k.key];
            v.first += k.total_ns;
            v.second += static_cast<double>(k.count);
          }
    std::map<name_id, double> best;
    for (const auto& per : sums)
      for (const auto& [key, v] : per) {
        const double mean = v.first / v.second;
        auto it = best.find(key);
        if (it == best.end() || mean < it->second) best[key] = mean;
      }
    for (std::size_t r = 0; r < R; ++r) {
      std::vector<double> scores;
      for (const auto& [key, v] : sums[r]) scores.push_back(best[key] / (v.first / v.second));
      if (!scores.empty() && stats::median(scores) < 0.75) flagged[r][w] = 1;
    }
  }
  add_runs(rep, m, flagged, {}, "L2", "straggler");
  return rep;
}

report same_position_rule(const diagnose::job_model& m, const topology& topo) {
  report rep;
  rep.world_size = m.world_size;
  const std::size_t R = m.rank_count(), S = m.step_count(), W = (S + window - 1) / window;
  auto window_median = [&](auto&& value, std::size_t w) {
    std::vector<double> v;
    for (std::size_t s = w * window; s < std::min(S, (w + 1) * window); ++s) {
      const double x = value(s);
      if (std::isfinite(x)) v.push_back(x);
    }
    return v.empty() ? std::nan("") : stats::median(v);
  };
  // Ranks: compute time per step against the ranks at the same position (varying dp, cp, ep).
  std::vector<std::vector<char>> flagged(R, std::vector<char>(W, 0));
  const dim_set position{parallel_dim::dp};
  for (std::size_t w = 0; w < W; ++w)
    for (std::size_t r = 0; r < R; ++r) {
      const auto peers =
          topo.group(static_cast<int>(r), position | dim_set{parallel_dim::cp} | dim_set{parallel_dim::ep});
      std::vector<double> v;
      for (int p : peers)
        v.push_back(window_median([&](std::size_t s) { return m.phase_ns(static_cast<std::size_t>(p), 0, s); }, w));
      const double own = window_median([&](std::size_t s) { return m.phase_ns(r, 0, s); }, w);
      if (v.size() >= 3 && own >= 1.2 * stats::median(v)) flagged[r][w] = 1;
    }
  add_runs(rep, m, flagged, {}, "L2", "straggler");
  // Groups: a tp or dp group's collective time per launch against the same-stage groups.
  const diagnose::window_index win(m);
  for (parallel_dim d : {parallel_dim::tp, parallel_dim::dp}) {
    if (topo.size(d) <= 1) continue;
    const int G = topo.group_count(d);
    std::vector<std::vector<char>> gflag(static_cast<std::size_t>(G), std::vector<char>(W, 0));
    std::vector<std::string> names;
    for (int g = 0; g < G; ++g) names.push_back(std::string(to_string(d)) + ":" + std::to_string(g));
    for (std::size_t w = 0; w < W; ++w) {
      std::vector<double> value(static_cast<std::size_t>(G), std::nan(""));
      for (int g = 0; g < G; ++g) {
        std::vector<double> per_rank;
        for (int r : topo.group_members(d, g)) {
          double t = 0, n = 0;
          for (std::size_t s = w * window; s < std::min(S, (w + 1) * window); ++s)
            if (const auto* x = win.window(r, s))
              for (const auto& k : x->kernels)
                if (m.kernel_classes[k.key] == kernel_class::communication &&
                    !is_point_to_point(m.kernel_names[k.key])) {
                  t += k.total_ns;
                  n += static_cast<double>(k.count);
                }
          if (n > 0) per_rank.push_back(t / n);
        }
        if (!per_rank.empty()) value[static_cast<std::size_t>(g)] = stats::median(per_rank);
      }
      for (int g = 0; g < G; ++g) {
        const int stage = topo.coordinate(topo.group_members(d, g).front(), parallel_dim::pp);
        std::vector<double> same;
        for (int h = 0; h < G; ++h)
          if (topo.coordinate(topo.group_members(d, h).front(), parallel_dim::pp) == stage &&
              std::isfinite(value[static_cast<std::size_t>(h)]))
            same.push_back(value[static_cast<std::size_t>(h)]);
        if (same.size() >= 3 && value[static_cast<std::size_t>(g)] >= 1.2 * stats::median(same))
          gflag[static_cast<std::size_t>(g)][w] = 1;
      }
    }
    add_runs(rep, m, gflag, names, "L2", "slow_group");
  }
  return rep;
}

struct tally {
  sim::score_counts failslow, relative, group;
  void add(const sim::case_score& a, const sim::case_score& b, const sim::case_score& c) {
    failslow += a.counts;
    relative += b.counts;
    group += c.counts;
  }
};

std::string cell(const sim::score_counts& c, bool healthy) {
  char buf[64];
  if (healthy)
    std::snprintf(buf, sizeof buf, "%zu FP", c.false_positives);
  else
    std::snprintf(buf, sizeof buf, "%.2f/%.2f", c.recall(), c.precision());
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  int seeds = 3, steps = 20;
  bool quick = false;
  std::vector<sim::scenario> only;  // --scenario: these rows only
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--seeds") && i + 1 < argc)
      seeds = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--steps") && i + 1 < argc)
      steps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--quick"))
      quick = true;
    else if (!std::strcmp(argv[i], "--scenario") && i + 1 < argc)
      only.push_back(sim::parse_scenario(argv[++i]));  // throws on an unknown name, listing them
    else {
      std::fprintf(stderr, "usage: sensitivity [--seeds N] [--steps N] [--quick] [--scenario NAME]...\n");
      return 2;
    }
  }
  // Four dp groups per stage at both sizes, so that dp links have same-stage groups to compare.
  const std::vector<layout_case> layouts =
      quick ? std::vector<layout_case>{{"64", "tp=4,pp=2,dp=8"}}
            : std::vector<layout_case>{{"64", "tp=4,pp=2,dp=8"}, {"512", "tp=4,pp=4,dp=32"}};
  const double severities[] = {1.0, 0.5, 0.25, 0.1};
  const double noises[] = {1.0, 2.0};
  const auto t0 = std::chrono::steady_clock::now();
  std::printf(
      "Cells: failslow recall/precision [kernel or group right] | relative score < 0.75 | same-position "
      ">= 1.2x; healthy rows count false positives. %d seeds x %d steps per cell, onset at step 6.\n\n",
      seeds, steps);
  for (double noise : noises) {
    std::printf("### noise x%.0f\n\n| scenario | ranks |", noise);
    for (double sev : severities) std::printf(" severity %.2g |", sev);
    std::printf("\n|---|---|");
    for (std::size_t i = 0; i < std::size(severities); ++i) std::printf("---|");
    std::printf("\n");
    for (sim::scenario sc : sim::all_scenarios) {
      if (!only.empty() && std::find(only.begin(), only.end(), sc) == only.end()) continue;
      for (const auto& lc : layouts) {
        std::printf("| %s | %s |", std::string(to_string(sc)).c_str(), lc.name);
        for (double sev : severities) {
          tally t;
          std::size_t kernel_faults = 0, kernel_right = 0;
          for (int seed = 1; seed <= seeds; ++seed) {
            sim::job_config cfg;
            cfg.sizes = parse_parallel_sizes(lc.sizes);
            cfg.steps = steps;
            cfg.seed = static_cast<std::uint64_t>(seed) * 7919 + static_cast<std::uint64_t>(noise * 10);
            cfg.noise = noise;
            sim::scenario_options so;
            so.onset = 6;
            so.severity = sev;
            try {
              sim::plan_faults(sc, cfg, so);
            } catch (const invalid_argument&) {
              continue;
            }
            diagnose::model_options mo;
            mo.keep_windows = true;
            diagnose::job_model_builder b(mo);
            auto run =
                sim::simulate_summaries(cfg, sc, so,
                                        [&](compress::window_summary&& w) {
                                          b.add_window(std::move(w), [](name_id k) { return sim::kernel_key_name(k); });
                                        },
                                        {});
            const auto model = b.finish();
            const topology topo(cfg.sizes, cfg.order);
            const auto rep = diagnose::diagnose(model, topo);
            const auto a = sim::score_case(run.truth, rep);
            kernel_faults += a.counts.kernel_faults;
            kernel_right += a.counts.kernel_right;
            t.add(a, sim::score_case(run.truth, relative_score_rule(model)),
                  sim::score_case(run.truth, same_position_rule(model, topo)));
          }
          const bool healthy = sc == sim::scenario::healthy;
          std::string k;
          if (!healthy) {
            // Kernel right for faults that name kernels, group right (localised) otherwise.
            char buf[32];
            if (kernel_faults > 0)
              std::snprintf(buf, sizeof buf, " [k %zu/%zu]", kernel_right, kernel_faults);
            else
              buf[0] = 0;
            k = buf;
          }
          std::printf(" %s%s \\| %s \\| %s |", cell(t.failslow, healthy).c_str(), k.c_str(),
                      cell(t.relative, healthy).c_str(), cell(t.group, healthy).c_str());
          std::fflush(stdout);
        }
        std::printf("\n");
      }
    }
    std::printf("\n");
  }
  std::printf("(%.0f s)\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}
