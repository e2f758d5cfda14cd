// failslow/compress/impl/window_compressor.ipp -- the definitions of compress/window_compressor.hpp: included by that
// header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include "failslow/compress/window_compressor.hpp"
#include "failslow/stats/valleys.hpp"

namespace failslow::compress {

FAILSLOW_FUNC_DEF stats::valley_options compressor_config::default_clustering() {
  stats::valley_options o;
  o.kde.grid_points = 64;
  o.kde.max_grid_points = 4096;
  o.kde.widen_bandwidth = true;  // a far outlier must not make a window close fail
  o.kde.bandwidth.rule = stats::bandwidth_rule::robust_rule_of_thumb;
  o.min_depth = 0.3;
  o.min_count = 1;
  o.min_fraction = 0;
  return o;
}

}  // namespace failslow::compress
