#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <failslow/io/kineto_reader.hpp>
#include <failslow/sim/kineto_writer.hpp>
#include <failslow/sim/simulator.hpp>
#include <failslow/stats/descriptive.hpp>
#include <failslow/trace/steps.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

using namespace failslow;
using namespace failslow::sim;

namespace {

job_config small_job(int tp = 2, int pp = 2, int dp = 2, int steps = 6, std::uint64_t seed = 1) {
  job_config c;
  c.sizes = parallel_sizes{};
  c.sizes.tp = tp;
  c.sizes.pp = pp;
  c.sizes.dp = dp;
  c.steps = steps;
  c.microbatches = 4;
  c.layers_per_stage = 1;
  c.seed = seed;
  return c;
}

std::vector<const gpu_kernel*> kernels_of(const rank_timeline& t, kernel_role role) {
  std::vector<const gpu_kernel*> out;
  for (const auto& k : t.kernels)
    if (k.role == role) out.push_back(&k);
  return out;
}

scenario_options at(int rank, int onset = 2, double severity = 1.0) {
  scenario_options o;
  o.fault_rank = rank;
  o.onset = onset;
  o.severity = severity;
  return o;
}

// Compares the compute (non-collective) kernels of two runs: same roles in the same order;
// `changed(rank, kernel)` says which may differ, and by what factor (0 = not changed).
template <class Changed>
void compare_compute(const simulated_job& healthy, const simulated_job& faulty, Changed changed) {
  REQUIRE(healthy.ranks.size() == faulty.ranks.size());
  for (std::size_t r = 0; r < healthy.ranks.size(); ++r) {
    std::vector<const gpu_kernel*> a, b;
    for (const auto& k : healthy.ranks[r].kernels)
      if (!k.is_collective()) a.push_back(&k);
    for (const auto& k : faulty.ranks[r].kernels)
      if (!k.is_collective()) b.push_back(&k);
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      REQUIRE(a[i]->role == b[i]->role);
      const double f = changed(static_cast<int>(r), *b[i]);
      const auto dh = static_cast<double>(a[i]->duration_ns());
      const auto df = static_cast<double>(b[i]->duration_ns());
      if (f == 0) {
        REQUIRE(a[i]->duration_ns() == b[i]->duration_ns());
      } else {
        REQUIRE(std::abs(df - dh * f) <= 1.0 + f);
      }
    }
  }
}

}  // namespace

TEST_CASE("the same seed gives byte-identical traces, another seed other ones") {
  for (std::uint64_t seed : {1u, 7u, 12345u}) {
    const auto cfg = small_job(2, 2, 2, 4, seed);
    const auto a = simulate(cfg, scenario::compute_straggler);
    const auto b = simulate(cfg, scenario::compute_straggler);
    auto cfg2 = cfg;
    cfg2.seed = seed + 1;
    const auto c = simulate(cfg2, scenario::compute_straggler);
    for (int r = 0; r < a.topo.world_size(); ++r) {
      const std::string ta = kineto_trace(a, r);
      REQUIRE(ta == kineto_trace(b, r));
      REQUIRE(ta != kineto_trace(c, r));
    }
    REQUIRE(a.truth.faults.at(0).ranks == b.truth.faults.at(0).ranks);
  }
}

TEST_CASE("collectives show the wait inversion: early arrivers wait, the last one does not") {
  for (std::uint64_t seed : {3u, 4u}) {
    const auto job = simulate(small_job(2, 2, 4, 5, seed), scenario::compute_straggler, at(5, 1));
    const auto& topo = job.topo;
    for (kernel_role role : {kernel_role::nccl_reduce_scatter, kernel_role::nccl_allreduce}) {
      const parallel_dim d = role == kernel_role::nccl_allreduce ? parallel_dim::tp : parallel_dim::dp;
      for (int g = 0; g < topo.group_count(d); ++g) {
        const auto members = topo.group_members(d, g);
        std::vector<std::vector<const gpu_kernel*>> ks;
        for (int r : members) ks.push_back(kernels_of(job.ranks[static_cast<std::size_t>(r)], role));
        for (const auto& v : ks) REQUIRE(v.size() == ks[0].size());
        REQUIRE(!ks[0].empty());
        for (std::size_t i = 0; i < ks[0].size(); ++i) {
          std::size_t late = 0, shortest = 0;
          std::int64_t min_end = ks[0][i]->end_ns, max_end = ks[0][i]->end_ns;
          for (std::size_t m = 0; m < ks.size(); ++m) {
            if (ks[m][i]->start_ns > ks[late][i]->start_ns) late = m;
            if (ks[m][i]->duration_ns() < ks[shortest][i]->duration_ns()) shortest = m;
            min_end = std::min(min_end, ks[m][i]->end_ns);
            max_end = std::max(max_end, ks[m][i]->end_ns);
          }
          // All end together (within the sub-microsecond end jitter); the last arriver's
          // kernel is the shortest.
          REQUIRE(max_end - min_end <= 1000);
          REQUIRE(ks[late][i]->duration_ns() <= ks[shortest][i]->duration_ns() + 1000);
          for (std::size_t m = 0; m < ks.size(); ++m)
            REQUIRE(ks[m][i]->duration_ns() >=
                    ks[late][i]->duration_ns() + (ks[late][i]->start_ns - ks[m][i]->start_ns) - 1000);
        }
      }
    }
    // After the onset the straggler (rank 5) arrives last at its DP reduce-scatters: others wait.
    const auto straggler = kernels_of(job.ranks[5], kernel_role::nccl_reduce_scatter);
    const auto peer = kernels_of(job.ranks[static_cast<std::size_t>(topo.group(5, parallel_dim::dp)[0])],
                                 kernel_role::nccl_reduce_scatter);
    // (the first bucket of the last step: the later buckets start together)
    const std::size_t i = straggler.size() - 2;
    REQUIRE(straggler[i]->duration_ns() < peer[i]->duration_ns());
    REQUIRE(peer[i]->duration_ns() > 2 * straggler[i]->duration_ns());
  }
}

TEST_CASE("pipeline bubbles arise from the schedule") {
  for (auto sched : {pipeline_schedule::one_f_one_b, pipeline_schedule::gpipe}) {
    for (int pp : {2, 4}) {
      auto cfg = small_job(1, pp, 1, 3, 9);
      cfg.schedule = sched;
      cfg.noise = 0;
      const auto job = simulate(cfg, scenario::healthy);
      const auto& first = job.ranks.front();
      const auto& last = job.ranks.back();
      // The last stage starts its first forward (pp-1) forward passes after the first stage.
      auto first_compute = [](const rank_timeline& t, std::int64_t step) {
        for (const auto& k : t.kernels)
          if (k.step == step && !k.is_collective()) return k.start_ns;
        return std::int64_t{-1};
      };
      double fwd_ns = 0;  // one micro-batch forward of a middle layer stack (base durations)
      for (kernel_role r :
           {kernel_role::layer_norm_fwd, kernel_role::gemm_qkv_fwd, kernel_role::rope_fwd, kernel_role::flash_fwd,
            kernel_role::gemm_proj_fwd, kernel_role::residual_add, kernel_role::layer_norm_fwd,
            kernel_role::gemm_fc1_fwd, kernel_role::gelu_fwd, kernel_role::gemm_fc2_fwd, kernel_role::residual_add})
        fwd_ns += spec_of(r).base_us * 1000;
      for (std::int64_t step = cfg.first_step; step < cfg.first_step + cfg.steps; ++step) {
        const auto lag = first_compute(last, step) - first_compute(first, step);
        REQUIRE(static_cast<double>(lag) >= (pp - 1) * fwd_ns);
      }
      // The first stage's receive of the first gradient waits through the bubble.
      std::int64_t longest_p2p = 0;
      for (const auto& k : first.kernels)
        if (k.role == kernel_role::nccl_send_recv) longest_p2p = std::max(longest_p2p, k.duration_ns());
      REQUIRE(static_cast<double>(longest_p2p) > fwd_ns);
    }
  }
}

TEST_CASE("a compute straggler changes exactly its compute kernels, by its factor") {
  for (double severity : {0.5, 1.0, 2.0}) {
    const auto cfg = small_job(2, 2, 2, 6, 21);
    const int rank = 3;
    const auto healthy = simulate(cfg, scenario::healthy);
    const auto faulty = simulate(cfg, scenario::compute_straggler, at(rank, 2, severity));
    const auto& f = faulty.truth.faults.at(0);
    REQUIRE(f.factor == Approx(1 + 0.5 * severity));
    REQUIRE(f.first_step == cfg.first_step + 2);
    compare_compute(healthy, faulty,
                    [&](int r, const gpu_kernel& k) { return r == rank && k.step >= f.first_step ? f.factor : 0.0; });
    // The truth lists exactly the kernels that changed.
    std::set<std::string> names;
    for (const auto& k : faulty.ranks[rank].kernels)
      if (!k.is_collective()) names.insert(std::string(spec_of(k.role).name));
    REQUIRE(std::set<std::string>(f.kernels.begin(), f.kernels.end()) == names);
    // Launches are unchanged; the others wait longer in collectives.
    REQUIRE(healthy.ranks[0].host.size() == faulty.ranks[0].host.size());
  }
}

TEST_CASE("memory-bound, thermal-drift and slow-stage faults scale the intended kernels only") {
  const auto cfg = small_job(2, 2, 2, 6, 5);
  const auto healthy = simulate(cfg, scenario::healthy);
  {
    const auto job = simulate(cfg, scenario::memory_bound, at(6));
    const auto& f = job.truth.faults.at(0);
    compare_compute(healthy, job, [&](int r, const gpu_kernel& k) {
      return r == 6 && k.step >= f.first_step && spec_of(k.role).memory_bound ? f.factor : 0.0;
    });
    for (const auto& name : f.kernels) {
      bool memory_bound = false;
      for (const auto& s : kernel_catalogue()) memory_bound = memory_bound || (s.name == name && s.memory_bound);
      REQUIRE(memory_bound);
    }
  }
  {
    const auto job = simulate(cfg, scenario::thermal_drift, at(1));
    const auto& f = job.truth.faults.at(0);
    compare_compute(healthy, job, [&](int r, const gpu_kernel& k) {
      if (r != 1 || k.step < f.first_step) return 0.0;
      return 1.0 + (f.factor - 1.0) * static_cast<double>(k.step - f.first_step + 1) /
                       static_cast<double>(f.last_step - f.first_step + 1);
    });
  }
  {
    const auto job = simulate(cfg, scenario::slow_stage, at(5));
    const auto& f = job.truth.faults.at(0);
    REQUIRE(f.group == "stage:1");
    REQUIRE(f.ranks == job.topo.stage(1));
    compare_compute(healthy, job, [&](int r, const gpu_kernel& k) {
      return job.topo.coordinate(r, parallel_dim::pp) == 1 && k.step >= f.first_step ? f.factor : 0.0;
    });
  }
}

TEST_CASE("link faults slow only their group's collectives") {
  const auto cfg = small_job(2, 2, 4, 6, 8);
  const auto healthy = simulate(cfg, scenario::healthy);
  for (auto s : {scenario::dp_link, scenario::tp_link}) {
    const auto job = simulate(cfg, s, at(0));
    const auto& f = job.truth.faults.at(0);
    REQUIRE(!f.group.empty());
    REQUIRE(f.kernels.size() >= 1);
    compare_compute(healthy, job, [](int, const gpu_kernel&) { return 0.0; });
    const kernel_role role = s == scenario::dp_link ? kernel_role::nccl_reduce_scatter : kernel_role::nccl_allreduce;
    // The group's collectives after the onset take longer than the same ones of a healthy group.
    const int inside = f.ranks.front();
    int outside = -1;
    for (int r = 0; r < job.topo.world_size() && outside < 0; ++r)
      if (!std::binary_search(f.ranks.begin(), f.ranks.end(), r) &&
          job.topo.coordinate(r, parallel_dim::pp) == job.topo.coordinate(inside, parallel_dim::pp))
        outside = r;
    REQUIRE(outside >= 0);
    auto min_late = [&](int r) {
      std::int64_t m = INT64_MAX;
      for (const auto* k : kernels_of(job.ranks[static_cast<std::size_t>(r)], role))
        if (k->step >= f.first_step) m = std::min(m, k->duration_ns());
      return m;
    };
    REQUIRE(static_cast<double>(min_late(inside)) > 1.5 * static_cast<double>(min_late(outside)));
  }
}

TEST_CASE("host faults: launch delay idles the GPU, stalls add CPU ops and new kernels") {
  const auto cfg = small_job(2, 2, 2, 6, 11);
  const auto healthy = simulate(cfg, scenario::healthy);
  {
    const auto job = simulate(cfg, scenario::host_launch_delay, at(2));
    compare_compute(healthy, job, [](int, const gpu_kernel&) { return 0.0; });
    // Kernel durations unchanged, but the faulty rank's launches take longer and its GPU
    // starts kernels later relative to the previous one.
    auto gaps = [](const rank_timeline& t, std::int64_t from) {
      std::int64_t idle = 0, prev = -1;
      for (const auto& k : t.kernels) {
        if (k.step >= from && prev >= 0 && k.start_ns > prev && !k.is_collective()) idle += k.start_ns - prev;
        prev = k.end_ns;
      }
      return idle;
    };
    const auto from = job.truth.faults[0].first_step;
    REQUIRE(gaps(job.ranks[2], from) > 5 * gaps(healthy.ranks[2], from) + 1000000);
  }
  {
    const auto job = simulate(cfg, scenario::jit_stall, at(1, 3));
    const auto& f = job.truth.faults.at(0);
    REQUIRE(f.first_step == f.last_step);
    REQUIRE(f.kernels.size() == 3);
    std::size_t triton = 0, stalls = 0;
    for (const auto& k : job.ranks[1].kernels)
      if (spec_of(k.role).name.substr(0, 7) == "triton_") {
        ++triton;
        REQUIRE(k.step == f.first_step);
      }
    for (const auto& h : job.ranks[1].host)
      if (h.name == host_name::compiled_function) {
        ++stalls;
        REQUIRE(h.end_ns - h.start_ns == static_cast<std::int64_t>(f.stall_ms * 1e6));
      }
    REQUIRE(triton == 3);
    REQUIRE(stalls == 1);
    for (std::size_t r = 0; r < job.ranks.size(); ++r)
      if (r != 1)
        for (const auto& k : job.ranks[r].kernels) REQUIRE(spec_of(k.role).name.substr(0, 7) != "triton_");
  }
  {
    scenario_options o;
    o.onset = 0;
    const auto job = simulate(small_job(2, 2, 2, 12, 4), scenario::gc_pauses, o);
    REQUIRE(job.truth.faults.size() == 3);  // steps 0, 4, 8
    for (std::size_t i = 0; i < job.truth.faults.size(); ++i) {
      const auto& f = job.truth.faults[i];
      REQUIRE(f.transient);
      REQUIRE(f.first_step == f.last_step);
      if (i) REQUIRE(f.ranks != job.truth.faults[i - 1].ranks);
    }
  }
}

// calibrated_job() against the real PyTorch traces it is calibrated on (docs/simulator.md):
// the GPU is not busy for the whole of every step, kernels start soon after their launch,
// the host spends tens of microseconds between launches, and each kind's median duration
// is of the real traces' order. Simulated times are deterministic: no timing threshold.
TEST_CASE("the calibrated job: busy fraction, launch delays, host pace and kernel durations of real traces") {
  job_config cfg = calibrated_job();
  cfg.steps = 8;
  const auto job = simulate(cfg, scenario::healthy);
  std::vector<double> busy, delay_us, pace_us, gemm_us, memory_us;
  for (const auto& t : job.ranks) {
    std::map<std::uint32_t, const host_call*> launch;
    const host_call* previous = nullptr;
    for (const auto& h : t.host)
      if (h.name == host_name::launch_kernel) {
        launch[h.correlation] = &h;
        if (previous) pace_us.push_back(static_cast<double>(h.start_ns - previous->start_ns) / 1e3);
        previous = &h;
      }
    for (const auto& k : t.kernels) {
      delay_us.push_back(static_cast<double>(k.start_ns - launch.at(k.correlation)->end_ns) / 1e3);
      const auto& spec = spec_of(k.role);
      const double us = static_cast<double>(k.duration_ns()) / 1e3;
      if (spec.is_collective()) continue;
      if (spec.name.find("gemm") != std::string_view::npos) gemm_us.push_back(us);
      if (spec.memory_bound) memory_us.push_back(us);
    }
    // Busy fraction of each step: the union of the rank's GPU activity inside its
    // ProfilerStep over the step's length (kernels of one rank never overlap here).
    for (const auto& a : t.annotations) {
      if (a.what != phase::profiler_step) continue;
      std::int64_t covered = 0;
      for (const auto& k : t.kernels)
        covered += std::max<std::int64_t>(0, std::min(k.end_ns, a.end_ns) - std::max(k.start_ns, a.start_ns));
      busy.push_back(static_cast<double>(covered) / static_cast<double>(a.end_ns - a.start_ns));
    }
  }
  INFO("busy p5 " << stats::quantile(busy, 0.05) << " median " << stats::quantile(busy, 0.5) << "; launch delay us "
                  << stats::quantile(delay_us, 0.5) << " / p99 " << stats::quantile(delay_us, 0.99) << "; pace us "
                  << stats::quantile(pace_us, 0.5) << "; GEMM us " << stats::quantile(gemm_us, 0.5)
                  << "; memory-bound us " << stats::quantile(memory_us, 0.5));
  // Real traces: busy 0.52-0.74 of a step (df_index_resolver), 0.77-0.88 (trace_diff_control).
  CHECK(stats::quantile(busy, 0.5) >= 0.5);
  CHECK(stats::quantile(busy, 0.5) <= 0.95);
  CHECK(stats::quantile(busy, 0.05) <= 0.9);
  // Launch delay (kernel start - launch end): median 3 us / p99 4.1 ms (df_index_resolver),
  // 0.6 ms / 10.9 ms (trace_diff_control); before the calibration 48 ms / 104 ms.
  CHECK(stats::quantile(delay_us, 0.5) >= 0);
  CHECK(stats::quantile(delay_us, 0.5) <= 5000);
  CHECK(stats::quantile(delay_us, 0.99) >= 300);
  CHECK(stats::quantile(delay_us, 0.99) <= 20000);
  // Launch start to launch start on the host: medians 18-94 us in the real traces.
  CHECK(stats::quantile(pace_us, 0.5) >= 18);
  CHECK(stats::quantile(pace_us, 0.5) <= 100);
  // Kernel durations per kind: real GEMM medians 17-268 us, memory-bound 2.5-6 us.
  CHECK(stats::quantile(gemm_us, 0.5) >= 15);
  CHECK(stats::quantile(gemm_us, 0.5) <= 300);
  CHECK(stats::quantile(memory_us, 0.5) >= 2);
  CHECK(stats::quantile(memory_us, 0.5) <= 25);
}

TEST_CASE("launch queue: a launch returns only while fewer than 1024 of its rank's launches are pending") {
  // 8 layers x 8 micro-batches: about 2,000 launches per step, more than the queue holds.
  auto cfg = small_job(1, 2, 1, 2, 13);
  cfg.layers_per_stage = 8;
  cfg.microbatches = 8;
  const auto job = simulate(cfg, scenario::healthy);
  constexpr std::size_t depth = host_model::launch_queue_depth;
  std::size_t blocked = 0;
  for (const auto& t : job.ranks) {
    std::map<std::uint32_t, const host_call*> launch_of;
    for (const auto& h : t.host)
      if (h.name == host_name::launch_kernel) launch_of[h.correlation] = &h;
    std::map<std::int64_t, std::vector<const gpu_kernel*>> by_step;  // launch order
    for (const auto& k : t.kernels) by_step[k.step].push_back(&k);
    for (const auto& [step, ks] : by_step) {
      REQUIRE(ks.size() > depth);
      for (std::size_t i = depth; i < ks.size(); ++i) {
        const host_call& h = *launch_of.at(ks[i]->correlation);
        REQUIRE(h.end_ns >= ks[i - depth]->start_ns);
        if (h.end_ns - h.start_ns > 100000) ++blocked;  // a launch alone takes ~4.5 us
      }
    }
  }
  REQUIRE(blocked > 0);
}

TEST_CASE("severity 0 keeps the fault in the truth with no effect") {
  const auto cfg = small_job(2, 2, 2, 4, 2);
  const auto healthy = simulate(cfg, scenario::healthy);
  const auto zero = simulate(cfg, scenario::compute_straggler, at(1, 1, 0.0));
  REQUIRE(zero.truth.faults.size() == 1);
  for (int r = 0; r < healthy.topo.world_size(); ++r) REQUIRE(kineto_trace(healthy, r) == kineto_trace(zero, r));
}

TEST_CASE("clock offsets: shared per node, present between nodes, applied by the writer") {
  auto cfg = small_job(2, 4, 4, 2, 17);
  cfg.gpus_per_node = 8;
  const auto job = simulate(cfg, scenario::healthy);
  const auto& off = job.truth.clock_offsets_ns;
  REQUIRE(off.size() == 32);
  std::set<std::int64_t> distinct;
  for (int r = 0; r < 32; ++r) {
    REQUIRE(off[static_cast<std::size_t>(r)] == off[static_cast<std::size_t>(r / 8 * 8)]);
    REQUIRE(std::abs(static_cast<double>(off[static_cast<std::size_t>(r)])) <= cfg.max_clock_offset_us * 1000);
    distinct.insert(off[static_cast<std::size_t>(r)]);
  }
  REQUIRE(distinct.size() == 4);
  // The writer shifts each rank's times by its offset.
  const kineto_write_options wo;
  for (int r : {0, 9, 31}) {
    const auto j = nlohmann::json::parse(kineto_trace(job, r, wo));
    const auto& k0 = job.ranks[static_cast<std::size_t>(r)].kernels.front();
    bool found = false;
    for (const auto& e : j["traceEvents"]) {
      if (e.value("cat", "") != "kernel" || e["args"]["correlation"].get<std::uint32_t>() != k0.correlation) continue;
      const double ts = e["ts"].get<double>();
      const double expect = static_cast<double>(wo.epoch_ns + off[static_cast<std::size_t>(r)] + k0.start_ns) / 1000.0;
      REQUIRE(ts == Approx(expect).margin(0.002));
      found = true;
    }
    REQUIRE(found);
    REQUIRE(j["distributedInfo"]["rank"] == r);
    REQUIRE(j["distributedInfo"]["world_size"] == 32);
    REQUIRE(j["baseTimeNanoseconds"] == wo.base_time_ns);
  }
}

TEST_CASE("the trace is valid Kineto JSON with NCCL args and process groups") {
  const auto job = simulate(small_job(2, 2, 2, 3, 6), scenario::healthy);
  const auto j = nlohmann::json::parse(kineto_trace(job, 3));
  std::map<std::string, std::size_t> cats;
  std::set<std::string> pg_names;
  for (const auto& pg : j["distributedInfo"]["pg_config"]) pg_names.insert(pg["pg_name"].get<std::string>());
  REQUIRE(pg_names.size() == 4);  // default, tp, dp, pp
  std::size_t steps = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ++cats[e["cat"].get<std::string>()];
    if (e["cat"] == "user_annotation" && e["name"].get<std::string>().rfind("ProfilerStep#", 0) == 0) ++steps;
    if (e["cat"] == "kernel" && e["args"].contains("Collective name")) {
      const auto& a = e["args"];
      REQUIRE(pg_names.count(a["Process Group Name"].get<std::string>()) == 1);
      REQUIRE(a["Group size"].get<int>() == 2);
      REQUIRE(a["Process Group Ranks"].get<std::string>().front() == '[');
    }
  }
  REQUIRE(steps == 3);
  REQUIRE(cats["kernel"] == job.ranks[3].kernels.size());
  REQUIRE(cats["cuda_runtime"] == job.ranks[3].host.size());
  REQUIRE(cats["gpu_user_annotation"] > 0);
}

#if defined(FAILSLOW_HAS_SIMDJSON)
TEST_CASE("round trip through the Kineto reader") {
  for (auto s : {scenario::healthy, scenario::jit_stall, scenario::two_faults}) {
    auto cfg = small_job(2, 2, 2, 5, 31);
    const auto job = simulate(cfg, s, at(2, 1));
    for (int r = 0; r < job.topo.world_size(); ++r) {
      name_table names;
      const std::string text = kineto_trace(job, r);
      const auto d = io::read_kineto_buffer(text, names);
      const auto& t = job.ranks[static_cast<std::size_t>(r)];
      REQUIRE(d.stats.accounted());
      REQUIRE(d.stats.malformed() == 0);
      REQUIRE(d.stated_rank() == r);
      REQUIRE(d.distributed->world_size == job.topo.world_size());
      std::size_t kernels = 0, collectives = 0, runtime = 0, cpu = 0;
      for (const auto& e : d.events) {
        kernels += e.kind == event_kind::kernel;
        collectives += e.kind == event_kind::collective;
        runtime += e.kind == event_kind::runtime;
        cpu += e.kind == event_kind::cpu_op;
      }
      std::size_t sim_coll = 0, sim_cpu = 0, sim_rt = 0;
      for (const auto& k : t.kernels) sim_coll += k.is_collective();
      for (const auto& h : t.host) (is_runtime_call(h.name) ? sim_rt : sim_cpu) += 1;
      REQUIRE(collectives == sim_coll);
      REQUIRE(kernels == t.kernels.size() - sim_coll);
      REQUIRE(runtime == sim_rt);
      REQUIRE(cpu == sim_cpu);
      REQUIRE(d.collectives.size() == sim_coll);
      // Times: base + epoch + offset + true time.
      const kineto_write_options wo;
      std::int64_t first_kernel = INT64_MAX;
      for (const auto& e : d.events)
        if (e.kind == event_kind::kernel || e.kind == event_kind::collective)
          first_kernel = std::min(first_kernel, e.start_ns);
      REQUIRE(first_kernel == wo.base_time_ns + wo.epoch_ns + t.clock_offset_ns + t.kernels.front().start_ns);
      const auto steps = trace::map_steps(d, names);
      REQUIRE(steps.steps.size() == static_cast<std::size_t>(cfg.steps));
      REQUIRE(steps.unattributed == 0);
    }
  }
}
#endif

TEST_CASE("layouts: single rank, cp and ep groups, custom order, bad input throws") {
  {
    auto cfg = small_job(1, 1, 1, 2, 1);
    const auto job = simulate(cfg, scenario::compute_straggler);
    REQUIRE(job.ranks.size() == 1);
    for (const auto& k : job.ranks[0].kernels) REQUIRE(!k.is_collective());
  }
  {
    auto cfg = small_job(2, 2, 2, 2, 1);
    cfg.sizes.cp = 2;
    cfg.sizes.ep = 2;
    const auto job = simulate(cfg, scenario::two_faults);
    REQUIRE(job.ranks.size() == 32);
    std::set<parallel_dim> dims;
    for (const auto& k : job.ranks[5].kernels)
      if (k.is_collective()) dims.insert(k.comm_dim);
    REQUIRE(dims.size() == 5);
    REQUIRE(job.truth.faults.size() == 2);
  }
  {
    auto cfg = small_job(2, 2, 2, 2, 1);
    cfg.order = "tp-pp-dp";
    const auto job = simulate(cfg, scenario::healthy);
    REQUIRE(job.topo.stride(parallel_dim::pp) == 2);
  }
  auto cfg = small_job();
  auto bad = cfg;
  bad.steps = 0;
  REQUIRE_THROWS_AS(simulate(bad, scenario::healthy), invalid_argument);
  bad = cfg;
  bad.noise = -1;
  REQUIRE_THROWS_AS(simulate(bad, scenario::healthy), invalid_argument);
  REQUIRE_THROWS_AS(parse_scenario("nope"), invalid_argument);
  REQUIRE_THROWS_AS(simulate(cfg, scenario::compute_straggler, at(99)), invalid_argument);
  REQUIRE_THROWS_AS(simulate(cfg, scenario::compute_straggler, at(0, 6)), invalid_argument);
  REQUIRE_THROWS_AS(simulate(cfg, scenario::compute_straggler, at(0, 1, -1.0)), invalid_argument);
  REQUIRE_THROWS_AS(simulate(small_job(1, 2, 2), scenario::tp_link), invalid_argument);
  REQUIRE_THROWS_AS(simulate(small_job(2, 1, 2), scenario::slow_stage), invalid_argument);
  REQUIRE_THROWS_AS(kineto_trace(simulate(cfg, scenario::healthy), 8), domain_error);
  for (scenario s : all_scenarios) REQUIRE(parse_scenario(to_string(s)) == s);
}

TEST_CASE("every fault kind parses from the name truth.json holds") {
  for (std::size_t i = 0; i < fault_kind_count; ++i) {
    const auto k = static_cast<fault_kind>(i);
    CHECK(parse_fault_kind(to_string(k)) == k);
  }
  CHECK(parse_fault_kind("gc_pause") == fault_kind::gc_pause);
  CHECK_THROWS_AS(parse_fault_kind("gc-pause"), invalid_argument);  // the scenario's spelling, not the kind's
  CHECK_THROWS_AS(parse_fault_kind(""), invalid_argument);
}
