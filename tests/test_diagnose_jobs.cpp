// The diagnosis on simulated jobs: every scenario, several seeds, sizes (8 to 512 ranks), both
// pipeline schedules, noise levels and clock skews, through the Kineto traces (the path real
// traces take), through window summaries in process and through a .fsum byte stream. Scored
// with sim/score.hpp: stragglers found with the right rank and first step, no L2 finding on
// healthy jobs, rotating GC pauses or faults that are no rank's (links, stages), and the ranks
// that only wait for a straggler never blamed.
#include <catch2/catch.hpp>
#include <failslow/compress/codec.hpp>
#include <failslow/diagnose/diagnose.hpp>
#include <failslow/diagnose/model_from_summaries.hpp>
#include <failslow/sim/score.hpp>
#include <string>
#include <vector>

#include "support/simulated_job.hpp"

using namespace failslow;

namespace {

struct job_case {
  const char* layout;
  sim::pipeline_schedule schedule;
  double clock_skew_us;
  std::uint64_t seed;
  int steps;
  double noise;
};

// Layouts from 8 to 64 ranks, both schedules, skews from none to 20 ms, noise x0.5 to x2.
const job_case job_cases[] = {
    {"tp=2,pp=2,dp=2", sim::pipeline_schedule::one_f_one_b, 0, 1, 18, 1.0},
    {"tp=1,pp=1,dp=8", sim::pipeline_schedule::one_f_one_b, 5000, 2, 15, 2.0},
    {"tp=2,pp=2,dp=4", sim::pipeline_schedule::gpipe, 20000, 3, 18, 1.0},
    {"tp=4,pp=2,dp=2", sim::pipeline_schedule::one_f_one_b, 100, 4, 15, 0.5},
    {"tp=2,pp=4,dp=8", sim::pipeline_schedule::gpipe, 1000, 5, 10, 1.0},
};

bool is_rank_fault(sim::scenario s) {
  switch (s) {
    case sim::scenario::compute_straggler:
    case sim::scenario::masked_straggler:
    case sim::scenario::thermal_drift:
    case sim::scenario::memory_bound:
    case sim::scenario::host_launch_delay:
      return true;
    default:
      return false;
  }
}

std::vector<const finding*> l2_findings(const report& r) {
  std::vector<const finding*> v;
  for (const auto& f : r.findings)
    if (f.level == "L2") v.push_back(&f);
  return v;
}

// What every diagnosis of a simulated job must satisfy, whatever the scenario.
void check_verdict(sim::scenario s, const sim::truth& truth, const report& rep, const std::string& what) {
  INFO(what << ", scenario " << to_string(s));
  for (const auto& f : rep.findings) INFO(f.level << " " << f.kind << ": " << f.summary);
  const auto score = sim::score_case(truth, rep);
  CHECK(score.counts.false_positives == 0);
  const auto l2 = l2_findings(rep);
  const auto faulty = truth.faulty_ranks();
  // Victims are never blamed: every rank an L2 finding names is a faulty one.
  for (const auto* f : l2)
    for (int r : f->ranks) CHECK(std::binary_search(faulty.begin(), faulty.end(), r));
  if (is_rank_fault(s)) {
    REQUIRE(l2.size() == 1);
    CHECK(l2[0]->ranks == truth.faults[0].ranks);
    CHECK(l2[0]->kind == "straggler");
    CHECK(std::abs(l2[0]->first_step - truth.faults[0].first_step) <= (s == sim::scenario::thermal_drift ? 4 : 1));
    CHECK(score.counts.recall() == 1.0);
    if (s == sim::scenario::host_launch_delay)
      CHECK(l2[0]->phase == "idle");
    else
      CHECK(l2[0]->phase != "idle");
  } else {
    CHECK(l2.empty());
  }
  if (s == sim::scenario::healthy) CHECK(rep.findings.empty());
  if (s == sim::scenario::gc_pauses || s == sim::scenario::jit_stall) {
    // The job-wide slow steps are an L1 window, never a straggler.
    bool window = false;
    for (const auto& f : rep.findings) window = window || (f.level == "L1" && f.ranks.empty());
    CHECK(window);
  }
}

// Every scenario the layout can host, through the Kineto traces.
void run_scenarios(const job_case& jc) {
  sim::job_config cfg;
  cfg.sizes = parse_parallel_sizes(jc.layout);
  cfg.schedule = jc.schedule;
  cfg.max_clock_offset_us = jc.clock_skew_us;
  cfg.seed = jc.seed;
  cfg.steps = jc.steps;
  cfg.noise = jc.noise;
  int run = 0;
  for (sim::scenario s : sim::all_scenarios) {
    if (s == sim::scenario::two_faults) continue;  // below, on a layout with two dp groups
    sim::scenario_options so;
    so.onset = static_cast<int>(jc.seed % 3) + 3;
    try {
      sim::plan_faults(s, cfg, so);
    } catch (const invalid_argument&) {
      continue;  // a scenario this layout cannot host (tp-link without tp, ...)
    }
    auto tj = failslow_test::simulate_traces(cfg, s, so);
    diagnose::model_options mo;
    mo.keep_windows = true;  // L3 as well: no false alarm from kernels, links or stages either
    const auto model = diagnose::build_job_model(tj.set, mo);
    const auto rep = diagnose::diagnose(model, tj.job.topo);
    check_verdict(s, tj.job.truth, rep,
                  std::string(jc.layout) + " seed " + std::to_string(jc.seed) + " skew " +
                      std::to_string(jc.clock_skew_us) + " us");
    ++run;
  }
  CHECK(run >= 8);
}

}  // namespace

TEST_CASE("simulated jobs from their Kineto traces: 8 ranks, tp 2 x pp 2 x dp 2, 1F1B", "[diagnose][sim]") {
  run_scenarios(job_cases[0]);
}
TEST_CASE("simulated jobs from their Kineto traces: 8 ranks, pure dp, noise x2, 5 ms skew", "[diagnose][sim]") {
  run_scenarios(job_cases[1]);
}
TEST_CASE("simulated jobs from their Kineto traces: 16 ranks, GPipe, 20 ms skew", "[diagnose][sim]") {
  run_scenarios(job_cases[2]);
}
TEST_CASE("simulated jobs from their Kineto traces: 16 ranks, tp 4, noise x0.5", "[diagnose][sim]") {
  run_scenarios(job_cases[3]);
}
TEST_CASE("simulated jobs from their Kineto traces: 64 ranks, tp 2 x pp 4 x dp 8, GPipe", "[diagnose][sim]") {
  run_scenarios(job_cases[4]);
}

TEST_CASE("two faults at once: the straggler is blamed, the link's ranks are not", "[diagnose][sim]") {
  sim::job_config cfg;
  cfg.sizes = parse_parallel_sizes("tp=2,pp=2,dp=4");
  cfg.steps = 16;
  cfg.seed = 9;
  auto tj = failslow_test::simulate_traces(cfg, sim::scenario::two_faults);
  const auto rep = diagnose::diagnose(diagnose::build_job_model(tj.set), tj.job.topo);
  const auto l2 = l2_findings(rep);
  REQUIRE(l2.size() == 1);
  CHECK(l2[0]->ranks == tj.job.truth.faults[0].ranks);
  CHECK(sim::score_case(tj.job.truth, rep).counts.false_positives == 0);
}

TEST_CASE("window summaries give the same step breakdown as the traces", "[diagnose][sim]") {
  sim::job_config cfg;
  cfg.sizes = parse_parallel_sizes("tp=2,pp=2,dp=2");
  cfg.steps = 6;
  cfg.seed = 4;
  auto tj = failslow_test::simulate_traces(cfg, sim::scenario::compute_straggler);
  const auto from_traces = diagnose::build_job_model(tj.set);
  const auto [from_windows, truth] = failslow_test::simulate_summaries_model(cfg, sim::scenario::compute_straggler);
  REQUIRE(from_windows.world_size == from_traces.world_size);
  REQUIRE(from_windows.steps == from_traces.steps);
  for (std::size_t r = 0; r < 8; ++r)
    for (std::size_t s = 0; s < from_traces.step_count(); ++s) {
      // Kernel sums are exact in both (integer nanoseconds); the period's end is the step's
      // last kernel in both.
      for (std::size_t p : {diagnose::compute_phase, diagnose::communication_phase, diagnose::memory_phase})
        CHECK(from_windows.phase_ns(r, p, s) == Approx(from_traces.phase_ns(r, p, s)).epsilon(1e-12));
      CHECK(from_windows.iteration_ns(r, s) == Approx(from_traces.iteration_ns(r, s)).epsilon(1e-12));
      // Idle from summaries is a lower bound of the traces' (overlapping streams count twice).
      CHECK(from_windows.phase_ns(r, diagnose::idle_phase, s) <=
            from_traces.phase_ns(r, diagnose::idle_phase, s) + 1.0);
    }
}

TEST_CASE("from window summaries: 8 to 512 ranks", "[diagnose][sim][summaries]") {
  struct scale_case {
    const char* layout;
    sim::scenario s;
    std::uint64_t seed;
    int steps;
  };
  const scale_case cases[] = {
      {"tp=1,pp=1,dp=8", sim::scenario::compute_straggler, 11, 12},
      {"tp=2,pp=4,dp=8", sim::scenario::masked_straggler, 12, 12},
      {"tp=2,pp=4,dp=8", sim::scenario::host_launch_delay, 13, 10},
      {"tp=2,pp=4,dp=8", sim::scenario::gc_pauses, 14, 14},
      {"tp=4,pp=4,dp=32", sim::scenario::compute_straggler, 15, 8},
      {"tp=4,pp=4,dp=32", sim::scenario::healthy, 16, 8},
  };
  for (const auto& c : cases) {
    sim::job_config cfg;
    cfg.sizes = parse_parallel_sizes(c.layout);
    cfg.seed = c.seed;
    cfg.steps = c.steps;
    sim::scenario_options so;
    so.onset = 3;
    const auto [model, truth] = failslow_test::simulate_summaries_model(cfg, c.s, so);
    const topology topo(cfg.sizes, cfg.order);
    check_verdict(c.s, truth, diagnose::diagnose(model, topo), std::string(c.layout) + " from summaries");
  }
}

TEST_CASE("from a .fsum byte stream, decoded window by window", "[diagnose][sim][summaries]") {
  sim::job_config cfg;
  cfg.sizes = parse_parallel_sizes("tp=2,pp=2,dp=4");
  cfg.steps = 12;
  cfg.seed = 21;
  sim::scenario_options so;
  so.onset = 4;
  compress::summary_encoder enc([](name_id k) { return std::string(sim::kernel_key_name(k)); });
  std::string bytes = enc.header();
  const auto run = sim::simulate_summaries(cfg, sim::scenario::compute_straggler, so,
                                           [&](compress::window_summary&& w) { enc.encode(w, bytes); });
  const auto model = diagnose::build_job_model_from_summaries(bytes);
  CHECK(model.source == "summaries");
  const auto rep = diagnose::diagnose(model, run.topo);
  check_verdict(sim::scenario::compute_straggler, run.truth, rep, ".fsum");
  // Damage in the middle is reported, the rest diagnosed.
  std::string damaged = bytes;
  damaged[damaged.size() / 2] = static_cast<char>(damaged[damaged.size() / 2] ^ 0x5A);
  const auto model2 = diagnose::build_job_model_from_summaries(damaged);
  bool noted = false;
  for (const auto& n : model2.notes) noted = noted || n.find("damaged block") != std::string::npos;
  CHECK(noted);
  CHECK_NOTHROW(diagnose::diagnose(model2, run.topo));
}

TEST_CASE("the model keeps per-step kernel summaries when asked, from traces and from windows", "[diagnose][sim]") {
  sim::job_config cfg;
  cfg.sizes = parse_parallel_sizes("tp=1,pp=1,dp=4");
  cfg.steps = 4;
  cfg.seed = 2;
  auto tj = failslow_test::simulate_traces(cfg, sim::scenario::healthy);
  diagnose::model_options mo;
  CHECK(diagnose::build_job_model(tj.set, mo).windows.empty());
  mo.keep_windows = true;
  const auto m = diagnose::build_job_model(tj.set, mo);
  REQUIRE(m.windows.size() == 4 * 4);
  // A window's kernel totals add up to the step's compute + communication + memory time.
  for (const auto& w : m.windows) {
    double total = 0;
    for (const auto& k : w.kernels) total += k.total_ns;
    const auto s = static_cast<std::size_t>(
        std::lower_bound(m.steps.begin(), m.steps.end(), static_cast<std::int64_t>(w.window_id)) - m.steps.begin());
    REQUIRE(s < m.step_count());
    const auto r = static_cast<std::size_t>(w.rank);
    CHECK(total == Approx(m.phase_ns(r, diagnose::compute_phase, s) + m.phase_ns(r, diagnose::communication_phase, s) +
                          m.phase_ns(r, diagnose::memory_phase, s))
                       .epsilon(1e-12));
  }
}

TEST_CASE("an assumed layout: ranks that run other work from the start are not called stragglers",
          "[diagnose][sim][summaries]") {
  // Summaries carry no process groups: without the layout, all 64 ranks look like data parallel
  // peers, and the last stage (which also runs the LM head) differs from the first step on.
  for (std::uint64_t seed : {1, 2}) {
    sim::job_config cfg;
    cfg.sizes = parse_parallel_sizes("tp=2,pp=4,dp=8");
    cfg.steps = 12;
    cfg.seed = seed;
    sim::scenario_options so;
    so.onset = 4;
    const auto [model, truth] = failslow_test::simulate_summaries_model(cfg, sim::scenario::compute_straggler, so);
    parallel_sizes dp_only;
    dp_only.dp = 64;
    diagnose::diagnose_options o;
    o.layout_assumed = true;
    const auto rep = diagnose::diagnose(model, topology(dp_only), o);
    INFO("seed " << seed);
    const auto l2 = l2_findings(rep);
    REQUIRE(l2.size() == 1);
    CHECK(l2[0]->ranks == truth.faults[0].ranks);
    bool noted = false;
    for (const auto& n : rep.notes) noted = noted || n.find("give the layout") != std::string::npos;
    CHECK(noted);
  }
}

TEST_CASE("a pure pipeline: each stage against its own history", "[diagnose][sim]") {
  sim::job_config cfg;
  cfg.sizes = parse_parallel_sizes("tp=1,pp=8,dp=1");
  cfg.steps = 14;
  cfg.seed = 5;
  for (sim::scenario s : {sim::scenario::healthy, sim::scenario::compute_straggler, sim::scenario::masked_straggler}) {
    sim::scenario_options so;
    so.onset = 5;
    auto tj = failslow_test::simulate_traces(cfg, s, so);
    const auto rep = diagnose::diagnose(diagnose::build_job_model(tj.set), tj.job.topo);
    check_verdict(s, tj.job.truth, rep, "tp=1,pp=8,dp=1");
    for (const auto& f : rep.findings)
      if (f.level == "L2") CHECK(f.evidence.find("compared_within")->text == "own history");
  }
}
