// failslow/failslow.hpp -- umbrella header: every component that needs only the required
// dependencies (Eigen, Boost.Math, xtensor). Optional components (CUPTI collector, simdjson
// reader) have their own headers and targets.
#pragma once

#include "failslow/version.hpp"

#include "failslow/core/error.hpp"
#include "failslow/core/event.hpp"
#include "failslow/core/kernel_class.hpp"
#include "failslow/core/name_pattern.hpp"
#include "failslow/core/name_table.hpp"
#include "failslow/core/routing.hpp"
#include "failslow/core/topology.hpp"

#include "failslow/stats/bandwidth.hpp"
#include "failslow/stats/descriptive.hpp"
#include "failslow/stats/kde.hpp"
#include "failslow/stats/lognormal.hpp"
#include "failslow/stats/summary.hpp"
#include "failslow/stats/valleys.hpp"
#include "failslow/stats/w1_matrix.hpp"
#include "failslow/stats/wasserstein.hpp"
