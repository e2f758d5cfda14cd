// L4: who waited for whom. Collective instances matched across ranks (group
// collectives by process group and order, transfers by common end time with
// pipeline neighbours), waits blamed on the last arriver with cascades passed
// to their root, and the rank that holds the job back -- found on simulated
// jobs of several sizes, seeds and clock skews, never a victim, and quiet on
// healthy jobs.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <failslow/diagnose/diagnose.hpp>
#include <failslow/diagnose/l4_waits.hpp>
#include <failslow/sim/score.hpp>
#include <failslow/trace/clock_align.hpp>
#include <failslow/trace/collective_match.hpp>
#include <random>
#include <string>
#include <vector>

#include "support/simulated_job.hpp"

using namespace failslow;

namespace {

struct l4_job_case {
  int tp, pp, dp;
  std::uint64_t seed;
  double clock_skew_us;
};

diagnose::job_model l4_model_of(const failslow_test::traced_job& tj) {
  auto m = diagnose::build_job_model(tj.set);
  diagnose::attribute_waits(m, tj.set, tj.job.topo);
  return m;
}

// R ranks x S steps of `iteration` ns each, with wait attribution whose tables are all zero
// (the tests fill late_ns, caused_ns and victims).
diagnose::job_model waits_model(std::size_t R, std::size_t S, double iteration) {
  diagnose::job_model m;
  m.world_size = static_cast<int>(R);
  for (std::size_t s = 0; s < S; ++s) m.steps.push_back(static_cast<std::int64_t>(s));
  m.has_rank.assign(R, true);
  m.iteration_ns = dense_array<double, 2>({R, S});
  m.iteration_ns.fill(iteration);
  auto& w = m.waits;
  w.available = true;
  w.collectives = w.instances = R * S;
  for (auto* a : {&w.waited_ns, &w.caused_ns, &w.late_ns, &w.p2p_waited_ns}) {
    *a = dense_array<double, 2>({R, S});
    a->fill(0);
  }
  return m;
}

sim::job_config l4_config(const l4_job_case& c, int steps) {
  sim::job_config cfg;
  cfg.sizes = parallel_sizes{};
  cfg.sizes.tp = c.tp;
  cfg.sizes.pp = c.pp;
  cfg.sizes.dp = c.dp;
  cfg.steps = steps;
  cfg.seed = c.seed;
  cfg.max_clock_offset_us = c.clock_skew_us;
  return cfg;
}

}  // namespace

TEST_CASE(
    "match_collectives: group instances by order, transfers by common "
    "end, the rest counted",
    "[l4][match]") {
  // Three ranks; a process group of ranks 0-2 runs two all-reduces; ranks 0 and
  // 1 exchange two transfers under a 3-rank key (so they need the partner
  // rule), rank 1's clock 7 ms ahead; rank 2 has a transfer nobody matches; a
  // key with differing counts is skipped.
  trace::trace_set set;
  const auto ar = set.names.intern("ncclDevKernel_AllReduce_Sum_bf16_RING_LL");
  const auto p2p = set.names.intern("ncclDevKernel_SendRecv");
  const auto odd = set.names.intern("ncclDevKernel_AllGather_RING_LL");
  set.world_size = 3;
  for (int r = 0; r < 3; ++r) {
    trace::rank_trace t;
    t.rank = r;
    const std::int64_t clock = r == 1 ? 7'000'000 : 0;
    auto add = [&](name_id name, std::int64_t start, std::int64_t end) {
      event e;
      e.kind = event_kind::collective;
      e.name = name;
      e.start_ns = start + clock;
      e.end_ns = end + clock;
      e.device = 0;
      t.data.events.push_back(e);
    };
    add(ar, 1000 + 100 * r, 5000);
    add(ar, 9000 + 300 * r, 12000);
    if (r < 2) {  // ends 10 ns apart in true time: two transfers
      add(p2p, 20'000 + 500 * r, 30'000 + 10 * r);
      add(p2p, 40'000 + 900 * r, 90'000 + 10 * r);
    }
    if (r == 2) add(p2p, 140'000, 150'000);  // no partner ends near it
    add(odd, 160'000, 161'000);
    if (r == 0) add(odd, 162'000, 163'000);  // rank 0 has two, the others one: skipped
    set.traces.push_back(std::move(t));
  }
  trace::collective_match_options o;
  o.partners = [](int rank) {
    return rank == 0 ? std::vector<int>{1} : rank == 1 ? std::vector<int>{0} : std::vector<int>{};
  };
  const auto m = trace::match_collectives(set, o);
  std::size_t members = 0;
  for (const auto& i : m.instances) members += i.members.size();
  CHECK(m.collectives_seen == 3 * 2 + 5 + 4);
  CHECK(members + m.unmatched == m.collectives_seen);
  REQUIRE(m.instances.size() == 4);
  CHECK(m.pairs == 2);
  CHECK(m.keys_skipped == 1);
  CHECK(m.unmatched == 1 + 4);  // rank 2's lone transfer, the skipped key's four kernels
  int groups = 0;
  for (const auto& i : m.instances) {
    if (i.point_to_point) {
      REQUIRE(i.members.size() == 2);
      const auto& a = set.traces[i.members[0].trace].data.events[i.members[0].event];
      const auto& b = set.traces[i.members[1].trace].data.events[i.members[1].event];
      CHECK(std::llabs(b.end_ns - a.end_ns - 7'000'000) <= 10);  // the same transfer, whatever the clocks
    } else {
      ++groups;
      CHECK(i.members.size() == 3);
    }
  }
  CHECK(groups == 2);
  // Without partners the 3-rank transfer key cannot be paired: all five
  // counted.
  const auto bare = trace::match_collectives(set);
  CHECK(bare.pairs == 0);
  CHECK(bare.unmatched == 5 + 4);
  // And the clocks come out of the instances: rank 1 is 7 ms ahead.
  const auto clocks = trace::estimate_clock_offsets(set, m);
  CHECK(std::llabs(clocks.traces[1].offset_ns - 7'000'000) < 1'000);
}

TEST_CASE("match_collectives: a send pairs with a receive, not with a send one micro-batch off", "[l4][match]") {
  // A periodic 1F1B schedule at low noise (8 micro-batches, 4 stages, calibrated host) lines
  // up unrelated transfer ends one micro-batch apart: ranks 4 and 8 had 243 end differences at
  // 1.15 ms against 240 at their clocks' true offset, so their transfers were paired one
  // micro-batch off, 960 kernels went unmatched and two healthy ranks "held the job back" by
  // 14 ms per step. The traces say which kernel is a send and which a receive.
  for (std::uint64_t seed : {1, 2, 3, 4, 5, 6}) {
    sim::job_config cfg;
    cfg.sizes = parallel_sizes{};
    cfg.sizes.pp = 4;
    cfg.sizes.dp = 4;
    cfg.steps = 24;
    cfg.seed = seed;
    cfg.microbatches = 8;
    cfg.noise = 0.5;
    sim::calibrate(cfg);
    const auto tj = failslow_test::simulate_traces(cfg, sim::scenario::healthy);
    INFO("seed " << seed);
    const auto m = l4_model_of(tj);
    REQUIRE(m.waits.available);
    CHECK(m.waits.unmatched == 0);
    CHECK(diagnose::find_holdbacks(m, tj.job.topo).holdbacks.empty());
  }
}

TEST_CASE(
    "attribution: victims' waits go to the straggler, cascades through "
    "stages to their root",
    "[l4]") {
  const std::vector<l4_job_case> cases = {
      {2, 4, 4, 1, 0}, {2, 2, 4, 2, 1000}, {1, 1, 8, 3, 500}, {2, 4, 2, 4, 200}, {4, 2, 2, 5, 1000}};
  for (const auto& c : cases) {
    const auto tj = failslow_test::simulate_traces(l4_config(c, 16), sim::scenario::compute_straggler);
    const auto& fault = tj.job.truth.faults.front();
    const int culprit = fault.ranks.front();
    INFO("layout tp " << c.tp << " pp " << c.pp << " dp " << c.dp << ", seed " << c.seed << ", skew " << c.clock_skew_us
                      << " us, straggler rank " << culprit);
    const auto m = l4_model_of(tj);
    REQUIRE(m.waits.available);
    CHECK(m.waits.clocks_aligned);
    // Every collective kernel is in an instance or counted.
    CHECK(m.waits.instances > 0);
    // The wait blamed on the culprit grows when its fault starts (schedule
    // waits come before).
    double before = 0, after = 0;
    std::size_t n_before = 0, n_after = 0;
    for (std::size_t k = 0; k < m.step_count(); ++k) {
      const double caused = m.waits.caused_ns(static_cast<std::size_t>(culprit), k);
      if (m.steps[k] < fault.first_step) {
        before += caused;
        ++n_before;
      } else {
        after += caused;
        ++n_after;
      }
    }
    REQUIRE(n_before > 0);
    REQUIRE(n_after > 0);
    CHECK(after / static_cast<double>(n_after) > 1.5 * before / static_cast<double>(n_before));
    const auto l4 = diagnose::find_holdbacks(m, tj.job.topo);
    REQUIRE(l4.holdbacks.size() == 1);
    const auto& h = l4.holdbacks.front();
    CHECK(h.rank == culprit);
    CHECK(h.victims >= 3);
    CHECK(m.steps[h.first] <= fault.first_step + 1);
    CHECK(h.late_ns_per_step > 2 * h.peer_late_ns_per_step);
  }
}

TEST_CASE("L4: a rank that waited for a slow host's rank and then arrived last elsewhere is its victim", "[l4]") {
  // tp 2 x cp 2 x dp 2 x pp 2, rank 4's host launches 20x slower from step 21 (severity 0.5).
  // Its healthy data-parallel partner, rank 0, waits for it ~240 ms a step and, released, then
  // arrives last at its own tensor- and context-parallel collectives by 6-17 ms a step: with the
  // range from an early chance hit it held the job back at z 5.7 (seed 97904, found by
  // bench/random_sweep.py). It waited 37x as long as it was late: a link in rank 4's cascade.
  // Another seed varies the draws (and the faulty rank); it is found, and L4 names no other rank.
  for (std::uint64_t seed : {97904u, 6u}) {
    const auto tj = failslow_test::simulate_sweep_job(
        {"tp=2,pp=2,dp=2,cp=2", sim::scenario::host_launch_delay, seed, 40, 2.0, 4, 3, 3695, 21, 0.5});
    const auto m = failslow_test::model_of_traces(tj);
    const auto rep = diagnose::diagnose(m, tj.job.topo);
    const auto score = sim::score_case(tj.job.truth, rep);
    INFO("seed " << seed << "\n" << failslow_test::describe(rep));
    // The sweep's job is clean; on the other only L4 is judged here (seed 5, left out, has an L2
    // false alarm of its own: a 1.05x compute excess over 3 of 4 steps at noise 2 before the onset).
    if (seed == 97904u) CHECK(score.counts.false_positives == 0);
    CHECK(score.counts.localised == score.counts.faults);
    const auto l4 = diagnose::find_holdbacks(m, tj.job.topo);
    REQUIRE(tj.job.truth.faults.size() == 1);
    for (const auto& h : l4.holdbacks) CHECK(h.rank == tj.job.truth.faults.front().ranks.front());
    if (seed == 97904u)
      CHECK(std::any_of(l4.notes.begin(), l4.notes.end(), [](const std::string& n) {
        return n.find("cascade") != std::string::npos && n.find("(0)") != std::string::npos;
      }));
  }
}

TEST_CASE("L4 is quiet on healthy jobs and on faults that are no rank's", "[l4]") {
  for (const auto s : {sim::scenario::healthy, sim::scenario::dp_link, sim::scenario::tp_link}) {
    for (std::uint64_t seed : {11, 12}) {
      const l4_job_case c{2, 2, 4, seed, 1000};
      auto cfg = l4_config(c, 14);
      cfg.noise = 2.0;
      const auto tj = failslow_test::simulate_traces(cfg, s);
      INFO("scenario " << to_string(s) << ", seed " << seed);
      const auto m = l4_model_of(tj);
      const auto l4 = diagnose::find_holdbacks(m, tj.job.topo);
      CHECK(l4.holdbacks.empty());
    }
  }
}

TEST_CASE(
    "the report: the straggler's finding carries the wait it costs, and "
    "summaries say L4 needs traces",
    "[l4]") {
  const l4_job_case c{2, 2, 4, 7, 300};
  const auto tj = failslow_test::simulate_traces(l4_config(c, 16), sim::scenario::compute_straggler);
  const int culprit = tj.job.truth.faults.front().ranks.front();
  const auto m = l4_model_of(tj);
  const auto rep = diagnose::diagnose(m, tj.job.topo);
  bool carried = false;
  for (const auto& f : rep.findings) {
    if (f.ranks.size() == 1 && f.ranks.front() == culprit && f.evidence.find("caused_wait_ns_per_step")) carried = true;
    if (f.kind == "holds_back") CHECK(f.ranks.front() == culprit);
  }
  CHECK(carried);

  const auto [sm, truth] = failslow_test::simulate_summaries_model(l4_config(c, 8), sim::scenario::compute_straggler);
  const auto srep = diagnose::diagnose(sm, tj.job.topo);
  bool said = false;
  for (const auto& n : srep.notes) said = said || n.find("L4") != std::string::npos;
  CHECK(said);
}

TEST_CASE(
    "the pipeline's cost: a slow stage makes the other stages wait in "
    "transfers, it does not",
    "[l4][pipeline]") {
  const std::vector<l4_job_case> cases = {{2, 4, 2, 1, 500}, {2, 4, 4, 2, 0}, {1, 4, 4, 5, 1000}, {2, 2, 4, 7, 200}};
  for (const auto& c : cases) {
    const auto tj = failslow_test::simulate_traces(l4_config(c, 16), sim::scenario::slow_stage);
    const auto& fault = tj.job.truth.faults.front();
    INFO("layout tp " << c.tp << " pp " << c.pp << " dp " << c.dp << ", seed " << c.seed << ", fault " << fault.group);
    const int slow = std::atoi(fault.group.c_str() + 6);  // "stage:s"
    const auto m = l4_model_of(tj);
    // Over the fault's steps against the others: the slow stage's transfer
    // waits do not grow, every other stage's do (by more than 1 % of a step).
    const auto first =
        static_cast<std::size_t>(std::lower_bound(m.steps.begin(), m.steps.end(), fault.first_step) - m.steps.begin());
    const auto change = diagnose::pipeline_wait_change(m, tj.job.topo, first, m.step_count() - 1);
    REQUIRE(change.size() == static_cast<std::size_t>(c.pp));
    const double step = m.iteration_ns(0, 1);
    for (int s = 0; s < c.pp; ++s) {
      if (s == slow)
        CHECK(change[static_cast<std::size_t>(s)] < 0.01 * step);
      else
        CHECK(change[static_cast<std::size_t>(s)] > 0.01 * step);
    }
  }
  // Nothing to say without pipeline stages, and nothing on a healthy pipeline.
  const auto flat = failslow_test::simulate_traces(l4_config({1, 1, 8, 3, 0}, 10), sim::scenario::compute_straggler);
  CHECK(diagnose::pipeline_wait_change(l4_model_of(flat), flat.job.topo, 5, 9).empty());
  const auto healthy = failslow_test::simulate_traces(l4_config({2, 4, 2, 4, 300}, 16), sim::scenario::healthy);
  const auto hm = l4_model_of(healthy);
  for (double d : diagnose::pipeline_wait_change(hm, healthy.job.topo, 6, hm.step_count() - 1))
    CHECK(std::abs(d) < 0.01 * hm.iteration_ns(0, 1));
}

TEST_CASE(
    "a pipeline bubble no other level explains names the stage the "
    "others wait for",
    "[l4][pipeline]") {
  // pp 4 x dp 2: from step 8 the job's step grows 10 % and every stage's
  // transfers but stage s's wait longer (growing downstream of it); no rank's
  // phases stand out and no one is late enough alone for holds_back: the
  // pipeline waits for stage s. The same 1.5 ms more where each stage's waits
  // cycle through 0.5, 3.25 and 6 ms from step to step is within that noise.
  parallel_sizes sz;
  sz.pp = 4;
  sz.dp = 2;
  const topology topo(sz);
  for (const int origin : {0, 2}) {
    for (const int mode : {0, 1, 2}) {  // a bubble, every stage waits more, a bubble within the noise
      const bool bubble = mode != 1, noisy = mode == 2;
      const std::size_t R = 8, S = 16;
      diagnose::job_model m;
      m.world_size = static_cast<int>(R);
      for (std::size_t s = 0; s < S; ++s) m.steps.push_back(static_cast<std::int64_t>(s));
      const char* names[] = {"compute", "communication", "memory", "idle"};
      const diagnose::phase_role roles[] = {diagnose::phase_role::work, diagnose::phase_role::wait,
                                            diagnose::phase_role::work, diagnose::phase_role::idle};
      for (int p = 0; p < 4; ++p) m.phases.push_back({names[p], roles[p], kernel_class::compute, false});
      m.iteration_ns = dense_array<double, 2>({R, S});
      m.phase_ns = dense_array<double, 3>({R, 4, S});
      m.has_rank.assign(R, true);
      m.measured_on_host.assign(R, false);
      auto& w = m.waits;
      w.available = true;
      for (auto* t : {&w.waited_ns, &w.caused_ns, &w.late_ns, &w.p2p_waited_ns}) {
        *t = dense_array<double, 2>({R, S});
        t->fill(0);
      }
      std::mt19937_64 rng(static_cast<std::uint64_t>(origin) + 11);
      std::normal_distribution<double> noise(0, 0.004);
      for (std::size_t r = 0; r < R; ++r) {
        const int stage = topo.coordinate(static_cast<int>(r), parallel_dim::pp);
        for (std::size_t s = 0; s < S; ++s) {
          const bool late = s >= 8;
          m.iteration_ns(r, s) = (late ? 110e6 : 100e6) * std::exp(noise(rng));
          m.phase_ns(r, diagnose::compute_phase, s) = 60e6 * std::exp(noise(rng));
          m.phase_ns(r, diagnose::communication_phase, s) = 20e6 * std::exp(noise(rng));
          m.phase_ns(r, diagnose::memory_phase, s) = 5e6 * std::exp(noise(rng));
          m.phase_ns(r, diagnose::idle_phase, s) = (late ? 25e6 : 15e6) * std::exp(noise(rng));
          const double cycle[] = {0.5e6, 3.25e6, 6e6};
          double p2p = noisy ? cycle[s % 3] : 2e6 * std::exp(noise(rng));
          if (late && stage != origin) p2p += !bubble ? 0.0 : noisy ? 1.5e6 : (3e6 + 1e6 * std::abs(stage - origin));
          if (late && !bubble) p2p += 4e6;  // every stage waits more: nobody's bubble
          w.p2p_waited_ns(r, s) = p2p;
          w.waited_ns(r, s) = p2p;
          if (late && stage == origin) w.caused_ns(r, s) = 2e6 * (1 + static_cast<double>(r % 2));
        }
      }
      const auto rep = diagnose::diagnose(m, topo);
      std::vector<const finding*> bubbles;
      for (const auto& f : rep.findings)
        if (f.kind == "pipeline_bubble") bubbles.push_back(&f);
      std::string found;
      for (const auto& f : rep.findings) found += "\n  " + f.level + " " + f.kind + ": " + f.summary;
      INFO("origin stage " << origin
                           << (noisy    ? ", bubble within the noise"
                               : bubble ? ", bubble"
                                        : ", every stage waits more")
                           << found);
      if (!bubble || noisy) {
        CHECK(bubbles.empty());
        continue;
      }
      REQUIRE(bubbles.size() == 1);
      const auto& f = *bubbles.front();
      CHECK(f.level == "L4");
      CHECK(f.group == "stage:" + std::to_string(origin));
      REQUIRE(f.ranks.size() == 1);
      CHECK(topo.coordinate(f.ranks.front(), parallel_dim::pp) == origin);
      CHECK(f.first_step >= 7);
      CHECK(f.first_step <= 9);
      CHECK(f.evidence.number("pipeline_bubble_ns") > 4e6);
      CHECK(f.summary.find("the pipeline waits for stage " + std::to_string(origin)) != std::string::npos);
      CHECK((origin == 0) == (f.summary.find("growing downstream") != std::string::npos));
    }
  }
}

TEST_CASE(
    "host-paced pipelines: every transfer finds its partner though the "
    "schedule makes other ends coincide",
    "[l4][match]") {
  // In a calibrated (host-paced) 1F1B job, runs of short transfers end a few
  // tens of microseconds apart, so at a wrong clock offset unrelated ends agree
  // within the pairing tolerance about as often as the true pairs do at the
  // right one; the offset is taken where ends agree to within
  // offset_resolution_ns, where the true pairs all stay.
  std::size_t lost_coarse = 0;
  for (const auto* layout : {"tp=2,pp=4,dp=2", "tp=1,pp=4,dp=4", "tp=2,pp=2,dp=2"})
    for (std::uint64_t seed : {1u, 2u, 3u}) {
      auto cfg = failslow_test::calibrated_config(layout, seed, 12);
      cfg.max_clock_offset_us = 200.0 * static_cast<double>(seed);
      auto tj = failslow_test::simulate_traces(cfg, sim::scenario::healthy);
      const auto& topo = tj.job.topo;
      trace::collective_match_options o;
      o.partners = [&topo](int rank) {
        std::vector<int> out;
        auto c = topo.coords(rank);
        for (int s : {c[parallel_dim::pp] - 1, c[parallel_dim::pp] + 1})
          if (s >= 0 && s < topo.size(parallel_dim::pp)) {
            auto d = c;
            d[parallel_dim::pp] = s;
            out.push_back(topo.rank(d));
          }
        return out;
      };
      const auto m = trace::match_collectives(tj.set, o);
      INFO("layout " << layout << ", seed " << seed);
      CHECK(m.unmatched == 0);
      CHECK(m.pairs > 0);
      for (const auto& inst : m.instances) {  // a pair is one transfer: its ends agree
        if (!inst.point_to_point) continue;
        const auto ra = tj.set.traces[inst.members[0].trace].rank;
        const auto rb = tj.set.traces[inst.members[1].trace].rank;
        const auto& a = tj.set.traces[inst.members[0].trace].data.events[inst.members[0].event];
        const auto& b = tj.set.traces[inst.members[1].trace].data.events[inst.members[1].event];
        const auto skew = tj.job.truth.clock_offsets_ns[static_cast<std::size_t>(ra)] -
                          tj.job.truth.clock_offsets_ns[static_cast<std::size_t>(rb)];
        CHECK(std::llabs((a.end_ns - b.end_ns) - skew) <= 2'000);
      }
      // Where the traces do not say which kernel is a send and which a receive,
      // the fine window still pairs every transfer, and a window as wide as
      // the tolerance (the rule before) loses pairs.
      auto& undirected = tj.set;  // the checks above are done with it
      for (auto& t : undirected.traces)
        for (auto& c : t.data.collectives) c.collective = io::collective_args::no_name;
      CHECK(trace::match_collectives(undirected, o).unmatched == 0);
      auto coarse = o;
      coarse.offset_resolution_ns = coarse.pair_tolerance_ns;
      lost_coarse += trace::match_collectives(undirected, coarse).unmatched;
    }
  CHECK(lost_coarse > 0);
}

TEST_CASE(
    "L4 on host-paced jobs: no healthy rank holds the job back, the "
    "straggler does",
    "[l4]") {
  // Host-paced: each step's lateness at a transfer varies by milliseconds, and
  // which rank of a tensor-parallel pair is last is decided by tiny
  // differences; a healthy rank must not stand out against its peers by chance.
  for (const auto* layout : {"tp=2,pp=4,dp=4", "tp=2,pp=2,dp=4"})
    for (std::uint64_t seed : {1u, 2u, 3u}) {
      auto cfg = failslow_test::calibrated_config(layout, seed, 20);
      cfg.max_clock_offset_us = 500;
      INFO("layout " << layout << ", seed " << seed);
      const auto healthy = l4_model_of(failslow_test::simulate_traces(cfg, sim::scenario::healthy));
      const auto topo = topology(parse_parallel_sizes(layout));
      CHECK(diagnose::find_holdbacks(healthy, topo).holdbacks.empty());
      const auto tj = failslow_test::simulate_traces(cfg, sim::scenario::compute_straggler);
      const auto l4 = diagnose::find_holdbacks(l4_model_of(tj), tj.job.topo);
      const int culprit = tj.job.truth.faults.front().ranks.front();
      for (const auto& h : l4.holdbacks) CHECK(h.rank == culprit);
    }
}

TEST_CASE(
    "L4: the slowest of like GPUs, late from the first step by a little, "
    "does not hold the job back",
    "[l4]") {
  // 8 data-parallel ranks, 20 steps of 100 ms; each rank's own lateness as the
  // last arriver 0-0.3 ms per step, rank 3's `late` more from step `from`. A
  // rank 2 % of a step late from the first step is the slowest of like GPUs (no
  // change seen): a note. The same from step 8 changed, and 5 % from the start
  // is more than GPUs of one model differ: both hold it back.
  struct c {
    double late;
    std::size_t from;
    bool holds_back;
  };
  for (const auto& k : {c{2e6, 0, false}, c{2e6, 8, true}, c{5e6, 0, true}})
    for (std::uint64_t seed : {1u, 2u, 3u}) {
      const std::size_t R = 8, S = 20;
      auto m = waits_model(R, S, 100e6);
      auto& w = m.waits;
      w.victims.assign(R, 0);
      w.victims[3] = R - 1;
      std::mt19937_64 rng(seed);
      std::uniform_real_distribution<double> u(0, 0.3e6);
      for (std::size_t r = 0; r < R; ++r)
        for (std::size_t s = 0; s < S; ++s) w.late_ns(r, s) = u(rng);
      for (std::size_t s = k.from; s < S; ++s) {
        w.late_ns(3, s) += k.late;
        w.caused_ns(3, s) = k.late * static_cast<double>(R - 1);
      }
      INFO("rank 3 late by " << k.late / 1e6 << " ms from step " << k.from << ", seed " << seed);
      parallel_sizes ps;
      ps.dp = static_cast<int>(R);
      const auto l4 = diagnose::find_holdbacks(m, topology(ps));
      REQUIRE(l4.holdbacks.size() == (k.holds_back ? 1u : 0u));
      if (k.holds_back) {
        CHECK(l4.holdbacks[0].rank == 3);
        CHECK(l4.holdbacks[0].first == k.from);
      }
      const bool noted = std::any_of(l4.notes.begin(), l4.notes.end(), [](const std::string& n) {
        return n.find("1 rank(s) (3) arrive last from the first steps") != std::string::npos;
      });
      CHECK(noted == !k.holds_back);
    }
}

TEST_CASE(
    "L4: a racing pipeline stage's latest rank from the first step is "
    "judged against its stage",
    "[l4]") {
  // tp 4 x pp 2 x dp 4, 24 steps of 60 ms. Stage 0 is quiet (0-0.5 ms late per
  // step); stage 1 races at every collective: each of its ranks is 2-16 ms late
  // in a share of the steps that differs by rank (5-75 %), as in a host-paced
  // last stage. Against 3 peers one of those ranks often looks like it holds
  // the job back from the first step; against the spread of its stage it does
  // not. A rank 25 ms late in every step is far outside that spread.
  for (const bool fault : {false, true})
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
      parallel_sizes ps;
      ps.tp = 4;
      ps.pp = 2;
      ps.dp = 4;
      const topology topo(ps);
      const std::size_t R = 32, S = 24;
      auto m = waits_model(R, S, 60e6);
      auto& w = m.waits;
      w.victims.assign(R, 3);
      std::mt19937_64 rng(seed);
      std::uniform_real_distribution<double> u(0, 1);
      for (std::size_t r = 0; r < R; ++r) {
        const bool racing = topo.coordinate(static_cast<int>(r), parallel_dim::pp) == 1;
        const double rate = 0.05 + 0.7 * u(rng);
        for (std::size_t s = 0; s < S; ++s) {
          w.late_ns(r, s) = 0.5e6 * u(rng);
          if (racing && u(rng) < rate) w.late_ns(r, s) += 2e6 + 14e6 * u(rng);
        }
      }
      if (fault)
        for (std::size_t s = 0; s < S; ++s) w.late_ns(20, s) += 25e6;
      INFO("seed " << seed << (fault ? ", rank 20 25 ms late in every step" : ", healthy"));
      const auto l4 = diagnose::find_holdbacks(m, topo);
      REQUIRE(l4.holdbacks.size() == (fault ? 1u : 0u));
      if (fault) CHECK(l4.holdbacks[0].rank == 20);
    }
}

TEST_CASE(
    "L4: a straggler's pipeline neighbour, late from the same step, is "
    "its delay passed on",
    "[l4][pipeline]") {
  // GPipe, tp 1 x pp 4 x dp 4, GPU-bound: a compute or memory-bound straggler
  // makes the rank of its pipeline in the next stage up send later at every
  // step of the fault; the attribution does not always see that lateness as
  // inherited. Only the straggler is named; the neighbour is a note (4 of these
  // 12 jobs named it as holding the job back before).
  std::size_t passed_on = 0;
  for (const auto s : {sim::scenario::compute_straggler, sim::scenario::memory_bound})
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
      sim::job_config cfg;
      cfg.sizes = parse_parallel_sizes("tp=1,pp=4,dp=4");
      cfg.seed = seed;
      cfg.steps = 30;
      cfg.noise = 0.5;
      cfg.schedule = sim::pipeline_schedule::gpipe;
      sim::scenario_options so;
      so.onset = 12;
      const auto tj = failslow_test::simulate_traces(cfg, s, so);
      const int culprit = tj.job.truth.faults.front().ranks.front();
      INFO(sim::to_string(s) << ", seed " << seed << ", culprit " << culprit);
      const auto rep = diagnose::diagnose(l4_model_of(tj), tj.job.topo);
      bool named = false;
      for (const auto& f : rep.findings) {
        CHECK(f.ranks.size() <= 1);
        if (f.ranks.size() == 1) CHECK(f.ranks.front() == culprit);
        named = named || (f.ranks.size() == 1 && f.ranks.front() == culprit);
      }
      CHECK(named);
      for (const auto& n : rep.notes)
        if (n.find("its delay passed on") != std::string::npos) {
          ++passed_on;
          CHECK(n.find("after rank " + std::to_string(culprit)) != std::string::npos);
        }
    }
  CHECK(passed_on > 0);
}
