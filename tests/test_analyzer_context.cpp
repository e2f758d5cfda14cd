// KAT's analyzer context (io/analyzer_context.hpp) on simulated jobs: the three parts in order
// with balanced tags, the layout, one anomaly line per finding, and kernel lines whose
// duration over the expected one is the slowdown the simulator injected (1.5x for a compute
// straggler), independent of how the diagnosis measured it.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <failslow/diagnose/detail/rank_list.hpp>  // detail::placement
#include <failslow/diagnose/diagnose.hpp>
#include <failslow/io/analyzer_context.hpp>
#include <regex>
#include <sstream>
#include <string>

#include "support/simulated_job.hpp"

using namespace failslow;

namespace {

// "1.2 ms" -> 1.2e6 ns.
double context_duration_ns(const std::string& value, const std::string& unit) {
  const double v = std::strtod(value.c_str(), nullptr);
  return unit == "s" ? v * 1e9 : unit == "ms" ? v * 1e6 : v * 1e3;
}

std::size_t context_count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("analyzer context: system context, anomaly events and metrics of a simulated straggler",
          "[io][context][sim]") {
  for (std::uint64_t seed : {2u, 8u}) {
    const auto job =
        failslow_test::diagnose_simulated_summaries("tp=2,pp=2,dp=4", 12, seed, sim::scenario::compute_straggler);
    const auto& [model, truth, topo, rep] = job;
    INFO("seed " << seed);
    REQUIRE(!rep.findings.empty());
    const int culprit = truth.faults.at(0).ranks.at(0);
    io::analyzer_context_options co;
    co.model_type = "GPT 1.3B (simulated)";
    const std::string text = io::analyzer_context(rep, model, topo, co);
    INFO(text);

    // The three parts, in order, each tag opened and closed.
    const auto sys = text.find("[System context]"), anom = text.find("[Anomaly events]"),
               aux = text.find("[Auxiliary metrics]");
    REQUIRE(sys == 0);
    REQUIRE(anom != std::string::npos);
    REQUIRE(aux != std::string::npos);
    CHECK((sys < anom && anom < aux));
    for (const char* tag : {"inference_config", "parallel_strategy", "trace_anomaly"}) {
      CHECK(context_count(text, std::string("<") + tag + ">") == 1);
      CHECK(context_count(text, std::string("</") + tag + ">") == 1);
    }
    CHECK(context_count(text, "<metric>") == context_count(text, "</metric>"));
    CHECK(context_count(text, "<finding>") == rep.findings.size());
    CHECK(text.find("model type: GPT 1.3B (simulated)") != std::string::npos);
    CHECK(text.find("parallel configuration: tp 2 x pp 2 x dp 4 (cp 1, ep 1)") != std::string::npos);
    CHECK(text.find("rank" + std::to_string(culprit) + " sits in " + diagnose::detail::placement(topo, culprit)) !=
          std::string::npos);
    for (const auto& f : rep.findings) CHECK(text.find(f.summary) != std::string::npos);
    for (const auto& n : rep.notes) CHECK(text.find("<note>" + n + "</note>") != std::string::npos);

    // Anomaly lines: "who | what | duration=X (expected Y) | steps | level kind".
    const std::string events =
        text.substr(text.find("<trace_anomaly>"), text.find("</trace_anomaly>") - text.find("<trace_anomaly>"));
    static const std::regex line(
        R"((\S+) \| (.+) \| (duration|transfer)=([0-9.]+) (s|ms|us) per (launch|step) \(expected ([0-9.]+) (s|ms|us)\) \| (.*))");
    std::size_t finding_lines = 0, kernel_lines = 0;
    std::istringstream in(events);
    for (std::string l; std::getline(in, l);) {
      if (l.empty() || l[0] == '<') continue;
      std::smatch m;
      INFO(l);
      REQUIRE(std::regex_match(l, m, line));
      const double observed = context_duration_ns(m[4], m[5]), expected = context_duration_ns(m[7], m[8]);
      const std::string who = m[1];
      if (who.size() > 4 && who.compare(who.size() - 4, 4, ".gpu") == 0) {
        // The simulator slowed every compute kernel of the straggler 1.5x.
        if (who != "rank" + std::to_string(culprit) + ".gpu") continue;
        ++kernel_lines;
        CHECK(observed / expected == Approx(truth.faults[0].factor).epsilon(0.08));
      } else {
        ++finding_lines;
        if (m[1] == "rank" + std::to_string(culprit)) CHECK(observed > 1.3 * expected);
      }
    }
    CHECK(finding_lines == rep.findings.size());
    CHECK(kernel_lines == co.kernels_per_rank);
    // The culprit's phases against its peers', among the metrics.
    CHECK(text.find("<metric>rank" + std::to_string(culprit) + " phase time per step") != std::string::npos);
  }
}

TEST_CASE("analyzer context: a healthy job says there is nothing to explain", "[io][context][sim]") {
  sim::job_config cfg;
  cfg.sizes = parse_parallel_sizes("tp=1,pp=2,dp=4");
  cfg.steps = 8;
  cfg.seed = 6;
  auto [model, truth] = failslow_test::simulate_summaries_model(cfg, sim::scenario::healthy);
  const topology topo(cfg.sizes);
  const auto rep = diagnose::diagnose(model, topo);
  REQUIRE(rep.findings.empty());
  const std::string text = io::analyzer_context(rep, model, topo);
  CHECK(text.find("none: the diagnosis found no slow window") != std::string::npos);
  CHECK(text.find("model type: not stated") != std::string::npos);
  CHECK(context_count(text, "<finding>") == 0);
  CHECK_THROWS_AS(io::analyzer_context(rep, model, topology(parse_parallel_sizes("dp=4"))), invalid_argument);
}
