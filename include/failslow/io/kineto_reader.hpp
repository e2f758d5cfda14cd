// failslow/io/kineto_reader.hpp -- reads PyTorch profiler (Kineto) Chrome-trace JSON.
//
// Synopsis
//   trace_data read_kineto_file(path, names, options)     .json or .json.gz (gzip by magic bytes)
//   trace_data read_kineto_buffer(json, names, options)   JSON text in memory (not copied whole)
//   kineto_reader r; r.read_file(...)                     keeps the parser (and its buffers)
//                                                         between files: one per thread
//   One streaming pass over the document with simdjson's on-demand API (an optional component:
//   target failslow::simdjson, macro FAILSLOW_HAS_SIMDJSON). Without it these functions throw
//   failslow::unavailable_error and kineto_reader_available is false.
//
//   Top level (an object; a bare array is read as its traceEvents): traceEvents,
//   distributedInfo {backend, rank, world_size, pg_count, pg_config[], nccl_version},
//   deviceProperties[], baseTimeNanoseconds, schemaVersion; other keys are skipped.
//   traceEvents entries with "ph": "X" become events by "cat":
//     kernel                 event_kind from kernel_classifier::device_kind(name): NCCL/RCCL
//                            kernels (ncclKernel_*, ncclDevKernel_*, ...) become collective
//     gpu_memcpy, gpu_memset memcpy, memset
//     cuda_runtime, cuda_driver   runtime (cudaLaunchKernel, hipLaunchKernel, ...)
//     cpu_op                 cpu_op
//     user_annotation        annotation on the host (ProfilerStep#N, phases); device = -1
//     gpu_user_annotation    annotation on a GPU stream; device >= 0
//     no "cat" (or "")       the plain Chrome trace of torch.profiler without Kineto (Debian's
//                            python3-torch, torch.autograd.profiler's export_chrome_trace: a bare
//                            array, pid "CPU functions", no distributedInfo): host events, kind by
//                            name (host_kind_by_name): ProfilerStep#N is an annotation (a step);
//                            operators -- names with "::" (aten::mm, c10d::allreduce_,
//                            autograd::engine::...), autograd nodes (AddmmBackward0) and
//                            collectives (gloo:all_reduce, nccl:*, record_param_comms, what the
//                            classifier calls communication) -- are cpu_op; any other name is a
//                            user scope (record_function("forward"), Optimizer.step#SGD.step),
//                            an annotation. Counted in read_stats::kind_by_name.
//   GPU events: device = args.device (else pid), stream = args.stream (else tid),
//   correlation = args.correlation; host events: stream = tid (negative tids, which Kineto
//   writes for some threads, modulo 2^32), device = -1, and runtime
//   events carry args.correlation, which links a launch to the GPU work it started.
//   Kernels' args.grid / args.block go to trace_data::launches; NCCL args ("Collective name",
//   "Group size", "Process Group Name", "Process Group Description", "Process Group Ranks",
//   "In msg nelems", "Out msg nelems", "dtype") to trace_data::collectives.
//   Everything else is counted in read_stats (M metadata, s/t/f flows, i/I instants, other
//   phases, complete events of other categories by name, malformed events by reason), so
//   read_stats::accounted() holds for every file that reads.
// Timestamps: ts and dur are microseconds (Chrome trace format), integer or fractional
//   ("1712195495519695.8"), converted to integer nanoseconds from the decimal text, rounding
//   half to even below 1 ns: no precision is lost where a double would lose it (a double
//   holds 1.7e15 us only to 0.25 us). timestamp_unit::nanoseconds reads ts/dur as ns instead
//   (for writers that emit ns). baseTimeNanoseconds, when present, is added to every event
//   (apply_base_time): start_ns = baseTimeNanoseconds + ts * 1000, exact.
// Parts (io/detail/): kineto_input.hpp (the padded pieces simdjson reads, offsets, errors, scalar
//   reads), kineto_classify.hpp (categories, host_kind_by_name), kineto_metadata.hpp
//   (distributedInfo, pg_config, deviceProperties), kineto_event_fields.hpp (one event's fields
//   as written), kineto_builder.hpp (raw fields -> events, launches, collectives); json_scan.hpp
//   finds and cuts traceEvents. This header walks the document and ties them together.
// Complexity: O(bytes). A structural pre-scan (64 bytes at a time with AVX-512BW or AVX2 where
//   the CPU has them, picked at run time, else what the build targets: strings and bracket
//   depth only) finds traceEvents and
//   cuts it into chunks of whole events (chunk_bytes, 1 MiB); each chunk is parsed by one
//   reused simdjson parser as soon as the scan has found it (its bytes still in cache; errors,
//   event order and name ids as if the whole scan came first), so memory is the file (read
//   into memory, on Linux into huge pages; or gunzipped) + O(chunk) + 40 bytes per stored
//   event (the vector keeps at most 25 % spare capacity) + the side tables, whatever the file
//   size. A kineto_reader keeps its parser between files: use one per thread.
// Errors (documented, tested):
//   parse_error   malformed JSON: truncated file, unbalanced brackets, bad literals (NaN),
//                 malformed numbers, trailing content, nesting deeper than max_depth, a root
//                 that is not an object or array, traceEvents not an array, top-level blocks
//                 (distributedInfo, deviceProperties, baseTimeNanoseconds) of the wrong type.
//                 where() has the byte offset (and line/column) and expected() what was due;
//                 bytes that are not UTF-8 and control characters inside strings (found by
//                 simdjson's stage 1 without a position) are located by the reader.
//   counted, not thrown (read_stats): events of unknown kinds, and malformed events: missing
//                 ph/name/ts/dur (missing_field), a field of the wrong JSON type (bad_type),
//                 dur < 0 (negative_duration), numbers past int64 ns or ids that do not fit
//                 the event (out_of_range); with options.strict_events these throw parse_error.
//   domain_error  baseTimeNanoseconds + ts overflows int64 nanoseconds (after year 2262).
//   invalid_argument / parse_error  the file cannot be opened / its gzip data is corrupt.
//   unavailable_error  built without simdjson.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/core/event.hpp"
#include "failslow/core/kernel_class.hpp"
#include "failslow/core/name_table.hpp"
#include "failslow/io/detail/decimal.hpp"
#include "failslow/io/detail/kineto_classify.hpp"
#include "failslow/io/trace_data.hpp"

#if defined(FAILSLOW_HAS_SIMDJSON)
#include <simdjson.h>

#include "failslow/io/detail/file_bytes.hpp"
#include "failslow/io/detail/json_scan.hpp"
#include "failslow/io/detail/kineto_builder.hpp"
#include "failslow/io/detail/kineto_event_fields.hpp"
#include "failslow/io/detail/kineto_input.hpp"
#include "failslow/io/detail/kineto_metadata.hpp"
#endif

namespace failslow::io {

/// Unit of ts and dur in the file.
enum class timestamp_unit : std::uint8_t { microseconds, nanoseconds };
/// Number of timestamp_unit values (they are 0 .. timestamp_unit_count - 1).
inline constexpr std::size_t timestamp_unit_count = 2;

struct kineto_read_options {
  timestamp_unit unit = timestamp_unit::microseconds;
  bool apply_base_time = true;  ///< add baseTimeNanoseconds to every event time
  bool strict_events = false;   ///< malformed events throw parse_error instead of being counted
  /// Classifies kernel names (kernel vs collective); nullptr = kernel_classifier::defaults().
  const kernel_classifier* classifier = nullptr;
  std::size_t max_depth = 1024;  ///< deepest JSON nesting accepted
  /// traceEvents is parsed in chunks of whole events of about this many bytes, with one
  /// reused parser: memory stays O(chunk) besides the file and the events.
  std::size_t chunk_bytes = std::size_t{1} << 20;
};

#if defined(FAILSLOW_HAS_SIMDJSON)
inline constexpr bool kineto_reader_available = true;
#else
inline constexpr bool kineto_reader_available = false;
#endif

#if defined(FAILSLOW_HAS_SIMDJSON)

class kineto_reader {
 public:
  kineto_reader() = default;

  /// Reads a .json or .json.gz file (read or gunzipped into memory); names are
  /// interned into `names`.
  trace_data read_file(const std::string& path, name_table& names, const kineto_read_options& options = {}) {
    const auto bytes = detail::file_bytes::open(path);
    return read_buffer(bytes.view(), names, options, path);
  }

  /// Reads JSON text from memory (not copied as a whole: chunks of events are).
  trace_data read_buffer(std::string_view json, name_table& names, const kineto_read_options& options = {},
                         std::string source = "<buffer>") {
    {
      run r(*this, json, source, names, options);
      if (auto t = r.parse_interleaved()) return std::move(*t);
    }
    run r(*this, json, std::move(source), names, options);  // a second traceEvents array: in order
    return r.parse_in_order();
  }

 private:
  simdjson::ondemand::parser parser_;
  std::vector<char> buffer_;  // the padded copy simdjson parses: the skeleton, then each chunk

  // One parse: walks the document (the top-level object, then traceEvents chunk by chunk) and
  // hands each part to its reader (io/detail/kineto_*.hpp).
  class run {
   public:
    run(kineto_reader& owner, std::string_view doc, std::string source, name_table& names,
        const kineto_read_options& options)
        : options_(options),
          in_(doc, std::move(source), options.max_depth, options.chunk_bytes, options.strict_events, owner.parser_,
              owner.buffer_),
          fields_(in_),
          build_(in_, names, options.classifier ? *options.classifier : default_classifier(),
                 options.unit == timestamp_unit::microseconds, options.apply_base_time) {}

    // The order of work that decides what a read gives (events, name ids, errors): the
    // structural scan of the whole document; then the top-level blocks (the document with the
    // contents of traceEvents cut out: the "skeleton"), whose errors come first; then the events
    // chunk by chunk; names reach the shared table in the order the events meet them.
    // parse_in_order does exactly that. parse_interleaved gives the same result faster: each
    // chunk is parsed as soon as the scan has found it (its bytes still in cache, not read
    // again from memory), and what must come first is restored afterwards: the first error of
    // a chunk is held until the scan and the skeleton have passed (their errors win), the
    // builder interns names locally and hands them to the shared table only when the old order
    // would have (kineto_builder::commit_names). A second traceEvents array in the skeleton
    // puts events before the first array's: then it returns nothing and the caller reads in
    // order.
    std::optional<trace_data> parse_interleaved() {
      detail::events_scanner scanner(in_.begin(), in_.size(), options_.chunk_bytes, options_.max_depth, in_.source());
      scanner.on_chunk(&run::chunk_found, this);
      const auto layout = scanner.scan();
      if (layout.more_trace_events) return std::nullopt;
      if (!layout.root_is_array) load_and_parse_skeleton(layout);
      if (error_) {
        build_.commit_names();
        std::rethrow_exception(error_);
      }
      return build_.finish();
    }

    trace_data parse_in_order() {
      const auto layout =
          detail::events_scanner(in_.begin(), in_.size(), options_.chunk_bytes, options_.max_depth, in_.source())
              .scan();
      try {
        if (!layout.root_is_array) load_and_parse_skeleton(layout);
        trace_data& out = build_.out();
        out.events.reserve(layout.count);
        detail::advise_huge_pages(out.events.data(), out.events.capacity() * sizeof(event));
        for (const auto& [b, e] : layout.chunks) parse_chunk_at(b, e);
      } catch (...) {
        build_.commit_names();
        throw;
      }
      return build_.finish();
    }

   private:
    // The scanner found events [b, e): parse them now, unless a chunk before failed (then the
    // scan only goes on, for its own errors). Errors are held (see parse_interleaved).
    static void chunk_found(void* self, std::size_t b, std::size_t e) {
      auto& r = *static_cast<run*>(self);
      if (r.error_) return;
      try {
        r.reserve_events(b, e);
        r.parse_chunk_at(b, e);
      } catch (...) {
        r.error_ = std::current_exception();
      }
      ++r.chunks_;
    }

    // The event vector's capacity, from the events stored per byte so far (the count of
    // entries is not known before the scan ends): enough for the rest of the document, so that
    // it is allocated about once and finish() need not trim it.
    void reserve_events(std::size_t b, std::size_t e) {
      auto& ev = build_.out().events;
      if (chunks_ == 0) {
        first_chunk_ = b;
        return;
      }
      const double per_byte = static_cast<double>(ev.size()) / static_cast<double>(b - first_chunk_);
      const auto need = ev.size() + static_cast<std::size_t>(per_byte * 1.25 * static_cast<double>(e - b)) + 16;
      if (ev.capacity() >= need) return;
      const auto rest = static_cast<std::size_t>(per_byte * 1.05 * static_cast<double>(in_.size() - b)) + 16;
      ev.reserve(ev.size() + (rest > need - ev.size() ? rest : need - ev.size()));
      detail::advise_huge_pages(ev.data(), ev.capacity() * sizeof(event));
    }

    void load_and_parse_skeleton(const detail::events_layout& layout) {
      // The document without the contents of traceEvents: the top-level blocks.
      std::size_t gap_at = 0, gap = 0;
      if (layout.found) {
        gap_at = layout.open + 1;
        gap = layout.close - layout.open - 1;
      }
      const std::size_t size = in_.size();
      in_.load(std::string_view(in_.begin(), gap_at == 0 ? size : gap_at),
               std::string_view(in_.begin() + gap_at + gap, gap_at == 0 ? 0 : size - gap_at - gap));
      in_.enter_skeleton(gap_at, gap);
      parse_skeleton();
    }

    void parse_chunk_at(std::size_t b, std::size_t e) {
      in_.enter_chunk(b);
      in_.load("[", std::string_view(in_.begin() + b, e - b), "]");
      parse_chunk();
    }

    static const kernel_classifier& default_classifier() {
      static const kernel_classifier c = kernel_classifier::defaults();
      return c;
    }

    void parse_skeleton() {
      using namespace simdjson;
      ondemand::document doc = in_.iterate();
      ondemand::json_type root_type;
      if (auto e = doc.type().get(root_type))
        in_.fail_code(e, detail::kineto_input::location(doc), "a JSON object or array at the top level");
      if (root_type != ondemand::json_type::object)
        in_.fail_at(in_.loaded(), "a JSON object or array at the top level");
      ondemand::object root;
      if (auto e = doc.get_object().get(root)) in_.fail_code(e, detail::kineto_input::location(doc), "a JSON object");
      read_root(root, doc);
      in_.check_end(doc);
    }

    void parse_chunk() {
      using namespace simdjson;
      ondemand::document doc = in_.iterate();
      ondemand::array arr;
      if (auto e = doc.get_array().get(arr))
        in_.fail_code(e, detail::kineto_input::location(doc), "an array of trace events");
      read_events(arr, doc);
      in_.check_end(doc);
    }

    void read_root(simdjson::ondemand::object& root, simdjson::ondemand::document& doc) {
      trace_data& out = build_.out();
      bool saw_events = false;
      for (auto field_res : root) {
        simdjson::ondemand::field field;
        if (auto e = std::move(field_res).get(field))
          in_.fail_code(e, detail::kineto_input::location(doc), "a key/value pair of the top-level object");
        const std::string_view key = detail::raw_string_text(field.key().raw());
        in_.mark(key.data());
        simdjson::ondemand::value v = field.value();
        if (key == "traceEvents") {
          simdjson::ondemand::array arr = in_.expect_array(v, doc, "traceEvents to be an array");
          saw_events = true;
          read_events(arr, doc);
        } else if (key == "distributedInfo") {
          out.distributed = detail::read_distributed_info(in_, v, doc);
        } else if (key == "deviceProperties") {
          detail::read_device_properties(in_, v, doc, out.devices);
        } else if (key == "baseTimeNanoseconds") {
          out.base_time_ns = in_.block_int(v, "an integer baseTimeNanoseconds");
        } else if (key == "schemaVersion") {
          std::int64_t sv = 0;
          if (in_.number(v.raw_json_token(), 0, sv, true) == detail::kineto_num::ok) out.schema_version = sv;
        } else {
          // Skipped: but a malformed scalar must not pass unnoticed.
          in_.check_skipped_scalar(v);
        }
      }
      out.has_trace_events = saw_events;  // without traceEvents: an empty trace, flagged
    }

    void read_events(simdjson::ondemand::array& arr, simdjson::ondemand::document& doc) {
      for (auto item_res : arr) {
        // Used in place (no copies of simdjson's iterators: they cost store-forwarding stalls).
        if (auto e = item_res.error())
          in_.fail_code(e, detail::kineto_input::location(doc), "a trace event (an object) in traceEvents");
        simdjson::ondemand::value&& item = std::move(item_res).value_unsafe();
        ++build_.out().stats.events_seen;
        in_.begin_event(item.raw_json_token().data());
        simdjson::ondemand::object obj;
        if (auto e = item.get_object().get(obj)) {
          if (e != simdjson::INCORRECT_TYPE)
            in_.fail_code(e, detail::kineto_input::location(doc), "a trace event (an object) in traceEvents");
          in_.check_skipped_scalar(item);
          build_.malformed(&read_stats::bad_type, "a trace event to be an object");
          continue;
        }
        ev_.clear();
        fields_.read(obj, doc, ev_);
        build_.add(ev_);
      }
    }

    const kineto_read_options& options_;
    detail::kineto_input in_;
    detail::kineto_event_fields fields_;
    detail::kineto_builder build_;
    detail::kineto_raw_event ev_;               // the event being read (cleared for each)
    std::size_t chunks_ = 0, first_chunk_ = 0;  // chunks found so far; where the first begins
    std::exception_ptr error_;                  // the first chunk error, held
  };
};

inline trace_data read_kineto_file(const std::string& path, name_table& names,
                                   const kineto_read_options& options = {}) {
  kineto_reader r;
  return r.read_file(path, names, options);
}

inline trace_data read_kineto_buffer(std::string_view json, name_table& names, const kineto_read_options& options = {},
                                     std::string source = "<buffer>") {
  kineto_reader r;
  return r.read_buffer(json, names, options, std::move(source));
}

#else  // !FAILSLOW_HAS_SIMDJSON

namespace detail {
[[noreturn]] inline void kineto_unavailable() {
  throw unavailable_error(
      "the Kineto reader is unavailable: failslow was built without simdjson (configure with "
      "-DFAILSLOW_WITH_SIMDJSON=ON and link failslow::simdjson)");
}
}  // namespace detail

/// Stand-in when built without simdjson: every call throws unavailable_error.
class kineto_reader {
 public:
  trace_data read_file(const std::string&, name_table&, const kineto_read_options& = {}) {
    detail::kineto_unavailable();
  }
  trace_data read_buffer(std::string_view, name_table&, const kineto_read_options& = {}, std::string = {}) {
    detail::kineto_unavailable();
  }
};

inline trace_data read_kineto_file(const std::string&, name_table&, const kineto_read_options& = {}) {
  detail::kineto_unavailable();
}
inline trace_data read_kineto_buffer(std::string_view, name_table&, const kineto_read_options& = {}, std::string = {}) {
  detail::kineto_unavailable();
}

#endif

}  // namespace failslow::io
