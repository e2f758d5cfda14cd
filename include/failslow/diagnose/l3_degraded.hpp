// failslow/diagnose/l3_degraded.hpp -- L3: what got slow -- the kernel on a rank, the link of
// a group, the pipeline stage.
//
// Synopsis
//   l3_result find_degraded(model, topo, l1, options)
//   Reads the per-step kernel summaries the model kept (job_model::windows, model_options::
//   keep_windows) and asks three questions, each by building a derived model and running L2's
//   test on it (l2_stragglers.hpp: pooled robust z within comparable members, persistence, a
//   binomial test against the peers' rate, own history where there are no peers, and
//   Benjamini-Hochberg at options.*.fdr_q over every test of the question):
//   Degraded kernel -- one phase per compute or memory kernel key; rank i's value at step t is
//   the W1 distance of its duration distribution to its group's:
//       Q_it = quantile vector of the key's reconstructed summary on rank i, step t
//              (stats/quantile_grid.hpp, K = options.quantiles, truncated clusters)
//       M_it = the element-wise median of Q_jt over the other comparable ranks j != i (routing
//              rules: same pipeline stage and tp index, MoE keys within the EP group, ...;
//              diagnose/detail/median_vectors.hpp)
//       W_it = mean_k |Q_it(u_k) - M_it(u_k)|                (W1 to the others' distribution)
//       x_it = mean(M_it) + sign(mean(Q_it) - mean(M_it)) W_it
//   so x - median x is the signed W1 and L2's robust scale is the group's own spread of
//   distances: a kernel is degraded on a rank when its distance is large relative to that
//   spread, over min_steps steps. The rank is left out of its own reference: in a group of 4,
//   two ranks slow in the same step (a bimodal kernel's slow launches) would pull the median
//   halfway and hide each other, so ranks whose slow steps seldom coincide with another's were
//   elevated more often than their peers by chance alone. A rank without comparable ranks
//   keeps x = mean(Q_it) and is judged against its own history. A claim in a group of fewer
//   than 8 ranks, or against the rank's own history, needs its costliest kernel
//   small_group_effect (3 %) slower per launch.
//   Per rank, the kernels found are ranked by the time they cost per step (excess per launch x
//   launches); evidence: the W1 over the claimed steps of the rank's distribution (its quantile
//   vectors averaged over the steps, the 1-D Wasserstein barycenter) to the peers' median
//   distribution, the peers' own W1 to it (the group's spread), the row of the group W1
//   matrix, per-launch means, launches per step.
//   Drifting kernel (KAT's intra-worker chart) -- per rank and key not reported above, the
//   series e_t = (mean per launch) / (the group's median) - 1, an upper EWMA chart (lambda 0.2,
//   L 3) from the rank's own level (the median of its first drift_warmup values) with the
//   trend rule on the statistic (5 rises); a chart that alarmed, rose and ends min_effect above
//   both its level and the group's median, on a kernel slower than on its peers over the
//   drift, is tested by its last statistic: t = excess / (sd sqrt(l/(2-l) + pi/(2 warmup))),
//   sd the larger of the group's pooled robust sd and the rank's own (from its step-to-step
//   differences), Student-t tail with the differences' degrees of freedom; BH over the charts.
//   Slow compute, pooled over kernels (find_pooled) -- a rank whose compute kernels all slowed by
//   one factor too small for any one key's test or for its compute total (whose noise its
//   noisiest kernels set). Per rank and step the index
//       x_t = sum_k w_k ln(1 + e_kt) / sum_k w_k      over its compute keys k (e as above),
//       w_k = 1 / var_k, var_k from the key's step-to-step changes of ln(1 + e), pooled over
//             ranks (1.4826 MAD / sqrt 2, at least the resolution)
//   is L2's compute phase in a derived model: across its peers (L2's 3 % floor) and against
//   its own history relative to them, at the floor pooled_min_effect (0.5 %). Its noise is
//   that of the index's own steps, not of the weights, so kernels whose noise is shared (a
//   rank's input that step) cost power, not validity. A claim names the kernel that lost most
//   time per step (against the rank's own launches outside the claim) and the others; it is
//   reported (diagnose.hpp) where no other finding names the rank, and only if its kernels
//   cost kernel_min_step_share together.
//   A rank's degraded kernels, found either way, are reported when together they cost at least
//   kernel_min_step_share (0.1 %) of a step (the peers' median iteration over the claim); a
//   note lists the ranks under it.
//   Outlier rank (KAT's inter-worker detector) -- per comparable group of at least 8 ranks and
//   window of outlier_window steps, each rank's features (log compute and memory time, idle
//   share of the iteration, log mean per launch of the group's costliest kernels while
//   2 d + 2 <= N; robustly standardised with a floor per feature) by Mahalanobis distance to
//   the other ranks of the group (leave one out; detect/mahalanobis_rows.hpp: Ledoit-Wolf,
//   threshold sqrt(chi2_0.99(d)) (1 + 1/sqrt(N - 1))); a rank flagged in k of n windows has
//   p = P(Binomial(n, max(peers' rate, pooled rate, 1 %)) >= k), k >= outlier_min_windows, the
//   pooled rate the Jeffreys estimate (flags + 1/2) / (cells + 1) over the other ranks of every
//   group of the same size and feature count in the job (with the covariance estimated from 7
//   others the level is crossed in ~3 % of healthy windows, not 1 %); BH over ranks; a rank
//   whose largest deviation is negative (faster than its peers) is not reported (a note), nor one
//   that did not change (L2's steady offset on the deviation vector): its windows before the
//   first flagged one (median per feature) hold at least half of its departure over the flagged
//   ones (projected on it), and it is flagged in under kernels.min_fraction of its windows.
//   Degraded link -- one member per process group along tp, cp, ep and dp, one phase per
//   collective key; the group's value at step t is its transfer time. From traces (L4's
//   attribute_waits matched the collectives into instances, m.waits.transfers):
//       T_gt = median over the group's instances of the key in step t of the instance's
//              transfer, its shortest member's duration (detail/instance_transfer.hpp: the
//              last arriver waits for nobody; its duration is the aligned end minus the last
//              arrival)
//   -- the instance's group is known, so neither a collective of another dimension nor a wait
//   its ranks inherit is in T. From summaries (no instances):
//       T_gt = min over the group's ranks of the key's typical launch (the p50 of the cluster
//              holding its middle launch: robust to the few launches that waited long)
//   (the rank that arrived last waited least), which mixes in the key's collectives of the other
//   dimensions through the same ranks. Compared with the groups along the same dimension in
//   the same pipeline stage; with fewer than 3 there (tp 2 x pp 4 x dp 8: 2 dp groups per
//   stage) each group is judged against its own history relative to the other groups along
//   the dimension (L2's own-history test: a job-wide network slowdown cancels) when T comes
//   from instances, and not at all from summaries (a note says which); the job's only group
//   along a dimension (pure data parallelism) has nothing to be relative to and nothing to
//   cancel: its transfer times as they are, Bonferroni over its collectives at fdr_q, one
//   claim for the collective that lost the most with the others listed; a link carries all of
//   its group's collectives, so such a claim stands only when every other collective the group
//   ran rose too over the claimed steps, by half the floor relative to the other groups (one
//   collective's run of noisy steps, with two instances per step, is no link). Groups of one
//   dimension overlap groups of another in one rank only, so a slow link raises T in its own
//   dimension and no other; a link that rose less than half as much as another, in another collective
//   and during it, is taken for the waits that one causes.
//   Slow stage -- one member per pipeline stage, its value the minimum over the stage's ranks
//   of their compute time per step (one slow rank is L2's; a slow stage slows even its
//   fastest rank); stages run different work and are only judged against their own history
//   relative to the other stages. A layout without a pipeline dimension that came with roles
//   (options.kernels.roles: a guessed layout, diagnose/roles.hpp) takes each role for a stage
//   (by_role): the first and the last stage run kernels of their own; middle stages that run
//   the same kernels are one role, and half of it slowing does not slow its fastest rank.
// Complexity: O(ranks x keys x steps x K) for the kernel distances (quantile vectors cost
//   1-15 us each at K = 64), then L2's on the derived models; the links' per-step medians of
//   instance transfers O(instances log instances).
// Accuracy: that of L2's test on each derived model; the W1 of reconstructed summaries is within
//   0.1 % of the mean of the exact W1 between the reconstructions (stats/quantile_grid.hpp).
// Errors: a topology whose world size differs from the model's throws invalid_argument; options
//   out of range throw invalid_argument.
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/diagnose/job_model.hpp"
#include "failslow/diagnose/l1_windows.hpp"
#include "failslow/diagnose/l2_stragglers.hpp"

namespace failslow::diagnose {

/// L2's options for the link test: transfer times vary more than compute, so an elevated
/// step needs 8 % over the same-stage groups' median (a 1.1x link clears it; 5 % let 3-step
/// runs of a collective of another dimension through, seen in the sensitivity table). A group without
/// 3 same-stage groups to compare with is not judged against its own history from summaries:
/// without the process groups a collective of another dimension seen through this one rises
/// with every wait its ranks inherit (measured: 1.2-1.6x under a straggler, a false alarm in a
/// third of the simulated faulty jobs). From traces find_degraded turns own history on: the
/// per-instance transfer (detail/instance_transfer.hpp) carries neither.
FAILSLOW_FUNC l2_options default_link_options();

/// L2's options for the stage test: a stage's compute against its own history (L2's defaults;
/// the step-share floor is L2's, for ranks' phases).
FAILSLOW_FUNC l2_options default_stage_options();

namespace detail {
// An own-history claim whose raw median over the claim is not `floor` (the test's min_effect)
// above its median outside it: the reference (the other members) moved, not the member.
FAILSLOW_FUNC bool weak_own_history(const straggler& st, double floor);
FAILSLOW_FUNC bool weak_own_history(const straggler& st, const l2_options& o);
}  // namespace detail

/// Groups smaller than this (ranks) claim a degraded kernel only at small_group_effect or more.
inline constexpr std::size_t small_group_ranks = 8;
inline constexpr double small_group_effect = 0.03;

/// L2's options for the kernel test: a kernel's distribution over hundreds of launches is far
/// more precise than a phase's total, so an elevated step needs only 1 % of W1 over the group's
/// mean (with the robust z, persistence, binomial and BH tests unchanged); in groups of fewer
/// than 8 ranks a claim needs 3 % (find_degraded).
FAILSLOW_FUNC l2_options default_kernel_options();

struct l3_options {
  std::size_t quantiles = 64;                     ///< K of the quantile grid distributions are compared on
  bool truncated = true;                          ///< reconstruct clusters truncated to their [min, max]
  l2_options kernels = default_kernel_options();  ///< the test on per-kernel W1 (its routing picks the groups)
  l2_options links = default_link_options();      ///< the test on transfer times of groups
  l2_options stages = default_stage_options();    ///< the test on stages' compute time against their own history
  bool find_kernels = true, find_links = true, find_stages = true;
  /// Intra-worker charts (KAT 3.2.2): per rank and kernel key an EWMA of its relative W1 to
  /// the group, for slowdowns that grow before the cross-rank test sees them.
  bool find_drifts = true;
  double drift_lambda = 0.2;        ///< EWMA weight
  double drift_L = 3.0;             ///< limit width in sigmas of the EWMA statistic
  std::size_t drift_warmup = 5;     ///< first steps of the rank's series: its own in-control level
  std::size_t drift_trend_run = 5;  ///< rises of the EWMA statistic the trend rule needs
  /// Inter-worker test (KAT 3.2.1): per comparable group and window of steps, each rank's
  /// feature vector against its peers' by Mahalanobis distance (Ledoit-Wolf shrinkage, the
  /// adaptive threshold sqrt(chi2_0.99(d)) (1 + 1/sqrt(N))).
  bool find_outliers = true;
  std::size_t outlier_window = 5;       ///< steps per window
  std::size_t outlier_min_windows = 2;  ///< flagged windows a rank needs (persistence)
  std::size_t outlier_top_kernels = 3;  ///< the group's costliest kernels used as features
  /// A rank's degraded kernels together must cost at least this share of a step (time lost
  /// per step over the peers' median iteration over the claim): a 15 us kernel 3 % slower
  /// (0.02 % of a step) holds nothing back, and is as often a few noisy steps.
  double kernel_min_step_share = 0.001;
  /// Slow compute pooled over kernels: per rank and step the weighted mean over its compute
  /// kernel keys of ln(mean per launch / the group's median), weights the inverse variance of
  /// each key's step-to-step change, tested by L2 against the rank's own history relative to
  /// its peers (and across them): a rank whose every compute kernel slowed by one factor too
  /// small for any one key or for the compute total.
  bool find_pooled = true;
  /// The pooled test's own-history floor: the index's change must be at least this (its noise
  /// per step is a few tenths of a percent where the per-key tests need several percent).
  double pooled_min_effect = 0.005;
};

/// A rank whose joint profile (compute, memory, idle share, its top kernels' durations) is
/// far from its comparable ranks' in several windows (KAT's inter-worker detector).
struct outlier_rank {
  int rank = -1;
  std::string group;
  std::vector<int> peers;
  std::size_t first = 0, last = 0;  ///< model steps of the first and last flagged window
  std::size_t windows_flagged = 0, windows = 0;
  double distance = 0, threshold = 0;  ///< median D over the flagged windows; lambda
  double p_value = 1, q_value = 1;
  std::vector<std::string> features;  ///< names, in the order of `deviation`
  std::vector<double> deviation;      ///< per feature: (rank - peers' median) / (1.4826 MAD), flagged windows' median
};

/// A kernel key slower on one rank than on its comparable ranks (or than its own history).
struct degraded_kernel {
  int rank = -1;
  std::size_t key = 0;  ///< index into job_model::kernel_names
  std::string group, compared_within;
  std::vector<int> peers;
  std::size_t first = 0, last = 0, elevated_steps = 0;  ///< model step indices
  double z = 0, p_value = 1, q_value = 1;
  double w1_ns = 0;            ///< W1(rank's distribution over the claim, the peers' median one)
  double peer_w1_ns = 0;       ///< median over the peers of their own W1 to it (the group's spread)
  std::vector<double> w1_row;  ///< W1 of the rank's distribution to each peer's (peers' order)
  double observed_ns = 0, baseline_ns = 0, ratio = 1;  ///< mean duration per launch: rank, peers
  double launches_per_step = 0;
  double lost_ns_per_step = 0;  ///< (observed - baseline) x launches
  double job_slowdown = 0;
  std::vector<std::pair<std::size_t, double>> also;  ///< other degraded keys of the rank: (key, ratio)
  /// "cross-rank" (L2's test on W1), "ewma-trend" (the rank's own chart: z/alarm fields set) or
  /// "pooled" (every compute kernel of the rank: pooled_keys, pooled_ratio set)
  std::string detector = "cross-rank";
  double ewma_excess = 0;       ///< the chart's last statistic over the rank's level, relative to the group
  std::size_t alarm_step = 0;   ///< model step index of the first alarm (ewma-trend)
  std::size_t pooled_keys = 0;  ///< compute kernel keys pooled (detector "pooled")
  double pooled_ratio = 1;      ///< the pooled per-launch index over the claim against its reference
};

/// A process group whose collectives transfer slower than those of the same position.
struct degraded_link {
  parallel_dim dim = parallel_dim::dp;
  int index = 0;  ///< the group's index along dim (core/topology.hpp numbering)
  std::string group;
  std::size_t key = 0;          ///< the collective (job_model::kernel_names)
  std::string compared_within;  ///< "same-stage groups" or "own history"
  std::size_t first = 0, last = 0, elevated_steps = 0;
  double z = 0, p_value = 1, q_value = 1;
  double transfer_ns = 0, baseline_transfer_ns = 0, ratio = 1;  ///< typical launch
  double wait_ns = 0;  ///< median over the group's ranks of their typical launch minus the transfer
  /// Where the transfer times came from: "collective instances" (traces: per instance its
  /// shortest member's duration, median per step) or "kernel summaries" (the fastest rank's
  /// typical launch).
  std::string transfer_from = "kernel summaries";
  double job_slowdown = 0;
  std::vector<int> ranks;
  std::vector<std::pair<std::size_t, double>> also;  ///< other slow collectives of the group
};

/// A pipeline stage slower than its own history, relative to the other stages.
struct slow_stage {
  int stage = 0;  ///< the pipeline stage, or the role's index (by_role)
  /// A guessed layout's role (l2_options::roles of the kernel test: ranks that run one set of
  /// kernels) stands for the stage: the layout has no pipeline dimension to say which stage.
  bool by_role = false;
  std::size_t first = 0, last = 0, elevated_steps = 0;
  double z = 0, p_value = 1, q_value = 1;
  double observed_ns = 0, baseline_ns = 0, ratio = 1;  ///< the stage's fastest-rank compute per step
  double job_slowdown = 0;
  std::vector<int> ranks;
  /// The stage's kernels that slowed most, by time lost per step: (key, ratio of the stage's
  /// median duration per launch over the claim to before it); the first is reported.
  std::vector<std::pair<std::size_t, double>> kernels;
};

struct l3_result {
  std::vector<degraded_kernel> kernels;
  std::vector<outlier_rank> outliers;
  /// Ranks whose compute kernels slowed together (find_pooled; detector "pooled"): reported
  /// only where no other finding names the rank.
  std::vector<degraded_kernel> pooled;
  std::vector<degraded_link> links;
  std::vector<slow_stage> stages;
  std::vector<std::string> notes;
  std::size_t kernel_keys = 0;  ///< kernel keys compared
  std::size_t tests = 0;        ///< tests over all three questions
};

namespace detail {

// A derived model: `members` rows, the model's steps, the four class phases (not compared, NaN
// but where given) and one compared phase per name.
FAILSLOW_FUNC job_model derived_model(const job_model& m, std::size_t members, const std::vector<phase_info>& extra);

}  // namespace detail

/// What one kernel key contributes to a rank's slowdown over steps [first, last].
struct kernel_share {
  std::size_t key = 0;                                            ///< index into job_model::kernel_names
  double observed_ns = std::numeric_limits<double>::quiet_NaN();  ///< the rank's mean per launch
  double baseline_ns = std::numeric_limits<double>::quiet_NaN();  ///< the peers' (or its own outside)
  double ratio = std::numeric_limits<double>::quiet_NaN();
  double launches_per_step = 0;
  double lost_ns_per_step = 0;  ///< (observed - baseline) x launches, 0 when not known
};

/// The kernels that explain a rank's slowdown over model steps [first, last] (an L2 straggler's
/// claim): per compute or memory key its mean duration per launch against its peers' (or, with
/// no peers, its own outside the claim), the `max` that lost most time per step, most first;
/// only keys that lost time. Needs the model's windows (empty result otherwise).
FAILSLOW_FUNC std::vector<kernel_share> attribute_kernels(const job_model& m, int rank, const std::vector<int>& peers,
                                                          std::size_t first, std::size_t last, std::size_t max = 5);

FAILSLOW_FUNC l3_result find_degraded(const job_model& m, const topology& topo, const l1_result* l1,
                                      const l3_options& o = {});

}  // namespace failslow::diagnose

#if FAILSLOW_HEADER_ONLY
#include "failslow/diagnose/impl/l3_degraded.ipp"
#endif
