// failslow/sim/truth.hpp -- the ground truth of a simulated job.
//
// Synopsis
//   struct truth: what a diagnosis should find in a simulated job, as written to truth.json
//   (schema "failslow.truth/1", by the command-line tool) and read by the scorer:
//     scenario, seed, severity, noise     how it was generated
//     sizes, order, world_size            the layout (core/topology.hpp)
//     first_step, last_step               ProfilerStep numbers of the traces
//     schedule, microbatches, layers_per_stage
//     faults                              the injected faults (scenario.hpp): kind, ranks,
//                                         group ("dp:3", "tp:0", "stage:2"), steps, factor,
//                                         stall, transient, kernels, phase, description
//     clock_offsets_ns                    per rank: its clock minus the true clock
//   healthy() is true when there are no faults. faulty_ranks() lists the ranks any fault names.
// Complexity: faulty_ranks O(sum of fault sizes * log).
// Errors: none.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/sim/scenario.hpp"

namespace failslow::sim {

struct truth {
  std::string scenario_name;
  std::uint64_t seed = 0;
  double severity = 1;
  double noise = 1;
  parallel_sizes sizes;
  std::string order = std::string(topology::default_order);
  int world_size = 1;
  std::int64_t first_step = 0;
  std::int64_t last_step = 0;
  std::string schedule = "1f1b";
  int microbatches = 1;
  int layers_per_stage = 1;
  std::vector<fault> faults;
  std::vector<std::int64_t> clock_offsets_ns;

  bool healthy() const noexcept { return faults.empty(); }

  /// Ranks named by any fault, ascending, without repeats.
  FAILSLOW_FUNC std::vector<int> faulty_ranks() const;
};

}  // namespace failslow::sim

#if FAILSLOW_HEADER_ONLY
#include "failslow/sim/impl/truth.ipp"
#endif
