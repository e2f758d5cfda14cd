// failslow/trace/trace_set.hpp -- the traces of a job, one per rank: the container that
// trace/load_trace_set.hpp fills from files and the diagnosis reads.
//
// Synopsis
//   trace_set: traces (rank_trace: rank, where the rank came from, file index, the trace's
//   io::trace_data), sorted by rank (unranked, -1, first) then path order; the one name_table
//   all traces intern their names into; world_size; missing_ranks and duplicate_ranks;
//   skipped_files (JSON files of a folder search that are no traces) and unreadable_files.
//   find(rank) is the first trace of a rank. rank_source says how a rank was found
//   (load_trace_set.hpp's rules). A caller that holds traces in memory fills one directly.
// Complexity: find O(traces).
// Errors: none (a container).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "failslow/core/detail/enum_count.hpp"
#include "failslow/core/name_table.hpp"
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

}  // namespace failslow::trace
