// failslow/failslow.hpp -- umbrella header: every component that needs no library beyond the
// standard one. The three headers built on Eigen -- stats/w1_matrix.hpp and
// detect/mahalanobis.hpp (the Eigen interfaces of stats/w1_matrix_rows.hpp and
// detect/mahalanobis_rows.hpp, which are here) and detect/ewma_design.hpp (a dense LU) -- are
// included by name or all at once with failslow/eigen.hpp, so that this include does not parse
// Eigen (about a fifth of its compile memory, issue 22). Optional components (CUPTI collector,
// MPI gathering, simdjson reader) have their own headers and targets.
#pragma once

#include "failslow/version.hpp"

#include "failslow/core/error.hpp"
#include "failslow/core/event.hpp"
#include "failslow/core/kernel_class.hpp"
#include "failslow/core/name_pattern.hpp"
#include "failslow/core/name_table.hpp"
#include "failslow/core/report.hpp"
#include "failslow/core/routing.hpp"
#include "failslow/core/topology.hpp"

#include "failslow/stats/bandwidth.hpp"
#include "failslow/stats/descriptive.hpp"
#include "failslow/stats/kde.hpp"
#include "failslow/stats/lognormal.hpp"
#include "failslow/stats/summary.hpp"
#include "failslow/stats/valleys.hpp"
#include "failslow/stats/w1_matrix_rows.hpp"
#include "failslow/stats/wasserstein.hpp"

#include "failslow/detect/binseg.hpp"
#include "failslow/detect/bocpd.hpp"
#include "failslow/detect/chart.hpp"
#include "failslow/detect/cusum.hpp"
#include "failslow/detect/ewma.hpp"
#include "failslow/detect/fdr.hpp"
#include "failslow/detect/mahalanobis_rows.hpp"
#include "failslow/detect/pelt.hpp"
#include "failslow/detect/ratio_gate.hpp"
#include "failslow/detect/robust_score.hpp"
#include "failslow/detect/run_rules.hpp"
#include "failslow/detect/segment_cost.hpp"

#include "failslow/io/report_json.hpp"
#include "failslow/io/report_text.hpp"

#include "failslow/compress/codec.hpp"
#include "failslow/compress/fidelity.hpp"
#include "failslow/compress/merge.hpp"
#include "failslow/compress/trace_windows.hpp"
#include "failslow/compress/window_compressor.hpp"
#include "failslow/compress/window_summary.hpp"

#include "failslow/trace/clock_align.hpp"
#include "failslow/trace/idle.hpp"
#include "failslow/trace/load_trace_set.hpp"
#include "failslow/trace/pg_topology.hpp"
#include "failslow/trace/simhash.hpp"
#include "failslow/trace/step_breakdown.hpp"
#include "failslow/trace/steps.hpp"
#include "failslow/trace/tree.hpp"

#include "failslow/diagnose/diagnose.hpp"
#include "failslow/diagnose/job_model.hpp"
#include "failslow/diagnose/l1_windows.hpp"
#include "failslow/diagnose/l2_stragglers.hpp"
#include "failslow/diagnose/load_job.hpp"
#include "failslow/diagnose/model_from_summaries.hpp"
#include "failslow/diagnose/roles.hpp"

#include "failslow/sim/job.hpp"
#include "failslow/sim/kernels.hpp"
#include "failslow/sim/kineto_writer.hpp"
#include "failslow/sim/scenario.hpp"
#include "failslow/sim/score.hpp"
#include "failslow/sim/simulator.hpp"
#include "failslow/sim/summaries.hpp"
#include "failslow/sim/timeline.hpp"
#include "failslow/sim/truth.hpp"
