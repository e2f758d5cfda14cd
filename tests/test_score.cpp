#include <catch2/catch.hpp>
#include <failslow/sim/score.hpp>
#include <failslow/sim/simulator.hpp>
#include <string>
#include <vector>

using namespace failslow;
using namespace failslow::sim;

namespace {

truth job_truth(std::string name = "compute-straggler") {
  truth t;
  t.scenario_name = std::move(name);
  t.sizes.tp = 2;
  t.sizes.pp = 4;
  t.sizes.dp = 8;
  t.world_size = 64;
  t.first_step = 100;
  t.last_step = 129;
  return t;
}

fault rank_fault(int rank, std::int64_t first, std::int64_t last, std::vector<std::string> kernels = {}) {
  fault f;
  f.kind = fault_kind::compute_straggler;
  f.ranks = {rank};
  f.first_step = first;
  f.last_step = last;
  f.kernels = std::move(kernels);
  return f;
}

finding make(std::string level, std::string kind, std::vector<int> ranks, std::int64_t first, std::int64_t last,
             std::string group = "", std::string kernel = "") {
  finding f;
  f.level = std::move(level);
  f.kind = std::move(kind);
  f.ranks = std::move(ranks);
  f.first_step = first;
  f.last_step = last;
  f.group = std::move(group);
  f.kernel = std::move(kernel);
  return f;
}

}  // namespace

TEST_CASE("a straggler: true positive, healthy-rank and wrong-step false positives, neutral findings") {
  auto t = job_truth();
  t.faults.push_back(rank_fault(13, 110, 129, {"gemm_a", "gemm_b"}));
  report r;
  r.world_size = 64;
  r.findings = {
      make("L2", "straggler", {13}, 111, 129, "", "gemm_b"),  // TP, kernel right, steps right
      make("L2", "straggler", {5}, 110, 129),                 // FP: healthy rank
      make("L1", "slow_window", {}, 110, 129),                // neutral: job-wide
      make("L3", "degraded_kernel", {13}, 100, 105),          // FP: outside the fault's steps
      make("L2", "slow_stage", {}, 110, 129, "stage:0"),      // neutral: wider group with the rank
      make("L2", "slow_stage", {}, 110, 129, "stage:3"),      // FP: names only healthy ranks
  };
  const auto s = score_case(t, r);
  REQUIRE(s.faults.size() == 1);
  CHECK(s.faults[0].localised);
  CHECK(s.faults[0].kernel_right);
  CHECK(s.faults[0].steps_right);
  CHECK(s.faults[0].findings == std::vector<std::size_t>{0});
  CHECK(s.findings[0].result == verdict::true_positive);
  CHECK(s.findings[1].reason == fp_reason::healthy_ranks);
  CHECK(s.findings[2].result == verdict::neutral);
  CHECK(s.findings[3].reason == fp_reason::outside_fault_steps);
  CHECK(s.findings[4].result == verdict::neutral);
  CHECK(s.findings[5].reason == fp_reason::healthy_ranks);
  CHECK(s.counts.true_positives == 1);
  CHECK(s.counts.false_positives == 3);
  CHECK(s.counts.neutral == 2);
  CHECK(s.counts.precision() == Approx(0.25));
  CHECK(s.counts.recall() == Approx(1.0));
  CHECK(s.counts.false_positive_reasons.at("healthy_ranks") == 2);

  // Wrong kernel, late detection: localised but neither kernel nor steps right.
  r.findings = {make("L3", "degraded_kernel", {13}, 120, 129, "", "flash")};
  const auto s2 = score_case(t, r);
  CHECK(s2.faults[0].localised);
  CHECK(!s2.faults[0].kernel_right);
  CHECK(!s2.faults[0].steps_right);
  score_options loose;
  loose.step_tolerance = 10;
  CHECK(score_case(t, r, loose).faults[0].steps_right);

  // No findings: nothing found, nothing wrong.
  r.findings.clear();
  const auto s3 = score_case(t, r);
  CHECK(!s3.faults[0].localised);
  CHECK(s3.counts.recall() == 0.0);
  CHECK(s3.counts.precision() == 1.0);
}

TEST_CASE("group faults are localised by their group name or any member") {
  auto t = job_truth("dp-link");
  fault f;
  f.kind = fault_kind::degraded_link;
  f.group = "dp:3";
  f.ranks = topology(t.sizes).group_members(parallel_dim::dp, 3);
  f.first_step = 110;
  f.last_step = 129;
  t.faults.push_back(f);
  report r;
  r.findings = {make("L2", "degraded_link", {}, 112, 129, "dp:3")};
  auto s = score_case(t, r);
  CHECK(s.faults[0].localised);
  CHECK(!s.faults[0].names_kernels);
  r.findings = {make("L2", "straggler", {f.ranks[2]}, 112, 129)};
  CHECK(score_case(t, r).faults[0].localised);
  r.findings = {make("L2", "degraded_link", {}, 112, 129, "dp:2")};
  s = score_case(t, r);
  CHECK(!s.faults[0].localised);
  CHECK(s.findings[0].reason == fp_reason::healthy_ranks);
}

TEST_CASE("healthy runs: any L2/L3 finding is a false positive") {
  const auto t = job_truth("healthy");
  report r;
  r.findings = {make("L1", "slow_window", {}, 100, 102), make("L2", "straggler", {}, 100, 129),
                make("L3", "degraded_kernel", {4}, 100, 129), make("L1", "slow_window", {7}, 100, 101)};
  const auto s = score_case(t, r);
  CHECK(s.findings[0].result == verdict::neutral);
  CHECK(s.findings[1].reason == fp_reason::healthy_run);
  CHECK(s.findings[2].reason == fp_reason::healthy_run);
  CHECK(s.findings[3].reason == fp_reason::healthy_ranks);
  CHECK(s.counts.false_positives == 3);
  CHECK(s.counts.precision() == 0.0);
  CHECK(s.counts.recall() == 1.0);
}

TEST_CASE("rotating GC pauses: a transient rank reported as a persistent straggler is a false positive") {
  auto t = job_truth("gc-pauses");
  for (auto [rank, step] : {std::pair<int, std::int64_t>{3, 110}, {40, 114}, {21, 118}}) {
    fault f = rank_fault(rank, step, step);
    f.kind = fault_kind::gc_pause;
    f.transient = true;
    t.faults.push_back(f);
  }
  report r;
  r.findings = {make("L2", "straggler", {3}, 100, 129),    // persistent: FP
                make("L2", "host_stall", {40}, 114, 114),  // TP
                make("L2", "straggler", {21}, 118, 118)};  // short: TP
  const auto s = score_case(t, r);
  CHECK(s.findings[0].reason == fp_reason::rotating_noise_as_straggler);
  CHECK(s.findings[1].result == verdict::true_positive);
  CHECK(s.findings[2].result == verdict::true_positive);
  CHECK(!s.faults[0].localised);
  CHECK(s.faults[1].localised);
  CHECK(s.faults[2].localised);
  CHECK(s.counts.recall() == Approx(2.0 / 3.0));
  CHECK(s.counts.precision() == Approx(2.0 / 3.0));
  score_options o;
  o.persistent_min_steps = 100;
  CHECK(score_case(t, r, o).findings[0].result == verdict::true_positive);
}

TEST_CASE("summaries add cases per scenario and overall") {
  auto a = job_truth();
  a.faults.push_back(rank_fault(13, 110, 129));
  auto b = job_truth();
  b.faults.push_back(rank_fault(40, 110, 129));
  const auto h = job_truth("healthy");
  report hit, miss, none;
  hit.findings = {make("L2", "straggler", {13}, 110, 129)};
  miss.findings = {make("L2", "straggler", {41}, 110, 129)};
  const auto sum = summarize({score_case(a, hit), score_case(b, miss), score_case(h, none)});
  const auto& cs = sum.by_scenario.at("compute-straggler");
  CHECK(cs.cases == 2);
  CHECK(cs.faults == 2);
  CHECK(cs.localised == 1);
  CHECK(cs.recall() == Approx(0.5));
  CHECK(cs.precision() == Approx(0.5));
  CHECK(sum.by_scenario.at("healthy").cases == 1);
  CHECK(sum.overall.cases == 3);
  CHECK(sum.overall.false_positives == 1);
}

TEST_CASE("the scorer works on a simulated truth and rejects malformed reports") {
  job_config cfg;
  cfg.sizes = parallel_sizes{};
  cfg.sizes.tp = 2;
  cfg.sizes.pp = 2;
  cfg.sizes.dp = 2;
  cfg.steps = 4;
  cfg.layers_per_stage = 1;
  scenario_options o;
  o.fault_rank = 6;
  o.onset = 1;
  const auto job = simulate(cfg, scenario::compute_straggler, o);
  const auto& f = job.truth.faults.at(0);
  report r;
  r.findings = {make("L3", "degraded_kernel", {6}, f.first_step, f.last_step, "", f.kernels.front())};
  const auto s = score_case(job.truth, r);
  CHECK(s.faults[0].localised);
  CHECK(s.faults[0].kernel_right);
  CHECK(s.faults[0].steps_right);

  report bad;
  bad.findings = {make("L9", "straggler", {1}, 100, 101)};
  CHECK_THROWS_AS(score_case(job.truth, bad), invalid_argument);
  bad.findings = {make("L2", "straggler", {1}, 102, 101)};
  CHECK_THROWS_AS(score_case(job.truth, bad), invalid_argument);
  bad.findings = {make("L2", "straggler", {}, 100, 101, "dp:9")};
  CHECK_THROWS_AS(score_case(job.truth, bad), invalid_argument);
  bad.findings = {make("L2", "straggler", {}, 100, 101, "xx:0")};
  CHECK_THROWS_AS(score_case(job.truth, bad), invalid_argument);
  bad.findings = {make("L2", "straggler", {8}, 100, 101)};
  CHECK_THROWS_AS(score_case(job.truth, bad), invalid_argument);
  bad.findings.clear();
  bad.world_size = 9;
  CHECK_THROWS_AS(score_case(job.truth, bad), invalid_argument);
}
