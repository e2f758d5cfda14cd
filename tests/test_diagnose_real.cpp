// The diagnosis on the real PyTorch-profiler traces of ../shared/data/kineto (skipped when
// absent): it runs on every one of them without an error, reports what it can (a single rank
// gives L1 only) and says why it cannot do more. And load_job on files a user gets wrong.
#include <catch2/catch.hpp>
#include <failslow/diagnose/diagnose.hpp>
#include <failslow/diagnose/load_job.hpp>
#include <failslow/io/report_json.hpp>
#include <failslow/io/report_text.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "support/kineto_data.hpp"
#include "support/simulated_job.hpp"

using namespace failslow;

namespace {

bool any_note(const report& r, const std::string& part) {
  for (const auto& n : r.notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

std::filesystem::path temp_dir(const std::string& name) {
  const auto d = std::filesystem::temp_directory_path() / ("failslow_test_diagnose_real_" + name);
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

}  // namespace

TEST_CASE("every real trace is diagnosed without an error, and the report says what it could not do",
          "[diagnose][real]") {
  const auto dir = failslow_test::kineto_dir_or_skip();
  int folders = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (!e.is_directory()) continue;
    ++folders;
    INFO(e.path().filename().string());
    diagnose::load_options lo;
    lo.threads = 2;
    const auto job = diagnose::load_job({e.path().string()}, lo);
    diagnose::diagnose_options o;
    o.topology_source = job.topology_source;
    const auto rep = diagnose::diagnose(job.model, job.topo, o);
    // A valid failslow.report/1 document and a text rendering.
    const auto j = nlohmann::json::parse(io::report_to_json(rep));
    CHECK(j.at("schema") == "failslow.report/1");
    CHECK(j.at("world_size").get<int>() == job.model.world_size);
    CHECK_FALSE(io::report_to_text(rep).empty());
    // Real traces are no fault-injection runs: no rank is blamed without peers to compare.
    const auto present = job.model.present_ranks();
    if (present.size() < 2) {
      for (const auto& f : rep.findings) CHECK(f.level == "L1");
      if (job.model.step_count() > 0) CHECK(any_note(rep, "stragglers need comparable ranks"));
    }
    if (job.model.step_count() == 0) CHECK(any_note(rep, "no steps"));
    if (job.model.step_count() > 0 && job.model.step_count() < 3) CHECK(any_note(rep, "at least 3"));
    if (present.size() < static_cast<std::size_t>(job.model.world_size)) CHECK(any_note(rep, "have no data"));
  }
  CHECK(folders >= 10);
}

TEST_CASE("the two ranks of the 128-rank job: layout from the traces or assumed, missing ranks noted",
          "[diagnose][real]") {
  const auto dir = failslow_test::kineto_dir_or_skip();
  const auto job = diagnose::load_job({(dir / "trace_filter_2_of_128").string()});
  CHECK(job.model.world_size == 128);
  CHECK(job.model.present_ranks() == std::vector<int>{0, 1});
  CHECK(job.model.step_count() >= 1);
  const auto rep = diagnose::diagnose(job.model, job.topo);
  CHECK(any_note(rep, "126 of 128 ranks have no data"));
}

TEST_CASE("load_job: what a user gets wrong", "[diagnose][load]") {
  const auto d = temp_dir("load");
  // A job of 8 simulated ranks written as files, one of them damaged.
  sim::job_config cfg;
  cfg.sizes = parse_parallel_sizes("tp=1,pp=1,dp=8");
  cfg.steps = 8;
  auto job = sim::simulate(cfg, sim::scenario::healthy);
  for (int r = 0; r < 8; ++r) {
    std::ofstream f(d / ("rank_" + std::to_string(r) + ".json"), std::ios::binary);
    std::string doc = sim::kineto_trace(job, r);
    if (r == 5) doc.resize(doc.size() / 2);  // a rank whose file was cut off
    f << doc;
  }
  diagnose::load_options lo;
  lo.threads = 2;
  // Progress comes from the reader threads, one call at a time (no Catch assertion in there:
  // they are not thread-safe), counting up.
  std::size_t calls = 0, last_done = 0, total = 0;
  bool in_order = true;
  lo.progress = [&](std::size_t done, std::size_t of) {
    ++calls;
    in_order = in_order && done == last_done + 1;
    last_done = done;
    total = of;
  };
  auto loaded = diagnose::load_job({d.string()}, lo);
  CHECK(calls == 8);
  CHECK(in_order);
  CHECK(total == 8);
  lo.progress = nullptr;
  CHECK(loaded.topology_source == "pg_config");
  CHECK(loaded.topo.size(parallel_dim::dp) == 8);
  CHECK(loaded.model.world_size == 8);
  CHECK_FALSE(loaded.model.has_rank[5]);
  bool noted = false;
  for (const auto& n : loaded.model.notes) noted = noted || n.find("rank_5.json: not read") != std::string::npos;
  CHECK(noted);
  const auto rep = diagnose::diagnose(loaded.model, loaded.topo);
  CHECK(rep.findings.empty());
  CHECK(any_note(rep, "1 of 8 ranks have no data"));

  // A given layout wins; one too small for the ranks is an error.
  lo.sizes = parse_parallel_sizes("dp=4,pp=2");
  loaded = diagnose::load_job({d.string()}, lo);
  CHECK(loaded.topology_source == "flags");
  CHECK(loaded.topo.size(parallel_dim::pp) == 2);
  lo.sizes = parse_parallel_sizes("dp=4");
  CHECK_THROWS_AS(diagnose::load_job({d.string()}, lo), invalid_argument);
  lo.sizes.reset();
  // No such path; traces and .fsum mixed.
  CHECK_THROWS_AS(diagnose::load_job({(d / "nope").string()}, lo), invalid_argument);
  CHECK_THROWS_AS(diagnose::load_job({(d / "rank_0.json").string(), (d / "x.fsum").string()}, lo), invalid_argument);
  CHECK_THROWS_AS(parse_parallel_sizes("tp=2,qq=3"), invalid_argument);
  CHECK_THROWS_AS(parse_parallel_sizes("tp=0"), invalid_argument);
  CHECK_THROWS_AS(parse_parallel_sizes("tp=2,tp=2"), invalid_argument);
  std::filesystem::remove_all(d);
}
