// failslow/io/nsys_reader.hpp -- reads an Nsight Systems SQLite export
// (`nsys export --type sqlite report.nsys-rep`).
//
// Synopsis
//   trace_data read_nsys_sqlite(path, names)
//   Tables read (each optional: an export without memsets has no memset table):
//     CUPTI_ACTIVITY_KIND_KERNEL   start, end, deviceId, streamId, correlationId,
//                                  demangledName (-> StringIds), gridX..Z, blockX..Z
//                                  -> kernel, or collective for NCCL names (kernel_classifier)
//     CUPTI_ACTIVITY_KIND_MEMCPY   start, end, deviceId, streamId, correlationId, copyKind
//                                  -> memcpy named "Memcpy HtoD" / "DtoH" / "DtoD" / "PtoP" / ...
//     CUPTI_ACTIVITY_KIND_MEMSET   start, end, deviceId, streamId, correlationId -> memset "Memset"
//     CUPTI_ACTIVITY_KIND_RUNTIME  start, end, globalTid, correlationId, nameId -> runtime
//                                  (stream = thread id = globalTid & 0xFFFFFF)
//     NVTX_EVENTS                  push/pop (eventType 59) and start/end (60) ranges: start,
//                                  end, globalTid, text or textId -> host annotations, so
//                                  "ProfilerStep#N" ranges give steps and others phases
//     TARGET_INFO_GPU              id, name, totalMemory, smCount, computeMajor/Minor -> devices
//     StringIds                    id -> value, for the names above
//   Times are the export's integer nanoseconds. The export names no rank: trace_data has no
//   distributedInfo (a trace set assigns one, or takes an explicit mapping).
//   Rows that cannot be events are counted like the Kineto reader's: a NULL start/end/name
//   (missing_field), end < start (negative_duration), ids that do not fit (out_of_range).
//   An optional component: target failslow::sqlite (FAILSLOW_HAS_SQLITE, Debian libsqlite3);
//   without it read_nsys_sqlite throws unavailable_error.
// Complexity: O(rows) plus SQLite's scans.
// Errors: a file that is not an SQLite database, or a table of the wrong shape: parse_error
//   (source = the file, expected = what SQLite said); cannot open: invalid_argument.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>

#include "failslow/core/error.hpp"
#include "failslow/core/event.hpp"
#include "failslow/core/kernel_class.hpp"
#include "failslow/core/name_table.hpp"
#include "failslow/io/trace_data.hpp"

#if defined(FAILSLOW_HAS_SQLITE)
#include <sqlite3.h>
#endif

namespace failslow::io {

#if defined(FAILSLOW_HAS_SQLITE)
inline constexpr bool nsys_reader_available = true;

namespace detail {

class sqlite_db {
 public:
  explicit sqlite_db(const std::string& path) : path_(path) {
    sqlite3* db = nullptr;
    const int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    db_.reset(db);
    if (rc != SQLITE_OK) throw invalid_argument("cannot open " + path + " as SQLite: " + sqlite3_errstr(rc));
    // Reading the schema checks that this is a database at all.
    statement st(*this, "SELECT count(*) FROM sqlite_master");
    st.step();
  }

  bool has_table(const std::string& name) {
    statement st(*this, "SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = ?1");
    sqlite3_bind_text(st.get(), 1, name.c_str(), -1, SQLITE_TRANSIENT);
    return st.step();
  }

  class statement {
   public:
    statement(sqlite_db& db, const char* sql) : db_(db) {
      sqlite3_stmt* s = nullptr;
      if (sqlite3_prepare_v2(db.db_.get(), sql, -1, &s, nullptr) != SQLITE_OK)
        db.fail(std::string("a table for: ") + sql);
      st_.reset(s);
    }
    sqlite3_stmt* get() const noexcept { return st_.get(); }
    bool step() {
      const int rc = sqlite3_step(st_.get());
      if (rc == SQLITE_ROW) return true;
      if (rc == SQLITE_DONE) return false;
      db_.fail("readable rows");
    }
    bool null(int c) const noexcept { return sqlite3_column_type(st_.get(), c) == SQLITE_NULL; }
    std::int64_t i64(int c) const noexcept { return sqlite3_column_int64(st_.get(), c); }
    std::string_view text(int c) const noexcept {
      const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st_.get(), c));
      return p ? std::string_view(p, static_cast<std::size_t>(sqlite3_column_bytes(st_.get(), c))) : std::string_view();
    }

   private:
    struct finalizer {
      void operator()(sqlite3_stmt* s) const noexcept { sqlite3_finalize(s); }
    };
    sqlite_db& db_;
    std::unique_ptr<sqlite3_stmt, finalizer> st_;
  };

  [[noreturn]] void fail(const std::string& expected) const {
    throw parse_error(source_location{path_, 0, 0, 0}, expected + " (SQLite: " + sqlite3_errmsg(db_.get()) + ")");
  }

 private:
  struct closer {
    void operator()(sqlite3* d) const noexcept { sqlite3_close(d); }
  };
  std::string path_;
  std::unique_ptr<sqlite3, closer> db_;
};

inline const char* memcpy_name(std::int64_t copy_kind) noexcept {
  switch (copy_kind) {  // CUpti_ActivityMemcpyKind
    case 1:
      return "Memcpy HtoD";
    case 2:
      return "Memcpy DtoH";
    case 3:
      return "Memcpy HtoA";
    case 4:
      return "Memcpy AtoH";
    case 5:
      return "Memcpy AtoA";
    case 6:
      return "Memcpy AtoD";
    case 7:
      return "Memcpy DtoA";
    case 8:
      return "Memcpy DtoD";
    case 9:
      return "Memcpy HtoH";
    case 10:
      return "Memcpy PtoP";
    default:
      return "Memcpy";
  }
}

}  // namespace detail

inline trace_data read_nsys_sqlite(const std::string& path, name_table& names) {
  detail::sqlite_db db(path);
  trace_data out;
  out.source = path;
  static const kernel_classifier classifier = kernel_classifier::defaults();
  std::unordered_map<std::int64_t, name_id> strings;
  std::unordered_map<std::int64_t, std::string> string_text;
  if (db.has_table("StringIds")) {
    detail::sqlite_db::statement st(db, "SELECT id, value FROM StringIds");
    while (st.step())
      if (!st.null(0) && !st.null(1)) string_text.emplace(st.i64(0), std::string(st.text(1)));
  }
  auto name_of = [&](std::int64_t id, name_id& out_id) {
    const auto hit = strings.find(id);
    if (hit != strings.end()) {
      out_id = hit->second;
      return true;
    }
    const auto t = string_text.find(id);
    if (t == string_text.end()) return false;
    out_id = names.intern(t->second);
    strings.emplace(id, out_id);
    return true;
  };
  auto& stats = out.stats;
  // Times and ids of one row; false (counted) when the row cannot be an event.
  auto times = [&](detail::sqlite_db::statement& st, event& e) {
    ++stats.events_seen;
    if (st.null(0) || st.null(1)) return ++stats.missing_field, false;
    e.start_ns = st.i64(0);
    e.end_ns = st.i64(1);
    if (e.end_ns < e.start_ns) return ++stats.negative_duration, false;
    if (e.start_ns < 0) return ++stats.out_of_range, false;
    return true;
  };
  auto fits = [](std::int64_t v, std::int64_t lo, std::int64_t hi) { return v >= lo && v <= hi; };
  auto device_ids = [&](detail::sqlite_db::statement& st, int c, event& e) {
    const auto dev = st.i64(c), stream = st.i64(c + 1), corr = st.i64(c + 2);
    if (!fits(dev, 0, std::numeric_limits<std::int16_t>::max()) ||
        !fits(stream, 0, std::numeric_limits<std::uint32_t>::max()) ||
        !fits(corr, 0, std::numeric_limits<std::uint32_t>::max()))
      return ++stats.out_of_range, false;
    e.device = static_cast<std::int16_t>(dev);
    e.stream = static_cast<std::uint32_t>(stream);
    e.correlation = static_cast<std::uint32_t>(corr);
    return true;
  };
  auto push = [&](const event& e) {
    out.events.push_back(e);
    ++stats.stored;
  };

  std::vector<std::uint8_t> kind_cache;
  if (db.has_table("CUPTI_ACTIVITY_KIND_KERNEL")) {
    detail::sqlite_db::statement st(
        db,
        "SELECT start, end, deviceId, streamId, correlationId, demangledName, gridX, gridY, "
        "gridZ, blockX, blockY, blockZ FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start");
    while (st.step()) {
      event e;
      if (!times(st, e) || !device_ids(st, 2, e)) continue;
      if (st.null(5) || !name_of(st.i64(5), e.name)) {
        ++stats.missing_field;
        continue;
      }
      if (e.name >= kind_cache.size()) kind_cache.resize(static_cast<std::size_t>(e.name) + 1, 0xFF);
      if (kind_cache[e.name] == 0xFF)
        kind_cache[e.name] = static_cast<std::uint8_t>(classifier.device_kind(names.name(e.name)));
      e.kind = static_cast<event_kind>(kind_cache[e.name]);
      launch_dims d;
      d.event = static_cast<std::uint32_t>(out.events.size());
      bool dims_ok = true;
      for (int k = 0; k < 3; ++k) {
        const auto g = st.i64(6 + k), b = st.i64(9 + k);
        dims_ok = dims_ok && fits(g, 0, std::numeric_limits<std::uint32_t>::max()) &&
                  fits(b, 0, std::numeric_limits<std::uint32_t>::max());
        d.grid[static_cast<std::size_t>(k)] = static_cast<std::uint32_t>(g);
        d.block[static_cast<std::size_t>(k)] = static_cast<std::uint32_t>(b);
      }
      if (dims_ok)
        out.launches.push_back(d);
      else
        ++stats.bad_args;
      push(e);
    }
  }
  if (db.has_table("CUPTI_ACTIVITY_KIND_MEMCPY")) {
    detail::sqlite_db::statement st(
        db, "SELECT start, end, deviceId, streamId, correlationId, copyKind FROM CUPTI_ACTIVITY_KIND_MEMCPY");
    while (st.step()) {
      event e;
      if (!times(st, e) || !device_ids(st, 2, e)) continue;
      e.kind = event_kind::memcpy;
      e.name = names.intern(detail::memcpy_name(st.null(5) ? 0 : st.i64(5)));
      push(e);
    }
  }
  if (db.has_table("CUPTI_ACTIVITY_KIND_MEMSET")) {
    detail::sqlite_db::statement st(
        db, "SELECT start, end, deviceId, streamId, correlationId FROM CUPTI_ACTIVITY_KIND_MEMSET");
    const name_id memset_name = names.intern("Memset");
    while (st.step()) {
      event e;
      if (!times(st, e) || !device_ids(st, 2, e)) continue;
      e.kind = event_kind::memset;
      e.name = memset_name;
      push(e);
    }
  }
  if (db.has_table("CUPTI_ACTIVITY_KIND_RUNTIME")) {
    detail::sqlite_db::statement st(
        db, "SELECT start, end, globalTid, correlationId, nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME");
    while (st.step()) {
      event e;
      if (!times(st, e)) continue;
      const auto corr = st.i64(3);
      if (!fits(corr, 0, std::numeric_limits<std::uint32_t>::max())) {
        ++stats.out_of_range;
        continue;
      }
      if (st.null(4) || !name_of(st.i64(4), e.name)) {
        ++stats.missing_field;
        continue;
      }
      e.kind = event_kind::runtime;
      e.stream = static_cast<std::uint32_t>(st.i64(2) & 0xFFFFFF);
      e.correlation = static_cast<std::uint32_t>(corr);
      push(e);
    }
  }
  if (db.has_table("NVTX_EVENTS")) {
    detail::sqlite_db::statement st(db, "SELECT start, end, globalTid, text, textId, eventType FROM NVTX_EVENTS");
    while (st.step()) {
      const auto type = st.null(5) ? 0 : st.i64(5);
      if (type != 59 && type != 60) {  // marks, domain and category definitions...
        ++stats.events_seen;
        ++stats.other_phases;
        continue;
      }
      event e;
      if (!times(st, e)) continue;
      if (!st.null(3)) {
        e.name = names.intern(st.text(3));
      } else if (st.null(4) || !name_of(st.i64(4), e.name)) {
        ++stats.missing_field;
        continue;
      }
      e.kind = event_kind::annotation;
      e.stream = static_cast<std::uint32_t>((st.null(2) ? 0 : st.i64(2)) & 0xFFFFFF);
      push(e);
    }
  }
  if (db.has_table("TARGET_INFO_GPU")) {
    detail::sqlite_db::statement st(
        db, "SELECT id, name, totalMemory, smCount, computeMajor, computeMinor FROM TARGET_INFO_GPU");
    while (st.step()) {
      device_properties d;
      d.id = st.null(0) ? -1 : st.i64(0);
      d.name = std::string(st.text(1));
      d.total_global_mem = st.null(2) ? -1 : st.i64(2);
      d.num_sms = st.null(3) ? -1 : st.i64(3);
      d.compute_major = st.null(4) ? -1 : st.i64(4);
      d.compute_minor = st.null(5) ? -1 : st.i64(5);
      out.devices.push_back(std::move(d));
    }
  }
  return out;
}

#else

inline constexpr bool nsys_reader_available = false;

/// Stand-in when built without SQLite: throws unavailable_error.
inline trace_data read_nsys_sqlite(const std::string&, name_table&) {
  throw unavailable_error(
      "the Nsight Systems reader is unavailable: failslow was built without SQLite (configure with "
      "-DFAILSLOW_WITH_SQLITE=ON and link failslow::sqlite)");
}

#endif

}  // namespace failslow::io
