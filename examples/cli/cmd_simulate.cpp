// failslow simulate --scenario NAME --tp --pp --dp [--cp --ep] --steps --seed --onset
//   --severity --noise --out DIR [--gzip]: a hybrid-parallel training job with an injected
// fail-slow fault, written as one Kineto trace per rank (rank_<r>.json or .json.gz) and its
// ground truth (truth.json, schema failslow.truth/1). Same arguments, same bytes.
// --summaries FILE.fsum (scale mode, sim/summaries.hpp): no traces; the same model's per-rank
// window summaries, one per rank and step, in the .fsum codec (compress/codec.hpp), and
// truth.json in --out or next to FILE; memory does not grow with steps (16,384 ranks work).
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <failslow/compress/codec.hpp>
#include <failslow/core/parallel_for.hpp>
#include <failslow/io/output_file.hpp>
#include <failslow/sim/kineto_writer.hpp>
#include <failslow/sim/simulator.hpp>
#include <failslow/sim/summaries.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "sim_json.hpp"

namespace failslow_cli {
namespace {

struct simulate_options {
  std::string scenario = "compute-straggler";
  failslow::sim::job_config cfg;
  std::string schedule = "1f1b";
  failslow::sim::scenario_options sopt;
  std::string out;
  std::string summaries;
  bool gzip = false;
  bool list = false;
  bool calibrated = false;  // the default; kept so scripts that pass it keep working
  bool gpu_bound = false;
  unsigned threads = 0;
};

// Every file through a temporary name and a rename (io/output_file.hpp): a failed run leaves no
// half-written trace behind.
void write_plain(const std::string& path, const std::string& text) { failslow::io::write_file_atomically(path, text); }

void write_gzip(const std::string& path, const std::string& text) {
  failslow::io::output_file out(path);
  out.close_stream();  // zlib writes the temporary itself
  gzFile f = gzopen(out.temp_path().c_str(), "wb6");
  if (!f) throw failslow::invalid_argument("cannot write '" + path + "'");
  std::size_t done = 0;
  bool ok = true;
  while (ok && done < text.size()) {
    const unsigned n = static_cast<unsigned>(std::min<std::size_t>(text.size() - done, 1u << 24));
    ok = gzwrite(f, text.data() + done, n) == static_cast<int>(n);
    done += n;
  }
  ok = gzclose(f) == Z_OK && ok;
  if (!ok) throw failslow::invalid_argument("cannot write '" + path + "' (gzip)");
  out.commit();
}

void print_job(const failslow::sim::truth& t, int steps) {
  std::cout << "simulated " << t.scenario_name << ": " << t.world_size << " ranks (tp " << t.sizes.tp << ", cp "
            << t.sizes.cp << ", ep " << t.sizes.ep << ", dp " << t.sizes.dp << ", pp " << t.sizes.pp << ", order "
            << t.order << "), " << steps << " steps #" << t.first_step << "..#" << t.last_step << ", " << t.schedule
            << " with " << t.microbatches << " micro-batches, " << t.layers_per_stage << " layers per stage, seed "
            << t.seed << ", severity " << t.severity << ", noise " << t.noise << '\n';
  if (t.faults.empty()) std::cout << "  no fault (healthy)\n";
  for (const auto& f : t.faults) std::cout << "  fault: " << f.description << '\n';
}

// Scale mode: window summaries straight from the model into the .fsum file, step by step.
void run_summaries(const simulate_options& o, failslow::sim::scenario sc) {
  namespace fs = std::filesystem;
  const auto t0 = std::chrono::steady_clock::now();
  const fs::path fsum(o.summaries);
  const fs::path dir = o.out.empty() ? fsum.parent_path() : fs::path(o.out);
  if (fsum.has_parent_path()) fs::create_directories(fsum.parent_path());
  if (!dir.empty()) fs::create_directories(dir);
  failslow::io::output_file file(o.summaries);
  failslow::compress::summary_encoder encoder(
      [](failslow::name_id id) { return std::string(failslow::sim::kernel_key_name(id)); });
  std::string buffer = encoder.header();
  std::uint64_t bytes = 0;
  auto flush = [&] {
    file.write(buffer);
    bytes += buffer.size();
    buffer.clear();
  };
  const auto result = failslow::sim::simulate_summaries(o.cfg, sc, o.sopt, [&](failslow::compress::window_summary&& w) {
    encoder.encode(w, buffer);
    if (buffer.size() >= (std::size_t{1} << 20)) flush();
  });
  flush();
  file.commit();
  const auto t1 = std::chrono::steady_clock::now();
  write_plain((dir / "truth.json").string(), truth_to_json(result.truth).dump(2) + "\n");
  const auto t2 = std::chrono::steady_clock::now();

  print_job(result.truth, o.cfg.steps);
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "wrote %d ranks x %d steps = %llu windows of %llu kernel events (%.2f MB, %.1f bytes per window) to %s "
                "and truth.json to %s in %.2f s (model and compression %.2f s)\n",
                result.truth.world_size, o.cfg.steps, static_cast<unsigned long long>(result.windows),
                static_cast<unsigned long long>(result.kernels), static_cast<double>(bytes) / 1e6,
                result.windows ? static_cast<double>(bytes) / static_cast<double>(result.windows) : 0.0,
                o.summaries.c_str(), dir.empty() ? "." : dir.string().c_str(),
                std::chrono::duration<double>(t2 - t0).count(), std::chrono::duration<double>(t1 - t0).count());
  std::cout << buf;
}

void run(simulate_options o) {
  using namespace failslow::sim;
  if (o.list) {
    for (scenario s : all_scenarios) std::cout << to_string(s) << '\n';
    return;
  }
  o.cfg.schedule = parse_pipeline_schedule(o.schedule);
  if (!o.gpu_bound) calibrate(o.cfg);
  const scenario sc = parse_scenario(o.scenario);
  if (!o.summaries.empty()) {
    if (o.gzip) throw failslow::invalid_argument("simulate: --gzip writes traces; --summaries writes none");
    run_summaries(o, sc);
    return;
  }
  if (o.out.empty()) throw failslow::invalid_argument("simulate: --out DIR (or --summaries FILE) is required");
  const auto t0 = std::chrono::steady_clock::now();
  const simulated_job job = simulate(o.cfg, sc, o.sopt);
  const auto t1 = std::chrono::steady_clock::now();

  std::filesystem::create_directories(o.out);
  const int world = job.topo.world_size();
  std::atomic<std::uint64_t> bytes{0};
  const auto ranks = static_cast<std::size_t>(world);
  std::vector<std::string> texts(failslow::parallel_workers(ranks, o.threads));  // a buffer per worker
  failslow::parallel_for(ranks, o.threads, [&](std::size_t r, std::size_t worker) {
    std::string& text = texts[worker];
    text.clear();
    write_kineto_trace(job, static_cast<int>(r), text);
    const std::string path =
        (std::filesystem::path(o.out) / ("rank_" + std::to_string(r) + (o.gzip ? ".json.gz" : ".json"))).string();
    if (o.gzip)
      write_gzip(path, text);
    else
      write_plain(path, text);
    bytes += std::filesystem::file_size(path);
  });
  const std::string truth_path = (std::filesystem::path(o.out) / "truth.json").string();
  write_plain(truth_path, truth_to_json(job.truth).dump(2) + "\n");
  const auto t2 = std::chrono::steady_clock::now();

  print_job(job.truth, o.cfg.steps);
  char buf[160];
  std::snprintf(buf, sizeof buf, "wrote %d traces (%.1f MB) and truth.json to %s in %.2f s (model %.2f s)\n", world,
                static_cast<double>(bytes.load()) / 1e6, o.out.c_str(), std::chrono::duration<double>(t2 - t0).count(),
                std::chrono::duration<double>(t1 - t0).count());
  std::cout << buf;
}

}  // namespace

void add_simulate_command(CLI::App& app) {
  auto o = std::make_shared<simulate_options>();
  CLI::App* cmd = app.add_subcommand(
      "simulate",
      "Simulate a hybrid-parallel training job with an injected fail-slow fault: Kineto traces (or, with "
      "--summaries, per-rank window summaries) + truth.json");
  cmd->add_option("--scenario", o->scenario, "scenario (default compute-straggler; --list shows all)");
  cmd->add_flag("--list", o->list, "list the scenarios and exit");
  // Bounds: a size or count outside them is a typing slip (exit 2 at once), not a job to
  // simulate for hours; 16,384 ranks (--summaries) is the largest measured.
  const auto size = CLI::Range(1, 65536);
  cmd->add_option("--tp", o->cfg.sizes.tp, "tensor-parallel size (default 2)")->check(size);
  cmd->add_option("--pp", o->cfg.sizes.pp, "pipeline stages (default 4)")->check(size);
  cmd->add_option("--dp", o->cfg.sizes.dp, "data-parallel size (default 8)")->check(size);
  cmd->add_option("--cp", o->cfg.sizes.cp, "context-parallel size (default 1)")->check(size);
  cmd->add_option("--ep", o->cfg.sizes.ep, "expert-parallel size (default 1)")->check(size);
  cmd->add_option("--order", o->cfg.order, "Megatron rank order (default tp-cp-ep-dp-pp)");
  cmd->add_option("--steps", o->cfg.steps, "profiled steps (default 30)")->check(CLI::Range(1, 100000));
  cmd->add_option("--first-step", o->cfg.first_step, "number of the first ProfilerStep (default 100)");
  cmd->add_option("--microbatches", o->cfg.microbatches, "micro-batches per step (default 4)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--layers", o->cfg.layers_per_stage, "transformer layers per pipeline stage (default 2)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--schedule", o->schedule, "pipeline schedule: 1f1b (default) or gpipe");
  cmd->add_option("--seed", o->cfg.seed, "random seed (default 1)");
  cmd->add_option("--onset", o->sopt.onset, "step index (0-based) where faults begin (default steps/3)");
  cmd->add_option("--severity", o->sopt.severity,
                  "scales each fault's excess effect: 1 + (f - 1) * severity, stalls likewise (default 1)");
  cmd->add_option("--noise", o->cfg.noise, "scales every jitter (default 1; 0 = exact base durations)");
  cmd->add_flag("--calibrated", o->calibrated,
                "the default: host and model shape calibrated against real PyTorch traces (docs/simulator.md): the "
                "GPU idles in places, kernels start within a few ms of their launch");
  cmd->add_flag("--gpu-bound", o->gpu_bound,
                "the earlier model instead: a host ~30x faster than the GPU, which is busy for all of every step and "
                "runs tens of ms behind the launches (the unit tests' jobs)")
      ->excludes("--calibrated");
  cmd->add_option("--fault-rank", o->sopt.fault_rank, "rank of single-rank faults (default: drawn from the seed)");
  cmd->add_option("--out", o->out, "output folder (created); with --summaries, where truth.json goes");
  cmd->add_option("--summaries", o->summaries,
                  "scale mode: write per-rank window summaries (one per rank and step) to this .fsum file instead of "
                  "traces; truth.json goes to --out or next to it");
  cmd->add_flag("--gzip", o->gzip, "write rank_<r>.json.gz instead of .json");
  cmd->add_option("--threads", o->threads, "files written in parallel (default: all cores)");
  cmd->callback([o] { run(*o); });
}

}  // namespace failslow_cli
