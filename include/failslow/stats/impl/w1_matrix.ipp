// failslow/stats/impl/w1_matrix.ipp -- the definitions of stats/w1_matrix.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include "failslow/core/error.hpp"
#include "failslow/stats/w1_matrix.hpp"

namespace failslow::stats::detail {

FAILSLOW_INLINE void check_quantile_matrix(const quantile_matrix& q) {
  if (q.rows() == 0 || q.cols() == 0) throw invalid_argument("w1_matrix: no quantile vectors");
  if (!q.allFinite()) throw domain_error("w1_matrix: quantile vectors contain NaN or infinity");
}

}  // namespace failslow::stats::detail
