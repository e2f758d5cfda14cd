// The diagnosis levels on controlled input: L2's statistics against the numpy/scipy reference
// (tests/reference/gen_diagnose_fixtures.py), L1's window patterns and false-alarm rate on
// seeded series, the step breakdown and the job model on small synthetic traces.
#include <catch2/catch.hpp>
#include <cmath>
#include <failslow/diagnose/detail/binomial_tail.hpp>
#include <failslow/diagnose/detail/rank_sum.hpp>
#include <failslow/diagnose/diagnose.hpp>
#include <failslow/diagnose/job_model.hpp>
#include <failslow/diagnose/l1_windows.hpp>
#include <failslow/diagnose/l2_stragglers.hpp>
#include <failslow/io/report_text.hpp>
#include <failslow/sim/score.hpp>
#include <failslow/stats/detail/student_t.hpp>
#include <limits>
#include <random>
#include <vector>

#include "support/fixtures.hpp"
#include "support/simulated_job.hpp"

using namespace failslow;
using failslow_test::close;
using failslow_test::load_fixture;

namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// A model with the four class phases, every value NaN, for `ranks` ranks and `steps` steps.
diagnose::job_model empty_model(std::size_t ranks, std::size_t steps) {
  diagnose::job_model m;
  m.world_size = static_cast<int>(ranks);
  for (std::size_t s = 0; s < steps; ++s) m.steps.push_back(static_cast<std::int64_t>(100 + s));
  const char* names[] = {"compute", "communication", "memory", "idle"};
  const diagnose::phase_role roles[] = {diagnose::phase_role::work, diagnose::phase_role::wait,
                                        diagnose::phase_role::work, diagnose::phase_role::idle};
  const kernel_class classes[] = {kernel_class::compute, kernel_class::communication, kernel_class::memory,
                                  kernel_class::compute};
  for (int p = 0; p < 4; ++p) m.phases.push_back({names[p], roles[p], classes[p], false});
  m.iteration_ns = dense_array<double, 2>({ranks, steps});
  m.iteration_ns.fill(nan);
  m.phase_ns = dense_array<double, 3>({ranks, 4, steps});
  m.phase_ns.fill(nan);
  m.has_rank.assign(ranks, true);
  return m;
}

topology data_parallel(int world) {
  parallel_sizes s;
  s.dp = world;
  return topology(s);
}

}  // namespace

TEST_CASE("binomial upper tail equals scipy.stats.binom.sf", "[diagnose][reference]") {
  const auto cases = load_fixture("diagnose/binomial.json");
  REQUIRE(cases.size() > 100);
  for (const auto& c : cases) {
    const auto k = c.at("k").get<std::uint64_t>(), n = c.at("n").get<std::uint64_t>();
    const double p = c.at("p").get<double>(), want = c.at("sf").get<double>();
    const double got = diagnose::detail::binomial_upper_tail(k, n, p);
    INFO("k " << k << " n " << n << " p " << p);
    CHECK(close(got, want, 1e-10, 1e-300));
  }
}

TEST_CASE("hypergeometric upper tail equals scipy.stats.hypergeom.sf", "[diagnose][reference]") {
  const auto cases = load_fixture("diagnose/hypergeom.json");
  REQUIRE(cases.size() > 100);
  for (const auto& c : cases) {
    const auto k = c.at("k").get<std::uint64_t>(), K = c.at("K").get<std::uint64_t>();
    const auto n = c.at("n").get<std::uint64_t>(), N = c.at("N").get<std::uint64_t>();
    const double want = c.at("sf").get<double>();
    INFO("k " << k << " K " << K << " n " << n << " N " << N);
    CHECK(close(diagnose::detail::hypergeometric_upper_tail(k, K, n, N), want, 1e-10, 1e-300));
  }
}

TEST_CASE("rank-sum p-value equals scipy.stats.mannwhitneyu (asymptotic, continuity)", "[diagnose][reference]") {
  const auto cases = load_fixture("diagnose/rank_sum.json");
  REQUIRE(cases.size() > 200);
  for (const auto& c : cases) {
    const auto before = c.at("before").get<std::vector<double>>(), after = c.at("after").get<std::vector<double>>();
    const double want = c.at("p").get<double>();
    INFO("n_before " << before.size() << " n_after " << after.size());
    CHECK(close(diagnose::detail::rank_sum_upper_p(before.data(), before.size(), after.data(), after.size()), want,
                1e-9, 1e-300));
  }
  const double one = 1;
  CHECK(diagnose::detail::rank_sum_upper_p(nullptr, 0, &one, 1) == 1.0);
}

TEST_CASE("Student t tail and quantile equal scipy.stats.t", "[diagnose][reference]") {
  const auto f = load_fixture("diagnose/student_t.json");
  for (const auto& c : f.at("sf")) {
    const auto nu = c.at("nu").get<std::uint64_t>();
    const double t = c.at("t").get<double>(), want = c.at("sf").get<double>();
    INFO("nu " << nu << " t " << t);
    // Exact series up to nu = 100000; far tails to 1e-9 relative.
    CHECK(close(stats::detail::student_t_upper_tail(t, nu), want, 1e-9, 1e-300));
  }
  for (const auto& c : f.at("isf")) {
    const auto nu = c.at("nu").get<std::uint64_t>();
    const double p = c.at("p").get<double>(), want = c.at("isf").get<double>();
    INFO("nu " << nu << " p " << p);
    CHECK(close(stats::detail::student_t_upper_quantile(p, nu), want, 1e-9));
  }
}

TEST_CASE("L2 statistics of one group equal the numpy/scipy reference", "[diagnose][reference]") {
  const auto cases = load_fixture("diagnose/l2_groups.json");
  REQUIRE(cases.size() >= 5);
  int with_planted = 0;
  for (const auto& c : cases) {
    const auto& values = c.at("values");
    const std::size_t G = values.size(), S = values.at(0).size();
    auto m = empty_model(G, S);
    for (std::size_t r = 0; r < G; ++r)
      for (std::size_t s = 0; s < S; ++s) m.phase_ns(r, diagnose::compute_phase, s) = values[r][s].get<double>();
    diagnose::l2_options cross_rank;  // the reference computes the group tests (no own-history ones)
    cross_rank.own_history_with_peers = false;
    const auto res = diagnose::find_stragglers(m, data_parallel(static_cast<int>(G)), nullptr, cross_rank);
    CHECK(res.tests == G);  // compute only: memory, idle and iteration are NaN
    const auto& want = c.at("stragglers");
    REQUIRE(res.stragglers.size() == want.size());
    std::vector<diagnose::straggler> got = res.stragglers;
    std::sort(got.begin(), got.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
    for (std::size_t i = 0; i < want.size(); ++i) {
      const auto& w = want[i];
      INFO("case with " << G << " ranks, straggler " << w.at("rank").get<int>());
      CHECK(got[i].rank == w.at("rank").get<int>());
      CHECK(got[i].first == w.at("first").get<std::size_t>());
      CHECK(got[i].last == w.at("last").get<std::size_t>());
      CHECK(got[i].elevated_steps == w.at("elevated").get<std::size_t>());
      CHECK(close(got[i].p_value, w.at("p").get<double>(), 1e-9, 1e-300));
      CHECK(close(got[i].q_value, w.at("q").get<double>(), 1e-9, 1e-300));
      CHECK(close(got[i].z, w.at("z").get<double>(), 1e-9));
      CHECK(close(got[i].ratio, w.at("ratio").get<double>(), 1e-12));
    }
    // Every planted rank is found, nothing else.
    std::vector<int> planted = c.at("planted").get<std::vector<int>>(), found;
    for (const auto& s : got) found.push_back(s.rank);
    std::sort(planted.begin(), planted.end());
    CHECK(found == planted);
    with_planted += planted.empty() ? 0 : 1;
  }
  CHECK(with_planted >= 4);
}

TEST_CASE("L2: noise rotating between ranks and a job-wide change are no straggler", "[diagnose][l2]") {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> noise(0, 0.01);
    const std::size_t G = 16, S = 40;
    auto m = empty_model(G, S);
    for (std::size_t s = 0; s < S; ++s) {
      const double level = s >= 20 ? 60e6 : 40e6;  // every rank slower from step 20: not one rank's fault
      for (std::size_t r = 0; r < G; ++r) m.phase_ns(r, 0, s) = level * std::exp(noise(rng));
      m.phase_ns((s * 7 + seed) % G, 0, s) *= 3;  // a GC pause on a different rank each step
    }
    const auto res = diagnose::find_stragglers(m, data_parallel(static_cast<int>(G)), nullptr);
    INFO("seed " << seed);
    CHECK(res.stragglers.empty());
  }
}

TEST_CASE("L2: a rank slow only in its first steps is warming up, one slow from the start to the end is a straggler",
          "[diagnose][l2]") {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> noise(0, 0.01);
    const std::size_t G = 16, S = 30;
    for (const bool to_the_end : {false, true}) {
      auto m = empty_model(G, S);
      for (std::size_t s = 0; s < S; ++s)
        for (std::size_t r = 0; r < G; ++r) m.phase_ns(r, 0, s) = 40e6 * std::exp(noise(rng));
      const std::size_t slow_steps = to_the_end ? S : 5;
      for (std::size_t s = 0; s < slow_steps; ++s) m.phase_ns(3, 0, s) *= 1.3;
      INFO("seed " << seed << (to_the_end ? ", rank 3 slow in every step" : ", rank 3 slow in its first 5 steps"));
      const auto res = diagnose::find_stragglers(m, data_parallel(static_cast<int>(G)), nullptr);
      if (to_the_end) {
        REQUIRE(res.stragglers.size() == 1);
        CHECK(res.stragglers[0].rank == 3);
        continue;
      }
      CHECK(res.stragglers.empty());
      CHECK(std::any_of(res.notes.begin(), res.notes.end(),
                        [](const std::string& n) { return n.find("warm-up") != std::string::npos; }));
    }
  }
}

TEST_CASE("L2: a straggler's steps that dip under the bar but stay slow do not cut its claim", "[diagnose][l2]") {
  // 4 ranks, 20 steps, no randomness: the peers at -1.5, -0.5, +0.5 % of 40 ms (rotating), so
  // each step's median is the level and the pooled robust scale 1.4826 %. Rank 2 is 1.5x from
  // step 8; at steps 9 and 10 (a loaded machine's dip) only 4.5 % over: z 3.04, under the 3.5
  // bar but still slow. Two normal steps in a row would end a claim (max_gap 1): the claim was
  // step 8 alone (1 elevated step) against 11-19, so rank 2 was "slow from step 11".
  const std::size_t G = 4, S = 20;
  for (const std::size_t slow_rank : {std::size_t{0}, std::size_t{2}}) {
    auto m = empty_model(G, S);
    const double d[] = {-0.015, -0.005, 0.005};
    for (std::size_t s = 0; s < S; ++s) {
      std::size_t k = s;
      for (std::size_t r = 0; r < G; ++r) {
        if (r == slow_rank) continue;
        m.phase_ns(r, diagnose::compute_phase, s) = 40e6 * (1 + d[k++ % 3]);
      }
      const double excess = s < 8 ? 0.015 : (s == 9 || s == 10) ? 0.045 : 0.5;
      m.phase_ns(slow_rank, diagnose::compute_phase, s) = 40e6 * (1 + excess);
    }
    const auto res = diagnose::find_stragglers(m, data_parallel(static_cast<int>(G)), nullptr);
    INFO("slow rank " << slow_rank);
    REQUIRE(res.stragglers.size() == 1);
    CHECK(res.stragglers[0].rank == static_cast<int>(slow_rank));
    CHECK(res.stragglers[0].first == 8);
    CHECK(res.stragglers[0].last == S - 1);
  }
  diagnose::l2_options bad;
  bad.bridge_z = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS(diagnose::find_stragglers(empty_model(4, 4), data_parallel(4), nullptr, bad), invalid_argument);
}

TEST_CASE("L2: a straggler under noise wider than its excess is found by its moderately slow steps", "[diagnose][l2]") {
  // Processes sharing cores (a real DDP job of 4 processes on 2 cores): every rank's compute per
  // step varies by 8 % and in 15 % of the steps the scheduler halves or doubles it, so the
  // pooled robust scale is wide and a rank 1.35x slower from step 4 clears z 3.5 in few steps
  // (a real job: 2 of 17) but z 2 in most. Healthy jobs of the same noise, iid and persistent
  // (AR(1), 0.6), make no claim.
  std::size_t found_moderate = 0, found_strict = 0, healthy_claims = 0, jobs = 0, with_bar = 0;
  for (std::uint64_t seed = 1; seed <= 30; ++seed)
    for (const double phi : {0.0, 0.6}) {
      const std::size_t G = 4 + 4 * (seed % 2), S = 16 + 4 * (seed % 3);
      std::mt19937_64 rng(seed * 104729 + static_cast<std::uint64_t>(phi * 10));
      std::normal_distribution<double> noise(0, 0.08);
      std::uniform_real_distribution<double> u(0, 1);
      auto m = empty_model(G, S);
      for (std::size_t r = 0; r < G; ++r) {
        double e = noise(rng);
        for (std::size_t s = 0; s < S; ++s) {
          e = phi * e + std::sqrt(1 - phi * phi) * noise(rng);
          const double flip = u(rng);
          const double sched = flip < 0.1 ? 0.5 : flip < 0.15 ? 2.0 : 1.0;
          m.iteration_ns(r, s) = 80e6;
          m.phase_ns(r, diagnose::compute_phase, s) = 40e6 * std::exp(e) * sched;
          m.phase_ns(r, diagnose::communication_phase, s) = 30e6;
        }
      }
      ++jobs;
      const auto healthy = diagnose::find_stragglers(m, data_parallel(static_cast<int>(G)), nullptr);
      for (const auto& x : healthy.stragglers)
        UNSCOPED_INFO("healthy seed " << seed << " phi " << phi << ": rank " << x.rank << " steps " << x.first << "-"
                                      << x.last << " q " << x.q_value);
      healthy_claims += healthy.stragglers.size();
      if (phi > 0) continue;
      const std::size_t slow = seed % G;
      for (std::size_t s = 4; s < S; ++s) m.phase_ns(slow, diagnose::compute_phase, s) *= 1.35;
      for (const bool moderate : {true, false}) {
        diagnose::l2_options o;
        o.moderate_count = moderate;
        const auto res = diagnose::find_stragglers(m, data_parallel(static_cast<int>(G)), nullptr, o);
        const bool found = res.stragglers.size() == 1 && res.stragglers[0].rank == static_cast<int>(slow) &&
                           res.stragglers[0].first >= 3;
        (moderate ? found_moderate : found_strict) += found ? 1 : 0;
        // A claim of the moderate count says so: its steps are counted over bridge_z.
        for (const auto& x : res.stragglers) {
          if (!moderate) CHECK(std::isnan(x.elevated_z));
          with_bar += x.elevated_z == o.bridge_z ? 1 : 0;
        }
      }
    }
  INFO("found " << found_moderate << " of 30 with the moderate count, " << found_strict << " without; "
                << healthy_claims << " claims in " << jobs << " healthy jobs");
  CHECK(healthy_claims == 0);
  CHECK(found_moderate >= 23);  // 26 measured (12 without the count; 21 with moderate runs unbridged)
  CHECK(found_moderate >= found_strict + 10);
  CHECK(with_bar >= found_moderate - found_strict);
}

TEST_CASE("L2: a steady offset at the floor is no straggler, a change on top of it is", "[diagnose][l2]") {
  // 4 ranks, 24 steps, 0.4 % noise. Rank 1 runs 2.9 % slower than its peers in every step (a
  // slow GPU at L2's 3 % floor): about a third of its steps cross the bar, in runs. Then the
  // same rank 1.06x from step 12 on top (a change), and 1.06x in every step (clearly slower
  // throughout): both stragglers.
  struct c {
    double offset, extra;
    bool straggler;
  };
  for (const auto& k : {c{0.029, 1.0, false}, c{0.029, 1.06, true}, c{0.06, 1.0, true}}) {
    int claimed_steady = 0;
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
      std::mt19937_64 rng(seed);
      std::normal_distribution<double> noise(0, 0.004);
      const std::size_t G = 4, S = 24;
      auto m = empty_model(G, S);
      for (std::size_t s = 0; s < S; ++s)
        for (std::size_t r = 0; r < G; ++r) {
          double x = 40e6 * std::exp(noise(rng));
          if (r == 1) x *= (1 + k.offset) * (s >= 12 ? k.extra : 1.0);
          m.phase_ns(r, diagnose::compute_phase, s) = x;
        }
      const auto res = diagnose::find_stragglers(m, data_parallel(static_cast<int>(G)), nullptr);
      INFO("rank 1 " << k.offset * 100 << " % slower, x" << k.extra << " from step 12, seed " << seed);
      const bool found = std::any_of(res.stragglers.begin(), res.stragglers.end(),
                                     [](const diagnose::straggler& x) { return x.rank == 1; });
      CHECK(found == k.straggler);
      CHECK(std::none_of(res.stragglers.begin(), res.stragglers.end(),
                         [](const diagnose::straggler& x) { return x.rank != 1; }));
      if (!k.straggler)
        claimed_steady += std::any_of(res.notes.begin(), res.notes.end(), [](const std::string& n) {
          return n.find("1 rank(s) (1) run about as much slower") != std::string::npos;
        });
    }
    if (!k.straggler) CHECK(claimed_steady >= 2);  // some of its runs are claims without the rule
  }
}

TEST_CASE("L2: a group's few cells do not set the chance of an elevated step alone", "[diagnose][l2]") {
  // 8 groups of 4 ranks (tp 8 x dp 4), 16 steps; a rank's step has a 5 % chance of a slow mode
  // (1.06x, a bimodal kernel) -- except in the group of rank 21, whose other 3 ranks have none
  // by chance: from its own 48 cells the rate is 1 % (Jeffreys), and rank 21's 4 slow-mode steps
  // of 16 were a straggler at p 2e-5. At the rate of every group of 4 in the job (~5 %) they
  // are p 0.007: no claim. A rank 1.06x from step 6 is found either way.
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> noise(0, 0.004);
    std::uniform_real_distribution<double> u(0, 1);
    const std::size_t R = 32, S = 16;
    for (const bool faulty : {false, true}) {
      auto m = empty_model(R, S);
      for (std::size_t r = 0; r < R; ++r)
        for (std::size_t s = 0; s < S; ++s) {
          double x = 40e6 * std::exp(noise(rng));
          const bool quiet_group = r % 8 == 5;  // ranks 5, 13, 21, 29: one tp index
          if (!quiet_group && u(rng) < 0.05) x *= 1.06;
          if (r == 21 && (s == 3 || s == 5 || s == 6 || s == 8)) x *= 1.06;
          if (faulty && r == 9 && s >= 6) x *= 1.06;
          m.phase_ns(r, 0, s) = x;
        }
      parallel_sizes ps;
      ps.tp = 8;
      ps.dp = 4;
      const auto res = diagnose::find_stragglers(m, topology(ps), nullptr);
      INFO("seed " << seed << (faulty ? ", rank 9 1.06x from step 6" : ", healthy"));
      for (const auto& x : res.stragglers) UNSCOPED_INFO("claimed rank " << x.rank << " p " << x.p_value);
      CHECK(std::none_of(res.stragglers.begin(), res.stragglers.end(),
                         [](const diagnose::straggler& x) { return x.rank == 21; }));
      CHECK(std::count_if(res.stragglers.begin(), res.stragglers.end(),
                          [](const diagnose::straggler& x) { return x.rank == 9; }) == (faulty ? 1 : 0));
    }
  }
}

TEST_CASE("L2: a rank that also waits longer in collectives is not blamed", "[diagnose][l2]") {
  const std::size_t G = 8, S = 20;
  auto m = empty_model(G, S);
  std::mt19937_64 rng(3);
  std::normal_distribution<double> noise(0, 0.005);
  for (std::size_t r = 0; r < G; ++r)
    for (std::size_t s = 0; s < S; ++s) {
      m.phase_ns(r, diagnose::compute_phase, s) = 40e6 * std::exp(noise(rng));
      m.phase_ns(r, diagnose::communication_phase, s) = 20e6 * std::exp(noise(rng));
    }
  for (std::size_t s = 5; s < S; ++s) {
    m.phase_ns(2, diagnose::compute_phase, s) *= 1.3;      // slow, and ...
    m.phase_ns(2, diagnose::communication_phase, s) *= 2;  // ... waiting more than anyone: not its own fault
    m.phase_ns(6, diagnose::compute_phase, s) *= 1.3;      // slow, the others wait for it
    m.phase_ns(6, diagnose::communication_phase, s) *= 0.5;
  }
  const auto res = diagnose::find_stragglers(m, data_parallel(static_cast<int>(G)), nullptr);
  REQUIRE(res.stragglers.size() == 1);
  CHECK(res.stragglers[0].rank == 6);
  CHECK(res.stragglers[0].first == 5);
  CHECK(res.stragglers[0].communication_ratio < 0.6);
  bool noted = false;
  for (const auto& n : res.notes) noted = noted || n.find("1 rank(s) (2) are slow") != std::string::npos;
  CHECK(noted);
}

TEST_CASE("L2 with a guessed layout: changed but not slower, negligible or slow from the start is no straggler",
          "[diagnose][l2]") {
  // Four data-parallel ranks whose layout nobody gave (a torch.distributed job's plain traces):
  // each is also judged against its own history, which on a busy host sees ranks change
  // without holding anyone back.
  const std::size_t G = 4, S = 20;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> noise(0, 0.02);
    for (const bool with_straggler : {false, true}) {
      auto m = empty_model(G, S);
      for (std::size_t r = 0; r < G; ++r)
        for (std::size_t s = 0; s < S; ++s) {
          m.iteration_ns(r, s) = 300e6 * std::exp(noise(rng));
          m.phase_ns(r, diagnose::compute_phase, s) = 100e6 * std::exp(noise(rng));
          m.phase_ns(r, diagnose::communication_phase, s) = 150e6 * std::exp(noise(rng));
          m.phase_ns(r, diagnose::memory_phase, s) = 0.3e6 * std::exp(noise(rng));
          m.phase_ns(r, diagnose::idle_phase, s) = 5e6 * std::exp(noise(rng));
        }
      for (std::size_t s = 0; s < 8; ++s) m.phase_ns(1, diagnose::compute_phase, s) *= 0.5;  // fast, then like the rest
      for (std::size_t s = 8; s < S; ++s) m.phase_ns(2, diagnose::memory_phase, s) *= 2;     // 0.1 % of a step
      for (std::size_t s = 0; s < 3; ++s) m.phase_ns(3, diagnose::compute_phase, s) *= 1.6;  // slow from the start
      if (with_straggler)
        for (std::size_t s = 10; s < S; ++s) {
          m.phase_ns(0, diagnose::compute_phase, s) *= 1.3;
          m.phase_ns(0, diagnose::communication_phase, s) *= 0.8;
        }
      diagnose::l2_options o;
      o.layout_assumed = true;
      const auto res = diagnose::find_stragglers(m, data_parallel(static_cast<int>(G)), nullptr, o);
      INFO("seed " << seed << (with_straggler ? ", rank 0 slow from step 10" : ", no straggler"));
      if (!with_straggler) {
        CHECK(res.stragglers.empty());
        continue;
      }
      REQUIRE(res.stragglers.size() == 1);
      CHECK(res.stragglers[0].rank == 0);
      CHECK(res.stragglers[0].first == 10);
    }
  }
  diagnose::l2_options bad;
  bad.min_step_share = 1.5;
  CHECK_THROWS_AS(diagnose::find_stragglers(empty_model(4, 4), data_parallel(4), nullptr, bad), invalid_argument);
}

TEST_CASE("L2: a rank a few percent slower than before, within its peers' spread, is found against its own history",
          "[diagnose][l2]") {
  // 16 data-parallel GPUs that differ by up to +-2 % and vary 0.8 % per step: a rank 2.5 %
  // slower from step 8 is 1-2 robust scales above its peers, never an elevated step, but about
  // 6 of its own steps' standard errors above its past relative to them (t 4.5-6.6 by seed).
  // Power, not certainty: the best window of a scan pays for the windows tried (15 times the
  // p-value of one window ending at step 23 of 24), and at t 4.5 that leaves p 1e-3, not
  // significant among the job's 64 tests: found in at least 13 of 20 seeds (14 measured; 18
  // with the scan unpaid for, which also called healthy ranks), never a healthy rank.
  const std::size_t G = 16, S = 24;
  std::size_t found = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> noise(0, 0.008);
    std::uniform_real_distribution<double> gpu(-0.02, 0.02);
    for (const bool faulty : {false, true}) {
      auto m = empty_model(G, S);
      std::vector<double> speed(G);
      for (auto& v : speed) v = std::exp(gpu(rng));
      speed[9] = 0.96;  // a fast GPU that became 2.5 % slower, still faster than most: holds nothing back
      if (faulty) speed[5] = 1.0;
      for (std::size_t r = 0; r < G; ++r)
        for (std::size_t s = 0; s < S; ++s) {
          m.iteration_ns(r, s) = 80e6;
          m.phase_ns(r, diagnose::compute_phase, s) = 45e6 * speed[r] * std::exp(noise(rng));
          m.phase_ns(r, diagnose::communication_phase, s) = 30e6 * std::exp(noise(rng));
          m.phase_ns(r, diagnose::memory_phase, s) = 2e6 * std::exp(noise(rng));
          m.phase_ns(r, diagnose::idle_phase, s) = 0.05e6;
        }
      for (std::size_t s = 8; s < S; ++s) m.phase_ns(9, diagnose::compute_phase, s) *= 1.025;
      if (faulty)
        for (std::size_t s = 8; s < S; ++s) m.phase_ns(5, diagnose::compute_phase, s) *= 1.025;
      INFO("seed " << seed << (faulty ? ", rank 5 2.5 % slower from step 8" : ", healthy but for rank 9"));
      const auto res = diagnose::find_stragglers(m, data_parallel(static_cast<int>(G)), nullptr);
      for (const auto& x : res.stragglers)
        UNSCOPED_INFO("claimed rank " << x.rank << " phase " << x.phase << " steps " << x.first << "-" << x.last
                                      << " ratio " << x.ratio << " p " << x.p_value << " within " << x.compared_within);
      if (!faulty) {
        CHECK(res.stragglers.empty());
        continue;
      }
      CHECK(res.stragglers.size() <= 1);
      if (res.stragglers.empty()) continue;
      ++found;
      const auto& st = res.stragglers[0];
      CHECK(st.rank == 5);
      CHECK(st.compared_within == "own history");
      CHECK(st.referred_to_peers);
      CHECK(st.first >= 5);  // where PELT puts the change, within 3 steps
      CHECK(st.first <= 11);
      CHECK(st.ratio == Approx(1.025).margin(0.01));
      // Across ranks alone it is not seen.
      diagnose::l2_options across;
      across.own_history_with_peers = false;
      CHECK(diagnose::find_stragglers(m, data_parallel(static_cast<int>(G)), nullptr, across).stragglers.empty());
    }
  }
  CHECK(found >= 13);
  diagnose::l2_options bad;
  bad.own_history_min_effect = -0.01;
  CHECK_THROWS_AS(diagnose::find_stragglers(empty_model(4, 4), data_parallel(4), nullptr, bad), invalid_argument);
}

TEST_CASE("L2: a shift to the end that one dipping step cuts in L1's segmentation is claimed to the end",
          "[diagnose][l2]") {
  // 8 data-parallel GPUs, 0.3 % noise per step, a rank 1.5 % slower from step 7 to the end but
  // for one step back near its old pace. Tested on L1's window alone (steps 7-12), the steps
  // after it count as "before" and the shift reads as noise (found in 1 of the 6 seeds); the
  // best window to the end is tested too (found in 4: seed 1's L1 window is 13-19, which reaches
  // the end and stands, and seed 5 has a second low step).
  const std::size_t G = 8, S = 20;
  std::string log;
  std::size_t found = 0;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> noise(0, 0.003);
    auto m = empty_model(G, S);
    for (std::size_t r = 0; r < G; ++r)
      for (std::size_t s = 0; s < S; ++s) {
        double slow = r == 3 && s >= 7 ? 1.015 : 1.0;
        if (r == 3 && s == 11 + seed % 3) slow = 1.003;
        m.iteration_ns(r, s) = 80e6;
        m.phase_ns(r, diagnose::compute_phase, s) = 45e6 * slow * std::exp(noise(rng));
        m.phase_ns(r, diagnose::communication_phase, s) = 30e6;
        m.phase_ns(r, diagnose::memory_phase, s) = 2e6 * std::exp(noise(rng));
        m.phase_ns(r, diagnose::idle_phase, s) = 0.05e6;
      }
    diagnose::l2_options o;
    o.own_history_min_effect = 0.005;
    const auto res = diagnose::find_stragglers(m, data_parallel(static_cast<int>(G)), nullptr, o);
    for (const auto& x : res.stragglers)
      log += "seed " + std::to_string(seed) + ": rank " + std::to_string(x.rank) + " steps " + std::to_string(x.first) +
             "-" + std::to_string(x.last) + " q " + std::to_string(x.q_value) + "\n";
    CHECK(res.stragglers.size() <= 1);
    if (res.stragglers.empty()) continue;
    ++found;
    const auto& st = res.stragglers[0];
    CHECK(st.rank == 3);
    CHECK(st.compared_within == "own history");
    CHECK(st.first >= 6);
    CHECK(st.first <= 8);
    CHECK(st.last == S - 1);
    CHECK(st.ratio == Approx(1.015).margin(0.004));
  }
  INFO(log);
  CHECK(found >= 4);
}

TEST_CASE("the window scan's factor bounds what a simulated scan is worth", "[diagnose][reference]") {
  // The best window of an iid normal series against the rest: how often its t passes c, over
  // how often one fixed window's does (numpy, seeded). The factor must not be below it (80 %:
  // Monte Carlo error with 30 or more hits) nor wastefully above (3.5x).
  const auto cases = load_fixture("diagnose/window_scan.json");
  REQUIRE(cases.size() >= 16);
  std::size_t used = 0;
  for (const auto& c : cases) {
    if (c.at("hits").get<int>() < 30) continue;
    ++used;
    const double n = c.at("n").get<double>(), want = c.at("factor").get<double>();
    const bool to_end = c.at("to_end").get<bool>();
    INFO("n " << n << (to_end ? " to the end" : " any window") << " c " << c.at("c").get<double>());
    const double got = diagnose::detail::window_scan_factor(n, to_end);
    CHECK(got >= 0.8 * want);
    CHECK(got <= 3.5 * want);
  }
  CHECK(used >= 12);
}

TEST_CASE("L2: a healthy rank's best run of its own steps is no change (the scan over windows is paid for)",
          "[diagnose][l2]") {
  // tp 4 x dp 16, 24 or 40 steps of noise around each GPU's own speed: each of the 64 ranks'
  // own history is scanned for its longest sustained window, and the best of the windows tried
  // is a few standard errors out by chance (a 12-step run at t 4, p 2e-4 before the scan was
  // paid for; 1.02x claims on healthy jobs). Seeds, noise levels and step counts vary; 1 claim
  // in the 96 iid jobs with the scan factor alone; 67 claims in 36 of the 96 AR(1) jobs when
  // the autocorrelation is not allowed for.
  parallel_sizes sz;
  sz.tp = 4;
  sz.dp = 16;
  const topology topo(sz);
  // The noise is also drawn autocorrelated, AR(1) with coefficient 0.6 (a GPU's clock and
  // thermal state persist over steps): a run of slow steps is then no evidence of a change
  // until it outlasts the correlation.
  std::size_t claims = 0, jobs = 0;
  for (std::uint64_t seed = 1; seed <= 24; ++seed)
    for (const double sd : {0.006, 0.012})
      for (const double phi : {0.0, 0.6})
        for (const std::size_t S : {std::size_t{24}, std::size_t{40}}) {
          std::mt19937_64 rng(seed * 7919 + S);
          std::normal_distribution<double> noise(0, sd);
          std::uniform_real_distribution<double> gpu(-0.02, 0.02);
          auto m = empty_model(64, S);
          for (std::size_t r = 0; r < 64; ++r) {
            const double speed = std::exp(gpu(rng));
            double e = noise(rng);
            for (std::size_t s = 0; s < S; ++s) {
              e = phi * e + std::sqrt(1 - phi * phi) * noise(rng);
              m.iteration_ns(r, s) = 60e6;
              m.phase_ns(r, diagnose::compute_phase, s) = 30e6 * speed * std::exp(e);
              m.phase_ns(r, diagnose::communication_phase, s) = 25e6 * std::exp(noise(rng));
              m.phase_ns(r, diagnose::memory_phase, s) = 3e6 * std::exp(noise(rng));
              m.phase_ns(r, diagnose::idle_phase, s) = 0.1e6;
            }
          }
          ++jobs;
          const auto res = diagnose::find_stragglers(m, topo, nullptr);
          for (const auto& x : res.stragglers)
            UNSCOPED_INFO("seed " << seed << " sd " << sd << " phi " << phi << " steps " << S << ": rank " << x.rank
                                  << " steps " << x.first << "-" << x.last << " ratio " << x.ratio << " p " << x.p_value
                                  << " q " << x.q_value << " within " << x.compared_within);
          claims += res.stragglers.size();
        }
  INFO(claims << " claims in " << jobs << " healthy jobs");
  CHECK(claims == 0);
}

TEST_CASE("L2: ranks without peers, against their own history, under noise that persists over steps",
          "[diagnose][l2]") {
  // A pure pipeline (pp 8): no rank has a peer, each is judged against its own history relative
  // to the others. With AR(1) noise (coefficient 0.6: a GPU's clock and thermal state persist)
  // a run of slow steps is no change until it outlasts the correlation; how much the noise
  // persists is read from every rank's series relative to the others (about its best change of
  // level, which a faulty rank makes in the others' median). 120 healthy jobs, half of them
  // AR(1): 4 claims (12 when the persistence is not allowed for; the 4 are the others' median
  // of 7 wandering, shared by ranks 0 and 2 of one job). A 1.15x slowdown from step 8 is found
  // in 98 of 120 jobs (108 when not allowed for; 52 of the 60 iid ones).
  parallel_sizes sz;
  sz.pp = 8;
  const topology topo(sz);
  std::size_t claims = 0, jobs = 0, found = 0;
  for (std::uint64_t seed = 1; seed <= 30; ++seed)
    for (const double phi : {0.0, 0.6})
      for (const std::size_t S : {std::size_t{24}, std::size_t{40}})
        for (const bool faulty : {false, true}) {
          std::mt19937_64 rng(seed * 104729 + S);
          std::normal_distribution<double> noise(0, 0.02);
          auto m = empty_model(8, S);
          for (std::size_t r = 0; r < 8; ++r) {
            double e = noise(rng);
            for (std::size_t s = 0; s < S; ++s) {
              e = phi * e + std::sqrt(1 - phi * phi) * noise(rng);
              m.iteration_ns(r, s) = 80e6;
              m.phase_ns(r, diagnose::compute_phase, s) =
                  (30e6 + 2e6 * static_cast<double>(r)) * std::exp(e) * (faulty && r == 3 && s >= 8 ? 1.15 : 1.0);
              m.phase_ns(r, diagnose::communication_phase, s) = 25e6 * std::exp(noise(rng));
              m.phase_ns(r, diagnose::memory_phase, s) = 3e6 * std::exp(noise(rng));
              m.phase_ns(r, diagnose::idle_phase, s) = 0.1e6;
            }
          }
          const auto res = diagnose::find_stragglers(m, topo, nullptr);
          for (const auto& x : res.stragglers)
            UNSCOPED_INFO("seed " << seed << " phi " << phi << " steps " << S << (faulty ? " faulty" : "") << ": rank "
                                  << x.rank << " phase " << x.phase << " steps " << x.first << "-" << x.last
                                  << " ratio " << x.ratio << " p " << x.p_value << " q " << x.q_value << " z " << x.z
                                  << " within " << x.compared_within);
          if (!faulty) {
            ++jobs;
            claims += res.stragglers.size();
            continue;
          }
          for (const auto& x : res.stragglers) found += x.rank == 3 && x.phase == diagnose::compute_phase ? 1 : 0;
        }
  INFO(claims << " claims in " << jobs << " healthy jobs, the slowdown found in " << found << " of " << jobs);
  CHECK(claims <= 5);
  CHECK(found >= 90);
}

TEST_CASE("L2: groups too small to compare are widened along tp, else noted", "[diagnose][l2]") {
  // tp 2 x dp 2 x pp 2: a compute group (same tp index and stage) has 2 ranks; with tp it has 4.
  parallel_sizes sz;
  sz.tp = 2;
  sz.dp = 2;
  sz.pp = 2;
  const topology topo(sz);
  auto m = empty_model(8, 12);
  for (std::size_t r = 0; r < 8; ++r)
    for (std::size_t s = 0; s < 12; ++s) m.phase_ns(r, 0, s) = 30e6 + 1e4 * static_cast<double>((r * 7 + s * 3) % 5);
  for (std::size_t s = 3; s < 12; ++s) m.phase_ns(5, 0, s) *= 1.4;
  auto res = diagnose::find_stragglers(m, topo, nullptr);
  REQUIRE(res.stragglers.size() == 1);
  CHECK(res.stragglers[0].rank == 5);
  CHECK(res.stragglers[0].group == "stage:1");
  CHECK(res.stragglers[0].peers.size() == 3);
  // One rank per stage: nothing to compare with, and the report says so.
  parallel_sizes pp_only;
  pp_only.pp = 4;
  auto m2 = empty_model(4, 12);
  for (std::size_t r = 0; r < 4; ++r)
    for (std::size_t s = 0; s < 12; ++s) m2.phase_ns(r, 0, s) = 30e6;
  res = diagnose::find_stragglers(m2, topology(pp_only), nullptr);
  CHECK(res.stragglers.empty());
  REQUIRE_FALSE(res.notes.empty());
  CHECK(res.notes.front().find("fewer than 3 comparable ranks") != std::string::npos);
}

TEST_CASE("L1 tells a spike, a shift, a drift, recurring spikes and warm-up apart", "[diagnose][l1]") {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    std::mt19937_64 rng(seed);
    const double sd = 0.005 * (1 + static_cast<double>(seed % 3));  // 0.5 % to 1.5 % step-to-step noise
    std::normal_distribution<double> noise(0, sd);
    const double base = 100e6 * (1 + static_cast<double>(seed));
    auto series = [&](std::size_t n) {
      std::vector<double> y(n);
      for (auto& v : y) v = base * std::exp(noise(rng));
      return y;
    };
    INFO("seed " << seed << " noise " << sd);
    {
      auto y = series(40);
      y[17] *= 1.8;
      const auto a = diagnose::analyze_series(y);
      REQUIRE(a.windows.size() == 1);
      CHECK(a.windows[0].pattern == diagnose::window_pattern::spike);
      CHECK(a.windows[0].first == 17);
      CHECK(a.windows[0].last == 17);
      CHECK(close(a.baseline_ns, base, 3 * sd));
    }
    {
      auto y = series(40);
      for (std::size_t i = 15; i < 40; ++i) y[i] *= 1.25;
      const auto a = diagnose::analyze_series(y);
      REQUIRE(a.windows.size() == 1);
      CHECK(a.windows[0].pattern == diagnose::window_pattern::shift);
      CHECK(a.windows[0].first >= 14);
      CHECK(a.windows[0].first <= 16);
      CHECK(a.windows[0].last == 39);
      CHECK(close(a.windows[0].ratio, 1.25, 0.03));
    }
    {
      auto y = series(40);
      for (std::size_t i = 15; i < 40; ++i) y[i] *= 1 + 0.5 * static_cast<double>(i - 14) / 25;
      const auto a = diagnose::analyze_series(y);
      REQUIRE_FALSE(a.windows.empty());
      CHECK(a.windows.back().pattern == diagnose::window_pattern::drift);
      CHECK(a.windows.back().last == 39);
      CHECK(a.windows.back().slope_ns_per_step > 0);
    }
    {
      auto y = series(40);
      for (std::size_t i = 8; i < 40; i += 6) y[i] *= 2.5;
      const auto a = diagnose::analyze_series(y);
      REQUIRE(a.windows.size() == 1);
      CHECK(a.windows[0].pattern == diagnose::window_pattern::recurring);
      CHECK(a.windows[0].steps == std::vector<std::size_t>{8, 14, 20, 26, 32, 38});
    }
    {
      auto y = series(20);
      y[0] *= 4;
      const auto a = diagnose::analyze_series(y);
      REQUIRE(a.windows.size() == 1);
      CHECK(a.windows[0].pattern == diagnose::window_pattern::warmup);
    }
  }
}

TEST_CASE("L1 false alarms on stationary noise are rare", "[diagnose][l1]") {
  // 2000 series of 60 steps of lognormal noise (1 % and 5 %) and of a heavier-tailed noise:
  // a series with any slow window is a false alarm.
  std::mt19937_64 rng(42);
  for (double sd : {0.01, 0.05}) {
    int alarms = 0;
    const int series = 1000;
    for (int k = 0; k < series; ++k) {
      std::normal_distribution<double> noise(0, sd);
      std::vector<double> y(60);
      for (auto& v : y) v = 100e6 * std::exp(noise(rng));
      alarms += diagnose::analyze_series(y).windows.empty() ? 0 : 1;
    }
    INFO("noise " << sd << ": " << alarms << " of " << series << " series raised a window");
    CHECK(alarms <= series / 50);  // <= 2 %; the normal tail at z 4 gives about 0.2 % per series
  }
}

TEST_CASE("L1 on too short a series says why", "[diagnose][l1]") {
  auto m = empty_model(1, 2);
  m.iteration_ns(0, 0) = 1e8;
  m.iteration_ns(0, 1) = 3e8;
  const auto r = diagnose::find_slow_windows(m);
  CHECK(r.job.windows.empty());
  REQUIRE(r.notes.size() == 1);
  CHECK(r.notes[0].find("at least 3") != std::string::npos);
  CHECK_THROWS_AS(diagnose::analyze_series({1, 2, 3}, diagnose::l1_options{-1}), invalid_argument);
}

TEST_CASE("the report of a healthy job says so in one line", "[diagnose][report]") {
  auto m = empty_model(8, 10);
  for (std::size_t r = 0; r < 8; ++r)
    for (std::size_t s = 0; s < 10; ++s) {
      m.iteration_ns(r, s) = 100e6 + 1e5 * static_cast<double>((r + s) % 3);
      m.phase_ns(r, 0, s) = 60e6 + 1e5 * static_cast<double>((r * 3 + s) % 4);
      m.phase_ns(r, 1, s) = 30e6;
      m.phase_ns(r, 3, s) = 1e5;
    }
  const auto rep = diagnose::diagnose(m, data_parallel(8));
  CHECK(rep.findings.empty());
  const auto text = io::report_to_text(rep);
  CHECK(text.find("No fail-slow problem found in steps 100-109 of 8 ranks.") != std::string::npos);
}

TEST_CASE("L2: a shift that crosses the bar now and then after its onset is a change, a chance run is not",
          "[diagnose][l2]") {
  // A masked straggler at severity 0.25 (noise 1.5): its rank's compute rose ~2.5 % over its
  // peers at step 16 and stayed there, but crossed the 3 % bar in only 5 steps (16, then 21-25).
  // The crossings alone looked like a sporadic excess (the first one "before" the run); the
  // level before step 16 against after it does not (seed 79222, bench/random_sweep.py 100
  // 31337, job 77; seeds 11-13 vary the draws and the faulty rank).
  for (std::uint64_t seed : {79222u, 11u, 12u, 13u}) {
    const auto tj = failslow_test::simulate_sweep_job(
        {"tp=2,pp=3,dp=6", sim::scenario::masked_straggler, seed, 40, 1.5, 8, 1, 538, 16, 0.25});
    const auto rep = diagnose::diagnose(failslow_test::model_of_traces(tj), tj.job.topo);
    const auto score = sim::score_case(tj.job.truth, rep);
    INFO("seed " << seed << "\n" << failslow_test::describe(rep));
    CHECK(score.counts.false_positives == 0);
    CHECK(score.counts.localised == score.counts.faults);
  }
  // A healthy rank ~1.5 % above its peers throughout (noise 2), over the bar in steps 3 and
  // 16-19: a run by chance, no straggler (bench/random_sweep.py 100 90519, job 60, seed 5).
  const auto tj = failslow_test::simulate_sweep_job(
      {"tp=2,pp=2,dp=2,cp=2", sim::scenario::host_launch_delay, 5, 40, 2.0, 4, 3, 3695, 21, 0.5});
  const auto rep = diagnose::diagnose(failslow_test::model_of_traces(tj), tj.job.topo);
  INFO(failslow_test::describe(rep));
  CHECK(sim::score_case(tj.job.truth, rep).counts.false_positives == 0);
}
