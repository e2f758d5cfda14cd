// Roles under a guessed layout: ranks told apart by the work kernels they run (pipeline stages,
// the LM head), so that a job diagnosed without its layout -- a .fsum from an always-on
// collector, a plain Chrome trace -- compares a last-stage rank only with other last-stage
// ranks. Hand-built windows for the rule; simulated jobs of several layouts, seeds and noise
// levels for what it is for: no false alarm without the layout, and faults still found.
#include <catch2/catch.hpp>
#include <failslow/diagnose/detail/rank_list.hpp>
#include <failslow/diagnose/diagnose.hpp>
#include <failslow/diagnose/roles.hpp>
#include <failslow/sim/score.hpp>
#include <string>
#include <vector>

#include "support/simulated_job.hpp"

using namespace failslow;

namespace {

// A window of `rank` at step `id` that ran the kernel keys `keys` (one launch each).
compress::window_summary window_of(int rank, std::uint64_t id, std::vector<name_id> keys) {
  compress::window_summary w;
  w.rank = rank;
  w.window_id = id;
  std::sort(keys.begin(), keys.end());
  for (name_id k : keys) {
    compress::kernel_summary ks;
    ks.key = k;
    ks.count = 1;
    ks.total_ns = 1000;
    w.kernels.push_back(ks);
  }
  return w;
}

// Keys 0-3 compute, 4 communication, 5 memory, 6 compute.
diagnose::job_model hand_model(int ranks) {
  diagnose::job_model m;
  m.world_size = ranks;
  m.has_rank.assign(static_cast<std::size_t>(ranks), true);
  m.kernel_names = {"gemm_a", "gemm_b", "embedding", "cross_entropy", "ncclAllReduce", "memcpy", "jit_fused"};
  m.kernel_classes = {kernel_class::compute,       kernel_class::compute, kernel_class::compute, kernel_class::compute,
                      kernel_class::communication, kernel_class::memory,  kernel_class::compute};
  return m;
}

}  // namespace

TEST_CASE("infer_roles: ranks with the same steady set of work kernels share a role", "[diagnose][roles]") {
  auto m = hand_model(7);
  for (std::uint64_t s = 0; s < 10; ++s) {
    m.windows.push_back(window_of(0, s, {0, 1, 2, 4, 5}));  // first stage: the embedding
    m.windows.push_back(window_of(1, s, {0, 1, 2, 4, 5}));
    // Middle: the collective differs (another algorithm), and rank 3 compiles a kernel in 2 of
    // its 10 steps -- neither is a role.
    m.windows.push_back(window_of(2, s, {0, 1, 5}));
    m.windows.push_back(window_of(3, s, s < 2 ? std::vector<name_id>{0, 1, 5, 6} : std::vector<name_id>{0, 1, 5, 4}));
    m.windows.push_back(window_of(4, s, {0, 1, 3, 4, 5}));  // last stage: the loss
    m.windows.push_back(window_of(5, s, {0, 1, 3, 4, 5}));
  }
  m.has_rank[6] = false;  // no data
  const auto roles = diagnose::infer_roles(m);
  REQUIRE(roles.count() == 3);
  CHECK(roles.role == std::vector<int>{0, 0, 1, 1, 2, 2, -1});
  CHECK(roles.members[1] == std::vector<int>{2, 3});
  CHECK(roles.kernels == std::vector<std::size_t>{4, 3, 4});

  // A kernel in at least steady_share of the rank's windows is part of its set.
  diagnose::role_options strict;
  strict.steady_share = 0.2;
  CHECK(diagnose::infer_roles(m, strict).count() == 4);  // rank 3's two JIT steps now count
  strict.steady_share = 0.25;
  CHECK(diagnose::infer_roles(m, strict).count() == 3);

  // Every rank alike: one role.
  auto same = hand_model(4);
  for (int r = 0; r < 4; ++r)
    for (std::uint64_t s = 0; s < 5; ++s) same.windows.push_back(window_of(r, s, {0, 1, 4}));
  CHECK(diagnose::infer_roles(same).count() == 1);
  // No kept windows: one role with an empty set.
  const auto none = diagnose::infer_roles(hand_model(3));
  CHECK(none.count() == 1);
  CHECK(none.kernels == std::vector<std::size_t>{0});

  for (double bad : {0.0, -0.5, 1.5, std::numeric_limits<double>::quiet_NaN()}) {
    diagnose::role_options o;
    o.steady_share = bad;
    CHECK_THROWS_AS(diagnose::infer_roles(m, o), invalid_argument);
  }
}

TEST_CASE("rank_list: ascending, once, runs as ranges, the rest counted", "[diagnose][roles]") {
  using diagnose::detail::rank_list;
  CHECK(rank_list({}) == "");
  CHECK(rank_list({3}) == "3");
  CHECK(rank_list({5, 3, 4, 3}) == "3-5");
  CHECK(rank_list({0, 1, 4, 5, 6, 7, 9}) == "0, 1, 4-7, 9");
  CHECK(rank_list({0, 2, 4, 6, 8}, 3) == "0, 2, 4, ... (5 ranks)");
  CHECK(rank_list({0, 1, 2, 8, 9, 10, 11, 20}, 2) == "0-2, 8-11, ... (8 ranks)");
}

namespace {

// One simulated pipeline job of `layout` (the calibrated, host-paced model, or the GPU-bound
// one) as window summaries, diagnosed as `failslow diagnose job.fsum` without --topology does:
// pure data parallelism over all ranks assumed.
struct unlaid_job {
  diagnose::job_model model;
  sim::truth truth;
  topology real;
  report rep;
  std::string found;  // the findings, one per line, for INFO
};

unlaid_job without_layout(const char* layout, std::uint64_t seed, double noise, bool calibrated, sim::scenario s,
                          const sim::scenario_options& so = {}) {
  auto cfg = calibrated ? failslow_test::calibrated_config(layout, seed, 24) : sim::job_config{};
  cfg.sizes = parse_parallel_sizes(layout);
  cfg.seed = seed;
  cfg.steps = 24;
  cfg.noise = noise;
  diagnose::model_options mo;
  mo.keep_windows = true;
  auto [m, truth] = failslow_test::simulate_summaries_model(cfg, s, so, mo);
  unlaid_job j{std::move(m), std::move(truth), topology(cfg.sizes), {}, {}};
  diagnose::diagnose_options o;
  o.layout_assumed = true;
  j.rep = diagnose::diagnose(j.model, topology(parallel_sizes{1, 1, 1, j.real.world_size(), 1}), o);
  for (const auto& f : j.rep.findings) j.found += f.level + " " + f.kind + ": " + f.summary + "\n";
  return j;
}

}  // namespace

TEST_CASE("a pipeline job without its layout: no false alarm, each stage compared within itself",
          "[diagnose][roles][summaries]") {
  // Stages run other kernels and take other time: before roles, the last stage's ranks were
  // called host-bound stragglers (2-7 per job).
  const struct {
    const char* layout;
    std::uint64_t seed;
    double noise;
    bool calibrated;
  } cases[] = {{"tp=2,pp=4,dp=4", 51, 1.0, true},
               {"tp=1,pp=4,dp=8", 52, 2.0, true},
               {"tp=4,pp=2,dp=4", 53, 1.0, false},
               {"tp=2,pp=4,dp=4", 54, 2.0, false},
               {"tp=2,pp=2,dp=8", 55, 0.5, true}};
  for (const auto& c : cases) {
    INFO(c.layout << ", seed " << c.seed << ", noise " << c.noise << (c.calibrated ? ", calibrated" : ""));
    {
      const auto j = without_layout(c.layout, c.seed, c.noise, c.calibrated, sim::scenario::healthy);
      const auto roles = diagnose::infer_roles(j.model);
      CHECK(roles.count() >= 2);  // at least the first and the last stage differ
      // A stage's ranks share their role.
      for (int r = 0; r < j.real.world_size(); ++r)
        for (int x : j.real.group(r, dim_set{parallel_dim::tp, parallel_dim::dp}))
          CHECK(roles.role[static_cast<std::size_t>(x)] == roles.role[static_cast<std::size_t>(r)]);
      INFO(j.found);
      CHECK(j.rep.findings.empty());
      bool noted = false;
      for (const auto& n : j.rep.notes) noted = noted || n.find("different sets of kernels") != std::string::npos;
      CHECK(noted);
    }
    // A rank that slows down is still found, against the ranks of its stage.
    sim::scenario_options so;
    so.onset = 6;
    const auto j = without_layout(c.layout, c.seed, c.noise, c.calibrated, sim::scenario::compute_straggler, so);
    INFO(j.found);
    const auto score = sim::score_case(j.truth, j.rep);
    CHECK(score.counts.recall() == 1.0);
    CHECK(score.counts.false_positives == 0);
  }
}

TEST_CASE("a pipeline job without its layout: a slow first or last stage is found as the role it is",
          "[diagnose][roles][summaries]") {
  // Under a guessed layout the roles stand for the stages L3's stage test compares; the first and
  // the last stage run kernels of their own. (A middle stage shares its role with the other
  // middle stages: half a role slowing does not slow its fastest rank, and is not asked here.)
  const std::pair<const char*, int> cases[] = {{"tp=2,pp=4,dp=4", 26}, {"tp=1,pp=4,dp=8", 3}, {"tp=4,pp=2,dp=2", 9}};
  std::uint64_t seed = 61;
  for (const auto& [layout, fault_rank] : cases) {
    const double noise = seed == 62 ? 2.0 : 1.0;
    INFO(layout << ", seed " << seed << ", noise " << noise << ", fault rank " << fault_rank);
    sim::scenario_options so;
    so.onset = 8;
    so.fault_rank = fault_rank;
    const auto j = without_layout(layout, seed++, noise, true, sim::scenario::slow_stage, so);
    INFO(j.found);
    const auto stage = j.real.stage(j.real.coordinate(fault_rank, parallel_dim::pp));
    std::size_t stages = 0;
    for (const auto& f : j.rep.findings)
      if (f.kind == "slow_stage") {
        ++stages;
        CHECK(f.ranks == stage);
        CHECK(f.group.empty());
        CHECK(f.summary.find("the layout being guessed") != std::string::npos);
      }
    CHECK(stages == 1);
    const auto score = sim::score_case(j.truth, j.rep);
    CHECK(score.counts.recall() == 1.0);
    CHECK(score.counts.false_positives == 0);
  }
}
