// failslow/eigen.hpp -- the umbrella header (failslow/failslow.hpp) and the headers built on
// Eigen: W1 matrices as Eigen matrices (stats/w1_matrix.hpp), the Mahalanobis outlier test on
// Eigen matrices (detect/mahalanobis.hpp) and the EWMA chart design (detect/ewma_design.hpp).
// Including it parses Eigen's Core and LU modules (bench/README.md: what an #include costs).
#pragma once

#include "failslow/failslow.hpp"

#include "failslow/detect/ewma_design.hpp"
#include "failslow/detect/mahalanobis.hpp"
#include "failslow/stats/w1_matrix.hpp"
