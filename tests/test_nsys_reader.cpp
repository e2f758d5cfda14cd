#include <catch2/catch.hpp>
#include <failslow/io/nsys_reader.hpp>
#include <failslow/trace/load_trace_set.hpp>
#include <failslow/trace/steps.hpp>
#include <string>

#include "support/synthetic_trace.hpp"

using namespace failslow;

#if FAILSLOW_HAS_SQLITE

namespace {

void exec(sqlite3* db, const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    const std::string msg = err ? err : "?";
    sqlite3_free(err);
    FAIL("sqlite: " << msg << " in " << sql);
  }
}

// A small export with the tables and columns `nsys export --type sqlite` writes (the subset
// the reader uses, plus a few it ignores).
std::string make_export(const std::filesystem::path& dir, int steps, int kernels_per_step) {
  const auto path = (dir / "report.sqlite").string();
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  exec(db,
       "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
       "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER, "
       " contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, "
       " shortName INTEGER, mangledName INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, "
       " blockY INTEGER, blockZ INTEGER, registersPerThread INTEGER);"
       "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER, "
       " contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER, bytes INTEGER, "
       " copyKind INTEGER, srcKind INTEGER, dstKind INTEGER);"
       "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER, "
       " contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER, value INTEGER, bytes INTEGER);"
       "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER, "
       " globalTid INTEGER, correlationId INTEGER, nameId INTEGER, returnValue INTEGER, callchainId INTEGER);"
       "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER, "
       " category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, "
       " domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, "
       " int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, jsonText TEXT);"
       "CREATE TABLE TARGET_INFO_GPU (vmId INTEGER, id INTEGER, name TEXT, busLocation TEXT, isDiscrete INTEGER, "
       " l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER, clockRate INTEGER, smCount INTEGER, "
       " computeMajor INTEGER, computeMinor INTEGER);"
       "INSERT INTO StringIds VALUES (1, 'void gemm<float>(float*)'), (2, 'ncclDevKernel_AllReduce_Sum_bf16_RING_LL'),"
       " (3, 'cudaLaunchKernel'), (4, 'forward');"
       "INSERT INTO TARGET_INFO_GPU VALUES (0, 0, 'NVIDIA H100 80GB HBM3', '0000:18:00.0', 1, 52428800, 85520809984, "
       " 3352320000000, 1980000, 132, 9, 0);");
  const std::int64_t tid = (std::int64_t{4242} << 24) | 4243;  // globalTid: pid 4242, tid 4243
  std::int64_t corr = 1;
  for (int s = 0; s < steps; ++s) {
    const std::int64_t t0 = 1000000 + s * 1000000;
    exec(db, "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (" + std::to_string(t0) + ", " +
                 std::to_string(t0 + 900000) + ", 59, 'ProfilerStep#" + std::to_string(s) + "', " +
                 std::to_string(tid) + ");");
    exec(db, "INSERT INTO NVTX_EVENTS (start, end, eventType, textId, globalTid) VALUES (" + std::to_string(t0 + 10) +
                 ", " + std::to_string(t0 + 500000) + ", 60, 4, " + std::to_string(tid) + ");");
    for (int k = 0; k < kernels_per_step; ++k) {
      const std::int64_t lt = t0 + 1000 + k * 10000;
      exec(db, "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (" + std::to_string(lt) + ", " +
                   std::to_string(lt + 800) + ", 0, " + std::to_string(tid) + ", " + std::to_string(corr) +
                   ", 3, 0, 0);");
      const int name = k == kernels_per_step - 1 ? 2 : 1;
      exec(db, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (" + std::to_string(lt + 950000) + ", " +
                   std::to_string(lt + 955000) + ", 0, 1, 7, " + std::to_string(corr) + ", 0, " + std::to_string(name) +
                   ", 0, 0, 128, 1, 1, 256, 1, 1, 32);");
      ++corr;
    }
  }
  exec(db,
       "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (500, 900, 0, 1, 7, 0, 0, 4096, 1, 0, 0);"
       "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (950, 980, 0, 1, 7, 0, 0, 0, 4096);"
       "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (990, 980, 0, 1, 7, 0, 0, 0, 4096);"  // end < start
       "INSERT INTO NVTX_EVENTS (start, end, eventType, text) VALUES (5, NULL, 34, 'a mark');");
  sqlite3_close(db);
  return path;
}

}  // namespace

TEST_CASE("Nsight Systems export: kernels, copies, runtime, NVTX ranges, GPUs, steps via correlation") {
  for (int steps : {1, 3}) {
    for (int per : {2, 5}) {
      const auto dir = failslow_test::temp_dir("nsys");
      const auto path = make_export(dir, steps, per);
      name_table names;
      const auto t = io::read_nsys_sqlite(path, names);
      CHECK(t.stats.accounted());
      CHECK(t.stats.negative_duration == 1);
      CHECK(t.stats.other_phases == 1);  // the mark
      std::size_t kernels = 0, colls = 0, runtime = 0, annotations = 0, memcpys = 0, memsets = 0;
      for (const auto& e : t.events) {
        switch (e.kind) {
          case event_kind::kernel:
            ++kernels;
            break;
          case event_kind::collective:
            ++colls;
            break;
          case event_kind::runtime:
            ++runtime;
            CHECK(e.stream == 4243);
            break;
          case event_kind::annotation:
            ++annotations;
            break;
          case event_kind::memcpy:
            ++memcpys;
            CHECK(names.name(e.name) == "Memcpy HtoD");
            break;
          case event_kind::memset:
            ++memsets;
            break;
          default:
            break;
        }
      }
      CHECK(kernels == static_cast<std::size_t>(steps * (per - 1)));
      CHECK(colls == static_cast<std::size_t>(steps));
      CHECK(runtime == static_cast<std::size_t>(steps * per));
      CHECK(annotations == static_cast<std::size_t>(2 * steps));
      CHECK(memcpys == 1);
      CHECK(memsets == 1);
      CHECK(t.launches.size() == static_cast<std::size_t>(steps * per));
      CHECK(t.launches[0].grid[0] == 128);
      REQUIRE(t.devices.size() == 1);
      CHECK(t.devices[0].num_sms == 132);
      CHECK(t.devices[0].compute_major == 9);
      const auto m = trace::map_steps(t, names);
      REQUIRE(m.steps.size() == static_cast<std::size_t>(steps));
      for (const auto& s : m.steps) {
        CHECK(s.device_events == static_cast<std::size_t>(per));
        CHECK(s.gpu_start_ns > s.cpu_start_ns + 900000);  // runs after the CPU step ended
      }
      // Through a trace set, with an explicit rank.
      trace::trace_set_options o;
      o.rank_of[path] = 3;
      const auto set = trace::load_trace_set({path}, o);
      REQUIRE(set.traces.size() == 1);
      CHECK(set.traces[0].rank == 3);
      std::filesystem::remove_all(dir);
    }
  }
  const auto dir = failslow_test::temp_dir("nsys_bad");
  failslow_test::write_file(dir / "junk.sqlite", "this is not a database, just text long enough to look like one....");
  name_table names;
  CHECK_THROWS_AS(io::read_nsys_sqlite((dir / "junk.sqlite").string(), names), parse_error);
  std::filesystem::remove_all(dir);
}

#else

TEST_CASE("without SQLite the Nsight reader says it is unavailable") {
  name_table names;
  CHECK_FALSE(io::nsys_reader_available);
  CHECK_THROWS_AS(io::read_nsys_sqlite("x.sqlite", names), unavailable_error);
}

#endif
