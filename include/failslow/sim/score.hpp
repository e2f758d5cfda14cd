// failslow/sim/score.hpp -- scores a diagnosis report against the truth of a simulated job.
//
// Synopsis
//   case_score score_case(truth, report, options)      one job: per fault and per finding
//   score_summary summarize(cases)                     per scenario and overall
//   report / finding are failslow::report / failslow::finding (core/report.hpp, schema
//   failslow.report/1); the command-line tool reads them from report.json (and the truth from
//   truth.json). The scorer reads world_size and the findings' levels, kinds, ranks, groups,
//   kernels and step ranges; it ignores scores, evidence, topology and notes.
//   Named ranks of a finding: its ranks plus the members of its group ("tp:k", "cp:k",
//   "ep:k", "dp:k" as core/topology.hpp numbers them, "stage:s").
//   A finding localises a fault when their step ranges overlap and the finding names one of
//   the fault's ranks in `ranks`, or names the fault's group (equal group strings).
//   Per fault: localised (some finding localises it); kernel right (faults that name
//   kernels: a localising finding's kernel is one of them; n/a otherwise); steps right (a
//   localising finding's first and last step are within step_tolerance of the fault's).
//   Per finding, exactly one verdict:
//     false positive   rotating_noise_as_straggler: kind "straggler" over at least
//                        persistent_min_steps steps, naming faulty ranks only through
//                        transient faults (GC pauses) -- noise reported as a persistent
//                        straggler (it localises nothing);
//                      healthy_run: an L2/L3 finding on a job without faults;
//                      healthy_ranks: it names ranks, none of them faulty;
//                      outside_fault_steps: it names faulty ranks but localises no fault
//                        (no overlap with their faults' steps)
//     true positive    it localises at least one fault
//     neutral          job-wide (names no rank: L1 slow windows) on a faulty job, or names
//                      faulty ranks only through a wider group it does not share with them
//   precision = TP / (TP + FP) (1 when there is neither), recall = localised / faults (1 for
//   a healthy job); kernel accuracy over the faults that name kernels, step accuracy over all.
// Complexity: O(findings * faults * (ranks + group size)).
// Errors: invalid_argument for a level other than L1..L4, first_step > last_step, a group
//   name that is malformed or outside the truth's layout, a rank outside the world, or a
//   report whose world_size (when > 0) differs from the truth's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/detail/enum_count.hpp"
#include "failslow/core/report.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/sim/truth.hpp"

namespace failslow::sim {

/// The report the scorer reads: the one report type of the library (core/report.hpp).
using failslow::finding;
using failslow::report;

struct score_options {
  std::int64_t step_tolerance = 2;        ///< steps right: both ends within this many steps
  std::int64_t persistent_min_steps = 3;  ///< a straggler finding this long is "persistent"
};

enum class verdict : std::uint8_t { true_positive, false_positive, neutral };
/// Number of verdict values (they are 0 .. verdict_count - 1).
inline constexpr std::size_t verdict_count = 3;

constexpr std::string_view to_string(verdict v) noexcept {
  return v == verdict::true_positive ? "true_positive" : v == verdict::false_positive ? "false_positive" : "neutral";
}
static_assert(failslow::detail::enum_count_matches<verdict>(verdict_count),
              "verdict_count is not the number of verdict values");

enum class fp_reason : std::uint8_t {
  none,
  rotating_noise_as_straggler,
  healthy_run,
  healthy_ranks,
  outside_fault_steps
};
/// Number of fp_reason values (they are 0 .. fp_reason_count - 1).
inline constexpr std::size_t fp_reason_count = 5;

constexpr std::string_view to_string(fp_reason r) noexcept {
  switch (r) {
    case fp_reason::none:
      return "";
    case fp_reason::rotating_noise_as_straggler:
      return "rotating_noise_as_straggler";
    case fp_reason::healthy_run:
      return "healthy_run";
    case fp_reason::healthy_ranks:
      return "healthy_ranks";
    case fp_reason::outside_fault_steps:
      return "outside_fault_steps";
  }
  return "";
}
static_assert(failslow::detail::enum_count_matches<fp_reason>(fp_reason_count),
              "fp_reason_count is not the number of fp_reason values");

struct fault_score {
  std::size_t fault = 0;  ///< index into truth::faults
  bool localised = false;
  bool names_kernels = false;  ///< the fault names kernels (kernel_right applies)
  bool kernel_right = false;
  bool steps_right = false;
  std::vector<std::size_t> findings;  ///< indices of the findings that localise it
};

struct finding_score {
  std::size_t finding = 0;  ///< index into report::findings
  verdict result = verdict::neutral;
  fp_reason reason = fp_reason::none;
  std::vector<std::size_t> faults;  ///< faults it localises
};

struct score_counts {
  std::size_t cases = 0;
  std::size_t findings = 0;
  std::size_t true_positives = 0;
  std::size_t false_positives = 0;
  std::size_t neutral = 0;
  std::size_t faults = 0;
  std::size_t localised = 0;
  std::size_t kernel_faults = 0;  ///< faults that name kernels
  std::size_t kernel_right = 0;
  std::size_t steps_right = 0;
  std::map<std::string, std::size_t, std::less<>> false_positive_reasons;

  double precision() const noexcept {
    const std::size_t n = true_positives + false_positives;
    return n == 0 ? 1.0 : static_cast<double>(true_positives) / static_cast<double>(n);
  }
  double recall() const noexcept {
    return faults == 0 ? 1.0 : static_cast<double>(localised) / static_cast<double>(faults);
  }
  double kernel_accuracy() const noexcept {
    return kernel_faults == 0 ? 1.0 : static_cast<double>(kernel_right) / static_cast<double>(kernel_faults);
  }
  double step_accuracy() const noexcept {
    return faults == 0 ? 1.0 : static_cast<double>(steps_right) / static_cast<double>(faults);
  }
  FAILSLOW_FUNC score_counts& operator+=(const score_counts& o);
};

struct case_score {
  std::string scenario;
  std::vector<fault_score> faults;
  std::vector<finding_score> findings;
  score_counts counts;
};

struct score_summary {
  std::map<std::string, score_counts, std::less<>> by_scenario;
  score_counts overall;
};

/// Scores one report against one truth (see the file synopsis).
FAILSLOW_FUNC case_score score_case(const truth& t, const report& rep, const score_options& opt = {});

/// Sums cases per scenario name and overall.
FAILSLOW_FUNC score_summary summarize(const std::vector<case_score>& cases);

}  // namespace failslow::sim

#if FAILSLOW_HEADER_ONLY
#include "failslow/sim/impl/score.ipp"
#endif
