// PyTorch's plain Chrome trace (torch.profiler without Kineto: a bare array, no "cat", no
// distributedInfo): kinds by name, ranks from file names, and the host-side step breakdown --
// on hand-built traces with hand-computed values and on the committed real job
// (tests/data/torch_gloo, against the numbers its generator computed with Python's json module).
#include <catch2/catch.hpp>
#include <failslow/trace/load_trace_set.hpp>
#include <failslow/trace/step_breakdown.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/synthetic_trace.hpp"

using namespace failslow;

namespace {

const std::filesystem::path torch_gloo_dir =
    std::filesystem::path(FAILSLOW_TEST_REFERENCE_DIR) / ".." / "data" / "torch_gloo";

// One plain event as torch 1.13 writes it (microseconds, pid "CPU functions").
std::string plain_ev(const std::string& name, long ts, long dur, int tid = 1) {
  return "{\"name\": \"" + name + "\", \"ph\": \"X\", \"ts\": " + std::to_string(ts) +
         ", \"dur\": " + std::to_string(dur) + ", \"tid\": " + std::to_string(tid) +
         ", \"pid\": \"CPU functions\", \"args\": {}}";
}

// Two steps of a CPU job, values in the test below computed by hand:
//   step 0 [0, 100): forward [0, 40) with aten::linear [5, 30) > aten::addmm [10, 25);
//     grad_sync [50, 90) with c10d::allreduce_ [50, 55) > aten::empty [51, 52), gloo:all_reduce
//     [52, 80) on thread 2, aten::div_ [85, 88); optimizer [90, 99) with aten::add_ [91, 95)
//   step 1 [100, 150): forward [100, 120) with aten::mm [101, 111)
std::vector<std::string> plain_job_events() {
  return {plain_ev("ProfilerStep#0", 0, 100), plain_ev("forward", 0, 40),
          plain_ev("aten::linear", 5, 25),    plain_ev("aten::addmm", 10, 15),
          plain_ev("grad_sync", 50, 40),      plain_ev("c10d::allreduce_", 50, 5),
          plain_ev("aten::empty", 51, 1),     plain_ev("gloo:all_reduce", 52, 28, 2),
          plain_ev("aten::div_", 85, 3),      plain_ev("optimizer", 90, 9),
          plain_ev("aten::add_", 91, 4),      plain_ev("ProfilerStep#1", 100, 50),
          plain_ev("forward", 100, 20),       plain_ev("aten::mm", 101, 10)};
}

std::string as_array(const std::vector<std::string>& events) {
  std::string s = "[";
  for (std::size_t i = 0; i < events.size(); ++i) s += (i ? ", " : "") + events[i];
  return s + "]";
}

double plain_phase(const trace::step_breakdown& b, const std::string& name, std::size_t step) {
  for (std::size_t p = 0; p < b.phase_names.size(); ++p)
    if (b.phase_names[p] == name) return b.phase_compute[p][step];
  FAIL("no phase " << name);
  return -1;
}

void check_plain_job_breakdown(const io::trace_data& t, const name_table& names) {
  const auto steps = trace::map_steps(t, names);
  REQUIRE(steps.steps.size() == 2);
  const auto b = trace::breakdown_steps(t, steps, names);
  REQUIRE(b.from_host);
  REQUIRE(b.steps.size() == 2);
  const auto& s0 = b.steps[0];
  CHECK(s0.has_work);
  CHECK_FALSE(s0.has_gpu_work);
  CHECK(s0.period_ns == 100000);
  CHECK(s0.communication_ns == 30000);  // [50, 80): c10d::allreduce_ and gloo:all_reduce once
  CHECK(s0.compute_ns == 32000);        // [5, 30) + [85, 88) + [91, 95); aten::empty is inside a collective
  CHECK(s0.memory_ns == 0);
  CHECK(s0.busy_ns == 62000);
  CHECK(s0.idle_ns == 38000);
  CHECK(plain_phase(b, "forward", 0) == 25000);
  CHECK(plain_phase(b, "grad_sync", 0) == 3000);
  CHECK(plain_phase(b, "optimizer", 0) == 4000);
  const auto& s1 = b.steps[1];
  CHECK(s1.period_ns == 50000);  // end(1) - end(0)
  CHECK(s1.compute_ns == 10000);
  CHECK(s1.communication_ns == 0);
  CHECK(s1.idle_ns == 40000);
  CHECK(plain_phase(b, "forward", 1) == 10000);
  CHECK(plain_phase(b, "grad_sync", 1) == 0);
  // forward (35 us) first: phases by total time
  CHECK(b.phase_names.front() == "forward");
}

}  // namespace

TEST_CASE("plain Chrome trace: kinds by name, everything used or counted", "[trace][torch]") {
  name_table names;
  auto events = plain_job_events();
  events.push_back(plain_ev("AddmmBackward0", 3, 1));
  events.push_back(plain_ev("MseLossBackward", 3, 1));
  events.push_back(plain_ev("record_param_comms", 3, 1));
  events.push_back(plain_ev("Optimizer.step#SGD.step", 3, 1));
  events.push_back(plain_ev("autograd::engine::evaluate_function: AddmmBackward0", 3, 1));
  events.push_back(plain_ev("Not Backward0", 3, 1));  // not an identifier: a user scope
  // remote events' tid is a string: counted as malformed, not stored
  events.push_back(
      R"({"name": "aten::mm", "ph": "X", "ts": 1, "dur": 1, "tid": " node_id:1, thread_id:2 ", "pid": "CPU functions", "args": {}})");
  events.push_back(R"({"ph": "X", "ts": 1, "dur": 1, "tid": 1, "pid": "CPU functions"})");  // no name
  events.push_back(
      R"({"name": "f", "ph": "s", "ts": 1, "tid": 1, "pid": "CPU functions", "id": 0, "cat": "cpu_to_cuda", "args": {}})");
  events.push_back(R"({"name": "f", "ph": "X", "cat": "", "ts": 1, "dur": 1, "tid": 1, "pid": "CPU functions"})");
  const auto t = io::read_kineto_buffer(as_array(events), names);
  CHECK(t.stats.accounted());
  CHECK(t.stats.events_seen == events.size());
  CHECK(t.stats.stored == 21);
  CHECK(t.stats.kind_by_name == 21);
  CHECK(t.stats.bad_type == 1);
  CHECK(t.stats.missing_field == 1);
  CHECK(t.stats.flows == 1);
  CHECK(t.stats.unknown_category == 0);
  CHECK_FALSE(t.distributed.has_value());
  CHECK(t.stated_rank() == -1);
  auto kind_of = [&](const std::string& name) {
    for (const auto& e : t.events)
      if (names.name(e.name) == name) return e.kind;
    FAIL("no event " << name);
    return event_kind::kernel;
  };
  for (const char* op : {"aten::linear", "c10d::allreduce_", "gloo:all_reduce", "AddmmBackward0", "MseLossBackward",
                         "record_param_comms", "autograd::engine::evaluate_function: AddmmBackward0"})
    CHECK(kind_of(op) == event_kind::cpu_op);
  for (const char* a : {"ProfilerStep#0", "forward", "grad_sync", "Optimizer.step#SGD.step", "Not Backward0", "f"})
    CHECK(kind_of(a) == event_kind::annotation);
  for (const auto& e : t.events) {
    CHECK(e.device == -1);
    CHECK(e.rank == -1);
  }
  CHECK(io::host_kind_by_name("worker", kernel_classifier::defaults()) == event_kind::annotation);
  CHECK(io::host_kind_by_name("Backward0", kernel_classifier::defaults()) == event_kind::annotation);
}

TEST_CASE("plain Chrome trace: steps and phases measured on the host", "[trace][torch]") {
  name_table names;
  check_plain_job_breakdown(io::read_kineto_buffer(as_array(plain_job_events()), names), names);
  // The same job as Kineto writes a CPU-only trace: an object with categories, where
  // gloo:all_reduce is a user_annotation -- still communication, not a phase.
  std::string doc = R"({"schemaVersion": 1, "traceEvents": [)";
  const char* rows[][4] = {{"ProfilerStep#0", "0", "100", "user_annotation"},
                           {"forward", "0", "40", "user_annotation"},
                           {"aten::linear", "5", "25", "cpu_op"},
                           {"aten::addmm", "10", "15", "cpu_op"},
                           {"grad_sync", "50", "40", "user_annotation"},
                           {"c10d::allreduce_", "50", "5", "cpu_op"},
                           {"aten::empty", "51", "1", "cpu_op"},
                           {"gloo:all_reduce", "52", "28", "user_annotation"},
                           {"aten::div_", "85", "3", "cpu_op"},
                           {"optimizer", "90", "9", "user_annotation"},
                           {"aten::add_", "91", "4", "cpu_op"},
                           {"ProfilerStep#1", "100", "50", "user_annotation"},
                           {"forward", "100", "20", "user_annotation"},
                           {"aten::mm", "101", "10", "cpu_op"}};
  bool first = true;
  for (const auto& r : rows) {
    doc += std::string(first ? "" : ", ") + R"({"ph": "X", "cat": ")" + r[3] + R"(", "name": ")" + r[0] +
           R"(", "pid": 7, "tid": )" + (std::string(r[0]) == "gloo:all_reduce" ? "2" : "1") + ", \"ts\": " + r[1] +
           ", \"dur\": " + r[2] + "}";
    first = false;
  }
  doc += "]}";
  name_table names2;
  const auto kineto = io::read_kineto_buffer(doc, names2);
  CHECK(kineto.stats.kind_by_name == 0);
  check_plain_job_breakdown(kineto, names2);
}

TEST_CASE("ranks from file names", "[trace][torch]") {
  const std::pair<const char*, int> cases[] = {
      {"rank-3.json", 3},
      {"rank_3.json", 3},
      {"rank3.json", 3},
      {"RANK3.json.gz", 3},
      {"worker3.json", 3},
      {"worker_3.json", 3},
      {"Worker-12.pt.trace.json", 12},
      {"/runs/job/sampled_rank-0.json.gz", 0},
      {"rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz", 34},
      {"node1_worker7.1712.pt.trace.json", 7},
      {"rank3_rank3.json", 3},
      {"unranked.json", -1},
      {"frank3.json", -1},
      {"rank3b.json", -1},
      {"rank.json", -1},
      {"worker0_rank3.json", -1},      // two different ranks: ambiguous
      {"/data/rank7/trace.json", -1},  // only the file's own name is read
      {"rank-1234567890.json", -1},    // more than 9 digits
      {"trace.json", -1},
  };
  for (const auto& [path, rank] : cases) {
    INFO(path);
    CHECK(trace::rank_from_file_name(path) == rank);
  }
}

TEST_CASE("plain Chrome traces in a trace set: rank stated, from the file name, or unknown", "[trace][torch]") {
  const auto dir = failslow_test::temp_dir("torch_plain_ranks");
  const std::string plain = as_array(plain_job_events());
  failslow_test::write_file(dir / "b_worker_3.json", plain);
  failslow_test::write_file(dir / "c_RANK-1.json", plain);
  failslow_test::write_file(dir / "a_trace.json", plain);
  // distributedInfo wins over the file name
  failslow_test::write_file(
      dir / "d_rank-0.json", R"({"distributedInfo": {"backend": "gloo", "rank": 2, "world_size": 4},
      "traceEvents": )" + plain + "}");
  {
    const auto set = trace::load_trace_set({dir.string()});
    REQUIRE(set.traces.size() == 4);
    CHECK(set.traces[0].rank == -1);  // unknown ranks first
    CHECK(set.traces[0].source == trace::rank_source::unknown);
    CHECK(std::string(trace::to_string(set.traces[0].source)) == "unknown");
    CHECK(set.find(1)->source == trace::rank_source::file_name);
    CHECK(set.find(3)->source == trace::rank_source::file_name);
    CHECK(set.find(2)->source == trace::rank_source::stated);
    CHECK(set.find(0) == nullptr);
    CHECK(set.world_size == 4);
    CHECK(set.missing_ranks == std::vector<std::int32_t>{0});
    for (const auto& t : set.traces)
      for (const auto& e : t.data.events) CHECK(e.rank == t.rank);
  }
  {
    trace::trace_set_options o;
    o.assume_missing_ranks = true;
    const auto set = trace::load_trace_set({dir.string()}, o);
    REQUIRE(set.find(0) != nullptr);
    CHECK(set.find(0)->source == trace::rank_source::assumed);
    CHECK(set.find(0)->data.source == (dir / "a_trace.json").string());
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("a real torch.distributed job (gloo, 4 ranks): ranks, steps, time per phase", "[trace][torch]") {
  std::ifstream f(torch_gloo_dir / "expected.json");
  REQUIRE(f);  // committed with the traces
  const auto expected = nlohmann::json::parse(f);
  for (const char* job : {"healthy", "straggler", "pause", "ddp_sleep", "ddp_healthy", "ddp_gemm", "no_schedule"}) {
    INFO(job);
    const auto set = trace::load_trace_set({(torch_gloo_dir / job).string()});
    REQUIRE(set.traces.size() == 4);
    CHECK(set.world_size == 4);
    CHECK(set.missing_ranks.empty());
    for (const auto& t : set.traces) {
      INFO(t.data.source);
      REQUIRE(t.rank >= 0);
      CHECK(t.source == trace::rank_source::file_name);
      const auto& ex = expected["jobs"][job][std::to_string(t.rank)];
      const auto& st = t.data.stats;
      CHECK(st.accounted());
      CHECK(st.events_seen == ex["events"].get<std::uint64_t>());
      CHECK(st.stored == st.events_seen);
      CHECK(st.kind_by_name == st.stored);
      std::uint64_t annotations = 0, ops = 0;
      for (const auto& e : t.data.events) (e.kind == event_kind::annotation ? annotations : ops) += 1;
      CHECK(annotations == ex["kinds"]["annotation"].get<std::uint64_t>());
      CHECK(ops == ex["kinds"]["cpu_op"].get<std::uint64_t>());
      const auto steps = trace::map_steps(t.data, set.names);
      // Profiled without prof.step(): the iterations between the optimizer's own annotations.
      CHECK(steps.inferred_from == (std::string(job) == "no_schedule" ? "Optimizer.step#SGD.step" : ""));
      const auto b = trace::breakdown_steps(t.data, steps, set.names);
      CHECK(b.from_host);
      const auto& rows = ex["steps"];
      REQUIRE(b.steps.size() == rows.size());
      REQUIRE(rows.size() == (std::string(job) == "ddp_gemm" ? 20 : 12));
      for (std::size_t k = 0; k < rows.size(); ++k) {
        const auto& row = rows[k];
        const auto& s = b.steps[k];
        CHECK(s.number == row["step"].get<std::int64_t>());
        CHECK(s.period_ns == row["period_ns"].get<double>());
        CHECK(s.compute_ns == row["compute_ns"].get<double>());
        CHECK(s.communication_ns == row["communication_ns"].get<double>());
        CHECK(s.idle_ns == row["idle_ns"].get<double>());
        for (const auto& [phase, ns] : row["phases"].items()) {
          INFO(phase);
          CHECK(plain_phase(b, phase, k) == ns.get<double>());
        }
      }
    }
  }
}
