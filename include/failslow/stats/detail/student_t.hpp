// failslow/stats/detail/student_t.hpp -- Student's t upper tail and its inverse for integer
// degrees of freedom, without a special-function library.
//
//   student_t_upper_tail(t, nu)       P(T > t), T ~ t(nu), nu >= 1 an integer
//   student_t_upper_quantile(p, nu)   the t with P(T > t) = p, 0 < p <= 1/2
// The tail is the closed form of Abramowitz & Stegun 26.7.3 / 26.7.4 (theta = atan(t / sqrt nu);
// nu odd: A = 2/pi (theta + sin cos (1 + 2/3 cos^2 + ...)); nu even: A = sin (1 + 1/2 cos^2 +
// 1.3/2.4 cos^4 + ...); P(|T| <= t) = A, P(T > t) = (1 - A) / 2), a sum of about nu / 2 terms;
// where 1 - A < 0.1 it is summed instead as the rest of the convergent series the finite sum
// truncates, so far tails keep their relative precision (nu above 20000: the normal tail of a
// corrected z, 1e-4 relative). The
// quantile is found by bisection on t (at most 100 halvings of a bracket doubled from 1); for
// nu > 1000 by the Cornish-Fisher expansion (A&S 26.7.5, four terms). Checked against
// scipy.stats.t.sf / t.isf (tests/reference/gen_diagnose_fixtures.py) to 1e-9 relative.
// Complexity: O(nu + 40 nu / t^2) per tail (nu <= 20000), O(100 nu) per quantile (nu <= 1000), else O(100).
#pragma once

#include <cstdint>

#include "failslow/core/compile_mode.hpp"

namespace failslow::stats::detail {

FAILSLOW_FUNC double student_t_upper_tail(double t, std::uint64_t nu);

FAILSLOW_FUNC double student_t_upper_quantile(double p, std::uint64_t nu);

}  // namespace failslow::stats::detail

#if FAILSLOW_HEADER_ONLY
#include "failslow/stats/detail/impl/student_t.ipp"
#endif
