// Diagnose a job from its recorded traces (Kineto .json/.json.gz, kernel tables, Nsight
// exports, or .fsum summaries) and print the report for people and as JSON.
//   ./example_diagnose_traces TRACE_DIR_OR_FILES... [--json]
#include <cstring>
#include <failslow/diagnose/diagnose.hpp>
#include <failslow/diagnose/load_job.hpp>
#include <failslow/io/report_json.hpp>
#include <failslow/io/report_text.hpp>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  std::vector<std::string> paths;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0)
      json = true;
    else
      paths.emplace_back(argv[i]);
  }
  if (paths.empty()) {
    std::cerr << "usage: example_diagnose_traces TRACE_DIR_OR_FILES... [--json]\n";
    return 2;
  }
  try {
    // The layout comes from the traces' process groups when they list them; set
    // options.sizes to give it.
    failslow::diagnose::load_options lo;
    lo.model.keep_windows = true;  // per-step kernel summaries: L3 names kernels, links, stages
    const auto job = failslow::diagnose::load_job(paths, lo);
    failslow::diagnose::diagnose_options options;
    options.topology_source = job.topology_source;
    options.layout_assumed = job.layout_assumed;
    const auto report = failslow::diagnose::diagnose(job.model, job.topo, options);
    std::cout << (json ? failslow::io::report_to_json(report) + "\n" : failslow::io::report_to_text(report));
  } catch (const failslow::error& e) {
    std::cerr << "error: " << e.what() << '\n';
    return 2;
  }
}
