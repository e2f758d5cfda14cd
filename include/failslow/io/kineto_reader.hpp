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
// Complexity: O(bytes). A structural pre-scan (64 bytes at a time with AVX-512BW, AVX2 or
//   SSE2, whichever the build targets: strings and bracket depth only) finds traceEvents and
//   cuts it into chunks of whole events (chunk_bytes, 1 MiB); each chunk is parsed by one
//   reused simdjson parser, so memory is the file (read into memory, on Linux into huge
//   pages; or gunzipped) + O(chunk) + 40 bytes per stored event (the vector keeps at most 25 %
//   spare capacity) + the side tables, whatever the file size. A kineto_reader keeps its
//   parser between files: use one per thread.
// Errors (documented, tested):
//   parse_error   malformed JSON: truncated file, unbalanced brackets, bad literals (NaN),
//                 malformed numbers, trailing content, nesting deeper than max_depth, a root
//                 that is not an object or array, traceEvents not an array, top-level blocks
//                 (distributedInfo, deviceProperties, baseTimeNanoseconds) of the wrong type.
//                 where() has the byte offset (and line/column) and expected() what was due.
//   counted, not thrown (read_stats): events of unknown kinds, and malformed events: missing
//                 ph/name/ts/dur (missing_field), a field of the wrong JSON type (bad_type),
//                 dur < 0 (negative_duration), numbers past int64 ns or ids that do not fit
//                 the event (out_of_range); with options.strict_events these throw parse_error.
//   domain_error  baseTimeNanoseconds + ts overflows int64 nanoseconds (after year 2262).
//   invalid_argument / parse_error  the file cannot be opened / its gzip data is corrupt.
//   unavailable_error  built without simdjson.
#pragma once

#include <cstdint>
#include <cstring>
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
#include "failslow/io/trace_data.hpp"

#if defined(FAILSLOW_HAS_SIMDJSON)
#include <simdjson.h>

#include "failslow/io/detail/file_bytes.hpp"
#include "failslow/io/detail/json_scan.hpp"
#endif

namespace failslow::io {

/// Unit of ts and dur in the file.
enum class timestamp_unit : std::uint8_t { microseconds, nanoseconds };

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

namespace detail {

/// Raw text of a key or string value as it appears in the file (escapes not processed).
inline std::string_view raw_string_text(const char* raw) noexcept {
  // Keys are short: a plain loop over the first 32 bytes (the text is a validated string, so
  // its closing quote comes before the end of the buffer), memchr beyond.
  for (std::size_t k = 0; k < 32; ++k) {
    if (raw[k] == '\\') break;
    if (raw[k] == '"') return std::string_view(raw, k);
  }
  const char* p = raw;
  for (;;) {
    const char* q = static_cast<const char*>(std::memchr(p, '"', 1 << 20));
    if (!q) return std::string_view(raw, 0);
    std::size_t backslashes = 0;
    while (q - backslashes > raw && q[-1 - static_cast<std::ptrdiff_t>(backslashes)] == '\\') ++backslashes;
    if (backslashes % 2 == 0) return std::string_view(raw, static_cast<std::size_t>(q - raw));
    p = q + 1;
  }
}

/// Parses "[0, 1, 2]" (the text Kineto writes for Process Group Ranks).
inline bool parse_rank_list_text(std::string_view s, std::vector<std::int32_t>& out) {
  out.clear();
  std::size_t i = 0;
  auto skip = [&] {
    while (i < s.size() && is_json_space(s[i])) ++i;
  };
  skip();
  if (i >= s.size() || s[i] != '[') return false;
  ++i;
  skip();
  if (i < s.size() && s[i] == ']') return ++i, skip(), i == s.size();
  for (;;) {
    skip();
    const std::size_t b = i;
    if (i < s.size() && s[i] == '-') ++i;
    while (i < s.size() && is_digit(s[i])) ++i;
    const auto v = parse_scaled(s.substr(b, i - b), 0);
    if (v.status != number_status::ok || !v.exact || v.value < std::numeric_limits<std::int32_t>::min() ||
        v.value > std::numeric_limits<std::int32_t>::max())
      return false;
    out.push_back(static_cast<std::int32_t>(v.value));
    skip();
    if (i < s.size() && s[i] == ',') {
      ++i;
      continue;
    }
    if (i < s.size() && s[i] == ']') {
      ++i;
      skip();
      return i == s.size();
    }
    return false;
  }
}

}  // namespace detail

/// Kind of a host event known only by its name (a Chrome trace without "cat", as torch.profiler
/// writes it without Kineto): cpu_op for operators -- a name with "::" (aten::mm,
/// c10d::allreduce_, autograd::engine::evaluate_function: ...), an autograd node
/// (AddmmBackward0, MseLossBackward, the [A-Za-z0-9_]*Backward<digits> form) or a name the
/// classifier calls communication (gloo:all_reduce, nccl:*, record_param_comms) -- and
/// annotation for the rest: ProfilerStep#N and user scopes (record_function: "forward",
/// "Optimizer.step#SGD.step", "DistributedDataParallel.forward").
inline event_kind host_kind_by_name(std::string_view name, const kernel_classifier& classifier) noexcept {
  if (name.find("::") != std::string_view::npos) return event_kind::cpu_op;
  std::size_t end = name.size();
  while (end > 0 && name[end - 1] >= '0' && name[end - 1] <= '9') --end;
  constexpr std::string_view node = "Backward";
  if (end > node.size() && name.substr(end - node.size(), node.size()) == node) {
    bool identifier = true;
    for (std::size_t i = 0; i < end; ++i) {
      const char ch = name[i];
      identifier =
          identifier && ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_');
    }
    if (identifier) return event_kind::cpu_op;
  }
  if (classifier.classify(name) == kernel_class::communication) return event_kind::cpu_op;
  return event_kind::annotation;
}

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
    run r(*this, json, std::move(source), names, options);
    return r.parse();
  }

 private:
  simdjson::ondemand::parser parser_;
  std::vector<char> buffer_;  // the padded copy simdjson parses: the skeleton, then each chunk

  // One parse: the state of reading one document.
  class run {
   public:
    run(kineto_reader& owner, std::string_view doc, std::string source, name_table& names,
        const kineto_read_options& options)
        : owner_(owner),
          begin_(doc.data()),
          size_(doc.size()),
          names_(names),
          options_(options),
          classifier_(options.classifier ? *options.classifier : default_classifier()) {
      out_.source = std::move(source);
      scale_ = options.unit == timestamp_unit::microseconds ? 3 : 0;
    }

    trace_data parse() {
      const auto layout =
          detail::events_scanner(begin_, size_, options_.chunk_bytes, options_.max_depth, out_.source).scan();
      if (!layout.root_is_array) {
        // The document without the contents of traceEvents: the top-level blocks.
        if (layout.found) {
          gap_at_ = layout.open + 1;
          gap_ = layout.close - layout.open - 1;
        }
        load(std::string_view(begin_, gap_at_ == 0 ? size_ : gap_at_),
             std::string_view(begin_ + gap_at_ + gap_, gap_at_ == 0 ? 0 : size_ - gap_at_ - gap_));
        mode_ = mode::skeleton;
        parse_skeleton();
      }
      mode_ = mode::chunk;
      out_.events.reserve(layout.count);
      detail::advise_huge_pages(out_.events.data(), out_.events.capacity() * sizeof(event));
      for (const auto& [b, e] : layout.chunks) {
        chunk_begin_ = b;
        load("[", std::string_view(begin_ + b, e - b), "]");
        parse_chunk();
      }
      finish();
      return std::move(out_);
    }

   private:
    enum class mode { skeleton, chunk };

    // Copies the pieces into the padded buffer simdjson reads.
    void load(std::string_view a, std::string_view b, std::string_view c = {}) {
      auto& buf = owner_.buffer_;
      const std::size_t n = a.size() + b.size() + c.size();
      if (buf.size() < n + simdjson::SIMDJSON_PADDING) buf.resize(n + simdjson::SIMDJSON_PADDING);
      char* p = buf.data();
      if (!a.empty()) std::memcpy(p, a.data(), a.size());
      if (!b.empty()) std::memcpy(p + a.size(), b.data(), b.size());
      if (!c.empty()) std::memcpy(p + a.size() + b.size(), c.data(), c.size());
      std::memset(p + n, 0, simdjson::SIMDJSON_PADDING);
      buf_ = p;
      buf_size_ = n;
    }

    simdjson::ondemand::document iterate() {
      auto& parser = owner_.parser_;
      if (parser.max_depth() != options_.max_depth || parser.capacity() < buf_size_) {
        const std::size_t want = buf_size_ < options_.chunk_bytes ? options_.chunk_bytes : buf_size_;
        if (auto e = parser.allocate(want < 64 ? 64 : want + want / 8, options_.max_depth))
          fail_code(e, nullptr, "memory");
      }
      simdjson::ondemand::document doc;
      if (auto e = parser.iterate(simdjson::padded_string_view(buf_, buf_size_, owner_.buffer_.size())).get(doc))
        fail_code(e, nullptr, "a JSON document");
      return doc;
    }

    void parse_skeleton() {
      using namespace simdjson;
      ondemand::document doc = iterate();
      ondemand::json_type root_type;
      if (auto e = doc.type().get(root_type)) fail_code(e, location(doc), "a JSON object or array at the top level");
      if (root_type != ondemand::json_type::object) fail_at(buf_, "a JSON object or array at the top level");
      ondemand::object root;
      if (auto e = doc.get_object().get(root)) fail_code(e, location(doc), "a JSON object");
      read_root(root, doc);
      check_end(doc);
    }

    void parse_chunk() {
      using namespace simdjson;
      ondemand::document doc = iterate();
      ondemand::array arr;
      if (auto e = doc.get_array().get(arr)) fail_code(e, location(doc), "an array of trace events");
      read_events(arr, doc);
      check_end(doc);
    }

    // Content after the top-level value: the document must be exhausted.
    void check_end(simdjson::ondemand::document& doc) {
      const char* p = nullptr;
      if (!doc.current_location().get(p)) fail_at(p, "the end of the document after the top-level value");
    }

    // Offset in the original document of a pointer into the buffer simdjson reads.
    std::size_t doc_offset(const char* p) const noexcept {
      if (!p || p < buf_ || p > buf_ + buf_size_) p = buf_ + buf_size_;
      std::size_t o = static_cast<std::size_t>(p - buf_);
      if (mode_ == mode::chunk) {
        o = o == 0 ? chunk_begin_ - 1 : chunk_begin_ + o - 1;
      } else if (gap_at_ != 0 && o >= gap_at_) {
        o += gap_;
      }
      return o > size_ ? size_ : o;
    }

   private:
    static const kernel_classifier& default_classifier() {
      static const kernel_classifier c = kernel_classifier::defaults();
      return c;
    }

    // ---- errors ------------------------------------------------------------------------------
    template <class Doc>
    const char* location(Doc& doc) {
      const char* p = nullptr;
      if (doc.current_location().get(p)) return nullptr;
      return p;
    }

    [[noreturn]] void fail_at(const char* where, const std::string& expected) const {
      const std::size_t off = doc_offset(where);
      source_location loc{out_.source, 1, 1, off};
      for (std::size_t i = 0; i < off; ++i) {
        if (begin_[i] == '\n') {
          ++loc.line;
          loc.column = 1;
        } else {
          ++loc.column;
        }
      }
      throw parse_error(loc, expected);
    }

    [[noreturn]] void fail_code(simdjson::error_code e, const char* where, const std::string& expected) const {
      if (e == simdjson::MEMALLOC) throw std::bad_alloc();
      const char* at = where ? where : last_;
      if (e == simdjson::DEPTH_ERROR)
        fail_at(at, "nesting at most " + std::to_string(options_.max_depth) +
                        " deep (simdjson: " + simdjson::error_message(e) + ")");
      if (e == simdjson::INCOMPLETE_ARRAY_OR_OBJECT || e == simdjson::TAPE_ERROR || e == simdjson::EMPTY)
        at = where ? where : buf_ + buf_size_;
      fail_at(at, expected + " (simdjson: " + simdjson::error_message(e) + ")");
    }

    // A malformed event: counted, or thrown in strict mode.
    void malformed(std::uint64_t read_stats::*counter, const char* what) {
      if (options_.strict_events) fail_at(event_begin_, what);
      ++(out_.stats.*counter);
    }

    // ---- numbers -----------------------------------------------------------------------------
    enum class num { ok, type, range };

    // Integer field of a top-level block: strict (parse_error on anything but an integer).
    std::int64_t block_int(simdjson::ondemand::value v, const char* expected) {
      const char* at = v.raw_json_token().data();
      const auto r = detail::parse_scaled(v.raw_json_token(), 0);
      if (r.status != detail::number_status::ok || !r.exact) fail_at(at, expected);
      return r.value;
    }
    std::string block_string(simdjson::ondemand::value v, const char* expected) {
      std::string_view s;
      if (v.get_string().get(s)) fail_at(last_token(v), expected);
      return std::string(s);
    }
    const char* last_token(simdjson::ondemand::value& v) { return v.raw_json_token().data(); }

    // The array / object `v` holds, or a parse_error naming `expected` (at the value when its
    // type is wrong, at the parser's position otherwise).
    simdjson::ondemand::array expect_array(simdjson::ondemand::value& v, simdjson::ondemand::document& doc,
                                           const char* expected) {
      simdjson::ondemand::array a;
      if (auto e = v.get_array().get(a)) {
        if (e == simdjson::INCORRECT_TYPE) fail_at(last_token(v), expected);
        fail_code(e, location(doc), expected);
      }
      return a;
    }
    simdjson::ondemand::object expect_object(simdjson::ondemand::value& v, simdjson::ondemand::document& doc,
                                             const char* expected) {
      simdjson::ondemand::object o;
      if (auto e = v.get_object().get(o)) {
        if (e == simdjson::INCORRECT_TYPE) fail_at(last_token(v), expected);
        fail_code(e, location(doc), expected);
      }
      return o;
    }

    // Number token -> value * 10^scale; malformed JSON numbers are parse errors.
    num number(std::string_view tok, int scale, std::int64_t& value, bool integral) {
      const auto r = detail::parse_scaled(tok, scale);
      switch (r.status) {
        case detail::number_status::ok:
          if (integral && !r.exact) return num::type;
          value = r.value;
          return num::ok;
        case detail::number_status::not_number:
          return num::type;
        case detail::number_status::out_of_range:
          return num::range;
        case detail::number_status::malformed:
          break;
      }
      fail_at(tok.data(), "a JSON value (a malformed number or literal)");
    }

    // ---- top level ---------------------------------------------------------------------------
    void read_root(simdjson::ondemand::object& root, simdjson::ondemand::document& doc) {
      bool saw_events = false;
      for (auto field_res : root) {
        simdjson::ondemand::field field;
        if (auto e = std::move(field_res).get(field))
          fail_code(e, location(doc), "a key/value pair of the top-level object");
        const std::string_view key = detail::raw_string_text(field.key().raw());
        last_ = key.data();
        simdjson::ondemand::value v = field.value();
        if (key == "traceEvents") {
          simdjson::ondemand::array arr = expect_array(v, doc, "traceEvents to be an array");
          saw_events = true;
          read_events(arr, doc);
        } else if (key == "distributedInfo") {
          read_distributed(v, doc);
        } else if (key == "deviceProperties") {
          read_devices(v, doc);
        } else if (key == "baseTimeNanoseconds") {
          out_.base_time_ns = block_int(v, "an integer baseTimeNanoseconds");
        } else if (key == "schemaVersion") {
          std::int64_t sv = 0;
          if (number(v.raw_json_token(), 0, sv, true) == num::ok) out_.schema_version = sv;
        } else {
          // Skipped: but a malformed scalar must not pass unnoticed.
          check_skipped_scalar(v);
        }
      }
      out_.has_trace_events = saw_events;  // without traceEvents: an empty trace, flagged
    }

    void check_skipped_scalar(simdjson::ondemand::value& v) {
      const std::string_view tok = v.raw_json_token();
      if (tok.empty()) return;
      const char c = tok[0];
      if (c == '-' || detail::is_digit(c)) {
        if (detail::parse_scaled(tok, 0).status == detail::number_status::malformed)
          fail_at(tok.data(), "a JSON value (a malformed number)");
      } else if (c != '"' && c != '{' && c != '[') {
        if (detail::classify_non_number(tok) == detail::number_status::malformed)
          fail_at(tok.data(), "a JSON value (true, false, null, a number, a string, an object or an array)");
      }
    }

    void read_distributed(simdjson::ondemand::value v, simdjson::ondemand::document& doc) {
      simdjson::ondemand::object obj = expect_object(v, doc, "distributedInfo to be an object");
      distributed_info info;
      for (auto f_res : obj) {
        simdjson::ondemand::field f;
        if (auto e = std::move(f_res).get(f)) fail_code(e, location(doc), "a key/value pair in distributedInfo");
        const std::string_view key = detail::raw_string_text(f.key().raw());
        simdjson::ondemand::value fv = f.value();
        if (key == "backend") {
          info.backend = block_string(fv, "a string distributedInfo.backend");
        } else if (key == "rank") {
          const auto r = block_int(fv, "an integer distributedInfo.rank");
          if (r < -1 || r > std::numeric_limits<std::int32_t>::max())
            fail_at(last_token(fv), "distributedInfo.rank between 0 and 2^31 - 1");
          info.rank = static_cast<std::int32_t>(r);
        } else if (key == "world_size") {
          info.world_size = block_int(fv, "an integer distributedInfo.world_size");
        } else if (key == "pg_count") {
          info.pg_count = block_int(fv, "an integer distributedInfo.pg_count");
        } else if (key == "nccl_version") {
          info.nccl_version = block_string(fv, "a string distributedInfo.nccl_version");
        } else if (key == "pg_config") {
          read_pg_config(fv, doc, info);
        } else {
          check_skipped_scalar(fv);
        }
      }
      out_.distributed = std::move(info);
    }

    void read_pg_config(simdjson::ondemand::value v, simdjson::ondemand::document& doc, distributed_info& info) {
      simdjson::ondemand::array arr = expect_array(v, doc, "distributedInfo.pg_config to be an array");
      for (auto item_res : arr) {
        simdjson::ondemand::value item;
        if (auto e = std::move(item_res).get(item)) fail_code(e, location(doc), "a process group object in pg_config");
        simdjson::ondemand::object obj = expect_object(item, doc, "a process group object in pg_config");
        process_group pg;
        for (auto f_res : obj) {
          simdjson::ondemand::field f;
          if (auto e = std::move(f_res).get(f)) fail_code(e, location(doc), "a key/value pair in a pg_config entry");
          const std::string_view key = detail::raw_string_text(f.key().raw());
          simdjson::ondemand::value fv = f.value();
          if (key == "pg_name") {
            // Older writers use a number for the name.
            const std::string_view tok = fv.raw_json_token();
            if (!tok.empty() && tok[0] != '"')
              pg.name = std::to_string(block_int(fv, "a string or integer pg_name"));
            else
              pg.name = block_string(fv, "a string pg_name");
          } else if (key == "pg_desc") {
            pg.desc = block_string(fv, "a string pg_desc");
          } else if (key == "backend_config") {
            pg.backend_config = block_string(fv, "a string backend_config");
          } else if (key == "pg_size") {
            pg.size = block_int(fv, "an integer pg_size");
          } else if (key == "ranks") {
            simdjson::ondemand::array ranks = expect_array(fv, doc, "pg_config ranks to be an array");
            for (auto r_res : ranks) {
              simdjson::ondemand::value rv;
              if (auto e = std::move(r_res).get(rv)) fail_code(e, location(doc), "a rank in pg_config ranks");
              const auto r = block_int(rv, "an integer rank in pg_config ranks");
              if (r < 0 || r > std::numeric_limits<std::int32_t>::max())
                fail_at(last_token(rv), "a rank between 0 and 2^31 - 1");
              pg.ranks.push_back(static_cast<std::int32_t>(r));
            }
          } else {
            check_skipped_scalar(fv);
          }
        }
        info.pg_config.push_back(std::move(pg));
      }
    }

    void read_devices(simdjson::ondemand::value v, simdjson::ondemand::document& doc) {
      simdjson::ondemand::array arr = expect_array(v, doc, "deviceProperties to be an array");
      for (auto item_res : arr) {
        simdjson::ondemand::value item;
        if (auto e = std::move(item_res).get(item)) fail_code(e, location(doc), "a device object in deviceProperties");
        simdjson::ondemand::object obj = expect_object(item, doc, "a device object in deviceProperties");
        device_properties d;
        for (auto f_res : obj) {
          simdjson::ondemand::field f;
          if (auto e = std::move(f_res).get(f)) fail_code(e, location(doc), "a key/value pair in deviceProperties");
          const std::string_view key = detail::raw_string_text(f.key().raw());
          simdjson::ondemand::value fv = f.value();
          if (key == "id") {
            d.id = block_int(fv, "an integer device id");
          } else if (key == "name") {
            d.name = block_string(fv, "a string device name");
          } else if (key == "totalGlobalMem") {
            d.total_global_mem = block_int(fv, "an integer totalGlobalMem");
          } else if (key == "computeMajor") {
            d.compute_major = block_int(fv, "an integer computeMajor");
          } else if (key == "computeMinor") {
            d.compute_minor = block_int(fv, "an integer computeMinor");
          } else if (key == "numSms") {
            d.num_sms = block_int(fv, "an integer numSms");
          } else {
            check_skipped_scalar(fv);
          }
        }
        out_.devices.push_back(std::move(d));
      }
    }

    // ---- events ------------------------------------------------------------------------------
    // key == lit, with the length known at compile time (inlined compares, no memcmp call).
    template <std::size_t N>
    static bool is(std::string_view key, const char (&lit)[N]) noexcept {
      return key.size() == N - 1 && std::memcmp(key.data(), lit, N - 1) == 0;
    }

    struct raw_event {
      std::string_view ph, cat, name, ts, dur, pid, tid;
      bool has_name = false, name_type_error = false;
      bool cat_not_string = false;  // "cat" present with a non-string value
      // args
      std::string_view device, stream, correlation;
      bool has_grid = false, has_block = false, dims_ok = true;
      std::array<std::uint32_t, 3> grid{}, block{};
      bool has_nccl = false, nccl_ok = true;
      std::string_view coll_name, pg_name, pg_desc, dtype, group_size, in_nelems, out_nelems;
      std::string_view pg_ranks_text;
      bool has_pg_ranks = false, pg_ranks_is_array = false;
      std::vector<std::int32_t>* pg_ranks_array = nullptr;
    };

    void read_events(simdjson::ondemand::array& arr, simdjson::ondemand::document& doc) {
      for (auto item_res : arr) {
        // Used in place (no copies of simdjson's iterators: they cost store-forwarding stalls).
        if (auto e = item_res.error()) fail_code(e, location(doc), "a trace event (an object) in traceEvents");
        simdjson::ondemand::value&& item = std::move(item_res).value_unsafe();
        ++out_.stats.events_seen;
        event_begin_ = item.raw_json_token().data();
        last_ = event_begin_;
        simdjson::ondemand::object obj;
        if (auto e = item.get_object().get(obj)) {
          if (e != simdjson::INCORRECT_TYPE) fail_code(e, location(doc), "a trace event (an object) in traceEvents");
          check_skipped_scalar(item);
          malformed(&read_stats::bad_type, "a trace event to be an object");
          continue;
        }
        raw_event ev;
        read_event_fields(obj, doc, ev);
        store(ev);
      }
    }

    void read_event_fields(simdjson::ondemand::object& obj, simdjson::ondemand::document& doc, raw_event& ev) {
      for (auto f_res : obj) {
        if (auto e = f_res.error()) fail_code(e, location(doc), "a key/value pair in a trace event");
        simdjson::ondemand::field&& f = std::move(f_res).value_unsafe();
        const std::string_view key = detail::raw_string_text(f.key().raw());
        simdjson::ondemand::value& v = f.value();
        if (key.size() == 2) {
          if (is(key, "ph")) {
            ev.ph = string_or_empty(v);
            continue;
          }
          if (is(key, "ts")) {
            ev.ts = v.raw_json_token();
            continue;
          }
        } else if (key.size() == 3) {
          if (is(key, "cat")) {
            std::string_view s;
            const auto e = v.get_string().get(s);
            if (!e) {
              ev.cat = s;
            } else if (e == simdjson::INCORRECT_TYPE) {
              check_skipped_scalar(v);
              ev.cat_not_string = true;
            } else {
              fail_code(e, last_token(v), "a string");
            }
            continue;
          }
          if (is(key, "dur")) {
            ev.dur = v.raw_json_token();
            continue;
          }
          if (is(key, "pid")) {
            ev.pid = v.raw_json_token();
            continue;
          }
          if (is(key, "tid")) {
            ev.tid = v.raw_json_token();
            continue;
          }
        } else if (is(key, "name")) {
          std::string_view s;
          const auto e = v.get_string().get(s);
          if (!e) {
            ev.name = s;
            ev.has_name = true;
          } else if (e == simdjson::INCORRECT_TYPE) {
            check_skipped_scalar(v);
            ev.name_type_error = true;
          } else {
            fail_code(e, last_token(v), "a string event name");
          }
          continue;
        } else if (is(key, "args")) {
          read_args(v, doc, ev);
          continue;
        }
        check_skipped_scalar(v);
      }
    }

    std::string_view string_or_empty(simdjson::ondemand::value& v) {
      std::string_view s;
      const auto e = v.get_string().get(s);
      if (!e) return s;
      if (e != simdjson::INCORRECT_TYPE) fail_code(e, last_token(v), "a string");
      check_skipped_scalar(v);
      return std::string_view();
    }

    void read_dims(simdjson::ondemand::value& v, simdjson::ondemand::document& doc, std::array<std::uint32_t, 3>& dims,
                   raw_event& ev) {
      simdjson::ondemand::array a;
      const auto e = v.get_array().get(a);
      if (e == simdjson::INCORRECT_TYPE) {
        check_skipped_scalar(v);
        ev.dims_ok = false;
        return;
      }
      if (e) fail_code(e, location(doc), "an array [x, y, z]");
      std::size_t k = 0;
      for (auto d_res : a) {
        simdjson::ondemand::value dv;
        if (auto e2 = std::move(d_res).get(dv)) fail_code(e2, location(doc), "an array [x, y, z]");
        std::int64_t x = 0;
        if (number(dv.raw_json_token(), 0, x, true) != num::ok || x < 0 ||
            x > std::numeric_limits<std::uint32_t>::max() || k >= 3) {
          ev.dims_ok = false;
        } else {
          dims[k] = static_cast<std::uint32_t>(x);
        }
        ++k;
      }
      if (k != 3) ev.dims_ok = false;
    }

    void read_args(simdjson::ondemand::value& v, simdjson::ondemand::document& doc, raw_event& ev) {
      simdjson::ondemand::object a;
      const auto e = v.get_object().get(a);
      if (e == simdjson::INCORRECT_TYPE) {
        check_skipped_scalar(v);
        return;  // args of another type carry nothing failslow reads
      }
      if (e) fail_code(e, location(doc), "an args object");
      for (auto f_res : a) {
        if (auto e2 = f_res.error()) fail_code(e2, location(doc), "a key/value pair in args");
        simdjson::ondemand::field&& f = std::move(f_res).value_unsafe();
        const std::string_view key = detail::raw_string_text(f.key().raw());
        simdjson::ondemand::value& fv = f.value();
        switch (key.empty() ? '\0' : key[0]) {
          case 'd':
            if (is(key, "device")) {
              ev.device = fv.raw_json_token();
              continue;
            }
            if (is(key, "dtype")) {
              ev.has_nccl = true;
              ev.dtype = arg_string(fv, ev);
              continue;
            }
            break;
          case 's':
            if (is(key, "stream")) {
              ev.stream = fv.raw_json_token();
              continue;
            }
            break;
          case 'c':
            if (is(key, "correlation")) {
              ev.correlation = fv.raw_json_token();
              continue;
            }
            break;
          case 'g':
            if (is(key, "grid")) {
              ev.has_grid = true;
              read_dims(fv, doc, ev.grid, ev);
              continue;
            }
            break;
          case 'b':
            if (is(key, "block")) {
              ev.has_block = true;
              read_dims(fv, doc, ev.block, ev);
              continue;
            }
            break;
          case 'C':
            if (is(key, "Collective name")) {
              ev.has_nccl = true;
              ev.coll_name = arg_string(fv, ev);
              continue;
            }
            break;
          case 'G':
            if (is(key, "Group size")) {
              ev.has_nccl = true;
              ev.group_size = fv.raw_json_token();
              continue;
            }
            break;
          case 'I':
            if (is(key, "In msg nelems")) {
              ev.has_nccl = true;
              ev.in_nelems = fv.raw_json_token();
              continue;
            }
            break;
          case 'O':
            if (is(key, "Out msg nelems")) {
              ev.has_nccl = true;
              ev.out_nelems = fv.raw_json_token();
              continue;
            }
            break;
          case 'P':
            if (is(key, "Process Group Name")) {
              ev.has_nccl = true;
              const std::string_view tok = fv.raw_json_token();
              ev.pg_name = (!tok.empty() && tok[0] != '"') ? number_text(fv, ev) : arg_string(fv, ev);
              continue;
            }
            if (is(key, "Process Group Description")) {
              ev.has_nccl = true;
              ev.pg_desc = arg_string(fv, ev);
              continue;
            }
            if (is(key, "Process Group Ranks")) {
              ev.has_nccl = true;
              read_pg_ranks(fv, doc, ev);
              continue;
            }
            break;
          default:
            break;
        }
        check_skipped_scalar(fv);
      }
    }

    std::string_view arg_string(simdjson::ondemand::value& v, raw_event& ev) {
      std::string_view s;
      const auto e = v.get_string().get(s);
      if (!e) return s;
      if (e != simdjson::INCORRECT_TYPE) fail_code(e, last_token(v), "a string");
      check_skipped_scalar(v);
      ev.nccl_ok = false;
      return std::string_view();
    }

    std::string_view number_text(simdjson::ondemand::value& v, raw_event& ev) {
      std::string_view tok = v.raw_json_token();
      check_skipped_scalar(v);
      while (!tok.empty() && detail::is_json_space(tok.back())) tok.remove_suffix(1);
      std::int64_t x = 0;
      if (number(tok, 0, x, true) != num::ok) {
        ev.nccl_ok = false;
        return std::string_view();
      }
      return tok;
    }

    void read_pg_ranks(simdjson::ondemand::value& v, simdjson::ondemand::document& doc, raw_event& ev) {
      std::string_view s;
      const auto e = v.get_string().get(s);
      if (!e) {
        ev.pg_ranks_text = s;
        ev.has_pg_ranks = true;
        return;
      }
      if (e != simdjson::INCORRECT_TYPE) fail_code(e, last_token(v), "a rank list");
      simdjson::ondemand::array a;
      const auto e2 = v.get_array().get(a);
      if (e2 == simdjson::INCORRECT_TYPE) {
        check_skipped_scalar(v);
        ev.nccl_ok = false;
        return;
      }
      if (e2) fail_code(e2, location(doc), "a rank list");
      scratch_ranks_.clear();
      for (auto r_res : a) {
        simdjson::ondemand::value rv;
        if (auto e3 = std::move(r_res).get(rv)) fail_code(e3, location(doc), "a rank list");
        std::int64_t x = 0;
        if (number(rv.raw_json_token(), 0, x, true) != num::ok || x < std::numeric_limits<std::int32_t>::min() ||
            x > std::numeric_limits<std::int32_t>::max()) {
          ev.nccl_ok = false;
        } else {
          scratch_ranks_.push_back(static_cast<std::int32_t>(x));
        }
      }
      ev.has_pg_ranks = true;
      ev.pg_ranks_is_array = true;
      ev.pg_ranks_array = &scratch_ranks_;
    }

    // Parses an id field into [lo, hi]; absent -> fallback. False (and counted) when the event
    // must be dropped.
    template <class T>
    bool id_field(std::string_view tok, T& out, std::int64_t lo, std::int64_t hi) {
      std::int64_t x = 0;
      switch (number(tok, 0, x, true)) {
        case num::ok:
          if (x < lo || x > hi) {
            malformed(&read_stats::out_of_range, "an id that fits the event record");
            return false;
          }
          out = static_cast<T>(x);
          return true;
        case num::type:
          malformed(&read_stats::bad_type, "an integer id (pid, tid, device, stream)");
          return false;
        case num::range:
          malformed(&read_stats::out_of_range, "an id that fits the event record");
          return false;
      }
      return false;
    }

    enum class category : std::uint8_t { unknown, kernel, memcpy, memset, runtime, cpu_op, annotation, gpu_annotation };

    static category categorize(std::string_view cat) noexcept {
      switch (cat.size()) {
        case 6:
          if (is(cat, "kernel")) return category::kernel;
          if (is(cat, "cpu_op")) return category::cpu_op;
          break;
        case 10:
          if (is(cat, "gpu_memcpy")) return category::memcpy;
          if (is(cat, "gpu_memset")) return category::memset;
          break;
        case 11:
          if (is(cat, "cuda_driver")) return category::runtime;
          break;
        case 12:
          if (is(cat, "cuda_runtime")) return category::runtime;
          break;
        case 15:
          if (is(cat, "user_annotation")) return category::annotation;
          break;
        case 19:
          if (is(cat, "gpu_user_annotation")) return category::gpu_annotation;
          break;
        default:
          break;
      }
      return category::unknown;
    }

    // Tokens captured but not converted must still be valid JSON.
    void validate_tokens(const raw_event& ev) {
      for (std::string_view tok : {ev.ts, ev.dur, ev.pid, ev.tid, ev.device, ev.stream, ev.correlation, ev.group_size,
                                   ev.in_nelems, ev.out_nelems}) {
        if (tok.empty()) continue;
        const char c = tok[0];
        if (c == '-' || detail::is_digit(c)) {
          if (detail::parse_scaled(tok, 0).status == detail::number_status::malformed)
            fail_at(tok.data(), "a JSON value (a malformed number)");
        } else if (c != '"' && c != '{' && c != '[') {
          if (detail::classify_non_number(tok) == detail::number_status::malformed)
            fail_at(tok.data(), "a JSON value (true, false, null, a number, a string, an object or an array)");
        }
      }
    }

    void store(raw_event& ev) {
      const std::size_t before = out_.events.size();
      store_event(ev);
      if (out_.events.size() == before) validate_tokens(ev);
    }

    void store_event(raw_event& ev) {
      auto& st = out_.stats;
      if (ev.ph.data() == nullptr) {
        malformed(&read_stats::missing_field, "a \"ph\" field in every trace event");
        return;
      }
      const char ph = ev.ph.size() == 1 ? ev.ph[0] : '\0';
      if (ph != 'X') {
        if (ph == 'M')
          ++st.metadata;
        else if (ph == 's' || ph == 't' || ph == 'f')
          ++st.flows;
        else if (ph == 'i' || ph == 'I')
          ++st.instants;
        else
          ++st.other_phases;
        return;
      }
      // No category (the plain Chrome trace): host events, their kind from the name.
      const bool by_name = ev.cat.empty() && !ev.cat_not_string;
      if (by_name && ev.name_type_error) return malformed(&read_stats::bad_type, "a string event name");
      if (by_name && !ev.has_name) return malformed(&read_stats::missing_field, "a name in an event without \"cat\"");
      const category c = by_name ? category_by_name(ev.name) : categorize(ev.cat);
      if (c == category::unknown) {
        ++st.unknown_category;
        auto it = st.unknown_categories.find(ev.cat);
        if (it == st.unknown_categories.end()) it = st.unknown_categories.emplace(std::string(ev.cat), 0).first;
        ++it->second;
        return;
      }
      if (ev.name_type_error) return malformed(&read_stats::bad_type, "a string event name");
      if (!ev.has_name || ev.ts.data() == nullptr || ev.dur.data() == nullptr)
        return malformed(&read_stats::missing_field, "name, ts and dur in a complete (\"X\") event");
      std::int64_t ts = 0, dur = 0;
      switch (number(ev.ts, scale_, ts, false)) {
        case num::type:
          return malformed(&read_stats::bad_type, "a number ts");
        case num::range:
          return malformed(&read_stats::out_of_range, "a ts that fits int64 nanoseconds");
        case num::ok:
          break;
      }
      switch (number(ev.dur, scale_, dur, false)) {
        case num::type:
          return malformed(&read_stats::bad_type, "a number dur");
        case num::range:
          return malformed(&read_stats::out_of_range, "a dur that fits int64 nanoseconds");
        case num::ok:
          break;
      }
      if (dur < 0) return malformed(&read_stats::negative_duration, "dur >= 0");
      if (ts < 0) return malformed(&read_stats::out_of_range, "ts >= 0");
      if (ts > std::numeric_limits<std::int64_t>::max() - dur)
        return malformed(&read_stats::out_of_range, "ts + dur that fits int64 nanoseconds");

      event e;
      e.start_ns = ts;
      e.end_ns = ts + dur;
      const bool device_side =
          c == category::kernel || c == category::memcpy || c == category::memset || c == category::gpu_annotation;
      if (device_side) {
        std::int64_t dev = 0;
        if (!ev.device.empty()) {
          if (!id_field(ev.device, dev, 0, std::numeric_limits<std::int16_t>::max())) return;
        } else if (!ev.pid.empty()) {
          if (!id_field(ev.pid, dev, 0, std::numeric_limits<std::int16_t>::max())) return;
        } else {
          return malformed(&read_stats::missing_field, "args.device or pid in a GPU event");
        }
        e.device = static_cast<std::int16_t>(dev);
        const std::string_view s = !ev.stream.empty() ? ev.stream : ev.tid;
        if (s.empty()) return malformed(&read_stats::missing_field, "args.stream or tid in a GPU event");
        if (!id_field(s, e.stream, 0, std::numeric_limits<std::uint32_t>::max())) return;
      } else {
        if (ev.tid.empty()) return malformed(&read_stats::missing_field, "tid in a host event");
        // Kineto writes some pthread ids as signed 32-bit numbers: kept modulo 2^32.
        std::int64_t tid = 0;
        if (!id_field(ev.tid, tid, std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::uint32_t>::max()))
          return;
        e.stream = static_cast<std::uint32_t>(tid);
      }
      if (!ev.correlation.empty()) {
        std::int64_t corr = 0;
        if (number(ev.correlation, 0, corr, true) == num::ok && corr >= 0 &&
            corr <= std::numeric_limits<std::uint32_t>::max())
          e.correlation = static_cast<std::uint32_t>(corr);
        else
          ++st.bad_args;
      }
      switch (c) {
        case category::kernel:
          e.kind = kernel_kind(ev.name);
          break;
        case category::memcpy:
          e.kind = event_kind::memcpy;
          break;
        case category::memset:
          e.kind = event_kind::memset;
          break;
        case category::runtime:
          e.kind = event_kind::runtime;
          break;
        case category::cpu_op:
          e.kind = event_kind::cpu_op;
          break;
        case category::annotation:
        case category::gpu_annotation:
          e.kind = event_kind::annotation;
          break;
        case category::unknown:
          break;
      }
      e.name = intern(ev.name);
      const auto index = static_cast<std::uint32_t>(out_.events.size());
      if (out_.events.size() >= std::numeric_limits<std::uint32_t>::max())
        throw domain_error(out_.source + ": more than 2^32 - 1 events in one trace");
      out_.events.push_back(e);
      ++st.stored;
      if (by_name) ++st.kind_by_name;
      if (ev.has_grid || ev.has_block) {
        if (ev.has_grid && ev.has_block && ev.dims_ok)
          out_.launches.push_back(launch_dims{index, ev.grid, ev.block});
        else
          ++st.bad_args;
      }
      if (ev.has_nccl && is_device_activity(e.kind)) store_collective(ev, index);
    }

    void store_collective(raw_event& ev, std::uint32_t index) {
      collective_args ca;
      ca.event = index;
      bool ok = ev.nccl_ok;
      if (!ev.coll_name.empty()) ca.collective = intern(ev.coll_name);
      if (!ev.pg_name.empty()) ca.pg_name = intern(ev.pg_name);
      if (!ev.pg_desc.empty()) ca.pg_desc = intern(ev.pg_desc);
      if (!ev.dtype.empty()) ca.dtype = intern(ev.dtype);
      auto int_arg = [&](std::string_view tok, auto& dst, std::int64_t hi) {
        if (tok.empty()) return;
        std::int64_t x = 0;
        if (number(tok, 0, x, true) == num::ok && x >= -1 && x <= hi)
          dst = static_cast<std::remove_reference_t<decltype(dst)>>(x);
        else
          ok = false;
      };
      int_arg(ev.group_size, ca.group_size, std::numeric_limits<std::int32_t>::max());
      int_arg(ev.in_nelems, ca.in_nelems, std::numeric_limits<std::int64_t>::max());
      int_arg(ev.out_nelems, ca.out_nelems, std::numeric_limits<std::int64_t>::max());
      if (ev.has_pg_ranks) {
        if (ev.pg_ranks_is_array) {
          std::string key = "[";
          for (auto r : *ev.pg_ranks_array) key += std::to_string(r) + ",";
          ca.ranks = rank_list_id(key, ev.pg_ranks_array);
        } else {
          const auto it = rank_list_ids_.find(std::string(ev.pg_ranks_text));
          if (it != rank_list_ids_.end()) {
            ca.ranks = it->second;
          } else if (detail::parse_rank_list_text(ev.pg_ranks_text, scratch_ranks_)) {
            ca.ranks = rank_list_id(std::string(ev.pg_ranks_text), &scratch_ranks_);
          } else {
            ok = false;
          }
        }
      }
      if (!ok) ++out_.stats.bad_args;
      out_.collectives.push_back(ca);
    }

    std::uint32_t rank_list_id(const std::string& key, const std::vector<std::int32_t>* ranks) {
      const auto it = rank_list_ids_.find(key);
      if (it != rank_list_ids_.end()) return it->second;
      const auto id = static_cast<std::uint32_t>(out_.rank_lists.size());
      out_.rank_lists.push_back(*ranks);
      rank_list_ids_.emplace(key, id);
      return id;
    }

    // Kind of an event without a category, once per distinct name (host_kind_by_name).
    category category_by_name(std::string_view name) {
      const name_id id = intern(name);
      if (id >= by_name_cache_.size()) by_name_cache_.resize(static_cast<std::size_t>(id) + 1, 0xFF);
      if (by_name_cache_[id] == 0xFF)
        by_name_cache_[id] = static_cast<std::uint8_t>(
            host_kind_by_name(name, classifier_) == event_kind::cpu_op ? category::cpu_op : category::annotation);
      return static_cast<category>(by_name_cache_[id]);
    }

    // The classifier's answer per distinct name (rules are tried once per name, not per event).
    event_kind kernel_kind(std::string_view name) {
      const name_id id = intern(name);
      if (id >= kind_cache_.size()) kind_cache_.resize(static_cast<std::size_t>(id) + 1, 0xFF);
      if (kind_cache_[id] == 0xFF) kind_cache_[id] = static_cast<std::uint8_t>(classifier_.device_kind(name));
      return static_cast<event_kind>(kind_cache_[id]);
    }

    name_id intern(std::string_view s) {
      // A per-run cache keyed by the view: simdjson's unescaped strings live as long as the
      // document, and most names repeat, so the shared table's lock is taken once per name.
      const auto it = cache_.find(s);
      if (it != cache_.end()) return it->second;
      const name_id id = names_.intern(s);
      cache_.emplace(names_.name(id), id);
      return id;
    }

    void finish() {
      if (options_.apply_base_time && out_.base_time_ns != 0) {
        const std::int64_t base = out_.base_time_ns;
        for (auto& e : out_.events) {
          if ((base > 0 && e.end_ns > std::numeric_limits<std::int64_t>::max() - base) ||
              (base < 0 && e.start_ns < -base))
            throw domain_error(out_.source + ": baseTimeNanoseconds + ts does not fit int64 nanoseconds");
        }
        for (auto& e : out_.events) {
          e.start_ns += base;
          e.end_ns += base;
        }
      } else if (!options_.apply_base_time) {
        out_.base_time_ns = 0;
      }
      const std::int32_t rank = out_.stated_rank();
      for (auto& e : out_.events) e.rank = rank;
      // The reservation counted every traceEvents entry; keep at most 25 % slack.
      auto& ev = out_.events;
      if (ev.capacity() > ev.size() + ev.size() / 4) {
        std::vector<event> tight;
        tight.reserve(ev.size());
        detail::advise_huge_pages(tight.data(), tight.capacity() * sizeof(event));
        tight.assign(ev.begin(), ev.end());
        ev.swap(tight);
      }
    }

    kineto_reader& owner_;
    const char* begin_;  // the whole document
    std::size_t size_;
    const char* buf_ = nullptr;  // what simdjson reads now: the skeleton or "[" chunk "]"
    std::size_t buf_size_ = 0;
    mode mode_ = mode::skeleton;
    std::size_t gap_at_ = 0, gap_ = 0;  // skeleton: offset and length of the cut-out events
    std::size_t chunk_begin_ = 0;       // chunk: document offset of its first byte
    name_table& names_;
    const kineto_read_options& options_;
    const kernel_classifier& classifier_;
    int scale_ = 3;
    trace_data out_;
    const char* event_begin_ = nullptr;
    const char* last_ = nullptr;
    std::vector<std::int32_t> scratch_ranks_;
    std::unordered_map<std::string, std::uint32_t> rank_list_ids_;
    std::unordered_map<std::string_view, name_id> cache_;
    std::vector<std::uint8_t> kind_cache_;
    std::vector<std::uint8_t> by_name_cache_;
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
