// failslow/diagnose/detail/binomial_tail.hpp -- P(X >= k) for X ~ Binomial(n, p): how unlikely
// it is that a rank is elevated in k of its n steps when its peers are elevated at rate p; and
// the Jeffreys estimate of that rate from the peers' cells.
//
// Sums the terms from k up in log space (lgamma), starting from the largest, so tails down to
// 1e-300 keep their relative precision; O(n - k). Checked against scipy.stats.binom.sf
// (tests/reference/gen_diagnose_fixtures.py) to 1e-10 relative.
#pragma once

#include <cstdint>

#include "failslow/core/compile_mode.hpp"

namespace failslow::diagnose::detail {

/// The Jeffreys estimate (k + 1/2) / (n + 1) of a rate seen in k of n cells, 0 when n = 0: the
/// rate the binomial tail is taken at (0 in 48 cells is not known to be below 1 %).
inline double jeffreys_rate(double k, double n) noexcept { return n > 0 ? (k + 0.5) / (n + 1) : 0.0; }

FAILSLOW_FUNC double binomial_upper_tail(std::uint64_t k, std::uint64_t n, double p) noexcept;

}  // namespace failslow::diagnose::detail

#if FAILSLOW_HEADER_ONLY
#include "failslow/diagnose/detail/impl/binomial_tail.ipp"
#endif
