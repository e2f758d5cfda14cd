// failslow/io/detail/kineto_builder.hpp -- turns the raw fields of Kineto trace events into
// failslow events, launch dimensions and collective arguments (part of io/kineto_reader.hpp).
//
// Synopsis
//   parse_rank_list_text(s, out)   "[0, 1, 2]" (how Kineto writes Process Group Ranks)
//   kineto_builder b(in, names, classifier, microseconds, apply_base_time)
//     b.add(ev)     one event: counted by phase (M, s/t/f, i/I, other) or category, or stored:
//                   times in ns (ts/dur * 10^3 for microseconds), device/stream from args (GPU
//                   events: args.device else pid, args.stream else tid) or tid (host events),
//                   kind from the category (kernels through the classifier, events without
//                   "cat" by host_kind_by_name), names interned; grid/block to launches, NCCL
//                   args to collectives (rank lists interned once per distinct list)
//     b.commit_names()  interns the names met so far into the shared table, in the order met
//                   (until then the builder's ids are its own: the reader decides when names
//                   reach the table, as if each had been interned when met)
//     b.finish()    commits the names and maps the events and collectives to the shared ids,
//                   adds baseTimeNanoseconds (apply_base_time), sets every event's rank from
//                   distributedInfo, trims the event vector to at most 25 % spare capacity
//     b.out()       the trace being built (the top-level blocks are set there by the reader)
//   Built only with simdjson (FAILSLOW_HAS_SIMDJSON); parse_rank_list_text always.
// Complexity: add O(fields) with one classifier call and one name-table lookup per distinct
//   name (name_id_cache: one hash and usually one compare per name met); finish O(events).
// Errors: malformed events are counted in read_stats (parse_error in strict mode); tokens the
//   event did not use are still checked as JSON (parse_error); domain_error for more than 2^32 - 1
//   events or baseTimeNanoseconds + ts past int64 ns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
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
#include "failslow/io/detail/file_bytes.hpp"
#include "failslow/io/detail/kineto_event_fields.hpp"
#include "failslow/io/detail/kineto_input.hpp"
#endif

namespace failslow::io::detail {

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

/// A small open-addressing map from names (views of text that outlives the cache: the
/// builder's copies) to ids, the per-read table in front of the shared name_table. One hash of
/// the text (16 bytes per step), then usually one slot and one compare; at most half the slots
/// are used.
class name_id_cache {
 public:
  /// The id stored for `s`, or nullptr; `hash` = hash_of(s).
  const name_id* find(std::string_view s, std::uint64_t hash) const noexcept {
    if (slots_.empty()) return nullptr;
    for (std::size_t i = hash & mask_;; i = (i + 1) & mask_) {
      const slot& e = slots_[i];
      if (e.data == nullptr) return nullptr;
      if (e.hash == hash && e.size == s.size() && std::memcmp(e.data, s.data(), s.size()) == 0) return &e.id;
    }
  }
  /// Stores `s` (not present; it must outlive the cache) with `id`.
  void insert(std::string_view s, std::uint64_t hash, name_id id) {
    if (2 * (used_ + 1) > slots_.size()) grow();
    std::size_t i = hash & mask_;
    while (slots_[i].data != nullptr) i = (i + 1) & mask_;
    slots_[i] = slot{hash, s.empty() ? empty_text() : s.data(), s.size(), id};
    ++used_;
  }

  static std::uint64_t hash_of(std::string_view s) noexcept {
    const char* p = s.data();
    std::size_t n = s.size();
    std::uint64_t h = 0x9E3779B97F4A7C15ull ^ (n * 0xA0761D6478BD642Full);
    if (n >= 16) {
      while (n > 16) {
        h = mix(load8(p) ^ 0xE7037ED1A0B428DBull, load8(p + 8) ^ h);
        p += 16;
        n -= 16;
      }
      return mix(load8(p + n - 16) ^ 0x8EBC6AF09C88C6E3ull, load8(p + n - 8) ^ h);
    }
    std::uint64_t a = 0, b = 0;
    if (n >= 8) {
      a = load8(p);
      b = load8(p + n - 8);
    } else if (n >= 4) {
      a = load4(p);
      b = load4(p + n - 4);
    } else if (n > 0) {
      a = static_cast<std::uint64_t>(static_cast<unsigned char>(p[0])) << 16 |
          static_cast<std::uint64_t>(static_cast<unsigned char>(p[n / 2])) << 8 | static_cast<unsigned char>(p[n - 1]);
    }
    return mix(a ^ 0x8EBC6AF09C88C6E3ull, b ^ h);
  }

 private:
  struct slot {
    std::uint64_t hash = 0;
    const char* data = nullptr;  // nullptr: a free slot
    std::size_t size = 0;
    name_id id = 0;
  };

  static const char* empty_text() noexcept { return ""; }
  static std::uint64_t load8(const char* p) noexcept {
    std::uint64_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static std::uint64_t load4(const char* p) noexcept {
    std::uint32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  // 64 x 64 -> 128-bit product, folded (both halves depend on every input bit).
  static std::uint64_t mix(std::uint64_t a, std::uint64_t b) noexcept {
#if defined(__SIZEOF_INT128__)
    __extension__ typedef unsigned __int128 u128;  // GCC and Clang (pedantic-clean)
    const u128 r = static_cast<u128>(a) * b;
    return static_cast<std::uint64_t>(r) ^ static_cast<std::uint64_t>(r >> 64);
#else
    const std::uint64_t lo = a * b, x = (a >> 32) * (b & 0xFFFFFFFFull) + (b >> 32) * (a & 0xFFFFFFFFull);
    return lo ^ (x * 0x9E3779B97F4A7C15ull) ^ ((a >> 32) * (b >> 32));
#endif
  }

  void grow() {
    std::vector<slot> old(slots_.size() < 64 ? 128 : 2 * slots_.size());
    old.swap(slots_);
    mask_ = slots_.size() - 1;
    for (const slot& e : old) {
      if (e.data == nullptr) continue;
      std::size_t i = e.hash & mask_;
      while (slots_[i].data != nullptr) i = (i + 1) & mask_;
      slots_[i] = e;
    }
  }

  std::vector<slot> slots_;
  std::size_t mask_ = 0, used_ = 0;
};

#if defined(FAILSLOW_HAS_SIMDJSON)

/// Builds a trace_data from raw events (see the synopsis above).
class kineto_builder {
  // The per-name caches store a category or kind in a byte, 0xFF meaning "not yet known".
  static_assert(kineto_category_count < 0xFF && event_kind_count < 0xFF, "a cached kind must fit below 0xFF");

 public:
  /// `in`, `names` and `classifier` outlive the builder. ts and dur are microseconds (else
  /// nanoseconds); apply_base_time: finish() adds baseTimeNanoseconds (else reports it as 0).
  kineto_builder(const kineto_input& in, name_table& names, const kernel_classifier& classifier, bool microseconds,
                 bool apply_base_time)
      : in_(in),
        names_(names),
        classifier_(classifier),
        scale_(microseconds ? 3 : 0),
        apply_base_time_(apply_base_time) {
    out_.source = in.source();
  }

  trace_data& out() noexcept { return out_; }

  /// Converts and stores one event, or counts why not.
  void add(kineto_raw_event& ev) {
    const std::size_t before = out_.events.size();
    store_event(ev);
    // Tokens captured but not converted must still be valid JSON.
    if (out_.events.size() == before) {
      for (std::string_view tok : {ev.ts, ev.dur, ev.pid, ev.tid, ev.device, ev.stream, ev.correlation, ev.group_size,
                                   ev.in_nelems, ev.out_nelems})
        in_.check_token(tok);
    }
  }

  /// A malformed event: counted, or thrown in strict mode.
  void malformed(std::uint64_t read_stats::*counter, const char* what) {
    in_.malformed_event(what);
    ++(out_.stats.*counter);
  }

  /// Interns the names met so far into the shared table (in the order they were met), as far
  /// as not done yet: the reader calls it where its names would have reached the table had
  /// each been interned when met (at the end, or before an error of the events propagates).
  void commit_names() {
    for (std::size_t i = shared_ids_.size(); i < local_names_.size(); ++i)
      shared_ids_.push_back(names_.intern(local_names_[i]));
  }

  /// Base time, ranks and the final size of the event vector; then the trace is complete.
  trace_data finish() {
    commit_names();
    if (apply_base_time_ && out_.base_time_ns != 0) {
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
    } else if (!apply_base_time_) {
      out_.base_time_ns = 0;
    }
    const std::int32_t rank = out_.stated_rank();
    const name_id* shared = shared_ids_.data();
    for (auto& e : out_.events) {
      e.rank = rank;
      e.name = shared[e.name];
    }
    for (auto& c : out_.collectives)
      for (name_id* id : {&c.collective, &c.pg_name, &c.pg_desc, &c.dtype})
        if (*id != collective_args::no_name) *id = shared[*id];
    // The reservation counted every traceEvents entry; keep at most 25 % slack.
    auto& ev = out_.events;
    if (ev.capacity() > ev.size() + ev.size() / 4) {
      std::vector<event> tight;
      tight.reserve(ev.size());
      advise_huge_pages(tight.data(), tight.capacity() * sizeof(event));
      tight.assign(ev.begin(), ev.end());
      ev.swap(tight);
    }
    return std::move(out_);
  }

 private:
  // Parses an id field into [lo, hi]. False (and counted) when the event must be dropped.
  template <class T>
  bool id_field(std::string_view tok, T& out, std::int64_t lo, std::int64_t hi) {
    std::int64_t x = 0;
    switch (in_.number(tok, 0, x, true)) {
      case kineto_num::ok:
        if (x < lo || x > hi) {
          malformed(&read_stats::out_of_range, "an id that fits the event record");
          return false;
        }
        out = static_cast<T>(x);
        return true;
      case kineto_num::type:
        malformed(&read_stats::bad_type, "an integer id (pid, tid, device, stream)");
        return false;
      case kineto_num::range:
        malformed(&read_stats::out_of_range, "an id that fits the event record");
        return false;
    }
    return false;
  }

  void store_event(kineto_raw_event& ev) {
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
    // The name's id, once: events without "cat" intern it here (also when they are dropped
    // below), the others where they are stored.
    name_id nid = 0;
    const kineto_category c = by_name ? category_by_name(ev.name, nid) : categorize_kineto(ev.cat);
    if (c == kineto_category::unknown) {
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
    switch (in_.number(ev.ts, scale_, ts, false)) {
      case kineto_num::type:
        return malformed(&read_stats::bad_type, "a number ts");
      case kineto_num::range:
        return malformed(&read_stats::out_of_range, "a ts that fits int64 nanoseconds");
      case kineto_num::ok:
        break;
    }
    switch (in_.number(ev.dur, scale_, dur, false)) {
      case kineto_num::type:
        return malformed(&read_stats::bad_type, "a number dur");
      case kineto_num::range:
        return malformed(&read_stats::out_of_range, "a dur that fits int64 nanoseconds");
      case kineto_num::ok:
        break;
    }
    if (dur < 0) return malformed(&read_stats::negative_duration, "dur >= 0");
    if (ts < 0) return malformed(&read_stats::out_of_range, "ts >= 0");
    if (ts > std::numeric_limits<std::int64_t>::max() - dur)
      return malformed(&read_stats::out_of_range, "ts + dur that fits int64 nanoseconds");

    event e;
    e.start_ns = ts;
    e.end_ns = ts + dur;
    if (device_side(c)) {
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
      if (in_.number(ev.correlation, 0, corr, true) == kineto_num::ok && corr >= 0 &&
          corr <= std::numeric_limits<std::uint32_t>::max())
        e.correlation = static_cast<std::uint32_t>(corr);
      else
        ++st.bad_args;
    }
    switch (c) {
      case kineto_category::kernel:
        nid = intern(ev.name);
        e.kind = kernel_kind(ev.name, nid);
        break;
      case kineto_category::memcpy:
        e.kind = event_kind::memcpy;
        break;
      case kineto_category::memset:
        e.kind = event_kind::memset;
        break;
      case kineto_category::runtime:
        e.kind = event_kind::runtime;
        break;
      case kineto_category::cpu_op:
        e.kind = event_kind::cpu_op;
        break;
      case kineto_category::annotation:
      case kineto_category::gpu_annotation:
        e.kind = event_kind::annotation;
        break;
      case kineto_category::unknown:
        break;
    }
    e.name = by_name || c == kineto_category::kernel ? nid : intern(ev.name);
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

  void store_collective(kineto_raw_event& ev, std::uint32_t index) {
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
      if (in_.number(tok, 0, x, true) == kineto_num::ok && x >= -1 && x <= hi)
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
        } else if (parse_rank_list_text(ev.pg_ranks_text, scratch_ranks_)) {
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
  kineto_category category_by_name(std::string_view name, name_id& id) {
    id = intern(name);
    if (id >= by_name_cache_.size()) by_name_cache_.resize(static_cast<std::size_t>(id) + 1, 0xFF);
    if (by_name_cache_[id] == 0xFF)
      by_name_cache_[id] = static_cast<std::uint8_t>(host_kind_by_name(name, classifier_) == event_kind::cpu_op
                                                         ? kineto_category::cpu_op
                                                         : kineto_category::annotation);
    return static_cast<kineto_category>(by_name_cache_[id]);
  }

  // The classifier's answer per distinct name (rules are tried once per name, not per event).
  event_kind kernel_kind(std::string_view name, name_id id) {
    if (id >= kind_cache_.size()) kind_cache_.resize(static_cast<std::size_t>(id) + 1, 0xFF);
    if (kind_cache_[id] == 0xFF) kind_cache_[id] = static_cast<std::uint8_t>(classifier_.device_kind(name));
    return static_cast<event_kind>(kind_cache_[id]);
  }

  // Names get ids local to this read, in the order the events meet them (most names repeat:
  // one lookup in the local cache); commit_names() interns them into the shared table in that
  // order, and finish() maps the events to the shared ids.
  name_id intern(std::string_view s) {
    const std::uint64_t h = name_id_cache::hash_of(s);
    if (const name_id* id = cache_.find(s, h)) return *id;
    local_names_.emplace_back(s);
    const auto id = static_cast<name_id>(local_names_.size() - 1);
    cache_.insert(local_names_.back(), h, id);
    return id;
  }

  const kineto_input& in_;
  name_table& names_;
  const kernel_classifier& classifier_;
  int scale_;
  bool apply_base_time_;
  trace_data out_;
  std::vector<std::int32_t> scratch_ranks_;
  std::unordered_map<std::string, std::uint32_t> rank_list_ids_;
  name_id_cache cache_;                  // local name -> local id
  std::deque<std::string> local_names_;  // by local id (a deque: the cache's views stay valid)
  std::vector<name_id> shared_ids_;      // local id -> id in names_ (those committed)
  std::vector<std::uint8_t> kind_cache_;
  std::vector<std::uint8_t> by_name_cache_;
};

#endif  // FAILSLOW_HAS_SIMDJSON

}  // namespace failslow::io::detail
