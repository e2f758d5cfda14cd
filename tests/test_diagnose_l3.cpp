// L3 on simulated jobs: the degraded kernel named (memory-bound kernels, not the GEMMs), the
// degraded link named by its group, the slow stage by its stage; healthy jobs quiet at noise 2
// over seeds and layouts; the W1 evidence consistent with the per-launch means.
#include <algorithm>
#include <catch2/catch.hpp>
#include <failslow/core/detail/splitmix.hpp>
#include <failslow/diagnose/detail/median_vectors.hpp>
#include <failslow/diagnose/diagnose.hpp>
#include <failslow/diagnose/l4_host.hpp>
#include <failslow/diagnose/l4_waits.hpp>
#include <failslow/sim/score.hpp>
#include <map>
#include <string>
#include <vector>

#include "support/simulated_job.hpp"

using namespace failslow;

namespace {

// Multiplies a rank's compute and memory kernels (only_key >= 0: that key alone) in its window
// of step index s by factor(s): every duration statistic of its summaries alike.
template <class Factor>
void scale_rank_kernels(diagnose::job_model& m, int rank, Factor factor, long only_key = -1) {
  for (auto& w : m.windows) {
    if (w.rank != rank) continue;
    const auto s = static_cast<std::size_t>(
        std::lower_bound(m.steps.begin(), m.steps.end(), static_cast<std::int64_t>(w.window_id)) - m.steps.begin());
    const double f = factor(s);
    for (auto& k : w.kernels) {
      if (m.kernel_classes[k.key] == kernel_class::communication) continue;
      if (only_key >= 0 && static_cast<long>(k.key) != only_key) continue;
      k.total_ns *= f;
      for (auto& c : k.clusters) {
        for (double* v : {&c.sum, &c.min, &c.max, &c.mean, &c.p50, &c.p90, &c.p99}) *v *= f;
        c.variance *= f * f;
      }
    }
  }
}

struct run {
  diagnose::job_model model;
  sim::truth truth;
  topology topo;
  report rep;
};

// instances: also match the collectives into instances (L4's attribute_waits, as load_job does),
// which gives L3 per-instance transfer times.
run diagnose_traces(const char* layout, sim::scenario s, std::uint64_t seed, double noise, double severity = 1.0,
                    bool instances = false, double clock_offset_us = -1) {
  sim::job_config cfg;
  cfg.sizes = parse_parallel_sizes(layout);
  cfg.seed = seed;
  if (clock_offset_us >= 0) cfg.max_clock_offset_us = clock_offset_us;
  cfg.steps = 16;
  cfg.noise = noise;
  sim::scenario_options so;
  so.onset = 5 + static_cast<int>(seed % 3);
  so.severity = severity;
  auto tj = failslow_test::simulate_traces(cfg, s, so);
  diagnose::model_options mo;
  mo.keep_windows = true;
  run r{diagnose::build_job_model(tj.set, mo), tj.job.truth, tj.job.topo, {}};
  if (instances) diagnose::attribute_waits(r.model, tj.set, r.topo);
  r.rep = diagnose::diagnose(r.model, r.topo);
  return r;
}

using failslow_test::describe;
using failslow_test::model_of_traces;

std::vector<const finding*> of_kind(const report& rep, const std::string& kind) {
  std::vector<const finding*> out;
  for (const auto& f : rep.findings)
    if (f.kind == kind) out.push_back(&f);
  return out;
}

}  // namespace

TEST_CASE("L3 names the memory-bound kernels, not the GEMMs", "[diagnose][l3]") {
  for (std::uint64_t seed : {1u, 2u}) {
    const auto r = diagnose_traces("tp=2,pp=2,dp=4", sim::scenario::memory_bound, seed, 1.0);
    INFO("seed " << seed << "\n" << describe(r.rep));
    const auto k = of_kind(r.rep, "degraded_kernel");
    REQUIRE(k.size() == 1);
    const auto& fault = r.truth.faults.front();
    CHECK(k[0]->ranks == fault.ranks);
    CHECK(std::find(fault.kernels.begin(), fault.kernels.end(), k[0]->kernel) != fault.kernels.end());
    // Every other kernel it lists is one the fault slowed: no GEMM.
    const auto* also = k[0]->evidence.find("also_degraded");
    for (const auto& kernel : r.model.kernel_names) {
      const std::string name(kernel_base_name(kernel));  // keys carry the launch shape
      const bool slowed = std::find(fault.kernels.begin(), fault.kernels.end(), name) != fault.kernels.end();
      if (!slowed && also) CHECK(also->text.find(kernel + " ") == std::string::npos);
    }
    // W1 evidence: the rank's distance to its group is well outside the group's own spread
    // and at least the difference of the means (W1 >= |mean_a - mean_b|, up to the
    // reconstruction's error).
    const double w1 = k[0]->evidence.number("w1_ns"), spread = k[0]->evidence.number("peer_w1_ns");
    const double diff = k[0]->evidence.number("observed_ns") - k[0]->evidence.number("baseline_ns");
    CHECK(w1 > 3 * spread);
    CHECK(w1 >= 0.9 * diff);
    CHECK(k[0]->evidence.number("ratio") > 1.2);
    const auto score = sim::score_case(r.truth, r.rep);
    CHECK(score.counts.false_positives == 0);
    CHECK(score.counts.kernel_right == 1);
  }
}

TEST_CASE("L3 names a degraded tp or dp link by its group and collective", "[diagnose][l3]") {
  struct c {
    const char* layout;
    sim::scenario s;
    std::uint64_t seed;
  } cases[] = {{"tp=2,pp=2,dp=4", sim::scenario::tp_link, 3},
               {"tp=4,pp=2,dp=4", sim::scenario::dp_link, 4},
               {"tp=4,pp=1,dp=4", sim::scenario::dp_link, 5}};
  for (const auto& x : cases) {
    const auto r = diagnose_traces(x.layout, x.s, x.seed, 1.0);
    INFO(x.layout << " " << to_string(x.s) << "\n" << describe(r.rep));
    const auto links = of_kind(r.rep, "degraded_link");
    REQUIRE(links.size() == 1);
    const auto& fault = r.truth.faults.front();
    CHECK(links[0]->group == fault.group);
    CHECK(std::find(fault.kernels.begin(), fault.kernels.end(), links[0]->kernel) != fault.kernels.end());
    CHECK(links[0]->evidence.number("transfer_ns") > 1.5 * links[0]->evidence.number("baseline_transfer_ns"));
    CHECK(std::abs(links[0]->first_step - fault.first_step) <= 1);
    CHECK(sim::score_case(r.truth, r.rep).counts.false_positives == 0);
  }
}

bool has_note(const report& rep, const std::string& part) {
  return std::any_of(rep.notes.begin(), rep.notes.end(),
                     [&](const std::string& n) { return n.find(part) != std::string::npos; });
}

TEST_CASE("L3 names a degraded dp link with 2 dp groups per stage from its collective instances", "[diagnose][l3]") {
  // tp=2: two dp groups per pipeline stage, too few to compare with each other. From the
  // collective instances each group's transfer (its last arriver's duration) is judged against
  // its own history, relative to the other dp groups. Hosts' clocks apart by up to 0, 0.8 and
  // 20 ms: the transfer is measured on one clock.
  for (std::uint64_t seed : {1u, 2u, 3u})
    for (double severity : {1.0, 0.1}) {  // 4x and 1.3x transfers
      const double skew_us = seed == 1 ? 0.0 : seed == 2 ? 800.0 : 20000.0;
      const auto r = diagnose_traces("tp=2,pp=2,dp=4", sim::scenario::dp_link, seed, 1.0, severity, true, skew_us);
      INFO("seed " << seed << " severity " << severity << "\n" << describe(r.rep));
      const auto links = of_kind(r.rep, "degraded_link");
      REQUIRE(links.size() == 1);
      const auto& fault = r.truth.faults.front();
      CHECK(links[0]->group == fault.group);
      CHECK(std::find(fault.kernels.begin(), fault.kernels.end(), links[0]->kernel) != fault.kernels.end());
      const auto *from = links[0]->evidence.find("transfer_from"), *within = links[0]->evidence.find("compared_within");
      REQUIRE((from && within));
      CHECK(from->text == "collective instances");
      CHECK(within->text == "own history");
      const double ratio = links[0]->evidence.number("transfer_ns") / links[0]->evidence.number("baseline_transfer_ns");
      CHECK(ratio > 1 + 0.5 * (fault.factor - 1));
      CHECK(ratio < 1 + 1.5 * (fault.factor - 1));
      CHECK(std::abs(links[0]->first_step - fault.first_step) <= 1);
      CHECK(sim::score_case(r.truth, r.rep).counts.false_positives == 0);
      CHECK(has_note(r.rep, "judged against its own history"));
    }
  // Without the instances (the summaries' case) the dp links are not compared, and a note says why.
  const auto r = diagnose_traces("tp=2,pp=2,dp=4", sim::scenario::dp_link, 1, 1.0, 1.0, false);
  INFO(describe(r.rep));
  CHECK(of_kind(r.rep, "degraded_link").empty());
  CHECK(has_note(r.rep, "dp links are not compared"));
}

TEST_CASE("the job's only dp group (pure data parallelism): its link from its own transfer history", "[diagnose][l3]") {
  // One dp group in the whole job: nothing to be relative to, and nothing to cancel -- a change of
  // its last arrivers' transfer times is the link's. Found at 4x and 1.3x with the reduce-scatter
  // or the all-gather named and the other listed; quiet on healthy jobs, under a compute straggler
  // and under GC pauses (waits, not transfers), noise 1 and 2.
  for (const char* layout : {"tp=1,pp=1,dp=8", "tp=1,pp=1,dp=4"})
    for (std::uint64_t seed : {1u, 2u, 3u}) {
      for (double severity : {1.0, 0.1}) {
        const auto r = diagnose_traces(layout, sim::scenario::dp_link, seed, 1.0, severity, true);
        INFO(layout << " seed " << seed << " severity " << severity << "\n" << describe(r.rep));
        const auto links = of_kind(r.rep, "degraded_link");
        REQUIRE(links.size() == 1);
        const auto& fault = r.truth.faults.front();
        CHECK(links[0]->group == fault.group);
        CHECK(std::find(fault.kernels.begin(), fault.kernels.end(), links[0]->kernel) != fault.kernels.end());
        CHECK(std::abs(links[0]->first_step - fault.first_step) <= 1);
        CHECK(sim::score_case(r.truth, r.rep).counts.false_positives == 0);
        CHECK(has_note(r.rep, "the job's only dp group"));
      }
      for (auto s : {sim::scenario::healthy, sim::scenario::compute_straggler, sim::scenario::gc_pauses})
        for (double noise : {1.0, 2.0}) {
          const auto r = diagnose_traces(layout, s, seed, noise, 1.0, true);
          INFO(layout << " seed " << seed << " " << to_string(s) << " noise " << noise << "\n" << describe(r.rep));
          CHECK(of_kind(r.rep, "degraded_link").empty());
        }
    }
}

TEST_CASE("per-instance transfers stay quiet under a straggler whose waits propagate", "[diagnose][l3]") {
  // A compute straggler makes its dp group, its stage and the stages after it wait in every
  // collective; the last arriver's transfer does not rise, so no link is named.
  // Seed 1 in tp=2,pp=2,dp=4 has a 6-step run of slow reduce-scatters in the straggler's dp
  // group (noise, 1.11x) that its all-gathers do not share.
  for (const char* layout : {"tp=2,pp=2,dp=4", "tp=2,pp=4,dp=2"})
    for (std::uint64_t seed : {1u, 2u, 3u, 4u}) {
      const auto r = diagnose_traces(layout, sim::scenario::compute_straggler, seed, 2.0, 1.0, true);
      INFO(layout << " seed " << seed << "\n" << describe(r.rep));
      REQUIRE(r.model.waits.available);
      REQUIRE(!r.model.waits.transfers.empty());
      CHECK(of_kind(r.rep, "degraded_link").empty());
      CHECK(!of_kind(r.rep, "straggler").empty());
    }
}

TEST_CASE("L3 names a slow pipeline stage against its own history", "[diagnose][l3]") {
  for (const char* layout : {"tp=2,pp=4,dp=2", "tp=1,pp=2,dp=4"}) {
    const auto r = diagnose_traces(layout, sim::scenario::slow_stage, 6, 1.0);
    INFO(layout << "\n" << describe(r.rep));
    const auto st = of_kind(r.rep, "slow_stage");
    REQUIRE(st.size() == 1);
    const auto& fault = r.truth.faults.front();
    CHECK(st[0]->group == fault.group);
    CHECK(std::find(fault.kernels.begin(), fault.kernels.end(), st[0]->kernel) != fault.kernels.end());
    CHECK(st[0]->evidence.number("ratio") > 1.1);
    // No rank of the stage is called a straggler: they are all slow together.
    CHECK(of_kind(r.rep, "straggler").empty());
    CHECK(sim::score_case(r.truth, r.rep).counts.false_positives == 0);
  }
}

TEST_CASE("each member's reference is the median of the others' quantile vectors", "[diagnose][l3]") {
  failslow::detail::splitmix64_engine rng(0x5eed);
  for (std::size_t n = 2; n <= 9; ++n)
    for (int round = 0; round < 20; ++round) {
      const std::size_t k = 7;
      std::vector<std::vector<double>> data(n, std::vector<double>(k));
      for (auto& row : data)  // values 0-4: many ties
        for (double& v : row) v = static_cast<double>(failslow::detail::uniform_index(rng, 5));
      std::vector<const double*> rows;
      for (const auto& row : data) rows.push_back(row.data());
      std::vector<double> loo, all;
      diagnose::detail::leave_one_out_median_vectors(rows, k, loo);
      diagnose::detail::median_vector(rows, k, all);
      REQUIRE(loo.size() == n * k);
      for (std::size_t u = 0; u < k; ++u) {
        std::vector<double> col;
        for (std::size_t i = 0; i < n; ++i) col.push_back(data[i][u]);
        CHECK(all[u] == stats::median(col));
        for (std::size_t i = 0; i < n; ++i) {
          std::vector<double> others;
          for (std::size_t j = 0; j < n; ++j)
            if (j != i) others.push_back(data[j][u]);
          INFO("n " << n << " member " << i << " column " << u);
          CHECK(loo[i * k + u] == stats::median(others));
        }
      }
    }
  std::vector<double> out;
  diagnose::detail::leave_one_out_median_vectors({}, 4, out);
  CHECK(out.empty());
}

TEST_CASE("groups of 4, a bimodal kernel at 2 launches a step: the faulty rank, no healthy one", "[diagnose][l3]") {
  // flash_bwd has a slow mode in 15 % of launches; with 2 launches a step one of 16 ranks draws
  // many more slow steps than its 3 peers by chance. Compared with a median it was part of, its
  // slow steps hid its peers' where they coincided, and it was a 1.19x "degraded kernel" over 4
  // steps (seed 52716, found by bench/random_sweep.py). The other seeds vary the draws.
  for (std::uint64_t seed : {52716u, 7u, 1234u}) {
    const auto tj = failslow_test::simulate_sweep_job(
        {"tp=2,pp=2,dp=2,cp=2", sim::scenario::thermal_drift, seed, 40, 1.5, 2, 1, 4420, 24});
    const auto model = model_of_traces(tj);
    const auto rep = diagnose::diagnose(model, tj.job.topo);
    const auto score = sim::score_case(tj.job.truth, rep);
    INFO("seed " << seed << "\n" << describe(rep));
    CHECK(score.counts.false_positives == 0);
    CHECK(score.counts.localised == score.counts.faults);
  }
}

TEST_CASE("L3 stays quiet on healthy jobs at noise 2, several seeds and layouts", "[diagnose][l3]") {
  for (const char* layout : {"tp=2,pp=2,dp=4", "tp=4,pp=2,dp=4", "tp=1,pp=4,dp=4"})
    for (std::uint64_t seed : {21u, 22u, 23u}) {
      const auto r = diagnose_traces(layout, sim::scenario::healthy, seed, 2.0);
      INFO(layout << " seed " << seed << "\n" << describe(r.rep));
      CHECK(r.rep.findings.empty());
    }
}

TEST_CASE("L3 finds a 1.1x compute straggler's kernels and a 1.25x memory-bound slowdown", "[diagnose][l3]") {
  // Severity 0.2 of the nominal excess: the compute straggler at about 1.1x.
  const auto r = diagnose_traces("tp=2,pp=2,dp=8", sim::scenario::compute_straggler, 8, 1.0, 0.2);
  INFO(describe(r.rep));
  const auto k = of_kind(r.rep, "degraded_kernel");
  REQUIRE(k.size() == 1);
  CHECK(k[0]->ranks == r.truth.faults.front().ranks);
  CHECK(sim::score_case(r.truth, r.rep).counts.false_positives == 0);
}

TEST_CASE("without kept windows L3 says why it did not run", "[diagnose][l3]") {
  sim::job_config cfg;
  cfg.sizes = parse_parallel_sizes("tp=1,pp=1,dp=4");
  cfg.steps = 6;
  auto tj = failslow_test::simulate_traces(cfg, sim::scenario::healthy);
  const auto m = diagnose::build_job_model(tj.set);
  const auto res = diagnose::find_degraded(m, tj.job.topo, nullptr);
  REQUIRE(res.notes.size() == 1);
  CHECK(res.notes[0].find("keep_windows") != std::string::npos);
  diagnose::l3_options bad;
  bad.quantiles = 0;
  diagnose::model_options mo;
  mo.keep_windows = true;
  const auto mk = diagnose::build_job_model(tj.set, mo);
  CHECK_THROWS_AS(diagnose::find_degraded(mk, tj.job.topo, nullptr, bad), invalid_argument);
  CHECK_THROWS_AS(diagnose::find_degraded(mk, topology(parse_parallel_sizes("dp=8")), nullptr), invalid_argument);
}

TEST_CASE("the intra-worker EWMA chart finds a kernel that grows slower on one rank", "[diagnose][l3]") {
  // A healthy job's summaries; rank 5's compute kernels then slow down by a ramp from step index
  // 8 to +8 % at the end. With the cross-rank test unable to claim (min_steps out of reach) only
  // the rank's own charts can see it.
  sim::job_config cfg;
  cfg.sizes = parse_parallel_sizes("tp=2,pp=1,dp=8");
  cfg.steps = 20;
  cfg.seed = 31;
  diagnose::model_options mo;
  mo.keep_windows = true;
  // Not a structured binding: lambdas below capture the model (C++17 and Clang before 16 cannot).
  auto m = failslow_test::simulate_summaries_model(cfg, sim::scenario::healthy, {}, mo).first;
  const topology topo(cfg.sizes, cfg.order);
  const auto ramp = [&](std::size_t s) {  // 0 up to step index 8, then up to 1 at the last step
    return s < 8 ? 0.0 : static_cast<double>(s - 8) / static_cast<double>(m.step_count() - 9);
  };
  scale_rank_kernels(m, 5, [&](std::size_t s) { return 1 + 0.08 * ramp(s); });
  diagnose::l3_options o;
  o.kernels.min_steps = 1000;  // the cross-rank test cannot claim anything
  const auto res = diagnose::find_degraded(m, topo, nullptr, o);
  REQUIRE(res.kernels.size() == 1);
  const auto& d = res.kernels.front();
  CHECK(d.rank == 5);
  CHECK(d.detector == "ewma-trend");
  CHECK(d.first >= 8);
  CHECK(d.first <= 15);
  CHECK(d.ewma_excess > 0.02);
  CHECK(d.q_value <= o.kernels.fdr_q);
  // Without the ramp nothing is charted as a drift.
  auto [clean, truth2] = failslow_test::simulate_summaries_model(cfg, sim::scenario::healthy, {}, mo);
  CHECK(diagnose::find_degraded(clean, topo, nullptr, o).kernels.empty());
  o.find_drifts = false;
  CHECK(diagnose::find_degraded(m, topo, nullptr, o).kernels.empty());
  // A rank whose kernels began 8 % faster than its peers' and ramp up to theirs rises as much on
  // its own chart, but ends no slower than its group: not degraded.
  auto [caught_up, truth3] = failslow_test::simulate_summaries_model(cfg, sim::scenario::healthy, {}, mo);
  scale_rank_kernels(caught_up, 5, [&](std::size_t s) { return 0.92 + 0.08 * ramp(s); });
  o.find_drifts = true;
  CHECK(diagnose::find_degraded(caught_up, topo, nullptr, o).kernels.empty());
}

TEST_CASE("the pooled test finds every compute kernel of a rank 1.5 % slower, and no steady offset", "[diagnose][l3]") {
  // A slowdown too small for any one kernel's test or for the compute total's noise: all of one
  // rank's kernels 1.5 % slower from a step on. Layouts, seeds, noise and onsets vary; the
  // rank is found by the pooled index and no other rank is named.
  struct pooled_case {
    const char* layout;
    std::uint64_t seed;
    double noise;
    int rank;
    std::size_t onset;
  };
  const pooled_case cases[] = {{"tp=2,pp=1,dp=8", 41, 1.0, 5, 6},
                               {"tp=2,pp=2,dp=8", 42, 2.0, 11, 7},
                               {"tp=1,pp=1,dp=16", 43, 2.0, 3, 8},
                               {"tp=4,pp=2,dp=8", 44, 1.5, 30, 6},
                               {"tp=2,pp=1,dp=8", 45, 2.0, 12, 9}};
  std::string log;
  for (const auto& c : cases) {
    sim::job_config cfg;
    cfg.sizes = parse_parallel_sizes(c.layout);
    cfg.steps = 20;
    cfg.seed = c.seed;
    cfg.noise = c.noise;
    diagnose::model_options mo;
    mo.keep_windows = true;
    const auto [healthy, truth] = failslow_test::simulate_summaries_model(cfg, sim::scenario::healthy, {}, mo);
    const topology topo(cfg.sizes, cfg.order);
    const std::string what = std::string(c.layout) + " seed " + std::to_string(c.seed);
    // Healthy: nothing pooled.
    auto res = diagnose::find_degraded(healthy, topo, nullptr);
    for (const auto& d : res.pooled) log += what + " healthy: rank " + std::to_string(d.rank) + "\n";
    CHECK(res.pooled.empty());
    // 1.5 % slower from the onset.
    auto slow = healthy;
    scale_rank_kernels(slow, c.rank, [&](std::size_t s) { return s >= c.onset ? 1.015 : 1.0; });
    res = diagnose::find_degraded(slow, topo, nullptr);
    std::vector<int> named;
    for (const auto& d : res.pooled) named.push_back(d.rank);
    for (const auto& d : res.kernels) named.push_back(d.rank);
    log += what + " slow: " + std::to_string(named.size()) + " named\n";
    REQUIRE(res.pooled.size() == 1);
    CHECK(named == std::vector<int>{c.rank});
    const auto& d = res.pooled.front();
    CHECK(d.detector == "pooled");
    CHECK(d.pooled_keys >= 10);
    CHECK(d.pooled_ratio > 1.008);
    CHECK(d.pooled_ratio < 1.025);
    CHECK(d.first + 1 >= c.onset);
    CHECK(d.first <= c.onset + 2);
    CHECK(d.q_value <= diagnose::l3_options{}.kernels.fdr_q);
    CHECK(slow.kernel_classes[d.key] == kernel_class::compute);
    // The same rank 1.5 % slower from the start (a slower GPU, no change), or 3 % faster until
    // the onset and 1.5 % faster after it (slower than before, no slower than its peers): nothing.
    auto steady = healthy;
    scale_rank_kernels(steady, c.rank, [](std::size_t) { return 1.015; });
    CHECK(diagnose::find_degraded(steady, topo, nullptr).pooled.empty());
    auto caught_up = healthy;
    scale_rank_kernels(caught_up, c.rank, [&](std::size_t s) { return s >= c.onset ? 0.985 : 0.97; });
    CHECK(diagnose::find_degraded(caught_up, topo, nullptr).pooled.empty());
    // Through diagnose(): an L3 finding on the rank that says it is every compute kernel.
    const auto rep = diagnose::diagnose(slow, topo);
    const auto k = of_kind(rep, "degraded_kernel");
    REQUIRE(k.size() == 1);
    CHECK(k[0]->ranks == std::vector<int>{c.rank});
    CHECK(k[0]->evidence.find("detector")->text == "pooled");
    CHECK(k[0]->evidence.number("pooled_keys") == static_cast<double>(d.pooled_keys));
    CHECK(k[0]->summary.find("compute kernels run") != std::string::npos);
    // Off, it is not asked.
    diagnose::l3_options off;
    off.find_pooled = false;
    CHECK(diagnose::find_degraded(slow, topo, nullptr, off).pooled.empty());
  }
  WARN(log);
}

TEST_CASE("a degraded kernel that costs a negligible share of the step is noted, not reported", "[diagnose][l3]") {
  // Rank 5's cheapest compute or memory kernel 1.3x from step index 6 (clearly degraded, in a
  // group of 8) costs far less than 0.1 % of a step: a note; its costliest 1.3x is a finding.
  for (const std::uint64_t seed : {3u, 4u}) {
    auto [m, truth] = failslow_test::windowed_summaries_model("tp=2,pp=1,dp=8", 16, seed, sim::scenario::healthy);
    const topology topo(parse_parallel_sizes("tp=2,pp=1,dp=8"));
    std::map<std::size_t, double> per_step;  // rank 5's time per key over the run
    for (const auto& w : m.windows)
      if (w.rank == 5)
        for (const auto& k : w.kernels)
          if (m.kernel_classes[k.key] != kernel_class::communication) per_step[k.key] += k.total_ns;
    REQUIRE(per_step.size() >= 2);
    const auto by_time = [](const auto& a, const auto& b) { return a.second < b.second; };
    const auto cheapest = std::min_element(per_step.begin(), per_step.end(), by_time)->first;
    const auto costliest = std::max_element(per_step.begin(), per_step.end(), by_time)->first;
    double iteration = 0;
    for (std::size_t s = 0; s < m.step_count(); ++s) iteration += m.iteration_ns(5, s);
    INFO("seed " << seed << ", cheapest key " << m.kernel_names[cheapest] << ": "
                 << per_step[cheapest] / iteration * 100 << " % of rank 5's time");
    REQUIRE(0.3 * per_step[cheapest] < 0.5 * 0.001 * iteration);  // the premise: well under the floor
    const auto slow_from_6 = [](std::size_t s) { return s >= 6 ? 1.3 : 1.0; };
    auto small = m;
    scale_rank_kernels(small, 5, slow_from_6, static_cast<long>(cheapest));
    auto res = diagnose::find_degraded(small, topo, nullptr);
    for (const auto& k : res.kernels)
      UNSCOPED_INFO("found rank " << k.rank << " by " << k.detector << ", " << k.lost_ns_per_step
                                  << " ns lost per step");
    CHECK(res.kernels.empty());
    CHECK(std::any_of(res.notes.begin(), res.notes.end(), [](const std::string& n) {
      return n.find("L3 kernels: 1 rank(s) (5) run kernels slower") != std::string::npos;
    }));
    diagnose::l3_options no_floor;
    no_floor.kernel_min_step_share = 0;
    res = diagnose::find_degraded(small, topo, nullptr, no_floor);
    REQUIRE(res.kernels.size() == 1);
    CHECK(res.kernels[0].key == cheapest);
    auto large = m;
    scale_rank_kernels(large, 5, slow_from_6, static_cast<long>(costliest));
    res = diagnose::find_degraded(large, topo, nullptr);
    REQUIRE(res.kernels.size() == 1);
    CHECK(res.kernels[0].rank == 5);
    CHECK(res.kernels[0].key == costliest);
    diagnose::l3_options bad;
    bad.kernel_min_step_share = 1;
    CHECK_THROWS_AS(diagnose::find_degraded(m, topo, nullptr, bad), invalid_argument);
  }
}

TEST_CASE("the inter-worker test judges groups of 8 at their threshold's real false-alarm rate", "[diagnose][l3]") {
  // With the covariance of 3 features estimated from 7 others, sqrt(chi2_0.99(3)) (1 + 1/sqrt 7)
  // is crossed in ~3 % of healthy windows, not 1 %: a healthy rank flagged in 3 of 8 windows
  // while its own group's others happened to be flagged once was an outlier at p 3e-4 against
  // that group's rate. Judged against the pooled rate of every group of its shape, it is not.
  // (A randomised job: tp 2 x pp 2 x dp 4 x ep 2, calibrated, noise 1.5, 40 steps, 2 micro-batches
  // of 1 layer, GPipe; a straggler and a dp link elsewhere.)
  auto cfg = failslow_test::calibrated_config("tp=2,pp=2,dp=4,ep=2", 18953, 40);
  cfg.noise = 1.5;
  cfg.microbatches = 2;
  cfg.layers_per_stage = 1;
  cfg.schedule = sim::pipeline_schedule::gpipe;
  sim::scenario_options so;
  so.onset = 27;
  const auto tj = failslow_test::simulate_traces(cfg, sim::scenario::two_faults, so);
  const auto rep = diagnose::diagnose(model_of_traces(tj), tj.job.topo);
  for (const auto& f : rep.findings) INFO(f.level << " " << f.kind << ": " << f.summary);
  const auto score = sim::score_case(tj.job.truth, rep);
  CHECK(score.counts.false_positives == 0);
  CHECK(score.counts.recall() == 1.0);
}

TEST_CASE("links: a collective the traces matched to other groups is not judged through a dimension's groups",
          "[diagnose][l3]") {
  // tp 2 x pp 2 x dp 4 x ep 2: the expert all-to-alls are point-to-point kernels, so the ep groups
  // have no collective of their own; from summaries every collective is seen through them, and
  // the tp all-reduce's waits made ep:0 a 1.27x "link" (a randomised job: calibrated, noise
  // 0.5, 40 steps, 4 micro-batches of 1 layer, GC pauses from step 20). The traces matched the
  // all-reduce into tp instances: it is tp's, and ep links are not judged on it.
  auto cfg = failslow_test::calibrated_config("tp=2,pp=2,dp=4,ep=2", 73383, 40);
  cfg.noise = 0.5;
  cfg.layers_per_stage = 1;
  sim::scenario_options so;
  so.onset = 20;
  so.severity = 0.5;
  const auto tj = failslow_test::simulate_traces(cfg, sim::scenario::gc_pauses, so);
  const auto res = diagnose::find_degraded(model_of_traces(tj), tj.job.topo, nullptr);
  for (const auto& l : res.links) INFO("link " << l.group << " " << l.ratio);
  CHECK(res.links.empty());
}

TEST_CASE("the inter-worker Mahalanobis test flags a rank whose joint profile departs", "[diagnose][l3]") {
  // 16 data-parallel ranks: rank 3 from step index 8 on spends 4 % of its step idle and 2 % less
  // in compute -- each alone small, together far from its peers' joint profile.
  sim::job_config cfg;
  cfg.sizes = parse_parallel_sizes("tp=1,pp=1,dp=16");
  cfg.steps = 20;
  cfg.seed = 33;
  diagnose::model_options mo;
  mo.keep_windows = true;
  auto [m, truth] = failslow_test::simulate_summaries_model(cfg, sim::scenario::healthy, {}, mo);
  const topology topo(cfg.sizes, cfg.order);
  diagnose::l3_options o;
  o.find_kernels = o.find_links = o.find_stages = false;
  CHECK(diagnose::find_degraded(m, topo, nullptr, o).outliers.empty());
  for (std::size_t s = 8; s < m.step_count(); ++s) {
    m.phase_ns(3, diagnose::idle_phase, s) += 0.04 * m.iteration_ns(3, s);
    m.phase_ns(3, diagnose::compute_phase, s) *= 0.98;
  }
  const auto res = diagnose::find_degraded(m, topo, nullptr, o);
  REQUIRE(res.outliers.size() == 1);
  const auto& d = res.outliers.front();
  CHECK(d.rank == 3);
  CHECK(d.first >= 5);
  CHECK(d.windows_flagged >= 2);
  CHECK(d.distance > d.threshold);
  CHECK(d.q_value <= o.kernels.fdr_q);
  REQUIRE(d.features.size() == d.deviation.size());
  CHECK(d.deviation[2] > 3);  // the idle share departs most
  // The mirror image -- 4 % of the step less idle, 2 % more compute: the rank departs as far, but
  // by being faster where it departs most; it holds nothing back.
  auto [fast, truth2] = failslow_test::simulate_summaries_model(cfg, sim::scenario::healthy, {}, mo);
  for (std::size_t s = 0; s < fast.step_count(); ++s)
    for (std::size_t r = 0; r < fast.rank_count(); ++r)  // room to idle less: 5 % of the step idle
      fast.phase_ns(r, diagnose::idle_phase, s) += 0.05 * fast.iteration_ns(r, s);
  CHECK(diagnose::find_degraded(fast, topo, nullptr, o).outliers.empty());
  for (std::size_t s = 8; s < fast.step_count(); ++s) {
    fast.phase_ns(3, diagnose::idle_phase, s) -= 0.04 * fast.iteration_ns(3, s);
    fast.phase_ns(3, diagnose::compute_phase, s) *= 1.02;
  }
  const auto faster = diagnose::find_degraded(fast, topo, nullptr, o);
  CHECK(faster.outliers.empty());
  CHECK(std::any_of(faster.notes.begin(), faster.notes.end(),
                    [](const std::string& n) { return n.find("by being faster") != std::string::npos; }));
}

TEST_CASE("the inter-worker test names a rank that changed, not one that was always as far off", "[diagnose][l3]") {
  // 16 data-parallel ranks, 8 windows: rank 3 idles A more of its step in windows 1, 3, 5, 7 and
  // 0.6 A more in windows 2, 4, 6 -- flagged in about half of them. With window 0 clean it
  // changed: reported from window 1. With window 0 at 0.6 A as well it was always this far off
  // (a steady offset) and crosses the threshold now and then: a note, no finding. Far enough to
  // be flagged in most windows from the first on, it is reported (a slower GPU is still named).
  std::string log;
  for (std::uint64_t seed : {33u, 34u, 35u}) {
    const auto job = failslow_test::windowed_summaries_model("tp=1,pp=1,dp=16", 40, seed, sim::scenario::healthy);
    const diagnose::job_model& healthy = job.first;  // a lambda cannot capture a structured binding in C++17
    const topology topo(parse_parallel_sizes("tp=1,pp=1,dp=16"));
    diagnose::l3_options o;
    o.find_kernels = o.find_links = o.find_stages = false;
    auto with_offset = [&](double a, double first_window) {
      auto m = healthy;
      for (std::size_t s = 0; s < m.step_count(); ++s) {
        const std::size_t w = s / o.outlier_window;
        const double f = w == 0 ? first_window : (w % 2 == 1 ? 1.0 : 0.6);
        m.phase_ns(3, diagnose::idle_phase, s) += f * a * m.iteration_ns(3, s);
      }
      return diagnose::find_degraded(m, topo, nullptr, o);
    };
    INFO("seed " << seed);
    const auto changed = with_offset(0.006, 0.0);
    REQUIRE(changed.outliers.size() == 1);
    CHECK(changed.outliers[0].rank == 3);
    CHECK(changed.outliers[0].first == o.outlier_window);
    const auto steady = with_offset(0.006, 0.6);
    CHECK(steady.outliers.empty());
    CHECK(std::any_of(steady.notes.begin(), steady.notes.end(), [](const std::string& n) {
      return n.find("steady offset") != std::string::npos && n.find("(3)") != std::string::npos;
    }));
    const auto far = with_offset(0.014, 0.6);
    REQUIRE(far.outliers.size() == 1);
    CHECK(far.outliers[0].rank == 3);
    CHECK(far.outliers[0].first == 0);
    log += "seed " + std::to_string(seed) + ": changed flagged in " +
           std::to_string(changed.outliers[0].windows_flagged) + " of 8, far in " +
           std::to_string(far.outliers[0].windows_flagged) + "\n";
  }
  WARN(log);
}

TEST_CASE("a rank that idles more at its peers' launch pace waits for others: no outlier finding", "[diagnose][l3]") {
  // A healthy GPipe job (the random sweep's job that made the one false positive): rank 21 of
  // stage 1 idles 5.7 % of a step more than its 15 peers in two of three windows, and spends as
  // much less in its transfers -- it waits before them instead of inside them -- at the same
  // compute and the same launch pace as its peers.
  sim::job_config cfg;
  sim::calibrate(cfg);
  cfg.sizes = parse_parallel_sizes("tp=1,pp=2,dp=16");
  cfg.schedule = sim::pipeline_schedule::gpipe;
  cfg.seed = 57947;
  cfg.noise = 0.5;
  cfg.steps = 16;
  cfg.microbatches = 4;
  cfg.layers_per_stage = 1;
  cfg.first_step = 3158;
  auto tj = failslow_test::simulate_traces(cfg, sim::scenario::healthy);
  diagnose::model_options mo;
  mo.keep_windows = true;
  auto m = diagnose::build_job_model(tj.set, mo);
  diagnose::attribute_waits(m, tj.set, tj.job.topo);  // as load_job does
  diagnose::measure_host_activity(m, tj.set);
  REQUIRE(m.host.launch_pace_measured);
  const auto rep = diagnose::diagnose(m, tj.job.topo);
  for (const auto& f : rep.findings) INFO(f.level << " " << f.kind << ": " << f.summary);
  CHECK(rep.findings.empty());
  CHECK(std::any_of(rep.notes.begin(), rep.notes.end(), [](const std::string& n) {
    return n.find("rank(s) 21 depart from their peers' joint profile by idling more") != std::string::npos;
  }));
  // The launch pace is what tells waiting from a slow host: without it the departure is reported.
  m.host.launch_pace_measured = false;
  const auto blind = diagnose::diagnose(m, tj.job.topo);
  REQUIRE(blind.findings.size() == 1);
  CHECK(blind.findings.front().kind == "outlier_rank");
  CHECK(blind.findings.front().ranks == std::vector<int>{21});
}

TEST_CASE("a degraded link's ranks that idle at the step's sync are its victims, not host-bound stragglers",
          "[diagnose][l3]") {
  // The calibrated job (host-paced: the GPU idles part of each step) with a slow dp link: the
  // group's ranks wait for the slow reduce-scatter at the step's end with the GPU idle.
  for (std::uint64_t seed : {4u, 5u}) {
    auto cfg = failslow_test::calibrated_config("tp=4,pp=2,dp=2", seed, 16);
    sim::scenario_options so;
    so.onset = 5;
    auto tj = failslow_test::simulate_traces(cfg, sim::scenario::dp_link, so);
    diagnose::model_options mo;
    mo.keep_windows = true;
    const auto model = diagnose::build_job_model(tj.set, mo);
    const auto rep = diagnose::diagnose(model, tj.job.topo);
    INFO("seed " << seed << "\n" << describe(rep));
    const auto score = sim::score_case(tj.job.truth, rep);
    CHECK(score.counts.false_positives == 0);
    CHECK(of_kind(rep, "degraded_link").size() == 1);
    for (const auto* f : of_kind(rep, "straggler")) CHECK(f->phase != "idle");
  }
}
