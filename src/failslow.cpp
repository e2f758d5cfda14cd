// src/failslow.cpp -- the separately compiled part of failslow (target failslow::compiled).
//
// Header-only is the default: every heavy function (Eigen decompositions, the Mahalanobis fit,
// the diagnosis) is a template, instantiated only in a translation unit that calls it. A large
// codebase that calls them from many files can compile them once instead, as with Boost.Asio's
// BOOST_ASIO_SEPARATE_COMPILATION: define FAILSLOW_SEPARATE_COMPILATION everywhere (linking
// failslow::compiled does) and the headers declare these instantiations `extern template`; this
// file holds their one definition, for the common types (double, Eigen::MatrixXd). Other types
// are still instantiated where they are used.
#ifndef FAILSLOW_SEPARATE_COMPILATION
#define FAILSLOW_SEPARATE_COMPILATION 1
#endif

#include "failslow/detect/ewma_design.hpp"
#include "failslow/detect/mahalanobis.hpp"

namespace failslow::detect {
template double chi2_quantile<double>(double, double);
template double chi2_sf<double>(double, double);
template double mahalanobis_threshold<double>(Eigen::Index, Eigen::Index, double, outlier_threshold);
template double in_sample_false_alarm_rate<double>(Eigen::Index, Eigen::Index, double);
template mahalanobis_model fit_mahalanobis<Eigen::MatrixXd>(const Eigen::MatrixBase<Eigen::MatrixXd>&,
                                                            const mahalanobis_options&);
template outlier_report detect_outlier_workers<Eigen::MatrixXd>(const Eigen::MatrixBase<Eigen::MatrixXd>&,
                                                                const mahalanobis_options&);
template double ewma_arl<double>(double, double, double, std::size_t);
template double ewma_limit_for_arl<double>(double, double, std::size_t);
}  // namespace failslow::detect
