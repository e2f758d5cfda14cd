// failslow/detect/impl/segment_cost.ipp -- the definitions of detect/segment_cost.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/detect/segment_cost.hpp"
#include "failslow/stats/descriptive.hpp"

namespace failslow::detect {

FAILSLOW_FUNC_DEF cost_model parse_cost_model(std::string_view s) {
  std::string list;
  for (std::size_t i = 0; i < cost_model_count; ++i) {
    const auto m = static_cast<cost_model>(i);
    if (to_string(m) == s) return m;
    list += (list.empty() ? "" : " or ") + std::string(to_string(m));
  }
  throw invalid_argument("unknown cost model '" + std::string(s) + "' (expected " + list + ")");
}

FAILSLOW_FUNC_DEF penalty parse_penalty(std::string_view s) {
  if (s == to_string(penalty_kind::bic)) return penalty::bic();
  if (s == to_string(penalty_kind::mbic)) return penalty::mbic();
  const std::string text(s);
  std::size_t used = 0;
  double beta = -1;
  try {
    beta = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size() || !(beta >= 0) || !std::isfinite(beta))
    throw invalid_argument("unknown penalty '" + text + "' (expected mbic, bic or a number >= 0)");
  return penalty::fixed(beta);
}

FAILSLOW_FUNC_DEF segment segment_cost::describe(std::size_t begin, std::size_t end) const noexcept {
  const double m = static_cast<double>(end - begin);
  const double s1 = s1_[end] - s1_[begin];
  const double rss = std::max(0.0, (s2_[end] - s2_[begin]) - s1 * s1 / m);
  return segment{begin, end, centre_ + scale_ * s1 / m, scale_ * std::sqrt(rss / m)};
}

FAILSLOW_FUNC_DEF changepoint_result segment_cost::make_result(std::vector<std::size_t> changes,
                                                               std::uint64_t evaluations) const {
  changepoint_result r;
  r.changes = std::move(changes);
  r.penalty = beta_;
  r.sigma = model_ == cost_model::normal_mean ? sigma_ : 0.0;
  r.cost_evaluations = evaluations;
  std::size_t b = 0;
  double total = 0.0;
  for (std::size_t k = 0; k <= r.changes.size(); ++k) {
    const std::size_t e = k < r.changes.size() ? r.changes[k] : size();
    r.segments.push_back(describe(b, e));
    total += (*this)(b, e);
    b = e;
  }
  r.cost = total + beta_ * static_cast<double>(r.changes.size());
  return r;
}

FAILSLOW_FUNC_DEF void segment_cost::init(const changepoint_options& o) {
  const std::size_t n = raw_.size();
  if (n == 0) throw invalid_argument("change points: empty series");
  for (double v : raw_)
    if (!std::isfinite(v)) throw domain_error("change points: series contains NaN or infinity");
  if (o.min_segment == 0) throw invalid_argument("change points: min_segment must be >= 1");
  if (o.model == cost_model::normal_meanvar && o.min_segment < 2)
    throw invalid_argument("change points: normal_meanvar needs min_segment >= 2");
  if (!(o.sigma >= 0.0) || !std::isfinite(o.sigma)) throw invalid_argument("change points: sigma must be >= 0");
  if (!(o.variance_floor >= 0.0)) throw invalid_argument("change points: variance_floor must be >= 0");
  const double p = model_ == cost_model::normal_mean ? 1.0 : 2.0;
  const double logn = std::log(static_cast<double>(n));
  switch (o.pen.kind) {
    case penalty_kind::bic:
      beta_ = (p + 1.0) * logn;
      break;
    case penalty_kind::mbic:
      beta_ = (p + 1.0) * logn;
      mbic_ = true;
      break;
    case penalty_kind::fixed:
      if (!(o.pen.value >= 0.0) || !std::isfinite(o.pen.value))
        throw invalid_argument("change points: a fixed penalty must be finite and >= 0");
      beta_ = o.pen.value;
      break;
  }
  k_ = mbic_ ? -std::max(0.0, std::log(static_cast<double>(n) / 4.0)) : 0.0;

  centre_ = stats::median(raw_);
  if (model_ == cost_model::normal_mean) {
    sigma_ = o.sigma > 0.0 ? o.sigma : estimate_sigma();
    scale_ = sigma_;
  } else {
    const double sd = stats::moments(raw_).stddev(0);
    scale_ = sd > 0.0 ? sd : 1.0;
    const double var_unit = sd > 0.0 ? 1.0 : 0.0;  // variance of the scaled series
    floor_ = o.variance_floor > 0.0 ? o.variance_floor / (scale_ * scale_) : 1e-8 * var_unit;
    if (!(floor_ > 0.0)) floor_ = 1e-300;
  }
  s1_.assign(n + 1, 0.0);
  s2_.assign(n + 1, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    const double z = (raw_[i] - centre_) / scale_;
    s1_[i + 1] = s1_[i] + z;
    s2_[i + 1] = s2_[i] + z * z;
  }
}

FAILSLOW_FUNC_DEF double segment_cost::estimate_sigma() const {
  if (raw_.size() < 3) return 1.0;
  std::vector<double> d(raw_.size() - 1);
  for (std::size_t i = 0; i + 1 < raw_.size(); ++i) d[i] = raw_[i + 1] - raw_[i];
  double s = stats::mad_normal(d) / std::sqrt(2.0);
  if (!(s > 0.0)) s = stats::iqr(d) / 1.3489795003921634 / std::sqrt(2.0);  // IQR of N(0, 1)
  if (!(s > 0.0)) s = stats::moments(d).stddev() / std::sqrt(2.0);
  return s > 0.0 && std::isfinite(s) ? s : 1.0;
}

}  // namespace failslow::detect
