#include <zlib.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <failslow/trace/clock_align.hpp>
#include <failslow/trace/idle.hpp>
#include <failslow/trace/load_trace_set.hpp>
#include <failslow/trace/steps.hpp>
#include <random>
#include <string>
#include <vector>

#include "support/kineto_data.hpp"
#include "support/synthetic_trace.hpp"

using namespace failslow;
using failslow_test::synthetic_event;

TEST_CASE("kernel tables: CSV with quoting, TSV, one trace per rank, strict errors") {
  name_table names;
  const std::string csv =
      "# exported by an in-house profiler\n"
      "rank,step,name,start_ns,duration_ns,stream,kind\n"
      "1,100,\"void gemm<float, 128>(float*)\",1000,2500,7,\n"
      "0,100,ncclDevKernel_AllReduce_Sum_bf16_RING_LL,4000,1000,9,\n"
      "0,101,\"say \"\"hi\"\"\",5000,10,0,annotation\r\n"
      "\n"
      "1,,Memcpy HtoD,6000,5,7,\n";
  const auto t = io::read_kernel_table(csv, names);
  REQUIRE(t.size() == 2);
  CHECK(t[0].stated_rank() == 0);
  REQUIRE(t[0].events.size() == 2);
  CHECK(t[0].events[0].kind == event_kind::collective);
  CHECK(t[0].events[1].kind == event_kind::annotation);
  CHECK(names.name(t[0].events[1].name) == "say \"hi\"");
  CHECK(t[0].events[1].device == -1);
  CHECK(t[0].event_steps == std::vector<std::int64_t>{100, 101});
  REQUIRE(t[1].events.size() == 2);
  CHECK(names.name(t[1].events[0].name) == "void gemm<float, 128>(float*)");
  CHECK(t[1].events[0].end_ns == 3500);
  CHECK(t[1].events[0].stream == 7);
  CHECK(t[1].events[0].device == 0);
  CHECK(t[1].events[1].kind == event_kind::memcpy);
  CHECK(t[1].event_steps[1] == -1);

  const std::string tsv = "start_ns\tduration_ns\tname\trank\tstep\n10\t5\ta, b\t3\t1\n";
  const auto u = io::read_kernel_table(tsv, names);
  REQUIRE(u.size() == 1);
  CHECK(names.name(u[0].events[0].name) == "a, b");

  auto err = [&](const std::string& text) {
    try {
      io::read_kernel_table(text, names);
    } catch (const parse_error& e) {
      return e.where();
    }
    FAIL("no parse_error for " << text);
    return source_location{};
  };
  const std::string h = "rank,step,name,start_ns,duration_ns\n";
  CHECK(err("rank,step,name,start_ns\n0,1,a,1\n").line == 1);  // no duration_ns column
  CHECK(err(h + "0,1,a,1\n").line == 2);                       // too few fields
  auto w = err(h + "0,1,a,1,-5\n");                            // negative duration
  CHECK(w.line == 2);
  CHECK(w.column == 9);
  CHECK(err(h + "0,1,a,x1,5\n").column == 7);                                            // not an integer
  CHECK(err(h + "0,1,a,1.5,5\n").line == 2);                                             // not an integer
  CHECK(err(h + "0,1,a,9223372036854775807,5\n").line == 2);                             // end overflows
  CHECK(err(h + "0,1,\"a,1,5\n").line == 2);                                             // unterminated quote
  CHECK(err("rank,step,name,start_ns,duration_ns,kind\n0,1,a,1,5,gpu\n").column == 11);  // unknown kind
}

namespace {

// One rank's synthetic training: steps of `step_ns` with launches; kernels run `lag_ns`
// after their launch (so the GPU runs behind the CPU, into the next step).
std::vector<synthetic_event> training(int steps, std::int64_t step_ns, std::int64_t lag_ns, int launches_per_step) {
  std::vector<synthetic_event> ev;
  std::int64_t corr = 1;
  for (int s = 0; s < steps; ++s) {
    const std::int64_t t0 = 1000000 + s * step_ns;
    ev.push_back({"user_annotation", "ProfilerStep#" + std::to_string(10 + s), t0, step_ns - 1000, 1, 1, -1, ""});
    for (int k = 0; k < launches_per_step; ++k) {
      const std::int64_t lt = t0 + 100 + k * (step_ns - 2000) / launches_per_step;
      ev.push_back({"cuda_runtime", "cudaLaunchKernel", lt, 50, 1, 1, corr, ""});
      ev.push_back({"kernel", "gemm", lt + lag_ns, 300, 0, 7, corr, ""});
      ++corr;
    }
  }
  ev.push_back({"kernel", "orphan", 100, 10, 0, 7, 999999, ""});  // launched before profiling
  return ev;
}

}  // namespace

TEST_CASE("steps on the GPU follow correlation ids, even when the GPU runs a step behind") {
  name_table names;
  for (std::int64_t lag : {std::int64_t{0}, std::int64_t{40000}, std::int64_t{150000}}) {
    INFO("lag " << lag);
    const auto json = failslow_test::kineto_json(0, 1, training(4, 100000, lag, 5));
    const auto t = io::read_kineto_buffer(json, names);
    const auto m = trace::map_steps(t, names);
    REQUIRE(m.steps.size() == 4);
    CHECK(m.unattributed == 1);
    CHECK(m.launches_outside_steps == 0);
    for (std::size_t s = 0; s < 4; ++s) {
      CHECK(m.steps[s].number == static_cast<std::int64_t>(10 + s));
      CHECK(m.steps[s].device_events == 5);
      CHECK(m.steps[s].launches == 5);
      CHECK(m.steps[s].gpu_start_ns == m.steps[s].cpu_start_ns + 100 + lag);
      CHECK(m.steps[s].gpu_busy_ns == 5 * 300);
    }
    // A kernel is in the step of its launch, not of the CPU step running when it starts.
    for (std::size_t i = 0; i < t.events.size(); ++i)
      if (t.events[i].kind == event_kind::kernel && t.events[i].correlation != 999999)
        CHECK(m.step_of_event[i] == static_cast<std::int32_t>((t.events[i].correlation - 1) / 5));
  }
  CHECK(trace::profiler_step_number("ProfilerStep#551") == 551);
  CHECK_FALSE(trace::profiler_step_number("ProfilerStep#").has_value());
  CHECK_FALSE(trace::profiler_step_number("ProfilerStep#5a").has_value());
  CHECK_FALSE(trace::profiler_step_number("Optimizer.step").has_value());
}

TEST_CASE("a trace profiled without prof.step() is cut into iterations at its optimizer steps") {
  // The same training, its ProfilerStep#N annotations replaced by what PyTorch's optimizers
  // annotate themselves: "Optimizer.step#<class>.step" near the end of each iteration (then
  // zero_grad), and a second optimizer stepped every other iteration (a GAN's discriminator).
  for (std::int64_t lag : {std::int64_t{0}, std::int64_t{150000}}) {
    INFO("lag " << lag);
    name_table names;
    auto ev = training(5, 100000, lag, 4);
    std::int64_t t_first = -1;
    for (auto& e : ev)
      if (e.name.rfind("ProfilerStep#", 0) == 0) {
        if (t_first < 0) t_first = e.ts_ns;
        e.name = "forward";  // a user scope, no step
      }
    for (int s = 0; s < 5; ++s) {
      const std::int64_t end = 1000000 + s * 100000 + 97000;
      ev.push_back({"user_annotation", "Optimizer.step#AdamW.step", end - 3000, 3000, 1, 1, -1, ""});
      ev.push_back({"user_annotation", "Optimizer.zero_grad#AdamW.zero_grad", end + 100, 500, 1, 1, -1, ""});
      if (s % 2 == 1) ev.push_back({"user_annotation", "Optimizer.step#SGD.step", end - 6000, 2000, 1, 1, -1, ""});
    }
    // Host work after the last optimizer step: outside every step.
    ev.push_back({"cuda_runtime", "cudaLaunchKernel", 1000000 + 4 * 100000 + 98000, 50, 1, 1, 777777, ""});
    const auto t = io::read_kineto_buffer(failslow_test::kineto_json(0, 1, ev), names);
    const auto m = trace::map_steps(t, names);
    CHECK(m.inferred_from == "Optimizer.step#AdamW.step");
    REQUIRE(m.steps.size() == 5);
    CHECK(m.steps[0].cpu_start_ns == t_first);
    for (std::size_t s = 0; s < 5; ++s) {
      CHECK(m.steps[s].number == static_cast<std::int64_t>(s));
      CHECK(m.steps[s].cpu_end_ns == 1000000 + static_cast<std::int64_t>(s) * 100000 + 97000);
      if (s > 0) CHECK(m.steps[s].cpu_start_ns == m.steps[s - 1].cpu_end_ns);
      CHECK(m.steps[s].launches == 4);
      CHECK(m.steps[s].device_events == 4);
    }
    CHECK(m.launches_outside_steps == 1);
    CHECK(m.overlapping_steps == 0);
  }
  CHECK(trace::is_optimizer_step("Optimizer.step#SGD.step"));
  CHECK(trace::is_optimizer_step("Optimizer.step#FusedAdam.step"));
  CHECK_FALSE(trace::is_optimizer_step("Optimizer.zero_grad#SGD.zero_grad"));
  CHECK_FALSE(trace::is_optimizer_step("Optimizer.step#.step"));
  CHECK_FALSE(trace::is_optimizer_step("Optimizer.step#SGD"));
  // ProfilerStep#N wins where both exist; nothing is inferred from a trace with neither.
  name_table names;
  auto with_both = training(3, 100000, 0, 2);
  with_both.push_back({"user_annotation", "Optimizer.step#SGD.step", 1090000, 1000, 1, 1, -1, ""});
  const auto a = trace::map_steps(io::read_kineto_buffer(failslow_test::kineto_json(0, 1, with_both), names), names);
  CHECK(a.steps.size() == 3);
  CHECK(a.inferred_from.empty());
  std::vector<synthetic_event> neither = {{"cuda_runtime", "cudaLaunchKernel", 100, 50, 1, 1, 1, ""},
                                          {"kernel", "gemm", 200, 300, 0, 7, 1, ""}};
  const auto b = trace::map_steps(io::read_kineto_buffer(failslow_test::kineto_json(0, 1, neither), names), names);
  CHECK(b.steps.empty());
  CHECK(b.inferred_from.empty());
}

TEST_CASE("steps grouped n at a time: one window of n steps for the compressor") {
  name_table names;
  const auto t = io::read_kineto_buffer(failslow_test::kineto_json(0, 1, training(5, 100000, 40000, 3)), names);
  const auto m = trace::map_steps(t, names);
  REQUIRE(m.steps.size() == 5);
  CHECK_THROWS_AS(trace::group_steps(m, 0), invalid_argument);
  CHECK(trace::group_steps(m, 1).step_of_event == m.step_of_event);
  for (std::size_t n : {std::size_t{2}, std::size_t{3}, std::size_t{5}, std::size_t{9}}) {
    INFO("n " << n);
    const auto g = trace::group_steps(m, n);
    REQUIRE(g.steps.size() == (5 + n - 1) / n);
    std::uint64_t launches = 0, events = 0;
    for (std::size_t k = 0; k < g.steps.size(); ++k) {
      const std::size_t first = k * n, last = std::min<std::size_t>(5, first + n) - 1;
      CHECK(g.steps[k].number == m.steps[first].number);
      CHECK(g.steps[k].cpu_start_ns == m.steps[first].cpu_start_ns);
      CHECK(g.steps[k].cpu_end_ns == m.steps[last].cpu_end_ns);
      CHECK(g.steps[k].gpu_start_ns == m.steps[first].gpu_start_ns);
      CHECK(g.steps[k].gpu_end_ns == m.steps[last].gpu_end_ns);
      CHECK(g.steps[k].launches == 3 * (last - first + 1));
      CHECK(g.steps[k].gpu_busy_ns == static_cast<std::int64_t>(3 * 300 * (last - first + 1)));
      launches += g.steps[k].launches;
      events += g.steps[k].device_events;
    }
    CHECK(launches == 15);
    CHECK(events == 15);
    for (std::size_t i = 0; i < m.step_of_event.size(); ++i)
      CHECK(
          g.step_of_event[i] ==
          (m.step_of_event[i] < 0 ? -1 : static_cast<std::int32_t>(m.step_of_event[i] / static_cast<std::int32_t>(n))));
    CHECK(g.unattributed == m.unattributed);
  }
}

TEST_CASE("sparse correlation ids give the same steps and idle breakdown as dense ones") {
  name_table names;
  auto dense = training(4, 100000, 40000, 5);
  auto sparse = dense;
  for (auto& e : sparse)
    if (e.correlation != 999999) e.correlation *= 1000003;  // past the flat table's bound: hashed
  const auto a = io::read_kineto_buffer(failslow_test::kineto_json(0, 1, dense), names);
  const auto b = io::read_kineto_buffer(failslow_test::kineto_json(0, 1, sparse), names);
  const auto ma = trace::map_steps(a, names), mb = trace::map_steps(b, names);
  CHECK(ma.step_of_event == mb.step_of_event);
  CHECK(mb.unattributed == 1);
  REQUIRE(ma.steps.size() == mb.steps.size());
  for (std::size_t s = 0; s < ma.steps.size(); ++s) {
    CHECK(ma.steps[s].launches == mb.steps[s].launches);
    CHECK(ma.steps[s].gpu_busy_ns == mb.steps[s].gpu_busy_ns);
  }
  const auto ia = trace::analyze_idle(a), ib = trace::analyze_idle(b);
  CHECK(ia.host_wait_ns == ib.host_wait_ns);
  CHECK(ia.kernel_wait_ns == ib.kernel_wait_ns);
  CHECK(ia.other_ns == ib.other_ns);
  CHECK(ia.unknown_launch == ib.unknown_launch);
  CHECK(ia.launch_delays == ib.launch_delays);
  CHECK(ia.launch_delays.size() == 20);
}

TEST_CASE("steps from a kernel table's step column") {
  name_table names;
  const auto t = io::read_kernel_table(
      "rank,step,name,start_ns,duration_ns,kind\n0,5,k,100,10,\n0,5,k,200,10,\n0,6,k,300,10,\n0,6,op,290,30,cpu_op\n0,,"
      "k,1,1,\n",
      names);
  const auto m = trace::map_steps(t.at(0), names);
  REQUIRE(m.steps.size() == 2);
  CHECK(m.steps[0].number == 5);
  CHECK(m.steps[0].gpu_start_ns == 100);
  CHECK(m.steps[0].gpu_end_ns == 210);
  CHECK(m.steps[0].cpu_start_ns == 100);  // no host events: the GPU span
  CHECK(m.steps[1].cpu_start_ns == 290);
  CHECK(m.steps[1].cpu_end_ns == 320);
  CHECK(m.unattributed == 1);
}

TEST_CASE("gzipped kernel tables: .csv.gz and .tsv.gz read directly and found in folders") {
  const auto dir = failslow_test::temp_dir("table_gz");
  const auto write_gz = [](const std::filesystem::path& p, const std::string& text) {
    gzFile f = gzopen(p.string().c_str(), "wb");
    REQUIRE(f != nullptr);
    REQUIRE(gzwrite(f, text.data(), static_cast<unsigned>(text.size())) == static_cast<int>(text.size()));
    REQUIRE(gzclose(f) == Z_OK);
  };
  write_gz(dir / "a.csv.gz", "rank,step,name,start_ns,duration_ns\n2,1,\"k, quoted\",10,5\n3,1,k,20,7\n");
  write_gz(dir / "b.tsv.gz", "rank\tstep\tname\tstart_ns\tduration_ns\n4\t1\tk\t30\t9\n");
  name_table names;
  const auto csv = io::read_kernel_table_file((dir / "a.csv.gz").string(), names);
  REQUIRE(csv.size() == 2);
  CHECK(names.name(csv[0].events.at(0).name) == "k, quoted");
  CHECK(csv[1].events.at(0).duration_ns() == 7);
  const auto tsv = io::read_kernel_table_file((dir / "b.tsv.gz").string(), names);
  REQUIRE(tsv.size() == 1);
  CHECK(tsv[0].events.at(0).duration_ns() == 9);
  const auto set = trace::load_trace_set({dir.string()});
  REQUIRE(set.traces.size() == 3);
  CHECK(set.find(4) != nullptr);
  std::filesystem::remove_all(dir);
}

TEST_CASE("trace sets: parallel loading, ranks stated, mapped, assumed, duplicate and missing") {
  const auto dir = failslow_test::temp_dir("trace_set");
  const int world = 6;
  for (int r : {0, 1, 3, 3}) {
    const auto name = "rank" + std::to_string(r) + (r == 3 && std::filesystem::exists(dir / "rank3.json") ? "b" : "");
    failslow_test::write_file(dir / (name + ".json"), failslow_test::kineto_json(r, world, training(2, 100000, 0, 2)));
  }
  failslow_test::write_file(dir / "unranked_a.json", failslow_test::kineto_json(-1, 0, training(1, 100000, 0, 1)));
  failslow_test::write_file(dir / "unranked_b.json", failslow_test::kineto_json(-1, 0, training(1, 100000, 0, 1)));
  failslow_test::write_file(dir / "table.csv", "rank,step,name,start_ns,duration_ns\n7,1,k,1,2\n8,1,k,1,2\n");
  // Not a trace: a JSON object without traceEvents next to the traces is skipped and listed.
  failslow_test::write_file(dir / "truth.json", "{\"schema\": \"failslow.truth/1\", \"faults\": []}");
  for (unsigned threads : {1u, 2u, 5u}) {
    trace::trace_set_options o;
    o.threads = threads;
    o.assume_missing_ranks = true;
    o.rank_of[(dir / "unranked_b.json").string()] = 9;
    const auto set = trace::load_trace_set({dir.string()}, o);
    REQUIRE(set.traces.size() == 8);
    std::vector<std::int32_t> ranks;
    for (const auto& t : set.traces) ranks.push_back(t.rank);
    CHECK(ranks == std::vector<std::int32_t>{0, 1, 2, 3, 3, 7, 8, 9});
    CHECK(set.find(2)->source == trace::rank_source::assumed);
    CHECK(set.find(9)->source == trace::rank_source::mapping);
    CHECK(set.find(7)->source == trace::rank_source::table);
    CHECK(set.find(0)->source == trace::rank_source::stated);
    CHECK(set.world_size == 10);
    CHECK(set.duplicate_ranks == std::vector<std::int32_t>{3});
    CHECK(set.missing_ranks == std::vector<std::int32_t>{4, 5, 6});
    CHECK(set.skipped_files == std::vector<std::string>{(dir / "truth.json").string()});
    for (const auto& t : set.traces)
      for (const auto& e : t.data.events) CHECK(e.rank == t.rank);
    // One name table: the same name has the same id in every trace.
    CHECK(set.traces[0].data.events[1].name == set.traces[1].data.events[1].name);
  }
  CHECK_THROWS_AS(trace::load_trace_set({(dir / "absent.json").string()}), invalid_argument);
  {  // named explicitly, it is read: an empty trace, flagged
    const auto named = trace::load_trace_set({(dir / "truth.json").string()});
    REQUIRE(named.traces.size() == 1);
    CHECK_FALSE(named.traces[0].data.has_trace_events);
    CHECK(named.traces[0].data.events.empty());
    CHECK(named.skipped_files.empty());
  }
  {  // shards: each file read by exactly one of n loaders, with its index in the expansion
    const auto files = trace::expand_trace_paths({dir.string()});
    for (std::size_t n : {1u, 2u, 3u, 11u}) {
      std::vector<int> times_read(files.size(), 0);
      std::size_t traces = 0, skipped = 0;
      for (std::size_t k = 0; k < n; ++k) {
        trace::trace_set_options o;
        o.shard_index = k;
        o.shard_count = n;
        const auto share = trace::load_trace_set({dir.string()}, o);
        traces += share.traces.size();
        skipped += share.skipped_files.size();
        for (const auto& t : share.traces) {
          REQUIRE(t.file_index < files.size());
          CHECK(t.file_index % n == k);
          CHECK(files[t.file_index] == t.data.source);
          if (t.source != trace::rank_source::table) ++times_read[t.file_index];
        }
      }
      CHECK(traces == 8);  // the table holds two ranks
      CHECK(skipped == 1);
      for (std::size_t i = 0; i < files.size(); ++i)
        if (files[i].find("table") == std::string::npos && files[i].find("truth") == std::string::npos)
          CHECK(times_read[i] == 1);
    }
    trace::trace_set_options bad;
    bad.shard_index = 2;
    bad.shard_count = 2;
    CHECK_THROWS_AS(trace::load_trace_set({dir.string()}, bad), invalid_argument);
  }
  trace::trace_set_options one, every_core;  // threads = 0: every core, the same set
  every_core.threads = 0;
  const auto by_one = trace::load_trace_set({dir.string()}, one);
  const auto by_all = trace::load_trace_set({dir.string()}, every_core);
  REQUIRE(by_all.traces.size() == by_one.traces.size());
  for (std::size_t i = 0; i < by_one.traces.size(); ++i) {
    CHECK(by_all.traces[i].rank == by_one.traces[i].rank);
    CHECK(by_all.traces[i].data.events.size() == by_one.traces[i].data.events.size());
  }
  failslow_test::write_file(dir / "broken.json", "{\"traceEvents\": [");
  CHECK_THROWS_AS(trace::load_trace_set({dir.string()}), parse_error);
  std::filesystem::remove_all(dir);
}

TEST_CASE("the real traces load as a set") {
  const auto dir = failslow_test::kineto_dir_or_skip();
  trace::trace_set_options o;
  o.threads = 2;
  const auto set = trace::load_trace_set({(dir / "trace_filter_2_of_128").string()}, o);
  REQUIRE(set.traces.size() == 2);
  CHECK(set.world_size == 128);
  CHECK(set.missing_ranks.size() == 126);
  const auto m = trace::map_steps(set.traces[0].data, set.names);
  REQUIRE(m.steps.size() == 2);
  CHECK(m.steps[0].number == 551);
  CHECK(m.steps[0].device_events > 0);
  const auto a = trace::estimate_clock_offsets(set);
  CHECK(a.instances == 10);  // ncclKernel_SendRecv on both ranks
  CHECK(a.traces[0].reference);
  CHECK(a.traces[1].aligned);
}

TEST_CASE("clock skew is recovered from collectives that end together") {
  for (unsigned seed = 1; seed <= 6; ++seed) {
    std::mt19937_64 rng(seed);
    const int n_ranks = 2 + static_cast<int>(seed * 3 % 11);
    const int n_coll = 15 + static_cast<int>(seed * 37 % 120);
    const double skew_scale = std::pow(10.0, 3 + seed % 4);  // 1 us .. 1 ms
    std::uniform_real_distribution<double> skew(-skew_scale, skew_scale);
    std::uniform_int_distribution<std::int64_t> noise(0, 2000), arrival(1000, 400000);
    std::vector<std::int64_t> offset(static_cast<std::size_t>(n_ranks));
    for (auto& o : offset) o = static_cast<std::int64_t>(skew(rng));
    const auto dir = failslow_test::temp_dir("clock_" + std::to_string(seed));
    std::vector<std::vector<synthetic_event>> per_rank(static_cast<std::size_t>(n_ranks));
    std::int64_t T = 50000000;
    for (int k = 0; k < n_coll; ++k) {
      T += 2000000 + static_cast<std::int64_t>(rng() % 1000000);
      for (int r = 0; r < n_ranks; ++r) {
        const std::int64_t end = T + offset[static_cast<std::size_t>(r)] + noise(rng);
        const std::int64_t dur = arrival(rng);  // ranks arrive at different times, leave together
        per_rank[static_cast<std::size_t>(r)].push_back(
            {"kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", end - dur, dur, 0, 9, -1, "0"});
        // A second process group of the even ranks.
        if (r % 2 == 0 && k % 3 == 0)
          per_rank[static_cast<std::size_t>(r)].push_back(
              {"kernel", "ncclDevKernel_AllGather_RING_LL", end + 10000 - dur / 2, dur / 2, 0, 10, -1, "even"});
      }
    }
    // A group whose counts differ between ranks is skipped, not paired wrongly.
    per_rank[0].push_back({"kernel", "ncclDevKernel_SendRecv", 1000, 10, 0, 11, -1, "p2p"});
    per_rank[1].push_back({"kernel", "ncclDevKernel_SendRecv", 1000, 10, 0, 11, -1, "p2p"});
    per_rank[1].push_back({"kernel", "ncclDevKernel_SendRecv", 5000, 10, 0, 11, -1, "p2p"});
    std::vector<std::string> paths;
    for (int r = 0; r < n_ranks; ++r) {
      const auto p = dir / ("r" + std::to_string(r) + ".json");
      failslow_test::write_file(p, failslow_test::kineto_json(r, n_ranks, per_rank[static_cast<std::size_t>(r)]));
      paths.push_back(p.string());
    }
    trace::trace_set_options o;
    o.threads = 1 + seed % 3;
    auto set = trace::load_trace_set(paths, o);
    const auto a = trace::estimate_clock_offsets(set);
    INFO("seed " << seed << " ranks " << n_ranks << " collectives " << n_coll << " skew " << skew_scale);
    CHECK(a.keys_skipped == 1);
    CHECK(a.keys_used == (n_ranks >= 3 ? 2u : 1u) + (n_ranks == 2 ? 0u : 0u));
    for (int r = 0; r < n_ranks; ++r) {
      const auto& c = a.traces[static_cast<std::size_t>(r)];
      CHECK(c.aligned);
      CHECK(c.reference == (r == 0));
      const std::int64_t truth = offset[static_cast<std::size_t>(r)] - offset[0];
      CHECK(std::abs(c.offset_ns - truth) <= 2000);  // within the noise scale
      CHECK(c.spread_ns <= 2000);
    }
    // Applying the offsets makes the collectives end together (up to the noise).
    trace::apply_clock_offsets(set, a);
    const auto again = trace::estimate_clock_offsets(set);
    for (const auto& c : again.traces) CHECK(std::abs(c.offset_ns) <= 2);
    std::filesystem::remove_all(dir);
  }
}
