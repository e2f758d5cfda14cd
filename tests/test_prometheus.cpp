// Prometheus text exposition (io/prometheus.hpp): the format's rules checked line by line by an
// independent grammar (regular expressions of format 0.0.4), escaping and numbers against
// hand-written expectations, and the values against the model and the report they come from,
// on simulated jobs of several seeds. promtool itself runs as the ctest cli.diagnose_promtool.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <failslow/diagnose/diagnose.hpp>
#include <failslow/io/prometheus.hpp>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "support/simulated_job.hpp"

using namespace failslow;

namespace {

struct prom_sample {
  std::string family;
  std::map<std::string, std::string> labels;
  double value = 0;
};

// Unescapes a label value as the Prometheus parser does (\\, \", \n).
std::string prom_unescape(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      const char c = s[++i];
      out += c == 'n' ? '\n' : c;
    } else {
      out += s[i];
    }
  }
  return out;
}

// Parses the exposition with the grammar of format 0.0.4 and checks its structural rules:
// HELP then TYPE once per family before its samples, samples of a family contiguous, no series
// twice, a final line feed.
std::vector<prom_sample> prom_parse(const std::string& text) {
  REQUIRE(!text.empty());
  REQUIRE(text.back() == '\n');
  static const std::regex help(R"(# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*))");
  static const std::regex type(R"(# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped))");
  static const std::regex sample(
      R"(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*",?)*)\})? ([^ ]+))");
  static const std::regex label(R"(([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)\")");
  std::vector<prom_sample> out;
  std::set<std::string> typed, closed, series;
  std::string current, helped;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    INFO(line);
    std::smatch m;
    if (std::regex_match(line, m, help)) {
      helped = m[1];
      continue;
    }
    if (std::regex_match(line, m, type)) {
      CHECK(helped == m[1].str());  // HELP right before TYPE
      CHECK(typed.insert(m[1]).second);
      if (!current.empty()) closed.insert(current);
      current = m[1];
      if (m[2] == "counter")
        CHECK(current.size() > 6);
      else
        CHECK(!(current.size() > 6 && current.compare(current.size() - 6, 6, "_total") == 0));
      continue;
    }
    REQUIRE(std::regex_match(line, m, sample));
    prom_sample s;
    s.family = m[1];
    CHECK(s.family == current);  // inside its own family's block
    CHECK(closed.count(s.family) == 0);
    const std::string labels = m[3];
    for (auto it = std::sregex_iterator(labels.begin(), labels.end(), label); it != std::sregex_iterator(); ++it)
      s.labels[(*it)[1]] = prom_unescape((*it)[2]);
    const std::string v = m[4];
    if (v == "+Inf" || v == "-Inf" || v == "NaN")
      s.value = v == "NaN" ? std::nan("") : (v[0] == '+' ? HUGE_VAL : -HUGE_VAL);
    else {
      char* end = nullptr;
      s.value = std::strtod(v.c_str(), &end);
      CHECK(*end == '\0');
    }
    CHECK(series.insert(line.substr(0, line.rfind(' '))).second);
    out.push_back(std::move(s));
  }
  return out;
}

const prom_sample* prom_find(const std::vector<prom_sample>& v, const std::string& family,
                             const std::map<std::string, std::string>& labels) {
  for (const auto& s : v) {
    if (s.family != family) continue;
    bool all = true;
    for (const auto& [k, x] : labels) all = all && s.labels.count(k) && s.labels.at(k) == x;
    if (all) return &s;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("prometheus: label values, HELP texts and numbers are escaped as format 0.0.4 says", "[io][prometheus]") {
  std::string s;
  io::detail::append_prometheus_label_value(s, "a\\b\"c\nd\te");
  CHECK(s == "a\\\\b\\\"c\\nd\te");  // tab passes through
  s.clear();
  io::detail::append_prometheus_help(s, "x \"q\" \\ \n y");
  CHECK(s == "x \"q\" \\\\ \\n y");  // quotes are not escaped in HELP
  s.clear();
  io::detail::append_prometheus_label_value(s, "ok \xC3\xA9 \xFF bad \xE2\x82");
  CHECK(s == "ok \xC3\xA9 \xEF\xBF\xBD bad \xEF\xBF\xBD\xEF\xBF\xBD");  // é kept; 0xFF and a cut sequence replaced
  s.clear();
  io::detail::append_prometheus_label_value(s, "\xC0\xAF\xED\xA0\x80");        // overlong '/', a surrogate
  CHECK(s == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // byte by byte
  for (double v : {0.1, 1e-9, 123456789.125, 6.02e23, -2.5e-300}) {
    s.clear();
    io::detail::append_prometheus_value(s, v);
    CHECK(std::strtod(s.c_str(), nullptr) == v);
  }
  s.clear();
  io::detail::append_prometheus_value(s, HUGE_VAL);
  io::detail::append_prometheus_value(s, -HUGE_VAL);
  io::detail::append_prometheus_value(s, std::nan(""));
  CHECK(s == "+Inf-InfNaN");

  std::string out;
  io::detail::prometheus_writer w(out);
  w.family("failslow_x_seconds", "gauge", "A test.");
  w.sample({{"kernel", "void k<\"a\">()"}}, 1.5e-6);
  w.sample({{"kernel", "skipped"}}, std::nan(""));  // not measured: no sample
  CHECK(out ==
        "# HELP failslow_x_seconds A test.\n# TYPE failslow_x_seconds gauge\n"
        "failslow_x_seconds{kernel=\"void k<\\\"a\\\">()\"} 1.5e-06\n");
  CHECK_THROWS_AS(w.family("failslow_x_seconds", "gauge", "again"), invalid_argument);  // one TYPE per family
  CHECK_THROWS_AS(w.family("9bad", "gauge", "bad name"), invalid_argument);
  CHECK(prom_parse(out).size() == 1);
}

TEST_CASE("prometheus: a simulated straggler's metrics in seconds, per rank and step, findings by level",
          "[io][prometheus][sim]") {
  for (std::uint64_t seed : {3u, 11u}) {
    const auto job =
        failslow_test::diagnose_simulated_summaries("tp=2,pp=2,dp=4", 12, seed, sim::scenario::compute_straggler);
    const auto& [model, truth, topo, rep] = job;
    INFO("seed " << seed);
    REQUIRE(!rep.findings.empty());
    const int culprit = truth.faults.at(0).ranks.at(0);

    io::prometheus_options po;
    po.last_steps = 2;
    const auto samples = prom_parse(io::prometheus_metrics(rep, model, topo, po));
    // Per rank and step: the model's ns in seconds, for the last two steps only.
    const std::size_t S = model.step_count();
    for (int r : {0, culprit})
      for (std::size_t s = S - 2; s < S; ++s) {
        const auto rs = std::to_string(r), step = std::to_string(model.steps[s]);
        const auto* it = prom_find(samples, "failslow_iteration_seconds", {{"rank", rs}, {"step", step}});
        REQUIRE(it);
        CHECK(it->value == Approx(model.iteration_ns(static_cast<std::size_t>(r), s) * 1e-9).epsilon(1e-12));
        CHECK(it->labels.at("stage") == std::to_string(topo.coordinate(r, parallel_dim::pp)));
        const auto* c =
            prom_find(samples, "failslow_phase_seconds", {{"rank", rs}, {"step", step}, {"phase", "compute"}});
        REQUIRE(c);
        CHECK(c->value == Approx(model.phase_ns(static_cast<std::size_t>(r), 0, s) * 1e-9).epsilon(1e-12));
        CHECK(c->labels.at("role") == "work");
        const auto* wait =
            prom_find(samples, "failslow_gpu_time_seconds", {{"rank", rs}, {"step", step}, {"role", "wait"}});
        REQUIRE(wait);
        CHECK(wait->value == Approx(model.phase_ns(static_cast<std::size_t>(r), 1, s) * 1e-9).epsilon(1e-12));
      }
    CHECK(!prom_find(samples, "failslow_iteration_seconds", {{"step", std::to_string(model.steps[S - 3])}}));
    // The straggler computes 1.5x: its work time exceeds its peers', its wait is shorter.
    const auto last = std::to_string(model.steps[S - 1]);
    const auto dp_group = topo.group(culprit, parallel_dim::dp);
    const int peer = dp_group[0] == culprit ? dp_group[1] : dp_group[0];
    auto work = [&](int r) {
      return prom_find(samples, "failslow_gpu_time_seconds",
                       {{"rank", std::to_string(r)}, {"step", last}, {"role", "work"}})
          ->value;
    };
    CHECK(work(culprit) > 1.3 * work(peer));

    // Findings by level and kind equal the report's; every kind the diagnosis emits is there.
    for (const auto& [level, kind] : std::vector<std::pair<std::string, std::string>>{
             {"L1", "slow_window"}, {"L2", "straggler"}, {"L3", "degraded_kernel"}, {"L3", "degraded_link"}}) {
      const auto* f = prom_find(samples, "failslow_findings", {{"level", level}, {"kind", kind}});
      REQUIRE(f);
      CHECK(f->value == static_cast<double>(std::count_if(
                            rep.findings.begin(), rep.findings.end(),
                            [lv = level, kd = kind](const finding& x) { return x.level == lv && x.kind == kd; })));
    }
    const auto* l2 = prom_find(samples, "failslow_rank_findings", {{"rank", std::to_string(culprit)}, {"level", "L2"}});
    REQUIRE(l2);
    CHECK(l2->value == 1);
    // W1 of the degraded kernels where L3 computed it, in seconds; the kernel's full name escaped and back.
    int w1 = 0;
    for (const auto& f : rep.findings) {
      if (f.kind != "degraded_kernel") continue;
      const auto* s = prom_find(samples, "failslow_kernel_w1_seconds",
                                {{"rank", std::to_string(f.ranks[0])}, {"kernel", f.kernel}});
      REQUIRE(s);
      CHECK(s->value == Approx(f.evidence.number("w1_ns") * 1e-9).epsilon(1e-12));
      ++w1;
    }
    CHECK(w1 >= 1);
    for (std::size_t i = 0; i < rep.findings.size(); ++i) {
      const auto* s = prom_find(samples, "failslow_finding_score", {{"finding", std::to_string(i + 1)}});
      REQUIRE(s);
      CHECK(s->value == Approx(rep.findings[i].score));
      CHECK(s->labels.at("kind") == rep.findings[i].kind);
    }
  }
}

TEST_CASE("prometheus: every step with last_steps 0, and the file appears whole through a rename", "[io][prometheus]") {
  sim::job_config cfg;
  cfg.sizes = parse_parallel_sizes("tp=1,pp=2,dp=4");
  cfg.steps = 5;
  cfg.seed = 2;
  auto [model, truth] = failslow_test::simulate_summaries_model(cfg, sim::scenario::healthy);
  const topology topo(cfg.sizes);
  const auto rep = diagnose::diagnose(model, topo);
  io::prometheus_options po;
  po.last_steps = 0;
  const std::string text = io::prometheus_metrics(rep, model, topo, po);
  const auto samples = prom_parse(text);
  CHECK(std::count_if(samples.begin(), samples.end(),
                      [](const prom_sample& s) { return s.family == "failslow_iteration_seconds"; }) == 8 * 5);
  const auto* findings = prom_find(samples, "failslow_findings", {{"level", "L2"}});
  REQUIRE(findings);
  CHECK(findings->value == 0);

  const std::string path = "prometheus_test_" + std::to_string(truth.seed) + ".prom";
  io::write_prometheus_file(path, text);
  std::ifstream f(path, std::ios::binary);
  const std::string back((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  CHECK(back == text);
  CHECK(!std::ifstream(path + ".tmp"));
  std::remove(path.c_str());
  CHECK_THROWS_AS(io::write_prometheus_file("/nonexistent-dir/x.prom", text), invalid_argument);
  CHECK_THROWS_AS(io::prometheus_metrics(rep, model, topology(parse_parallel_sizes("dp=4"))), invalid_argument);
}
