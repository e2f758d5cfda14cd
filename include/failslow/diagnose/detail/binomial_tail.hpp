// failslow/diagnose/detail/binomial_tail.hpp -- count tails of the diagnosis' tests:
//   binomial_upper_tail(k, n, p)   P(X >= k), X ~ Binomial(n, p): how unlikely it is that a rank
//                                  is elevated in k of its n steps when its peers are elevated
//                                  at rate p
//   jeffreys_rate(k, n)            the Jeffreys estimate of that rate from the peers' cells
//   hypergeometric_upper_tail(k, K, n, N)  P(X >= k), X ~ Hypergeometric(N, K, n): k or more of
//                                  a rank's K elevated steps (of N) inside a run of n steps, were
//                                  their places random -- a change or a sporadic excess
//
// Both sum the terms from k up in log space (lgamma), starting from the largest, so tails down
// to 1e-300 keep their relative precision; O(n - k). Checked against scipy.stats.binom.sf and
// hypergeom.sf (tests/reference/gen_diagnose_fixtures.py) to 1e-10 relative.
#pragma once

#include <cstdint>

#include "failslow/core/compile_mode.hpp"

namespace failslow::diagnose::detail {

/// The Jeffreys estimate (k + 1/2) / (n + 1) of a rate seen in k of n cells, 0 when n = 0: the
/// rate the binomial tail is taken at (0 in 48 cells is not known to be below 1 %).
inline double jeffreys_rate(double k, double n) noexcept { return n > 0 ? (k + 0.5) / (n + 1) : 0.0; }

FAILSLOW_FUNC double binomial_upper_tail(std::uint64_t k, std::uint64_t n, double p) noexcept;

/// P(X >= k) for X the marked items among n drawn without replacement from N of which K are
/// marked (scipy.stats.hypergeom(N, K, n).sf(k - 1)); 0 when k exceeds what can be drawn.
FAILSLOW_FUNC double hypergeometric_upper_tail(std::uint64_t k, std::uint64_t K, std::uint64_t n,
                                               std::uint64_t N) noexcept;

}  // namespace failslow::diagnose::detail

#if FAILSLOW_HEADER_ONLY
#include "failslow/diagnose/detail/impl/binomial_tail.ipp"
#endif
