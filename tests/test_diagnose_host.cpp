// L4 on the host side: steps in which a rank's GPU sat idle because its host stopped launching
// (JIT compilation, garbage collection, a data loader, nothing recorded), hosts that launch
// late, periodic stalls as one finding, and findings in the same steps linked -- on simulated
// jobs of several sizes, seeds, noise levels and clock skews, and on hand-built models for the
// rules the simulator does not exercise.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <failslow/compress/trace_windows.hpp>
#include <failslow/diagnose/diagnose.hpp>
#include <failslow/diagnose/l4_host.hpp>
#include <failslow/diagnose/l4_slow_host.hpp>
#include <failslow/diagnose/l4_waits.hpp>
#include <failslow/sim/score.hpp>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "support/simulated_job.hpp"

using namespace failslow;

namespace {

struct host_case {
  const char* layout;
  std::uint64_t seed;
  double clock_skew_us;
  double noise;
};

const host_case host_cases[] = {
    {"tp=2,pp=2,dp=2", 21, 0, 1.0},
    {"tp=1,pp=1,dp=8", 22, 1000, 2.0},
    {"tp=2,pp=2,dp=4", 23, 20000, 0.5},
    {"tp=2,pp=4,dp=4", 24, 500, 1.0},
};

// The simulated job of a case (the plain, GPU-bound model).
sim::job_config case_config(const host_case& c, int steps) {
  sim::job_config cfg;
  cfg.sizes = parse_parallel_sizes(c.layout);
  cfg.seed = c.seed;
  cfg.steps = steps;
  cfg.noise = c.noise;
  cfg.max_clock_offset_us = c.clock_skew_us;
  return cfg;
}

// The path `failslow diagnose` takes on traces: the model, the waits, the host activity.
report diagnose_traces(const host_case& c, sim::scenario s, int steps = 16) {
  const auto cfg = case_config(c, steps);
  sim::scenario_options so;
  so.onset = static_cast<int>(c.seed % 3) + 3;
  auto tj = failslow_test::simulate_traces(cfg, s, so);
  diagnose::model_options mo;
  mo.keep_windows = true;  // as load_job: L3 finds the links
  auto m = diagnose::build_job_model(tj.set, mo);
  diagnose::attribute_waits(m, tj.set, tj.job.topo);
  diagnose::measure_host_activity(m, tj.set);
  REQUIRE(m.host.measured);
  auto rep = diagnose::diagnose(m, tj.job.topo);
  const auto score = sim::score_case(tj.job.truth, rep);
  INFO("layout " << c.layout << ", seed " << c.seed << ", scenario " << to_string(s));
  for (const auto& f : rep.findings) INFO(f.level << " " << f.kind << ": " << f.summary);
  CHECK(score.counts.false_positives == 0);
  // Recall of dp links is asked in tests/test_diagnose_l3.cpp (this file: that no host stall is claimed).
  if (s != sim::scenario::dp_link) CHECK(score.counts.recall() == 1.0);
  return rep;
}

std::vector<const finding*> of_kind(const report& r, const char* kind) {
  std::vector<const finding*> v;
  for (const auto& f : r.findings)
    if (f.kind == kind) v.push_back(&f);
  return v;
}

// A model of R ranks x S steps of 100 ms with host gaps placed by hand.
diagnose::job_model hand_model(std::size_t R, std::size_t S) {
  diagnose::job_model m;
  m.world_size = static_cast<int>(R);
  for (std::size_t s = 0; s < S; ++s) m.steps.push_back(static_cast<std::int64_t>(100 + s));
  m.iteration_ns = dense_array<double, 2>({R, S});
  m.iteration_ns.fill(100e6);
  m.has_rank.assign(R, true);
  m.host.measured = true;
  m.host.launch_pace_measured = true;
  m.host.gaps.assign(R, {});
  m.host.new_kernels = dense_array<double, 2>({R, S});
  m.host.launch_interval_ns = dense_array<double, 2>({R, S});
  m.host.launch_interval_ns.fill(10e3);
  for (std::size_t r = 0; r < R; ++r)
    for (std::size_t s = 0; s < S; ++s) {  // every step has a small gap (the step boundary)
      diagnose::host_gap g;
      g.step = s;
      g.start_ns = 0;
      g.end_ns = 1'000'000;
      g.gpu_idle_ns = 200e3 + 10e3 * static_cast<double>((r + s) % 3);
      g.cpu_busy_ns = 900e3;
      g.top_ops = {{"aten::copy_", 900e3}};
      m.host.gaps[r].push_back(g);
    }
  return m;
}

// A healthy data-parallel job of `ranks` ranks and 20 steps as CPU traces give it (every rank
// measured on the host, no launch gaps, no kernel windows); tests set its idle phase.
diagnose::job_model cpu_trace_model(std::size_t ranks, std::uint64_t seed) {
  sim::job_config cfg;
  cfg.sizes = parse_parallel_sizes("tp=1,pp=1,dp=" + std::to_string(ranks));
  cfg.seed = seed;
  cfg.steps = 20;
  auto m = failslow_test::simulate_summaries_model(cfg, sim::scenario::healthy).first;
  m.source = "traces";
  m.windows.clear();
  m.measured_on_host.assign(m.rank_count(), true);
  return m;
}

void stall_at(diagnose::job_model& m, int rank, std::size_t step, double idle_ns, double busy_ns, const char* op) {
  auto& g = m.host.gaps[static_cast<std::size_t>(rank)][step];
  g.gpu_idle_ns = idle_ns;
  g.start_ns = 0;
  g.end_ns = static_cast<std::int64_t>(idle_ns);
  g.cpu_busy_ns = busy_ns;
  g.top_ops = {{op, busy_ns}};
}

}  // namespace

TEST_CASE("host stalls on simulated jobs: JIT compilation on the right rank and step, with its new kernels",
          "[l4][host]") {
  for (const auto& c : host_cases) {
    const auto rep = diagnose_traces(c, sim::scenario::jit_stall);
    const auto stalls = of_kind(rep, "host_stall");
    INFO("layout " << c.layout << ", seed " << c.seed);
    REQUIRE(stalls.size() == 1);
    const auto& f = *stalls.front();
    CHECK(f.level == "L4");
    CHECK(f.phase == "jit_compilation");
    CHECK(f.first_step == f.last_step);
    const auto* k = f.evidence.find("new_kernels");
    REQUIRE(k);
    CHECK(k->text.find("triton") != std::string::npos);
    CHECK(f.evidence.number("gpu_idle_ns") > 300e6);  // the 450 ms stall, less what overlapped
    // It is the story of that rank and step: no rank holds the job back "around" it.
    for (const auto& g : rep.findings) CHECK(g.kind != "holds_back");
  }
}

TEST_CASE("host stalls on simulated jobs: GC pauses every 4 steps on changing ranks are one periodic finding",
          "[l4][host]") {
  for (const auto& c : host_cases) {
    const auto rep = diagnose_traces(c, sim::scenario::gc_pauses, 24);
    const auto stalls = of_kind(rep, "host_stall");
    INFO("layout " << c.layout << ", seed " << c.seed);
    REQUIRE(stalls.size() == 1);
    const auto& f = *stalls.front();
    CHECK(f.phase == "garbage_collection");
    CHECK(f.evidence.number("period_steps") == 4);
    CHECK(f.evidence.find("steps")->numbers.size() >= 3);
    CHECK(f.summary.find("every 4 steps") != std::string::npos);
    CHECK(f.evidence.find("host_ops")->text.find("gc.collect") != std::string::npos);
    // The job's slow steps are one periodic L1 window, linked to the stalls that cause them.
    for (const auto& w : rep.findings)
      if (w.kind == "slow_window" && w.ranks.empty() && w.evidence.find("pattern")->text == "recurring") {
        CHECK(w.evidence.number("period_steps") == 4);
        CHECK(w.summary.find("one every 4 steps") != std::string::npos);
        REQUIRE(w.evidence.find("co_occurs_with"));
        CHECK(w.evidence.find("co_occurs_with")->text.find("host_stall") != std::string::npos);
      }
  }
}

TEST_CASE("recurrence periods: the gcd of the gaps when most gaps are exactly it", "[l4][host][l1]") {
  CHECK(diagnose::recurrence_period({8, 14, 20, 26, 32, 38}) == 6);
  CHECK(diagnose::recurrence_period({3, 8, 13, 23, 28}) == 5);  // one missed
  CHECK(diagnose::recurrence_period({3, 4, 11, 20}) == 0);      // irregular
  CHECK(diagnose::recurrence_period({2, 12, 22}) == 10);
  CHECK(diagnose::recurrence_period({2, 12}) == 0);          // two are no pattern
  CHECK(diagnose::recurrence_period({4, 10, 12, 18}) == 0);  // gcd 2, never exactly 2
}

TEST_CASE("a host that launches late: the idle-phase straggler says so, with its launch pace against its peers'",
          "[l4][host]") {
  for (const auto& c : host_cases) {
    const auto rep = diagnose_traces(c, sim::scenario::host_launch_delay);
    INFO("layout " << c.layout << ", seed " << c.seed);
    bool said = false;
    for (const auto& f : rep.findings)
      if (f.kind == "straggler" && f.phase == "idle") {
        CHECK(f.evidence.number("launch_interval_ratio") > 5);
        CHECK(f.summary.find("launches late") != std::string::npos);
        said = true;
      }
    CHECK(said);
    CHECK(of_kind(rep, "host_stall").empty());
  }
}

TEST_CASE("a host that launches slower while its GPU still has queued work is named, host-paced jobs stay quiet",
          "[l4][host]") {
  // The plain simulator's host runs far ahead of its GPU: a host 5-10x slower per launch
  // (severity 0.1-0.25 of the scenario's 40x) does not yet idle the GPU, so no step time, idle
  // or wait shows it -- only the launch pace against the peers' hosts.
  for (const auto& c : host_cases)
    for (const double severity : {0.1, 0.25}) {
      const auto cfg = case_config(c, 16);
      sim::scenario_options so;
      so.onset = 6;
      so.severity = severity;
      const auto tj = failslow_test::simulate_traces(cfg, sim::scenario::host_launch_delay, so);
      diagnose::model_options mo;
      mo.keep_windows = true;
      auto m = diagnose::build_job_model(tj.set, mo);
      diagnose::attribute_waits(m, tj.set, tj.job.topo);
      diagnose::measure_host_activity(m, tj.set);
      const auto rep = diagnose::diagnose(m, tj.job.topo);
      INFO("layout " << c.layout << ", seed " << c.seed << ", severity " << severity);
      for (const auto& f : rep.findings) UNSCOPED_INFO(f.level << " " << f.kind << ": " << f.summary);
      const auto& fault = tj.job.truth.faults.front();
      const auto hosts = of_kind(rep, "slow_host");
      REQUIRE(hosts.size() == 1);
      CHECK(hosts[0]->ranks == fault.ranks);
      CHECK(std::abs(hosts[0]->first_step - fault.first_step) <= 1);
      CHECK(hosts[0]->evidence.number("launch_interval_ratio") > 2);
      const auto score = sim::score_case(tj.job.truth, rep);
      CHECK(score.counts.false_positives == 0);
      CHECK(score.counts.recall() == 1.0);
    }
  // Host-paced jobs (the host about as fast as the GPU, launch pace varying with the data
  // loader): no host is slower than its peers'.
  for (const auto* layout : {"tp=2,pp=4,dp=4", "tp=1,pp=1,dp=8"})
    for (std::uint64_t seed : {1u, 2u}) {
      auto cfg = failslow_test::calibrated_config(layout, seed, 20);
      cfg.noise = 2;
      const auto tj = failslow_test::simulate_traces(cfg, sim::scenario::healthy);
      auto m = diagnose::build_job_model(tj.set);
      diagnose::measure_host_activity(m, tj.set);
      INFO("calibrated " << layout << ", seed " << seed);
      CHECK(diagnose::find_slow_hosts(m, tj.job.topo).hosts.empty());
    }
}

TEST_CASE("the hosts' launch pace from window summaries: the same as from traces, and a slow host found from it",
          "[l4][host]") {
  // Scale mode keeps, per window, the count of kernel launch calls and the median time between
  // consecutive ones (compress::window_summary::launch): the always-on path sees a host that
  // launches 5-10x slower before its GPU idles for it, as the traces do.
  for (const auto& c : host_cases) {
    const auto cfg = case_config(c, 16);
    sim::scenario_options so;
    so.onset = 6;
    INFO("layout " << c.layout << ", seed " << c.seed);
    {  // the pace of each rank and step, both ways
      const auto tj = failslow_test::simulate_traces(cfg, sim::scenario::host_launch_delay, so);
      auto traced = diagnose::build_job_model(tj.set);
      diagnose::measure_host_activity(traced, tj.set);
      const auto summed = failslow_test::simulate_summaries_model(cfg, sim::scenario::host_launch_delay, so).first;
      REQUIRE(summed.host.launch_pace_measured);
      CHECK_FALSE(summed.host.measured);  // no gaps or new kernels: those need host events
      REQUIRE(summed.rank_count() == traced.rank_count());
      REQUIRE(summed.steps == traced.steps);
      std::size_t compared = 0;
      for (std::size_t r = 0; r < summed.rank_count(); ++r)
        for (std::size_t s = 0; s < summed.step_count(); ++s) {
          const double a = summed.host.launch_interval_ns(r, s), b = traced.host.launch_interval_ns(r, s);
          REQUIRE(std::isfinite(a));
          if (!std::isfinite(b)) continue;
          CHECK(a == Approx(b).epsilon(1e-9));
          ++compared;
        }
      CHECK(compared == summed.rank_count() * summed.step_count());
      // The traces compressed (failslow compress): their windows carry the same pace.
      diagnose::job_model_builder b;
      for (const auto& t : tj.set.traces)
        compress::summarize_trace(t.data, trace::map_steps(t.data, tj.set.names), t.rank, {},
                                  [&](compress::window_summary&& w) {
                                    b.add_window(std::move(w), [&](name_id k) { return tj.set.names.name(k); });
                                  });
      const auto compressed = b.finish();
      REQUIRE(compressed.host.launch_pace_measured);
      REQUIRE(compressed.steps == traced.steps);
      for (std::size_t r = 0; r < compressed.rank_count(); ++r)
        for (std::size_t s = 0; s < compressed.step_count(); ++s)
          CHECK(compressed.host.launch_interval_ns(r, s) == Approx(traced.host.launch_interval_ns(r, s)).epsilon(1e-9));
    }
    for (const double severity : {0.1, 0.25}) {
      so.severity = severity;
      const auto [m, truth] = failslow_test::simulate_summaries_model(cfg, sim::scenario::host_launch_delay, so);
      const auto rep = diagnose::diagnose(m, topology(cfg.sizes));
      INFO("severity " << severity);
      for (const auto& f : rep.findings) UNSCOPED_INFO(f.level << " " << f.kind << ": " << f.summary);
      const auto hosts = of_kind(rep, "slow_host");
      REQUIRE(hosts.size() == 1);
      CHECK(hosts[0]->ranks == truth.faults.front().ranks);
      CHECK(std::abs(hosts[0]->first_step - truth.faults.front().first_step) <= 1);
      CHECK(hosts[0]->evidence.number("launch_interval_ratio") > 2);
      const auto score = sim::score_case(truth, rep);
      CHECK(score.counts.false_positives == 0);
      CHECK(score.counts.recall() == 1.0);
    }
    so.severity = 1;
  }
  // Healthy summaries, GPU-bound and host-paced, at twice the noise: no host is slower.
  for (const auto* layout : {"tp=2,pp=4,dp=4", "tp=1,pp=1,dp=8"})
    for (std::uint64_t seed : {1u, 2u})
      for (const bool calibrated : {false, true}) {
        auto cfg = calibrated ? failslow_test::calibrated_config(layout, seed, 20) : sim::job_config{};
        if (!calibrated) {
          cfg.sizes = parse_parallel_sizes(layout);
          cfg.seed = seed;
          cfg.steps = 20;
        }
        cfg.noise = 2;
        const auto m = failslow_test::simulate_summaries_model(cfg, sim::scenario::healthy).first;
        INFO(layout << ", seed " << seed << (calibrated ? ", calibrated" : ", GPU-bound"));
        REQUIRE(m.host.launch_pace_measured);
        CHECK(diagnose::find_slow_hosts(m, topology(cfg.sizes)).hosts.empty());
      }
}

TEST_CASE("host stalls: none on healthy jobs, compute stragglers or slow links", "[l4][host]") {
  for (const auto& c : host_cases)
    for (auto s : {sim::scenario::healthy, sim::scenario::compute_straggler, sim::scenario::dp_link}) {
      sim::job_config probe;
      probe.sizes = parse_parallel_sizes(c.layout);
      try {
        sim::plan_faults(s, probe);
      } catch (const invalid_argument&) {
        continue;
      }
      const auto rep = diagnose_traces(c, s);
      INFO("layout " << c.layout << ", seed " << c.seed << ", scenario " << to_string(s));
      CHECK(of_kind(rep, "host_stall").empty());
      if (s == sim::scenario::healthy) CHECK(rep.findings.empty());
    }
}

TEST_CASE("host stall causes from what the host recorded: nothing, a data loader, another operator", "[l4][host]") {
  auto m = hand_model(4, 12);
  stall_at(m, 1, 5, 40e6, 1e6, "aten::copy_");                                                     // host absent
  stall_at(m, 2, 7, 30e6, 29e6, "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__");  // loader
  stall_at(m, 3, 9, 25e6, 24e6, "aten::nonzero");                                                  // busy elsewhere
  stall_at(m, 0, 0, 90e6, 1e6, "aten::copy_");  // the first step is warm-up: not judged
  const auto found = diagnose::find_host_stalls(m);
  REQUIRE(found.stalls.size() == 3);
  CHECK(found.stalls[0].cause == diagnose::host_cause::host_absent);
  CHECK(found.stalls[0].ranks == std::vector<int>{1});
  CHECK(found.stalls[0].steps == std::vector<std::int64_t>{105});
  CHECK(found.stalls[1].cause == diagnose::host_cause::data_loader);
  CHECK(found.stalls[2].cause == diagnose::host_cause::host_busy);
  CHECK(found.stalls[2].cpu_busy_fraction == Approx(0.96));
  // Below the size threshold (5 % of the 100 ms step) nothing is a stall, however regular the rest.
  auto small = hand_model(4, 12);
  stall_at(small, 1, 5, 4e6, 1e6, "aten::copy_");
  CHECK(diagnose::find_host_stalls(small).stalls.empty());
  // New kernels in the step make it JIT compilation, whatever the host ran.
  auto jit = hand_model(4, 12);
  stall_at(jit, 2, 6, 50e6, 49e6, "CompiledFunction");
  jit.host.new_kernels(2, 6) = 2;
  jit.host.new_kernel_names[{2, 6}] = {"triton_poi_fused_add_0", "triton_red_fused_sum_1"};
  const auto j = diagnose::find_host_stalls(jit);
  REQUIRE(j.stalls.size() == 1);
  CHECK(j.stalls[0].cause == diagnose::host_cause::jit_compilation);
  CHECK(j.stalls[0].new_kernels.size() == 2);
  diagnose::host_stall_options bad;
  bad.busy_fraction = 1.5;
  CHECK_THROWS_AS(diagnose::find_host_stalls(m, bad), invalid_argument);
  bad = {};
  bad.period_min = 1;
  CHECK_THROWS_AS(diagnose::find_host_stalls(m, bad), invalid_argument);
}

TEST_CASE("host stalls: a long gap within the job's own heavy tail is none, the same gap in a steady job is one",
          "[l4][host]") {
  // 16 ranks x 40 steps whose largest launch gap idles the GPU 1.5 ms x lognormal(sigma): one
  // step of rank 3 idles 18 ms. Against the rank's own 39 steps that is z 16 and ln-z 5.5 for
  // sigma 0.45 -- the per-rank tests alone call it a stall -- but among the job's 624 judged
  // steps such a tail draws up to ~90 ms (the Gumbel level at job_alpha 1 %): no stall. With
  // sigma 0.1 the level is ~4 ms: a stall. Several seeds.
  for (std::uint64_t seed = 1; seed <= 5; ++seed)
    for (const double sigma : {0.45, 0.1}) {
      auto m = hand_model(16, 40);
      std::mt19937_64 rng(seed);
      std::normal_distribution<double> z(0, 1);
      for (auto& gaps : m.host.gaps)
        for (auto& g : gaps) {
          g.gpu_idle_ns = 1.5e6 * std::exp(sigma * std::clamp(z(rng), -3.0, 3.0));
          g.start_ns = 0;
          g.end_ns = static_cast<std::int64_t>(g.gpu_idle_ns) + 20'000;
          g.cpu_busy_ns = 0;
          g.top_ops.clear();
        }
      stall_at(m, 3, 25, 18e6, 0, "aten::copy_");
      INFO("seed " << seed << ", sigma " << sigma);
      const auto found = diagnose::find_host_stalls(m);
      if (sigma > 0.2) {
        CHECK(found.stalls.empty());
        continue;
      }
      REQUIRE(found.stalls.size() == 1);
      CHECK(found.stalls[0].ranks == std::vector<int>{3});
      CHECK(found.stalls[0].steps == std::vector<std::int64_t>{125});
    }
  diagnose::host_stall_options bad;
  bad.job_alpha = 0;
  CHECK_THROWS_AS(diagnose::find_host_stalls(hand_model(4, 12), bad), invalid_argument);
}

TEST_CASE("recurring host stalls: a period where the steps have one, irregular ones listed without", "[l4][host]") {
  auto periodic = hand_model(8, 30);
  for (std::size_t s : {3u, 8u, 13u, 23u, 28u})  // every 5 steps, one missed
    stall_at(periodic, static_cast<int>(s % 8), s, 60e6, 58e6, "gc.collect");
  const auto p = diagnose::find_host_stalls(periodic);
  REQUIRE(p.stalls.size() == 1);
  CHECK(p.stalls[0].cause == diagnose::host_cause::garbage_collection);
  CHECK(p.stalls[0].period_steps == 5);
  CHECK(p.stalls[0].steps.size() == 5);
  CHECK(p.stalls[0].ranks.size() == 5);
  auto irregular = hand_model(8, 30);
  for (std::size_t s : {3u, 4u, 11u, 20u}) stall_at(irregular, 1, s, 60e6, 1e6, "aten::copy_");
  const auto q = diagnose::find_host_stalls(irregular);
  REQUIRE(q.stalls.size() == 1);
  CHECK(q.stalls[0].period_steps == 0);
  CHECK(q.stalls[0].steps.size() == 4);
  // Two occurrences are not a pattern: one finding per step.
  auto twice = hand_model(8, 30);
  stall_at(twice, 1, 6, 60e6, 1e6, "aten::copy_");
  stall_at(twice, 4, 16, 60e6, 1e6, "aten::copy_");
  CHECK(diagnose::find_host_stalls(twice).stalls.size() == 2);
}

TEST_CASE("findings in the same steps name each other: a host stall and the job's slow step", "[l4][host]") {
  const auto rep = diagnose_traces(host_cases[0], sim::scenario::jit_stall);
  const finding* stall = nullptr;
  const finding* window = nullptr;
  for (const auto& f : rep.findings) {
    if (f.kind == "host_stall") stall = &f;
    if (f.kind == "slow_window" && f.ranks.empty()) window = &f;
  }
  REQUIRE(stall);
  REQUIRE(window);
  const auto* a = stall->evidence.find("co_occurs_with");
  const auto* b = window->evidence.find("co_occurs_with");
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->text.find("slow_window") != std::string::npos);
  CHECK(b->text.find("host_stall") != std::string::npos);
}

TEST_CASE("host stalls from summaries: JIT stalls and GC pauses on the right ranks and steps, from the GPU's idle",
          "[l4][host][summaries]") {
  // Window summaries keep no host events: the model's host activity stays unmeasured and the
  // stalls come from each rank's idle phase (period - its kernels' time), new kernel keys in
  // its window making it JIT compilation. Severity 0.1: an 18 ms pause in a step of ~80 ms.
  const struct {
    const char* layout;
    std::uint64_t seed;
    double noise;
  } cases[] = {{"tp=2,pp=2,dp=2", 31, 1.0},
               {"tp=4,pp=2,dp=8", 32, 2.0},
               {"tp=1,pp=1,dp=8", 33, 2.0},
               {"tp=2,pp=4,dp=4", 34, 0.5}};
  for (const auto& c : cases)
    for (auto s : {sim::scenario::jit_stall, sim::scenario::gc_pauses})
      for (double severity : {1.0, 0.1}) {
        sim::job_config cfg;
        cfg.sizes = parse_parallel_sizes(c.layout);
        cfg.seed = c.seed;
        cfg.noise = c.noise;
        cfg.steps = 20;
        sim::scenario_options so;
        so.severity = severity;
        diagnose::model_options mo;
        mo.keep_windows = true;
        const auto [m, truth] = failslow_test::simulate_summaries_model(cfg, s, so, mo);
        INFO(c.layout << ", seed " << c.seed << ", " << to_string(s) << ", severity " << severity);
        REQUIRE_FALSE(m.host.measured);
        const auto rep = diagnose::diagnose(m, topology(cfg.sizes));
        const auto stalls = of_kind(rep, "host_stall");
        REQUIRE(!stalls.empty());
        for (const auto* f : stalls) {
          CHECK(f->phase == (s == sim::scenario::jit_stall ? "jit_compilation" : "host_unrecorded"));
          CHECK(f->evidence.find("cpu_busy_fraction") == nullptr);  // no host events: not measured
          CHECK(f->summary.find("running no kernel") != std::string::npos);
        }
        const auto score = sim::score_case(truth, rep);
        CHECK(score.counts.recall() == 1.0);
        CHECK(score.counts.precision() == 1.0);
        if (s == sim::scenario::jit_stall) CHECK(stalls.front()->evidence.find("new_kernels") != nullptr);
      }
}

TEST_CASE("host stalls from summaries: none on healthy or faulty jobs without a stall, none shared by many ranks",
          "[l4][host][summaries]") {
  for (std::uint64_t seed : {41u, 42u, 43u})
    for (auto s : {sim::scenario::healthy, sim::scenario::compute_straggler, sim::scenario::slow_stage,
                   sim::scenario::dp_link, sim::scenario::thermal_drift}) {
      sim::job_config cfg;
      cfg.sizes = parse_parallel_sizes(seed == 42 ? "tp=2,pp=4,dp=4" : "tp=4,pp=2,dp=4");
      cfg.seed = seed;
      cfg.noise = 2.0;
      cfg.steps = 20;
      const auto [m, truth] = failslow_test::simulate_summaries_model(cfg, s);
      INFO("seed " << seed << ", " << to_string(s));
      CHECK(of_kind(diagnose::diagnose(m, topology(cfg.sizes)), "host_stall").empty());
    }
  // A host-paced job's idle (1.5 ms per step, 20 % multiplicative jitter). A 30 ms idle on one
  // rank that the job waited for is a stall; the same on half the ranks of a step (a bubble the
  // ranks of other stages wait in, a synchronised pause) is the job's, which L1 reports; a
  // 6 ms loader tail that cost the job nothing is jitter; a 60 ms pause that pipeline slack hid
  // from the job is still a stall (far outside the jitter).
  sim::job_config cfg;
  cfg.sizes = parse_parallel_sizes("tp=2,pp=2,dp=2");
  cfg.seed = 44;
  cfg.steps = 14;
  auto [m, truth] = failslow_test::simulate_summaries_model(cfg, sim::scenario::healthy);
  const std::size_t idle = m.phase_index("idle");
  REQUIRE(idle < m.phase_count());
  std::mt19937_64 rng(44);
  std::normal_distribution<double> jitter(0, 0.2);
  for (std::size_t r = 0; r < m.rank_count(); ++r)
    for (std::size_t s = 0; s < m.step_count(); ++s) m.phase_ns(r, idle, s) = 1.5e6 * std::exp(jitter(rng));
  m.phase_ns(3, idle, 6) += 30e6;
  for (std::size_t r : {0u, 2u, 4u, 6u}) m.phase_ns(r, idle, 10) += 30e6;
  m.phase_ns(5, idle, 8) = 6e6;                       // a loader's tail on a rank with slack: the job did not wait
  m.phase_ns(1, idle, 12) += 60e6;                    // a pause the job did not wait for either
  for (std::size_t r = 0; r < m.rank_count(); ++r) {  // the job waited in steps 6 and 10
    m.iteration_ns(r, 6) += 30e6;
    m.iteration_ns(r, 10) += 30e6;
  }
  const auto found = diagnose::find_host_stalls(m);
  REQUIRE(found.stalls.size() == 2);
  for (const auto& st : found.stalls) {
    CHECK(st.cause == diagnose::host_cause::host_unrecorded);
    CHECK(st.from_idle_phase);
  }
  CHECK(found.stalls[0].ranks == std::vector<int>{3});
  CHECK(found.stalls[0].steps == std::vector<std::int64_t>{m.steps[6]});
  CHECK(found.stalls[1].ranks == std::vector<int>{1});
  CHECK(found.stalls[1].steps == std::vector<std::int64_t>{m.steps[12]});
  diagnose::host_stall_options bad;
  bad.local_share = 0;
  CHECK_THROWS_AS(diagnose::find_host_stalls(m, bad), invalid_argument);
}

TEST_CASE("host stalls in CPU traces: pauses outside profiled operators, from the time no operator ran", "[l4][host]") {
  // Traces without GPU activity (torch.profiler on a CPU job) have no launches to measure; their
  // idle phase is the time no profiled operator ran. A rank that pauses 80 ms every 4 or 6 steps
  // (the others wait for it in their collectives) is a recurring stall the host recorded nothing
  // of; the host's jitter alone is none. Idle varies multiplicatively, up to a log sd of 0.8 (a
  // real 4-process job on 2 cores idles 1.5-10 ms a step): there a pause every 4 steps is under
  // the one-step bar and found by its count.
  for (const std::size_t ranks : {4u, 16u})
    for (const double spread : {0.5, 0.8})
      for (const std::uint64_t seed : {45u, 46u, 47u})
        for (const std::size_t period : {0u, 4u, 6u}) {
          auto m = cpu_trace_model(ranks, seed);
          const std::size_t idle = m.phase_index("idle");
          REQUIRE(idle < m.phase_count());
          std::mt19937_64 rng(seed);
          std::normal_distribution<double> jitter(0, spread);
          for (std::size_t r = 0; r < m.rank_count(); ++r)
            for (std::size_t s = 0; s < m.step_count(); ++s) m.phase_ns(r, idle, s) = 3e6 * std::exp(jitter(rng));
          std::size_t pauses = 0;
          const int slow = static_cast<int>(seed % ranks);
          for (std::size_t s = 3; period > 0 && s < m.step_count(); s += period, ++pauses) {
            m.phase_ns(static_cast<std::size_t>(slow), idle, s) += 80e6;
            for (std::size_t r = 0; r < m.rank_count(); ++r) m.iteration_ns(r, s) += 80e6;
          }
          INFO(ranks << " ranks, log sd " << spread << ", seed " << seed << ", a pause every " << period << " steps");
          const auto found = diagnose::find_host_stalls(m);
          REQUIRE(found.stalls.size() == (period > 0 ? 1u : 0u));
          if (period == 0) continue;
          const auto& st = found.stalls.front();
          CHECK(st.cause == diagnose::host_cause::host_absent);
          CHECK(st.on_host);
          CHECK(st.ranks == std::vector<int>{slow});
          CHECK(st.steps.size() == pauses);
          CHECK(st.period_steps == static_cast<std::int64_t>(period));
          if (ranks == 4 && seed == 45) {
            const auto rep = diagnose::diagnose(m, topology(parse_parallel_sizes("tp=1,pp=1,dp=4")));
            const auto stalls = of_kind(rep, "host_stall");
            REQUIRE(stalls.size() == 1);
            CHECK(stalls.front()->summary.find("ran no profiled operator for") != std::string::npos);
          }
        }
}

TEST_CASE("host stalls in CPU traces: hiccups every rank has are none, a pause beyond them is one", "[l4][host]") {
  // A CPU job's idle is ~1 ms a step with a steady host, and 4-10 ms in a fifth of the steps on
  // every rank (4 processes on 2 cores: a rank descheduled now and then; a real DDP job's traces
  // look so). Each hiccup is far out against its rank's own MAD, and used to be called a stall
  // "4 times between steps 1 and 17" on two or all four ranks; they are the job's routine, and
  // the far-out fence on the other ranks' upper tail says so. An 80 ms pause is beyond it.
  for (const std::size_t ranks : {4u, 8u})
    for (const std::uint64_t seed : {61u, 62u, 63u, 64u, 65u})
      for (const bool pause : {false, true}) {
        auto m = cpu_trace_model(ranks, seed);
        const std::size_t idle = m.phase_index("idle");
        REQUIRE(idle < m.phase_count());
        std::mt19937_64 rng(seed);
        std::normal_distribution<double> steady(1e6, 0.1e6);
        std::uniform_real_distribution<double> u(0, 1), hiccup(4e6, 10e6);
        const int slow = static_cast<int>(seed % ranks);
        for (std::size_t s = 0; s < m.step_count(); ++s) {
          double longest = 0;
          for (std::size_t r = 0; r < m.rank_count(); ++r) {
            double x = std::max(0.5e6, steady(rng)) + (u(rng) < 0.2 ? hiccup(rng) : 0.0);
            if (pause && static_cast<int>(r) == slow && s == 9) x += 80e6;
            m.phase_ns(r, idle, s) = x;
            longest = std::max(longest, x);
          }
          for (std::size_t r = 0; r < m.rank_count(); ++r) m.iteration_ns(r, s) += longest;  // the others wait
        }
        INFO(ranks << " ranks, seed " << seed << (pause ? ", an 80 ms pause in step 9" : ", healthy"));
        const auto found = diagnose::find_host_stalls(m);
        for (const auto& st : found.stalls)
          for (const auto& oc : st.occurrences) UNSCOPED_INFO("stall: rank " << oc.rank << " step " << oc.step);
        REQUIRE(found.stalls.size() == (pause ? 1u : 0u));
        if (!pause) continue;
        CHECK(found.stalls.front().ranks == std::vector<int>{slow});
        CHECK(found.stalls.front().steps == std::vector<std::int64_t>{m.steps[9]});
        if (ranks == 8 && seed == 65) {  // a rank with 2 measured steps is not judged, nor counted
          const std::size_t sparse = static_cast<std::size_t>(slow + 1) % ranks;
          for (std::size_t s = 2; s < m.step_count(); ++s)
            m.iteration_ns(sparse, s) = std::numeric_limits<double>::quiet_NaN();
          const auto again = diagnose::find_host_stalls(m);
          REQUIRE(again.stalls.size() == 1);
          CHECK(again.stalls.front().ranks == std::vector<int>{slow});
        }
      }
}

TEST_CASE("host stalls on host-paced jobs: the data loader's jitter is none, a GC pause is one", "[l4][host]") {
  // Calibrated jobs: the GPU idles 1-3 ms at every step's start while the host loads the next
  // batch, with a multiplicative right tail; only the relative test (ln idle against the job's
  // typical spread) tells that tail from a stall.
  // At noise x2 each 45 ms pause is under the level one step must reach among the job's
  // steps, and their number is the evidence (recurring: the count of steps in the tail).
  for (const auto* layout : {"tp=2,pp=4,dp=4", "tp=1,pp=1,dp=8", "tp=2,pp=2,dp=4"})
    for (std::uint64_t seed : {1u, 2u, 3u, 4u}) {
      auto cfg = failslow_test::calibrated_config(layout, seed, 24);
      if (seed == 4) cfg.noise = 2;
      INFO("layout " << layout << ", seed " << seed << ", noise " << cfg.noise);
      for (auto s : {sim::scenario::healthy, sim::scenario::gc_pauses}) {
        sim::scenario_options so;
        so.severity = 0.25;  // 45 ms pauses
        auto tj = failslow_test::simulate_traces(cfg, s, so);
        auto m = diagnose::build_job_model(tj.set);
        diagnose::measure_host_activity(m, tj.set);
        REQUIRE(m.host.measured);
        const auto found = diagnose::find_host_stalls(m);
        if (s == sim::scenario::healthy) {
          CHECK(found.stalls.empty());
          continue;
        }
        std::vector<int> truth_ranks;
        for (const auto& f : tj.job.truth.faults) truth_ranks.insert(truth_ranks.end(), f.ranks.begin(), f.ranks.end());
        REQUIRE_FALSE(found.stalls.empty());
        for (const auto& st : found.stalls)
          for (int r : st.ranks) CHECK(std::find(truth_ranks.begin(), truth_ranks.end(), r) != truth_ranks.end());
      }
    }
}
