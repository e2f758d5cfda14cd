// failslow/io/trace_data.hpp -- what a trace reader hands back: the events of one rank and the
// side tables that do not fit the 40-byte event.
//
// Synopsis
//   struct trace_data: one rank's trace, as read by io::read_kineto, io::read_nsys_sqlite or
//   io::read_kernel_table (one trace_data per rank of the table):
//     events        failslow::event records in file order (kernels, collectives, memcpy, memset,
//                   runtime launches, CPU operators, annotations); names interned in the
//                   caller's name_table; times are integer nanoseconds
//     launches      grid and block of the kernels that carried them   (event index -> dims)
//     collectives   NCCL metadata of the collective kernels that carried it: collective name,
//                   group size, process-group name, description and ranks, message sizes, dtype
//     rank_lists    the distinct process-group rank lists collectives refer to
//     event_steps   empty, or one step number per event when the source states steps
//                   explicitly (the CSV/TSV kernel table); -1 = not in a step
//     distributed   the `distributedInfo` block: backend, rank, world size, pg_config
//     devices       the `deviceProperties` block (or Nsight's TARGET_INFO_GPU)
//     stats         what the reader saw and what it skipped, by named reason
//   read_stats::accounted() is true when every input record was either stored or counted in
//   exactly one skip reason: events_seen == stored + metadata + flows + instants +
//   other_phases + unknown_category + malformed().
// Complexity: plain data; O(1) accessors.
// Errors: none here; see the readers.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "failslow/core/event.hpp"

namespace failslow::io {

/// Grid and block of one kernel launch.
struct launch_dims {
  std::uint32_t event = 0;  ///< index into trace_data::events
  std::array<std::uint32_t, 3> grid{};
  std::array<std::uint32_t, 3> block{};
};

/// NCCL metadata Kineto writes on collective kernels (PyTorch >= 2.1); absent fields are -1 /
/// no_name.
struct collective_args {
  static constexpr name_id no_name = 0xFFFFFFFFu;
  static constexpr std::uint32_t no_ranks = 0xFFFFFFFFu;

  std::uint32_t event = 0;         ///< index into trace_data::events
  name_id collective = no_name;    ///< "Collective name": allreduce, allgather, send, ...
  name_id pg_name = no_name;       ///< "Process Group Name"
  name_id pg_desc = no_name;       ///< "Process Group Description"
  name_id dtype = no_name;         ///< "dtype"
  std::int32_t group_size = -1;    ///< "Group size"
  std::uint32_t ranks = no_ranks;  ///< "Process Group Ranks": index into trace_data::rank_lists
  std::int64_t in_nelems = -1;     ///< "In msg nelems"
  std::int64_t out_nelems = -1;    ///< "Out msg nelems"
};

/// One entry of distributedInfo.pg_config.
struct process_group {
  std::string name;            ///< pg_name
  std::string desc;            ///< pg_desc
  std::string backend_config;  ///< e.g. "cuda:nccl"
  std::int64_t size = -1;      ///< pg_size
  std::vector<std::int32_t> ranks;
};

/// The distributedInfo block of a Kineto trace.
struct distributed_info {
  std::string backend;     ///< "nccl", "gloo", ...
  std::int32_t rank = -1;  ///< -1 when absent
  std::int64_t world_size = -1;
  std::int64_t pg_count = -1;
  std::string nccl_version;
  std::vector<process_group> pg_config;
};

/// One device of the deviceProperties block (fields absent in the file stay -1 / empty).
struct device_properties {
  std::int64_t id = -1;
  std::string name;
  std::int64_t total_global_mem = -1;
  std::int64_t compute_major = -1;
  std::int64_t compute_minor = -1;
  std::int64_t num_sms = -1;
};

/// What a reader saw and skipped. Every input record lands in exactly one counter.
struct read_stats {
  std::uint64_t events_seen = 0;       ///< records in the input (traceEvents entries, rows)
  std::uint64_t stored = 0;            ///< records stored as events
  std::uint64_t metadata = 0;          ///< "ph": "M" (process/thread names, ...)
  std::uint64_t flows = 0;             ///< "ph": "s", "t", "f" (ac2g / async_cpu_to_gpu arrows)
  std::uint64_t instants = 0;          ///< "ph": "i" / "I" (markers, [memory] events)
  std::uint64_t other_phases = 0;      ///< any other "ph" (B/E, C, counters, async b/e, ...)
  std::uint64_t unknown_category = 0;  ///< complete events of a category not read (python_function, ...)
  /// unknown_category split by category name ("" when the event has no "cat").
  std::map<std::string, std::uint64_t, std::less<>> unknown_categories;
  // Malformed records of a category that is read, by reason:
  std::uint64_t missing_field = 0;      ///< no ph/ts/dur/name where needed
  std::uint64_t bad_type = 0;           ///< a field of the wrong JSON type (string ts, ...)
  std::uint64_t negative_duration = 0;  ///< dur < 0
  std::uint64_t out_of_range = 0;       ///< a number past int64 nanoseconds, a negative timestamp, a
                                        ///< device/stream/correlation id that does not fit the event
  std::uint64_t bad_args = 0;           ///< args of the wrong shape (grid not [x,y,z], ranks not a list);
                                        ///< the event is stored, the side-table entry dropped
  /// Of `stored`: events without a category whose kind was told by their name (the plain Chrome
  /// trace torch.profiler writes without Kineto; io/kineto_reader.hpp, host_kind_by_name).
  std::uint64_t kind_by_name = 0;

  std::uint64_t malformed() const noexcept { return missing_field + bad_type + negative_duration + out_of_range; }
  bool accounted() const noexcept {
    return events_seen == stored + metadata + flows + instants + other_phases + unknown_category + malformed();
  }
};

/// One rank's trace.
struct trace_data {
  std::string source;  ///< file name (or a description of the buffer)
  std::vector<event> events;
  std::vector<launch_dims> launches;
  std::vector<collective_args> collectives;
  std::vector<std::vector<std::int32_t>> rank_lists;
  std::vector<std::int64_t> event_steps;
  std::optional<distributed_info> distributed;
  std::vector<device_properties> devices;
  std::int64_t base_time_ns = 0;  ///< baseTimeNanoseconds, already added to every event time
  std::int64_t schema_version = -1;
  /// False for a JSON object without traceEvents: no Kineto trace (e.g. a truth.json next to
  /// the traces); read as an empty trace, and skipped when found by a folder search.
  bool has_trace_events = true;
  read_stats stats;

  /// The rank the trace states (distributedInfo.rank), -1 when it does not.
  std::int32_t stated_rank() const noexcept { return distributed ? distributed->rank : -1; }
};

}  // namespace failslow::io
