// A trainer's loop under MPI with always-on diagnosis (collect/mpi.hpp): every MPI process
// "trains" its share of a simulated job (the simulator's scale mode: the timing model of a
// tp x pp x dp job with a compute straggler, each rank's kernels through its own window
// compressor, one window per step), hands its ranks' closed windows to the collector, and every
// K steps posts a non-blocking gather; while the job keeps stepping, the root decodes, merges and
// diagnoses, and every process reads the verdict. Exits 1 when the final verdict does not name
// the injected straggler.
//   mpirun -np 8 ./example_mpi_trainer [--tp 2 --pp 2 --dp 8 --steps 24 --every 4 --seed 7]
//                                      [--ranks-per-node N] [--blocking] [--quiet] [--gather-only]
// Process p carries the simulated ranks r with r % processes == p (every process runs the same
// deterministic model and keeps its own ranks' windows, as each GPU's process would).
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <failslow/collect/mpi.hpp>
#include <failslow/io/report_text.hpp>
#include <failslow/sim/summaries.hpp>
#include <string>

namespace {

struct trainer_args {
  int tp = 2, pp = 2, dp = 8, steps = 24, every = 4, ranks_per_node = 0;
  unsigned long long seed = 7;
  bool blocking = false, quiet = false, gather_only = false;
};

trainer_args parse(int argc, char** argv) {
  trainer_args a;
  for (int i = 1; i < argc; ++i) {
    auto value = [&](int& out) {
      if (i + 1 >= argc) throw failslow::invalid_argument(std::string(argv[i]) + " needs a value");
      out = std::atoi(argv[++i]);
    };
    if (!std::strcmp(argv[i], "--tp"))
      value(a.tp);
    else if (!std::strcmp(argv[i], "--pp"))
      value(a.pp);
    else if (!std::strcmp(argv[i], "--dp"))
      value(a.dp);
    else if (!std::strcmp(argv[i], "--steps"))
      value(a.steps);
    else if (!std::strcmp(argv[i], "--every"))
      value(a.every);
    else if (!std::strcmp(argv[i], "--ranks-per-node"))
      value(a.ranks_per_node);
    else if (!std::strcmp(argv[i], "--seed") && i + 1 < argc)
      a.seed = std::strtoull(argv[++i], nullptr, 10);
    else if (!std::strcmp(argv[i], "--blocking"))
      a.blocking = true;
    else if (!std::strcmp(argv[i], "--quiet"))
      a.quiet = true;
    else if (!std::strcmp(argv[i], "--gather-only"))
      a.gather_only = true;
    else
      throw failslow::invalid_argument(std::string("unknown option ") + argv[i]);
  }
  if (a.every < 1 || a.steps < 1) throw failslow::invalid_argument("--every and --steps must be >= 1");
  return a;
}

int run(int argc, char** argv) {
  using namespace failslow;
  using clock = std::chrono::steady_clock;
  const trainer_args a = parse(argc, argv);
  int me = 0, processes = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &processes);

  sim::job_config cfg;
  cfg.sizes = parallel_sizes{};
  cfg.sizes.tp = a.tp;
  cfg.sizes.pp = a.pp;
  cfg.sizes.dp = a.dp;
  cfg.steps = a.steps;
  cfg.seed = a.seed;
  const int world = sim::validate(cfg).world_size();

  collect::mpi_collector_options opt;
  opt.sizes = cfg.sizes;
  opt.ranks_per_node = a.ranks_per_node;
  opt.diagnose = !a.gather_only;                          // --gather-only: the transport alone (bench/README.md)
  collect::mpi_collector collector(MPI_COMM_WORLD, opt);  // collective: every process
  auto name_of = [](name_id k) { return sim::kernel_key_name(k); };

  collect::gather_result last;
  clock::time_point posted, completed;
  bool pending = false, complete = false;  // a round posted and not collected; it completed
  auto report_round = [&](collect::gather_result&& r) {
    if (!complete) completed = clock::now();
    const double latency_s = std::chrono::duration<double>(completed - posted).count();
    if (collector.is_root() && !a.quiet) {
      std::uint64_t bytes = 0, windows = 0;
      for (const auto& rc : r.receipts) {
        bytes += rc.bytes;
        windows += rc.windows;
      }
      std::printf(
          "round %llu: %llu windows, %llu bytes (%.0f per rank and window), gathered and diagnosed in %.1f ms "
          "(decode + merge %.1f ms, model %.1f ms, diagnosis %.1f ms); verdict names %zu rank(s)\n",
          static_cast<unsigned long long>(r.round), static_cast<unsigned long long>(windows),
          static_cast<unsigned long long>(bytes),
          windows ? static_cast<double>(bytes) / static_cast<double>(windows) : 0.0, latency_s * 1e3, r.decode_s * 1e3,
          r.model_s * 1e3, r.diagnose_s * 1e3, r.flagged_ranks.size());
      if (!r.error.empty()) std::printf("  the root could not diagnose: %s\n", r.error.c_str());
    }
    // Every process acts on the verdict: here, the processes whose ranks are named say so.
    if (std::count(r.flagged_comm_ranks.begin(), r.flagged_comm_ranks.end(), me) && !a.quiet)
      std::printf("  process %d: a rank I run is named in round %llu\n", me, static_cast<unsigned long long>(r.round));
    last = std::move(r);
  };

  // The training loop: the simulator steps the job and hands each closed window over, ranks
  // ascending, step by step; after the last rank of every K-th step the gather is posted.
  int steps_done = 0;
  const auto job = sim::simulate_summaries(
      cfg, sim::scenario::compute_straggler, sim::scenario_options{}, [&](compress::window_summary&& w) {
        if (pending && !complete && collector.poll()) {  // progress while "training"
          complete = true;
          completed = clock::now();
        }
        if (w.rank % processes == me) collector.add(w, name_of);
        if (w.rank != world - 1) return;
        if (++steps_done % a.every != 0 && steps_done != a.steps) return;
        if (pending) report_round(collector.wait());
        posted = clock::now();
        complete = false;
        pending = !a.blocking;
        if (a.blocking) {
          report_round(collector.gather());
        } else {
          collector.post();
        }
      });
  if (pending) report_round(collector.wait());

  const int truth_rank = job.truth.faults.at(0).ranks.at(0);
  const bool named = std::count(last.flagged_ranks.begin(), last.flagged_ranks.end(), truth_rank) > 0;
  if (collector.is_root()) {
    if (last.report && !a.quiet) std::printf("\n%s\n", io::report_to_text(*last.report).c_str());
    std::printf("truth: %s\n", job.truth.faults.at(0).description.c_str());
    std::printf("%s the injected straggler rank %d (%d ranks on %d processes, %d node(s))\n",
                named ? "the verdict names" : "the verdict MISSES", truth_rank, world, processes,
                collector.node_count());
  }
  return named || a.gather_only ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = 0;
  try {
    rc = run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mpi_trainer: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return rc;
}
