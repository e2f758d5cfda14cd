// failslow/collect/record_sink.hpp -- what a collector hands on: GPU activity records and step
// marks, and the interface of whoever receives them.
//
// Synopsis
//   activity_record  one kernel, memcpy, memset or annotation as a core `event` (times in
//                    integer nanoseconds of the host clock the collector anchors to) plus what
//                    the 40-byte event has no room for: the CUDA-graph id and node id (kernels
//                    of one graph launch share one correlation id; the node id tells them
//                    apart), the context and the bytes moved or set. 64 bytes, trivially
//                    copyable, so a ring of them is a flat array.
//   step_mark        a step boundary (begin_step(n): step n starts here, the previous step
//                    ends) or a finished phase [start, end] with its interned name.
//   record_sink      the receiver: records(batch), mark(m), delivered(watermark), finish(end).
//                    A collector calls a sink from one thread at a time (its worker thread, or
//                    CUPTI's callback thread when it delivers inline), never concurrently.
//   record_flag_graph  set in event::flags for kernels launched from a CUDA graph.
// Complexity: plain data and an interface.
// Errors: none here; a sink's exception stops the collector from feeding it (see
//   collect/cupti_collector.hpp), it never reaches CUPTI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "failslow/core/event.hpp"

namespace failslow::collect {

/// event::flags bit: the kernel ran as a node of a CUDA graph (graph_id / graph_node_id set).
inline constexpr std::uint8_t record_flag_graph = 1;

struct activity_record {
  event ev;                         ///< host-clock nanoseconds; name interned in the collector's table
  std::uint64_t graph_node_id = 0;  ///< CUDA-graph node (0 when not launched from a graph)
  std::uint32_t graph_id = 0;       ///< CUDA graph (0 when not launched from a graph)
  std::uint32_t context = 0;        ///< CUDA context id
  std::uint64_t bytes = 0;          ///< bytes copied or set (memcpy, memset); 0 for kernels
};

static_assert(std::is_trivially_copyable_v<activity_record>, "activity_record must stay memcpy-able");
static_assert(sizeof(activity_record) == 64, "activity_record layout changed: update the documentation");

enum class mark_kind : std::uint8_t {
  step,   ///< step `step` begins at time_ns; the previous step ends there
  phase,  ///< a phase named `name` ran from time_ns to end_ns
};
/// Number of mark_kind values (they are 0 .. mark_kind_count - 1).
inline constexpr std::size_t mark_kind_count = 2;

struct step_mark {
  std::int64_t time_ns = 0;  ///< host clock: the step's start, or the phase's start
  std::int64_t end_ns = 0;   ///< the phase's end (steps: equal to time_ns)
  std::int64_t step = 0;     ///< step number (phases: the step they ran in, -1 if none)
  name_id name = 0;          ///< the phase's interned name (steps: unused)
  mark_kind kind = mark_kind::step;
};

/// Receives what a collector captured; see the synopsis for the threading contract.
class record_sink {
 public:
  virtual ~record_sink() = default;
  /// A batch of records, in the order CUPTI delivered them (not necessarily by start time).
  virtual void records(const activity_record* batch, std::size_t n) = 0;
  /// A step or phase mark; marks arrive in increasing time_ns.
  virtual void mark(const step_mark& m) { (void)m; }
  /// Every record that ends before `watermark_ns` has probably been delivered (CUPTI gives
  /// no stronger promise): the sink may close what lies before it.
  virtual void delivered(std::int64_t watermark_ns) { (void)watermark_ns; }
  /// The collector stopped at `end_ns` (host clock): nothing more will come.
  virtual void finish(std::int64_t end_ns) { (void)end_ns; }
};

}  // namespace failslow::collect
