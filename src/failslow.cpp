// src/failslow.cpp -- the separately compiled part of failslow (target failslow::compiled).
//
// Header-only is the default (core/compile_mode.hpp). A large codebase can compile the
// definitions once instead, as with Boost.Asio's BOOST_ASIO_SEPARATE_COMPILATION: define
// FAILSLOW_SEPARATE_COMPILATION everywhere (linking failslow::compiled does) and the headers
// declare their functions without reading their definitions (<area>/impl/*.ipp); this file
// compiles every definition once, as ordinary functions, and the heavy templates on the common
// types (double, Eigen::MatrixXd), which the headers declare `extern template` in that mode.
// Other types are still instantiated where they are used. Every public header but the optional
// components' (CUPTI, MPI, simdjson: their own targets) is included here; CMakeLists.txt checks it.
#ifndef FAILSLOW_SEPARATE_COMPILATION
#define FAILSLOW_SEPARATE_COMPILATION 1
#endif
#define FAILSLOW_BUILDING_LIBRARY 1

#include "failslow/collect/buffer_pool.hpp"
#include "failslow/collect/clock_anchor.hpp"
#include "failslow/collect/flight_recorder.hpp"
#include "failslow/collect/record_sink.hpp"
#include "failslow/collect/step_windows.hpp"
#include "failslow/compress/baselines.hpp"
#include "failslow/compress/codec.hpp"
#include "failslow/compress/fidelity.hpp"
#include "failslow/compress/merge.hpp"
#include "failslow/compress/trace_windows.hpp"
#include "failslow/compress/window_compressor.hpp"
#include "failslow/compress/window_summary.hpp"
#include "failslow/core/compile_mode.hpp"
#include "failslow/core/dense_array.hpp"
#include "failslow/core/error.hpp"
#include "failslow/core/event.hpp"
#include "failslow/core/kernel_class.hpp"
#include "failslow/core/launch_shape.hpp"
#include "failslow/core/name_pattern.hpp"
#include "failslow/core/name_table.hpp"
#include "failslow/core/parallel_for.hpp"
#include "failslow/core/report.hpp"
#include "failslow/core/routing.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/detect/binseg.hpp"
#include "failslow/detect/bocpd.hpp"
#include "failslow/detect/chart.hpp"
#include "failslow/detect/cusum.hpp"
#include "failslow/detect/ewma.hpp"
#include "failslow/detect/ewma_design.hpp"
#include "failslow/detect/fdr.hpp"
#include "failslow/detect/mahalanobis.hpp"
#include "failslow/detect/mahalanobis_rows.hpp"
#include "failslow/detect/pelt.hpp"
#include "failslow/detect/ratio_gate.hpp"
#include "failslow/detect/robust_score.hpp"
#include "failslow/detect/run_rules.hpp"
#include "failslow/detect/segment_cost.hpp"
#include "failslow/diagnose/diagnose.hpp"
#include "failslow/diagnose/job_model.hpp"
#include "failslow/diagnose/l1_windows.hpp"
#include "failslow/diagnose/l2_stragglers.hpp"
#include "failslow/diagnose/l3_degraded.hpp"
#include "failslow/diagnose/l4_host.hpp"
#include "failslow/diagnose/l4_slow_host.hpp"
#include "failslow/diagnose/l4_waits.hpp"
#include "failslow/diagnose/load_job.hpp"
#include "failslow/diagnose/model_from_summaries.hpp"
#include "failslow/diagnose/roles.hpp"
#include "failslow/io/analyzer_context.hpp"
#include "failslow/io/csv_reader.hpp"
#include "failslow/io/diagnosis_figures.hpp"
#include "failslow/io/figure.hpp"
#include "failslow/io/html_report.hpp"
#include "failslow/io/kineto_reader.hpp"
#include "failslow/io/nsys_reader.hpp"
#include "failslow/io/output_file.hpp"
#include "failslow/io/perfetto_trace.hpp"
#include "failslow/io/prometheus.hpp"
#include "failslow/io/report_json.hpp"
#include "failslow/io/report_text.hpp"
#include "failslow/io/svg_heatmap.hpp"
#include "failslow/io/svg_series.hpp"
#include "failslow/io/svg_w1_matrix.hpp"
#include "failslow/io/trace_data.hpp"
#include "failslow/io/value_reader.hpp"
#include "failslow/sim/job.hpp"
#include "failslow/sim/kernels.hpp"
#include "failslow/sim/kineto_writer.hpp"
#include "failslow/sim/scenario.hpp"
#include "failslow/sim/score.hpp"
#include "failslow/sim/simulator.hpp"
#include "failslow/sim/summaries.hpp"
#include "failslow/sim/timeline.hpp"
#include "failslow/sim/truth.hpp"
#include "failslow/stats/bandwidth.hpp"
#include "failslow/stats/descriptive.hpp"
#include "failslow/stats/kde.hpp"
#include "failslow/stats/lognormal.hpp"
#include "failslow/stats/quantile_grid.hpp"
#include "failslow/stats/summary.hpp"
#include "failslow/stats/valleys.hpp"
#include "failslow/stats/w1_matrix.hpp"
#include "failslow/stats/w1_matrix_rows.hpp"
#include "failslow/stats/wasserstein.hpp"
#include "failslow/trace/clock_align.hpp"
#include "failslow/trace/collective_match.hpp"
#include "failslow/trace/idle.hpp"
#include "failslow/trace/load_trace_set.hpp"
#include "failslow/trace/pg_topology.hpp"
#include "failslow/trace/simhash.hpp"
#include "failslow/trace/step_breakdown.hpp"
#include "failslow/trace/steps.hpp"
#include "failslow/trace/trace_set.hpp"
#include "failslow/trace/tree.hpp"
#include "failslow/version.hpp"

namespace failslow::detect {
template double chi2_quantile<double>(double, double);
template double chi2_sf<double>(double, double);
template double mahalanobis_threshold<double>(std::ptrdiff_t, std::ptrdiff_t, double, outlier_threshold);
template double in_sample_false_alarm_rate<double>(std::ptrdiff_t, std::ptrdiff_t, double);
template outlier_report detect_outlier_workers<Eigen::MatrixXd>(const Eigen::MatrixBase<Eigen::MatrixXd>&,
                                                                const mahalanobis_options&);
template double ewma_arl<double>(double, double, double, std::size_t);
template double ewma_limit_for_arl<double>(double, double, std::size_t);
}  // namespace failslow::detect
