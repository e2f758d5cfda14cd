// failslow/trace/load_trace_set.hpp -- a job's traces read from files, one per rank, in parallel,
// into a trace_set (trace/trace_set.hpp).
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

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/io/csv_reader.hpp"
#include "failslow/io/kineto_reader.hpp"
#include "failslow/trace/trace_set.hpp"

namespace failslow::trace {

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

/// The rank a file's name states (rule 4 of the synopsis), or -1: "rank" or "worker",
/// case-insensitive, not preceded by a letter, then an optional '-' or '_' and 1-9 digits not
/// followed by a letter or digit. Only the last path component is read.
FAILSLOW_FUNC std::int32_t rank_from_file_name(const std::string& path);

/// Files named by `paths`, folders expanded recursively (sorted within each folder).
/// `from_folder`, when given, receives per file whether a folder search found it.
FAILSLOW_FUNC std::vector<std::string> expand_trace_paths(const std::vector<std::string>& paths,
                                                          std::vector<bool>* from_folder = nullptr);

FAILSLOW_FUNC trace_set load_trace_set(const std::vector<std::string>& paths, const trace_set_options& options = {});

}  // namespace failslow::trace

#if FAILSLOW_HEADER_ONLY
#include "failslow/trace/impl/load_trace_set.ipp"
#endif
