// failslow/stats/impl/w1_matrix_rows.ipp -- the definitions of stats/w1_matrix_rows.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <cmath>
#include <cstddef>

#include "failslow/core/error.hpp"
#include "failslow/stats/w1_matrix_rows.hpp"

namespace failslow::stats::detail {

FAILSLOW_FUNC_DEF void check_quantile_rows(const double* q, std::size_t n, std::size_t k) {
  if (n == 0 || k == 0) throw invalid_argument("w1_matrix: no quantile vectors");
  for (std::size_t i = 0; i < n * k; ++i)
    if (!std::isfinite(q[i])) throw domain_error("w1_matrix: quantile vectors contain NaN or infinity");
}

}  // namespace failslow::stats::detail
