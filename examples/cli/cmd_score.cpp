// failslow score --truth truth.json --report report.json [--truth ... --report ...] [--json]:
// scores diagnosis reports (failslow.report/1) against simulated truths (failslow.truth/1):
// per fault localised / kernel right / steps right, false positives with their reason,
// precision and recall per scenario and overall (see failslow/sim/score.hpp).
#include <cstdio>
#include <failslow/sim/score.hpp>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "sim_json.hpp"

namespace failslow_cli {
namespace {

struct score_cli_options {
  std::vector<std::string> truths;
  std::vector<std::string> reports;
  bool json = false;
  failslow::sim::score_options opt;
};

std::string ranks_text(const std::vector<int>& r) {
  if (r.empty()) return "-";
  std::string s;
  const std::size_t shown = std::min<std::size_t>(r.size(), 8);
  for (std::size_t i = 0; i < shown; ++i) s += (i ? "," : "") + std::to_string(r[i]);
  if (shown < r.size()) s += ",... (" + std::to_string(r.size()) + ")";
  return s;
}

void run(const score_cli_options& o) {
  using namespace failslow::sim;
  if (o.truths.size() != o.reports.size())
    throw failslow::invalid_argument("score: give as many --truth as --report files (" +
                                     std::to_string(o.truths.size()) + " vs " + std::to_string(o.reports.size()) +
                                     "), paired in order");
  std::vector<truth> truths;
  std::vector<report> reports;
  std::vector<case_score> cases;
  for (std::size_t i = 0; i < o.truths.size(); ++i) {
    truths.push_back(read_json_file(o.truths[i], truth_from_json));
    reports.push_back(read_json_file<nlohmann::ordered_json>(o.reports[i], report_from_json));
    try {
      cases.push_back(score_case(truths.back(), reports.back(), o.opt));
    } catch (const failslow::error& e) {
      throw failslow::invalid_argument(o.reports[i] + ": " + e.what());
    }
  }
  const score_summary sum = summarize(cases);

  if (o.json) {
    nlohmann::json j;
    j["schema"] = "failslow.score/1";
    j["options"] = {{"step_tolerance", o.opt.step_tolerance}, {"persistent_min_steps", o.opt.persistent_min_steps}};
    nlohmann::json cj = nlohmann::json::array();
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const auto& c = cases[i];
      nlohmann::json x;
      x["truth"] = o.truths[i];
      x["report"] = o.reports[i];
      x["scenario"] = c.scenario;
      nlohmann::json fj = nlohmann::json::array();
      for (const auto& f : c.faults) {
        const auto& tf = truths[i].faults[f.fault];
        nlohmann::json y = {{"fault", f.fault},
                            {"kind", std::string(to_string(tf.kind))},
                            {"ranks", tf.ranks},
                            {"first_step", tf.first_step},
                            {"last_step", tf.last_step},
                            {"localised", f.localised},
                            {"steps_right", f.steps_right},
                            {"findings", f.findings}};
        if (!tf.group.empty()) y["group"] = tf.group;
        y["kernel_right"] = f.names_kernels ? nlohmann::json(f.kernel_right) : nlohmann::json(nullptr);
        fj.push_back(std::move(y));
      }
      x["faults"] = std::move(fj);
      nlohmann::json nj = nlohmann::json::array();
      for (const auto& f : c.findings) {
        nlohmann::json y = {
            {"finding", f.finding}, {"verdict", std::string(to_string(f.result))}, {"faults", f.faults}};
        if (f.reason != fp_reason::none) y["reason"] = std::string(to_string(f.reason));
        nj.push_back(std::move(y));
      }
      x["findings"] = std::move(nj);
      x["counts"] = counts_to_json(c.counts);
      cj.push_back(std::move(x));
    }
    j["cases"] = std::move(cj);
    j["by_scenario"] = nlohmann::json::object();
    for (const auto& [name, c] : sum.by_scenario) j["by_scenario"][name] = counts_to_json(c);
    j["overall"] = counts_to_json(sum.overall);
    std::cout << j.dump(2) << '\n';
    return;
  }

  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    std::cout << c.scenario << "  (" << o.reports[i] << " vs " << o.truths[i] << ")\n";
    if (c.faults.empty()) std::cout << "  no fault in the truth\n";
    for (const auto& f : c.faults) {
      const auto& tf = truths[i].faults[f.fault];
      std::cout << "  fault " << f.fault << ' ' << to_string(tf.kind) << " ranks " << ranks_text(tf.ranks)
                << (tf.group.empty() ? "" : " group " + tf.group) << " steps " << tf.first_step << ".." << tf.last_step
                << ": " << (f.localised ? "localised" : "MISSED");
      if (f.localised)
        std::cout << ", kernel " << (f.names_kernels ? (f.kernel_right ? "right" : "wrong") : "n/a") << ", steps "
                  << (f.steps_right ? "right" : "off");
      std::cout << '\n';
    }
    for (const auto& f : c.findings) {
      if (f.result != verdict::false_positive) continue;
      const auto& rf = reports[i].findings[f.finding];
      std::cout << "  false positive: finding " << f.finding << " (" << rf.level << ' ' << rf.kind << ", ranks "
                << ranks_text(rf.ranks) << (rf.group.empty() ? "" : ", group " + rf.group) << ", steps "
                << rf.first_step << ".." << rf.last_step << "): " << to_string(f.reason) << '\n';
    }
  }
  std::cout << '\n';
  char line[256];
  std::snprintf(line, sizeof line, "%-20s %5s %6s %9s %8s %8s %4s %4s %7s %9s %6s\n", "scenario", "cases", "faults",
                "localised", "kernel", "steps", "TP", "FP", "neutral", "precision", "recall");
  std::cout << line;
  auto row = [&](const std::string& name, const score_counts& c) {
    const std::string kern = std::to_string(c.kernel_right) + "/" + std::to_string(c.kernel_faults);
    const std::string steps = std::to_string(c.steps_right) + "/" + std::to_string(c.faults);
    std::snprintf(line, sizeof line, "%-20s %5zu %6zu %9zu %8s %8s %4zu %4zu %7zu %9.3f %6.3f\n", name.c_str(), c.cases,
                  c.faults, c.localised, kern.c_str(), steps.c_str(), c.true_positives, c.false_positives, c.neutral,
                  c.precision(), c.recall());
    std::cout << line;
  };
  for (const auto& [name, c] : sum.by_scenario) row(name, c);
  row("overall", sum.overall);
}

}  // namespace

void add_score_command(CLI::App& app) {
  auto o = std::make_shared<score_cli_options>();
  CLI::App* cmd = app.add_subcommand(
      "score", "Score diagnosis reports (failslow.report/1) against simulated truths (failslow.truth/1)");
  cmd->add_option("--truth", o->truths, "truth.json written by failslow simulate (repeatable, paired with --report)")
      ->required();
  cmd->add_option("--report", o->reports, "report.json of the diagnosis (repeatable)")->required();
  cmd->add_flag("--json", o->json, "JSON output (schema failslow.score/1)");
  cmd->add_option("--step-tolerance", o->opt.step_tolerance,
                  "steps right: both ends within this many steps (default 2)");
  cmd->add_option("--persistent-steps", o->opt.persistent_min_steps,
                  "a straggler finding this long is persistent (default 3)");
  cmd->callback([o] { run(*o); });
}

}  // namespace failslow_cli
