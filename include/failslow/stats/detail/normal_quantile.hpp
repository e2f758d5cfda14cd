// failslow/stats/detail/normal_quantile.hpp -- the standard normal quantile (probit) without a
// special-function library.
//
//   normal_quantile(p)   z with Phi(z) = p, Phi the standard normal CDF; 0 < p < 1
// Wichura's algorithm AS 241 (PPND16; Applied Statistics 37(3), 1988, 477-484): with q = p - 1/2,
// |q| <= 0.425: z = q A(r) / B(r), r = 0.180625 - q^2; otherwise r = sqrt(-ln min(p, 1 - p)) and
// z = +-C(r - 1.6) / D(r - 1.6) (r <= 5) or +-E(r - 5) / F(r - 5) (r > 5), the sign that of q --
// rational functions of degree 7/7 whose approximation error is about 1e-16 relative. 1 - p is
// exact in double for p >= 1/2, so the upper tail is as accurate as the double p allows (a p
// within an ulp of 1 has no more information than that). Checked against mpmath (50 digits) and
// scipy.special.ndtri (tests/reference/gen_stats_fixtures.py, stats/normal_quantile.json) from p =
// 1e-300 to 1 - 2^-53: within 7e-16 relative, about 3 ulps (1e-15 asserted; scipy: 5e-16).
// Boost.Math's quantile gives the same values but instantiates erf_inv, whose static initialiser is
// emitted in every file that includes a caller (issue 22); this needs only <cmath>.
// Complexity: O(1) (one log and one sqrt in the tails).
// Errors: p <= 0 gives -inf, p >= 1 +inf, NaN gives NaN (no throw; callers check their domains).
#pragma once

#include "failslow/core/compile_mode.hpp"

namespace failslow::stats::detail {

FAILSLOW_FUNC double normal_quantile(double p) noexcept;

}  // namespace failslow::stats::detail

#if FAILSLOW_HEADER_ONLY
#include "failslow/stats/detail/impl/normal_quantile.ipp"
#endif
