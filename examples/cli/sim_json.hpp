// JSON of the simulator's truth (schema failslow.truth/1), of diagnosis reports (schema
// failslow.report/1, ../shared/DESIGN.md) and of scores (failslow.score/1), for the simulate
// and score subcommands. nlohmann/json stays in the tool: the library headers do not use it.
#pragma once

#include <failslow/core/error.hpp>
#include <failslow/core/report.hpp>
#include <failslow/io/detail/file_bytes.hpp>
#include <failslow/sim/score.hpp>
#include <failslow/sim/truth.hpp>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace failslow_cli {

inline nlohmann::json truth_to_json(const failslow::sim::truth& t) {
  using nlohmann::json;
  json j;
  j["schema"] = "failslow.truth/1";
  j["scenario"] = t.scenario_name;
  j["seed"] = t.seed;
  j["severity"] = t.severity;
  j["noise"] = t.noise;
  j["world_size"] = t.world_size;
  j["steps"] = {{"first", t.first_step}, {"last", t.last_step}};
  j["topology"] = {{"tp", t.sizes.tp}, {"pp", t.sizes.pp}, {"dp", t.sizes.dp},
                   {"cp", t.sizes.cp}, {"ep", t.sizes.ep}, {"order", t.order}};
  j["schedule"] = t.schedule;
  j["microbatches"] = t.microbatches;
  j["layers_per_stage"] = t.layers_per_stage;
  json faults = json::array();
  for (const auto& f : t.faults) {
    json x;
    x["kind"] = std::string(failslow::sim::to_string(f.kind));
    x["ranks"] = f.ranks;
    if (!f.group.empty()) x["group"] = f.group;
    x["first_step"] = f.first_step;
    x["last_step"] = f.last_step;
    x["factor"] = f.factor;
    if (f.stall_ms > 0) x["stall_ms"] = f.stall_ms;
    x["transient"] = f.transient;
    x["kernels"] = f.kernels;
    if (!f.phase.empty()) x["phase"] = f.phase;
    x["description"] = f.description;
    faults.push_back(std::move(x));
  }
  j["faults"] = std::move(faults);
  j["clock_offsets_ns"] = t.clock_offsets_ns;
  return j;
}

inline failslow::sim::truth truth_from_json(const nlohmann::json& j) {
  if (j.value("schema", std::string()) != "failslow.truth/1")
    throw failslow::invalid_argument("not a failslow.truth/1 document (\"schema\" missing or different)");
  failslow::sim::truth t;
  t.scenario_name = j.at("scenario").get<std::string>();
  t.seed = j.value("seed", std::uint64_t{0});
  t.severity = j.value("severity", 1.0);
  t.noise = j.value("noise", 1.0);
  const auto& topo = j.at("topology");
  t.sizes.tp = topo.value("tp", 1);
  t.sizes.pp = topo.value("pp", 1);
  t.sizes.dp = topo.value("dp", 1);
  t.sizes.cp = topo.value("cp", 1);
  t.sizes.ep = topo.value("ep", 1);
  t.order = topo.value("order", std::string(failslow::topology::default_order));
  const failslow::topology layout(t.sizes, t.order);
  t.world_size = j.value("world_size", layout.world_size());
  if (t.world_size != layout.world_size())
    throw failslow::invalid_argument("truth: world_size " + std::to_string(t.world_size) +
                                     " does not match its topology");
  t.first_step = j.at("steps").at("first").get<std::int64_t>();
  t.last_step = j.at("steps").at("last").get<std::int64_t>();
  t.schedule = j.value("schedule", std::string("1f1b"));
  t.microbatches = j.value("microbatches", 1);
  t.layers_per_stage = j.value("layers_per_stage", 1);
  for (const auto& x : j.at("faults")) {
    failslow::sim::fault f;
    f.kind = failslow::sim::parse_fault_kind(x.at("kind").get<std::string>());
    f.ranks = x.at("ranks").get<std::vector<int>>();
    f.group = x.value("group", std::string());
    f.first_step = x.at("first_step").get<std::int64_t>();
    f.last_step = x.at("last_step").get<std::int64_t>();
    f.factor = x.value("factor", 1.0);
    f.stall_ms = x.value("stall_ms", 0.0);
    f.transient = x.value("transient", false);
    f.kernels = x.value("kernels", std::vector<std::string>());
    f.phase = x.value("phase", std::string());
    f.description = x.value("description", std::string());
    t.faults.push_back(std::move(f));
  }
  t.clock_offsets_ns = j.value("clock_offsets_ns", std::vector<std::int64_t>());
  return t;
}

/// A number of a report: null (how NaN and infinities are written) reads as NaN.
inline double report_number(const nlohmann::ordered_json& v, const std::string& what) {
  if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (!v.is_number()) throw failslow::invalid_argument("report: " + what + " is not a number");
  return v.get<double>();
}

/// Reads a failslow.report/1 document. Evidence keeps the document's order when `j` is an
/// ordered_json (read_json_file<nlohmann::ordered_json>); a plain json converts, sorted by key.
inline failslow::report report_from_json(const nlohmann::ordered_json& j) {
  if (j.value("schema", std::string()) != "failslow.report/1")
    throw failslow::invalid_argument("not a failslow.report/1 document (\"schema\" missing or different)");
  failslow::report r;
  r.world_size = j.value("world_size", 0);
  if (j.contains("steps")) {
    r.first_step = j.at("steps").value("first", std::int64_t{0});
    r.last_step = j.at("steps").value("last", std::int64_t{0});
  }
  if (j.contains("topology")) {
    const auto& t = j.at("topology");
    r.topology.tp = t.value("tp", 1);
    r.topology.pp = t.value("pp", 1);
    r.topology.dp = t.value("dp", 1);
    r.topology.cp = t.value("cp", 1);
    r.topology.ep = t.value("ep", 1);
    r.topology.order = t.value("order", r.topology.order);
    r.topology.source = t.value("source", std::string());
  }
  for (const auto& x : j.at("findings")) {
    failslow::finding f;
    f.level = x.at("level").get<std::string>();
    f.kind = x.at("kind").get<std::string>();
    f.ranks = x.value("ranks", std::vector<int>());
    f.group = x.value("group", std::string());
    f.phase = x.value("phase", std::string());
    f.kernel = x.value("kernel", std::string());
    f.first_step = x.at("first_step").get<std::int64_t>();
    f.last_step = x.at("last_step").get<std::int64_t>();
    f.score = x.contains("score") ? report_number(x.at("score"), "score") : 0.0;
    if (x.contains("evidence")) {
      for (const auto& [name, v] : x.at("evidence").items()) {
        if (v.is_string()) {
          f.evidence.add(name, v.get<std::string>());
        } else if (v.is_array()) {
          std::vector<double> numbers;
          numbers.reserve(v.size());
          for (const auto& e : v) numbers.push_back(report_number(e, "evidence '" + name + "'"));
          f.evidence.add(name, std::move(numbers));
        } else {
          f.evidence.add(name, report_number(v, "evidence '" + name + "'"));
        }
      }
    }
    f.summary = x.value("summary", std::string());
    r.findings.push_back(std::move(f));
  }
  r.notes = j.value("notes", std::vector<std::string>());
  return r;
}

/// Reads a JSON file as a `Json` (nlohmann::json, or ordered_json to keep the keys' order);
/// errors (missing file, bad JSON, wrong shape in `convert`) become failslow errors naming the
/// file. Read in one block (io/detail/file_bytes.hpp: a missing file or a folder is an error
/// naming it; gzip data is decompressed).
template <class Json = nlohmann::json, class F>
auto read_json_file(const std::string& path, F convert) {
  const auto bytes = failslow::io::detail::file_bytes::open(path);
  try {
    const auto text = bytes.view();
    const auto j = Json::parse(text.begin(), text.end());
    return convert(j);
  } catch (const nlohmann::json::exception& e) {
    throw failslow::invalid_argument(path + ": " + e.what());
  } catch (const failslow::error& e) {
    throw failslow::invalid_argument(path + ": " + e.what());
  }
}

inline nlohmann::json counts_to_json(const failslow::sim::score_counts& c) {
  nlohmann::json j;
  j["cases"] = c.cases;
  j["faults"] = c.faults;
  j["localised"] = c.localised;
  j["kernel_faults"] = c.kernel_faults;
  j["kernel_right"] = c.kernel_right;
  j["steps_right"] = c.steps_right;
  j["findings"] = c.findings;
  j["true_positives"] = c.true_positives;
  j["false_positives"] = c.false_positives;
  j["neutral"] = c.neutral;
  j["false_positive_reasons"] = nlohmann::json::object();
  for (const auto& [k, v] : c.false_positive_reasons) j["false_positive_reasons"][k] = v;
  j["precision"] = c.precision();
  j["recall"] = c.recall();
  j["kernel_accuracy"] = c.kernel_accuracy();
  j["step_accuracy"] = c.step_accuracy();
  return j;
}

}  // namespace failslow_cli
