#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <failslow/core/report.hpp>
#include <failslow/io/detail/json_writer.hpp>
#include <failslow/io/report_json.hpp>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

using namespace failslow;
using nlohmann::ordered_json;

namespace {

constexpr double nan_v = std::numeric_limits<double>::quiet_NaN();
constexpr double inf_v = std::numeric_limits<double>::infinity();

const std::string awkward = "say \"hi\"\\path\nnext\ttab\x01\x1f end";
const std::string utf8 = "\xce\xbcs \xe2\x89\xa5 2\xc3\x97 \xe6\x97\xa5\xe6\x9c\xac";  // "µs ≥ 2× 日本"

report sample_report() {
  report r;
  r.world_size = 64;
  r.first_step = 100;
  r.last_step = 129;
  r.topology.tp = 2;
  r.topology.pp = 4;
  r.topology.dp = 8;
  r.topology.source = "pg_config";

  finding a;
  a.level = "L2";
  a.kind = "straggler";
  a.ranks = {13};
  a.group = "dp:3";
  a.phase = "backward";
  a.kernel = awkward;
  a.first_step = 110;
  a.last_step = 129;
  a.score = 7.25;
  a.evidence.add("job_slowdown", 0.125)
      .add("baseline_p50_us", 1200.0)
      .add("z", 0.1)
      .add("note", awkward)
      .add("unit", utf8)
      .add("slow_steps", std::vector<double>{110, 111, 112.5})
      .add("missing", nan_v)
      .add("overflow", -inf_v)
      .add("partly", std::vector<double>{1, nan_v, inf_v});
  a.summary = "rank 13 is " + utf8;
  r.findings.push_back(a);

  finding b;  // job-wide: no ranks, no optional strings, no evidence
  b.level = "L1";
  b.kind = "slow_window";
  b.first_step = 100;
  b.last_step = 102;
  b.score = nan_v;
  b.summary = "slow";
  r.findings.push_back(b);

  r.notes = {"rank 7: no trace", awkward};
  return r;
}

std::string number_text(double x) {
  std::string s;
  io::detail::append_number(s, x);
  return s;
}

std::string escaped(const std::string& s) {
  std::string out;
  io::detail::append_escaped(out, s);
  return out;
}

finding with(std::string level, double job_slowdown, double score, bool has_slowdown = true) {
  finding f;
  f.level = std::move(level);
  f.kind = "k";
  f.score = score;
  if (has_slowdown) f.evidence.add("job_slowdown", job_slowdown);
  return f;
}

}  // namespace

TEST_CASE("append_escaped: quotes, backslashes and control characters escaped, UTF-8 as it is") {
  CHECK(escaped("") == "\"\"");
  CHECK(escaped("plain") == "\"plain\"");
  CHECK(escaped("a\"b\\c") == "\"a\\\"b\\\\c\"");
  CHECK(escaped("\n\t\r") == "\"\\n\\t\\r\"");
  CHECK(escaped(std::string("\x00\x01\x08\x0c\x1f", 5)) == "\"\\u0000\\u0001\\u0008\\u000c\\u001f\"");
  CHECK(escaped("\x7f") == "\"\x7f\"");
  CHECK(escaped(utf8) == "\"" + utf8 + "\"");
  CHECK(nlohmann::json::parse(escaped(awkward)).get<std::string>() == awkward);
}

TEST_CASE("append_number: integers plain, others shortest round trip, non-finite as null") {
  CHECK(number_text(0) == "0");
  CHECK(number_text(-0.0) == "0");
  CHECK(number_text(42) == "42");
  CHECK(number_text(-3) == "-3");
  CHECK(number_text(1e15) == "1000000000000000");
  CHECK(number_text(9007199254740991.0) == "9007199254740991");
  CHECK(number_text(0.1) == "0.1");
  CHECK(number_text(-2.5) == "-2.5");
  CHECK(number_text(1.0 / 3) == "0.3333333333333333");
  CHECK(number_text(5e-324) == "5e-324");
  CHECK(number_text(1e300) == "1e+300");
  CHECK(number_text(nan_v) == "null");
  CHECK(number_text(inf_v) == "null");
  CHECK(number_text(-inf_v) == "null");

  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mantissa(-1, 1);
  std::uniform_int_distribution<int> exponent(-300, 300);
  for (int i = 0; i < 2000; ++i) {
    const double x = std::ldexp(mantissa(rng), exponent(rng));
    const std::string s = number_text(x);
    INFO(s);
    CHECK(std::strtod(s.c_str(), nullptr) == x);
    CHECK(s.size() <= 24);
    CHECK(nlohmann::json::parse(s).get<double>() == x);
  }
}

TEST_CASE("report_to_json writes every field of the schema, in order") {
  const report r = sample_report();
  const std::string text = io::report_to_json(r);
  const auto j = ordered_json::parse(text);

  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"schema", "world_size", "steps", "topology", "findings", "notes"});
  CHECK(j["schema"] == "failslow.report/1");
  CHECK(j["world_size"] == 64);
  CHECK(j["steps"] == ordered_json({{"first", 100}, {"last", 129}}));
  CHECK(j["topology"] == ordered_json({{"tp", 2},
                                       {"pp", 4},
                                       {"dp", 8},
                                       {"cp", 1},
                                       {"ep", 1},
                                       {"order", "tp-cp-ep-dp-pp"},
                                       {"source", "pg_config"}}));
  REQUIRE(j["findings"].size() == 2);

  const auto& a = j["findings"][0];
  keys.clear();
  for (const auto& [k, v] : a.items()) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"level", "kind", "ranks", "group", "phase", "kernel", "first_step",
                                         "last_step", "score", "evidence", "summary"});
  CHECK(a["level"] == "L2");
  CHECK(a["kind"] == "straggler");
  CHECK(a["ranks"] == ordered_json::array({13}));
  CHECK(a["group"] == "dp:3");
  CHECK(a["phase"] == "backward");
  CHECK(a["kernel"] == awkward);
  CHECK(a["first_step"] == 110);
  CHECK(a["last_step"] == 129);
  CHECK(a["score"].get<double>() == 7.25);
  CHECK(a["summary"] == "rank 13 is " + utf8);

  const auto& e = a["evidence"];
  keys.clear();
  for (const auto& [k, v] : e.items()) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"job_slowdown", "baseline_p50_us", "z", "note", "unit", "slow_steps",
                                         "missing", "overflow", "partly"});
  CHECK(e["job_slowdown"].get<double>() == 0.125);
  CHECK(e["baseline_p50_us"].is_number_integer());
  CHECK(e["baseline_p50_us"] == 1200);
  CHECK(e["z"].get<double>() == 0.1);
  CHECK(e["note"] == awkward);
  CHECK(e["unit"] == utf8);
  CHECK(e["slow_steps"] == ordered_json::array({110, 111, 112.5}));
  CHECK(e["missing"].is_null());
  CHECK(e["overflow"].is_null());
  CHECK(e["partly"] == ordered_json::array({1, nullptr, nullptr}));

  const auto& b = j["findings"][1];
  keys.clear();
  for (const auto& [k, v] : b.items()) keys.push_back(k);
  CHECK(keys ==
        std::vector<std::string>{"level", "kind", "ranks", "first_step", "last_step", "score", "evidence", "summary"});
  CHECK(b["ranks"] == ordered_json::array());
  CHECK(b["score"].is_null());
  CHECK(b["evidence"] == ordered_json::object());

  CHECK(j["notes"] == ordered_json::array({"rank 7: no trace", awkward}));
  CHECK(text.find(utf8) != std::string::npos);  // not \u-escaped
  CHECK(text.back() == '}');
}

TEST_CASE("report_to_json layout: indent 0 is one line, indent n nests n spaces, output deterministic") {
  const report r = sample_report();
  const std::string pretty = io::report_to_json(r);
  const std::string line = io::report_to_json(r, 0);
  CHECK(line.find('\n') == std::string::npos);
  CHECK(line.rfind("{\"schema\":\"failslow.report/1\",\"world_size\":64,", 0) == 0);
  CHECK(io::report_to_json(r, -1) == line);
  CHECK(ordered_json::parse(line) == ordered_json::parse(pretty));
  CHECK(io::report_to_json(r) == pretty);

  CHECK(pretty.rfind(
            "{\n  \"schema\": \"failslow.report/1\",\n  \"world_size\": 64,\n  \"steps\": {\n    \"first\": 100,", 0) ==
        0);
  CHECK(pretty.find("\n      \"ranks\": [13],\n") != std::string::npos);
  CHECK(pretty.find("\"slow_steps\": [110, 111, 112.5]") != std::string::npos);
  const std::string four = io::report_to_json(r, 4);
  CHECK(four.find("\n            \"evidence\": {\n                \"job_slowdown\": 0.125,") != std::string::npos);

  report empty;
  CHECK(io::report_to_json(empty, 0) ==
        "{\"schema\":\"failslow.report/1\",\"world_size\":0,\"steps\":{\"first\":0,\"last\":0},"
        "\"topology\":{\"tp\":1,\"pp\":1,\"dp\":1,\"cp\":1,\"ep\":1,\"order\":\"tp-cp-ep-dp-pp\",\"source\":\"\"},"
        "\"findings\":[],\"notes\":[]}");

  std::string out = "prefix ";
  io::write_report_json(empty, out, 0);
  CHECK(out == "prefix " + io::report_to_json(empty, 0));
}

TEST_CASE("sort_by_severity: job_slowdown first, then the more specific level, then score") {
  std::vector<finding> f = {
      with("L1", 0.05, 9),      // 0
      with("L3", 0.05, 1),      // 1
      with("L2", 0.20, 0.5),    // 2
      with("L3", 0.05, 4),      // 3
      with("L4", 0, 0, false),  // 4: no job_slowdown counts as 0
      with("L2", 0.05, 1),      // 5
      with("L3", 0.05, 4),      // 6: equal to 3, stays after it
      with("L1", 0.01, 100),    // 7
      with("bad", 0.05, 1000),  // 8: unknown level ranks below L1
  };
  for (std::size_t i = 0; i < f.size(); ++i) f[i].summary = std::to_string(i);
  sort_by_severity(f);
  std::vector<std::string> order;
  for (const auto& x : f) order.push_back(x.summary);
  CHECK(order == std::vector<std::string>{"2", "3", "6", "1", "5", "0", "8", "7", "4"});
  CHECK(level_number("L4") == 4);
  CHECK(level_number("L0") == 0);
  CHECK(level_number("4") == 0);
}
