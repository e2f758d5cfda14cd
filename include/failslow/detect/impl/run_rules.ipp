// failslow/detect/impl/run_rules.ipp -- the definitions of detect/run_rules.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "failslow/detect/run_rules.hpp"

namespace failslow::detect {

FAILSLOW_FUNC_DEF std::uint32_t run_rules_checker::check(double u) noexcept {
  head_ = (head_ + 1) % capacity;
  buf_[head_] = u;
  if (n_ < capacity) ++n_;
  std::uint32_t fired = 0;
  const bool up = side_ != chart_side::lower, down = side_ != chart_side::upper;
  auto directional = [&](std::uint32_t rule, auto&& pred) {
    if ((rules_ & rule) && ((up && pred(1.0)) || (down && pred(-1.0)))) fired |= rule;
  };
  directional(we1_beyond_3sigma, [&](double s) { return s * u > 3.0; });
  directional(we2_2of3_beyond_2sigma, [&](double s) { return s * u > 2.0 && count_beyond(3, s, 2.0) >= 2; });
  directional(we3_4of5_beyond_1sigma, [&](double s) { return s * u > 1.0 && count_beyond(5, s, 1.0) >= 4; });
  directional(we4_8_same_side, [&](double s) { return n_ >= 8 && count_beyond(8, s, 0.0) == 8; });
  directional(nelson2_9_same_side, [&](double s) { return n_ >= 9 && count_beyond(9, s, 0.0) == 9; });
  directional(nelson3_6_trend, [&](double s) { return monotone_run(6, s); });
  if ((rules_ & nelson4_14_alternating) && alternating(14)) fired |= nelson4_14_alternating;
  if ((rules_ & nelson7_15_within_1sigma) && n_ >= 15) {
    bool all = true;
    for (std::size_t i = 0; i < 15 && all; ++i) all = std::abs(at(i)) < 1.0;
    if (all) fired |= nelson7_15_within_1sigma;
  }
  if ((rules_ & nelson8_8_outside_1sigma) && n_ >= 8 && count_beyond(8, 1.0, 1.0) + count_beyond(8, -1.0, 1.0) == 8 &&
      count_beyond(8, 1.0, 1.0) > 0 && count_beyond(8, -1.0, 1.0) > 0)
    fired |= nelson8_8_outside_1sigma;
  return fired;
}

FAILSLOW_FUNC_DEF std::size_t run_rules_checker::count_beyond(std::size_t last, double sign,
                                                              double level) const noexcept {
  std::size_t c = 0;
  for (std::size_t i = 0; i < last && i < n_; ++i) c += sign * at(i) > level ? 1 : 0;
  return c;
}

FAILSLOW_FUNC_DEF bool run_rules_checker::monotone_run(std::size_t points, double sign) const noexcept {
  if (n_ < points) return false;
  for (std::size_t i = 0; i + 1 < points; ++i)
    if (!(sign * (at(i) - at(i + 1)) > 0.0)) return false;
  return true;
}

FAILSLOW_FUNC_DEF bool run_rules_checker::alternating(std::size_t points) const noexcept {
  if (n_ < points) return false;
  for (std::size_t i = 0; i + 2 < points; ++i) {
    const double d0 = at(i) - at(i + 1), d1 = at(i + 1) - at(i + 2);
    if (!(d0 * d1 < 0.0)) return false;
  }
  return true;
}

}  // namespace failslow::detect
