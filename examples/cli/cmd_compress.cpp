// failslow compress TRACE...|DIR -o FILE.fsum [--key-frame K] [--precision BITS] [--cap N]
//   [--window-ms X] [--no-steps] [--fidelity | --no-fidelity] [--fidelity-pairs N] [--json]:
// the GPU activities of each rank's trace become one window summary per ProfilerStep
// (compress/trace_windows.hpp), encoded as .fsum (compress/codec.hpp). Prints what went in and
// out, the compression ratio against the input files, against the same events as minimal Kineto
// JSON and as 32-byte binary records, and the fidelity: W1(decoded summary, exact durations) /
// mean per (window, kernel key), median and p95, measured on the file as written (decoded back;
// every window of the file is checked against what was encoded, whatever the fidelity mode).
// Fidelity costs more than compressing (it sorts every key's exact durations), so by default it
// is measured on a sample: whole windows picked by a fixed hash of (rank, window id), in hash
// order, while their (window, key) pairs stay within --fidelity-pairs (400; at least one window).
// The same traces give the same sample. --fidelity measures every pair; --no-fidelity none. The
// output says which: "fidelity": {"mode", "sampled", "windows_evaluated", "windows_total",
// "pairs", "pairs_total", ...}.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <failslow/compress/codec.hpp>
#include <failslow/compress/fidelity.hpp>
#include <failslow/compress/trace_windows.hpp>
#include <failslow/trace/steps.hpp>
#include <failslow/trace/trace_set.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "commands.hpp"

namespace failslow_cli {
namespace {

struct compress_options {
  std::vector<std::string> paths;
  std::string out;
  unsigned key_frame = 16;
  unsigned precision = 7;
  std::size_t cap = 4096;
  double window_ms = 0;
  bool no_steps = false;
  bool json = false;
  unsigned threads = 0;
  bool fidelity_all = false;
  bool no_fidelity = false;
  std::size_t fidelity_pairs = 400;
};

enum class fidelity_mode { sample, all, off };
const char* to_string(fidelity_mode m) {
  return m == fidelity_mode::all ? "all" : m == fidelity_mode::off ? "off" : "sample";
}

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The bytes of a GPU event written as Kineto does with only the fields a reader needs (name,
// ph, cat, pid, tid, ts, dur, args device/stream/correlation): a lower bound on the real size,
// which also carries grid, block, registers, occupancy, External id, ...
// The length that snprintf of
//   {"ph":"X","cat":"kernel","name":"","pid":%d,"tid":%u,"ts":%.3f,"dur":%.3f,
//    "args":{"device":%d,"stream":%u,"correlation":%llu}},
// gives, counted with to_chars (the same digits: fixed precision is printf's %.3f), because
// printf's exact decimal expansion was a tenth of the whole command's time.
std::size_t minimal_kineto_bytes(std::string_view name, const failslow::event& e) {
  constexpr std::string_view fixed =
      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"\",\"pid\":,\"tid\":,\"ts\":,\"dur\":,"
      "\"args\":{\"device\":,\"stream\":,\"correlation\":}},";
  char buf[128];  // %.3f of an int64 count of ns / 1e3: at most 21 characters
  const auto len = [&buf](auto... value_and_format) {
    return static_cast<std::size_t>(std::to_chars(buf, buf + sizeof buf, value_and_format...).ptr - buf);
  };
  const auto us = [](std::int64_t ns) { return static_cast<double>(ns) / 1e3; };
  const std::size_t device = len(static_cast<int>(e.device)), stream = len(static_cast<unsigned>(e.stream));
  return fixed.size() + 2 * (device + stream) + len(us(e.start_ns), std::chars_format::fixed, 3) +
         len(us(e.duration_ns()), std::chars_format::fixed, 3) + len(static_cast<unsigned long long>(e.correlation)) +
         name.size();
}

double quantile_of_sorted(const std::vector<double>& x, double p) {
  if (x.empty()) return 0;
  return x[std::min(x.size() - 1, static_cast<std::size_t>(p * static_cast<double>(x.size())))];
}

void run(const compress_options& o) {
  using namespace failslow;
  if (o.out.empty()) throw invalid_argument("compress: -o FILE.fsum is required");
  if (!(o.window_ms >= 0)) throw invalid_argument("compress: --window-ms must be >= 0");
  if (o.fidelity_pairs == 0) throw invalid_argument("compress: --fidelity-pairs must be >= 1");
  trace::trace_set_options so;
  so.threads = o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  so.assume_missing_ranks = true;  // a .fsum window needs a rank: traces that state none take free ones
  const auto set = trace::load_trace_set(o.paths, so);

  compress::trace_window_options wo;
  wo.compressor.per_key_cap = o.cap;
  wo.compressor.max_window_ns = static_cast<std::int64_t>(o.window_ms * 1e6);
  wo.use_steps = !o.no_steps;
  compress::codec_options co;
  co.key_frame_interval = o.key_frame;
  co.precision_bits = o.precision;

  struct rank_windows {
    std::vector<compress::window_summary> windows;
    std::vector<std::int64_t> window_of_event;
  };
  std::vector<rank_windows> per_trace(set.traces.size());
  compress::trace_window_counts total;
  std::uint64_t input_bytes = 0, kineto_bytes = 0;
  for (std::size_t t = 0; t < set.traces.size(); ++t) {
    const auto& rt = set.traces[t];
    std::error_code ec;
    const auto size = std::filesystem::file_size(rt.data.source, ec);
    if (!ec) input_bytes += size;
    const auto steps = trace::map_steps(rt.data, set.names);
    auto& rw = per_trace[t];
    const auto c = compress::summarize_trace(
        rt.data, steps, rt.rank, wo, [&](compress::window_summary&& w) { rw.windows.push_back(std::move(w)); },
        &rw.window_of_event);
    if (!c.accounted()) throw domain_error("compress: events of " + rt.data.source + " are not accounted for");
    total.device_events += c.device_events;
    total.compressed += c.compressed;
    total.outside_steps += c.outside_steps;
    total.skipped += c.skipped;
    total.host_events += c.host_events;
    total.windows += c.windows;
    for (std::size_t i = 0; i < rt.data.events.size(); ++i)
      if (rw.window_of_event[i] >= 0)
        kineto_bytes += minimal_kineto_bytes(set.names.name(rt.data.events[i].name), rt.data.events[i]);
  }

  // Encode as a live stream would arrive: window by window, ranks interleaved.
  struct stream_entry {
    std::uint64_t window_id;
    std::int32_t rank;
    std::size_t trace;
    const compress::window_summary* w;
  };
  std::vector<stream_entry> stream;
  for (std::size_t t = 0; t < per_trace.size(); ++t)
    for (const auto& w : per_trace[t].windows) stream.push_back({w.window_id, w.rank, t, &w});
  std::sort(stream.begin(), stream.end(), [](const auto& a, const auto& b) {
    return std::tie(a.window_id, a.rank, a.trace) < std::tie(b.window_id, b.rank, b.trace);
  });
  compress::summary_encoder encoder([&](name_id id) { return std::string(set.names.name(id)); }, co);
  std::string bytes = encoder.header();
  for (const auto& s : stream) encoder.encode(*s.w, bytes);
  {
    std::ofstream f(o.out, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!f) throw invalid_argument("compress: cannot write '" + o.out + "'");
  }

  // Which windows the fidelity is measured on (indices into `stream`).
  const fidelity_mode mode = o.no_fidelity    ? fidelity_mode::off
                             : o.fidelity_all ? fidelity_mode::all
                                              : fidelity_mode::sample;
  std::uint64_t pairs_total = 0;
  for (const auto& s : stream) pairs_total += s.w->kernels.size();
  std::vector<char> evaluate(stream.size(), mode == fidelity_mode::all);
  if (mode == fidelity_mode::sample) {
    std::vector<std::pair<std::uint64_t, std::size_t>> by_hash(stream.size());
    for (std::size_t i = 0; i < stream.size(); ++i)
      by_hash[i] = {splitmix64(splitmix64(static_cast<std::uint32_t>(stream[i].rank)) ^ stream[i].window_id), i};
    std::sort(by_hash.begin(), by_hash.end());
    std::uint64_t pairs = 0;
    for (const auto& [hash, i] : by_hash) {
      const std::size_t k = stream[i].w->kernels.size();
      if (pairs > 0 && pairs + k > o.fidelity_pairs) break;
      evaluate[i] = 1;
      pairs += k;
    }
  }
  const auto windows_evaluated = static_cast<std::uint64_t>(std::count(evaluate.begin(), evaluate.end(), 1));

  // The file as written, decoded back: each window must be the one encoded at its place (same
  // rank, id, keys and counts); the windows to evaluate are kept, the others dropped.
  std::vector<compress::window_summary> kept;
  std::vector<std::size_t> kept_at(stream.size(), SIZE_MAX);
  std::size_t at = 0;
  const auto decoded = compress::decode_summaries_to(
      bytes,
      [&](compress::window_summary&& w, const compress::decoded_summaries&) {
        if (at >= stream.size()) throw domain_error("compress: the written file decodes to more windows than encoded");
        const auto& e = *stream[at].w;
        bool same = w.rank == e.rank && w.window_id == e.window_id && w.kernels.size() == e.kernels.size();
        for (std::size_t k = 0; same && k < w.kernels.size(); ++k)
          same = w.kernels[k].key == e.kernels[k].key && w.kernels[k].count == e.kernels[k].count;
        if (!same) throw domain_error("compress: a window or key is missing from the decoded file");
        if (evaluate[at]) {
          kept_at[at] = kept.size();
          kept.push_back(std::move(w));
        }
        ++at;
      },
      o.out);
  if (!decoded.damaged.empty() || at != stream.size())
    throw domain_error("compress: the written file does not decode cleanly");

  // Fidelity: every evaluated (window, key) against the exact durations that went into it.
  std::vector<double> rel_w1;
  std::uint64_t zero_mean_keys = 0;
  std::vector<std::vector<std::pair<std::int64_t, const compress::window_summary*>>> evaluated_of(set.traces.size());
  for (std::size_t i = 0; i < stream.size(); ++i)
    if (evaluate[i])
      evaluated_of[stream[i].trace].emplace_back(static_cast<std::int64_t>(stream[i].window_id), &kept[kept_at[i]]);
  for (std::size_t t = 0; t < set.traces.size(); ++t) {
    auto& windows = evaluated_of[t];
    if (windows.empty()) continue;
    std::sort(windows.begin(), windows.end());
    const auto& ev = set.traces[t].data.events;
    const auto& wof = per_trace[t].window_of_event;
    std::map<std::pair<std::size_t, name_id>, std::vector<double>> exact;  // (index in windows, key)
    for (std::size_t i = 0; i < ev.size(); ++i) {
      if (wof[i] < 0) continue;
      const auto it = std::lower_bound(windows.begin(), windows.end(), wof[i],
                                       [](const auto& w, std::int64_t id) { return w.first < id; });
      if (it == windows.end() || it->first != wof[i]) continue;  // a window outside the sample
      exact[{static_cast<std::size_t>(it - windows.begin()), ev[i].name}].push_back(
          static_cast<double>(ev[i].duration_ns()));
    }
    for (const auto& [key, durations] : exact) {
      const compress::kernel_summary* k = windows[key.first].second->find(key.second);
      if (!k) throw domain_error("compress: a window or key is missing from the decoded file");
      if (!(*std::max_element(durations.begin(), durations.end()) > 0)) {
        ++zero_mean_keys;  // zero-length events only: nothing to be relative to
        continue;
      }
      rel_w1.push_back(compress::relative_w1(*k, durations));
    }
  }
  std::sort(rel_w1.begin(), rel_w1.end());

  std::uint64_t name_bytes = 0;  // the one-off dictionary (before LZ): long C++ names weigh on short traces
  for (const auto& [id, n] : decoded.names) name_bytes += n.size();
  const auto ratio = [&](std::uint64_t in) {
    return bytes.empty() ? 0.0 : static_cast<double>(in) / static_cast<double>(bytes.size());
  };
  nlohmann::json j;
  j["schema"] = "failslow.compress/1";
  j["output"] = o.out;
  j["traces"] = set.traces.size();
  j["skipped_files"] = set.skipped_files;
  j["windows"] = total.windows;
  j["keys"] = decoded.names.size();
  j["events"] = {{"device", total.device_events},
                 {"compressed", total.compressed},
                 {"outside_steps", total.outside_steps},
                 {"skipped", total.skipped},
                 {"host_not_compressed", total.host_events}};
  j["bytes"] = {{"fsum", bytes.size()},
                {"name_strings", name_bytes},
                {"input_files", input_bytes},
                {"minimal_kineto_json", kineto_bytes},
                {"records_32B", total.compressed * 32}};
  j["ratio"] = {{"vs_input_files", ratio(input_bytes)},
                {"vs_minimal_kineto_json", ratio(kineto_bytes)},
                {"vs_32B_records", ratio(total.compressed * 32)}};
  // sampled: the figures come from part of the windows (never with --no-fidelity: no figures).
  const bool sampled = mode == fidelity_mode::sample && windows_evaluated < stream.size();
  j["fidelity"] = {
      {"mode", to_string(mode)},        {"sampled", sampled},       {"windows_evaluated", windows_evaluated},
      {"windows_total", stream.size()}, {"pairs", rel_w1.size()},   {"zero_duration_pairs", zero_mean_keys},
      {"pairs_total", pairs_total},     {"w1_rel_median", nullptr}, {"w1_rel_p95", nullptr}};
  if (mode == fidelity_mode::sample) j["fidelity"]["sample_pairs_limit"] = o.fidelity_pairs;
  if (mode != fidelity_mode::off) {  // no numbers for what was not measured
    j["fidelity"]["w1_rel_median"] = quantile_of_sorted(rel_w1, 0.5);
    j["fidelity"]["w1_rel_p95"] = quantile_of_sorted(rel_w1, 0.95);
  }
  j["codec"] = {{"precision_bits", co.precision_bits}, {"key_frame_interval", co.key_frame_interval}};
  if (o.json) {
    std::cout << j.dump(2) << '\n';
    return;
  }
  std::printf("%zu trace(s) -> %s: %llu windows, %zu kernel keys\n", set.traces.size(), o.out.c_str(),
              static_cast<unsigned long long>(total.windows), decoded.names.size());
  for (const auto& f : set.skipped_files) std::printf("skipped (JSON without traceEvents): %s\n", f.c_str());
  std::printf("GPU events: %llu compressed, %llu outside steps, %llu skipped; %llu host events not compressed\n",
              static_cast<unsigned long long>(total.compressed), static_cast<unsigned long long>(total.outside_steps),
              static_cast<unsigned long long>(total.skipped), static_cast<unsigned long long>(total.host_events));
  std::printf(
      "%zu bytes (kernel names: %llu bytes before LZ, written once): %.1fx the input files (%llu bytes), %.1fx these "
      "events as minimal Kineto JSON, %.1fx as "
      "32-byte records\n",
      bytes.size(), static_cast<unsigned long long>(name_bytes), ratio(input_bytes),
      static_cast<unsigned long long>(input_bytes), ratio(kineto_bytes), ratio(total.compressed * 32));
  if (mode == fidelity_mode::off) {
    std::printf("fidelity: not measured (--no-fidelity); all %zu windows decode back as encoded\n", stream.size());
    return;
  }
  std::printf("fidelity, W1(decoded, exact) / mean over %zu (window, key) pairs: median %.2f %%, p95 %.2f %%",
              rel_w1.size(), 100 * quantile_of_sorted(rel_w1, 0.5), 100 * quantile_of_sorted(rel_w1, 0.95));
  if (sampled)
    std::printf(" -- a sample: %llu of %zu windows, %llu of %llu pairs (--fidelity for all)\n",
                static_cast<unsigned long long>(windows_evaluated), stream.size(),
                static_cast<unsigned long long>(rel_w1.size() + zero_mean_keys),
                static_cast<unsigned long long>(pairs_total));
  else
    std::printf(" (all %zu windows)\n", stream.size());
}

}  // namespace

void add_compress_command(CLI::App& app) {
  auto opts = std::make_shared<compress_options>();
  CLI::App* cmd = app.add_subcommand(
      "compress", "Per-step window summaries of each rank's kernels (.fsum), with ratio and fidelity");
  cmd->add_option("traces", opts->paths,
                  "Kineto .json/.json.gz, Nsight .sqlite, kernel tables .csv/.tsv, or folders of them")
      ->required();
  cmd->add_option("-o,--output", opts->out, "the .fsum file to write")->required();
  cmd->add_option("--key-frame", opts->key_frame, "a self-contained window every K windows per rank (default 16)");
  cmd->add_option("--precision", opts->precision, "log-quantisation bits, relative error 2^-(bits+1) (default 7)");
  cmd->add_option("--cap", opts->cap, "durations kept per key and window before reservoir sampling (default 4096)");
  cmd->add_option("--window-ms", opts->window_ms, "time-bounded windows when the traces have no steps (0: one window)");
  cmd->add_flag("--no-steps", opts->no_steps, "ignore ProfilerStep annotations; use --window-ms windows");
  cmd->add_flag("--json", opts->json, "JSON output (schema failslow.compress/1)");
  cmd->add_option("--threads", opts->threads, "files read in parallel (default: all cores)");
  auto* all = cmd->add_flag("--fidelity", opts->fidelity_all,
                            "measure the fidelity on every (window, key) pair (default: a sample of windows)");
  auto* none = cmd->add_flag("--no-fidelity", opts->no_fidelity, "do not measure the fidelity");
  all->excludes(none);
  cmd->add_option("--fidelity-pairs", opts->fidelity_pairs,
                  "the default sample: whole windows, fixed by a hash of (rank, window), up to this many (window, "
                  "key) pairs (default 400)")
      ->excludes(all)
      ->excludes(none);
  cmd->callback([opts] { run(*opts); });
}

}  // namespace failslow_cli
