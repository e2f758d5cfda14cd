// failslow compress TRACE...|DIR -o FILE.fsum [--key-frame K] [--precision BITS] [--zstd LEVEL] [--cap N]
//   [--window-ms X] [--no-steps] [--steps-per-window N] [--fidelity | --no-fidelity] [--fidelity-pairs N] [--json]:
// the GPU activities of each rank's trace become one window summary per ProfilerStep (or per N steps)
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
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <failslow/compress/baselines.hpp>
#include <failslow/compress/codec.hpp>
#include <failslow/compress/fidelity.hpp>
#include <failslow/compress/trace_windows.hpp>
#include <failslow/core/detail/splitmix.hpp>
#include <failslow/io/output_file.hpp>
#include <failslow/trace/load_trace_set.hpp>
#include <failslow/trace/steps.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "commands.hpp"

#if FAILSLOW_HAS_MPI
#include <failslow/collect/mpi.hpp>
#endif

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
  std::size_t steps_per_window = 1;
  bool json = false;
  unsigned threads = 0;
  bool fidelity_all = false;
  bool no_fidelity = false;
  std::size_t fidelity_pairs = 400;
  int zstd_level = failslow::compress::zstd_available ? 3 : 0;  // the codec's entropy stage
  unsigned fsum_format = 4;                                     // 2, 3: for readers before format 3, 4
  bool mpi = false;
};

enum class fidelity_mode { sample, all, off };
const char* to_string(fidelity_mode m) {
  return m == fidelity_mode::all ? "all" : m == fidelity_mode::off ? "off" : "sample";
}

using failslow::detail::splitmix64;

// The subcommand's own names, with the library's in reach.
namespace compress_cmd {
using namespace failslow;

// One process's part of the job (all of it without --mpi): its traces, their windows, and the
// windows in the order a live stream would bring them (window by window, ranks interleaved).
struct compressed_share {
  explicit compressed_share(trace::trace_set&& traces) : set(std::move(traces)) {}
  trace::trace_set set;
  struct rank_windows {
    std::vector<compress::window_summary> windows;
    std::vector<std::int64_t> window_of_event;
    std::vector<name_id> keys;  // per event: kernels keyed by name and launch shape
  };
  std::vector<rank_windows> per_trace;
  compress::trace_window_counts total;
  std::uint64_t input_bytes = 0, kineto_bytes = 0;
  struct stream_entry {
    std::uint64_t window_id;
    std::int32_t rank;
    std::size_t trace;
    const compress::window_summary* w;
  };
  std::vector<stream_entry> stream;
};

void summarize_share(const compress_options& o, compressed_share& share) {
  compress::trace_window_options wo;
  wo.compressor.per_key_cap = o.cap;
  wo.compressor.max_window_ns = static_cast<std::int64_t>(o.window_ms * 1e6);
  wo.use_steps = !o.no_steps;
  const auto& set = share.set;
  share.per_trace.resize(set.traces.size());
  for (std::size_t t = 0; t < set.traces.size(); ++t) {
    const auto& rt = set.traces[t];
    std::error_code ec;
    const auto size = std::filesystem::file_size(rt.data.source, ec);
    if (!ec) share.input_bytes += size;
    const auto steps = trace::group_steps(trace::map_steps(rt.data, set.names), o.steps_per_window);
    auto& rw = share.per_trace[t];
    rw.keys = compress::launch_shape_keys(rt.data, set.names);
    wo.keys = &rw.keys;
    const auto c = compress::summarize_trace(
        rt.data, steps, rt.rank, wo, [&](compress::window_summary&& w) { rw.windows.push_back(std::move(w)); },
        &rw.window_of_event);
    if (!c.accounted()) throw domain_error("compress: events of " + rt.data.source + " are not accounted for");
    share.total.device_events += c.device_events;
    share.total.compressed += c.compressed;
    share.total.outside_steps += c.outside_steps;
    share.total.skipped += c.skipped;
    share.total.host_events += c.host_events;
    share.total.windows += c.windows;
    for (std::size_t i = 0; i < rt.data.events.size(); ++i)
      if (rw.window_of_event[i] >= 0)
        share.kineto_bytes +=
            compress::minimal_kineto_json_bytes(set.names.name(rt.data.events[i].name), rt.data.events[i]);
  }
  for (std::size_t t = 0; t < share.per_trace.size(); ++t)
    for (const auto& w : share.per_trace[t].windows) share.stream.push_back({w.window_id, w.rank, t, &w});
  std::sort(share.stream.begin(), share.stream.end(), [](const auto& a, const auto& b) {
    return std::tie(a.window_id, a.rank, a.trace) < std::tie(b.window_id, b.rank, b.trace);
  });
}

compress::codec_options codec_options_of(const compress_options& o) {
  compress::codec_options co;
  co.key_frame_interval = o.key_frame;
  co.precision_bits = o.precision;
  co.zstd_level = o.zstd_level;
  co.format_version = o.fsum_format;
  return co;
}

std::string encode_share(const compressed_share& share, const compress::codec_options& co) {
  compress::summary_encoder encoder([&](name_id id) { return std::string(share.set.names.name(id)); }, co);
  std::string bytes = encoder.header();
  for (const auto& s : share.stream) encoder.encode(*s.w, bytes);
  encoder.flush(bytes);  // the last zstd group
  return bytes;
}

struct fidelity_figures {
  compress::fidelity_figures measured;  // W1 / mean per evaluated (window, key) pair
  std::uint64_t windows_evaluated = 0, pairs_total = 0;
  std::size_t names = 0;         // keys in the decoded dictionary
  std::uint64_t name_bytes = 0;  // the one-off dictionary (before LZ)
};

// The share's bytes decoded back: each window must be the one encoded at its place (same rank,
// id, keys and counts); on the windows picked by `mode`, W1(decoded, exact) / mean per key.
fidelity_figures check_and_measure(const compressed_share& share, const std::string& bytes, fidelity_mode mode,
                                   std::size_t pairs_limit, const std::string& label) {
  const auto& stream = share.stream;
  fidelity_figures f;
  for (const auto& s : stream) f.pairs_total += s.w->kernels.size();
  std::vector<char> evaluate(stream.size(), mode == fidelity_mode::all);
  if (mode == fidelity_mode::sample) {
    std::vector<std::pair<std::uint64_t, std::size_t>> by_hash(stream.size());
    for (std::size_t i = 0; i < stream.size(); ++i)
      by_hash[i] = {splitmix64(splitmix64(static_cast<std::uint32_t>(stream[i].rank)) ^ stream[i].window_id), i};
    std::sort(by_hash.begin(), by_hash.end());
    std::uint64_t pairs = 0;
    for (const auto& [hash, i] : by_hash) {
      const std::size_t k = stream[i].w->kernels.size();
      if (pairs > 0 && pairs + k > pairs_limit) break;
      evaluate[i] = 1;
      pairs += k;
    }
  }
  f.windows_evaluated = static_cast<std::uint64_t>(std::count(evaluate.begin(), evaluate.end(), 1));

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
      label);
  if (!decoded.damaged.empty() || at != stream.size())
    throw domain_error("compress: the written file does not decode cleanly");
  f.names = decoded.names.size();
  for (const auto& [id, n] : decoded.names) f.name_bytes += n.size();

  const auto& set = share.set;
  std::vector<std::vector<std::pair<std::int64_t, const compress::window_summary*>>> evaluated_of(set.traces.size());
  for (std::size_t i = 0; i < stream.size(); ++i)
    if (evaluate[i])
      evaluated_of[stream[i].trace].emplace_back(static_cast<std::int64_t>(stream[i].window_id), &kept[kept_at[i]]);
  for (std::size_t t = 0; t < set.traces.size(); ++t)
    compress::add_trace_fidelity(f.measured, set.traces[t].data, share.per_trace[t].window_of_event,
                                 std::move(evaluated_of[t]), &share.per_trace[t].keys);
  return f;
}

// Through a temporary name and a rename (io/output_file.hpp): a failed run leaves no partial file.
void write_file(const std::string& path, const std::string& bytes) { io::write_file_atomically(path, bytes); }

// What the output reports about the run with --mpi (absent without).
struct mpi_figures {
  int processes = 0, nodes = 0;
  double gather_s = 0, merge_s = 0;
  std::uint64_t largest_share_bytes = 0;
};

void print_result(const compress_options& o, fidelity_mode mode, std::size_t traces,
                  const std::vector<std::string>& skipped_files, const compress::trace_window_counts& total,
                  std::uint64_t input_bytes, std::uint64_t kineto_bytes, std::size_t fsum_bytes, std::uint64_t windows,
                  const fidelity_figures& fid, std::size_t pairs_limit, const std::optional<mpi_figures>& mpi) {
  const auto& measured = fid.measured;
  const auto ratio = [&](std::uint64_t in) {
    return fsum_bytes == 0 ? 0.0 : static_cast<double>(in) / static_cast<double>(fsum_bytes);
  };
  const compress::codec_options co = codec_options_of(o);
  nlohmann::json j;
  j["schema"] = "failslow.compress/1";
  j["output"] = o.out;
  j["traces"] = traces;
  j["skipped_files"] = skipped_files;
  j["windows"] = total.windows;
  j["keys"] = fid.names;
  j["events"] = {{"device", total.device_events},
                 {"compressed", total.compressed},
                 {"outside_steps", total.outside_steps},
                 {"skipped", total.skipped},
                 {"host_not_compressed", total.host_events}};
  j["bytes"] = {{"fsum", fsum_bytes},
                {"name_strings", fid.name_bytes},
                {"input_files", input_bytes},
                {"minimal_kineto_json", kineto_bytes},
                {"records_32B", total.compressed * compress::record_bytes}};
  j["ratio"] = {{"vs_input_files", ratio(input_bytes)},
                {"vs_minimal_kineto_json", ratio(kineto_bytes)},
                {"vs_32B_records", ratio(total.compressed * compress::record_bytes)}};
  // sampled: the figures come from part of the windows (never with --no-fidelity: no figures).
  const bool sampled = mode == fidelity_mode::sample && fid.windows_evaluated < windows;
  j["fidelity"] = {{"mode", to_string(mode)},
                   {"sampled", sampled},
                   {"windows_evaluated", fid.windows_evaluated},
                   {"windows_total", windows},
                   {"pairs", measured.relative_w1.size()},
                   {"zero_duration_pairs", measured.zero_duration_pairs},
                   {"pairs_total", fid.pairs_total},
                   {"w1_rel_median", nullptr},
                   {"w1_rel_p95", nullptr}};
  if (mode == fidelity_mode::sample) j["fidelity"]["sample_pairs_limit"] = pairs_limit;
  if (mode != fidelity_mode::off) {  // no numbers for what was not measured
    j["fidelity"]["w1_rel_median"] = measured.median();
    j["fidelity"]["w1_rel_p95"] = measured.p95();
  }
  j["codec"] = {{"precision_bits", co.precision_bits},
                {"key_frame_interval", co.key_frame_interval},
                {"zstd_level", co.zstd_level}};
  if (mpi)
    j["mpi"] = {{"processes", mpi->processes},
                {"nodes", mpi->nodes},
                {"gather_s", mpi->gather_s},
                {"merge_s", mpi->merge_s},
                {"largest_share_bytes", mpi->largest_share_bytes}};
  if (o.json) {
    std::cout << j.dump(2) << '\n';
    return;
  }
  std::printf("%zu trace(s) -> %s: %llu windows, %zu kernel keys\n", traces, o.out.c_str(),
              static_cast<unsigned long long>(total.windows), fid.names);
  if (mpi)
    std::printf(
        "compressed by %d MPI processes on %d node(s); the root gathered %llu-byte shares at most in %.3f s, "
        "merged in %.3f s\n",
        mpi->processes, mpi->nodes, static_cast<unsigned long long>(mpi->largest_share_bytes), mpi->gather_s,
        mpi->merge_s);
  for (const auto& f : skipped_files) std::printf("skipped (JSON without traceEvents): %s\n", f.c_str());
  std::printf("GPU events: %llu compressed, %llu outside steps, %llu skipped; %llu host events not compressed\n",
              static_cast<unsigned long long>(total.compressed), static_cast<unsigned long long>(total.outside_steps),
              static_cast<unsigned long long>(total.skipped), static_cast<unsigned long long>(total.host_events));
  std::printf(
      "%zu bytes (kernel names: %llu bytes before LZ, written once): %.1fx the input files (%llu bytes), %.1fx these "
      "events as minimal Kineto JSON, %.1fx as "
      "32-byte records\n",
      fsum_bytes, static_cast<unsigned long long>(fid.name_bytes), ratio(input_bytes),
      static_cast<unsigned long long>(input_bytes), ratio(kineto_bytes),
      ratio(total.compressed * compress::record_bytes));
  if (mode == fidelity_mode::off) {
    std::printf("fidelity: not measured (--no-fidelity); all %llu windows decode back as encoded\n",
                static_cast<unsigned long long>(windows));
    return;
  }
  std::printf("fidelity, W1(decoded, exact) / mean over %zu (window, key) pairs: median %.2f %%, p95 %.2f %%",
              measured.relative_w1.size(), 100 * measured.median(), 100 * measured.p95());
  if (sampled)
    std::printf(" -- a sample: %llu of %llu windows, %llu of %llu pairs (--fidelity for all)\n",
                static_cast<unsigned long long>(fid.windows_evaluated), static_cast<unsigned long long>(windows),
                static_cast<unsigned long long>(measured.pairs()), static_cast<unsigned long long>(fid.pairs_total));
  else
    std::printf(" (all %llu windows)\n", static_cast<unsigned long long>(windows));
}

void check_options(const compress_options& o) {
  if (o.out.empty()) throw invalid_argument("compress: -o FILE.fsum is required");
  if (!(o.window_ms >= 0)) throw invalid_argument("compress: --window-ms must be >= 0");
  if (o.steps_per_window == 0) throw invalid_argument("compress: --steps-per-window must be at least 1");
  if (o.fidelity_pairs == 0) throw invalid_argument("compress: --fidelity-pairs must be >= 1");
}

fidelity_mode mode_of(const compress_options& o) {
  return o.no_fidelity ? fidelity_mode::off : o.fidelity_all ? fidelity_mode::all : fidelity_mode::sample;
}

void run(const compress_options& o) {
  check_options(o);
  trace::trace_set_options so;
  so.threads = o.threads;          // 0: every core
  so.assume_missing_ranks = true;  // a .fsum window needs a rank: traces that state none take free ones
  compressed_share share(trace::load_trace_set(o.paths, so));
  summarize_share(o, share);
  const std::string bytes = encode_share(share, codec_options_of(o));
  write_file(o.out, bytes);
  const fidelity_mode mode = mode_of(o);
  auto fid = check_and_measure(share, bytes, mode, o.fidelity_pairs, o.out);
  print_result(o, mode, share.set.traces.size(), share.set.skipped_files, share.total, share.input_bytes,
               share.kineto_bytes, bytes.size(), share.stream.size(), fid, o.fidelity_pairs, std::nullopt);
}

#if FAILSLOW_HAS_MPI
// --mpi: every process of MPI_COMM_WORLD reads the files i with i % size == its rank, compresses
// them and checks its own bytes (fidelity on its share, the sample limit split between the
// processes); collect::mpi_collector gathers the shares (two-level, one message per node) and the
// root merges them into one .fsum in (window id, rank) order with one dictionary, decodes it back
// and writes it. Traces that state no rank take the lowest free ranks in path order over the
// whole job, as without --mpi. An error on any process (a bad file) is agreed on before the
// gather, printed by the process that met it, and every process exits with status 2.
namespace mpi_mode {

template <class T>
std::vector<T> all_gather(const std::vector<T>& mine, MPI_Datatype type) {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int n = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
  MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  int total = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    displs[i] = total;
    total += counts[i];
  }
  std::vector<T> all(static_cast<std::size_t>(std::max(total, 1)));
  MPI_Allgatherv(mine.empty() ? all.data() : mine.data(), n, type, all.data(), counts.data(), displs.data(), type,
                 MPI_COMM_WORLD);
  all.resize(static_cast<std::size_t>(total));
  return all;
}

// Traces without a rank take the lowest ranks no trace of the job claims, in (file, position)
// order: what load_trace_set's assume_missing_ranks does for one process.
void assume_missing_ranks_jobwide(trace::trace_set& set) {
  std::vector<long long> mine;  // (file index, rank) pairs
  for (const auto& t : set.traces) {
    mine.push_back(static_cast<long long>(t.file_index));
    mine.push_back(t.rank);
  }
  const auto all = all_gather(mine, MPI_LONG_LONG);
  std::vector<std::int32_t> claimed;
  std::vector<std::size_t> unranked_files;
  for (std::size_t i = 0; i + 1 < all.size(); i += 2)
    if (all[i + 1] >= 0)
      claimed.push_back(static_cast<std::int32_t>(all[i + 1]));
    else
      unranked_files.push_back(static_cast<std::size_t>(all[i]));
  std::sort(claimed.begin(), claimed.end());
  std::stable_sort(unranked_files.begin(), unranked_files.end());
  std::map<std::size_t, std::vector<std::int32_t>> assigned;  // file -> ranks in position order
  std::int32_t candidate = 0;
  for (std::size_t f : unranked_files) {
    while (std::binary_search(claimed.begin(), claimed.end(), candidate)) ++candidate;
    assigned[f].push_back(candidate++);
  }
  std::map<std::size_t, std::size_t> used;
  for (auto& t : set.traces) {
    if (t.rank >= 0) continue;
    t.rank = assigned[t.file_index][used[t.file_index]++];
    t.source = trace::rank_source::assumed;
    for (auto& e : t.data.events) e.rank = t.rank;
  }
}

std::uint64_t sum_to_root(std::uint64_t x) {
  unsigned long long in = x, out = 0;
  MPI_Reduce(&in, &out, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  return out;
}

void run(const compress_options& o) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const fidelity_mode mode = mode_of(o);
  const std::size_t pairs_limit =
      (o.fidelity_pairs + static_cast<std::size_t>(size) - 1) / static_cast<std::size_t>(size);
  std::optional<compressed_share> loaded;
  std::string bytes;
  fidelity_figures fid;
  std::string error;
  try {
    check_options(o);
    trace::trace_set_options so;
    so.threads = o.threads;  // 0: every core
    so.shard_index = static_cast<std::size_t>(rank);
    so.shard_count = static_cast<std::size_t>(size);
    loaded.emplace(trace::load_trace_set(o.paths, so));
  } catch (const std::exception& e) {
    error = e.what();
  }
  // Every process must know whether all can go on before the next collective call.
  const auto agree = [&] {
    int bad = error.empty() ? 0 : 1, any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!any) return;
    if (!error.empty()) throw failslow::error("compress --mpi (process " + std::to_string(rank) + "): " + error);
    throw failslow::error("compress --mpi: another process failed (its message is above)");
  };
  agree();
  compressed_share& share = *loaded;
  try {
    assume_missing_ranks_jobwide(share.set);
    summarize_share(o, share);
    bytes = encode_share(share, codec_options_of(o));
    fid = check_and_measure(share, bytes, mode, pairs_limit, "<share of process " + std::to_string(rank) + ">");
  } catch (const std::exception& e) {
    error = e.what();
  }
  agree();

  collect::mpi_collector_options co;
  co.codec = codec_options_of(o);
  co.diagnose = false;
  co.merged_fsum = true;
  collect::mpi_collector collector(MPI_COMM_WORLD, co);
  collector.add_encoded(bytes);
  const auto t0 = std::chrono::steady_clock::now();
  auto gathered = collector.gather();
  const double gather_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  int nodes = collector.node_count();

  // Totals and the fidelity figures at the root.
  const auto traces = sum_to_root(share.set.traces.size());
  compress::trace_window_counts total;
  total.device_events = sum_to_root(share.total.device_events);
  total.compressed = sum_to_root(share.total.compressed);
  total.outside_steps = sum_to_root(share.total.outside_steps);
  total.skipped = sum_to_root(share.total.skipped);
  total.host_events = sum_to_root(share.total.host_events);
  total.windows = sum_to_root(share.total.windows);
  const auto input_bytes = sum_to_root(share.input_bytes), kineto_bytes = sum_to_root(share.kineto_bytes);
  const auto windows = sum_to_root(share.stream.size());
  fidelity_figures all;
  all.measured.zero_duration_pairs = sum_to_root(fid.measured.zero_duration_pairs);
  all.windows_evaluated = sum_to_root(fid.windows_evaluated);
  all.pairs_total = sum_to_root(fid.pairs_total);
  unsigned long long share_bytes = bytes.size(), largest = 0;
  MPI_Reduce(&share_bytes, &largest, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
  all.measured.relative_w1 = all_gather(fid.measured.relative_w1, MPI_DOUBLE);
  std::vector<char> skipped_chars;
  for (const auto& f : share.set.skipped_files) skipped_chars.insert(skipped_chars.end(), f.begin(), f.end() + 1);
  const auto all_skipped_chars = all_gather(skipped_chars, MPI_CHAR);
  if (rank != 0) return;

  for (const auto& r : gathered.receipts)
    if (!r.error.empty() || !r.damaged.empty())
      throw domain_error("compress --mpi: the share of process " + std::to_string(r.comm_rank) +
                         " did not arrive intact: " + (r.error.empty() ? "damaged blocks" : r.error));
  // The merged file decoded back: every window of every share, nothing damaged.
  const auto t1 = std::chrono::steady_clock::now();
  const auto merged = compress::decode_summaries(gathered.fsum, o.out);
  if (!merged.damaged.empty() || merged.windows.size() != windows)
    throw domain_error("compress --mpi: the merged file decodes to " + std::to_string(merged.windows.size()) +
                       " windows, " + std::to_string(windows) + " were gathered");
  const double merge_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  write_file(o.out, gathered.fsum);
  all.names = merged.names.size();
  for (const auto& [id, n] : merged.names) all.name_bytes += n.size();
  std::vector<std::string> skipped_files;
  for (std::size_t i = 0, b = 0; i < all_skipped_chars.size(); ++i)
    if (all_skipped_chars[i] == '\0') {
      skipped_files.emplace_back(all_skipped_chars.data() + b, i - b);
      b = i + 1;
    }
  std::sort(skipped_files.begin(), skipped_files.end());
  print_result(o, mode, static_cast<std::size_t>(traces), skipped_files, total, input_bytes, kineto_bytes,
               gathered.fsum.size(), windows, all, o.fidelity_pairs,
               mpi_figures{size, nodes, gather_s, merge_s, largest});
}

// MPI_Init when --mpi asks for it (and only then: a plain run never starts MPI), MPI_Finalize
// at the end; a failure on this process after the shares were agreed on aborts the job, so no
// other process waits for it.
void run_initialised(const compress_options& o) {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) MPI_Init(nullptr, nullptr);
  try {
    run(o);
  } catch (const failslow::error&) {  // agreed on by every process: each exits 2
    MPI_Finalize();
    throw;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "failslow compress --mpi: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
}

}  // namespace mpi_mode
#endif

void dispatch(const compress_options& o) {
  if (!o.mpi) return run(o);
#if FAILSLOW_HAS_MPI
  mpi_mode::run_initialised(o);
#else
  throw invalid_argument("compress: --mpi needs a failslow built with MPI (CMake FAILSLOW_WITH_MPI=ON)");
#endif
}

}  // namespace compress_cmd
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
  cmd->add_option("--zstd", opts->zstd_level,
                  "zstd level of the .fsum entropy stage, 0 for none (default 3 where built with zstd, else 0)");
  cmd->add_option("--fsum-format", opts->fsum_format,
                  "the .fsum format written: 4 (default: range-coded windows with the hosts' launch pace), 3 (readers "
                  "built before format 4; no launch pace) or 2 (readers built before format 3)")
      ->check(CLI::Range(2, 4));
  cmd->add_option("--cap", opts->cap, "durations kept per key and window before reservoir sampling (default 4096)");
  cmd->add_option("--window-ms", opts->window_ms, "time-bounded windows when the traces have no steps (0: one window)");
  cmd->add_flag("--no-steps", opts->no_steps, "ignore ProfilerStep annotations; use --window-ms windows");
  cmd->add_option("--steps-per-window", opts->steps_per_window,
                  "one window per N consecutive steps (default 1): denser summaries, one value per N steps for the "
                  "diagnosis");
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
  cmd->add_flag("--mpi", opts->mpi,
                "under mpirun: each process compresses its share of the files, the root writes the one .fsum");
  cmd->callback([opts] { compress_cmd::dispatch(*opts); });
}

}  // namespace failslow_cli
