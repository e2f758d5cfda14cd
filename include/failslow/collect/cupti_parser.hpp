// failslow/collect/cupti_parser.hpp -- CUPTI activity buffers into activity records.
//
// Synopsis
//   activity_parser p(names, clock, options);  p.parse(api, buffer, valid_bytes, handler)
//   Walks a completed CUPTI buffer with cuptiActivityGetNextRecord (api.get_next_record) and
//   hands each usable record to handler.record(const activity_record&) and each NVTX step or
//   phase to handler.mark(const step_mark&). Record layouts are CUDA 13's (CUPTI API 130001):
//     CONCURRENT_KERNEL  CUpti_ActivityKernel10: name interned by pointer (CUPTI shares one
//                        name pointer per kernel function: one hash probe and a 15-byte prefix
//                        check per record, the string interned once, demangled like Kineto
//                        does); kind collective when core/kernel_class.hpp calls the name
//                        communication (NCCL...), else kernel; CUDA-graph kernels keep graphId and
//                        graphNodeId (record_flag_graph), since they share one correlation id;
//                        a compute kernel with its grid and block is named by its launch-shape
//                        key (core/launch_shape.hpp: "gemm <<<132x1x1, 384x1x1>>>", one hash
//                        probe per record; options.key_by_launch_shape), as the trace readers'
//                        kernels are keyed, so that a shape mix is not taken for a slowdown
//     MEMCPY             CUpti_ActivityMemcpy6, named like Kineto: "Memcpy HtoD (Pinned -> Device)"
//     MEMCPY2            CUpti_ActivityMemcpyPtoP4: "Memcpy PtoP (Device -> Device)"
//     MEMSET             CUpti_ActivityMemset4: "Memset (Device)"
//     RUNTIME            CUpti_ActivityAPI: kernel and graph launch calls (cudaLaunchKernel,
//                        cudaLaunchKernelExC, cudaLaunchCooperativeKernel, cudaGraphLaunch and
//                        their per-thread-stream forms) as runtime records named
//                        "cudaLaunchKernel" (device -1, stream = thread id): the host's launch
//                        pace; other runtime calls are counted (other_runtime_calls)
//     MARKER             CUpti_ActivityMarker2 (NVTX ranges, when CUPTI is the NVTX injection):
//                        a range whose name starts with options.nvtx_step_prefix is a step
//                        mark at its start (step number = the digits after the prefix, else a
//                        running count); other ranges are phases, marked at their end and
//                        recorded as annotation records (device -1, stream = thread id)
//   Times become host-clock nanoseconds through the clock anchor (collect/clock_anchor.hpp).
// Accounting (counts()): records = kernels + collectives + memcpys + memsets + marker_records
//   + launch_calls + other_runtime_calls + zero_timestamp + end_before_start + unknown_kind. Records with start == 0 or
//   end == 0 (no timing: CUPTI ran out of device memory for it) and end < start are counted, not used; kinds other than
//   the above are counted as unknown_kind; a buffer that ends in an incomplete or invalid record stops there and counts
//   one invalid_buffer_end.
// Allocation: none per record, except the first time a kernel name (or copy/set kind, or NVTX
//   range name, or launch shape) is seen (interning). The name cache has name_cache_entries slots fixed at
//   construction; when a probe finds no slot, the name is interned by string (counted in
//   name_cache_full: slower, still correct). A name pointer that now holds another string (a
//   module was unloaded and its memory reused) fails the prefix check and is interned afresh
//   (name_pointer_reused).
// Thread model: one parser per thread (it is not synchronised); the name table is thread-safe.
// Complexity: O(1) per record (amortised); cost measured in bench/bench_collect.cpp.
// Errors: name_cache_entries not a power of two >= 16, or open_ranges 0, throws
//   failslow::invalid_argument; the name table's errors (more than 2^32 names) propagate.
#pragma once

#include <cupti.h>
#include <cxxabi.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "failslow/collect/clock_anchor.hpp"
#include "failslow/collect/cupti_api.hpp"
#include "failslow/collect/record_sink.hpp"
#include "failslow/core/error.hpp"
#include "failslow/core/kernel_class.hpp"
#include "failslow/core/launch_shape.hpp"
#include "failslow/core/name_table.hpp"

namespace failslow::collect {

struct parser_options {
  std::size_t name_cache_entries = 4096;  ///< pointer -> name id slots (power of two)
  bool demangle = true;                   ///< kernel names as Kineto writes them
  kernel_classifier classifier = kernel_classifier::defaults();
  std::string nvtx_step_prefix = "ProfilerStep#";  ///< NVTX ranges that mark steps
  std::size_t open_ranges = 256;                   ///< NVTX ranges open at once (more are counted)
  /// Compute kernels named by name and launch shape (a record with a grid or block dimension
  /// <= 0 has no shape and keeps its name).
  bool key_by_launch_shape = true;
};

struct parse_counts {
  std::uint64_t buffers = 0;
  std::uint64_t records = 0;
  std::uint64_t kernels = 0;
  std::uint64_t collectives = 0;
  std::uint64_t memcpys = 0;
  std::uint64_t memsets = 0;
  std::uint64_t marker_records = 0;        ///< NVTX marker records (start, end, instant)
  std::uint64_t launch_calls = 0;          ///< RUNTIME records of kernel (and graph) launches: handed on
  std::uint64_t other_runtime_calls = 0;   ///< RUNTIME records of other calls: counted, not used
  std::uint64_t zero_timestamp = 0;        ///< start or end 0: no timing for this record
  std::uint64_t end_before_start = 0;      ///< end < start
  std::uint64_t unknown_kind = 0;          ///< activity kinds the parser does not use
  std::uint64_t invalid_buffer_end = 0;    ///< buffers that ended in an incomplete/invalid record
  std::uint64_t name_cache_full = 0;       ///< names interned by string because no slot was free
  std::uint64_t name_pointer_reused = 0;   ///< a cached pointer that now names another kernel
  std::uint64_t unmatched_range_ends = 0;  ///< NVTX range ends without their start
  std::uint64_t ranges_dropped = 0;        ///< NVTX ranges past open_ranges
  std::uint64_t step_marks = 0, phase_marks = 0;

  std::uint64_t used() const noexcept { return kernels + collectives + memcpys + memsets; }
  bool accounted() const noexcept {
    return records == used() + marker_records + launch_calls + other_runtime_calls + zero_timestamp + end_before_start +
                          unknown_kind;
  }
};

class activity_parser {
 public:
  activity_parser(name_table& names, const clock_anchor& clock, parser_options options = {})
      : names_(names), clock_(clock), opt_(std::move(options)) {
    const std::size_t n = opt_.name_cache_entries;
    if (n < 16 || (n & (n - 1)) != 0)
      throw invalid_argument("activity_parser: name_cache_entries must be a power of two >= 16");
    if (opt_.open_ranges == 0) throw invalid_argument("activity_parser: open_ranges must be >= 1");
    cache_.resize(n);
    ranges_.reserve(opt_.open_ranges);
    copy_names_.fill(unset);
    set_names_.fill(unset);
  }

  /// Parses one completed buffer; Handler has record(const activity_record&) and
  /// mark(const step_mark&).
  template <class Handler>
  void parse(const cupti_api& api, std::uint8_t* buffer, std::size_t valid_bytes, Handler& handler) {
    ++counts_.buffers;
    if (!buffer || valid_bytes == 0) return;
    CUpti_Activity* rec = nullptr;
    while (true) {
      const CUptiResult r = api.get_next_record(buffer, valid_bytes, &rec);
      if (r == CUPTI_ERROR_MAX_LIMIT_REACHED) break;
      if (r != CUPTI_SUCCESS || !rec) {
        ++counts_.invalid_buffer_end;
        break;
      }
      parse_record(rec, handler);
    }
  }

  /// One record (exposed for tests and benchmarks).
  template <class Handler>
  void parse_record(const CUpti_Activity* rec, Handler& handler) {
    ++counts_.records;
    switch (rec->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        kernel(*reinterpret_cast<const CUpti_ActivityKernel10*>(rec), handler);
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY:
        memcpy_record(*reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec), handler);
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY2:
        peer_copy(*reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(rec), handler);
        break;
      case CUPTI_ACTIVITY_KIND_MEMSET:
        memset_record(*reinterpret_cast<const CUpti_ActivityMemset4*>(rec), handler);
        break;
      case CUPTI_ACTIVITY_KIND_MARKER:
        marker(*reinterpret_cast<const CUpti_ActivityMarker2*>(rec), handler);
        break;
      case CUPTI_ACTIVITY_KIND_RUNTIME:
        runtime_call(*reinterpret_cast<const CUpti_ActivityAPI*>(rec), handler);
        break;
      default:
        ++counts_.unknown_kind;
    }
  }

  const parse_counts& counts() const noexcept { return counts_; }

 private:
  static constexpr name_id unset = 0xFFFFFFFFu;

  struct cache_entry {
    const char* ptr = nullptr;
    name_id id = 0;
    event_kind kind = event_kind::kernel;
    std::uint8_t prefix_len = 0;
    char prefix[15] = {};
  };

  // Valid timing, else counted; fills start/end of e in host time.
  bool timing(std::uint64_t start, std::uint64_t end, event& e) {
    if (start == 0 || end == 0) {
      ++counts_.zero_timestamp;
      return false;
    }
    if (end < start) {
      ++counts_.end_before_start;
      return false;
    }
    e.start_ns = clock_.to_host(start);
    e.end_ns = e.start_ns + static_cast<std::int64_t>(end - start);
    return true;
  }

  static std::int16_t device_of(std::uint32_t id) noexcept {
    return id > 0x7FFF ? std::int16_t{-1} : static_cast<std::int16_t>(id);
  }

  template <class Handler>
  void kernel(const CUpti_ActivityKernel10& k, Handler& handler) {
    activity_record r;
    if (!timing(k.start, k.end, r.ev)) return;
    const cache_entry& c = lookup(k.name);
    r.ev.name = c.kind == event_kind::kernel && opt_.key_by_launch_shape ? shape_key(c.id, k) : c.id;
    r.ev.kind = c.kind;
    r.ev.correlation = k.correlationId;
    r.ev.stream = k.streamId;
    r.ev.device = device_of(k.deviceId);
    r.context = k.contextId;
    if (k.graphId != 0 || k.graphNodeId != 0) {
      r.ev.flags = record_flag_graph;
      r.graph_id = k.graphId;
      r.graph_node_id = k.graphNodeId;
    }
    ++(c.kind == event_kind::collective ? counts_.collectives : counts_.kernels);
    handler.record(r);
  }

  template <class Copy, class Handler>
  void copy_common(const Copy& m, name_id name, event_kind kind, Handler& handler) {
    activity_record r;
    if (!timing(m.start, m.end, r.ev)) return;
    r.ev.name = name;
    r.ev.kind = kind;
    r.ev.correlation = m.correlationId;
    r.ev.stream = m.streamId;
    r.ev.device = device_of(m.deviceId);
    r.context = m.contextId;
    r.bytes = m.bytes;
    if (m.graphId != 0 || m.graphNodeId != 0) {
      r.ev.flags = record_flag_graph;
      r.graph_id = m.graphId;
      r.graph_node_id = m.graphNodeId;
    }
    ++(kind == event_kind::memset ? counts_.memsets : counts_.memcpys);
    handler.record(r);
  }

  template <class Handler>
  void memcpy_record(const CUpti_ActivityMemcpy6& m, Handler& handler) {
    copy_common(m, copy_name(m.copyKind, m.srcKind, m.dstKind), event_kind::memcpy, handler);
  }
  template <class Handler>
  void peer_copy(const CUpti_ActivityMemcpyPtoP4& m, Handler& handler) {
    copy_common(m, copy_name(CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, m.srcKind, m.dstKind), event_kind::memcpy, handler);
  }
  template <class Handler>
  void memset_record(const CUpti_ActivityMemset4& m, Handler& handler) {
    std::size_t k = m.memoryKind < set_names_.size() ? m.memoryKind : 0;
    if (set_names_[k] == unset) set_names_[k] = names_.intern("Memset (" + std::string(memory_kind(k)) + ")");
    copy_common(m, set_names_[k], event_kind::memset, handler);
  }

  // A kernel or graph launch call: a runtime record (kind runtime, device -1, stream = thread id),
  // what gives each window its host's launch pace (collect/step_windows.hpp); other calls are
  // counted only.
  template <class Handler>
  void runtime_call(const CUpti_ActivityAPI& a, Handler& handler) {
    switch (a.cbid) {
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060:
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000:
      case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000:
      case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000:
        break;
      default:
        ++counts_.other_runtime_calls;
        return;
    }
    activity_record r;
    if (!timing(a.start, a.end, r.ev)) return;
    if (launch_name_ == unset) launch_name_ = names_.intern("cudaLaunchKernel");
    r.ev.name = launch_name_;
    r.ev.kind = event_kind::runtime;
    r.ev.correlation = a.correlationId;
    r.ev.stream = a.threadId;
    r.ev.device = -1;
    ++counts_.launch_calls;
    handler.record(r);
  }

  template <class Handler>
  void marker(const CUpti_ActivityMarker2& m, Handler& handler) {
    ++counts_.marker_records;
    const auto flags = static_cast<std::uint32_t>(m.flags);
    if (flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
      const std::string_view name = m.name ? std::string_view(m.name) : std::string_view();
      const std::string_view prefix = opt_.nvtx_step_prefix;
      if (!prefix.empty() && name.substr(0, prefix.size()) == prefix) {
        step_mark s;
        s.kind = mark_kind::step;
        s.time_ns = s.end_ns = clock_.to_host(m.timestamp);
        s.step = step_number(name.substr(prefix.size()));
        step_ids_[step_ids_next_++ % step_ids_.size()] = m.id;  // its end is expected
        ++counts_.step_marks;
        handler.mark(s);
        return;
      }
      if (ranges_.size() == opt_.open_ranges) {
        ++counts_.ranges_dropped;
        return;
      }
      ranges_.push_back({m.id, names_.intern(name.empty() ? std::string_view("nvtx range") : name),
                         clock_.to_host(m.timestamp), m.objectId.pt.threadId});
    } else if (flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
      for (std::size_t i = 0; i < ranges_.size(); ++i) {
        if (ranges_[i].id != m.id) continue;
        const open_range o = ranges_[i];
        ranges_[i] = ranges_.back();
        ranges_.pop_back();
        step_mark p;
        p.kind = mark_kind::phase;
        p.time_ns = o.start_ns;
        p.end_ns = std::max(o.start_ns, clock_.to_host(m.timestamp));
        p.step = last_step_;
        p.name = o.name;
        ++counts_.phase_marks;
        handler.mark(p);
        activity_record r;
        r.ev.start_ns = p.time_ns;
        r.ev.end_ns = p.end_ns;
        r.ev.name = o.name;
        r.ev.kind = event_kind::annotation;
        r.ev.stream = o.thread;
        r.ev.device = -1;
        handler.record(r);
        return;
      }
      // Step ranges end here too (they were never opened); only other ends are unmatched.
      if (!step_range_end(m.id)) ++counts_.unmatched_range_ends;
    }
  }

  bool step_range_end(std::uint32_t id) {
    for (std::size_t i = 0; i < step_ids_.size(); ++i)
      if (step_ids_[i] == id) {
        step_ids_[i] = 0;
        return true;
      }
    return false;
  }

  std::int64_t step_number(std::string_view digits) {
    std::int64_t n = 0;
    std::size_t i = 0;
    for (; i < digits.size() && i < 18 && digits[i] >= '0' && digits[i] <= '9'; ++i) n = n * 10 + (digits[i] - '0');
    last_step_ = i > 0 ? n : last_step_ + 1;
    return last_step_;
  }

  static std::string_view copy_kind(unsigned k) noexcept {
    static constexpr std::string_view names[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                                 "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
    return k < std::size(names) ? names[k] : names[0];
  }
  static std::string_view memory_kind(std::size_t k) noexcept {
    static constexpr std::string_view names[] = {"Unknown", "Pageable", "Pinned",        "Device",
                                                 "Array",   "Managed",  "Device Static", "Managed Static"};
    return k < std::size(names) ? names[k] : names[0];
  }

  name_id copy_name(unsigned kind, unsigned src, unsigned dst) {
    kind = kind < 11 ? kind : 0;
    src = src < 8 ? src : 0;
    dst = dst < 8 ? dst : 0;
    name_id& id = copy_names_[(kind * 8 + src) * 8 + dst];
    if (id == unset)
      id = names_.intern("Memcpy " + std::string(copy_kind(kind)) + " (" + std::string(memory_kind(src)) + " -> " +
                         std::string(memory_kind(dst)) + ")");
    return id;
  }

  static bool prefix_matches(const char* p, const cache_entry& c) noexcept {
    return std::strncmp(p, c.prefix, c.prefix_len) == 0 &&
           (c.prefix_len == sizeof(c.prefix) || p[c.prefix_len] == '\0');
  }

  // The launch-shape key of kernel `id` as launched by k, interned on first sight.
  name_id shape_key(name_id id, const CUpti_ActivityKernel10& k) {
    if (k.gridX <= 0 || k.gridY <= 0 || k.gridZ <= 0 || k.blockX <= 0 || k.blockY <= 0 || k.blockZ <= 0) return id;
    const std::array<std::uint32_t, 3> grid{static_cast<std::uint32_t>(k.gridX), static_cast<std::uint32_t>(k.gridY),
                                            static_cast<std::uint32_t>(k.gridZ)};
    const std::array<std::uint32_t, 3> block{static_cast<std::uint32_t>(k.blockX), static_cast<std::uint32_t>(k.blockY),
                                             static_cast<std::uint32_t>(k.blockZ)};
    return shapes_.key(id, grid, block);
  }

  const cache_entry& lookup(const char* p) {
    if (!p) p = "<unnamed kernel>";
    const auto h = (reinterpret_cast<std::uintptr_t>(p) >> 3) * 0x9E3779B97F4A7C15ull;
    const std::size_t mask = cache_.size() - 1;
    std::size_t at = static_cast<std::size_t>(h >> 20) & mask;
    for (std::size_t probe = 0; probe < 8; ++probe, at = (at + 1) & mask) {
      cache_entry& c = cache_[at];
      if (c.ptr == p) {
        if (prefix_matches(p, c)) return c;
        ++counts_.name_pointer_reused;
        fill(c, p);
        return c;
      }
      if (!c.ptr) {
        fill(c, p);
        return c;
      }
    }
    ++counts_.name_cache_full;
    fill(overflow_, p);
    return overflow_;
  }

  void fill(cache_entry& c, const char* p) {
    const std::string name = readable(p);
    c.ptr = p;
    c.id = names_.intern(name);
    c.kind = opt_.classifier.device_kind(name) == event_kind::collective ? event_kind::collective : event_kind::kernel;
    const std::size_t n = strnlen(p, sizeof(c.prefix));
    std::memcpy(c.prefix, p, n);
    c.prefix_len = static_cast<std::uint8_t>(n);
  }

  std::string readable(const char* p) const {
    if (!opt_.demangle || std::strncmp(p, "_Z", 2) != 0) return p;
    int status = 0;
    char* d = abi::__cxa_demangle(p, nullptr, nullptr, &status);
    std::string out = status == 0 && d ? std::string(d) : std::string(p);
    std::free(d);
    return out;
  }

  struct open_range {
    std::uint32_t id;
    name_id name;
    std::int64_t start_ns;
    std::uint32_t thread;
  };

  name_table& names_;
  launch_shape_interner<name_table> shapes_{names_};  // (kernel, grid, block) -> its key
  const clock_anchor& clock_;
  parser_options opt_;
  std::vector<cache_entry> cache_;
  cache_entry overflow_;
  std::array<name_id, 11 * 8 * 8> copy_names_{};
  std::array<name_id, 8> set_names_{};
  name_id launch_name_ = unset;
  std::vector<open_range> ranges_;
  std::array<std::uint32_t, 16> step_ids_{};
  std::size_t step_ids_next_ = 0;
  std::int64_t last_step_ = -1;
  parse_counts counts_;
};

}  // namespace failslow::collect
