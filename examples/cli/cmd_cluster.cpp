// failslow cluster FILE: KDE valley clustering of a duration data set, with cluster summaries
// and their lognormal reconstruction, as JSON.
#include <algorithm>
#include <cmath>
#include <exception>
#include <failslow/io/detail/file_bytes.hpp>  // advise_huge_pages
#include <failslow/io/value_reader.hpp>
#include <failslow/stats/detail/radix_sort.hpp>  // sort_nonnegative
#include <failslow/stats/lognormal.hpp>
#include <failslow/stats/summary.hpp>
#include <failslow/stats/valleys.hpp>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>

#include "commands.hpp"

namespace failslow_cli {
namespace {

struct cluster_options {
  std::string file;
  failslow::io::value_read_options input;  // --column, --allow-nonfinite
  bool linear = false;
  std::string bandwidth = "rule_of_thumb";
  std::size_t grid = 1024;
  double min_depth = 0.2;
  double min_fraction = 0.01;
};

nlohmann::json summary_json(const failslow::stats::cluster_summary& c) {
  return {{"count", c.count},       {"sum", c.sum}, {"min", c.min}, {"max", c.max}, {"mean", c.mean},
          {"variance", c.variance}, {"p50", c.p50}, {"p90", c.p90}, {"p99", c.p99}};
}

void run(const cluster_options& o) {
  namespace st = failslow::stats;
  // On the log scale the values are durations: a negative one is an error at its line; zeros
  // (zero-length events) have no logarithm and are counted in skipped.nonpositive.
  auto input = o.input;
  input.nonnegative = !o.linear;
  auto data = failslow::io::read_values_file(o.file, input);
  auto usable_value = [&](double v) { return std::isfinite(v) && (o.linear || v > 0); };
  // The usable values, copied and sorted on a second thread while the density is estimated
  // (the summary needs them sorted, the density does not): the same results, the two longest
  // steps side by side on two cores.
  std::vector<double> sorted;
  std::exception_ptr sort_error;
  std::thread sorter([&] {
    try {
      // Huge pages where the system has them (io/detail/file_bytes.hpp): the process takes half
      // the page faults on 10^6 values.
      sorted.reserve(data.values.size());
      failslow::io::detail::advise_huge_pages(sorted.data(), data.values.size() * sizeof(double));
      sorted.resize(data.values.size());
      std::size_t n = 0;
      for (double v : data.values) {
        sorted[n] = v == 0 ? 0.0 : v;  // -0.0 as 0.0, as summarize() takes it
        n += usable_value(v) ? 1 : 0;
      }
      sorted.resize(n);
      std::vector<double> scratch;
      scratch.reserve(sorted.size());
      failslow::io::detail::advise_huge_pages(scratch.data(), sorted.size() * sizeof(double));
      st::detail::sort_nonnegative(sorted.data(), sorted.size(), scratch);
    } catch (...) {
      sort_error = std::current_exception();
    }
  });
  struct join_on_exit {
    std::thread& t;
    ~join_on_exit() {
      if (t.joinable()) t.join();
    }
  } joiner{sorter};
  const std::size_t values = data.values.size();
  st::valley_options opt;
  opt.kde.scale = o.linear ? st::kde_scale::linear : st::kde_scale::log;
  opt.kde.bandwidth = st::parse_bandwidth(o.bandwidth);
  opt.kde.grid_points = o.grid;
  opt.min_depth = o.min_depth;
  opt.min_fraction = o.min_fraction;
  std::optional<st::valley_clustering> clustering;
  if (std::any_of(data.values.begin(), data.values.end(), usable_value))
    clustering = st::find_valleys(data.values, opt);
  sorter.join();
  if (sort_error) std::rethrow_exception(sort_error);
  if (!clustering)
    throw failslow::invalid_argument(
        o.file + ": none of the " + std::to_string(values) + " values is " +
        (o.linear ? "finite" : "a positive finite duration (--linear clusters any finite value)"));
  const st::valley_clustering& c = *clustering;
  const st::distribution_summary s = st::summarize_sorted(std::move(sorted), c.boundaries);

  nlohmann::json out;
  out["file"] = o.file;
  if (!data.column.empty()) out["column"] = data.column;
  out["scale"] = o.linear ? "linear" : "log";
  out["bandwidth_rule"] = std::string(st::to_string(opt.kde.bandwidth.rule));
  out["bandwidth"] = c.density.bandwidth;
  out["grid_points"] = c.density.grid.points;
  out["values"] = values;
  out["used"] = c.density.used;
  out["skipped"] = {{"nonfinite", c.density.skipped_nonfinite}, {"nonpositive", c.density.skipped_nonpositive}};
  out["boundaries"] = c.boundaries;
  nlohmann::json clusters = nlohmann::json::array();
  for (const auto& cs : s.clusters) {
    nlohmann::json j = summary_json(cs);
    if (cs.count && !o.linear) {
      const auto k = st::reconstruct_lognormal(cs);
      j["lognormal"] = {
          {"mu", k.mu}, {"sigma", k.sigma}, {"weight", static_cast<double>(cs.count) / static_cast<double>(s.count())}};
    }
    clusters.push_back(std::move(j));
  }
  out["clusters"] = std::move(clusters);
  out["overall"] = summary_json(s.overall);
  std::cout << out.dump(2) << '\n';
}

}  // namespace

void add_cluster_command(CLI::App& app) {
  auto o = std::make_shared<cluster_options>();
  CLI::App* cmd =
      app.add_subcommand("cluster", "KDE valley clustering of durations (one per line, or a CSV column); JSON");
  cmd->add_option("file", o->file, "data file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--column", o->input.column, "CSV/TSV column (header name or 0-based index)");
  cmd->add_flag("--allow-nonfinite", o->input.allow_nonfinite, "read inf and nan as values instead of rejecting them");
  cmd->add_flag("--linear", o->linear, "cluster the values themselves, not their logarithms");
  cmd->add_option("--bandwidth", o->bandwidth, "rule_of_thumb, robust_rule_of_thumb, scott, silverman, isj, or a value")
      ->capture_default_str();
  cmd->add_option("--grid", o->grid, "KDE grid points")->check(CLI::Range(16, 1 << 20))->capture_default_str();
  cmd->add_option("--min-depth", o->min_depth, "least valley depth relative to the lower peak")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--min-fraction", o->min_fraction, "least mass on each side of a boundary")
      ->check(CLI::Range(0.0, 0.5))
      ->capture_default_str();
  cmd->callback([o] { run(*o); });
}

}  // namespace failslow_cli
