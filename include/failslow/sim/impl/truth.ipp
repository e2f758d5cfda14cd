// failslow/sim/impl/truth.ipp -- the definitions of sim/truth.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <vector>

#include "failslow/sim/truth.hpp"

namespace failslow::sim {

FAILSLOW_FUNC_DEF std::vector<int> truth::faulty_ranks() const {
  std::vector<int> r;
  for (const auto& f : faults) r.insert(r.end(), f.ranks.begin(), f.ranks.end());
  std::sort(r.begin(), r.end());
  r.erase(std::unique(r.begin(), r.end()), r.end());
  return r;
}

}  // namespace failslow::sim
