// failslow diagnose [--topology tp=2,pp=4,dp=8[,cp=..,ep=..]] [--order tp-cp-ep-dp-pp]
//   [--format text|json] [--out FILE] [--threads N] [--svg DIR] [--html FILE] [--perfetto FILE]
//   [--prometheus FILE] [--context FILE] TRACE...|DIR|FILE.fsum...
// Loads a job (diagnose/load_job.hpp: traces or .fsum summaries), diagnoses it
// (diagnose/diagnose.hpp: L1 slow windows, L2 stragglers, L3 degraded kernels, links and
// stages) and writes the report as text for a
// person (io/report_text.hpp) or JSON of schema failslow.report/1 (io/report_json.hpp). The
// layout comes from --topology, else from the traces' pg_config, else pure data parallelism,
// and the report says which. --svg DIR writes the figures (io/diagnosis_figures.hpp) and --html
// FILE the one-page report (io/html_report.hpp); the report lists them under "files".
// --perfetto FILE writes the worst window as a Chrome/Perfetto trace (io/perfetto_trace.hpp;
// the shown ranks' traces are read a second time), --prometheus FILE the metrics
// (io/prometheus.hpp) and --context FILE KAT's analyzer context (io/analyzer_context.hpp).
// Exit 0 with or without findings; 2 on errors.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <failslow/diagnose/diagnose.hpp>
#include <failslow/diagnose/load_job.hpp>
#include <failslow/io/analyzer_context.hpp>
#include <failslow/io/diagnosis_figures.hpp>
#include <failslow/io/html_report.hpp>
#include <failslow/io/output_file.hpp>
#include <failslow/io/perfetto_trace.hpp>
#include <failslow/io/prometheus.hpp>
#include <failslow/io/report_json.hpp>
#include <failslow/io/report_text.hpp>
#include <failslow/trace/load_trace_set.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"

namespace failslow_cli {
namespace {

struct diagnose_cli_options {
  std::vector<std::string> paths;
  std::string topology;
  std::string order = std::string(failslow::topology::default_order);
  std::string format = "text";
  std::string out;
  unsigned threads = 0;
  std::size_t width = 100;
  std::string svg_dir;     // figures (io/diagnosis_figures.hpp) written here
  std::string html;        // the one-page report (io/html_report.hpp)
  std::string perfetto;    // the worst window as a Chrome/Perfetto trace (io/perfetto_trace.hpp)
  std::string prometheus;  // metrics, text exposition 0.0.4 (io/prometheus.hpp)
  std::size_t prometheus_steps = 1;
  std::string context;  // KAT's analyzer context (io/analyzer_context.hpp)
  std::string model_type = "not stated";
};

// Every file through a temporary name and a rename: a failed run leaves no half-written file.
void write_file(const std::string& path, const std::string& text) { failslow::io::write_file_atomically(path, text); }

// The figures into --svg DIR and the page into --html FILE; the report refers to both.
void write_figures(const diagnose_cli_options& o, const failslow::diagnose::loaded_job& job, failslow::report& rep) {
  if (o.svg_dir.empty() && o.html.empty()) return;
  failslow::io::figure_options fo;
  fo.threads = o.threads;  // 0: every core
  const auto figures = failslow::io::diagnosis_figures(job.model, job.topo, rep, fo);
  if (!o.svg_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.svg_dir, ec);
    if (ec) throw failslow::invalid_argument("diagnose: cannot create '" + o.svg_dir + "': " + ec.message());
    for (const auto& f : figures) write_file((std::filesystem::path(o.svg_dir) / f.file).string(), f.svg);
    failslow::io::refer_to_figures(rep, figures, o.svg_dir);
  }
  if (!o.html.empty()) {
    write_file(o.html, failslow::io::report_to_html(rep, figures));
    rep.files.push_back({"html", o.html, "the report as one self-contained HTML page", {}});
  }
}

// --perfetto, --prometheus, --context: what on-call engineers and their tools look at.
void write_views(const diagnose_cli_options& o, const failslow::diagnose::loaded_job& job,
                 const failslow::report& rep) {
  if (!o.perfetto.empty()) {
    std::optional<failslow::trace::trace_set> set;
    if (job.model.source != "summaries") {
      // The model keeps no events: the shown ranks' traces are read again.
      const auto view = failslow::io::choose_perfetto_view(rep, job.model, job.topo);
      failslow::trace::trace_set_options to;
      to.threads = o.threads;
      to.skip_unreadable = true;
      set.emplace(failslow::trace::load_trace_set(o.paths, to));
      auto& t = set->traces;
      t.erase(std::remove_if(t.begin(), t.end(),
                             [&](const failslow::trace::rank_trace& x) {
                               return std::find(view.ranks.begin(), view.ranks.end(), x.rank) == view.ranks.end();
                             }),
              t.end());
    }
    const auto pt = failslow::io::perfetto_trace(rep, job.model, job.topo, set ? &*set : nullptr);
    write_file(o.perfetto, pt.json);
    std::fprintf(stderr, "perfetto: %s -- ranks", o.perfetto.c_str());
    for (int r : pt.view.ranks) std::fprintf(stderr, " %d", r);
    std::fprintf(stderr, ", steps %lld-%lld, %llu events%s\n", static_cast<long long>(pt.view.first_step),
                 static_cast<long long>(pt.view.last_step), static_cast<unsigned long long>(pt.events),
                 pt.from_traces ? (pt.clock_aligned ? ", clock-aligned" : "") : " (from summaries: no events)");
  }
  if (!o.prometheus.empty()) {
    failslow::io::prometheus_options po;
    po.last_steps = o.prometheus_steps;
    failslow::io::write_prometheus_file(o.prometheus, failslow::io::prometheus_metrics(rep, job.model, job.topo, po));
  }
  if (!o.context.empty()) {
    failslow::io::analyzer_context_options co;
    co.model_type = o.model_type;
    write_file(o.context, failslow::io::analyzer_context(rep, job.model, job.topo, co));
  }
}

// A progress bar on stderr while files load, only when stderr is a terminal.
void draw_progress(std::size_t done, std::size_t total) {
  constexpr int bar = 30;
  const int filled = total ? static_cast<int>(bar * done / total) : bar;
  std::fprintf(stderr, "\r  loading %zu/%zu [%.*s%*s]", done, total, filled, "##############################",
               bar - filled, "");
  if (done == total) std::fprintf(stderr, "\r%*s\r", bar + 40, "");
  std::fflush(stderr);
}

void run(const diagnose_cli_options& o) {
  if (o.format != "text" && o.format != "json")
    throw failslow::invalid_argument("diagnose: --format is text or json, not '" + o.format + "'");
  failslow::diagnose::load_options lo;
  lo.threads = o.threads;
  lo.order = o.order;
  lo.model.keep_windows = true;  // per-step kernel summaries: L3 (kernels, links, stages)
  if (!o.topology.empty()) lo.sizes = failslow::parse_parallel_sizes(o.topology);
  if (isatty(STDERR_FILENO)) lo.progress = draw_progress;
  const auto job = failslow::diagnose::load_job(o.paths, lo);
  failslow::diagnose::diagnose_options dopt;
  dopt.topology_source = job.topology_source;
  dopt.layout_assumed = job.layout_assumed;
  auto rep = failslow::diagnose::diagnose(job.model, job.topo, dopt);
  write_figures(o, job, rep);
  write_views(o, job, rep);
  const std::string text =
      o.format == "json" ? failslow::io::report_to_json(rep) + "\n" : failslow::io::report_to_text(rep, {o.width, 20});
  if (o.out.empty()) {
    std::cout << text;
    return;
  }
  write_file(o.out, text);
}

}  // namespace

void add_diagnose_command(CLI::App& app) {
  auto opts = std::make_shared<diagnose_cli_options>();
  CLI::App* cmd = app.add_subcommand(
      "diagnose", "Which steps were slow, and which rank and phase hold the job back (report failslow.report/1)");
  cmd->add_option("inputs", opts->paths,
                  "Kineto .json/.json.gz, Nsight .sqlite, kernel tables .csv/.tsv, folders of them, or .fsum files")
      ->required();
  cmd->add_option("--topology", opts->topology,
                  "layout, e.g. tp=2,pp=4,dp=8 (default: from the traces' pg_config, else pure data parallel)");
  cmd->add_option("--order", opts->order, "Megatron order of the layout, fastest first (default tp-cp-ep-dp-pp)");
  cmd->add_option("--format", opts->format, "text (default) or json");
  cmd->add_option("-o,--out", opts->out, "write the report to FILE instead of standard output");
  cmd->add_option("--threads", opts->threads, "files read in parallel (default: all cores)");
  cmd->add_option("--width", opts->width, "wrap the text report at this many columns (default 100)");
  cmd->add_option("--svg", opts->svg_dir,
                  "write the figures (rank x step heatmaps, W1 matrices, the iteration series) as SVG files into DIR");
  cmd->add_option("--html", opts->html, "write the report with its figures as one self-contained HTML page");
  cmd->add_option("--perfetto", opts->perfetto,
                  "write the worst window (culprit and peers, clock-aligned, findings marked) as a Chrome/Perfetto "
                  "trace to FILE");
  cmd->add_option("--prometheus", opts->prometheus,
                  "write Prometheus metrics (text format 0.0.4) to FILE, through FILE.tmp and a rename");
  cmd->add_option("--prometheus-steps", opts->prometheus_steps,
                  "per-rank metrics for the last N steps (default 1; 0 = every step)");
  cmd->add_option("--context", opts->context,
                  "write the findings as an analyzer context for a language model (KAT's three-part template)");
  cmd->add_option("--model-type", opts->model_type, "what the job trains, for --context (default: not stated)");
  cmd->callback([opts] { run(*opts); });
}

}  // namespace failslow_cli
