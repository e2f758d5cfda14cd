#include <catch2/catch.hpp>
#include <cstdint>
#include <failslow/io/detail/json_scan.hpp>
#include <failslow/io/kineto_reader.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "support/kineto_data.hpp"

using namespace failslow;
using failslow::io::read_kineto_buffer;

namespace {

// A decimal string modulo 2^64 (the reference sums exceed 2^63).
std::uint64_t mod64(const std::string& s) {
  std::uint64_t v = 0;
  for (char c : s) v = v * 10 + static_cast<std::uint64_t>(c - '0');
  return v;
}

std::string wrap(const std::string& events, const std::string& extra = "") {
  return "{\"schemaVersion\": 1," + extra + " \"traceEvents\": [" + events + "]}";
}

}  // namespace

TEST_CASE("decimal text converts to exact scaled integers") {
  using io::detail::number_status;
  using io::detail::parse_scaled;
  CHECK(parse_scaled("1712195495519695.8", 3).value == 1712195495519695800);
  CHECK(parse_scaled("4458676522690.655", 3).value == 4458676522690655);
  CHECK(parse_scaled("12", 3).value == 12000);
  CHECK(parse_scaled("0.0005", 3).value == 0);   // half to even: 0.5 ns -> 0
  CHECK(parse_scaled("0.0015", 3).value == 2);   // 1.5 ns -> 2
  CHECK(parse_scaled("0.00151", 3).value == 2);  // above half
  CHECK(parse_scaled("0.0025", 3).value == 2);   // 2.5 ns -> 2
  CHECK(parse_scaled("1.5e3", 3).value == 1500000);
  CHECK(parse_scaled("15E-1", 0).value == 2);
  CHECK(parse_scaled("-7.25", 3).value == -7250);
  CHECK(parse_scaled("0", 3).value == 0);
  CHECK(parse_scaled("9223372036854775807", 0).value == INT64_MAX);
  CHECK(parse_scaled("-9223372036854775808", 0).value == INT64_MIN);
  CHECK(parse_scaled("9223372036854775808", 0).status == number_status::out_of_range);
  CHECK(parse_scaled("9223372036854775.808", 3).status == number_status::out_of_range);
  CHECK(parse_scaled("1e400", 0).status == number_status::out_of_range);
  CHECK(parse_scaled("1e-400", 0).value == 0);
  CHECK(parse_scaled("12 ", 0).value == 12);
  CHECK_FALSE(parse_scaled("1.25", 0).exact);
  // The fast path (non-negative, at most 18 digits, at most `scale` after the point) and its edges.
  CHECK(parse_scaled("999999999999999999", 0).value == 999999999999999999);
  CHECK(parse_scaled("9223372036854775.807", 3).value == INT64_MAX);  // 19 digits: the general path
  CHECK(parse_scaled("9223372036854775", 3).value == 9223372036854775000);
  CHECK(parse_scaled("9223372036854776", 3).status == number_status::out_of_range);
  CHECK(parse_scaled("123.4", 3).value == 123400);
  CHECK(parse_scaled("123.45 \n", 3).value == 123450);
  CHECK(parse_scaled("0.5", 3).value == 500);
  CHECK(parse_scaled("0 ", 3).value == 0);
  CHECK(parse_scaled("1.0", 0).value == 1);
  CHECK(parse_scaled("2.0005", 3).value == 2000);  // more digits than the scale: rounded, half to even
  for (const char* bad : {"01", "1.", "-", "1e", "1.2.3", "+1", "NaN", "Infinity", "0x10", "1e+", ".5", "12a"})
    CHECK(parse_scaled(bad, 0).status == number_status::malformed);
  for (const char* wrong : {"\"12\"", "true", "null", "[1]", "{}"})
    CHECK(parse_scaled(wrong, 0).status == number_status::not_number);
  // The fast path (eight digits at a time) against the general one, on the same bytes.
  std::mt19937_64 rng(5);
  int fast = 0;
  for (int t = 0; t < 200000; ++t) {
    std::string tok(1, static_cast<char>('1' + rng() % 9));
    const std::size_t int_len = 1 + rng() % 22, frac_len = rng() % 3 == 0 ? 0 : 1 + rng() % 5;
    if (int_len == 1 && rng() % 4 == 0) tok = "0";
    for (std::size_t i = 1; i < int_len && tok != "0"; ++i) tok += static_cast<char>('0' + rng() % 10);
    if (frac_len) tok += '.';
    for (std::size_t i = 0; i < frac_len; ++i) tok += static_cast<char>('0' + rng() % 10);
    if (rng() % 50 == 0) tok[rng() % tok.size()] = static_cast<char>(":/a"[rng() % 3]);  // not a number
    const int scale = static_cast<int>(rng() % 5);
    const std::string in_buffer = tok + (rng() % 2 ? " \n" : "") + "12345678";  // digits past the token
    const std::string_view view(in_buffer.data(), in_buffer.size() - 8);
    const auto a = parse_scaled(view, scale), b = io::detail::parse_scaled_general(view, scale);
    CAPTURE(tok, scale);
    CHECK(a.status == b.status);
    if (a.status != b.status || a.status != number_status::ok) continue;
    CHECK(a.value == b.value);
    CHECK(a.exact == b.exact);
    fast += a.exact;
  }
  CHECK(fast > 50000);
}

TEST_CASE("the traceEvents scan: every SIMD path this CPU has gives the baseline path's chunks and errors") {
  // Random events whose strings hold brackets, commas, escaped quotes and runs of backslashes,
  // at every offset against the 64-byte blocks and 4 KiB batches; documents cut short (errors).
  using stats::detail::simd_path;
  std::mt19937_64 rng(17);
  const char* pieces[] = {"[", "]", "{", "}", ",", "\\\"", "\\\\", "\\\\\\\"", "x", " ", "\\n", "é"};
  auto text = [&] {
    std::string s;
    const std::size_t n = rng() % 40;
    for (std::size_t i = 0; i < n; ++i) s += pieces[rng() % (sizeof pieces / sizeof pieces[0])];
    return s;
  };
  struct outcome {
    io::detail::events_layout layout;
    std::string error;
  };
  auto scan = [](const std::string& doc, std::size_t chunk, simd_path path) {
    outcome o;
    try {
      o.layout = io::detail::events_scanner(doc.data(), doc.size(), chunk, 64, "doc", path).scan();
    } catch (const parse_error& e) {
      o.error = e.what();
    }
    return o;
  };
  int errors = 0, documents = 0;
  for (int trial = 0; trial < 60; ++trial) {
    std::string ev;
    const int n = 1 + static_cast<int>(rng() % 400);
    for (int i = 0; i < n; ++i) {
      if (i) ev += rng() % 4 == 0 ? " ,\n " : ",";
      ev += "{\"name\": \"" + text() + "\", \"ts\": " + std::to_string(rng() % 100000) + ", \"args\": {\"a\": [[" +
            std::to_string(i) + "], {\"s\": \"" + text() + "\"}]}}";
    }
    std::string doc = trial % 3 == 0 ? "[" + ev + "]" : wrap(ev, " \"x\": [\"" + text() + "\"],");
    if (trial % 5 == 4) doc.resize(rng() % doc.size());  // truncated: an error somewhere
    for (std::size_t chunk : {std::size_t{1}, std::size_t{300}, std::size_t{5000}}) {
      const auto base = scan(doc, chunk, simd_path::baseline);
      errors += !base.error.empty();
      ++documents;
      for (std::size_t p = 0; p < stats::detail::simd_path_count; ++p) {
        const auto path = static_cast<simd_path>(p);
        CAPTURE(trial, chunk, stats::detail::to_string(path));
        if (!stats::detail::simd_path_supported(path)) {
          CHECK_THROWS_AS(scan(doc, chunk, path), invalid_argument);
          continue;
        }
        const auto o = scan(doc, chunk, path);
        CHECK(o.error == base.error);
        CHECK(o.layout.found == base.layout.found);
        CHECK(o.layout.root_is_array == base.layout.root_is_array);
        CHECK(o.layout.open == base.layout.open);
        CHECK(o.layout.close == base.layout.close);
        CHECK(o.layout.count == base.layout.count);
        CHECK(o.layout.chunks == base.layout.chunks);
      }
    }
  }
  CHECK(errors > 0);
  CHECK(errors < documents);
}

#if FAILSLOW_HAS_SIMDJSON

TEST_CASE("every real trace loads, with the per-category counts of the Python reference") {
  const auto dir = failslow_test::kineto_dir_or_skip();
  std::ifstream in(std::string(FAILSLOW_TEST_REFERENCE_DIR) + "/kineto/counts.json");
  REQUIRE(in);
  const auto ref = nlohmann::json::parse(in);
  const auto files = failslow_test::kineto_files(dir);
  REQUIRE(files.size() == ref.size());
  name_table names;
  io::kineto_reader reader;
  for (const auto& f : files) {
    const std::string rel = std::filesystem::relative(f, dir).generic_string();
    INFO(rel);
    REQUIRE(ref.contains(rel));
    const auto& r = ref[rel];
    const auto t = reader.read_file(f.string(), names);
    CHECK(t.stats.accounted());
    CHECK(t.stats.events_seen == r["events_seen"].get<std::uint64_t>());
    CHECK(t.stats.stored == r["stored"].get<std::uint64_t>());
    CHECK(t.events.size() == t.stats.stored);
    CHECK(t.stats.metadata == r["metadata"].get<std::uint64_t>());
    CHECK(t.stats.flows == r["flows"].get<std::uint64_t>());
    CHECK(t.stats.instants == r["instants"].get<std::uint64_t>());
    CHECK(t.stats.other_phases == r["other_phases"].get<std::uint64_t>());
    CHECK(t.stats.unknown_category == r["unknown_category"].get<std::uint64_t>());
    CHECK(t.stats.malformed() == r["malformed"].get<std::uint64_t>());
    for (const auto& [cat, n] : r["unknown_categories"].items()) {
      const auto it = t.stats.unknown_categories.find(cat);
      REQUIRE(it != t.stats.unknown_categories.end());
      CHECK(it->second == n.get<std::uint64_t>());
    }
    CHECK(t.stated_rank() == r["rank"].get<int>());
    CHECK(t.launches.size() == r["launches"].get<std::size_t>());
    CHECK(t.collectives.size() == r["collective_args"].get<std::size_t>());
    std::uint64_t count[event_kind_count] = {}, dur[event_kind_count] = {}, start[event_kind_count] = {};
    for (const auto& e : t.events) {
      const auto k = static_cast<std::size_t>(e.kind);
      ++count[k];
      dur[k] += static_cast<std::uint64_t>(e.duration_ns());
      start[k] += static_cast<std::uint64_t>(e.start_ns);
      CHECK(e.is_well_formed());
      CHECK(e.rank == t.stated_rank());
      CHECK((e.device >= 0) == (is_device_activity(e.kind) || (e.kind == event_kind::annotation && e.device >= 0)));
    }
    for (std::size_t k = 0; k < event_kind_count; ++k) {
      const std::string kind(to_string(static_cast<event_kind>(k)));
      INFO(kind);
      CHECK(count[k] == r["kinds"][kind].get<std::uint64_t>());
      CHECK(dur[k] == mod64(r["duration_ns"][kind].get<std::string>()));
      CHECK(start[k] == mod64(r["start_ns_sum"][kind].get<std::string>()));
    }
  }
}

TEST_CASE("real traces: NCCL metadata, distributedInfo, deviceProperties, ROCm names") {
  const auto dir = failslow_test::kineto_dir_or_skip();
  name_table names;
  const auto t = io::read_kineto_file((dir / "nccl_parser_config/nccl_data.json.gz").string(), names);
  REQUIRE(t.distributed);
  CHECK(t.distributed->backend == "nccl");
  CHECK(t.distributed->world_size == 2);
  CHECK(t.distributed->nccl_version == "2.17.1");
  REQUIRE(t.distributed->pg_config.size() == 1);
  CHECK(t.distributed->pg_config[0].ranks == std::vector<std::int32_t>{0, 1});
  CHECK(t.distributed->pg_config[0].desc == "default_pg");
  CHECK(t.base_time_ns == 1711964646000000000);
  REQUIRE(!t.devices.empty());
  CHECK(t.devices[0].name == "NVIDIA A100-PG509-200");
  CHECK(t.devices[0].num_sms == 108);
  REQUIRE(!t.collectives.empty());
  const auto& c = t.collectives[0];
  CHECK(t.events[c.event].kind == event_kind::collective);
  CHECK(names.name(c.collective) == "allreduce");
  CHECK(c.group_size == 2);
  CHECK(names.name(c.pg_name) == "0");
  REQUIRE(c.ranks < t.rank_lists.size());
  CHECK(t.rank_lists[c.ranks] == std::vector<std::int32_t>{0, 1});
  CHECK(c.in_nelems > 0);
  // fractional microseconds relative to baseTimeNanoseconds: 4458676522690.655 us
  bool found = false;
  for (const auto& e : t.events)
    if (e.kind == event_kind::cpu_op && e.start_ns == 1711964646000000000 + 4458676522690655 &&
        e.duration_ns() == 156777)
      found = true;
  CHECK(found);

  const auto amd = io::read_kineto_file((dir / "amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz").string(), names);
  CHECK(amd.stated_rank() == -1);  // no distributedInfo
  bool hip = false;
  for (const auto& e : amd.events)
    if (e.kind == event_kind::runtime && names.name(e.name).substr(0, 3) == "hip") hip = true;
  CHECK(hip);
  const auto cpu =
      io::read_kineto_file((dir / "cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz").string(), names);
  CHECK(cpu.stated_rank() == 34);
  CHECK(cpu.distributed->pg_count == 10);
  CHECK(cpu.distributed->pg_config.size() == 11);  // as written by that PyTorch version
  for (const auto& e : cpu.events) CHECK(!is_device_activity(e.kind));
}

TEST_CASE("timestamps: integer, fractional and nanosecond units, baseTimeNanoseconds before or after") {
  name_table names;
  const std::string ev =
      R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1712195495519695.8, "dur": 1.28,)"
      R"( "args": {"device": 0, "stream": 7, "correlation": 5}},)"
      R"({"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 2, "ts": 1669783687464181, "dur": 45})";
  auto t = read_kineto_buffer(wrap(ev), names);
  REQUIRE(t.events.size() == 2);
  CHECK(t.events[0].start_ns == 1712195495519695800);
  CHECK(t.events[0].end_ns == 1712195495519697080);
  CHECK(t.events[0].correlation == 5);
  CHECK(t.events[0].device == 0);
  CHECK(t.events[0].stream == 7);
  CHECK(t.events[1].start_ns == 1669783687464181000);
  CHECK(t.events[1].device == -1);
  CHECK(t.events[1].stream == 2);

  io::kineto_read_options ns;
  ns.unit = io::timestamp_unit::nanoseconds;
  t = read_kineto_buffer(wrap(ev), names, ns);
  CHECK(t.events[0].start_ns == 1712195495519696);  // 1712195495519695.8 ns, half-even -> ...696
  CHECK(t.events[1].duration_ns() == 45);

  const std::string rel =
      R"({"ph": "X", "cat": "cpu_op", "name": "op", "tid": 2, "ts": 4458676522690.655, "dur": 1e0})";
  for (bool base_first : {true, false}) {
    const std::string doc = base_first
                                ? wrap(rel, R"( "baseTimeNanoseconds": 1711964646000000000,)")
                                : R"({"traceEvents": [)" + rel + R"(], "baseTimeNanoseconds": 1711964646000000000})";
    t = read_kineto_buffer(doc, names);
    REQUIRE(t.events.size() == 1);
    CHECK(t.events[0].start_ns == 1711964646000000000 + 4458676522690655);
    CHECK(t.events[0].duration_ns() == 1000);
    io::kineto_read_options no_base;
    no_base.apply_base_time = false;
    CHECK(read_kineto_buffer(doc, names, no_base).events[0].start_ns == 4458676522690655);
  }
}

TEST_CASE("kinds, NCCL names old and new, side tables, bare-array documents") {
  name_table names;
  const std::string ev =
      R"J({"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)", "pid": 0, "tid": 40, "ts": 10, "dur": 5, "args": {"grid": [8, 1, 1], "block": [544, 1, 1]}},)J"
      R"J({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "pid": 1, "tid": 41, "ts": 10, "dur": 5,)J"
      R"J( "args": {"Collective name": "allgather", "Group size": 8, "Process Group Ranks": [0, 1, 2, 3, 4, 5, 6, 7], "In msg nelems": 1024, "Out msg nelems": 8192, "dtype": "BFloat16", "Process Group Name": 3}},)J"
      R"J({"ph": "X", "cat": "kernel", "name": "void cutlass::Kernel<x>(Params)", "pid": 0, "tid": 7, "ts": 1, "dur": 2},)J"
      R"J({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)", "pid": 0, "tid": 7, "ts": 1, "dur": 2},)J"
      R"J({"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 1, "dur": 2},)J"
      R"J({"ph": "X", "cat": "cuda_runtime", "name": "hipLaunchKernel", "pid": 9, "tid": -549452224, "ts": 1, "dur": 2, "args": {"correlation": 77}},)J"
      R"({"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel", "pid": 9, "tid": 9, "ts": 1, "dur": 2},)"
      R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 9, "tid": 9, "ts": 1, "dur": 2},)"
      R"({"ph": "X", "cat": "gpu_user_annotation", "name": "## forward ##", "pid": 0, "tid": 7, "ts": 1, "dur": 2},)"
      R"({"ph": "X", "cat": "python_function", "name": "f", "pid": 9, "tid": 9, "ts": 1, "dur": 2},)"
      R"({"ph": "X", "name": "nocat", "pid": 9, "tid": 9, "ts": 1, "dur": 2},)"
      R"({"ph": "M", "name": "process_name", "pid": 9, "args": {"name": "python"}},)"
      R"({"ph": "s", "id": 1, "pid": 9, "tid": 9, "ts": 1, "cat": "ac2g", "name": "ac2g"},)"
      R"({"ph": "i", "s": "t", "name": "[memory]", "pid": 9, "tid": 9, "ts": 1},)"
      R"({"ph": "C", "name": "counter", "pid": 9, "ts": 1, "args": {"v": 1}})";
  for (const std::string& doc : {wrap(ev), "[" + ev + "]"}) {
    const auto t = read_kineto_buffer(doc, names);
    REQUIRE(t.events.size() == 10);
    CHECK(t.stats.accounted());
    CHECK(t.events[0].kind == event_kind::collective);
    CHECK(t.events[1].kind == event_kind::collective);
    CHECK(t.events[2].kind == event_kind::kernel);
    CHECK(t.events[3].kind == event_kind::memcpy);
    CHECK(t.events[4].kind == event_kind::memset);
    CHECK(t.events[5].kind == event_kind::runtime);
    CHECK(t.events[5].stream == static_cast<std::uint32_t>(-549452224));
    CHECK(t.events[5].correlation == 77);
    CHECK(t.events[6].kind == event_kind::runtime);
    CHECK(t.events[7].kind == event_kind::annotation);
    CHECK(t.events[7].device == -1);
    CHECK(t.events[8].kind == event_kind::annotation);
    CHECK(t.events[8].device == 0);
    // No "cat": the plain Chrome trace's kind by name (test_torch_plain_trace.cpp).
    CHECK(t.events[9].kind == event_kind::annotation);
    CHECK(t.stats.kind_by_name == 1);
    CHECK(t.stats.unknown_category == 1);
    CHECK(t.stats.unknown_categories.at("python_function") == 1);
    CHECK(t.stats.unknown_categories.count("") == 0);
    CHECK(t.stats.metadata == 1);
    CHECK(t.stats.flows == 1);
    CHECK(t.stats.instants == 1);
    CHECK(t.stats.other_phases == 1);
    REQUIRE(t.launches.size() == 1);
    CHECK(t.launches[0].grid == std::array<std::uint32_t, 3>{8, 1, 1});
    CHECK(t.launches[0].block[0] == 544);
    REQUIRE(t.collectives.size() == 1);
    CHECK(t.collectives[0].event == 1);
    CHECK(names.name(t.collectives[0].collective) == "allgather");
    CHECK(names.name(t.collectives[0].pg_name) == "3");
    CHECK(names.name(t.collectives[0].dtype) == "BFloat16");
    CHECK(t.collectives[0].group_size == 8);
    CHECK(t.collectives[0].out_nelems == 8192);
    CHECK(t.rank_lists.at(t.collectives[0].ranks).size() == 8);
  }
}

TEST_CASE("chunked parsing gives the same events whatever the chunk size") {
  name_table names;
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 5; ++trial) {
    std::string ev;
    const int n = 50 + trial * 37;
    for (int i = 0; i < n; ++i) {
      if (i) ev += i % 3 == 0 ? " ,\n " : ",";
      ev += R"({"ph": "X", "cat": "kernel", "name": "k\"\\)" + std::to_string(rng() % 5) +
            R"(\\", "pid": 0, "tid": 7, "ts": )" + std::to_string(1000 + i * 10) +
            R"(, "dur": 3, "args": {"x": [[1], {"y": "]}"}]}})";
    }
    const std::string doc = wrap(ev, R"( "distributedInfo": {"rank": 5, "world_size": 8},)");
    io::kineto_read_options whole;
    const auto a = read_kineto_buffer(doc, names, whole);
    for (std::size_t chunk : {std::size_t{1}, std::size_t{64}, std::size_t{1000}, std::size_t{7777}}) {
      io::kineto_read_options o;
      o.chunk_bytes = chunk;
      const auto b = read_kineto_buffer(doc, names, o);
      REQUIRE(b.events.size() == static_cast<std::size_t>(n));
      for (std::size_t i = 0; i < b.events.size(); ++i) {
        CHECK(b.events[i].start_ns == a.events[i].start_ns);
        CHECK(b.events[i].name == a.events[i].name);
        CHECK(b.events[i].rank == 5);
      }
    }
    CHECK(names.name(a.events[0].name).substr(0, 3) == "k\"\\");
  }
}

TEST_CASE("malformed events are counted by reason, or thrown in strict mode") {
  name_table names;
  struct bad_case {
    const char* event;
    std::uint64_t io::read_stats::*counter;
  };
  const bad_case cases[] = {
      {R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": "12", "dur": 3})",
       &io::read_stats::bad_type},
      {R"({"ph": "X", "cat": "kernel", "name": 5, "pid": 0, "tid": 7, "ts": 12, "dur": 3})", &io::read_stats::bad_type},
      {R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 12, "dur": null})",
       &io::read_stats::bad_type},
      {R"({"ph": "X", "cat": "kernel", "name": "k", "pid": "gpu", "tid": 7, "ts": 12, "dur": 3})",
       &io::read_stats::bad_type},
      {R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 12})", &io::read_stats::missing_field},
      {R"({"cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 12, "dur": 3})", &io::read_stats::missing_field},
      {R"({"ph": "X", "cat": "cpu_op", "name": "k", "pid": 0, "ts": 12, "dur": 3})", &io::read_stats::missing_field},
      {R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 12, "dur": -3})",
       &io::read_stats::negative_duration},
      {R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 9300000000000000000, "dur": 3})",
       &io::read_stats::out_of_range},
      {R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 9223372036854775, "dur": 1})",
       &io::read_stats::out_of_range},
      {R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": -5, "dur": 1})",
       &io::read_stats::out_of_range},
      {R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 70000, "tid": 7, "ts": 5, "dur": 1})",
       &io::read_stats::out_of_range},
      {R"(17)", &io::read_stats::bad_type},
  };
  for (const auto& c : cases) {
    INFO(c.event);
    const std::string good = R"({"ph": "X", "cat": "cpu_op", "name": "ok", "tid": 1, "ts": 1, "dur": 1})";
    const auto t = read_kineto_buffer(wrap(good + "," + c.event + "," + good), names);
    CHECK(t.events.size() == 2);
    CHECK(t.stats.*c.counter == 1);
    CHECK(t.stats.malformed() == 1);
    CHECK(t.stats.accounted());
    io::kineto_read_options strict;
    strict.strict_events = true;
    CHECK_THROWS_AS(read_kineto_buffer(wrap(good + "," + c.event), names, strict), parse_error);
  }
}

TEST_CASE("broken files give parse_error with the byte offset and what was expected") {
  name_table names;
  auto offset_of = [&](const std::string& doc) -> std::uint64_t {
    try {
      read_kineto_buffer(doc, names);
    } catch (const parse_error& e) {
      CHECK(!e.expected().empty());
      CHECK(e.where().offset <= doc.size());
      return e.where().offset;
    }
    FAIL("no parse_error for " << doc);
    return 0;
  };
  const std::string ev = R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 12, "dur": 3})";
  const std::string doc = wrap(ev + "," + ev, R"( "distributedInfo": {"rank": 1, "pg_config": [{"ranks": [0, 1]}]},)");
  // Every truncation is an error, never a crash or a silently shorter trace.
  for (std::size_t cut = 0; cut < doc.size(); ++cut) offset_of(doc.substr(0, cut));
  CHECK(offset_of(wrap(R"({"ph": "X", "ts": NaN})")) ==
        wrap("").size() - 2 + std::string(R"({"ph": "X", "ts": )").size());
  offset_of(wrap(ev + ",]"));       // trailing comma
  offset_of(wrap(ev + ",," + ev));  // empty element
  offset_of(wrap(ev) + " x");       // trailing content
  offset_of("[" + ev + "] x");
  offset_of(R"({"traceEvents": {"ph": "X"}})");  // not an array
  offset_of("42");                               // root not an object
  offset_of(R"({"distributedInfo": {"rank": "zero"}, "traceEvents": []})");
  offset_of(R"({"baseTimeNanoseconds": 1.5, "traceEvents": []})");
  offset_of(wrap(R"({"ph": "X", "ts": 1e})"));   // malformed number
  offset_of(wrap(R"({"ph": "X", "ts": tru})"));  // malformed literal
  offset_of(wrap(R"({"ph": "X", "name": "unterminated})"));
  offset_of(wrap(R"({"ph": "X", "name": "bad \q escape"})"));
  std::string deep = R"({"ph": "X", "args": )";
  for (int i = 0; i < 5000; ++i) deep += "[";
  for (int i = 0; i < 5000; ++i) deep += "]";
  deep += "}";
  offset_of(wrap(deep));
  // The offset points at the problem: a number where an object was expected in traceEvents
  // is a counted bad_type, but a bad literal in the third event is reported there.
  const std::string prefix = R"({"traceEvents": [)" + ev + "," + ev + ",";
  CHECK(offset_of(prefix + "nul]}") == prefix.size());
  // Line and column are reported too.
  try {
    read_kineto_buffer("{\n\"traceEvents\": [\n  tru\n]}", names);
    FAIL("no error");
  } catch (const parse_error& e) {
    CHECK(e.where().line == 3);
    CHECK(e.where().column == 3);
  }
  // baseTimeNanoseconds + ts past int64 nanoseconds.
  CHECK_THROWS_AS(read_kineto_buffer(wrap(ev, R"( "baseTimeNanoseconds": 9223372036854775000,)"), names), domain_error);
}

TEST_CASE("gzip files: read by magic bytes, a truncated gzip stream is an error") {
  const auto dir = failslow_test::kineto_dir_or_skip();
  const auto src = dir / "cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz";
  std::ifstream in(src, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto tmp = std::filesystem::temp_directory_path() / "failslow_test_truncated.json";
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
  }
  name_table names;
  CHECK_THROWS_AS(io::read_kineto_file(tmp.string(), names), parse_error);
  std::filesystem::remove(tmp);
  CHECK_THROWS_AS(io::read_kineto_file((dir / "no_such_file.json").string(), names), invalid_argument);
}

// ---- the interleaved read (each chunk parsed as the scan finds it) and its fast paths ----------

namespace {

std::string op_event(const std::string& name) {
  return R"({"ph": "X", "cat": "cpu_op", "name": ")" + name + R"(", "tid": 1, "ts": 1, "dur": 1})";
}

// The parse_error a read throws (its offset), or FAIL.
std::uint64_t error_offset(io::kineto_reader& reader, const std::string& doc, name_table& names,
                           std::size_t chunk_bytes = std::size_t{1} << 20) {
  io::kineto_read_options o;
  o.chunk_bytes = chunk_bytes;
  try {
    reader.read_buffer(doc, names, o);
  } catch (const parse_error& e) {
    return e.where().offset;
  }
  FAIL("no parse_error for " << doc);
  return 0;
}

}  // namespace

TEST_CASE("chunks parsed during the scan: the scan's and the top-level blocks' errors still come first") {
  io::kineto_reader reader;
  const std::string bad = R"({"ph": "X", "ts": tru})", good = op_event("fixed");
  for (std::size_t chunk : {std::size_t{1}, std::size_t{100}, std::size_t{1} << 20}) {
    CAPTURE(chunk);
    // An error in the third event: reported there; the names of the events before it reached
    // the table (as when each chunk was parsed after the scan), the later ones not.
    {
      name_table names;
      const std::string doc = wrap(op_event("a1") + "," + op_event("a2") + "," + bad + "," + op_event("a3"));
      CHECK(error_offset(reader, doc, names, chunk) == doc.find("tru"));
      CHECK(names.find("a1"));
      CHECK(names.find("a2"));
      CHECK_FALSE(names.find("a3"));
    }
    // The same document cut short: the scan's error (at the end) wins, and no name reached the
    // table, as the events are parsed only once the scan has passed.
    {
      name_table names;
      std::string doc = wrap(op_event("b1") + "," + bad + "," + op_event("b2"));
      doc.resize(doc.size() - 2);
      std::string fixed = wrap(op_event("b1") + "," + good + "," + op_event("b2"));
      fixed.resize(fixed.size() - 2);
      const auto at = error_offset(reader, doc, names, chunk);
      CHECK(at == error_offset(reader, fixed, names, chunk) + doc.size() - fixed.size());
      CHECK(at == doc.size());
      CHECK_FALSE(names.find("b1"));
    }
    // A malformed block after traceEvents: its error wins over the event's.
    {
      name_table names;
      const std::string tail = R"(, "distributedInfo": {"rank": "zero"}})";
      const std::string doc = R"({"traceEvents": [)" + op_event("c1") + "," + bad + "]" + tail;
      const std::string fixed = R"({"traceEvents": [)" + op_event("c1") + "," + good + "]" + tail;
      CHECK(error_offset(reader, doc, names, chunk) ==
            error_offset(reader, fixed, names, chunk) + bad.size() - good.size());
      CHECK_FALSE(names.find("c1"));
    }
  }
}

TEST_CASE("a second traceEvents array: its events come first, as the top-level blocks are read first") {
  const std::string doc = R"({"traceEvents": [)" + op_event("x1") + "," + op_event("x2") +
                          R"(], "other": 1, "traceEvents": [)" + op_event("y1") + "]}";
  io::kineto_reader reader;
  for (std::size_t chunk : {std::size_t{1}, std::size_t{1} << 20}) {
    name_table names;
    io::kineto_read_options o;
    o.chunk_bytes = chunk;
    const auto t = reader.read_buffer(doc, names, o);
    REQUIRE(t.events.size() == 3);
    CHECK(names.name(t.events[0].name) == "y1");
    CHECK(names.name(t.events[1].name) == "x1");
    CHECK(names.name(t.events[2].name) == "x2");
    CHECK(t.events[0].name == 0);  // interned first
    CHECK(t.stats.events_seen == 3);
  }
}

TEST_CASE("bytes that are not UTF-8 and control characters in strings are reported where they are") {
  // simdjson's stage 1 finds them without a position; the reader points at the byte, whatever
  // the chunk holding it and whatever the reader read before (its buffers are reused).
  io::kineto_reader reader;
  name_table names;
  std::string events;
  for (int i = 0; i < 30; ++i) events += (i ? "," : "") + op_event("n" + std::to_string(i));
  const std::string big = wrap(events + "," + op_event(std::string(5000, 'x')));
  for (const char* bad : {"\xff", "\xc3(", "\xed\xa0\x80", "\x01", "\x1f"}) {
    for (int where = 0; where < 3; ++where) {
      std::string doc;
      if (where == 0) {  // in an event in the middle
        doc = wrap(events);
        doc.insert(doc.find("n17") + 2, bad);
      } else if (where == 1) {  // in the top-level blocks, after traceEvents
        doc = wrap(events);
        doc.insert(doc.size() - 1, std::string(R"(, "traceName": "a)") + bad + "\"");
      } else {  // a bare array, in the last event
        doc = "[" + events + "]";
        doc.insert(doc.find("n29") + 2, bad);
      }
      const auto expected = doc.find(bad);
      for (std::size_t chunk : {std::size_t{1}, std::size_t{64}, std::size_t{300}, std::size_t{1} << 20}) {
        CAPTURE(where, chunk, static_cast<int>(static_cast<unsigned char>(bad[0])));
        reader.read_buffer(big, names);  // a larger buffer first
        CHECK(error_offset(reader, doc, names, chunk) == expected);
        name_table fresh;
        io::kineto_reader new_reader;
        CHECK(error_offset(new_reader, doc, fresh, chunk) == expected);
      }
    }
  }
}

TEST_CASE("keys are read as written: white space around the colon, escapes, empty keys") {
  name_table names;
  const std::string ev =
      "{\"ph\" : \"X\", \"cat\"\n :\t \"kernel\", \"na\\\"me\": 5, \"\": [1], \"name\":\"k\", "
      "\"pid\" :0, \"tid\"\r\n:\r\n7, \"ts\": 12, \"dur\": 3, \"args\": {\"device\" : 1, "
      "\"str\\\"eam\": 9, \"stream\" : 4, \"\": {}}}";
  const auto t = read_kineto_buffer(wrap(ev), names);
  REQUIRE(t.events.size() == 1);
  CHECK(names.name(t.events[0].name) == "k");
  CHECK(t.events[0].device == 1);
  CHECK(t.events[0].stream == 4);
  CHECK(t.events[0].start_ns == 12000);
}

TEST_CASE("the launch and NCCL fields of one event do not carry over to the next") {
  name_table names;
  const std::string head = R"({"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce", "pid": 0, "tid": 7, )";
  const std::string full = head + R"("ts": 1, "dur": 1, "args": {"grid": [1, 2, 3], "block": [4, 5, 6], )"
                                  R"("Collective name": "allreduce", "In msg nelems": 5, "dtype": "Float"}})";
  const std::string grid_only = head + R"("ts": 2, "dur": 1, "args": {"grid": [1, 2, 3], "dtype": "Half"}})";
  const std::string none = head + R"("ts": 3, "dur": 1})";
  const auto t = read_kineto_buffer(wrap(full + "," + grid_only + "," + none + "," + full), names);
  REQUIRE(t.events.size() == 4);
  CHECK(t.launches.size() == 2);  // the events with grid and block
  CHECK(t.stats.bad_args == 1);   // grid without block
  REQUIRE(t.collectives.size() == 3);
  CHECK(t.collectives[0].collective != io::collective_args::no_name);
  CHECK(t.collectives[1].collective == io::collective_args::no_name);  // only dtype
  CHECK(t.collectives[1].in_nelems == -1);
  CHECK(names.name(t.collectives[1].dtype) == "Half");
  CHECK(t.collectives[2].event == 3);
}

TEST_CASE("number tokens validated without conversion: the grammar of parse_scaled") {
  std::mt19937_64 rng(23);
  const char alphabet[] = "0123456789-+.eE \n";
  int valid = 0;
  for (int i = 0; i < 200000; ++i) {
    std::string tok(1, "-0123456789"[rng() % 11]);
    const std::size_t n = rng() % 12;
    for (std::size_t k = 0; k < n; ++k) tok += alphabet[rng() % (sizeof alphabet - 1)];
    const bool ok = io::detail::is_json_number(tok);
    valid += ok;
    INFO(tok);
    CHECK(ok == (io::detail::parse_scaled(tok, 0).status != io::detail::number_status::malformed));
  }
  CHECK(valid > 1000);
  CHECK(io::detail::is_json_number("12345678901234567890123 "));  // out of range, but a number
  CHECK_FALSE(io::detail::is_json_number("-"));
  CHECK_FALSE(io::detail::is_json_number("01"));
}

TEST_CASE("the per-read name cache: every name found again, none confused") {
  io::detail::name_id_cache cache;
  std::vector<std::string> keys;
  for (int i = 0; i < 20000; ++i) {
    // Same length, same first and last 16 bytes: only the middle differs.
    std::string s = "void at::native::kernel<" + std::to_string(100000 + i) + ">(float const*, float*) [clone]";
    keys.push_back(std::move(s));
  }
  for (int i = 1; i < 300; ++i) keys.push_back(std::string(static_cast<std::size_t>(i), 'a'));
  keys.push_back("");
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const auto h = io::detail::name_id_cache::hash_of(keys[i]);
    CHECK(cache.find(keys[i], h) == nullptr);
    cache.insert(keys[i], h, static_cast<name_id>(i));
  }
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const name_id* id = cache.find(keys[i], io::detail::name_id_cache::hash_of(keys[i]));
    REQUIRE(id != nullptr);
    CHECK(*id == i);
  }
  CHECK(cache.find("absent", io::detail::name_id_cache::hash_of("absent")) == nullptr);
}

#else

TEST_CASE("without simdjson the reader says it is unavailable") {
  name_table names;
  CHECK_FALSE(io::kineto_reader_available);
  CHECK_THROWS_AS(io::read_kineto_buffer("{}", names), unavailable_error);
}

#endif
