// Diagnosis: (1) from traces, load_job + diagnose on a simulated job (tp 2 x pp 2 x dp 4, 20
// steps, a compute straggler) written as Kineto JSON into a temporary folder, against the Python
// a user would write instead (peers/diagnose_peer.py: json.load, steps through the launch
// correlation ids, per-rank compute vs NCCL time, robust z within the data-parallel group) on
// the same files; (2) the statistics alone on a prepared model of 4096 ranks x 200 steps x 6
// phases (data parallel): find_stragglers against the same computation in numpy/scipy
// (peers/stragglers_numpy.py) on the same array, find_slow_windows and the whole diagnose().
// Both peers must find the stragglers failslow finds (they exit with an error otherwise).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <failslow/diagnose/diagnose.hpp>
#include <failslow/diagnose/l1_windows.hpp>
#include <failslow/diagnose/l2_stragglers.hpp>
#include <failslow/diagnose/load_job.hpp>
#include <failslow/sim/kineto_writer.hpp>
#include <failslow/sim/simulator.hpp>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "peer.hpp"

namespace {

namespace fs = std::filesystem;
namespace dg = failslow::diagnose;
using clock_type = std::chrono::steady_clock;

template <class F>
double timed(F&& f) {
  const auto t0 = clock_type::now();
  f();
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

std::string join(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

// A folder of this process under the system's temporary directory, removed at exit unless
// FAILSLOW_BENCH_KEEP is set (to run a peer by hand on the same files, e.g. when it disagrees).
struct scratch_dir {
  fs::path path = fs::temp_directory_path() / ("failslow_bench_diagnose_" + std::to_string(::getpid()));
  scratch_dir() { fs::create_directories(path); }
  ~scratch_dir() {
    if (std::getenv("FAILSLOW_BENCH_KEEP")) {
      std::fprintf(stderr, "bench_diagnose: inputs kept in %s\n", path.string().c_str());
      return;
    }
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
};

const fs::path& scratch() {
  static const scratch_dir dir;
  return dir.path;
}

void write_file(const fs::path& path, const void* data, std::size_t size) {
  std::ofstream f(path, std::ios::binary);
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!f) throw std::runtime_error("cannot write " + path.string());
}

// ---- (1) From traces ----------------------------------------------------------------------

struct trace_job {
  std::string dir;  // rank_<r>.json, nothing else
  int world = 0, steps = 0;
  std::uint64_t bytes = 0;
  std::vector<int> faulty;  // the simulator's truth
};

const trace_job& simulated_traces() {
  static const trace_job job = [] {
    failslow::sim::job_config cfg;
    cfg.sizes.tp = 2;
    cfg.sizes.pp = 2;
    cfg.sizes.dp = 4;
    cfg.steps = 20;
    const auto sim = failslow::sim::simulate(cfg, failslow::sim::scenario::compute_straggler);
    trace_job out;
    const fs::path dir = scratch() / "traces";
    fs::create_directories(dir);
    out.dir = dir.string();
    out.world = sim.topo.world_size();
    out.steps = cfg.steps;
    out.faulty = sim.truth.faulty_ranks();
    std::string text;
    for (int r = 0; r < out.world; ++r) {
      text.clear();
      failslow::sim::write_kineto_trace(sim, r, text);
      write_file(dir / ("rank_" + std::to_string(r) + ".json"), text.data(), text.size());
      out.bytes += text.size();
    }
    return out;
  }();
  return job;
}

void BM_diagnose_traces(benchmark::State& state) {
  const auto& job = simulated_traces();
  dg::load_options lo;
  lo.threads = static_cast<unsigned>(state.range(0));
  std::vector<int> found;
  double seconds = 0;
  for (auto _ : state) {
    failslow::report rep;
    seconds += timed([&] {
      const auto loaded = dg::load_job({job.dir}, lo);
      dg::diagnose_options o;
      o.topology_source = loaded.topology_source;
      rep = dg::diagnose(loaded.model, loaded.topo, o);
    });
    found.clear();
    for (const auto& f : rep.findings)
      if (f.kind == "straggler") found.insert(found.end(), f.ranks.begin(), f.ranks.end());
    std::sort(found.begin(), found.end());
  }
  const auto rank_steps = static_cast<std::int64_t>(job.world) * job.steps;
  state.SetItemsProcessed(state.iterations() * rank_steps);
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(job.bytes));
  state.counters["stragglers"] = static_cast<double>(found.size());
  if (found != job.faulty) {
    state.SkipWithError(
        ("failslow found stragglers [" + join(found) + "], the truth is [" + join(job.faulty) + "]").c_str());
    return;
  }
  failslow_bench::report_peer(state, "diagnose_peer.py", job.dir + " " + join(found),
                              seconds / static_cast<double>(state.iterations() * rank_steps));
}
BENCHMARK(BM_diagnose_traces)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// ---- (2) The statistics on a prepared model -----------------------------------------------

struct model_job {
  dg::job_model model;
  failslow::topology topo;
  std::vector<int> planted;
  std::string peer_args;  // FILE RANKS PHASES STEPS ROLES (the expected ranks follow)
};

// 4096 ranks x 200 steps, phases compute, communication, memory, idle, forward, backward (the
// last two annotated), lognormal noise (1 %, idle 10 %) and a static speed per rank (0.5 %).
// Ranks `planted` are 25 % slower in compute from step 120 on; the others wait for them in
// their collectives, so every rank's iteration time grows.
const model_job& synthetic_model() {
  static const model_job job = [] {
    constexpr std::size_t R = 4096, S = 200, P = 6, onset = 120;
    model_job out;
    out.planted = {17, 1234, 2900, 4000};
    auto& m = out.model;
    m.world_size = static_cast<int>(R);
    for (std::size_t s = 0; s < S; ++s) m.steps.push_back(static_cast<std::int64_t>(1000 + s));
    using failslow::kernel_class;
    using dg::phase_role;
    m.phases = {{"compute", phase_role::work, kernel_class::compute, false},
                {"communication", phase_role::wait, kernel_class::communication, false},
                {"memory", phase_role::work, kernel_class::memory, false},
                {"idle", phase_role::idle, kernel_class::compute, false},
                {"forward", phase_role::work, kernel_class::compute, true},
                {"backward", phase_role::work, kernel_class::compute, true}};
    const char* roles = "wcwiaa";
    const double base[P] = {40e6, 20e6, 5e6, 2e6, 13e6, 27e6};
    const double sigma[P] = {0.01, 0.01, 0.01, 0.1, 0.01, 0.01};
    m.iteration_ns = failslow::dense_array<double, 2>({R, S});
    m.phase_ns = failslow::dense_array<double, 3>({R, P, S});
    m.has_rank.assign(R, true);
    m.source = "synthetic";
    std::mt19937_64 rng(11);
    std::normal_distribution<double> g;
    std::vector<bool> slow(R, false);
    for (int r : out.planted) slow[static_cast<std::size_t>(r)] = true;
    constexpr double factor = 1.25, excess = (factor - 1) * 40e6;
    for (std::size_t r = 0; r < R; ++r) {
      const double speed = std::exp(0.005 * g(rng));
      for (std::size_t s = 0; s < S; ++s) {
        const bool late = s >= onset;
        double total = 0;
        for (std::size_t p = 0; p < P; ++p) {
          double x = base[p] * std::exp(sigma[p] * g(rng));
          if (p != 1 && p != 3) x *= speed;
          if (late && slow[r] && (p == 0 || p >= 4)) x *= factor;
          if (late && p == 1) x = slow[r] ? 0.4 * x : x + excess;  // the others wait for them
          m.phase_ns(r, p, s) = x;
          if (p < 4) total += x;
        }
        m.iteration_ns(r, s) = total;
      }
    }
    failslow::parallel_sizes dp;
    dp.dp = static_cast<int>(R);
    out.topo = failslow::topology(dp);
    // The same array for the peer: iteration_ns, then phase_ns, row-major float64.
    const fs::path file = scratch() / "model.f64";
    {
      std::ofstream f(file, std::ios::binary);
      f.write(reinterpret_cast<const char*>(m.iteration_ns.data()),
              static_cast<std::streamsize>(m.iteration_ns.size() * sizeof(double)));
      f.write(reinterpret_cast<const char*>(m.phase_ns.data()),
              static_cast<std::streamsize>(m.phase_ns.size() * sizeof(double)));
      if (!f) throw std::runtime_error("cannot write " + file.string());
    }
    out.peer_args =
        file.string() + " " + std::to_string(R) + " " + std::to_string(P) + " " + std::to_string(S) + " " + roles;
    return out;
  }();
  return job;
}

std::int64_t rank_steps(const dg::job_model& m) { return static_cast<std::int64_t>(m.rank_count() * m.step_count()); }

void BM_find_stragglers(benchmark::State& state) {
  const auto& job = synthetic_model();
  std::vector<int> found;
  double seconds = 0;
  for (auto _ : state) {
    dg::l2_result res;
    seconds += timed([&] { res = dg::find_stragglers(job.model, job.topo, nullptr); });
    found.clear();
    for (const auto& st : res.stragglers) found.push_back(st.rank);
    std::sort(found.begin(), found.end());
  }
  const auto n = rank_steps(job.model);
  state.SetItemsProcessed(state.iterations() * n);
  state.counters["stragglers"] = static_cast<double>(found.size());
  if (found != job.planted) {
    state.SkipWithError(("found stragglers [" + join(found) + "], planted [" + join(job.planted) + "]").c_str());
    return;
  }
  failslow_bench::report_peer(state, "stragglers_numpy.py", job.peer_args + " " + join(found),
                              seconds / static_cast<double>(state.iterations() * n));
}
BENCHMARK(BM_find_stragglers)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_find_slow_windows(benchmark::State& state) {
  const auto& job = synthetic_model();
  dg::l1_options o;
  o.per_rank = state.range(0) != 0;
  std::size_t windows = 0;
  for (auto _ : state) {
    const auto res = dg::find_slow_windows(job.model, o);
    windows = res.job.windows.size() + res.rank_windows.size();
    benchmark::DoNotOptimize(res.job_series.data());
  }
  state.SetItemsProcessed(state.iterations() * rank_steps(job.model));
  state.counters["windows"] = static_cast<double>(windows);
  state.SetLabel(o.per_rank ? "job series + every rank's series" : "job series only");
}
BENCHMARK(BM_find_slow_windows)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_diagnose_model(benchmark::State& state) {
  const auto& job = synthetic_model();
  std::size_t findings = 0;
  for (auto _ : state) {
    const auto rep = dg::diagnose(job.model, job.topo);
    findings = rep.findings.size();
    benchmark::DoNotOptimize(rep.findings.data());
  }
  state.SetItemsProcessed(state.iterations() * rank_steps(job.model));
  state.counters["findings"] = static_cast<double>(findings);
  state.SetLabel("L1 (job + every rank) + L2 + findings");
}
BENCHMARK(BM_diagnose_model)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
