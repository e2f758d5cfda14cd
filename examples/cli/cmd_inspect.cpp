// failslow inspect TRACE...|DIR [--json]: what a trace set holds, the way HTA's overview shows
// it: ranks and world size, steps, event counts per category, communication / compute /
// memory kernel time, the top kernels by total time, the GPU idle-time breakdown per rank and
// the estimated clock skew per rank.
#include <algorithm>
#include <cstdio>
#include <failslow/core/kernel_class.hpp>
#include <failslow/trace/clock_align.hpp>
#include <failslow/trace/idle.hpp>
#include <failslow/trace/steps.hpp>
#include <failslow/trace/trace_set.hpp>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "commands.hpp"

namespace failslow_cli {
namespace {

struct inspect_options {
  std::vector<std::string> paths;
  bool json = false;
  unsigned threads = 0;
  std::size_t top = 10;
  std::vector<std::string> rank_map;
};

std::string ms(std::int64_t ns) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f ms", static_cast<double>(ns) / 1e6);
  return buf;
}

void run(const inspect_options& o) {
  using namespace failslow;
  trace::trace_set_options so;
  so.threads = o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  for (const auto& m : o.rank_map) {
    const auto eq = m.rfind('=');
    if (eq == std::string::npos || eq + 1 == m.size())
      throw invalid_argument("--rank expects PATH=RANK, got '" + m + "'");
    so.rank_of[m.substr(0, eq)] = std::stoi(m.substr(eq + 1));
  }
  auto set = trace::load_trace_set(o.paths, so);
  const auto align = trace::estimate_clock_offsets(set);
  const auto& classifier = kernel_classifier::defaults();

  nlohmann::json j;
  j["schema"] = "failslow.inspect/1";
  j["world_size"] = set.world_size;
  j["missing_ranks"] = set.missing_ranks;
  j["duplicate_ranks"] = set.duplicate_ranks;
  struct kernel_total {
    std::uint64_t count = 0;
    std::int64_t total_ns = 0;
  };
  std::map<name_id, kernel_total> kernels;
  std::int64_t class_ns[3] = {0, 0, 0};
  std::vector<int> class_of;
  nlohmann::json ranks = nlohmann::json::array();
  for (std::size_t t = 0; t < set.traces.size(); ++t) {
    const auto& rt = set.traces[t];
    const auto& d = rt.data;
    nlohmann::json r;
    r["rank"] = rt.rank;
    r["rank_from"] = trace::to_string(rt.source);
    r["source"] = d.source;
    if (d.distributed) r["backend"] = d.distributed->backend;
    if (!d.devices.empty()) r["device"] = d.devices.front().name;
    std::uint64_t counts[event_kind_count] = {};
    std::int64_t rank_class_ns[3] = {0, 0, 0};
    for (const auto& e : d.events) {
      ++counts[static_cast<int>(e.kind)];
      if (!is_device_activity(e.kind)) continue;
      // Classified once per distinct name (the rules are tried per name, not per event).
      if (e.name >= class_of.size()) class_of.resize(static_cast<std::size_t>(e.name) + 1, -1);
      if (class_of[e.name] < 0) class_of[e.name] = static_cast<int>(classifier.classify(set.names.name(e.name)));
      const auto cls = e.kind == event_kind::memcpy || e.kind == event_kind::memset ? kernel_class::memory
                       : e.kind == event_kind::collective                           ? kernel_class::communication
                                                          : static_cast<kernel_class>(class_of[e.name]);
      rank_class_ns[static_cast<int>(cls)] += e.duration_ns();
      auto& k = kernels[e.name];
      ++k.count;
      k.total_ns += e.duration_ns();
    }
    for (int c = 0; c < 3; ++c) class_ns[c] += rank_class_ns[c];
    nlohmann::json cj;
    for (int k = 0; k < event_kind_count; ++k) cj[std::string(to_string(static_cast<event_kind>(k)))] = counts[k];
    cj["other"] = d.stats.unknown_category + d.stats.instants + d.stats.other_phases;
    cj["flows"] = d.stats.flows;
    cj["metadata"] = d.stats.metadata;
    cj["malformed"] = d.stats.malformed();
    r["events"] = cj;
    r["kernel_time_ns"] = {
        {"compute", rank_class_ns[0]}, {"communication", rank_class_ns[1]}, {"memory", rank_class_ns[2]}};
    const auto steps = trace::map_steps(d, set.names);
    nlohmann::json sj;
    sj["count"] = steps.steps.size();
    if (!steps.steps.empty()) {
      sj["first"] = steps.steps.front().number;
      sj["last"] = steps.steps.back().number;
      nlohmann::json per = nlohmann::json::array();
      for (const auto& s : steps.steps)
        per.push_back({{"step", s.number},
                       {"cpu_ns", s.cpu_end_ns - s.cpu_start_ns},
                       {"gpu_ns", s.gpu_start_ns < 0 ? 0 : s.gpu_end_ns - s.gpu_start_ns},
                       {"gpu_busy_ns", s.gpu_busy_ns},
                       {"gpu_events", s.device_events}});
      sj["steps"] = per;
    }
    sj["unattributed_gpu_events"] = steps.unattributed;
    r["steps"] = sj;
    const auto idle = trace::analyze_idle(d);
    r["idle"] = {{"busy_ns", idle.busy_ns},
                 {"idle_ns", idle.idle_ns},
                 {"host_wait_ns", idle.host_wait_ns},
                 {"kernel_wait_ns", idle.kernel_wait_ns},
                 {"other_ns", idle.other_ns},
                 {"streams", idle.streams.size()},
                 {"launch_delay_median_ns", idle.launch_delay_median_ns},
                 {"launch_delay_p99_ns", idle.launch_delay_p99_ns},
                 {"launch_stalls", idle.stalls.size()}};
    const auto& c = align.traces[t];
    r["clock"] = {{"offset_ns", c.offset_ns},
                  {"aligned", c.aligned},
                  {"reference", c.reference},
                  {"spread_ns", c.spread_ns},
                  {"collectives", c.instances}};
    ranks.push_back(r);
  }
  j["ranks"] = ranks;
  j["kernel_time_ns"] = {{"compute", class_ns[0]}, {"communication", class_ns[1]}, {"memory", class_ns[2]}};
  std::vector<std::pair<name_id, kernel_total>> top(kernels.begin(), kernels.end());
  std::sort(top.begin(), top.end(), [](const auto& a, const auto& b) {
    return a.second.total_ns != b.second.total_ns ? a.second.total_ns > b.second.total_ns : a.first < b.first;
  });
  if (top.size() > o.top) top.resize(o.top);
  nlohmann::json tj = nlohmann::json::array();
  for (const auto& [id, k] : top)
    tj.push_back({{"name", std::string(set.names.name(id))},
                  {"class", std::string(to_string(classifier.classify(set.names.name(id))))},
                  {"count", k.count},
                  {"total_ns", k.total_ns}});
  j["top_kernels"] = tj;
  j["clock_alignment"] = {
      {"groups_used", align.keys_used}, {"groups_skipped", align.keys_skipped}, {"collectives", align.instances}};

  if (o.json) {
    std::cout << j.dump(2) << '\n';
    return;
  }
  std::cout << set.traces.size() << " trace(s), world size " << set.world_size << '\n';
  if (!set.missing_ranks.empty())
    std::cout << "missing ranks: " << set.missing_ranks.size() << " (first " << set.missing_ranks.front() << ")\n";
  if (!set.duplicate_ranks.empty())
    std::cout << "duplicate ranks: " << nlohmann::json(set.duplicate_ranks).dump() << '\n';
  for (const auto& r : ranks) {
    std::cout << "\nrank " << r["rank"].get<int>() << " (" << r["rank_from"].get<std::string>() << ")  "
              << r["source"].get<std::string>() << '\n';
    std::cout << "  events:";
    for (const auto& [k, v] : r["events"].items()) std::cout << ' ' << k << '=' << v.dump();
    std::cout << '\n';
    const auto& s = r["steps"];
    std::cout << "  steps: " << s["count"].dump();
    if (s.contains("first")) std::cout << " (#" << s["first"].dump() << " .. #" << s["last"].dump() << ")";
    std::cout << '\n';
    const auto& kt = r["kernel_time_ns"];
    std::cout << "  GPU time: compute " << ms(kt["compute"]) << ", communication " << ms(kt["communication"])
              << ", memory " << ms(kt["memory"]) << '\n';
    const auto& id = r["idle"];
    std::cout << "  GPU idle " << ms(id["idle_ns"]) << ": host wait " << ms(id["host_wait_ns"]) << ", kernel wait "
              << ms(id["kernel_wait_ns"]) << ", other " << ms(id["other_ns"]) << "; launch delay median "
              << id["launch_delay_median_ns"].get<double>() / 1e3 << " us; launch stalls " << id["launch_stalls"].dump()
              << '\n';
    const auto& c = r["clock"];
    if (c["aligned"].get<bool>())
      std::cout << "  clock offset " << c["offset_ns"].get<double>() / 1000.0 << " us"
                << (c["reference"].get<bool>() ? " (reference)" : "") << " from " << c["collectives"].dump()
                << " collectives, spread " << c["spread_ns"].get<double>() / 1000.0 << " us\n";
    else
      std::cout << "  clock offset: not estimated (no collective shared with another rank)\n";
  }
  std::cout << "\ntop kernels by total time:\n";
  for (const auto& k : j["top_kernels"]) {
    std::string name = k["name"].get<std::string>();
    if (name.size() > 90) name = name.substr(0, 87) + "...";
    std::cout << "  " << ms(k["total_ns"]) << "  " << k["count"].dump() << "x  [" << k["class"].get<std::string>()
              << "]  " << name << '\n';
  }
}

}  // namespace

void add_inspect_command(CLI::App& app) {
  auto opts = std::make_shared<inspect_options>();
  CLI::App* cmd = app.add_subcommand(
      "inspect", "What a trace set holds: ranks, steps, event counts, kernel time, idle time, clock skew");
  cmd->add_option("traces", opts->paths,
                  "Kineto .json/.json.gz, Nsight .sqlite, kernel tables .csv/.tsv, or folders of them")
      ->required();
  cmd->add_flag("--json", opts->json, "JSON output (schema failslow.inspect/1)");
  cmd->add_option("--threads", opts->threads, "files read in parallel (default: all cores)");
  cmd->add_option("--top", opts->top, "number of top kernels to list (default 10)");
  cmd->add_option("--rank", opts->rank_map, "PATH=RANK: the rank of a file without distributedInfo (repeatable)");
  cmd->callback([opts] { run(*opts); });
}

}  // namespace failslow_cli
