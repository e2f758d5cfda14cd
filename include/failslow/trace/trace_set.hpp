// failslow/trace/trace_set.hpp -- the traces of a job, one per rank, loaded in parallel.
//
// Synopsis
//   trace_set load_trace_set(paths, options)
//     paths: files and folders (folders are searched recursively for *.json, *.json.gz,
//     *.csv, *.csv.gz, *.tsv, *.tsv.gz, *.sqlite); each file is read by its reader:
//       *.csv / *.tsv (.gz)     io::read_kernel_table (one trace per rank in the table)
//       *.sqlite                io::read_nsys_sqlite  (Nsight Systems export)
//       anything else           io::read_kineto_file  (.json, .json.gz)
//     on options.threads worker threads (core/parallel_for.hpp: 0 = every core; started and
//     joined inside the call, no pool is kept). All traces intern their names into the set's one name_table.
//   Ranks, one rule for every format (the first that applies; rank_trace::source says which):
//     1. mapping     options.rank_of[path] (an explicit mapping wins)
//     2. table       the rank column of a CSV/TSV kernel table
//     3. stated      the trace's distributedInfo.rank (Kineto), or what the Nsight export states
//     4. file_name   the file's name: "rank", "worker" then an optional '-' or '_' and digits,
//                    case-insensitive, not preceded by a letter nor followed by a letter or
//                    digit (rank-3.json, sampled_rank_3.pt.trace.json.gz, RANK3, worker_3,
//                    node1_worker3.json); rank_from_file_name(path). Several such tokens
//                    with different numbers: none (ambiguous).
//     5. assumed     with options.assume_missing_ranks (off by default): the lowest ranks no
//                    other trace claims, in path order
//     6. unknown     rank -1: never a silent 0; the caller reports it (inspect prints
//                    "unknown", the diagnosis skips such traces with a note)
//   Every event's rank field is set to the trace's rank.
//   The set reports what it found: world_size (the largest stated world size, or the
//   largest rank + 1), missing_ranks (in [0, world_size) with no trace), duplicate_ranks
//   (claimed by more than one trace: all are kept, in path order; at most the first million
//   missing ranks are listed), and each trace's rank_source.
//   A JSON file found by a folder search that has no traceEvents (a truth.json, a config) is
//   not a trace: it is skipped and listed in skipped_files; named explicitly, it is read as an
//   empty trace.
//   expand_trace_paths(paths) is the folder expansion alone.
//   Shards: with options.shard_count = n > 1 only the files i (in expand_trace_paths order)
//   with i % n == options.shard_index are read, so n processes share a job's files (each
//   trace's file_index says which file it came from). Ranks are assumed within the share only:
//   a caller that shards assigns missing ranks over the whole job (assume_missing_ranks off).
// Complexity: O(total bytes / threads) for reading; O(traces log traces) for the bookkeeping.
// Errors: a path that does not exist, or a folder with no trace, throws invalid_argument;
//   shard_index >= shard_count throws invalid_argument; a reader's error (parse_error,
//   unavailable_error,
//   ...) is rethrown after all workers stopped: the one of the first failing path; with
//   skip_unreadable, failslow::error exceptions of readers are recorded in unreadable_files
//   (path, message) instead and the set holds the other files (other exceptions, such as
//   std::bad_alloc, are still rethrown). options.progress, when set, is called after each file.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "failslow/core/detail/enum_count.hpp"
#include "failslow/core/error.hpp"
#include "failslow/core/name_table.hpp"
#include "failslow/core/parallel_for.hpp"
#include "failslow/io/csv_reader.hpp"
#include "failslow/io/kineto_reader.hpp"
#include "failslow/io/nsys_reader.hpp"
#include "failslow/io/trace_data.hpp"

namespace failslow::trace {

/// Where a trace's rank came from.
enum class rank_source : std::uint8_t { stated, mapping, assumed, table, file_name, unknown };
/// Number of rank_source values (they are 0 .. rank_source_count - 1).
inline constexpr std::size_t rank_source_count = 6;

constexpr const char* to_string(rank_source s) noexcept {
  switch (s) {
    case rank_source::stated:
      return "distributedInfo";
    case rank_source::mapping:
      return "mapping";
    case rank_source::assumed:
      return "assumed";
    case rank_source::table:
      return "table";
    case rank_source::file_name:
      return "file name";
    case rank_source::unknown:
      return "unknown";
  }
  return "unknown";
}
static_assert(failslow::detail::enum_count_matches<rank_source>(rank_source_count),
              "rank_source_count is not the number of rank_source values");

struct rank_trace {
  std::int32_t rank = -1;
  rank_source source = rank_source::unknown;
  std::size_t file_index = 0;  ///< its file's index in expand_trace_paths(paths)
  io::trace_data data;
};

struct trace_set_options {
  unsigned threads = 1;                         ///< worker threads reading files (0: every core)
  std::map<std::string, std::int32_t> rank_of;  ///< explicit rank per path (as given in paths)
  /// Give traces without a rank (no mapping, table column, distributedInfo or file name) the
  /// lowest free ranks (source assumed); off: they keep rank -1 (source unknown).
  bool assume_missing_ranks = false;
  io::kineto_read_options kineto;
  io::kernel_table_options table;
  /// Record files a reader fails on (parse errors, unreadable files) in unreadable_files and go
  /// on with the rest, instead of throwing.
  bool skip_unreadable = false;
  /// Called after each file is read (done, total), from the worker threads, one call at a time.
  std::function<void(std::size_t, std::size_t)> progress;
  /// Read only file i with i % shard_count == shard_index (see Shards above).
  std::size_t shard_index = 0;
  std::size_t shard_count = 1;
};

struct trace_set {
  /// Mutable: consumers of a const set add derived names (kernel keys by launch shape,
  /// compress/trace_windows.hpp); the table is thread-safe and existing ids never change.
  mutable name_table names;
  std::vector<rank_trace> traces;  ///< sorted by rank (unranked, -1, first), then path order
  std::int64_t world_size = -1;
  std::vector<std::int32_t> missing_ranks;
  std::vector<std::int32_t> duplicate_ranks;
  std::vector<std::string> skipped_files;  ///< JSON files of a folder that are no traces
  /// (path, reason) of files that could not be read, with trace_set_options::skip_unreadable
  std::vector<std::pair<std::string, std::string>> unreadable_files;

  /// The first trace of `rank`, or nullptr.
  const rank_trace* find(std::int32_t rank) const noexcept {
    for (const auto& t : traces)
      if (t.rank == rank) return &t;
    return nullptr;
  }
};

namespace detail {

inline bool ends_with(const std::string& s, const char* suffix) {
  const std::size_t n = std::char_traits<char>::length(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

enum class trace_format { kineto, table, nsys };

inline trace_format format_of(const std::string& path) {
  for (const char* table : {".csv", ".tsv", ".csv.gz", ".tsv.gz"})
    if (ends_with(path, table)) return trace_format::table;
  if (ends_with(path, ".sqlite")) return trace_format::nsys;
  return trace_format::kineto;
}

inline bool is_trace_file(const std::string& name) {
  for (const char* trace : {".json", ".json.gz", ".csv", ".csv.gz", ".tsv", ".tsv.gz", ".sqlite"})
    if (ends_with(name, trace)) return true;
  return false;
}

}  // namespace detail

/// The rank a file's name states (rule 4 of the synopsis), or -1: "rank" or "worker",
/// case-insensitive, not preceded by a letter, then an optional '-' or '_' and 1-9 digits not
/// followed by a letter or digit. Only the last path component is read.
inline std::int32_t rank_from_file_name(const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  auto is_alpha = [&](char c) { return lower(c) >= 'a' && lower(c) <= 'z'; };
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  auto word_at = [&](std::size_t i, const char* w) {
    std::size_t k = 0;
    for (; w[k] != '\0'; ++k)
      if (i + k >= name.size() || lower(name[i + k]) != w[k]) return std::size_t{0};
    return k;
  };
  std::int32_t found = -1;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (i > 0 && is_alpha(name[i - 1])) continue;
    std::size_t n = word_at(i, "rank");
    if (n == 0) n = word_at(i, "worker");
    if (n == 0) continue;
    std::size_t j = i + n;
    if (j < name.size() && (name[j] == '-' || name[j] == '_')) ++j;
    const std::size_t first = j;
    std::int64_t value = 0;
    while (j < name.size() && is_digit(name[j]) && j - first < 9) value = value * 10 + (name[j++] - '0');
    if (j == first || (j < name.size() && (is_alpha(name[j]) || is_digit(name[j])))) continue;
    if (found >= 0 && found != value) return -1;  // two different ranks named: ambiguous
    found = static_cast<std::int32_t>(value);
  }
  return found;
}

/// Files named by `paths`, folders expanded recursively (sorted within each folder).
/// `from_folder`, when given, receives per file whether a folder search found it.
template <class = void>
inline std::vector<std::string> expand_trace_paths(const std::vector<std::string>& paths,
                                                   std::vector<bool>* from_folder = nullptr) {
  std::vector<std::string> out;
  if (from_folder) from_folder->clear();
  for (const auto& p : paths) {
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) {
      std::vector<std::string> found;
      for (const auto& e : std::filesystem::recursive_directory_iterator(p))
        if (e.is_regular_file() && detail::is_trace_file(e.path().filename().string()))
          found.push_back(e.path().string());
      if (found.empty())
        throw invalid_argument("no trace files (*.json, *.csv, *.tsv and their .gz, *.sqlite) in " + p);
      std::sort(found.begin(), found.end());
      out.insert(out.end(), found.begin(), found.end());
      if (from_folder) from_folder->resize(out.size(), true);
    } else if (std::filesystem::exists(p, ec)) {
      out.push_back(p);
      if (from_folder) from_folder->push_back(false);
    } else {
      throw invalid_argument("no such trace file or folder: " + p);
    }
  }
  return out;
}

template <class = void>
inline trace_set load_trace_set(const std::vector<std::string>& paths, const trace_set_options& options = {}) {
  if (options.shard_index >= options.shard_count)
    throw invalid_argument("load_trace_set: shard " + std::to_string(options.shard_index) + " of " +
                           std::to_string(options.shard_count));
  std::vector<bool> from_folder;
  const auto files = expand_trace_paths(paths, &from_folder);
  const auto in_share = [&](std::size_t i) { return i % options.shard_count == options.shard_index; };
  trace_set set;
  std::vector<std::vector<io::trace_data>> loaded(files.size());
  std::vector<std::exception_ptr> errors(files.size());
  std::vector<std::size_t> share;  // the files this call reads
  for (std::size_t i = 0; i < files.size(); ++i)
    if (in_share(i)) share.push_back(i);
  std::vector<io::kineto_reader> kineto(parallel_workers(share.size(), options.threads));  // one per worker
  std::size_t done = 0;
  std::mutex progress_mutex;
  parallel_for(share.size(), options.threads, [&](std::size_t k, std::size_t worker) {
    const std::size_t i = share[k];
    try {
      switch (detail::format_of(files[i])) {
        case detail::trace_format::kineto:
          loaded[i].push_back(kineto[worker].read_file(files[i], set.names, options.kineto));
          break;
        case detail::trace_format::table:
          loaded[i] = io::read_kernel_table_file(files[i], set.names, options.table);
          break;
        case detail::trace_format::nsys:
          loaded[i].push_back(io::read_nsys_sqlite(files[i], set.names));
          break;
      }
    } catch (...) {
      errors[i] = std::current_exception();
    }
    if (options.progress) {
      const std::lock_guard<std::mutex> lock(progress_mutex);
      options.progress(++done, share.size());
    }
  });
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (!errors[i]) continue;
    if (!options.skip_unreadable) std::rethrow_exception(errors[i]);
    try {
      std::rethrow_exception(errors[i]);
    } catch (const error& e) {
      set.unreadable_files.emplace_back(files[i], e.what());
      loaded[i].clear();
    }
  }

  std::vector<rank_trace> traces;
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (!in_share(i)) continue;
    const auto mapped = options.rank_of.find(files[i]);
    if (from_folder[i] && loaded[i].size() == 1 && !loaded[i].front().has_trace_events) {
      set.skipped_files.push_back(files[i]);
      continue;
    }
    for (auto& d : loaded[i]) {
      rank_trace rt;
      if (mapped != options.rank_of.end() && loaded[i].size() == 1) {
        rt.rank = mapped->second;
        rt.source = rank_source::mapping;
      } else if (detail::format_of(files[i]) == detail::trace_format::table) {
        rt.rank = d.stated_rank();
        rt.source = rank_source::table;
      } else if (d.stated_rank() >= 0) {
        rt.rank = d.stated_rank();
        rt.source = rank_source::stated;
      } else if (const std::int32_t r = rank_from_file_name(files[i]); r >= 0) {
        rt.rank = r;
        rt.source = rank_source::file_name;
      } else {
        rt.rank = -1;
        rt.source = rank_source::unknown;
      }
      if (d.distributed && d.distributed->world_size > set.world_size) set.world_size = d.distributed->world_size;
      rt.file_index = i;
      rt.data = std::move(d);
      traces.push_back(std::move(rt));
    }
  }
  if (options.assume_missing_ranks) {
    std::vector<std::int32_t> claimed;
    for (const auto& t : traces)
      if (t.rank >= 0) claimed.push_back(t.rank);
    std::sort(claimed.begin(), claimed.end());
    std::int32_t candidate = 0;
    for (auto& t : traces) {
      if (t.rank >= 0) continue;
      while (std::binary_search(claimed.begin(), claimed.end(), candidate)) ++candidate;
      t.rank = candidate++;
      t.source = rank_source::assumed;
    }
  }
  for (auto& t : traces)
    for (auto& e : t.data.events) e.rank = t.rank;
  std::stable_sort(traces.begin(), traces.end(),
                   [](const rank_trace& a, const rank_trace& b) { return a.rank < b.rank; });
  std::int32_t max_rank = -1;
  for (std::size_t i = 0; i < traces.size(); ++i) {
    max_rank = std::max(max_rank, traces[i].rank);
    if (i > 0 && traces[i].rank >= 0 && traces[i].rank == traces[i - 1].rank &&
        (set.duplicate_ranks.empty() || set.duplicate_ranks.back() != traces[i].rank))
      set.duplicate_ranks.push_back(traces[i].rank);
  }
  if (set.world_size < max_rank + 1) set.world_size = max_rank + 1;
  std::vector<std::int32_t> present;
  for (const auto& t : traces) present.push_back(t.rank);  // already sorted
  for (std::int64_t r = 0; r < set.world_size && set.missing_ranks.size() < 1000000; ++r)
    if (!std::binary_search(present.begin(), present.end(), static_cast<std::int32_t>(r)))
      set.missing_ranks.push_back(static_cast<std::int32_t>(r));
  set.traces = std::move(traces);
  return set;
}

}  // namespace failslow::trace
