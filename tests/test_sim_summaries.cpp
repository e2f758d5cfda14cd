// Scale mode of the simulator (sim/summaries.hpp): per-rank window summaries straight from the
// timing model, checked against compressing the full timelines of the same job.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <failslow/compress/codec.hpp>
#include <failslow/compress/window_compressor.hpp>
#include <failslow/sim/simulator.hpp>
#include <failslow/sim/summaries.hpp>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

using namespace failslow;
using namespace failslow::sim;
using compress::window_summary;

namespace {

job_config layout(int tp, int pp, int dp, int steps, std::uint64_t seed) {
  job_config c;
  c.sizes = parallel_sizes{};
  c.sizes.tp = tp;
  c.sizes.pp = pp;
  c.sizes.dp = dp;
  c.steps = steps;
  c.seed = seed;
  c.layers_per_stage = 1;
  c.microbatches = 3;
  return c;
}

// What a per-rank compressor fed from the job's full timelines gives, in the order of scale
// mode (step by step, ranks ascending).
std::vector<window_summary> compress_timelines(const simulated_job& job, const summary_options& opt = {}) {
  const auto world = job.ranks.size();
  std::vector<window_summary> out;
  std::int64_t step = 0;
  std::vector<compress::window_compressor> per_rank;
  per_rank.reserve(world);
  for (std::size_t r = 0; r < world; ++r)
    per_rank.emplace_back(
        static_cast<std::int32_t>(r),
        [&](window_summary&& w) {
          w.window_id = static_cast<std::uint64_t>(step);
          out.push_back(std::move(w));
        },
        opt.compressor);
  std::vector<std::size_t> next(world, 0);
  for (step = job.truth.first_step; step <= job.truth.last_step; ++step)
    for (std::size_t r = 0; r < world; ++r) {
      const auto& t = job.ranks[r];
      for (auto& i = next[r]; i < t.kernels.size() && t.kernels[i].step == step; ++i)
        per_rank[r].add(kernel_key(t.kernels[i].role), t.kernels[i].start_ns + t.clock_offset_ns + opt.epoch_ns,
                        t.kernels[i].duration_ns());
      per_rank[r].close_window();
    }
  for (std::size_t r = 0; r < world; ++r) REQUIRE(next[r] == job.ranks[r].kernels.size());
  return out;
}

void require_same_window(const window_summary& a, const window_summary& b) {
  REQUIRE(a.rank == b.rank);
  REQUIRE(a.window_id == b.window_id);
  REQUIRE(a.start_ns == b.start_ns);
  REQUIRE(a.end_ns == b.end_ns);
  REQUIRE(a.skipped.total() == b.skipped.total());
  REQUIRE(a.subsampled == b.subsampled);
  REQUIRE(a.kernels.size() == b.kernels.size());
  for (std::size_t i = 0; i < a.kernels.size(); ++i) {
    const auto &x = a.kernels[i], &y = b.kernels[i];
    REQUIRE(x.key == y.key);
    REQUIRE(x.count == y.count);
    REQUIRE(x.sampled == y.sampled);
    REQUIRE(x.total_ns == Approx(y.total_ns).epsilon(1e-12));
    REQUIRE(x.clusters.size() == y.clusters.size());
    for (std::size_t c = 0; c < x.clusters.size(); ++c) {
      REQUIRE(x.clusters[c].count == y.clusters[c].count);
      REQUIRE(x.clusters[c].p50 == Approx(y.clusters[c].p50).epsilon(1e-12));
      REQUIRE(x.clusters[c].p99 == Approx(y.clusters[c].p99).epsilon(1e-12));
    }
  }
}

bool is_compute_key(name_id key) {
  for (std::size_t i = 0; i < kernel_role_count; ++i) {
    const auto role = static_cast<kernel_role>(i);
    if (kernel_key(role) == key) return !spec_of(role).is_collective();
  }
  return false;
}

// Sum of a window's totals over compute (or communication) keys.
double total_of(const window_summary& w, bool compute) {
  double t = 0;
  for (const auto& k : w.kernels)
    if (is_compute_key(k.key) == compute) t += k.total_ns;
  return t;
}

}  // namespace

TEST_CASE("kernel keys number the catalogue's distinct names densely") {
  std::set<std::string_view> names;
  for (const auto& s : kernel_catalogue()) names.insert(s.name);
  REQUIRE(kernel_key_count() == names.size());
  std::set<name_id> keys;
  for (std::size_t i = 0; i < kernel_role_count; ++i) {
    const auto role = static_cast<kernel_role>(i);
    REQUIRE(kernel_key_name(kernel_key(role)) == spec_of(role).name);
    keys.insert(kernel_key(role));
  }
  REQUIRE(keys.size() == kernel_key_count());
  REQUIRE(*keys.rbegin() == kernel_key_count() - 1);
  // NCCL all-to-all runs as SendRecv kernels: one name, one key.
  REQUIRE(kernel_key(kernel_role::nccl_all_to_all) == kernel_key(kernel_role::nccl_send_recv));
}

TEST_CASE("scale mode gives the summaries of compressing the full timelines") {
  struct shape {
    int tp, pp, dp, steps;
  };
  const shape shapes[] = {{2, 2, 2, 4}, {1, 3, 2, 3}, {2, 1, 3, 5}, {4, 2, 1, 2}};
  const scenario scenarios[] = {scenario::healthy, scenario::compute_straggler, scenario::jit_stall,
                                scenario::slow_stage};
  std::uint64_t seed = 3;
  for (const auto& sh : shapes)
    for (scenario sc : scenarios) {
      if (sc == scenario::slow_stage && sh.pp == 1) continue;
      seed = seed * 7 + 1;
      const auto cfg = layout(sh.tp, sh.pp, sh.dp, sh.steps, seed);
      CAPTURE(sh.tp, sh.pp, sh.dp, sh.steps, seed, to_string(sc));
      scenario_options so;
      so.onset = sh.steps / 2;
      const auto job = simulate(cfg, sc, so);
      const auto run = collect_summaries(cfg, sc, so);
      const auto reference = compress_timelines(job);
      REQUIRE(run.summaries.size() == reference.size());
      REQUIRE(run.windows == reference.size());
      for (std::size_t i = 0; i < reference.size(); ++i) require_same_window(run.summaries[i], reference[i]);

      // Counts and totals are the timelines' own, kernel by kernel.
      std::uint64_t kernels = 0;
      for (const auto& w : run.summaries) {
        std::map<name_id, std::pair<std::uint64_t, double>> direct;
        for (const auto& k : job.ranks[static_cast<std::size_t>(w.rank)].kernels)
          if (k.step == static_cast<std::int64_t>(w.window_id)) {
            auto& d = direct[kernel_key(k.role)];
            ++d.first;
            d.second += static_cast<double>(k.duration_ns());
          }
        REQUIRE(direct.size() == w.kernels.size());
        for (const auto& k : w.kernels) {
          REQUIRE(k.count == direct.at(k.key).first);
          REQUIRE(k.total_ns == Approx(direct.at(k.key).second).epsilon(1e-12));
        }
        kernels += w.event_count();
      }
      REQUIRE(run.kernels == kernels);

      // The same truth as simulate(): faults with the kernels they changed, clock offsets.
      REQUIRE(run.truth.scenario_name == job.truth.scenario_name);
      REQUIRE(run.truth.clock_offsets_ns == job.truth.clock_offsets_ns);
      REQUIRE(run.truth.faults.size() == job.truth.faults.size());
      for (std::size_t f = 0; f < job.truth.faults.size(); ++f) {
        REQUIRE(run.truth.faults[f].ranks == job.truth.faults[f].ranks);
        REQUIRE(run.truth.faults[f].kernels == job.truth.faults[f].kernels);
      }
    }
}

TEST_CASE("a compute straggler's windows carry more compute time, its peers more waiting") {
  for (std::uint64_t seed : {2u, 17u, 40u}) {
    const auto cfg = layout(2, 2, 4, 6, seed);
    scenario_options so;
    so.onset = 3;
    so.fault_rank = static_cast<int>(seed % 16);
    const auto run = collect_summaries(cfg, scenario::compute_straggler, so);
    const auto& f = run.truth.faults.at(0);
    const int straggler = f.ranks.at(0);
    // Its data-parallel peers run the same kernels (same stage, same tp index).
    std::vector<int> peers;
    for (int r : run.topo.group(straggler, parallel_dim::dp))
      if (r != straggler) peers.push_back(r);
    REQUIRE(peers.size() == 3);
    std::map<std::pair<std::uint64_t, int>, const window_summary*> at;
    for (const auto& w : run.summaries) at[{w.window_id, w.rank}] = &w;
    for (std::int64_t step = run.truth.first_step; step <= run.truth.last_step; ++step) {
      const auto s = static_cast<std::uint64_t>(step);
      const double mine = total_of(*at.at({s, straggler}), true);
      for (int p : peers) {
        const double ratio = mine / total_of(*at.at({s, p}), true);
        CAPTURE(seed, step, straggler, p, ratio);
        if (step >= f.first_step) {
          REQUIRE(ratio > 1.3);
          REQUIRE(ratio < 1.7);
          // The peers wait for it in the collectives.
          REQUIRE(total_of(*at.at({s, p}), false) > total_of(*at.at({s, straggler}), false));
        } else {
          REQUIRE(ratio > 0.85);
          REQUIRE(ratio < 1.15);
        }
      }
    }
  }
}

TEST_CASE("windows arrive step by step, world x steps of them, ranks ascending") {
  for (int steps : {1, 3, 7}) {
    const auto cfg = layout(2, 2, 3, steps, static_cast<std::uint64_t>(steps) * 11);
    const int world = 12;
    std::vector<std::pair<std::uint64_t, int>> order;
    std::uint64_t events = 0;
    const auto run = simulate_summaries(cfg, scenario::compute_straggler, scenario_options{}, [&](window_summary&& w) {
      order.emplace_back(w.window_id, w.rank);
      events += w.event_count();
    });
    REQUIRE(run.windows == static_cast<std::uint64_t>(world * steps));
    REQUIRE(run.summaries.empty());  // handed over, not kept
    REQUIRE(run.kernels == events);
    REQUIRE(order.size() == run.windows);
    for (std::size_t i = 0; i < order.size(); ++i) {
      REQUIRE(order[i].first == static_cast<std::uint64_t>(cfg.first_step) + i / world);
      REQUIRE(order[i].second == static_cast<int>(i % world));
    }
  }
  // The sink may stop the run by throwing; its exception comes out unchanged.
  const auto cfg = layout(2, 2, 2, 5, 1);
  int calls = 0;
  REQUIRE_THROWS_AS(simulate_summaries(cfg, scenario::healthy, scenario_options{},
                                       [&](window_summary&&) {
                                         if (++calls == 10) throw std::runtime_error("enough");
                                       }),
                    std::runtime_error);
  REQUIRE(calls == 10);
}

TEST_CASE("summaries survive the .fsum codec within its quantisation") {
  const auto cfg = layout(2, 2, 2, 5, 29);
  const auto run = collect_summaries(cfg, scenario::dp_link);
  compress::summary_encoder enc([](name_id id) { return std::string(kernel_key_name(id)); });
  std::string bytes = enc.header();
  for (const auto& w : run.summaries) enc.encode(w, bytes);
  const auto back = compress::decode_summaries(bytes);
  REQUIRE(back.damaged.empty());
  REQUIRE(back.windows.size() == run.summaries.size());
  // The codec's documented relative precision, 2^-(bits + 1), for its default bits.
  const double rel = std::ldexp(1.0, -static_cast<int>(compress::codec_options{}.precision_bits) - 1) * 1.0001;
  for (std::size_t i = 0; i < back.windows.size(); ++i) {
    const auto &a = back.windows[i], &b = run.summaries[i];
    REQUIRE(a.rank == b.rank);
    REQUIRE(a.window_id == b.window_id);
    REQUIRE(a.kernels.size() == b.kernels.size());
    for (std::size_t k = 0; k < a.kernels.size(); ++k) {
      REQUIRE(back.names.at(a.kernels[k].key) == kernel_key_name(b.kernels[k].key));
      REQUIRE(a.kernels[k].count == b.kernels[k].count);
      REQUIRE(a.kernels[k].total_ns == Approx(b.kernels[k].total_ns).epsilon(rel));
    }
  }
}

TEST_CASE("scale mode: bad arguments throw typed errors") {
  const auto cfg = layout(2, 2, 2, 3, 1);
  const summary_sink ignore = [](window_summary&&) {};
  REQUIRE_THROWS_AS(simulate_summaries(cfg, scenario::healthy, scenario_options{}, summary_sink{}), invalid_argument);
  summary_options o;
  o.compressor.per_key_cap = 0;
  REQUIRE_THROWS_AS(simulate_summaries(cfg, scenario::healthy, scenario_options{}, ignore, o), invalid_argument);
  o = summary_options{};
  o.compressor.max_window_ns = 1000000;
  REQUIRE_THROWS_AS(simulate_summaries(cfg, scenario::healthy, scenario_options{}, ignore, o), invalid_argument);
  o = summary_options{};
  o.epoch_ns = -1;
  REQUIRE_THROWS_AS(simulate_summaries(cfg, scenario::healthy, scenario_options{}, ignore, o), invalid_argument);
  auto bad = cfg;
  bad.steps = 0;
  REQUIRE_THROWS_AS(collect_summaries(bad, scenario::healthy), invalid_argument);
  bad = cfg;
  bad.sizes.dp = 1;
  REQUIRE_THROWS_AS(collect_summaries(bad, scenario::dp_link), invalid_argument);
  fault f;
  f.kind = fault_kind::compute_straggler;
  f.ranks = {8};  // the world is 0..7
  f.first_step = cfg.first_step;
  f.last_step = cfg.first_step;
  REQUIRE_THROWS_AS(simulate_summaries(cfg, {f}, ignore), invalid_argument);
  f.ranks = {3};
  f.factor = 0;
  REQUIRE_THROWS_AS(simulate_summaries(cfg, {f}, ignore), invalid_argument);
  REQUIRE_THROWS_AS(kernel_key_name(static_cast<name_id>(kernel_key_count())), domain_error);
  REQUIRE_THROWS_AS(kernel_key(static_cast<kernel_role>(kernel_role_count)), domain_error);
}
