// failslow detect FILE: the L1 detectors on one series (step times, or one kernel's durations in
// launch order): ratio-gate windows, PELT change points with their segments, and the first EWMA
// and CUSUM alarms; JSON.
#include <failslow/detect/cusum.hpp>
#include <failslow/detect/ewma.hpp>
#include <failslow/detect/pelt.hpp>
#include <failslow/detect/ratio_gate.hpp>
#include <failslow/io/value_reader.hpp>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "commands.hpp"

namespace failslow_cli {
namespace {

struct detect_options {
  std::string file;
  failslow::io::value_read_options input;  // --column, --allow-nonfinite
  std::size_t window = 20;
  double open = 1.2, close = 1.1;
  std::string model = "mean";
  std::string penalty = "mbic";
  std::size_t min_segment = 2;
  std::size_t warmup = 30;
};

void run(const detect_options& o) {
  namespace fd = failslow::detect;
  const auto series = failslow::io::read_values_file(o.file, o.input).values;
  nlohmann::json out;
  out["file"] = o.file;
  out["values"] = series.size();

  fd::ratio_gate_options g;
  g.window = o.window;
  g.open_threshold = o.open;
  g.close_threshold = o.close;
  const auto gate = fd::ratio_gate_scan(series, g);
  nlohmann::json windows = nlohmann::json::array();
  for (const auto& w : gate.windows)
    windows.push_back(
        {{"first", w.first}, {"last", w.last}, {"peak_index", w.peak_index}, {"peak_ratio", w.peak_ratio}});
  out["ratio_gate"] = {{"window", o.window}, {"windows", windows}, {"skipped", gate.skipped}};

  fd::changepoint_options c;
  c.model = fd::parse_cost_model(o.model);
  c.pen = fd::parse_penalty(o.penalty);
  c.min_segment = o.min_segment;
  const auto cp = fd::pelt(series, c);
  nlohmann::json segments = nlohmann::json::array();
  for (const auto& s : cp.segments)
    segments.push_back({{"begin", s.begin}, {"end", s.end}, {"mean", s.mean}, {"sd", s.sd}});
  out["pelt"] = {{"model", o.model}, {"penalty", cp.penalty}, {"changes", cp.changes}, {"segments", segments}};
  if (c.model == fd::cost_model::normal_mean) out["pelt"]["sigma"] = cp.sigma;

  fd::ewma_options e;
  e.baseline.warmup = o.warmup;
  e.side = fd::chart_side::upper;
  fd::ewma_chart<double> ewma(e);
  fd::cusum_options u;
  u.baseline.warmup = o.warmup;
  u.side = fd::chart_side::upper;
  fd::cusum<double> cusum(u);
  nlohmann::json first_ewma = nullptr, first_trend = nullptr, first_cusum = nullptr;
  for (double v : series) {
    const auto pe = ewma.update(v);
    if (pe.state == fd::chart_state::alarm && first_ewma.is_null()) first_ewma = pe.index;
    if (pe.state == fd::chart_state::trend_warning && first_trend.is_null()) first_trend = pe.index;
    const auto pc = cusum.update(v);
    if (pc.state == fd::chart_state::alarm && first_cusum.is_null())
      first_cusum = {{"index", pc.index}, {"change_start", pc.change_start}};
  }
  out["ewma"] = {{"first_alarm", first_ewma}, {"first_trend_warning", first_trend}, {"alarms", ewma.alarms()}};
  out["cusum"] = {{"first_alarm", first_cusum}, {"alarms", cusum.alarms()}};
  std::cout << out.dump(2) << '\n';
}

}  // namespace

void add_detect_command(CLI::App& app) {
  auto o = std::make_shared<detect_options>();
  CLI::App* cmd = app.add_subcommand(
      "detect", "Slow windows, change points and chart alarms in one series (step or kernel times); JSON");
  cmd->add_option("file", o->file, "data file (one value per line, or a CSV column)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--column", o->input.column, "CSV/TSV column (header name or 0-based index)");
  cmd->add_flag("--allow-nonfinite", o->input.allow_nonfinite, "read inf and nan as values instead of rejecting them");
  cmd->add_option("--window", o->window, "ratio gate: baseline window (previous values)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000}))
      ->capture_default_str();
  cmd->add_option("--open", o->open, "ratio gate: open above this ratio")->capture_default_str();
  cmd->add_option("--close", o->close, "ratio gate: close below this ratio")->capture_default_str();
  cmd->add_option("--model", o->model, "change points: mean or meanvar")->capture_default_str();
  cmd->add_option("--penalty", o->penalty, "change points: mbic, bic or a number")->capture_default_str();
  cmd->add_option("--min-segment", o->min_segment, "change points: shortest segment")->capture_default_str();
  cmd->add_option("--warmup", o->warmup, "EWMA / CUSUM: values that set the in-control baseline")
      ->check(CLI::Range(std::size_t{2}, std::size_t{1000000}))
      ->capture_default_str();
  cmd->callback([o] { run(*o); });
}

}  // namespace failslow_cli
