// failslow/detect/robust_score.hpp -- cross-rank scores of one quantity (a phase's or kernel's
// duration per rank): which ranks stand out, and how much the ranks disagree.
//
// Synopsis
//   robust_z_outliers(v, threshold, side)   Iglewicz-Hoaglin modified z-scores
//                                           z_i = 0.6745 (v_i - median) / MAD
//                                           (failslow::stats::modified_z_scores, with its fallback when
//                                           MAD = 0); flags |z| > threshold (3.5, Iglewicz & Hoaglin's
//                                           recommendation) on the chosen side. With at most half the
//                                           ranks slow the median and MAD stay put (50 % breakdown).
//   column_cv(m)                            the coefficient of variation (sd / |mean|,
//                                           failslow::stats::coefficient_of_variation) of each column of
//                                           a ranks x phases table (dense_array<double, 2> or an Eigen
//                                           matrix): the phase where the ranks disagree most (ARGUS L2)
//                                           has the largest CV.
//   relative_performance_scores(medians)    the per-rank score of NVIDIA's straggler detector
//                                           (nvidia-resiliency-ext, "relative performance score"):
//                                           score_i = reference / median_i, the reference being the
//                                           smallest per-rank median (the fastest rank); 1 is the fastest,
//                                           0.5 is twice as slow. Ranks below the threshold (0.75, its
//                                           default) are stragglers. Given per-rank samples instead, the
//                                           medians are failslow::stats::median's.
//   individual_performance_scores(current, best)  the same ratio against each rank's own best
//                                           (smallest) median so far.
//   The NVIDIA score is the baseline to compare the robust scores against: it is scale-free but
//   depends on the single fastest rank, and it flags nothing faster than 1 / threshold times the
//   fastest no matter how many ranks there are.
// Complexity: O(n) per call (O(n * m) for per-rank samples), column_cv O(ranks * phases).
// Errors: empty input throws failslow::invalid_argument; NaN/Inf throws failslow::domain_error;
//   medians <= 0 (relative scores) and a zero column mean (column_cv) throw failslow::domain_error;
//   a threshold <= 0 throws failslow::invalid_argument.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <iterator>
#include <type_traits>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/dense_array.hpp"
#include "failslow/core/error.hpp"
#include "failslow/detect/chart.hpp"
#include "failslow/stats/descriptive.hpp"

namespace failslow::detect {

struct robust_z_result {
  std::vector<double> z;             ///< modified z-score per value
  std::vector<std::size_t> flagged;  ///< indices beyond the threshold on the chosen side, ascending
  double median = 0.0;
  double mad = 0.0;  ///< unscaled MAD
};

template <class Range>
robust_z_result robust_z_outliers(const Range& values, double threshold = 3.5, chart_side side = chart_side::upper) {
  if (!(threshold > 0.0)) throw invalid_argument("robust_z_outliers: threshold must be > 0");
  robust_z_result r;
  std::vector<double> v;  // in double: stats::median of integers would round
  for (const auto& x : values) v.push_back(static_cast<double>(x));
  r.z = stats::modified_z_scores(v);  // checks empty / non-finite
  r.median = stats::median(v);
  r.mad = stats::mad(v);
  for (std::size_t i = 0; i < r.z.size(); ++i) {
    const double z = r.z[i];
    if ((side != chart_side::lower && z > threshold) || (side != chart_side::upper && z < -threshold))
      r.flagged.push_back(i);
  }
  return r;
}

namespace detail {
template <class M>
struct is_table : std::false_type {};
template <class T, class A>
struct is_table<dense_array<T, 2, A>> : std::true_type {};
}  // namespace detail

/// Coefficient of variation of each column of a table (e.g. ranks x phases): a
/// dense_array<double, 2> or any matrix with rows(), cols() and m(i, j), such as Eigen's (this
/// header does not include Eigen).
template <class Matrix>
std::vector<double> column_cv(const Matrix& m) {
  std::size_t rows = 0, cols = 0;
  if constexpr (detail::is_table<Matrix>::value) {
    rows = m.shape(0);
    cols = m.shape(1);
  } else {
    rows = static_cast<std::size_t>(m.rows());
    cols = static_cast<std::size_t>(m.cols());
  }
  if (rows == 0 || cols == 0) throw invalid_argument("column_cv: empty matrix");
  std::vector<double> out;
  out.reserve(cols);
  std::vector<double> col(rows);
  for (std::size_t j = 0; j < cols; ++j) {
    for (std::size_t i = 0; i < rows; ++i) col[i] = static_cast<double>(m(i, j));
    out.push_back(stats::coefficient_of_variation(col));
  }
  return out;
}

struct relative_score_result {
  std::vector<double> scores;           ///< reference / median_i, in (0, 1]
  std::vector<std::size_t> stragglers;  ///< ranks with score < threshold, ascending
  double reference = 0.0;               ///< the smallest median
  std::size_t reference_rank = 0;       ///< the rank that has it (the first if tied)
};

namespace detail {
FAILSLOW_FUNC relative_score_result score_against(const std::vector<double>& medians,
                                                  const std::vector<double>& reference, double threshold);
FAILSLOW_FUNC void check_medians(const std::vector<double>& m, const char* who);
}  // namespace detail

/// NVIDIA straggler detector's relative score from per-rank medians.
template <class Range>
relative_score_result relative_performance_scores(const Range& medians, double threshold = 0.75) {
  if (!(threshold > 0.0)) throw invalid_argument("relative_performance_scores: threshold must be > 0");
  std::vector<double> m;
  for (const auto& v : medians) m.push_back(static_cast<double>(v));
  detail::check_medians(m, "relative_performance_scores");
  const auto it = std::min_element(m.begin(), m.end());
  relative_score_result r = detail::score_against(m, std::vector<double>(m.size(), *it), threshold);
  r.reference = *it;
  r.reference_rank = static_cast<std::size_t>(std::distance(m.begin(), it));
  return r;
}

/// The same from per-rank samples (each rank's median by failslow::stats::median).
template <class T>
relative_score_result relative_performance_scores_from_samples(const std::vector<std::vector<T>>& samples,
                                                               double threshold = 0.75) {
  std::vector<double> medians, v;
  for (const auto& s : samples) {
    v.assign(s.begin(), s.end());  // in double: stats::median of integers would round
    medians.push_back(stats::median(v));
  }
  return relative_performance_scores(medians, threshold);
}

/// Per-rank score against each rank's own best (smallest) median: best_i / current_i.
template <class Range1, class Range2>
relative_score_result individual_performance_scores(const Range1& current, const Range2& best,
                                                    double threshold = 0.75) {
  if (!(threshold > 0.0)) throw invalid_argument("individual_performance_scores: threshold must be > 0");
  std::vector<double> c, b;
  for (const auto& v : current) c.push_back(static_cast<double>(v));
  for (const auto& v : best) b.push_back(static_cast<double>(v));
  if (c.size() != b.size()) throw invalid_argument("individual_performance_scores: sizes differ");
  detail::check_medians(c, "individual_performance_scores");
  detail::check_medians(b, "individual_performance_scores");
  return detail::score_against(c, b, threshold);
}

}  // namespace failslow::detect

#if FAILSLOW_HEADER_ONLY
#include "failslow/detect/impl/robust_score.ipp"
#endif
