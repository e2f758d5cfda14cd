// python/src/stats_detect.cpp -- the statistics (valley clustering, KDE, W1, W1 matrices,
// lognormal reconstruction) and the detectors (EWMA, PELT, Mahalanobis, Benjamini-Hochberg)
// of failslow._core. Each binding reads numpy arrays in place where the C++ function takes a
// pointer or iterator range, and computes with the GIL released.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "failslow/detect/ewma.hpp"
#include "failslow/detect/fdr.hpp"
#include "failslow/detect/mahalanobis.hpp"
#include "failslow/detect/pelt.hpp"
#include "failslow/stats/kde.hpp"
#include "failslow/stats/lognormal.hpp"
#include "failslow/stats/summary.hpp"
#include "failslow/stats/valleys.hpp"
#include "failslow/stats/w1_matrix.hpp"
#include "failslow/stats/wasserstein.hpp"

namespace failslow_py {
namespace {

namespace st = failslow::stats;
namespace dt = failslow::detect;

/// A [begin, end) range over doubles in place, for the C++ functions that take a range.
struct doubles_range {
  const double* first;
  const double* last;
  const double* begin() const noexcept { return first; }
  const double* end() const noexcept { return last; }
};

doubles_range range_of(const doubles_view& v) { return {v.data, v.data + v.size}; }

st::bandwidth_spec bandwidth_of(const py::object& b) {
  if (py::isinstance<py::str>(b)) return st::parse_bandwidth(b.cast<std::string>());
  return st::bandwidth_spec::fixed(b.cast<double>());
}

st::kde_scale scale_of(const std::string& s) {
  return choice(s, "scale", {"log", "linear"}) == "log" ? st::kde_scale::log : st::kde_scale::linear;
}

py::dict summary_dict(const st::cluster_summary& c) {
  py::dict d;
  d["count"] = c.count;
  d["sum"] = c.sum;
  d["min"] = c.min;
  d["max"] = c.max;
  d["mean"] = c.mean;
  d["variance"] = c.variance;
  d["p50"] = c.p50;
  d["p90"] = c.p90;
  d["p99"] = c.p99;
  return d;
}

py::dict component_dict(const st::lognormal_component& c) {
  py::dict d;
  d["weight"] = c.weight;
  d["mu"] = c.mu;
  d["sigma"] = c.sigma;
  d["point"] = c.point;
  d["lo"] = c.lo;
  d["hi"] = c.hi;
  return d;
}

st::lognormal_component component_of(const py::dict& d) {
  st::lognormal_component c;
  c.weight = d.contains("weight") ? d["weight"].cast<double>() : 1.0;
  c.mu = d["mu"].cast<double>();
  c.sigma = d.contains("sigma") ? d["sigma"].cast<double>() : 0.0;
  if (!(c.sigma >= 0) || !std::isfinite(c.sigma))
    throw failslow::invalid_argument("lognormal component: sigma must be >= 0 and finite");
  c.point = d.contains("point") ? d["point"].cast<double>() : std::exp(c.mu);
  c.lo = d.contains("lo") ? d["lo"].cast<double>() : 0.0;
  c.hi = d.contains("hi") ? d["hi"].cast<double>() : std::numeric_limits<double>::infinity();
  return c;
}

st::cluster_summary cluster_of(const py::dict& d) {
  st::cluster_summary c;
  c.count = d["count"].cast<std::uint64_t>();
  c.p50 = d["p50"].cast<double>();
  c.p99 = d["p99"].cast<double>();
  c.min = d.contains("min") ? d["min"].cast<double>() : 0.0;
  c.max = d.contains("max") ? d["max"].cast<double>() : std::numeric_limits<double>::infinity();
  return c;
}

// f applied to every element of a float64 array, into a new array of the same shape.
template <class F>
py::array_t<double> map_values(const array_in& x, F&& f) {
  py::array_t<double> out(std::vector<py::ssize_t>(x.shape(), x.shape() + x.ndim()));
  const double* in = x.data();
  double* o = out.mutable_data();
  const auto n = static_cast<std::size_t>(x.size());
  py::gil_scoped_release release;
  for (std::size_t i = 0; i < n; ++i) o[i] = f(in[i]);
  return out;
}

py::array_t<bool> bool_array(std::vector<std::uint8_t>&& v) {
  auto* owned = new std::vector<std::uint8_t>(std::move(v));
  py::capsule free_it(owned, [](void* p) { delete static_cast<std::vector<std::uint8_t>*>(p); });
  return py::array_t<bool>({static_cast<py::ssize_t>(owned->size())}, {py::ssize_t{1}},
                           reinterpret_cast<const bool*>(owned->data()), free_it);
}

template <class T>
py::array_t<std::int64_t> index_array(const std::vector<T>& v) {
  std::vector<std::int64_t> out(v.begin(), v.end());
  return to_numpy(std::move(out));
}

// ---- statistics -----------------------------------------------------------------------------

py::dict cluster(const array_in& x, const std::string& scale, const py::object& bandwidth, std::size_t grid_points,
                 double min_depth, double min_fraction, std::uint64_t min_count, bool labels) {
  const auto v = view_1d(x, "durations");
  st::valley_options opt;
  opt.kde.scale = scale_of(scale);
  opt.kde.bandwidth = bandwidth_of(bandwidth);
  opt.kde.grid_points = grid_points;
  opt.min_depth = min_depth;
  opt.min_fraction = min_fraction;
  opt.min_count = min_count;
  st::valley_clustering c;
  st::distribution_summary s;
  std::vector<std::uint32_t> label;
  {
    py::gil_scoped_release release;
    c = st::find_valleys(v.data, v.data + v.size, opt);
    std::vector<double> usable;
    usable.reserve(v.size);
    const bool linear = opt.kde.scale == st::kde_scale::linear;
    for (std::size_t i = 0; i < v.size; ++i)
      if (std::isfinite(v.data[i]) && (linear || v.data[i] > 0)) usable.push_back(v.data[i]);
    s = st::summarize(usable.begin(), usable.end(), c.boundaries);
    if (labels) label = st::assign_clusters(v.data, v.data + v.size, c);
  }
  py::dict out;
  out["scale"] = scale;
  out["bandwidth_rule"] = std::string(st::to_string(opt.kde.bandwidth.rule));
  out["bandwidth"] = c.density.bandwidth;
  out["grid_points"] = c.density.grid.points;
  out["values"] = v.size;
  out["used"] = c.density.used;
  py::dict skipped;
  skipped["nonfinite"] = c.density.skipped_nonfinite;
  skipped["nonpositive"] = c.density.skipped_nonpositive;
  out["skipped"] = skipped;
  out["boundaries"] = to_numpy(std::vector<double>(c.boundaries));
  py::list clusters;
  for (const auto& cs : s.clusters) {
    py::dict j = summary_dict(cs);
    if (cs.count && opt.kde.scale == st::kde_scale::log) {
      auto k = st::reconstruct_lognormal(cs);
      k.weight = static_cast<double>(cs.count) / static_cast<double>(s.count());
      py::dict ln;
      ln["mu"] = k.mu;
      ln["sigma"] = k.sigma;
      ln["weight"] = k.weight;
      j["lognormal"] = ln;
    }
    clusters.append(j);
  }
  out["clusters"] = clusters;
  out["overall"] = summary_dict(s.overall);
  if (labels) {
    std::vector<std::int64_t> l(label.size());
    for (std::size_t i = 0; i < l.size(); ++i)
      l[i] = label[i] == st::unassigned ? -1 : static_cast<std::int64_t>(label[i]);
    out["labels"] = to_numpy(std::move(l));
  }
  return out;
}

py::dict density(const array_in& x, const std::string& scale, const py::object& bandwidth, std::size_t grid_points) {
  const auto v = view_1d(x, "values");
  st::kde_options opt;
  opt.scale = scale_of(scale);
  opt.bandwidth = bandwidth_of(bandwidth);
  opt.grid_points = grid_points;
  st::density_estimate d;
  {
    py::gil_scoped_release release;
    d = st::estimate_density(v.data, v.data + v.size, opt);
  }
  py::dict out;
  out["scale"] = scale;
  out["bandwidth"] = d.bandwidth;
  out["grid"] = to_numpy(d.grid.values());
  out["density"] = to_numpy(std::move(d.density));
  out["used"] = d.used;
  out["skipped_nonfinite"] = d.skipped_nonfinite;
  out["skipped_nonpositive"] = d.skipped_nonpositive;
  return out;
}

py::array_t<double> kde(const array_in& x, double bandwidth, double lo, double hi, std::size_t points,
                        const std::optional<array_in>& weights, const std::string& method) {
  const auto xs = vector_1d(x, "values");
  std::vector<double> w;
  if (weights) w = vector_1d(*weights, "weights");
  const st::kde_grid grid{lo, hi, points};
  const bool exact = choice(method, "method", {"exact", "binned"}) == "exact";
  std::vector<double> f;
  {
    py::gil_scoped_release release;
    f = exact ? st::kde_exact(xs, weights ? &w : nullptr, bandwidth, grid)
              : st::kde_binned(xs, weights ? &w : nullptr, bandwidth, grid);
  }
  return to_numpy(std::move(f));
}

double w1(const array_in& u, const array_in& v, const std::optional<array_in>& uw, const std::optional<array_in>& vw,
          bool sorted) {
  if (sorted) {
    if (uw || vw) throw failslow::invalid_argument("w1: sorted=True takes no weights");
    const auto a = view_1d(u, "u"), b = view_1d(v, "v");
    for (const auto& s : {a, b})
      for (std::size_t i = 0; i < s.size; ++i)
        if (!std::isfinite(s.data[i]) || (i > 0 && s.data[i] < s.data[i - 1]))
          throw failslow::invalid_argument("w1: sorted=True needs finite ascending values");
    py::gil_scoped_release release;
    return st::wasserstein1_sorted(a.data, a.size, b.data, b.size);
  }
  const auto a = vector_1d(u, "u"), b = vector_1d(v, "v");
  std::vector<double> wa, wb;
  if (uw) wa = vector_1d(*uw, "u_weights");
  if (vw) wb = vector_1d(*vw, "v_weights");
  py::gil_scoped_release release;
  return st::wasserstein1(a, b, uw ? &wa : nullptr, vw ? &wb : nullptr);
}

py::array_t<double> w1_matrix(const py::object& x, unsigned threads) {
  if (py::isinstance<py::array>(x) && py::cast<py::array>(x).ndim() == 2) {
    const auto q = x.cast<array_in>();
    const Eigen::Map<const st::quantile_matrix> rows(q.data(), static_cast<Eigen::Index>(q.shape(0)),
                                                     static_cast<Eigen::Index>(q.shape(1)));
    Eigen::MatrixXd d;
    {
      py::gil_scoped_release release;
      d = st::w1_matrix_quantiles(st::quantile_matrix(rows), threads);  // the one copy: N K, against N^2 K / 2
    }
    return to_numpy(std::move(d));
  }
  std::vector<std::vector<double>> sets;
  for (const auto& item : x) sets.push_back(vector_1d(item.cast<array_in>(), "a sample set"));
  Eigen::MatrixXd d;
  {
    py::gil_scoped_release release;
    d = st::w1_matrix_samples(sets, threads);
  }
  return to_numpy(std::move(d));
}

py::array_t<double> quantile_vectors(const py::object& samples, std::size_t k) {
  if (k == 0) throw failslow::invalid_argument("quantile_vectors: k must be >= 1");
  std::vector<std::vector<double>> sets;
  for (const auto& item : samples) sets.push_back(vector_1d(item.cast<array_in>(), "a sample set"));
  if (sets.empty()) throw failslow::invalid_argument("quantile_vectors: no sample sets");
  py::array_t<double> out({static_cast<py::ssize_t>(sets.size()), static_cast<py::ssize_t>(k)});
  double* o = out.mutable_data();
  py::gil_scoped_release release;
  for (std::size_t i = 0; i < sets.size(); ++i) {
    auto& s = sets[i];
    if (s.empty()) throw failslow::invalid_argument("quantile_vectors: an empty sample set");
    for (double v : s)
      if (!std::isfinite(v)) throw failslow::domain_error("quantile_vectors: NaN or infinity in a sample set");
    std::sort(s.begin(), s.end());
    const auto q = st::quantile_vector_sorted(s.data(), s.size(), k);
    std::copy(q.begin(), q.end(), o + i * k);
  }
  return out;
}

// ---- detectors ------------------------------------------------------------------------------

py::dict ewma(const array_in& x, double lambda, double L, const std::string& side, const std::string& limits,
              const std::string& baseline, std::size_t warmup, std::optional<double> mu, std::optional<double> sigma,
              std::size_t trend_run, const std::string& trend_on, std::uint32_t rules, bool reset_after_alarm) {
  const auto v = view_1d(x, "values");
  dt::ewma_options o;
  o.lambda = lambda;
  o.L = L;
  const std::string& s = choice(side, "side", {"upper", "lower", "both"});
  o.side = s == "upper" ? dt::chart_side::upper : s == "lower" ? dt::chart_side::lower : dt::chart_side::both;
  o.limits = choice(limits, "limits", {"asymptotic", "exact"}) == "exact" ? dt::ewma_limits::exact
                                                                          : dt::ewma_limits::asymptotic;
  const std::string& b = choice(baseline, "baseline", {"warmup_robust", "warmup", "running", "known"});
  o.baseline.mode = b == "known"     ? dt::baseline_mode::known
                    : b == "warmup"  ? dt::baseline_mode::warmup
                    : b == "running" ? dt::baseline_mode::running
                                     : dt::baseline_mode::warmup_robust;
  if (o.baseline.mode == dt::baseline_mode::known && (!mu || !sigma))
    throw failslow::invalid_argument("ewma: baseline='known' needs mu and sigma");
  if (mu) o.baseline.mu = *mu;
  if (sigma) o.baseline.sigma = *sigma;
  o.baseline.warmup = warmup;
  o.trend_run = trend_run;
  o.trend_on = choice(trend_on, "trend_on", {"observation", "statistic"}) == "statistic"
                   ? dt::trend_source::statistic
                   : dt::trend_source::observation;
  o.rules = rules;
  o.reset_after_alarm = reset_after_alarm;
  dt::ewma_chart<double> chart(o);
  const std::size_t n = v.size;
  std::vector<double> z(n), centre(n), ucl(n), lcl(n);
  std::vector<std::int8_t> state(n), direction(n);
  std::vector<std::uint8_t> trend(n), skipped(n);
  std::vector<std::uint32_t> fired(n);
  {
    py::gil_scoped_release release;
    for (std::size_t i = 0; i < n; ++i) {
      const auto p = chart.update(v.data[i]);
      z[i] = p.z;
      centre[i] = p.centre;
      ucl[i] = p.ucl;
      lcl[i] = p.lcl;
      state[i] = static_cast<std::int8_t>(p.state);
      direction[i] = static_cast<std::int8_t>(p.direction);
      trend[i] = p.trend ? 1 : 0;
      skipped[i] = p.skipped ? 1 : 0;
      fired[i] = p.rules_fired;
    }
  }
  py::dict out;
  out["z"] = to_numpy(std::move(z));
  out["centre"] = to_numpy(std::move(centre));
  out["ucl"] = to_numpy(std::move(ucl));
  out["lcl"] = to_numpy(std::move(lcl));
  out["state"] = to_numpy(std::move(state));
  out["direction"] = to_numpy(std::move(direction));
  out["trend"] = bool_array(std::move(trend));
  out["skipped"] = bool_array(std::move(skipped));
  out["rules_fired"] = to_numpy(std::move(fired));
  out["states"] = py::make_tuple("warming_up", "in_control", "trend_warning", "alarm");
  out["alarms"] = chart.alarms();
  out["warnings"] = chart.warnings();
  out["mu"] = chart.in_control().mu;
  out["sigma"] = chart.in_control().sigma;
  return out;
}

py::dict pelt(const array_in& y, const std::string& model, const py::object& penalty, std::size_t min_segment,
              double sigma, double variance_floor) {
  const auto v = view_1d(y, "series");
  dt::changepoint_options o;
  o.model = choice(model, "model", {"mean", "meanvar"}) == "mean" ? dt::cost_model::normal_mean
                                                                  : dt::cost_model::normal_meanvar;
  if (py::isinstance<py::str>(penalty)) {
    const std::string& p = choice(penalty.cast<std::string>(), "penalty", {"mbic", "bic"});
    o.pen = p == "bic" ? dt::penalty::bic() : dt::penalty::mbic();
  } else {
    o.pen = dt::penalty::fixed(penalty.cast<double>());
  }
  o.min_segment = min_segment;
  o.sigma = sigma;
  o.variance_floor = variance_floor;
  dt::changepoint_result r;
  {
    py::gil_scoped_release release;
    r = dt::pelt(range_of(v), o);
  }
  py::dict out;
  out["changes"] = index_array(r.changes);
  std::vector<std::int64_t> begin, end;
  std::vector<double> mean, sd;
  for (const auto& s : r.segments) {
    begin.push_back(static_cast<std::int64_t>(s.begin));
    end.push_back(static_cast<std::int64_t>(s.end));
    mean.push_back(s.mean);
    sd.push_back(s.sd);
  }
  py::dict seg;
  seg["begin"] = to_numpy(std::move(begin));
  seg["end"] = to_numpy(std::move(end));
  seg["mean"] = to_numpy(std::move(mean));
  seg["sd"] = to_numpy(std::move(sd));
  out["segments"] = seg;
  out["cost"] = r.cost;
  out["penalty"] = r.penalty;
  out["sigma"] = r.sigma;
  out["cost_evaluations"] = r.cost_evaluations;
  return out;
}

py::dict mahalanobis(const array_in& x, const std::string& estimator, double quantile, const std::string& threshold,
                     bool standardize, double mcd_support, std::size_t mcd_starts, std::uint64_t mcd_seed) {
  if (x.ndim() != 2) throw failslow::invalid_argument("mahalanobis: x must be two-dimensional (workers x features)");
  using row_major = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const Eigen::Map<const row_major> m(x.data(), static_cast<Eigen::Index>(x.shape(0)),
                                      static_cast<Eigen::Index>(x.shape(1)));
  dt::mahalanobis_options o;
  const std::string& e = choice(estimator, "estimator", {"ledoit_wolf", "sample", "mcd"});
  o.estimator = e == "sample" ? dt::covariance_estimator::sample
                : e == "mcd"  ? dt::covariance_estimator::mcd
                              : dt::covariance_estimator::ledoit_wolf;
  o.quantile = quantile;
  o.threshold = choice(threshold, "threshold", {"adaptive", "chi2"}) == "chi2" ? dt::outlier_threshold::chi2
                                                                               : dt::outlier_threshold::adaptive;
  o.standardize = standardize;
  o.mcd_support = mcd_support;
  o.mcd_starts = mcd_starts;
  o.mcd_seed = mcd_seed;
  dt::outlier_report r;
  {
    py::gil_scoped_release release;
    r = dt::detect_outlier_workers(m, o);
  }
  py::dict out;
  out["d2"] = to_numpy(std::move(r.d2));
  out["distance"] = to_numpy(std::move(r.distance));
  out["p_value"] = to_numpy(std::move(r.p_value));
  out["outliers"] = index_array(r.outliers);
  out["threshold"] = r.threshold;
  out["dof"] = r.model.dof();
  out["shrinkage"] = r.model.shrinkage;
  out["features"] = index_array(r.model.features);
  out["constant_features"] = index_array(r.model.constant_features);
  out["location"] = to_numpy(std::move(r.model.location));
  out["covariance"] = to_numpy(std::move(r.model.covariance));
  out["floored_eigenvalues"] = r.model.floored_eigenvalues;
  return out;
}

py::dict bh(const array_in& p, double q, const std::string& method) {
  const auto v = view_1d(p, "p_values");
  const auto m = choice(method, "method", {"bh", "by"}) == "by" ? dt::fdr_method::benjamini_yekutieli
                                                                : dt::fdr_method::benjamini_hochberg;
  dt::fdr_result r;
  {
    py::gil_scoped_release release;
    r = dt::false_discovery_control(range_of(v), q, m);
  }
  py::dict out;
  out["adjusted"] = to_numpy(std::move(r.adjusted));
  out["rejected"] = index_array(r.rejected);
  out["p_threshold"] = r.p_threshold;
  return out;
}

}  // namespace

void bind_stats_detect(py::module_& m) {
  using namespace pybind11::literals;
  m.def("cluster", &cluster, "durations"_a, py::kw_only(), "scale"_a = "log", "bandwidth"_a = "rule_of_thumb",
        "grid_points"_a = 1024, "min_depth"_a = 0.2, "min_fraction"_a = 0.01, "min_count"_a = 3, "labels"_a = false,
        R"(Valley clustering of durations (stats/valleys.hpp), as `failslow cluster` prints it.

The density f of ln x (scale='log', default) or x is a Gaussian KDE with bandwidth h (a rule:
'rule_of_thumb' h = 1.06 s n^-1/5, 'robust_rule_of_thumb', 'scott', 'silverman', 'isj', or a number
in the units of the transformed values) on grid_points points; a local minimum of f between two
peaks is a boundary when depth = 1 - f(valley) / min(neighbouring peaks) >= min_depth and each side
holds >= min_fraction of the mass and >= min_count values. Returns a dict: boundaries (ascending,
the durations' units), clusters (count, sum, min, max, mean, variance, p50, p90, p99 and, in log
scale, the lognormal reconstruction mu = ln p50, sigma = (ln p99 - ln p50) / z_0.99, weight),
overall, bandwidth, used and skipped counts (NaN/Inf; <= 0 in log scale), and with labels=True the
cluster of each value (-1 for skipped ones). O(n + G log G).)");
  m.def("density", &density, "values"_a, py::kw_only(), "scale"_a = "log", "bandwidth"_a = "rule_of_thumb",
        "grid_points"_a = 1024,
        R"(The KDE the clustering uses (stats/kde.hpp estimate_density): grid (in the transformed units,
ln x for scale='log'), density on it (binned, kernel cut at 6 h), bandwidth h, used/skipped counts.
In linear scale with a moments-only rule the values are read in place (no copy).)");
  m.def("kde", &kde, "values"_a, "bandwidth"_a, "lo"_a, "hi"_a, "points"_a, py::kw_only(), "weights"_a = py::none(),
        "method"_a = "exact",
        R"(Gaussian KDE f(g) = 1/(W h) sum_j w_j phi((g - x_j)/h) on `points` equispaced points lo..hi.
method='exact': the sum as written, O(n G) (equals scipy.stats.gaussian_kde with the same h);
'binned': linear binning and convolution, deviation ~0.032 (dx/h)^2 of the peak.)");
  m.def("w1", &w1, "u"_a, "v"_a, py::kw_only(), "u_weights"_a = py::none(), "v_weights"_a = py::none(),
        "sorted"_a = false,
        R"(Exact Wasserstein-1 distance W1 = integral |F_u(x) - F_v(x)| dx between two sample sets
(optionally weighted), in the samples' units; equals scipy.stats.wasserstein_distance.
sorted=True: both ascending and unweighted, read in place without sorting, O(n + m).)");
  m.def("w1_matrix", &w1_matrix, "x"_a, py::kw_only(), "threads"_a = 1,
        R"(N x N Wasserstein-1 matrix (symmetric, zero diagonal).
x a 2-D float64 array: rows are quantile vectors at u_k = (k + 1/2)/K (quantile_vectors), and
D(i, j) = mean_k |x_ik - x_jk| (scipy's cdist(x, x, 'cityblock') / K), O(N^2 K / 2).
x a list of 1-D arrays: exact W1 between the sample sets. threads: threads used (0: every core).)");
  m.def("quantile_vectors", &quantile_vectors, "samples"_a, py::kw_only(), "k"_a = 256,
        R"(Each sample set's quantiles at u_k = (k + 1/2)/K, k = 0..K-1, as the rows of an N x K array:
the input w1_matrix takes; W1 of two rows is within (range_a + range_b)/K of the exact W1.)");
  m.def(
      "reconstruct_lognormal",
      [](const py::dict& cluster) { return component_dict(st::reconstruct_lognormal(cluster_of(cluster))); },
      "cluster"_a,
      R"(A cluster summary (a dict with count, p50, p99 and optionally min, max) as a lognormal:
mu = ln p50, sigma = (ln p99 - ln p50) / z_0.99 (z_0.99 = 2.3263...), lo/hi = min/max; a point mass
(sigma = 0, point = p50) when p99 <= p50 or p50 <= 0. Returns dict(weight, mu, sigma, point, lo, hi).)");

  py::class_<st::lognormal_mixture>(m, "LognormalMixture", R"(A mixture of lognormal clusters (stats/lognormal.hpp):
F(x) = sum_c w_c Phi((ln x - mu_c) / sigma_c), optionally each component truncated to [lo, hi].)")
      .def(py::init([](const py::list& components, bool truncated) {
             std::vector<st::lognormal_component> c;
             for (const auto& d : components) c.push_back(component_of(d.cast<py::dict>()));
             return st::lognormal_mixture(std::move(c), truncated);
           }),
           "components"_a, py::kw_only(), "truncated"_a = false,
           "components: dicts with mu, sigma and optionally weight (normalised), point, lo, hi.")
      .def_static(
          "from_clusters",
          [](const py::list& clusters, bool truncated) {
            st::distribution_summary s;
            for (const auto& d : clusters) s.clusters.push_back(cluster_of(d.cast<py::dict>()));
            return st::lognormal_mixture::from_summary(s, truncated);
          },
          "clusters"_a, py::kw_only(), "truncated"_a = false,
          "The reconstruction of cluster summaries (as cluster() returns them), weights n_c / n.")
      .def_property_readonly("components",
                             [](const st::lognormal_mixture& mix) {
                               py::list l;
                               for (const auto& c : mix.components()) l.append(component_dict(c));
                               return l;
                             })
      .def_property_readonly("truncated", &st::lognormal_mixture::truncated)
      .def(
          "cdf",
          [](const st::lognormal_mixture& mix, const array_in& x) {
            return map_values(x, [&](double v) { return mix.cdf(v); });
          },
          "x"_a, "F(x), to a few ulps per component.")
      .def(
          "survival",
          [](const st::lognormal_mixture& mix, const array_in& x) {
            return map_values(x, [&](double v) { return mix.survival(v); });
          },
          "x"_a, "1 - F(x), accurate in the upper tail.")
      .def(
          "quantile",
          [](const st::lognormal_mixture& mix, const array_in& p) {
            return map_values(p, [&](double v) { return mix.quantile(v); });
          },
          "p"_a, "inf { x : F(x) >= p } by TOMS 748 in ln x (relative 1e-15); p outside [0, 1] is a ValueError.")
      .def(
          "quantile_vector",
          [](const st::lognormal_mixture& mix, std::size_t k) {
            std::vector<double> q;
            {
              py::gil_scoped_release release;
              q = st::quantile_vector(mix, k);
            }
            return to_numpy(std::move(q));
          },
          "k"_a = 256, "Q(u_k) at u_k = (k + 1/2)/K without root finding (~1e-5 relative): a row for w1_matrix.")
      .def(
          "w1",
          [](const st::lognormal_mixture& a, const st::lognormal_mixture& b) {
            py::gil_scoped_release release;
            return st::wasserstein1(a, b);
          },
          "other"_a, "W1 to another mixture: Gauss-Kronrod on ln x between breakpoints, relative error ~1e-9.");

  m.def("ewma", &ewma, "values"_a, py::kw_only(), "lam"_a = 0.2, "L"_a = 3.0, "side"_a = "both",
        "limits"_a = "asymptotic", "baseline"_a = "warmup_robust", "warmup"_a = 30, "mu"_a = py::none(),
        "sigma"_a = py::none(), "trend_run"_a = 5, "trend_on"_a = "observation", "rules"_a = 0,
        "reset_after_alarm"_a = false,
        R"(EWMA control chart over a series (detect/ewma.hpp, KAT's intra-worker detector).
z_t = lam x_t + (1 - lam) z_{t-1}, limits mu +- L sigma sqrt(lam / (2 - lam)) ('exact': times
sqrt(1 - (1 - lam)^(2i))); baseline from a warm-up ('warmup_robust' median / 1.4826 MAD of the
first `warmup` values, 'warmup' mean / sd, 'running', or 'known' mu and sigma); trend rule: trend_run
moves in one direction. Returns per value z, centre, ucl, lcl, state (codes into states:
warming_up, in_control, trend_warning, alarm), direction, trend, skipped, rules_fired, and the
alarm and warning counts and the final mu, sigma. NaN/Inf values are skipped and flagged.)");
  m.def("pelt", &pelt, "series"_a, py::kw_only(), "model"_a = "mean", "penalty"_a = "mbic", "min_segment"_a = 2,
        "sigma"_a = 0.0, "variance_floor"_a = 0.0,
        R"(Exact penalised change points by PELT (detect/pelt.hpp): minimises sum of segment costs +
beta per change; model 'mean' (normal, one sigma: given, or 0 to estimate it) or 'meanvar';
penalty 'mbic', 'bic' or a number beta. Returns changes (first index of each new segment),
segments (begin, end, mean, sd arrays), cost, penalty (beta used), sigma, cost_evaluations.)");
  m.def("mahalanobis", &mahalanobis, "x"_a, py::kw_only(), "estimator"_a = "ledoit_wolf", "quantile"_a = 0.99,
        "threshold"_a = "adaptive", "standardize"_a = true, "mcd_support"_a = 0.75, "mcd_starts"_a = 100,
        "mcd_seed"_a = 0x243f6a8885a308d3ull,
        R"(KAT's inter-worker detector (detect/mahalanobis.hpp): x is workers x features (read in place);
D^2_i = (x_i - mu)^T Sigma^-1 (x_i - mu) with (mu, Sigma) from 'ledoit_wolf' (default), 'sample'
(np.cov) or 'mcd' (FAST-MCD, robust); a worker is an outlier when D > sqrt(chi2_q(d)) (1 + 1/sqrt(N))
('adaptive') or sqrt(chi2_q(d)) ('chi2'). Returns d2, distance, p_value = P(chi2_d > D^2), outliers,
threshold, dof, shrinkage, features kept, constant_features, location, covariance.)");
  m.def("bh", &bh, "p_values"_a, py::kw_only(), "q"_a = 0.05, "method"_a = "bh",
        R"(Benjamini-Hochberg ('bh') or -Yekutieli ('by') false discovery control at level q
(detect/fdr.hpp): adjusted p-values p~_(i) = min_{j >= i} min(1, c p_(j) m / j) in input order
(scipy.stats.false_discovery_control), the rejected indices (p~ <= q) and the largest rejected p.)");
}

}  // namespace failslow_py
