// failslow inspect TRACE...|DIR [--json]: what a trace set holds. By default one screen on the
// job: ranks, steps, clock alignment, step time across ranks (median and p95 of each rank's
// median step period), where a step's time goes, GPU idle time (no stream of the device busy),
// the ranks whose step time or kernel mix stands out (robust z-scores across ranks,
// detect/robust_score.hpp), and the top kernels and collectives by total time. --per-rank adds
// one block per rank (event counts, steps, per-step breakdown and phases, GPU time by class,
// idle with its per-stream parts, launch delays, clock offset); --rank N shows one rank's block;
// --json keeps everything (every rank, every step).
// failslow inspect FILE.fsum [--json]: what a summary file (failslow compress, the window
// compressor) holds: codec settings, ranks and their windows, events, kernel time per class,
// the top kernels, counted skips, and every damaged block with its offset. The file is streamed
// (4 MiB chunks through compress::summary_decoder), so memory follows ranks and keys, not its size.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <failslow/compress/codec.hpp>
#include <failslow/core/kernel_class.hpp>
#include <failslow/detect/robust_score.hpp>
#include <failslow/io/detail/file_bytes.hpp>
#include <failslow/stats/descriptive.hpp>
#include <failslow/trace/clock_align.hpp>
#include <failslow/trace/idle.hpp>
#include <failslow/trace/load_trace_set.hpp>
#include <failslow/trace/pg_topology.hpp>
#include <failslow/trace/step_breakdown.hpp>
#include <failslow/trace/steps.hpp>
#include <iostream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
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
  std::vector<std::string> rank_map;  // --rank-of PATH=RANK
  std::vector<std::string> rank_arg;  // --rank N (or PATH=RANK, the older spelling of --rank-of)
  bool per_rank = false;
};

std::string ms(double ns) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f ms", ns / 1e6);
  return buf;
}

nlohmann::json class_json(const failslow::trace::class_times& c) {
  return {{"compute", c.compute_ns}, {"communication", c.communication_ns}, {"memory", c.memory_ns}};
}

bool is_fsum(const std::string& path) {  // .fsum or .fsum.gz, as load_job takes them
  const auto ends_with = [&path](std::string_view end) {
    return path.size() > end.size() && path.compare(path.size() - end.size(), end.size(), end) == 0;
  };
  return ends_with(".fsum") || ends_with(".fsum.gz");
}

void inspect_summaries(const inspect_options& o) {
  using namespace failslow;
  if (o.paths.size() != 1) throw invalid_argument("inspect: give one .fsum file at a time");
  io::detail::file_stream f(o.paths.front());  // .fsum or gzipped .fsum
  const auto& classifier = kernel_classifier::defaults();
  struct rank_totals {
    std::uint64_t windows = 0, events = 0, skipped = 0, subsampled = 0;
    std::uint64_t first = 0, last = 0;
    trace::class_times gpu;  // kernel time per class, keys classified by name
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
      r.gpu.add(static_cast<kernel_class>(kt.cls), k.total_ns);
      kt.count += k.count;
      kt.total_ns += k.total_ns;
    }
  };
  compress::summary_decoder decoder(o.paths.front());
  std::string chunk(std::size_t{4} << 20, '\0');
  for (std::size_t n; (n = f.read(chunk.data(), chunk.size())) > 0;) {
    bytes += n;
    decoder.feed(std::string_view(chunk.data(), n), fold);
  }
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
                  {"kernel_time_ns", class_json(r.gpu)}});
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
        ms(r.gpu.compute_ns).c_str(), ms(r.gpu.communication_ns).c_str(), ms(r.gpu.memory_ns).c_str());
  std::cout << "\ntop kernels by total time:\n";
  for (const auto& k : tj) {
    std::string name = k["name"].get<std::string>();
    if (name.size() > 90) name = name.substr(0, 87) + "...";
    std::cout << "  " << ms(k["total_ns"].get<double>()) << "  " << k["count"].dump() << "x  ["
              << k["class"].get<std::string>() << "]  " << name << '\n';
  }
}

// What the job summary needs from one rank (the JSON keeps everything else).
struct rank_figures {
  int rank = -1;
  std::string source;
  std::size_t steps = 0;
  std::int64_t first_step = 0, last_step = 0;
  std::string steps_inferred_from;  // the optimizer-step marker, for a trace without ProfilerStep#N
  double step_median_ns = std::numeric_limits<double>::quiet_NaN();         // median period of its steps
  double compute_ns = 0, communication_ns = 0, memory_ns = 0, idle_ns = 0;  // per step, medians
  bool from_host = false;
  failslow::trace::class_times gpu;  // the whole trace's GPU time by class
  std::int64_t device_busy_ns = 0, device_idle_ns = 0, stream_idle_ns = 0;
  std::size_t streams = 0;
};

std::string rank_label(int rank) { return rank >= 0 ? "rank " + std::to_string(rank) : "rank unknown"; }

std::string percent(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %%", 100 * x);
  return buf;
}

// The ranks whose step time or kernel mix stands out: Iglewicz-Hoaglin robust z-scores across
// ranks (detect/robust_score.hpp), |z| > 3.5 and a difference from the median of at least 2 %
// (step time) or 2 percentage points (shares). Step time on the slow side only; the share of
// each kernel class in a rank's median step (compute + communication + memory) on both sides.
// Most extreme first.
// stage[i]: the pipeline stage of figs[i] when the traces' process groups tell the layout (ranks of
// one stage run the same layers, so their kernel mix is compared within the stage), else 0.
nlohmann::json stand_out(const std::vector<rank_figures>& figs, const std::vector<int>& stage, bool by_stage,
                         double threshold) {
  using failslow::detect::chart_side;
  nlohmann::json out = nlohmann::json::array();
  auto score = [&](const char* what, auto&& value, chart_side side, bool as_share) {
    std::map<int, std::pair<std::vector<double>, std::vector<std::size_t>>> groups;  // stage -> values, who
    for (std::size_t i = 0; i < figs.size(); ++i) {
      const double x = value(figs[i]);
      if (!std::isfinite(x)) continue;
      auto& g = groups[as_share ? stage[i] : 0];
      g.first.push_back(x);
      g.second.push_back(i);
    }
    for (const auto& kv : groups) {
      const auto& v = kv.second.first;
      const auto& who = kv.second.second;
      if (v.size() < 3) continue;  // no "most ranks" to stand out from
      const auto z = failslow::detect::robust_z_outliers(v, threshold, side);
      for (const auto k : z.flagged) {
        // A difference too small to matter is no finding, however low the noise (simulated
        // jobs): 2 % of the median step time, 2 percentage points of a share.
        if (std::abs(v[k] - z.median) < (as_share ? 0.02 : 0.02 * std::abs(z.median))) continue;
        nlohmann::json x = {{"rank", figs[who[k]].rank},  {"source", figs[who[k]].source},
                            {"quantity", what},           {"value", v[k]},
                            {"median", z.median},         {"z", z.z[k]},
                            {"ranks_compared", v.size()}, {"unit", as_share ? "fraction of the step's work" : "ns"}};
        if (as_share && by_stage) x["stage"] = kv.first;
        out.push_back(std::move(x));
      }
    }
  };
  score(
      "step time", [](const rank_figures& f) { return f.step_median_ns; }, chart_side::upper, false);
  // The mix of a rank's median step (GPU kernels, or host operators in a CPU job); the whole
  // trace's GPU time when it has no steps.
  auto mix = [](const rank_figures& f) {
    failslow::trace::class_times c;
    if (std::isfinite(f.step_median_ns)) {
      c.compute_ns = f.compute_ns;
      c.communication_ns = f.communication_ns;
      c.memory_ns = f.memory_ns;
    } else {
      c = f.gpu;
    }
    return c;
  };
  auto share = [&](const rank_figures& f, double failslow::trace::class_times::*part) {
    const auto c = mix(f);
    return c.total() > 0 ? c.*part / c.total() : std::numeric_limits<double>::quiet_NaN();
  };
  using ct = failslow::trace::class_times;
  score(
      "compute share", [&](const rank_figures& f) { return share(f, &ct::compute_ns); }, chart_side::both, true);
  score(
      "communication share", [&](const rank_figures& f) { return share(f, &ct::communication_ns); }, chart_side::both,
      true);
  score(
      "memory share", [&](const rank_figures& f) { return share(f, &ct::memory_ns); }, chart_side::both, true);
  std::stable_sort(out.begin(), out.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return std::abs(a["z"].get<double>()) > std::abs(b["z"].get<double>());
  });
  return out;
}

// One rank's block (--per-rank, --rank N), from its JSON.
void print_rank(const nlohmann::json& r) {
  if (r["rank"].get<int>() >= 0)
    std::cout << "\nrank " << r["rank"].get<int>() << " (" << r["rank_from"].get<std::string>() << ")  ";
  else
    std::cout << "\nrank unknown (no distributedInfo, no rank in the file name; --rank-of PATH=RANK sets it)  ";
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
      return ms(median_of([&](const nlohmann::json& row) { return row[key].get<double>(); }));
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
                  << ms(median_of([&](const nlohmann::json& row) { return row["phases"][n].get<double>(); }));
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
    std::cout << "  GPU idle (no stream busy) " << ms(id["idle_ns"]) << " of " << ms(id["span_ns"]) << "; per stream ("
              << id["streams"].dump() << " streams, summed) " << ms(id["stream_idle_ns"]) << ": host wait "
              << ms(id["host_wait_ns"]) << ", kernel wait " << ms(id["kernel_wait_ns"]) << ", other "
              << ms(id["other_ns"]) << "; launch delay median " << id["launch_delay_median_ns"].get<double>() / 1e3
              << " us; launch stalls " << id["launch_stalls"].dump() << '\n';
  }
  const auto& c = r["clock"];
  if (c["aligned"].get<bool>())
    std::cout << "  clock offset " << c["offset_ns"].get<double>() / 1000.0 << " us"
              << (c["reference"].get<bool>() ? " (reference)" : "") << " from " << c["collectives"].dump()
              << " collectives, spread " << c["spread_ns"].get<double>() / 1000.0 << " us\n";
  else
    std::cout << "  clock offset: not estimated (no collective shared with another rank)\n";
}

void print_top(const char* title, const nlohmann::json& list) {
  if (list.empty()) return;
  std::cout << '\n' << title << '\n';
  for (const auto& k : list) {
    std::string name = k["name"].get<std::string>();
    if (name.size() > 90) name = name.substr(0, 87) + "...";
    std::cout << "  " << ms(k["total_ns"]) << "  " << k["count"].dump() << "x  [" << k["class"].get<std::string>()
              << "]  " << name << '\n';
  }
}

void run(const inspect_options& o) {
  using namespace failslow;
  if (std::any_of(o.paths.begin(), o.paths.end(), is_fsum)) return inspect_summaries(o);
  trace::trace_set_options so;
  so.threads = o.threads;        // 0: every core
  std::optional<int> show_rank;  // --rank N
  std::vector<std::string> mappings = o.rank_map;
  for (const auto& m : o.rank_arg) {
    if (m.find('=') != std::string::npos) {  // --rank PATH=RANK, the older spelling of --rank-of
      mappings.push_back(m);
      continue;
    }
    int n = -1;
    const auto r = std::from_chars(m.data(), m.data() + m.size(), n);
    if (r.ec != std::errc() || r.ptr != m.data() + m.size() || n < 0)
      throw invalid_argument("inspect: --rank expects a rank number (or PATH=RANK), got '" + m + "'");
    show_rank = n;
  }
  for (const auto& m : mappings) {
    const auto eq = m.rfind('=');
    int rank = -1;
    const char* num = m.data() + (eq == std::string::npos ? m.size() : eq + 1);
    const auto r = std::from_chars(num, m.data() + m.size(), rank);
    if (eq == std::string::npos || eq == 0 || r.ec != std::errc() || r.ptr != m.data() + m.size() || rank < 0)
      throw invalid_argument("inspect: --rank-of expects PATH=RANK with a rank >= 0, got '" + m + "'");
    so.rank_of[m.substr(0, eq)] = rank;
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
  std::map<name_id, trace::name_time> kernels;  // over all ranks
  trace::class_times class_ns;
  std::vector<rank_figures> figs;
  nlohmann::json ranks = nlohmann::json::array();
  for (std::size_t t = 0; t < set.traces.size(); ++t) {
    const auto& rt = set.traces[t];
    const auto& d = rt.data;
    rank_figures fig;
    fig.rank = rt.rank;
    fig.source = d.source;
    nlohmann::json r;
    r["rank"] = rt.rank;
    r["rank_from"] = trace::to_string(rt.source);
    r["source"] = d.source;
    if (d.distributed) r["backend"] = d.distributed->backend;
    if (!d.devices.empty()) r["device"] = d.devices.front().name;
    std::uint64_t counts[event_kind_count] = {};
    for (const auto& e : d.events) ++counts[static_cast<int>(e.kind)];
    // GPU time by class and by name (trace/step_breakdown.hpp: the one classification rule).
    const auto dt = trace::device_time_by_class(d, set.names, classifier);
    fig.gpu = dt.by_class;
    class_ns += dt.by_class;
    for (const auto& n : dt.by_name) {
      auto& k = kernels.emplace(n.name, trace::name_time{n.name, n.cls, 0, 0}).first->second;
      k.count += n.count;
      k.total_ns += n.total_ns;
    }
    nlohmann::json cj;
    for (std::size_t k = 0; k < event_kind_count; ++k)
      cj[std::string(to_string(static_cast<event_kind>(k)))] = counts[k];
    cj["other"] = d.stats.unknown_category + d.stats.instants + d.stats.other_phases;
    cj["flows"] = d.stats.flows;
    cj["metadata"] = d.stats.metadata;
    cj["malformed"] = d.stats.malformed();
    cj["kind_by_name"] = d.stats.kind_by_name;  // no "cat" (plain Chrome trace): kind told by name
    r["events"] = cj;
    r["kernel_time_ns"] = class_json(dt.by_class);
    const auto steps = trace::map_steps(d, set.names);
    nlohmann::json sj;
    sj["count"] = steps.steps.size();
    fig.steps = steps.steps.size();
    if (!steps.inferred_from.empty()) sj["inferred_from"] = fig.steps_inferred_from = steps.inferred_from;
    if (!steps.steps.empty()) {
      sj["first"] = fig.first_step = steps.steps.front().number;
      sj["last"] = fig.last_step = steps.steps.back().number;
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
    fig.from_host = b.from_host;
    sj["measured_on"] = b.from_host ? "host" : "gpu";
    sj["gpu_events"] = b.device_events;
    nlohmann::json bj = nlohmann::json::array();
    std::vector<double> period, compute, comm, memory, idle;
    for (std::size_t k = 0; k < b.steps.size(); ++k) {
      const auto& st = b.steps[k];
      if (!st.has_work) continue;
      period.push_back(st.period_ns);
      compute.push_back(st.compute_ns);
      comm.push_back(st.communication_ns);
      memory.push_back(st.memory_ns);
      idle.push_back(st.idle_ns);
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
    if (!period.empty()) {
      fig.step_median_ns = stats::median(period);
      fig.compute_ns = stats::median(compute);
      fig.communication_ns = stats::median(comm);
      fig.memory_ns = stats::median(memory);
      fig.idle_ns = stats::median(idle);
    }
    sj["breakdown"] = bj;
    sj["phases"] = b.phase_names;
    r["steps"] = sj;
    // Idle: per device, the time when none of its streams ran anything; the per-stream gaps
    // (host wait, kernel wait, other) are summed over streams and labelled so.
    const auto idle_r = trace::analyze_idle(d);
    std::int64_t span = 0;
    for (const auto& dev : idle_r.devices) span += dev.span_ns;
    fig.device_busy_ns = idle_r.busy_ns;
    fig.device_idle_ns = idle_r.idle_ns;
    fig.stream_idle_ns = idle_r.stream_idle_ns;
    fig.streams = idle_r.streams.size();
    r["idle"] = {{"busy_ns", idle_r.busy_ns},
                 {"idle_ns", idle_r.idle_ns},
                 {"span_ns", span},
                 {"devices", idle_r.devices.size()},
                 {"streams", idle_r.streams.size()},
                 {"stream_idle_ns", idle_r.stream_idle_ns},
                 {"host_wait_ns", idle_r.host_wait_ns},
                 {"kernel_wait_ns", idle_r.kernel_wait_ns},
                 {"other_ns", idle_r.other_ns},
                 {"launch_delay_median_ns", idle_r.launch_delay_median_ns},
                 {"launch_delay_p99_ns", idle_r.launch_delay_p99_ns},
                 {"launch_stalls", idle_r.stalls.size()}};
    const auto& c = align.traces[t];
    r["clock"] = {{"offset_ns", c.offset_ns},
                  {"aligned", c.aligned},
                  {"reference", c.reference},
                  {"spread_ns", c.spread_ns},
                  {"collectives", c.instances}};
    ranks.push_back(r);
    figs.push_back(std::move(fig));
  }
  j["ranks"] = ranks;
  j["kernel_time_ns"] = class_json(class_ns);
  // Top kernels (compute and memory) and top collectives, by total time over all ranks.
  std::vector<trace::name_time> top(kernels.size());
  std::transform(kernels.begin(), kernels.end(), top.begin(), [](const auto& kv) { return kv.second; });
  std::sort(top.begin(), top.end(), [](const trace::name_time& a, const trace::name_time& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  auto top_json = [&](auto&& keep) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& k : top) {
      if (out.size() >= o.top) break;
      if (!keep(k)) continue;
      out.push_back({{"name", std::string(set.names.name(k.name))},
                     {"class", std::string(to_string(k.cls))},
                     {"count", k.count},
                     {"total_ns", k.total_ns}});
    }
    return out;
  };
  j["top_kernels"] = top_json([](const trace::name_time&) { return true; });
  j["top_compute_kernels"] = top_json([](const trace::name_time& k) { return k.cls != kernel_class::communication; });
  j["top_collectives"] = top_json([](const trace::name_time& k) { return k.cls == kernel_class::communication; });
  j["clock_alignment"] = {
      {"groups_used", align.keys_used}, {"groups_skipped", align.keys_skipped}, {"collectives", align.instances}};

  // The job at a glance: step time across ranks, where it goes, idle, who stands out.
  nlohmann::json job;
  {
    std::vector<double> step_medians, compute, comm, memory, idle;
    std::int64_t first = 0, last = 0;
    std::string inferred_from;
    std::size_t with_steps = 0, min_steps = 0, max_steps = 0, unknown = 0, aligned = 0;
    std::int64_t busy = 0, dev_idle = 0, stream_idle = 0;
    bool host = false;
    for (std::size_t t = 0; t < figs.size(); ++t) {
      const auto& f = figs[t];
      if (f.rank < 0) ++unknown;
      if (align.traces[t].aligned) ++aligned;
      busy += f.device_busy_ns;
      dev_idle += f.device_idle_ns;
      stream_idle += f.stream_idle_ns;
      if (f.steps) {
        first = with_steps ? std::min(first, f.first_step) : f.first_step;
        last = with_steps ? std::max(last, f.last_step) : f.last_step;
        min_steps = with_steps ? std::min(min_steps, f.steps) : f.steps;
        max_steps = with_steps ? std::max(max_steps, f.steps) : f.steps;
        if (!f.steps_inferred_from.empty()) inferred_from = f.steps_inferred_from;
        ++with_steps;
      }
      if (std::isfinite(f.step_median_ns)) {
        step_medians.push_back(f.step_median_ns);
        compute.push_back(f.compute_ns);
        comm.push_back(f.communication_ns);
        memory.push_back(f.memory_ns);
        idle.push_back(f.idle_ns);
        host = host || f.from_host;
      }
    }
    job["traces"] = figs.size();
    job["unknown_ranks"] = unknown;
    job["ranks_with_steps"] = with_steps;
    if (with_steps)
      job["steps"] = {{"first", first}, {"last", last}, {"per_rank_min", min_steps}, {"per_rank_max", max_steps}};
    if (with_steps && !inferred_from.empty()) job["steps"]["inferred_from"] = inferred_from;
    job["clock_aligned_ranks"] = aligned;
    if (!step_medians.empty()) {
      job["step_time_ns"] = {{"median", stats::median(step_medians)},
                             {"p95", stats::quantile(step_medians, 0.95)},
                             {"min", *std::min_element(step_medians.begin(), step_medians.end())},
                             {"max", *std::max_element(step_medians.begin(), step_medians.end())},
                             {"of", "each rank's median step period"}};
      job["per_step_ns"] = {
          {"measured_on", host ? "host" : "gpu"}, {"compute", stats::median(compute)},
          {"communication", stats::median(comm)}, {"memory", stats::median(memory)},
          {"idle", stats::median(idle)},          {"of", "median over ranks of each rank's median step"}};
    }
    job["gpu_idle_ns"] = {{"device", dev_idle}, {"device_busy", busy}, {"per_stream_summed", stream_idle}};
    // Pipeline stages from the traces' process groups (trace/pg_topology.hpp), when they tell.
    std::vector<io::distributed_info> infos;
    for (const auto& rt : set.traces)
      if (rt.data.distributed) infos.push_back(*rt.data.distributed);
    std::vector<int> stage(figs.size(), 0);
    bool by_stage = false;
    if (const auto layout = trace::infer_topology(infos); layout && layout->sizes.pp > 1) {
      const auto topo = layout->to_topology();
      by_stage = true;
      for (std::size_t t = 0; t < figs.size(); ++t)
        if (figs[t].rank >= 0 && figs[t].rank < topo.world_size())
          stage[t] = topo.coordinate(figs[t].rank, parallel_dim::pp);
      job["layout"] = {{"tp", layout->sizes.tp}, {"cp", layout->sizes.cp}, {"ep", layout->sizes.ep},
                       {"dp", layout->sizes.dp}, {"pp", layout->sizes.pp}, {"order", layout->order}};
    }
    job["stand_out_threshold"] = 3.5;
    job["stand_out_mix_compared"] = by_stage ? "within each pipeline stage" : "across all ranks";
    job["stand_out"] = stand_out(figs, stage, by_stage, 3.5);
  }
  j["job"] = job;

  if (o.json) {
    std::cout << j.dump(2) << '\n';
    return;
  }
  if (show_rank) {
    bool found = false;
    for (const auto& r : ranks)
      if (r["rank"].get<int>() == *show_rank) {
        print_rank(r);
        found = true;
      }
    if (!found)
      throw invalid_argument("inspect: no trace of rank " + std::to_string(*show_rank) + " among the " +
                             std::to_string(ranks.size()) + " read");
    return;
  }
  std::cout << set.traces.size() << " trace(s), world size " << set.world_size;
  if (job["unknown_ranks"].get<std::size_t>())
    std::cout << ", " << job["unknown_ranks"].dump() << " of unknown rank (--rank-of PATH=RANK)";
  std::cout << '\n';
  if (!set.missing_ranks.empty())
    std::cout << "missing ranks: " << set.missing_ranks.size() << " (first " << set.missing_ranks.front() << ")\n";
  if (!set.duplicate_ranks.empty())
    std::cout << "duplicate ranks: " << nlohmann::json(set.duplicate_ranks).dump() << '\n';
  for (const auto& f : set.skipped_files) std::cout << "skipped (JSON without traceEvents): " << f << '\n';
  if (job.contains("steps")) {
    const auto& st = job["steps"];
    std::cout << "steps: #" << st["first"].dump() << " .. #" << st["last"].dump() << ", " << st["per_rank_min"].dump();
    if (st["per_rank_max"] != st["per_rank_min"]) std::cout << " to " << st["per_rank_max"].dump();
    std::cout << " per rank (" << job["ranks_with_steps"].dump() << " of " << figs.size() << " ranks have steps)\n";
    if (st.contains("inferred_from"))
      std::cout << "  no ProfilerStep#N annotations: steps are the iterations between optimizer steps ("
                << st["inferred_from"].get<std::string>() << "), numbered from 0\n";
  } else {
    std::cout << "steps: none found (no ProfilerStep#N annotation, optimizer step or step column)\n";
  }
  std::cout << "clock alignment: " << job["clock_aligned_ranks"].dump() << " of " << figs.size()
            << " ranks aligned from " << align.instances << " collectives (" << align.keys_used << " groups used, "
            << align.keys_skipped << " skipped)\n";
  if (job.contains("step_time_ns")) {
    const auto& s = job["step_time_ns"];
    std::cout << "step time across ranks (each rank's median): median " << ms(s["median"]) << ", p95 " << ms(s["p95"])
              << ", min " << ms(s["min"]) << ", max " << ms(s["max"]) << '\n';
    const auto& p = job["per_step_ns"];
    const bool host = p["measured_on"] == "host";
    std::cout << "per step (median rank, " << (host ? "CPU operators" : "GPU") << "): compute " << ms(p["compute"])
              << ", communication " << ms(p["communication"]) << (host ? "" : ", memory " + ms(p["memory"]))
              << ", idle " << ms(p["idle"]) << '\n';
  }
  if (job["gpu_idle_ns"]["device_busy"].get<std::int64_t>() > 0) {
    const auto& g = job["gpu_idle_ns"];
    const double idle = g["device"].get<double>(), busy = g["device_busy"].get<double>();
    std::cout << "GPU idle (no stream of the device busy), all ranks: " << ms(idle) << " of " << ms(idle + busy) << " ("
              << percent(idle / (idle + busy))
              << "); per-stream idle summed over streams: " << ms(g["per_stream_summed"]) << '\n';
  }
  const auto& out = job["stand_out"];
  if (figs.size() < 3) {
    std::cout << "ranks that stand out: needs 3 ranks or more\n";
  } else if (out.empty()) {
    std::cout << "ranks that stand out (robust |z| > 3.5, differing by 2 % or more): none\n";
  } else {
    std::cout << "ranks that stand out (robust |z| > 3.5; kernel mix compared "
              << job["stand_out_mix_compared"].get<std::string>() << "):\n";
    std::size_t shown = 0;
    std::vector<int> listed;  // one line per rank: its most extreme quantity (--json has all)
    for (const auto& x : out) {
      const int rank = x["rank"].get<int>();
      if (rank >= 0 && std::find(listed.begin(), listed.end(), rank) != listed.end()) continue;
      listed.push_back(rank);
      if (shown++ == 12) {
        std::cout << "  ... more (--json)\n";
        break;
      }
      char buf[64];
      std::snprintf(buf, sizeof buf, "%+.1f", x["z"].get<double>());
      const bool share = x["unit"] != "ns";
      const auto v = x["value"].get<double>(), m = x["median"].get<double>();
      std::cout << "  " << rank_label(x["rank"].get<int>()) << ": " << x["quantity"].get<std::string>() << ' '
                << (share ? percent(v) : ms(v)) << " vs median " << (share ? percent(m) : ms(m))
                << (x.contains("stage") ? " of stage " + x["stage"].dump() : std::string()) << " (z " << buf << ")\n";
    }
  }
  print_top("top kernels by total time (all ranks):", j["top_compute_kernels"]);
  print_top("top collectives by total time (all ranks):", j["top_collectives"]);
  if (o.per_rank)
    for (const auto& r : ranks) print_rank(r);
  else
    std::cout << "\nper rank: --per-rank (all) or --rank N (one); everything: --json\n";
}

}  // namespace

void add_inspect_command(CLI::App& app) {
  auto opts = std::make_shared<inspect_options>();
  CLI::App* cmd = app.add_subcommand(
      "inspect",
      "What a trace set (or a .fsum file) holds: a job summary (ranks, steps, step time across ranks, ranks that "
      "stand out, top kernels and collectives); per rank with --per-rank or --rank N");
  cmd->add_option("traces", opts->paths,
                  "Kineto .json/.json.gz, Nsight .sqlite, kernel tables .csv/.tsv, or folders of them; or one "
                  ".fsum summary file")
      ->required();
  cmd->add_flag("--json", opts->json,
                "JSON output, everything (schema failslow.inspect/1; failslow.inspect_summaries/1 for .fsum)");
  cmd->add_flag("--per-rank", opts->per_rank, "after the job summary, one block per rank");
  cmd->add_option("--rank", opts->rank_arg, "N: only rank N's block (PATH=RANK: as --rank-of)");
  cmd->add_option("--rank-of", opts->rank_map, "PATH=RANK: the rank of a file without distributedInfo (repeatable)");
  cmd->add_option("--threads", opts->threads, "files read in parallel (default: all cores)");
  cmd->add_option("--top", opts->top, "number of top kernels and of top collectives to list (default 10)");
  cmd->callback([opts] { run(*opts); });
}

}  // namespace failslow_cli
