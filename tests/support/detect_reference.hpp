// Test support for the detector tests: the committed reference fixtures of
// tests/reference/gen_detect_fixtures.py (numpy/scipy), read with nlohmann::json.
#pragma once

#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace failslow_test {

// tests/reference/detect/<name>, parsed; throws (failing the test) when missing.
inline nlohmann::json detect_fixture(const std::string& name) {
  const std::string path = std::string(FAILSLOW_TEST_REFERENCE_DIR) + "/detect/" + name;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("missing reference fixture " + path);
  return nlohmann::json::parse(in);
}

inline std::vector<double> to_doubles(const nlohmann::json& a) {
  std::vector<double> v;
  for (const auto& x : a) v.push_back(x.get<double>());
  return v;
}

}  // namespace failslow_test
