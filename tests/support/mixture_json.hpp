// Test support: a lognormal mixture from its fixture form (tests/reference/stats/lognormal.json).
#pragma once

#include <cmath>
#include <failslow/stats/lognormal.hpp>
#include <nlohmann/json.hpp>
#include <vector>

namespace failslow_test {

inline failslow::stats::lognormal_mixture mixture_from_json(const nlohmann::json& m) {
  std::vector<failslow::stats::lognormal_component> comps;
  for (const auto& c : m["components"]) {
    failslow::stats::lognormal_component k;
    k.weight = c["weight"].get<double>();
    k.mu = c["mu"].get<double>();
    k.sigma = c["sigma"].get<double>();
    k.point = std::exp(k.mu);
    k.lo = c["lo"].get<double>();
    k.hi = c["hi"].get<double>();
    comps.push_back(k);
  }
  return failslow::stats::lognormal_mixture(comps, m["truncated"].get<bool>());
}

}  // namespace failslow_test
