// failslow w1 FILE_A FILE_B | failslow w1 --matrix FILE...: exact Wasserstein-1 distances
// between duration data sets, as JSON.
#include <failslow/io/value_reader.hpp>
#include <failslow/stats/w1_matrix.hpp>
#include <failslow/stats/wasserstein.hpp>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"

namespace failslow_cli {
namespace {

struct w1_options {
  std::vector<std::string> files;
  failslow::io::value_read_options input;  // --column, --allow-nonfinite
  bool matrix = false;
  unsigned threads = 1;
};

void run(const w1_options& o) {
  namespace st = failslow::stats;
  std::vector<std::vector<double>> sets;
  for (const auto& f : o.files) sets.push_back(failslow::io::read_values_file(f, o.input).values);
  nlohmann::json out;
  out["files"] = o.files;
  if (!o.matrix) {
    if (sets.size() != 2) throw failslow::invalid_argument("w1: give two files, or --matrix with any number");
    out["w1"] = st::wasserstein1(sets[0], sets[1]);
  } else {
    const Eigen::MatrixXd d = st::w1_matrix_samples(sets, o.threads);
    nlohmann::json rows = nlohmann::json::array();
    for (Eigen::Index i = 0; i < d.rows(); ++i) {
      std::vector<double> row(static_cast<std::size_t>(d.cols()));
      for (Eigen::Index j = 0; j < d.cols(); ++j) row[static_cast<std::size_t>(j)] = d(i, j);
      rows.push_back(row);
    }
    out["matrix"] = std::move(rows);
  }
  std::cout << out.dump(2) << '\n';
}

}  // namespace

void add_w1_command(CLI::App& app) {
  auto o = std::make_shared<w1_options>();
  CLI::App* cmd = app.add_subcommand("w1", "Exact Wasserstein-1 distance between data sets (or their matrix); JSON");
  cmd->add_option("files", o->files, "data files (one value per line, or a CSV column)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--column", o->input.column, "CSV/TSV column (header name or 0-based index)");
  cmd->add_flag("--allow-nonfinite", o->input.allow_nonfinite, "read inf and nan as values instead of rejecting them");
  cmd->add_flag("--matrix", o->matrix, "the N x N matrix of all files");
  cmd->add_option("--threads", o->threads, "threads for the matrix")
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  cmd->callback([o] { run(*o); });
}

}  // namespace failslow_cli
