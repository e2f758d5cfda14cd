// What on-call engineers and their tools look at, from one diagnosis: the worst window as a
// Perfetto trace, Prometheus metrics for a node exporter's textfile collector, and KAT's
// analyzer context for a language model.
//
//   example_diagnosis_views [TRACE_DIR] [OUT_DIR]      (TRACE_DIR "" : simulate)
//
// With a folder of Kineto traces (e.g. from `failslow simulate --out DIR`) the Perfetto trace
// holds the culprit's and its peers' events, clock-aligned; without one, a 16-rank job with a
// straggler is simulated in process as window summaries (no events: the trace shows the steps
// and phase totals the model knows). Files go to OUT_DIR (default: the current folder).
#include <algorithm>
#include <cstdio>
#include <failslow/diagnose/diagnose.hpp>
#include <failslow/diagnose/load_job.hpp>
#include <failslow/io/analyzer_context.hpp>
#include <failslow/io/perfetto_trace.hpp>
#include <failslow/io/prometheus.hpp>
#include <failslow/sim/summaries.hpp>
#include <failslow/trace/load_trace_set.hpp>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>

int main(int argc, char** argv) try {
  using namespace failslow;
  const std::string out_dir = argc > 2 ? argv[2] : ".";
  diagnose::loaded_job job;
  std::optional<trace::trace_set> traces;
  if (argc > 1 && argv[1][0] != '\0') {
    diagnose::load_options lo;
    lo.model.keep_windows = true;  // per-step kernel summaries: L3 and the context's kernel lines
    job = diagnose::load_job({argv[1]}, lo);
    trace::trace_set_options to;
    to.skip_unreadable = true;
    traces.emplace(trace::load_trace_set({argv[1]}, to));  // the model keeps no events
  } else {
    sim::job_config cfg;
    cfg.sizes = parse_parallel_sizes("tp=2,pp=2,dp=4");
    cfg.steps = 12;
    diagnose::model_options mo;
    mo.keep_windows = true;
    diagnose::job_model_builder b(mo);
    sim::simulate_summaries(cfg, sim::scenario::compute_straggler, {},
                            [&](compress::window_summary&& w) { b.add_window(std::move(w), sim::kernel_key_name); },
                            {});
    job.model = b.finish();
    job.topo = topology(cfg.sizes);
    job.topology_source = "given";
  }
  diagnose::diagnose_options dopt;
  dopt.topology_source = job.topology_source;
  dopt.layout_assumed = job.layout_assumed;
  const report rep = diagnose::diagnose(job.model, job.topo, dopt);

  // 1. Perfetto: open in ui.perfetto.dev or chrome://tracing.
  io::perfetto_options po;
  po.peers = 3;      // the culprit and three healthy peers of its group
  po.max_steps = 3;  // the worst step and one on each side
  const auto pt = io::perfetto_trace(rep, job.model, job.topo, traces ? &*traces : nullptr, po);
  std::ofstream(out_dir + "/worst_window.perfetto.json") << pt.json;
  std::cout << "worst_window.perfetto.json: " << pt.view.why.substr(0, 120) << "...\n  ranks";
  for (int r : pt.view.ranks) std::cout << ' ' << r;
  std::cout << ", " << pt.events << " events" << (pt.clock_aligned ? ", clock-aligned" : "") << '\n';
  for (const auto& n : pt.notes) std::cout << "  note: " << n << '\n';

  // 2. Prometheus: the latest step per rank; written through a rename for the collector.
  const std::string metrics = io::prometheus_metrics(rep, job.model, job.topo);
  io::write_prometheus_file(out_dir + "/failslow.prom", metrics);
  std::cout << "failslow.prom: " << std::count(metrics.begin(), metrics.end(), '\n') << " lines, e.g.\n";
  for (std::size_t p = metrics.find("failslow_findings{"), k = 0; p != std::string::npos && k < 3;
       p = metrics.find('\n', p) + 1, ++k)
    std::cout << "  " << metrics.substr(p, metrics.find('\n', p) - p) << '\n';

  // 3. The analyzer context: paste into the model a team runs.
  io::analyzer_context_options co;
  co.model_type = traces ? "not stated" : "simulated transformer (2 layers per stage)";
  const std::string context = io::analyzer_context(rep, job.model, job.topo, co);
  std::ofstream(out_dir + "/analyzer_context.txt") << context;
  std::cout << "analyzer_context.txt:\n" << context.substr(0, context.find("</trace_anomaly>")) << "...\n";
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "example_diagnosis_views: %s\n", e.what());
  return 2;
}
