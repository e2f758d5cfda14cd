// failslow/sim/impl/kineto_writer.ipp -- the definitions of sim/kineto_writer.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/io/detail/json_writer.hpp"
#include "failslow/sim/kineto_writer.hpp"
#include "failslow/sim/simulator.hpp"
#include "failslow/sim/timeline.hpp"

namespace failslow::sim {

FAILSLOW_FUNC_DEF std::string process_group_name(const topology& topo, int rank, parallel_dim d) {
  if (topo.size(d) <= 1) return {};
  int id = 1;
  for (parallel_dim x : all_parallel_dims) {
    if (x == d) break;
    if (topo.size(x) > 1) id += topo.group_count(x);
  }
  return std::to_string(id + topo.group_index(rank, d));
}

namespace detail {

inline void append_int(std::string& out, std::int64_t v) { out += std::to_string(v); }

/// Nanoseconds as microseconds with three decimals ("1234.567"); v >= 0.
inline void append_us(std::string& out, std::int64_t ns) {
  if (ns < 0) {
    out += '-';
    ns = -ns;
  }
  out += std::to_string(ns / 1000);
  const auto frac = static_cast<int>(ns % 1000);
  out += '.';
  out += static_cast<char>('0' + frac / 100);
  out += static_cast<char>('0' + (frac / 10) % 10);
  out += static_cast<char>('0' + frac % 10);
}

inline void append_dims(std::string& out, const std::array<std::uint32_t, 3>& d) {
  out += '[';
  for (std::size_t i = 0; i < 3; ++i) {
    if (i) out += ", ";
    out += std::to_string(d[i]);
  }
  out += ']';
}

inline std::string rank_list(const std::vector<int>& ranks) {
  std::string s = "[";
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(ranks[i]);
  }
  return s + "]";
}

struct pg_info {
  std::string name;
  std::string ranks_text;
  int size = 0;
};

}  // namespace detail

FAILSLOW_FUNC_DEF void write_kineto_trace(const simulated_job& job, int rank, std::string& out,
                                          const kineto_write_options& opt) {
  const auto& topo = job.topo;
  if (rank < 0 || rank >= topo.world_size() || static_cast<std::size_t>(rank) >= job.ranks.size())
    throw domain_error("kineto writer: rank " + std::to_string(rank) + " outside [0, " +
                       std::to_string(job.ranks.size()) + ")");
  const rank_timeline& t = job.ranks[static_cast<std::size_t>(rank)];
  const int device = rank % job.config.gpus_per_node;
  const std::int64_t pid = opt.host_pid_base + rank;
  const std::int64_t shift = opt.epoch_ns + t.clock_offset_ns;
  using detail::append_int;
  using detail::append_us;
  using io::detail::append_escaped;

  std::array<detail::pg_info, parallel_dim_count> pgs;
  for (parallel_dim d : all_parallel_dims) {
    auto& p = pgs[static_cast<std::size_t>(d)];
    p.name = process_group_name(topo, rank, d);
    if (p.name.empty()) continue;
    const auto members = topo.group(rank, d);
    p.ranks_text = detail::rank_list(members);
    p.size = static_cast<int>(members.size());
  }

  out.reserve(out.size() + 400 * (t.kernels.size() + t.host.size()) + 4096);
  out += "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [";
  for (int d = 0; d < job.config.gpus_per_node; ++d) {
    out += d ? ",\n    " : "\n    ";
    out += "{\"id\": " + std::to_string(d) + ", \"name\": ";
    append_escaped(out, opt.device_name);
    out +=
        ", \"totalGlobalMem\": 84929216512, \"computeMajor\": 9, \"computeMinor\": 0, \"maxThreadsPerBlock\": 1024, "
        "\"maxThreadsPerMultiprocessor\": 2048, \"regsPerBlock\": 65536, \"warpSize\": 32, \"sharedMemPerBlock\": "
        "49152, \"numSms\": 132, \"regsPerMultiprocessor\": 65536, \"sharedMemPerBlockOptin\": 232448, "
        "\"sharedMemPerMultiprocessor\": 233472}";
  }
  out += "\n  ],\n  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": " + std::to_string(rank) +
         ", \"world_size\": " + std::to_string(topo.world_size());
  int pg_count = 1;
  for (const auto& p : pgs) pg_count += p.name.empty() ? 0 : 1;
  out += ", \"pg_count\": " + std::to_string(pg_count) + ", \"pg_config\": [";
  {
    std::vector<int> all(static_cast<std::size_t>(topo.world_size()));
    for (int r = 0; r < topo.world_size(); ++r) all[static_cast<std::size_t>(r)] = r;
    out += "{\"pg_name\": \"0\", \"pg_desc\": \"default_pg\", \"backend_config\": \"cuda:nccl\", \"pg_size\": " +
           std::to_string(topo.world_size()) + ", \"ranks\": " + detail::rank_list(all) + "}";
  }
  for (parallel_dim d : all_parallel_dims) {
    const auto& p = pgs[static_cast<std::size_t>(d)];
    if (p.name.empty()) continue;
    out += ", {\"pg_name\": \"" + p.name + "\", \"pg_desc\": \"" + std::string(process_group_description(d)) +
           "\", \"backend_config\": \"cuda:nccl\", \"pg_size\": " + std::to_string(p.size) +
           ", \"ranks\": " + p.ranks_text + "}";
  }
  out += "], \"nccl_version\": ";
  append_escaped(out, opt.nccl_version);
  out += "},\n  \"traceEvents\": [\n";

  bool first_event = true;
  auto begin_event = [&] {
    out += first_event ? "  {" : ",\n  {";
    first_event = false;
  };
  // Metadata.
  begin_event();
  out += "\"name\": \"process_name\", \"ph\": \"M\", \"ts\": 0.000, \"pid\": " + std::to_string(pid) +
         ", \"tid\": 0, \"args\": {\"name\": \"python3\"}}";
  begin_event();
  out += "\"name\": \"process_name\", \"ph\": \"M\", \"ts\": 0.000, \"pid\": " + std::to_string(device) +
         ", \"tid\": 0, \"args\": {\"name\": \"GPU " + std::to_string(device) + "\"}}";
  begin_event();
  out += "\"name\": \"thread_name\", \"ph\": \"M\", \"ts\": 0.000, \"pid\": " + std::to_string(pid) +
         ", \"tid\": " + std::to_string(pid) + ", \"args\": {\"name\": \"thread " + std::to_string(pid) +
         " (python3)\"}}";

  // Host and GPU events, each in start order (stable: the model's order breaks ties).
  struct ref {
    std::int64_t start;
    std::int64_t end;
    std::uint8_t kind;  // 0 annotation, 1 host call, 2 kernel
    std::uint32_t index;
  };
  std::vector<ref> host, gpu;
  host.reserve(t.host.size() + t.annotations.size());
  gpu.reserve(t.kernels.size() + t.annotations.size());
  for (std::size_t i = 0; i < t.annotations.size(); ++i)
    (t.annotations[i].on_gpu ? gpu : host)
        .push_back({t.annotations[i].start_ns, t.annotations[i].end_ns, 0, static_cast<std::uint32_t>(i)});
  for (std::size_t i = 0; i < t.host.size(); ++i)
    host.push_back({t.host[i].start_ns, t.host[i].end_ns, 1, static_cast<std::uint32_t>(i)});
  for (std::size_t i = 0; i < t.kernels.size(); ++i)
    gpu.push_back({t.kernels[i].start_ns, t.kernels[i].end_ns, 2, static_cast<std::uint32_t>(i)});
  // Enclosing ranges first: start ascending, then end descending.
  auto by_start = [](const ref& a, const ref& b) { return a.start != b.start ? a.start < b.start : a.end > b.end; };
  std::stable_sort(host.begin(), host.end(), by_start);
  std::stable_sort(gpu.begin(), gpu.end(), by_start);

  std::uint64_t external = 0;
  auto times = [&](std::int64_t start, std::int64_t end) {
    out += ", \"ts\": ";
    append_us(out, start + shift);
    out += ", \"dur\": ";
    append_us(out, end - start);
  };
  const std::string host_ids = ", \"pid\": " + std::to_string(pid) + ", \"tid\": " + std::to_string(pid);
  for (const ref& e : host) {
    begin_event();
    if (e.kind == 0) {
      const auto& a = t.annotations[e.index];
      out += "\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"";
      if (a.what == phase::profiler_step)
        out += "ProfilerStep#" + std::to_string(a.step);
      else
        out += to_string(a.what);
      out += '"' + host_ids;
      times(a.start_ns, a.end_ns);
      out += ", \"args\": {\"External id\": " + std::to_string(++external) + "}}";
    } else {
      const auto& h = t.host[e.index];
      const bool runtime = is_runtime_call(h.name);
      out += runtime ? "\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \""
                     : "\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"";
      out += to_string(h.name);
      out += '"' + host_ids;
      times(h.start_ns, h.end_ns);
      if (runtime)
        out += ", \"args\": {\"External id\": " + std::to_string(++external) +
               ", \"cbid\": " + (h.name == host_name::launch_kernel ? "211" : "131") +
               ", \"correlation\": " + std::to_string(h.correlation) + "}}";
      else
        out += ", \"args\": {\"External id\": " + std::to_string(++external) + "}}";
    }
  }
  const std::string dev = std::to_string(device);
  for (const ref& e : gpu) {
    begin_event();
    if (e.kind == 0) {
      const auto& a = t.annotations[e.index];
      out += "\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"";
      out += to_string(a.what);
      out += "\", \"pid\": " + dev + ", \"tid\": 7";
      times(a.start_ns, a.end_ns);
      out +=
          ", \"args\": {\"External id\": " + std::to_string(++external) + ", \"device\": " + dev + ", \"stream\": 7}}";
      continue;
    }
    const auto& k = t.kernels[e.index];
    const auto& spec = spec_of(k.role);
    out += "\"ph\": \"X\", \"cat\": \"kernel\", \"name\": ";
    append_escaped(out, spec.name);
    out += ", \"pid\": " + dev + ", \"tid\": " + std::to_string(k.stream);
    times(k.start_ns, k.end_ns);
    out += ", \"args\": {\"External id\": " + std::to_string(k.correlation) + ", \"queued\": 0, \"device\": " + dev +
           ", \"context\": 1, \"stream\": " + std::to_string(k.stream) +
           ", \"correlation\": " + std::to_string(k.correlation) + ", \"grid\": ";
    detail::append_dims(out, spec.grid);
    out += ", \"block\": ";
    detail::append_dims(out, spec.block);
    if (k.is_collective()) {
      const auto& p = pgs[static_cast<std::size_t>(k.comm_dim)];
      const std::int64_t out_n = k.comm == comm_op::reduce_scatter
                                     ? std::max<std::int64_t>(1, k.nelems / std::max(1, p.size))
                                 : k.comm == comm_op::allgather ? k.nelems * p.size
                                                                : k.nelems;
      out += ", \"Collective name\": \"";
      out += to_string(k.comm);
      out += "\", \"In msg nelems\": ";
      append_int(out, k.nelems);
      out += ", \"Out msg nelems\": ";
      append_int(out, out_n);
      out += ", \"Group size\": " + std::to_string(p.size) +
             ", \"dtype\": \"BFloat16\", \"In split size\": \"[]\", \"Out split size\": \"[]\", \"Process Group "
             "Name\": \"" +
             p.name + "\", \"Process Group Description\": \"" + std::string(process_group_description(k.comm_dim)) +
             "\", \"Process Group Ranks\": \"" + p.ranks_text + "\"";
    }
    out += "}}";
  }
  out += "\n  ],\n  \"traceName\": \"rank_" + std::to_string(rank) + ".json\",\n  \"displayTimeUnit\": \"ms\",\n";
  out += "  \"baseTimeNanoseconds\": " + std::to_string(opt.base_time_ns) + "\n}\n";
}

FAILSLOW_FUNC_DEF std::string kineto_trace(const simulated_job& job, int rank, const kineto_write_options& opt) {
  std::string s;
  write_kineto_trace(job, rank, s, opt);
  return s;
}

}  // namespace failslow::sim
