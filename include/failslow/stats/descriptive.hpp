// failslow/stats/descriptive.hpp -- moments, quantiles and robust scale of a sample.
//
// Synopsis
//   running_moments<T>   count, sum, min, max, mean and variance, updated one value at a time
//                        with Welford's recurrence and merged with Chan et al.'s pairwise
//                        formula, so windows, threads and ranks combine without a second pass:
//                          delta = x - mean;  mean += delta / n;  M2 += delta * (x - mean)
//                          merge: M2 = M2a + M2b + delta^2 * na * nb / n
//                        Non-finite values are not added; they are counted in skipped().
//   quantile(r, p, m)    the p-quantile (0 <= p <= 1) of r by one of the Hyndman-Fan
//                        definitions numpy names; the default quantile_method::linear is
//                        numpy's default (Hyndman-Fan type 7):
//                          h = (n - 1) p,  Q = x_(floor h) + (h - floor h) (x_(floor h + 1) - x_(floor h))
//   quantiles(r, ps, m)  several quantiles with one sort
//   median, iqr (Q3 - Q1, linear), mad (median |x - median|, unscaled), mad_normal
//   (1.4826 * mad, consistent with sigma for normal data), coefficient_of_variation
//   (sample sd / mean), modified_z_scores (Iglewicz-Hoaglin 0.6745 (x - median) / MAD).
//   two_pass_moments(x, n) mean and variance of an array in memory by the corrected two-pass
//                        algorithm (vectorisable; what the batch components use).
//   Every function takes an iterator pair or a range; integer samples give double results.
// Complexity: running_moments O(1) per value; quantile O(n) (nth_element on a copy);
//   quantiles O(n log n); median/mad O(n); modified_z_scores O(n).
// Accuracy: running_moments (Welford) keeps the variance to about 1e-15 * |mean| / sd relative
//   (each value is rounded at its own magnitude: 7e-9 measured at mean 1e9, sd 1, where a
//   naive sum of squares loses every digit); quantiles are exact order statistics or one linear
//   interpolation between two of them (numpy's results to ~1 ulp).
// Errors: an empty sample throws failslow::invalid_argument; p outside [0, 1] or a NaN/Inf in
//   the sample throws failslow::domain_error (sorting NaN is undefined, so it is rejected up
//   front); coefficient_of_variation of a zero-mean sample throws failslow::domain_error.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/error.hpp"

namespace failslow::stats {

namespace detail {
// Distinguishes the iterator-pair overloads from the range overloads.
template <class T, class = void>
struct is_iterator : std::false_type {};
template <class T>
struct is_iterator<T, std::void_t<typename std::iterator_traits<T>::iterator_category>> : std::true_type {};
template <class It>
using if_iterator = std::enable_if_t<is_iterator<It>::value, int>;
template <class R>
using if_range = std::enable_if_t<!is_iterator<R>::value, int>;
// The type results are computed in: the value type if floating point, double otherwise
// (the median of {1, 2} is 1.5, not 1).
template <class It>
using real_of = std::conditional_t<std::is_floating_point_v<std::decay_t<decltype(*std::declval<It>())>>,
                                   std::decay_t<decltype(*std::declval<It>())>, double>;
}  // namespace detail

template <class T = double>
class running_moments {
  static_assert(std::is_floating_point_v<T>, "running_moments needs a floating-point type");

 public:
  using value_type = T;

  /// Adds x; returns false (and counts it in skipped()) when x is NaN or infinite.
  bool add(T x) noexcept {
    if (!std::isfinite(x)) {
      ++skipped_;
      return false;
    }
    ++n_;
    const T delta = x - mean_;
    mean_ += delta / static_cast<T>(n_);
    m2_ += delta * (x - mean_);
    sum_ += x;
    min_ = std::min(min_, x);
    max_ = std::max(max_, x);
    return true;
  }

  /// Combines another accumulator into this one (order-independent up to rounding).
  void merge(const running_moments& o) noexcept {
    skipped_ += o.skipped_;
    if (o.n_ == 0) return;
    if (n_ == 0) {
      const auto skipped = skipped_;
      *this = o;
      skipped_ = skipped;
      return;
    }
    const std::uint64_t n = n_ + o.n_;
    const T delta = o.mean_ - mean_;
    const T na = static_cast<T>(n_), nb = static_cast<T>(o.n_), nt = static_cast<T>(n);
    mean_ += delta * nb / nt;
    m2_ += o.m2_ + delta * delta * na * nb / nt;
    n_ = n;
    sum_ += o.sum_;
    min_ = std::min(min_, o.min_);
    max_ = std::max(max_, o.max_);
  }

  std::uint64_t count() const noexcept { return n_; }
  std::uint64_t skipped() const noexcept { return skipped_; }
  T sum() const noexcept { return sum_; }
  /// Mean; NaN when empty.
  T mean() const noexcept { return n_ ? mean_ : std::numeric_limits<T>::quiet_NaN(); }
  /// Smallest / largest value; NaN when empty.
  T min() const noexcept { return n_ ? min_ : std::numeric_limits<T>::quiet_NaN(); }
  T max() const noexcept { return n_ ? max_ : std::numeric_limits<T>::quiet_NaN(); }
  /// Variance with `ddof` delta degrees of freedom: M2 / (n - ddof); NaN when n <= ddof.
  T variance(unsigned ddof = 1) const noexcept {
    return n_ > ddof ? std::max(T(0), m2_) / static_cast<T>(n_ - ddof) : std::numeric_limits<T>::quiet_NaN();
  }
  T stddev(unsigned ddof = 1) const noexcept { return std::sqrt(variance(ddof)); }
  /// Sum of squared deviations from the mean (Welford's M2).
  T sum_of_squares() const noexcept { return m2_; }

 private:
  std::uint64_t n_ = 0, skipped_ = 0;
  T mean_ = 0, m2_ = 0, sum_ = 0;
  T min_ = std::numeric_limits<T>::infinity(), max_ = -std::numeric_limits<T>::infinity();
};

/// Mean and variance of an array in two passes (mean, then squared deviations): as accurate as
/// Welford and, without its per-value division, vectorisable; for batch data in memory.
struct array_moments {
  std::size_t count = 0;
  double mean = 0, variance = 0;  ///< variance with ddof = 1 (0 when count < 2)
  double min = 0, max = 0;
};

/// Two-pass moments of x[0..n); every value must be finite (checked: domain_error otherwise).
FAILSLOW_FUNC array_moments two_pass_moments(const double* x, std::size_t n);

/// Moments of [first, last) (non-finite values counted in skipped()).
template <class It, class T = double, detail::if_iterator<It> = 0>
running_moments<T> moments(It first, It last) {
  running_moments<T> m;
  for (; first != last; ++first) m.add(static_cast<T>(*first));
  return m;
}
template <class Range, class T = double, detail::if_range<Range> = 0>
running_moments<T> moments(const Range& r) {
  return moments<decltype(std::begin(r)), T>(std::begin(r), std::end(r));
}

/// The sample quantile definitions of numpy.quantile (Hyndman & Fan 1996 numbering).
enum class quantile_method {
  linear,           ///< HF7, numpy's default: h = (n-1)p, interpolate
  lower,            ///< x_(floor h) with h = (n-1)p
  higher,           ///< x_(ceil h)
  nearest,          ///< x_(round h), ties to the even index (numpy)
  midpoint,         ///< (lower + higher) / 2
  inverted_cdf,     ///< HF1: smallest x with F_n(x) >= p
  hazen,            ///< HF5: h = np + 1/2 (1-based), interpolate
  weibull,          ///< HF6: h = (n+1)p
  median_unbiased,  ///< HF8: h = (n + 1/3)p + 1/3, approximately median-unbiased for any distribution
  normal_unbiased,  ///< HF9: h = (n + 1/4)p + 3/8, unbiased for normal data
};
/// Number of quantile_method values (they are 0 .. quantile_method_count - 1).
inline constexpr std::size_t quantile_method_count = 10;

namespace detail {

inline void check_probability(double p) {
  if (!(p >= 0.0 && p <= 1.0)) throw domain_error("quantile: probability " + std::to_string(p) + " outside [0, 1]");
}

template <class T>
void check_finite_sample(const std::vector<T>& v, const char* what) {
  if (v.empty()) throw invalid_argument(std::string(what) + ": empty sample");
  for (const T& x : v)
    if (!std::isfinite(static_cast<double>(x)))
      throw domain_error(std::string(what) + ": sample contains NaN or infinity");
}

template <class T>
T lerp(T a, T b, double t) noexcept {
  // numpy's form: exact at both ends and monotone in t.
  const T d = b - a;
  return t < 0.5 ? a + d * static_cast<T>(t) : b - d * static_cast<T>(1.0 - t);
}

// Continuous Hyndman-Fan types 4..9: 1-based position h = n p + m, interpolated and clamped.
template <class T>
T continuous_quantile(const T* x, std::size_t n, double p, double m) {
  const double h = static_cast<double>(n) * p + m;  // 1-based
  if (h <= 1.0) return x[0];
  if (h >= static_cast<double>(n)) return x[n - 1];
  const double j = std::floor(h);
  const auto lo = static_cast<std::size_t>(j) - 1;
  return lerp(x[lo], x[lo + 1], h - j);
}

}  // namespace detail

/// p-quantile of an ascending sorted array of n >= 1 finite values (no checks of sortedness).
template <class T>
T quantile_sorted(const T* x, std::size_t n, double p, quantile_method method = quantile_method::linear) {
  if (n == 0) throw invalid_argument("quantile: empty sample");
  detail::check_probability(p);
  const double nd = static_cast<double>(n);
  const double h = (nd - 1.0) * p;  // 0-based position of the linear family
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const std::size_t hi = std::min(n - 1, lo + (h > static_cast<double>(lo) ? 1 : 0));
  switch (method) {
    case quantile_method::linear:
      return lo + 1 < n ? detail::lerp(x[lo], x[lo + 1], h - static_cast<double>(lo)) : x[lo];
    case quantile_method::lower:
      return x[lo];
    case quantile_method::higher:
      return x[hi];
    case quantile_method::midpoint:
      return x[lo] + (x[hi] - x[lo]) / T(2);
    case quantile_method::nearest: {
      const double r = std::nearbyint(h);  // default rounding mode: half to even, as numpy.around
      return x[std::min(n - 1, static_cast<std::size_t>(r))];
    }
    case quantile_method::inverted_cdf: {
      const double k = std::ceil(nd * p);  // 1-based
      return x[k <= 1.0 ? 0 : std::min(n - 1, static_cast<std::size_t>(k) - 1)];
    }
    case quantile_method::hazen:
      return detail::continuous_quantile(x, n, p, 0.5);
    case quantile_method::weibull:
      return detail::continuous_quantile(x, n, p, p);
    case quantile_method::median_unbiased:
      return detail::continuous_quantile(x, n, p, (p + 1.0) / 3.0);
    case quantile_method::normal_unbiased:
      return detail::continuous_quantile(x, n, p, p / 4.0 + 3.0 / 8.0);
  }
  return x[lo];
}

/// p-quantile of [first, last).
template <class It, detail::if_iterator<It> = 0>
auto quantile(It first, It last, double p, quantile_method method = quantile_method::linear) {
  using T = detail::real_of<It>;
  std::vector<T> v(first, last);
  detail::check_finite_sample(v, "quantile");
  std::sort(v.begin(), v.end());
  return quantile_sorted(v.data(), v.size(), p, method);
}
template <class Range, detail::if_range<Range> = 0>
auto quantile(const Range& r, double p, quantile_method method = quantile_method::linear) {
  return quantile(std::begin(r), std::end(r), p, method);
}

/// Several quantiles of [first, last) with one sort; results in the order of `ps`.
template <class It, class PRange, detail::if_iterator<It> = 0>
auto quantiles(It first, It last, const PRange& ps, quantile_method method = quantile_method::linear) {
  using T = detail::real_of<It>;
  std::vector<T> v(first, last);
  detail::check_finite_sample(v, "quantiles");
  std::sort(v.begin(), v.end());
  std::vector<T> out;
  for (double p : ps) out.push_back(quantile_sorted(v.data(), v.size(), p, method));
  return out;
}
template <class Range, class PRange, detail::if_range<Range> = 0>
auto quantiles(const Range& r, const PRange& ps, quantile_method method = quantile_method::linear) {
  return quantiles(std::begin(r), std::end(r), ps, method);
}

namespace detail {
// Median of a non-empty vector it may reorder (nth_element; averaged middle pair for even n);
// any allocator (the compressor's buffers).
template <class T, class Allocator>
T median_inplace(std::vector<T, Allocator>& v) {
  const std::size_t n = v.size(), mid = n / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const T upper = v[mid];
  if (n % 2 == 1) return upper;
  const T lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return lower + (upper - lower) / T(2);
}
}  // namespace detail

template <class It, detail::if_iterator<It> = 0>
auto median(It first, It last) {
  using T = detail::real_of<It>;
  std::vector<T> v(first, last);
  detail::check_finite_sample(v, "median");
  return detail::median_inplace(v);
}
template <class Range, detail::if_range<Range> = 0>
auto median(const Range& r) {
  return median(std::begin(r), std::end(r));
}

/// Median absolute deviation from the median (unscaled).
template <class It, detail::if_iterator<It> = 0>
auto mad(It first, It last) {
  using T = detail::real_of<It>;
  std::vector<T> v(first, last);
  detail::check_finite_sample(v, "mad");
  const T med = detail::median_inplace(v);
  for (T& x : v) x = std::abs(x - med);
  return detail::median_inplace(v);
}
template <class Range, detail::if_range<Range> = 0>
auto mad(const Range& r) {
  return mad(std::begin(r), std::end(r));
}

/// 1 / Phi^-1(3/4): scales the MAD to estimate sigma of normal data.
inline constexpr double mad_to_sigma = 1.482602218505602;

template <class Range>
auto mad_normal(const Range& r) {
  return mad(r) * static_cast<std::decay_t<decltype(*std::begin(r))>>(mad_to_sigma);
}

/// Interquartile range Q3 - Q1 (linear quantiles).
template <class Range>
auto iqr(const Range& r) {
  const double ps[] = {0.25, 0.75};
  const auto q = quantiles(r, ps);
  return q[1] - q[0];
}

/// Sample standard deviation / mean (ddof = 1).
template <class Range>
double coefficient_of_variation(const Range& r) {
  const auto m = moments(r);
  if (m.count() == 0) throw invalid_argument("coefficient_of_variation: empty sample");
  if (m.skipped() != 0) throw domain_error("coefficient_of_variation: sample contains NaN or infinity");
  if (m.mean() == 0.0) throw domain_error("coefficient_of_variation: mean is zero");
  return m.count() < 2 ? 0.0 : m.stddev() / std::abs(m.mean());
}

/// Iglewicz-Hoaglin modified z-scores 0.6745 (x - median) / MAD. When MAD = 0 (more than half
/// the values equal) the mean absolute deviation from the median scaled by 1.253314
/// (sqrt(pi/2)) replaces MAD / 0.6745; when that is 0 too, every score is 0.
template <class Range>
std::vector<double> modified_z_scores(const Range& r) {
  std::vector<double> v;
  for (const auto& x : r) v.push_back(static_cast<double>(x));
  detail::check_finite_sample(v, "modified_z_scores");
  std::vector<double> work = v;
  const double med = detail::median_inplace(work);
  for (double& x : work) x = std::abs(x - med);
  double mean_abs = 0;
  for (double d : work) mean_abs += d;
  mean_abs /= static_cast<double>(work.size());
  const double m = detail::median_inplace(work);
  double scale;  // the sigma estimate the deviation is divided by
  if (m > 0)
    scale = m / 0.6745;
  else if (mean_abs > 0)
    scale = 1.253314 * mean_abs;
  else
    scale = 0;
  for (double& x : v) x = scale > 0 ? (x - med) / scale : 0.0;
  return v;
}

}  // namespace failslow::stats

#if FAILSLOW_HEADER_ONLY
#include "failslow/stats/impl/descriptive.ipp"
#endif
