// failslow/sim/simulator.hpp -- discrete-event timing model of hybrid-parallel training with
// injected fail-slow faults.
//
// Synopsis
//   simulated_job simulate(cfg, scenario, options)      places the scenario's faults, runs
//   simulated_job simulate(cfg, faults, name, severity) runs given faults (custom scenarios)
//   Every rank runs the same per-step program as Megatron would (detail/program.hpp): its
//   stage's forward/backward kernels per micro-batch in the 1F1B or GPipe order, TP
//   all-reduces, pipeline send/receive (batched like Megatron's send_forward_recv_backward),
//   DP reduce-scatter / optimizer / all-gather. Each rank has a host thread and a GPU:
//     host   each step opens with host work (the next batch: cfg.host.step_head_us, lognormal
//            sigma 0.2, a cpu_op "enumerate(DataLoader)#..." when > 0), then launch i occupies
//            [h, h + l_i] (cudaLaunchKernel), then h += l_i + g_i (Python, dispatcher and autograd
//            time between launches), lognormal with medians cfg.host.launch_us and
//            gap_forward_us or, inside the backward phase, gap_backward_us (the autograd
//            thread); at the end of a step the host waits in
//            cudaStreamSynchronize for the GPU. Host stalls (JIT, GC) are CPU ops. With the
//            plain defaults (4.5 + 7 us a launch) the host runs the whole step ahead of the
//            GPU; calibrated_job() (job.hpp, docs/simulator.md) has a host about as fast as
//            the GPU, which idles the GPU in places and runs at most a few ms ahead.
//            Launch queue: CUDA blocks a launch while host_model::launch_queue_depth (1024)
//            launches of the rank are pending, so launch i of a step ends no earlier than
//            the start of the step's kernel i - 1024 (the synchronisation empties the queue
//            at each step end). The default job (~300 launches per rank and step) never fills it.
//     GPU    kernels run in program order: start = max(previous end, launch end + latency),
//            duration = base * shape * rank speed * lognormal(sigma * noise) * bimodal * faults,
//            shape the job's size against the catalogue's 4096 x 4096 (job.hpp).
//     collectives  every participant's kernel starts at its own start s_r and ends at
//            max_r s_r + transfer (+ < 1 us), so early arrivers show long kernels (they wait)
//            and the last arriver a short one: the wait inversion of real NCCL traces.
//            Point-to-point transfers are two-party instances; a batched send+recv ends when
//            both its transfers are done. The pipeline bubbles follow from these waits.
//   Clocks: ranks on one node (gpus_per_node) share a clock; each node's offset is uniform in
//   +-max_clock_offset_us. Times in the timelines are true times; the offsets are applied by
//   the writer (kineto_writer.hpp) and reported in the truth.
//   Randomness is counter-based (detail/random.hpp): every kernel's jitter is a function of
//   (seed, rank, step, position in the program), so the same seed gives identical output
//   and a fault changes exactly what it targets (and the waits this causes elsewhere).
//   The simulation proceeds step by step (steps end in cudaStreamSynchronize after the DP
//   collectives): within a step, rank by rank until each blocks on a collective whose other
//   participants have not arrived (a FIFO of runnable ranks) or finishes the step. It is
//   deterministic and single-threaded; each rank's state (host and GPU time, counters)
//   carries over to the next step, and what the model produces goes to a recorder: full
//   timelines here, per-rank window compressors in summaries.hpp (scale mode).
// Complexity: time O(world * steps * kernels per step); memory O(world * steps * kernels per
//   step) for the timelines, plus O(pp * program length) (the ranks of a stage share their
//   program) and O(world) of state.
// Errors: the config's and the scenario's invalid_argument (job.hpp, scenario.hpp); faults
//   with ranks outside the world, steps outside the run, factor <= 0 or not finite, or
//   stall < 0 throw invalid_argument; a world over 2^20 ranks throws invalid_argument (the
//   JSON path is for up to thousands of ranks; summaries.hpp for up to 2^20); a schedule
//   that cannot complete (a bug, never expected) throws domain_error naming the blocked rank.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/error.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/sim/detail/program.hpp"
#include "failslow/sim/detail/random.hpp"
#include "failslow/sim/job.hpp"
#include "failslow/sim/kernels.hpp"
#include "failslow/sim/scenario.hpp"
#include "failslow/sim/timeline.hpp"
#include "failslow/sim/truth.hpp"

namespace failslow::sim {

struct simulated_job {
  job_config config;
  topology topo;
  sim::truth truth;
  std::vector<rank_timeline> ranks;
};

/// Host-side constants of the model (microseconds); the calibrated ones are in job_config::host.
struct host_model {
  static constexpr double launch_sigma = 0.15;
  static constexpr double step_head_sigma = 0.2;
  static constexpr double latency_us = 1.5;
  static constexpr double step_gap_us = 30.0;
  static constexpr double start_spread_us = 300.0;
  static constexpr double rank_speed_sigma = 0.004;
  /// Launches a rank may have pending (launched, not yet started on the GPU) before
  /// cudaLaunchKernel blocks: CUDA's launch queue of about 1024 entries.
  static constexpr std::size_t launch_queue_depth = 1024;
};

namespace detail {

struct inst_key {
  std::uint64_t a = 0, b = 0;
  bool operator==(const inst_key& o) const noexcept { return a == o.a && b == o.b; }
};
struct inst_key_hash {
  std::size_t operator()(const inst_key& k) const noexcept {
    return static_cast<std::size_t>(splitmix64(k.a ^ splitmix64(k.b)));
  }
};

struct instance {
  int expected = 0;
  int arrived = 0;
  int consumed = 0;
  std::int64_t max_arrival = 0;
  std::int64_t transfer_ns = 0;
  std::vector<int> waiters;
};

// Draw purposes in the counter-based keys.
enum : std::uint64_t {
  k_jitter = 1,
  k_bimodal = 2,
  k_launch = 3,
  k_gap = 4,
  k_latency = 5,
  k_end = 6,
  k_speed = 7,
  k_clock = 8,
  k_start = 9,
  k_transfer = 10,
  k_sync = 11,
  k_head = 12
};

inline std::int64_t to_ns(double us) { return static_cast<std::int64_t>(std::llround(us * 1000.0)); }

/// Rank's clock minus the true clock: one uniform draw per node.
inline std::int64_t clock_offset_ns(const job_config& cfg, int rank) {
  const double u01 = uniform01(key(cfg.seed, k_clock, static_cast<std::uint64_t>(rank / cfg.gpus_per_node)));
  return to_ns((2.0 * u01 - 1.0) * cfg.max_clock_offset_us);
}

// The timing model. What it produces goes to a Recorder with kernel(rank, gpu_kernel),
// host(rank, host_call) and annotate(rank, annotation), each rank's in time order.
template <class Recorder>
class engine {
 public:
  engine(const job_config& cfg, const topology& topo, std::vector<fault>& faults, Recorder& recorder)
      : cfg_(cfg), topo_(topo), faults_(faults), rec_(recorder), world_(topo.world_size()) {
    const int stages = topo.size(parallel_dim::pp);
    programs_.resize(static_cast<std::size_t>(stages));
    std::vector<std::size_t> launches(programs_.size());
    for (int p = 0; p < stages; ++p) {
      coordinates c;
      c[parallel_dim::pp] = p;
      programs_[static_cast<std::size_t>(p)] = program_builder(cfg, topo, topo.rank(c)).build();
      launches[static_cast<std::size_t>(p)] = launch_count(programs_[static_cast<std::size_t>(p)]);
    }
    states_.resize(static_cast<std::size_t>(world_));
    touched_.resize(faults.size());
    for (int r = 0; r < world_; ++r) {
      auto& s = st(r);
      s.stage = static_cast<std::size_t>(topo.coordinate(r, parallel_dim::pp));
      for (std::size_t i = 0; i < faults.size(); ++i)
        if (std::binary_search(faults[i].ranks.begin(), faults[i].ranks.end(), r) &&
            faults[i].kind != fault_kind::degraded_link)
          s.rank_faults.push_back(i);
      // A JIT stall launches 3 more kernels in its step.
      s.track_queue = launches[s.stage] + 3 * s.rank_faults.size() > host_model::launch_queue_depth;
      s.speed = lognormal_factor(host_model::rank_speed_sigma * cfg.noise, key(cfg.seed, k_speed, u(r)));
      s.host_t = to_ns(2000.0 + host_model::start_spread_us * cfg.noise * uniform01(key(cfg.seed, k_start, u(r))));
      for (parallel_dim d : all_parallel_dims) s.group_index[static_cast<std::size_t>(d)] = topo.group_index(r, d);
    }
  }

  /// Runs every step; step_done(k) is called once all ranks have finished step index k.
  /// Then the faults without kernel names get those of the kernels they changed.
  template <class StepDone>
  void run(StepDone&& step_done) {
    std::deque<int> runnable;
    queued_.assign(static_cast<std::size_t>(world_), 0);
    for (int k = 0; k < cfg_.steps; ++k) {
      limit_ = k + 1;
      for (int r = 0; r < world_; ++r) {
        queued_[static_cast<std::size_t>(r)] = 1;
        runnable.push_back(r);
      }
      while (!runnable.empty()) {
        const int r = runnable.front();
        runnable.pop_front();
        queued_[static_cast<std::size_t>(r)] = 0;
        advance(r, runnable);
      }
      for (int r = 0; r < world_; ++r) {
        const auto& s = st(r);
        if (s.in_step || s.step_idx != limit_)
          throw domain_error("simulator: schedule deadlock: rank " + std::to_string(r) + " blocked in step index " +
                             std::to_string(s.step_idx) + " at program position " + std::to_string(s.pc));
      }
      step_done(k);
    }
    for (std::size_t i = 0; i < faults_.size(); ++i) {
      if (!faults_[i].kernels.empty() || touched_[i].empty()) continue;
      for (kernel_role role : touched_[i]) faults_[i].kernels.emplace_back(spec_of(role).name);
    }
  }

 private:
  struct open_range {
    phase ph = phase::forward;
    std::int64_t host_start = 0;
    std::int64_t gpu_first = -1;
    std::int64_t gpu_last = -1;
  };
  struct rank_state {
    int step_idx = 0;
    std::size_t stage = 0;  // pipeline stage: index of the program
    std::size_t pc = 0;
    bool in_step = false;
    bool pending = false;
    bool track_queue = false;  // a step can exceed the launch queue: keep kernel starts
    std::size_t step_launches = 0;
    std::vector<std::int64_t> queue_starts;  // kernel start of launch i at i % depth
    std::int64_t host_t = 0;
    std::int64_t gpu_t = 0;
    std::int64_t step_host_start = 0;
    std::uint32_t corr = 0;
    double speed = 1;
    std::vector<std::size_t> rank_faults;
    std::array<int, parallel_dim_count> group_index{};
    std::array<std::uint64_t, parallel_dim_count> coll_seq{};
    std::uint64_t send_next = 0, send_prev = 0, recv_prev = 0, recv_next = 0;
    std::vector<open_range> ranges;
    // the collective the rank has arrived at
    std::int64_t pending_start = 0;
    std::uint32_t pending_corr = 0;
    std::size_t pending_n = 0;
    std::array<inst_key, 2> pending_keys{};
  };

  static std::uint64_t u(int v) noexcept { return static_cast<std::uint64_t>(static_cast<std::int64_t>(v)); }
  rank_state& st(int r) { return states_[static_cast<std::size_t>(r)]; }
  std::int64_t step_number(const rank_state& s) const { return cfg_.first_step + s.step_idx; }

  static bool active(const fault& f, std::int64_t step) { return step >= f.first_step && step <= f.last_step; }

  double host_factor(const rank_state& s) const {
    double x = 1;
    for (std::size_t i : s.rank_faults) {
      const auto& f = faults_[i];
      if (f.kind == fault_kind::host_launch_delay && active(f, step_number(s))) x *= f.factor;
    }
    return x;
  }

  double kernel_factor(const rank_state& s, kernel_role role) {
    const auto& spec = spec_of(role);
    double x = 1;
    const std::int64_t step = step_number(s);
    for (std::size_t i : s.rank_faults) {
      const auto& f = faults_[i];
      if (!active(f, step)) continue;
      bool hit = false;
      double g = f.factor;
      switch (f.kind) {
        case fault_kind::compute_straggler:
        case fault_kind::masked_straggler:
        case fault_kind::slow_stage:
          hit = !spec.is_collective();
          break;
        case fault_kind::thermal_drift:
          hit = !spec.is_collective();
          g = 1.0 + (f.factor - 1.0) * static_cast<double>(step - f.first_step + 1) /
                        static_cast<double>(f.last_step - f.first_step + 1);
          break;
        case fault_kind::memory_bound:
          hit = !spec.is_collective() && spec.memory_bound;
          break;
        default:
          break;
      }
      if (hit) {
        x *= g;
        touched_[i].insert(role);
      }
    }
    return x;
  }

  double link_factor(parallel_dim d, int group, std::int64_t step) const {
    double x = 1;
    for (const auto& f : faults_)
      if (f.kind == fault_kind::degraded_link && f.link_dim == d && f.link_group == group && active(f, step))
        x *= f.factor;
    return x;
  }

  struct launch_result {
    std::int64_t ready = 0;
    std::uint32_t corr = 0;
  };

  launch_result launch(int r, rank_state& s, std::uint64_t op_key) {
    const double hf = host_factor(s);
    const auto sk = u(s.step_idx);
    const double noise = cfg_.noise;
    const host_config& hc = cfg_.host;
    const bool backward = !s.ranges.empty() && s.ranges.front().ph == phase::backward;
    const std::int64_t ld = std::max<std::int64_t>(
        500, to_ns(hc.launch_us * hf *
                   lognormal_factor(host_model::launch_sigma * noise, key(cfg_.seed, k_launch, u(r), sk, op_key))));
    const std::int64_t gap = to_ns((backward ? hc.gap_backward_us : hc.gap_forward_us) * hf *
                                   lognormal_factor(hc.gap_sigma * noise, key(cfg_.seed, k_gap, u(r), sk, op_key)));
    const std::int64_t lat =
        to_ns(host_model::latency_us * (1.0 + noise * uniform01(key(cfg_.seed, k_latency, u(r), sk, op_key))));
    launch_result out;
    out.corr = ++s.corr;
    host_call h;
    h.start_ns = s.host_t;
    h.end_ns = s.host_t + ld;
    // A full launch queue: this launch ends once the kernel `depth` launches earlier started.
    constexpr std::size_t depth = host_model::launch_queue_depth;
    if (s.track_queue && s.step_launches >= depth)
      h.end_ns = std::max(h.end_ns, s.queue_starts[s.step_launches % depth]);
    h.correlation = out.corr;
    h.name = host_name::launch_kernel;
    rec_.host(r, h);
    out.ready = h.end_ns + lat;
    s.host_t = h.end_ns + gap;
    return out;
  }

  // GPU start of the kernel just launched (after the previous kernel, once it is ready),
  // remembered for the launch queue.
  static std::int64_t gpu_start(rank_state& s, std::int64_t ready) {
    const std::int64_t start = std::max(s.gpu_t, ready);
    if (s.track_queue) {
      const std::size_t i = s.step_launches % host_model::launch_queue_depth;
      if (i == s.queue_starts.size())
        s.queue_starts.push_back(start);
      else
        s.queue_starts[i] = start;
    }
    ++s.step_launches;
    return start;
  }

  void record_kernel(int r, rank_state& s, gpu_kernel k) {
    k.step = step_number(s);
    for (auto& o : s.ranges) {
      if (o.gpu_first < 0) o.gpu_first = k.start_ns;
      o.gpu_last = std::max(o.gpu_last, k.end_ns);
    }
    s.gpu_t = k.end_ns;
    rec_.kernel(r, k);
  }

  void compute_kernel(int r, rank_state& s, kernel_role role, std::uint64_t op_key) {
    const auto lr = launch(r, s, op_key);
    const auto& spec = spec_of(role);
    const auto sk = u(s.step_idx);
    const double noise = cfg_.noise;
    double d = spec.base_us * compute_shape_factor(cfg_, spec) * s.speed *
               lognormal_factor(spec.sigma * noise, key(cfg_.seed, k_jitter, u(r), sk, op_key));
    if (spec.bimodal_p > 0 && uniform01(key(cfg_.seed, k_bimodal, u(r), sk, op_key)) < spec.bimodal_p)
      d *= 1.0 + (spec.bimodal_x - 1.0) * noise;
    d *= kernel_factor(s, role);
    gpu_kernel k;
    k.start_ns = gpu_start(s, lr.ready);
    k.end_ns = k.start_ns + std::max<std::int64_t>(1000, to_ns(d));
    k.correlation = lr.corr;
    k.stream = 7;
    k.role = role;
    record_kernel(r, s, k);
  }

  static std::uint16_t comm_stream(parallel_dim d) { return static_cast<std::uint16_t>(20 + static_cast<int>(d)); }

  instance& arrive(int r, const inst_key& k, int expected, std::int64_t start, double transfer_us, kernel_role role,
                   std::int64_t link_mult_step, parallel_dim d, int group, std::deque<int>& runnable) {
    auto it = insts_.find(k);
    if (it == insts_.end()) {
      instance in;
      in.expected = expected;
      in.max_arrival = start;
      double t = transfer_us * lognormal_factor(spec_of(role).sigma * cfg_.noise, key(cfg_.seed, k_transfer, k.a, k.b));
      if (d != parallel_dim::pp) t *= link_factor(d, group, link_mult_step);
      in.transfer_ns = std::max<std::int64_t>(1000, to_ns(t));
      it = insts_.emplace(k, std::move(in)).first;
    }
    instance& in = it->second;
    ++in.arrived;
    in.max_arrival = std::max(in.max_arrival, start);
    in.waiters.push_back(r);
    if (in.arrived == in.expected)
      for (int w : in.waiters)
        if (w != r && !queued_[static_cast<std::size_t>(w)]) {
          queued_[static_cast<std::size_t>(w)] = 1;
          runnable.push_back(w);
        }
    return in;
  }

  // Returns false when the rank must wait for other participants.
  bool communicate(int r, rank_state& s, const op& o, std::uint64_t op_key, std::deque<int>& runnable) {
    if (!s.pending) {
      const auto lr = launch(r, s, op_key);
      const std::int64_t start = gpu_start(s, lr.ready);
      s.pending = true;
      s.pending_start = start;
      s.pending_corr = lr.corr;
      s.pending_n = 0;
      const std::int64_t step = step_number(s);
      if (o.type == op_type::collective) {
        const auto di = static_cast<std::size_t>(o.dim);
        const int g = s.group_index[di];
        inst_key k{(u(static_cast<int>(o.dim)) + 1) << 40 | u(g), s.coll_seq[di]++};
        s.pending_keys[s.pending_n++] = k;
        arrive(r, k, topo_.size(o.dim), start, o.transfer_us, o.role, step, o.dim, g, runnable);
      } else {
        if (o.send_offset != 0) {
          const bool fwd = o.send_offset > 0;
          inst_key k{(std::uint64_t{1} << 63) | (u(r) << 24) | u(r + o.send_offset),
                     fwd ? s.send_next++ : s.send_prev++};
          s.pending_keys[s.pending_n++] = k;
          arrive(r, k, 2, start, o.transfer_us, o.role, step, parallel_dim::pp, 0, runnable);
        }
        if (o.recv_offset != 0) {
          const bool from_prev = o.recv_offset < 0;
          inst_key k{(std::uint64_t{1} << 63) | (u(r + o.recv_offset) << 24) | u(r),
                     from_prev ? s.recv_prev++ : s.recv_next++};
          s.pending_keys[s.pending_n++] = k;
          arrive(r, k, 2, start, o.transfer_us, o.role, step, parallel_dim::pp, 0, runnable);
        }
      }
    }
    std::int64_t end = s.pending_start;
    for (std::size_t i = 0; i < s.pending_n; ++i) {
      const auto it = insts_.find(s.pending_keys[i]);
      if (it->second.arrived < it->second.expected) return false;
      end = std::max(end, it->second.max_arrival + it->second.transfer_ns);
    }
    end += to_ns(cfg_.noise * uniform01(key(cfg_.seed, k_end, u(r), u(s.step_idx), op_key)));
    for (std::size_t i = 0; i < s.pending_n; ++i) {
      const auto it = insts_.find(s.pending_keys[i]);
      if (++it->second.consumed == it->second.expected) insts_.erase(it);
    }
    gpu_kernel k;
    k.start_ns = s.pending_start;
    k.end_ns = end;
    k.correlation = s.pending_corr;
    k.stream = comm_stream(o.dim);
    k.role = o.role;
    k.comm = o.comm;
    k.comm_dim = o.dim;
    k.nelems = o.nelems;
    record_kernel(r, s, k);
    s.pending = false;
    return true;
  }

  void begin_step(int r, rank_state& s) {
    s.step_launches = 0;  // the last step ended in a synchronisation: the queue is empty
    s.queue_starts.clear();
    s.host_t += to_ns(host_model::step_gap_us);
    s.step_host_start = s.host_t;
    if (cfg_.host.step_head_us > 0) {  // the next batch: a CPU operator, as PyTorch's profiler records it
      host_call h;
      h.start_ns = s.host_t;
      h.end_ns =
          s.host_t + to_ns(cfg_.host.step_head_us * lognormal_factor(host_model::step_head_sigma * cfg_.noise,
                                                                     key(cfg_.seed, k_head, u(r), u(s.step_idx))));
      h.correlation = ++s.corr;
      h.name = host_name::data_loader;
      rec_.host(r, h);
      s.host_t = h.end_ns;
    }
    const std::int64_t step = step_number(s);
    for (std::size_t i : s.rank_faults) {
      const auto& f = faults_[i];
      if (!active(f, step) || (f.kind != fault_kind::jit_stall && f.kind != fault_kind::gc_pause)) continue;
      host_call h;
      h.start_ns = s.host_t;
      h.end_ns = s.host_t + to_ns(f.stall_ms * 1000.0);
      h.correlation = ++s.corr;
      h.name = f.kind == fault_kind::jit_stall ? host_name::compiled_function : host_name::gc_collect;
      rec_.host(r, h);
      s.host_t = h.end_ns;
      if (f.kind == fault_kind::jit_stall) {
        const kernel_role jit[] = {kernel_role::triton_fused_0, kernel_role::triton_fused_1,
                                   kernel_role::triton_fused_2};
        std::uint64_t j = 0;
        for (kernel_role role : jit) compute_kernel(r, s, role, (std::uint64_t{1} << 40) + (j++));
      }
    }
    s.in_step = true;
    s.pc = 0;
  }

  void end_step(int r, rank_state& s) {
    host_call h;
    h.start_ns = s.host_t;
    h.end_ns = std::max(s.host_t, s.gpu_t) +
               to_ns(2.0 + 3.0 * cfg_.noise * uniform01(key(cfg_.seed, k_sync, u(r), u(s.step_idx))));
    h.correlation = ++s.corr;
    h.name = host_name::stream_synchronize;
    rec_.host(r, h);
    s.host_t = h.end_ns;
    annotation a;
    a.start_ns = s.step_host_start;
    a.end_ns = s.host_t;
    a.step = step_number(s);
    a.what = phase::profiler_step;
    rec_.annotate(r, a);
    s.in_step = false;
    ++s.step_idx;
  }

  // Runs rank r until it blocks on a collective or has finished step index limit_ - 1.
  void advance(int r, std::deque<int>& runnable) {
    auto& s = st(r);
    const auto& prog = programs_[s.stage];
    while (true) {
      if (!s.in_step) {
        if (s.step_idx >= limit_) return;
        begin_step(r, s);
      }
      if (s.pc == prog.size()) {
        end_step(r, s);
        continue;
      }
      const op& o = prog[s.pc];
      const std::uint64_t op_key = s.pc;
      switch (o.type) {
        case op_type::kernel:
          compute_kernel(r, s, o.role, op_key);
          break;
        case op_type::collective:
        case op_type::p2p:
          if (!communicate(r, s, o, op_key, runnable)) return;
          break;
        case op_type::push: {
          open_range rg;
          rg.ph = o.ph;
          rg.host_start = s.host_t;
          s.ranges.push_back(rg);
          break;
        }
        case op_type::pop: {
          const open_range rg = s.ranges.back();
          s.ranges.pop_back();
          annotation a;
          a.step = step_number(s);
          a.what = rg.ph;
          a.start_ns = rg.host_start;
          a.end_ns = s.host_t;
          rec_.annotate(r, a);
          if (rg.gpu_first >= 0) {
            a.start_ns = rg.gpu_first;
            a.end_ns = rg.gpu_last;
            a.on_gpu = true;
            rec_.annotate(r, a);
          }
          break;
        }
      }
      ++s.pc;
    }
  }

  const job_config& cfg_;
  const topology& topo_;
  std::vector<fault>& faults_;
  Recorder& rec_;
  int world_;
  int limit_ = 0;  // steps to finish in this round
  std::vector<rank_state> states_;
  std::vector<std::vector<op>> programs_;  // per pipeline stage
  std::vector<std::set<kernel_role>> touched_;
  std::unordered_map<inst_key, instance, inst_key_hash> insts_;
  std::vector<char> queued_;
};

// Keeps everything: the rank timelines of simulate().
struct timeline_recorder {
  std::vector<rank_timeline> ranks;

  FAILSLOW_FUNC explicit timeline_recorder(const job_config& cfg, int world);
  void kernel(int r, const gpu_kernel& k) { ranks[static_cast<std::size_t>(r)].kernels.push_back(k); }
  void host(int r, const host_call& h) { ranks[static_cast<std::size_t>(r)].host.push_back(h); }
  void annotate(int r, const annotation& a) { ranks[static_cast<std::size_t>(r)].annotations.push_back(a); }
};

FAILSLOW_FUNC void check_faults(const std::vector<fault>& faults, const job_config& cfg, const topology& topo);

/// validate(cfg), the world limit and check_faults: the layout of a run.
FAILSLOW_FUNC topology checked_topology(const job_config& cfg, const std::vector<fault>& faults);

/// The truth of a run (after it: the faults carry the kernels they changed).
FAILSLOW_FUNC truth make_truth(const job_config& cfg, const topology& topo, std::vector<fault> faults, std::string name,
                               double severity);

}  // namespace detail

/// Runs the job with the given faults; `name` and `severity` are recorded in the truth.
FAILSLOW_FUNC simulated_job simulate(const job_config& cfg, std::vector<fault> faults, std::string name = "custom",
                                     double severity = 1.0);

/// Places the faults of scenario `s` (plan_faults) and runs the job.
FAILSLOW_FUNC simulated_job simulate(const job_config& cfg, scenario s, const scenario_options& options = {});

}  // namespace failslow::sim

#if FAILSLOW_HEADER_ONLY
#include "failslow/sim/impl/simulator.ipp"
#endif
