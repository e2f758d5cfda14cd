// failslow/detect/run_rules.hpp -- Western Electric (1956) and Nelson (1984) run rules on a
// stream of standardised values u_t = (x_t - mu) / sigma.
//
// Synopsis
//   Each rule is a bit of run_rule; run_rules_checker::check(u) returns the bits of the rules
//   whose pattern is completed by the newest value (the newest value takes part in it):
//     we1_beyond_3sigma        |u_t| > 3                                       (Nelson 1)
//     we2_2of3_beyond_2sigma   2 of the last 3 beyond 2 on the same side       (Nelson 5)
//     we3_4of5_beyond_1sigma   4 of the last 5 beyond 1 on the same side       (Nelson 6)
//     we4_8_same_side          the last 8 on the same side of 0
//     nelson2_9_same_side      the last 9 on the same side of 0
//     nelson3_6_trend          the last 6 strictly increasing or decreasing (5 moves)
//     nelson4_14_alternating   the last 14 alternate up and down
//     nelson7_15_within_1sigma the last 15 within (-1, 1)
//     nelson8_8_outside_1sigma the last 8 beyond 1 in |u|, on both sides
//   western_electric = the four WE rules; nelson = Nelson's eight.
//   With chart_side upper (lower) the directional rules (WE 1-4, Nelson 2 and 3) only look
//   above (below) the centre; Nelson 4, 7 and 8 have no direction and always apply.
//   False alarms per point for iid continuous data: WE1 0.0027 (normal), Nelson 3 exactly
//   2/720 (1/720 one-sided: 6 iid values are in increasing order with probability 1/6!). The
//   rules together alarm often: the four WE rules on a Shewhart chart have an in-control ARL
//   of 91.75 (Champ & Woodall 1987), against 370.4 for WE1 alone.
// Complexity: O(1) per value (15 values kept).
// Errors: none; a NaN u breaks every run it enters (comparisons with NaN are false).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "failslow/core/compile_mode.hpp"
#include "failslow/detect/chart.hpp"

namespace failslow::detect {

enum run_rule : std::uint32_t {
  we1_beyond_3sigma = 1u << 0,
  we2_2of3_beyond_2sigma = 1u << 1,
  we3_4of5_beyond_1sigma = 1u << 2,
  we4_8_same_side = 1u << 3,
  nelson2_9_same_side = 1u << 4,
  nelson3_6_trend = 1u << 5,
  nelson4_14_alternating = 1u << 6,
  nelson7_15_within_1sigma = 1u << 7,
  nelson8_8_outside_1sigma = 1u << 8,
  western_electric = we1_beyond_3sigma | we2_2of3_beyond_2sigma | we3_4of5_beyond_1sigma | we4_8_same_side,
  nelson = we1_beyond_3sigma | nelson2_9_same_side | nelson3_6_trend | nelson4_14_alternating | we2_2of3_beyond_2sigma |
           we3_4of5_beyond_1sigma | nelson7_15_within_1sigma | nelson8_8_outside_1sigma,
};

class run_rules_checker {
 public:
  explicit run_rules_checker(std::uint32_t rules = western_electric, chart_side side = chart_side::both) noexcept
      : rules_(rules), side_(side) {}

  /// Adds the standardised value u; returns the rules that fire on it.
  FAILSLOW_FUNC std::uint32_t check(double u) noexcept;

  void clear() noexcept { n_ = 0; }
  std::uint32_t rules() const noexcept { return rules_; }

 private:
  static constexpr std::size_t capacity = 15;

  // i-th most recent value (0 = newest); i < n_.
  double at(std::size_t i) const noexcept { return buf_[(head_ + capacity - i) % capacity]; }

  FAILSLOW_FUNC std::size_t count_beyond(std::size_t last, double sign, double level) const noexcept;
  FAILSLOW_FUNC bool monotone_run(std::size_t points, double sign) const noexcept;
  FAILSLOW_FUNC bool alternating(std::size_t points) const noexcept;

  std::uint32_t rules_;
  chart_side side_;
  std::array<double, capacity> buf_{};
  std::size_t head_ = 0, n_ = 0;
};

}  // namespace failslow::detect

#if FAILSLOW_HEADER_ONLY
#include "failslow/detect/impl/run_rules.ipp"
#endif
