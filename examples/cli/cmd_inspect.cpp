// failslow inspect TRACE...|DIR [--json]: what a trace set holds, the way HTA's overview shows
// it: ranks and world size, steps, event counts per category, communication / compute /
// memory kernel time, the top kernels by total time, the GPU idle-time breakdown per rank and
// the estimated clock skew per rank.
// failslow inspect FILE.fsum [--json]: what a summary file (failslow compress, the window
// compressor) holds: codec settings, ranks and their windows, events, kernel time per class,
// the top kernels, counted skips, and every damaged block with its offset. The file is streamed
// (4 MiB chunks through compress::summary_decoder), so memory follows ranks and keys, not its size.
#include <algorithm>
#include <cstdio>
#include <failslow/compress/codec.hpp>
#include <failslow/core/kernel_class.hpp>
#include <failslow/stats/descriptive.hpp>
#include <failslow/trace/clock_align.hpp>
#include <failslow/trace/idle.hpp>
#include <failslow/trace/step_breakdown.hpp>
#include <failslow/trace/steps.hpp>
#include <failslow/trace/trace_set.hpp>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <unordered_map>
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

bool is_fsum(const std::string& path) { return path.size() > 5 && path.compare(path.size() - 5, 5, ".fsum") == 0; }

void inspect_summaries(const inspect_options& o) {
  using namespace failslow;
  if (o.paths.size() != 1) throw invalid_argument("inspect: give one .fsum file at a time");
  std::ifstream f(o.paths.front(), std::ios::binary);
  if (!f) throw invalid_argument("inspect: cannot open '" + o.paths.front() + "'");
  const auto& classifier = kernel_classifier::defaults();
  struct rank_totals {
    std::uint64_t windows = 0, events = 0, skipped = 0, subsampled = 0;
    std::uint64_t first = 0, last = 0;
    double class_ns[3] = {0, 0, 0};
  };
  struct key_totals {
    std::uint64_t count = 0;
    double total_ns = 0;
    int cls = -1;  // kernel_class, found when the key first appears
  };
  // Streamed: the file is read in 4 MiB chunks and each window folded into per-rank and per-key
  // totals as the decoder hands it over, so memory is the totals plus one chunk, not the file
  // and every decoded window (11x the file before). Hash maps: one lookup per window and per key
  // (ids come from the file, so no id-indexed arrays); sorted for the output.
  std::unordered_map<std::int32_t, rank_totals> ranks;
  std::unordered_map<name_id, key_totals> keys;
  std::uint64_t windows = 0, bytes = 0;
  auto name_in = [](const compress::decoded_summaries& d, name_id id) {
    const auto it = d.names.find(id);
    return it == d.names.end() ? "<name " + std::to_string(id) + " lost>" : it->second;
  };
  auto fold = [&](compress::window_summary&& w, const compress::decoded_summaries& so_far) {
    ++windows;
    auto& r = ranks[w.rank];
    r.first = r.windows ? std::min(r.first, w.window_id) : w.window_id;
    r.last = r.windows ? std::max(r.last, w.window_id) : w.window_id;
    ++r.windows;
    r.events += w.event_count();
    r.skipped += w.skipped.total();
    r.subsampled += w.subsampled;
    for (const auto& k : w.kernels) {
      auto& kt = keys[k.key];
      // Classified by the name the stream has defined so far: the encoder writes each name once,
      // before the first window using it, so that is the file's name, or none if its block was
      // lost (then "<name N lost>", as at the end). Time is added in file order, as before, so
      // the sums are the same doubles.
      if (kt.cls < 0) kt.cls = static_cast<int>(classifier.classify(name_in(so_far, k.key)));
      r.class_ns[kt.cls] += k.total_ns;
      kt.count += k.count;
      kt.total_ns += k.total_ns;
    }
  };
  compress::summary_decoder decoder(o.paths.front());
  std::string chunk(std::size_t{4} << 20, '\0');
  while (f) {
    f.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto n = static_cast<std::size_t>(f.gcount());
    if (n == 0) break;
    bytes += n;
    decoder.feed(std::string_view(chunk.data(), n), fold);
  }
  if (f.bad()) throw invalid_argument("inspect: cannot read '" + o.paths.front() + "'");
  decoder.finish(fold);
  const auto& d = decoder.state();
  auto name_of = [&](name_id id) { return name_in(d, id); };
  std::vector<std::pair<std::int32_t, rank_totals>> by_rank(ranks.begin(), ranks.end());
  std::sort(by_rank.begin(), by_rank.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  nlohmann::json j;
  j["schema"] = "failslow.inspect_summaries/1";
  j["source"] = o.paths.front();
  j["bytes"] = bytes;
  j["codec"] = {{"precision_bits", d.options.precision_bits}, {"key_frame_interval", d.options.key_frame_interval}};
  j["windows"] = windows;
  j["keys"] = d.names.size();
  nlohmann::json damaged = nlohmann::json::array();
  for (const auto& b : d.damaged) damaged.push_back({{"offset", b.offset}, {"reason", b.reason}});
  j["damaged_blocks"] = damaged;
  j["windows_without_reference"] = d.windows_without_reference;
  nlohmann::json rj = nlohmann::json::array();
  for (const auto& [rank, r] : by_rank)
    rj.push_back({{"rank", rank},
                  {"windows", r.windows},
                  {"first_window", r.first},
                  {"last_window", r.last},
                  {"events", r.events},
                  {"skipped", r.skipped},
                  {"subsampled", r.subsampled},
                  {"kernel_time_ns",
                   {{"compute", r.class_ns[0]}, {"communication", r.class_ns[1]}, {"memory", r.class_ns[2]}}}});
  j["ranks"] = rj;
  std::vector<std::pair<name_id, key_totals>> top(keys.begin(), keys.end());
  std::sort(top.begin(), top.end(), [](const auto& a, const auto& b) {
    return a.second.total_ns != b.second.total_ns ? a.second.total_ns > b.second.total_ns : a.first < b.first;
  });
  if (top.size() > o.top) top.resize(o.top);
  nlohmann::json tj = nlohmann::json::array();
  for (const auto& [id, k] : top)
    tj.push_back({{"name", name_of(id)},
                  {"class", std::string(to_string(classifier.classify(name_of(id))))},
                  {"count", k.count},
                  {"total_ns", k.total_ns}});
  j["top_kernels"] = tj;
  if (o.json) {
    std::cout << j.dump(2) << '\n';
    return;
  }
  std::printf("%s: %llu bytes, %llu windows of %zu rank(s), %zu kernel keys (precision %u bits, key frame every %u)\n",
              o.paths.front().c_str(), static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(windows),
              ranks.size(), d.names.size(), d.options.precision_bits, d.options.key_frame_interval);
  if (!d.damaged.empty() || d.windows_without_reference) {
    std::printf("damaged blocks: %zu; delta windows skipped for a lost reference: %llu\n", d.damaged.size(),
                static_cast<unsigned long long>(d.windows_without_reference));
    for (const auto& b : d.damaged)
      std::printf("  at byte %llu: %s\n", static_cast<unsigned long long>(b.offset), b.reason.c_str());
  }
  for (const auto& [rank, r] : by_rank)
    std::printf(
        "rank %d: windows %llu (#%llu .. #%llu), %llu events (%llu skipped, %llu via reservoir); GPU time "
        "compute %s, communication %s, memory %s\n",
        rank, static_cast<unsigned long long>(r.windows), static_cast<unsigned long long>(r.first),
        static_cast<unsigned long long>(r.last), static_cast<unsigned long long>(r.events),
        static_cast<unsigned long long>(r.skipped), static_cast<unsigned long long>(r.subsampled),
        ms(static_cast<std::int64_t>(r.class_ns[0])).c_str(), ms(static_cast<std::int64_t>(r.class_ns[1])).c_str(),
        ms(static_cast<std::int64_t>(r.class_ns[2])).c_str());
  std::cout << "\ntop kernels by total time:\n";
  for (const auto& k : tj) {
    std::string name = k["name"].get<std::string>();
    if (name.size() > 90) name = name.substr(0, 87) + "...";
    std::cout << "  " << ms(static_cast<std::int64_t>(k["total_ns"].get<double>())) << "  " << k["count"].dump()
              << "x  [" << k["class"].get<std::string>() << "]  " << name << '\n';
  }
}

void run(const inspect_options& o) {
  using namespace failslow;
  if (std::any_of(o.paths.begin(), o.paths.end(), is_fsum)) return inspect_summaries(o);
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
  j["skipped_files"] = set.skipped_files;
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
    cj["kind_by_name"] = d.stats.kind_by_name;  // no "cat" (plain Chrome trace): kind told by name
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
    // Where each step's time went (trace/step_breakdown.hpp): GPU kernels by class, or, in a
    // trace without GPU activity, host operators (collectives' time is communication).
    const auto b = trace::breakdown_steps(d, steps, set.names);
    sj["measured_on"] = b.from_host ? "host" : "gpu";
    sj["gpu_events"] = b.device_events;
    nlohmann::json bj = nlohmann::json::array();
    for (std::size_t k = 0; k < b.steps.size(); ++k) {
      const auto& st = b.steps[k];
      if (!st.has_work) continue;
      nlohmann::json ph = nlohmann::json::object();
      for (std::size_t p = 0; p < b.phase_names.size(); ++p) ph[b.phase_names[p]] = b.phase_compute[p][k];
      bj.push_back({{"step", st.number},
                    {"period_ns", st.period_ns},
                    {"compute_ns", st.compute_ns},
                    {"communication_ns", st.communication_ns},
                    {"memory_ns", st.memory_ns},
                    {"idle_ns", st.idle_ns},
                    {"phases", ph}});
    }
    sj["breakdown"] = bj;
    sj["phases"] = b.phase_names;
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
  for (const auto& f : set.skipped_files) std::cout << "skipped (JSON without traceEvents): " << f << '\n';
  for (const auto& r : ranks) {
    if (r["rank"].get<int>() >= 0)
      std::cout << "\nrank " << r["rank"].get<int>() << " (" << r["rank_from"].get<std::string>() << ")  ";
    else
      std::cout << "\nrank unknown (no distributedInfo, no rank in the file name; --rank PATH=RANK sets it)  ";
    std::cout << r["source"].get<std::string>() << '\n';
    std::cout << "  events:";
    for (const auto& [k, v] : r["events"].items()) std::cout << ' ' << k << '=' << v.dump();
    std::cout << '\n';
    const auto& s = r["steps"];
    std::cout << "  steps: " << s["count"].dump();
    if (s.contains("first")) std::cout << " (#" << s["first"].dump() << " .. #" << s["last"].dump() << ")";
    std::cout << '\n';
    if (!s["breakdown"].empty()) {
      // Medians over the steps; --json has every step.
      auto median_of = [&](auto&& value) {
        std::vector<double> v;
        for (const auto& row : s["breakdown"]) v.push_back(value(row));
        return failslow::stats::median(v);
      };
      auto ms_of = [&](const char* key) {
        return ms(
            static_cast<std::int64_t>(median_of([&](const nlohmann::json& row) { return row[key].get<double>(); })));
      };
      const bool host = s["measured_on"] == "host";
      std::cout << "  per step (median of " << s["breakdown"].size() << (host ? ", CPU operators" : ", GPU")
                << "): period " << ms_of("period_ns") << "; compute " << ms_of("compute_ns") << ", communication "
                << ms_of("communication_ns") << (host ? "" : ", memory " + ms_of("memory_ns")) << ", idle "
                << ms_of("idle_ns") << '\n';
      if (!s["phases"].empty()) {
        std::cout << "  phases (compute per step, median):";
        std::size_t shown = 0;
        for (const auto& name : s["phases"]) {
          if (shown++ == 8) break;
          const auto n = name.get<std::string>();
          std::cout << (shown > 1 ? ", " : " ") << n << ' '
                    << ms(static_cast<std::int64_t>(
                           median_of([&](const nlohmann::json& row) { return row["phases"][n].get<double>(); })));
        }
        std::cout << '\n';
      }
    }
    const auto& kt = r["kernel_time_ns"];
    if (s["gpu_events"] == 0) {
      std::cout << "  no GPU activity\n";
    } else {
      std::cout << "  GPU time: compute " << ms(kt["compute"]) << ", communication " << ms(kt["communication"])
                << ", memory " << ms(kt["memory"]) << '\n';
      const auto& id = r["idle"];
      std::cout << "  GPU idle " << ms(id["idle_ns"]) << ": host wait " << ms(id["host_wait_ns"]) << ", kernel wait "
                << ms(id["kernel_wait_ns"]) << ", other " << ms(id["other_ns"]) << "; launch delay median "
                << id["launch_delay_median_ns"].get<double>() / 1e3 << " us; launch stalls "
                << id["launch_stalls"].dump() << '\n';
    }
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
      "inspect",
      "What a trace set (or a .fsum file) holds: ranks, steps, event counts, kernel time, idle time, clock skew");
  cmd->add_option("traces", opts->paths,
                  "Kineto .json/.json.gz, Nsight .sqlite, kernel tables .csv/.tsv, or folders of them; or one "
                  ".fsum summary file")
      ->required();
  cmd->add_flag("--json", opts->json,
                "JSON output (schema failslow.inspect/1; failslow.inspect_summaries/1 for .fsum)");
  cmd->add_option("--threads", opts->threads, "files read in parallel (default: all cores)");
  cmd->add_option("--top", opts->top, "number of top kernels to list (default 10)");
  cmd->add_option("--rank", opts->rank_map, "PATH=RANK: the rank of a file without distributedInfo (repeatable)");
  cmd->callback([opts] { run(*opts); });
}

}  // namespace failslow_cli
