// failslow compress TRACE...|DIR -o FILE.fsum [--key-frame K] [--precision BITS] [--cap N]
//   [--window-ms X] [--no-steps] [--json]: the GPU activities of each rank's trace become one
// window summary per ProfilerStep (compress/trace_windows.hpp), encoded as .fsum
// (compress/codec.hpp). Prints what went in and out, the compression ratio against the input
// files, against the same events as minimal Kineto JSON and as 32-byte binary records, and the
// fidelity: W1(decoded summary, exact durations) / mean per (window, kernel key), median and p95,
// measured on the file as written (decoded back).
#include <algorithm>
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
};

// The bytes of a GPU event written as Kineto does with only the fields a reader needs (name,
// ph, cat, pid, tid, ts, dur, args device/stream/correlation): a lower bound on the real size,
// which also carries grid, block, registers, occupancy, External id, ...
std::size_t minimal_kineto_bytes(std::string_view name, const failslow::event& e) {
  char buf[256];
  const auto us = [](std::int64_t ns) { return static_cast<double>(ns) / 1e3; };
  const int n = std::snprintf(
      buf, sizeof buf,
      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"\",\"pid\":%d,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,"
      "\"args\":{\"device\":%d,\"stream\":%u,\"correlation\":%llu}},",
      static_cast<int>(e.device), static_cast<unsigned>(e.stream), us(e.start_ns), us(e.duration_ns()),
      static_cast<int>(e.device), static_cast<unsigned>(e.stream), static_cast<unsigned long long>(e.correlation));
  return static_cast<std::size_t>(std::max(n, 0)) + name.size();
}

double quantile_of_sorted(const std::vector<double>& x, double p) {
  if (x.empty()) return 0;
  return x[std::min(x.size() - 1, static_cast<std::size_t>(p * static_cast<double>(x.size())))];
}

void run(const compress_options& o) {
  using namespace failslow;
  if (o.out.empty()) throw invalid_argument("compress: -o FILE.fsum is required");
  if (!(o.window_ms >= 0)) throw invalid_argument("compress: --window-ms must be >= 0");
  trace::trace_set_options so;
  so.threads = o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());
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
  std::vector<std::tuple<std::uint64_t, std::int32_t, const compress::window_summary*>> stream;
  for (const auto& rw : per_trace)
    for (const auto& w : rw.windows) stream.emplace_back(w.window_id, w.rank, &w);
  std::sort(stream.begin(), stream.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
  });
  compress::summary_encoder encoder([&](name_id id) { return std::string(set.names.name(id)); }, co);
  std::string bytes = encoder.header();
  for (const auto& s : stream) encoder.encode(*std::get<2>(s), bytes);
  {
    std::ofstream f(o.out, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!f) throw invalid_argument("compress: cannot write '" + o.out + "'");
  }

  // Fidelity on the file as written: decode it and compare every (window, key) with the exact
  // durations that went into it.
  const auto decoded = compress::decode_summaries(bytes, o.out);
  if (!decoded.damaged.empty()) throw domain_error("compress: the written file does not decode cleanly");
  std::map<std::pair<std::int32_t, std::uint64_t>, const compress::window_summary*> by_window;
  for (const auto& w : decoded.windows) by_window[{w.rank, w.window_id}] = &w;
  std::vector<double> rel_w1;
  std::uint64_t zero_mean_keys = 0;
  for (std::size_t t = 0; t < set.traces.size(); ++t) {
    const auto& ev = set.traces[t].data.events;
    const auto& wof = per_trace[t].window_of_event;
    std::map<std::pair<std::int64_t, name_id>, std::vector<double>> exact;
    for (std::size_t i = 0; i < ev.size(); ++i)
      if (wof[i] >= 0) exact[{wof[i], ev[i].name}].push_back(static_cast<double>(ev[i].duration_ns()));
    for (const auto& [key, durations] : exact) {
      const auto it = by_window.find({set.traces[t].rank, static_cast<std::uint64_t>(key.first)});
      const compress::kernel_summary* k = it == by_window.end() ? nullptr : it->second->find(key.second);
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
  j["fidelity"] = {{"pairs", rel_w1.size()},
                   {"zero_duration_pairs", zero_mean_keys},
                   {"w1_rel_median", quantile_of_sorted(rel_w1, 0.5)},
                   {"w1_rel_p95", quantile_of_sorted(rel_w1, 0.95)}};
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
  std::printf("fidelity, W1(decoded, exact) / mean over %zu (window, key) pairs: median %.2f %%, p95 %.2f %%\n",
              rel_w1.size(), 100 * quantile_of_sorted(rel_w1, 0.5), 100 * quantile_of_sorted(rel_w1, 0.95));
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
  cmd->callback([opts] { run(*opts); });
}

}  // namespace failslow_cli
