// failslow/collect/flight_recorder.hpp -- the most recent raw activity records in a fixed ring,
// dumped as a PyTorch-profiler (Kineto) trace on demand (KAT section 4.3: "keep the last
// minutes of raw trace").
//
// Synopsis
//   flight_recorder rec(capacity_bytes)   a ring of capacity_bytes / 64 activity_records
//                                         (collect/record_sink.hpp), allocated up front
//   rec.records(batch, n)   appends (a record_sink; the oldest records are overwritten)
//   rec.mark(m)             keeps step and phase marks in a ring of their own (1/16 of the
//                           capacity, at least 64), dumped as annotations
//   rec.snapshot()          the records and marks now in the ring, oldest first
//   write_kineto_json(snapshot, names, out, options)   the snapshot as a Kineto trace:
//     traceEvents "X" events -- cat kernel (collectives too), gpu_memcpy, gpu_memset on pid =
//     device, tid = stream, args {device, stream, correlation, context, graph id, graph node
//     id, bytes}; launch calls (collector_options::launches) as cuda_runtime on pid -1, tid =
//     thread, linked to their kernels by correlation; steps as user_annotation
//     "ProfilerStep#N" and phases as user_annotation with
//     their names on pid = host_pid, tid = 0; ts and dur in microseconds with three decimals
//     (exact integer nanoseconds) relative to baseTimeNanoseconds; distributedInfo {rank}
//     when the rank is known. io/kineto_reader.hpp reads it back to the same events.
// Dumping never blocks the capture path for long: snapshot() copies the ring in chunks of
//   chunk_records (a few microseconds each) under the writer's lock, and drops the records
//   the writer overwrote meanwhile (counted in snapshot::overwritten).
// Thread safety: records/mark from one writer thread; snapshot from any thread, concurrently.
// Memory: capacity_bytes (rounded down to whole records) + the marks ring; never grows.
// Complexity: records O(n); snapshot O(capacity); write O(records in the snapshot).
// Errors: capacity_bytes < 64 * 16 throws failslow::invalid_argument.
#pragma once

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "failslow/collect/record_sink.hpp"
#include "failslow/core/compile_mode.hpp"
#include "failslow/core/error.hpp"
#include "failslow/core/name_table.hpp"
#include "failslow/io/detail/json_writer.hpp"

namespace failslow::collect {

struct recorder_snapshot {
  std::vector<activity_record> records;  ///< oldest first
  std::vector<step_mark> marks;          ///< oldest first
  std::uint64_t total_records = 0;       ///< records ever appended
  std::uint64_t overwritten = 0;         ///< records the writer replaced while the snapshot copied
};

class flight_recorder final : public record_sink {
 public:
  static constexpr std::size_t chunk_records = 1024;

  explicit flight_recorder(std::size_t capacity_bytes)
      : ring_(check(capacity_bytes) / sizeof(activity_record)), marks_(std::max<std::size_t>(64, ring_.size() / 16)) {}

  FAILSLOW_INLINE void records(const activity_record* batch, std::size_t n) override;

  void mark(const step_mark& m) override {
    std::lock_guard<std::mutex> lock(mutex_);
    marks_[static_cast<std::size_t>(marks_head_ % marks_.size())] = m;
    ++marks_head_;
  }

  /// The ring's records and marks, oldest first (see the synopsis for concurrency).
  FAILSLOW_FUNC recorder_snapshot snapshot() const;

  std::size_t capacity() const noexcept { return ring_.size(); }
  std::uint64_t total_records() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return head_;
  }

 private:
  FAILSLOW_FUNC static std::size_t check(std::size_t bytes);
  void head_add(std::size_t n) {
    std::lock_guard<std::mutex> lock(mutex_);
    head_ += n;
  }

  std::vector<activity_record> ring_;
  std::vector<step_mark> marks_;
  std::uint64_t head_ = 0, marks_head_ = 0;
  mutable std::mutex mutex_;
};

struct kineto_dump_options {
  std::int32_t rank = -1;          ///< distributedInfo.rank; -1 = not written
  std::int64_t host_pid = 0;       ///< pid of the annotations (steps, phases)
  std::int64_t base_time_ns = -1;  ///< baseTimeNanoseconds; -1 = the earliest time in the dump
};

namespace detail {

// Integer nanoseconds as microseconds with exactly three decimals ("-12.345").
FAILSLOW_FUNC void append_us(std::string& out, std::int64_t ns);

FAILSLOW_FUNC std::string_view kineto_category(const event& e) noexcept;

}  // namespace detail

/// Appends the snapshot as a Kineto JSON document to `out` (see the synopsis).
template <class Allocator>
void write_kineto_json(const recorder_snapshot& s, const basic_name_table<Allocator>& names, std::string& out,
                       const kineto_dump_options& opt = {}) {
  std::int64_t base = opt.base_time_ns;
  if (base < 0) {
    base = std::numeric_limits<std::int64_t>::max();
    for (const auto& r : s.records) base = std::min(base, r.ev.start_ns);
    for (const auto& m : s.marks) base = std::min(base, m.time_ns);
    if (base == std::numeric_limits<std::int64_t>::max()) base = 0;
  }
  using io::detail::append_escaped;
  out += "{\"schemaVersion\":1,";
  if (opt.rank >= 0) out += "\"distributedInfo\":{\"rank\":" + std::to_string(opt.rank) + "},";
  out += "\"traceEvents\":[";
  bool first = true;
  auto begin_event = [&] {
    if (!first) out += ",\n";
    first = false;
  };
  for (std::size_t i = 0; i < s.marks.size(); ++i) {
    const auto& m = s.marks[i];
    begin_event();
    std::int64_t end = m.end_ns;
    std::string name;
    if (m.kind == mark_kind::step) {
      // A step lasts until the next step mark (or has no duration when it is the last).
      end = m.time_ns;
      for (std::size_t j = i + 1; j < s.marks.size(); ++j)
        if (s.marks[j].kind == mark_kind::step) {
          end = s.marks[j].time_ns;
          break;
        }
      name = "ProfilerStep#" + std::to_string(m.step);
    } else {
      name = std::string(names.name(m.name));
    }
    out += "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":";
    append_escaped(out, name);
    out += ",\"pid\":" + std::to_string(opt.host_pid) + ",\"tid\":0,\"ts\":";
    detail::append_us(out, m.time_ns - base);
    out += ",\"dur\":";
    detail::append_us(out, std::max<std::int64_t>(0, end - m.time_ns));
    out += '}';
  }
  for (const auto& r : s.records) {
    const event& e = r.ev;
    begin_event();
    out += "{\"ph\":\"X\",\"cat\":\"";
    out += detail::kineto_category(e);
    out += "\",\"name\":";
    append_escaped(out, names.name(e.name));
    out += ",\"pid\":" + std::to_string(e.device) + ",\"tid\":" + std::to_string(e.stream) + ",\"ts\":";
    detail::append_us(out, e.start_ns - base);
    out += ",\"dur\":";
    detail::append_us(out, e.duration_ns());
    out += ",\"args\":{\"device\":" + std::to_string(e.device) + ",\"stream\":" + std::to_string(e.stream) +
           ",\"correlation\":" + std::to_string(e.correlation) + ",\"context\":" + std::to_string(r.context);
    if (e.flags & record_flag_graph)
      out += ",\"graph id\":" + std::to_string(r.graph_id) + ",\"graph node id\":" + std::to_string(r.graph_node_id);
    if (e.kind == event_kind::memcpy || e.kind == event_kind::memset) out += ",\"bytes\":" + std::to_string(r.bytes);
    out += "}}";
  }
  out += "],\"baseTimeNanoseconds\":" + std::to_string(base) + "}\n";
}

}  // namespace failslow::collect

#if FAILSLOW_HEADER_ONLY
#include "failslow/collect/impl/flight_recorder.ipp"
#endif
