// failslow/diagnose/l2_stragglers.hpp -- L2: which rank holds the job back, in which phase,
// from which step; and never the ranks that only wait for it.
//
// Synopsis
//   l2_result find_stragglers(model, topo, l1, options)
//   Comparable ranks: for each phase the routing rules (core/routing.hpp) give the dimensions
//   along which ranks do the same work (compute: same pipeline stage and tp index, i.e.
//   cp+ep+dp); a group with fewer than min_group ranks with data is widened along tp (tensor
//   shards do equal work); a rank still without enough peers (a pure pipeline, two ranks) is
//   compared with its own history (own_history, below; a note says so).
//   Phases compared: those whose role is work (compute, memory, annotated phases) or idle. The
//   communication phase is never blamed: in a synchronous job a slow rank makes its peers wait
//   inside the next collective, so the culprit shows long work and short collectives and its
//   victims the reverse.
//   Per group G and phase p, steps t, ranks i of G:
//     m_t = median_i x_it,  e_it = x_it - m_t,  s = max(1.4826 median_it |e_it|, resolution * median_t d_t)
//     z_it = e_it / s       (the spread of comparable ranks, pooled over steps: robust to one
//                            slow rank in G, so the culprit cannot hide in its own scale)
//     rel_it = e_it / d_t   (d_t = m_t; for idle, the group's median iteration time: idle is
//                            judged by the share of the step it costs)
//     elevated_it = z_it > z_threshold and rel_it > min_effect
//   Test per (rank, phase): k_i elevated steps of n_i; under "rank i is like its peers" each step
//   is elevated with the peers' rate p_i = (elevated cells of the others + 1/2) / (their cells
//   + 1) (the Jeffreys estimate: a rate of 0 in 90 cells is not known to be below 1 %), at
//   least P(N(0,1) > z_threshold); p-value P(Binomial(n_i, p_i) >= k_i)
//   (detail/binomial_tail.hpp), p_i at least the same estimate over every other rank of the
//   job's groups of its size in that phase (one group's few cells say little about a rare
//   rate). Noise that rotates between ranks (GC pauses) raises p_i and
//   gives each rank few elevated steps: no straggler.
//   Persistence: the claim's steps are the run of elevated steps (gaps of at most max_gap
//   normal steps; a step still slow, z_it > bridge_z and rel_it > min_effect, is no gap) with
//   the most elevated steps; it needs at least min_steps elevated steps, and its elevated and
//   still-slow steps a fraction min_fraction of its span.
//   Moderate count (moderate_count): the same test one bar lower, for a large excess hidden in
//   wide noise (processes sharing cores): km_i steps with z_it > bridge_z and rel_it >
//   min_effect against the peers' Jeffreys rate of such steps (at least P(N(0,1) > bridge_z)),
//   k and n deflated by the AR(1) design effect (1 - rho) / (1 + rho) (rho: the group's lag-1
//   autocorrelation, clamp [0, 0.9]); its run (bridged by steps above the median, z_it > 0)
//   needs 2 min_steps moderate steps, min_fraction of its span and a median rel_it over it
//   above 2 min_effect, and min_steps steps of the rank before it that are not (half) as far
//   above the peers (a change, never a steady offset). The p-value is twice the better of the
//   two tests (two looks), whose run is the claim.
//   Multiple testing: Benjamini-Hochberg (detect/fdr.hpp) at fdr_q over every (rank, phase)
//   tested in the job.
//   Assumed layout (layout_assumed): a cross-rank claim needs min_steps steps of the rank before
//   it, so that the rank changed; one that differed from its first steps on may run other work.
//   Groups are split by options.roles when given (diagnose/roles.hpp: ranks that run other
//   kernels, pipeline stages); without roles every rank is also judged against its own history
//   (below), which a mix of work does not blur; with them, as under a known layout.
//   Warm-up: a claim that starts within the rank's first min_steps steps and is over
//   min_steps or more steps before the rank's last is its start-up, withheld (a note says so).
//   Steady offset: a claim whose rank is, over its first max(min_steps, S/4) steps before the
//   claim (min_steps or more of them), at least half as far above its peers (median rel) as
//   over the claim did not change: it stands only when the rank is elevated in min_fraction of
//   all its steps (else a note) -- a constant excess near min_effect crosses the bar in runs
//   by chance.
//   Sporadic excess: a claim of fewer than 2 min_steps elevated steps whose rank is elevated
//   before it too (K elevated steps of its N up to the claim's last, k of them in a run of n
//   steps ending there and starting at the claim's first step or before it) is a change if
//   P(X >= k), X ~ Hypergeometric(N, K, n) -- the elevated steps' places random -- at the
//   run's most telling start, times the places it can start, is at most fdr_q; or if the
//   rank's excess (rel) rose and stayed up: the one-sided rank-sum p-value of its steps before
//   a start (min_steps or more) against all its steps from there on, at the most telling start
//   up to the claim's, times the starts, at most fdr_q (a shift just above the bar crosses it
//   only now and then after its onset). Else (a GPU a little slower than its peers, whose
//   upper tail crosses the bar now and then, with three of its crossings close by chance) it
//   stands only when the rank is elevated in min_fraction of all its steps (else a note).
//   Victim guard: a claim is withheld when the rank's own communication time over the claimed
//   steps is elevated against its peers (median z above z_threshold): it waited, too.
//   One straggler per rank: the phase reported is the annotated phase with the largest excess
//   (time lost, ns) if an annotated phase is significant, else the class phase with the
//   largest excess; the other significant phases are listed (also_slow).
//   Evidence per straggler: observed (median over the claimed steps) vs baseline (the peers'
//   median over the same steps), ratio, median z, p and BH-adjusted q, peers, the rank's
//   communication over its peers' (< 1: the others wait for it), how many ranks of the job
//   wait for it (communication up, against their own steps outside the claim or, with no such
//   steps, against the straggler's, by half the job's loss per step over the claim, or a
//   quarter of the straggler's excess when L1 measured no loss), the group's CV in the phase
//   during the claim and outside it, and job_slowdown (L1: the job's time lost over the steps).
//   Own history (options.own_history): the rank's phase time over the median of the other
//   ranks' at each step (idle: (I + its idle) / (I + their median idle), I their median iteration) -- job-wide
//   changes cancel -- analysed as an L1 series (l1_windows.hpp: log space, pooled baseline,
//   Student-t thresholds; single steps ignored, min_effect the sustained floor); its longest
//   sustained window of at least min_steps steps is the claim. Its p-value: a one-sided
//   two-sample Student t of ln q over the window against every other measured step (pooled
//   variance, n - 2 degrees of freedom; the sd widened by sqrt((1 + rho) / (1 - rho)), rho the
//   lag-1 autocorrelation of the group's -- without peers, the job's -- ratio series: noise that
//   persists over steps), times what the scan over windows is worth (window_scan_factor:
//   3 sqrt(n) for a window to the series' end, n^2 / 4 otherwise, measured by simulation; when
//   L1's window ends early or L1 finds none (a shift early in the series becomes its baseline)
//   the best window to the end over every first step is tested too, the
//   better of the two taken at twice its p), in the same BH as the group tests; outside idle, p is 1 unless the
//   rank's own ln time rose too (a one-sided t of the window against its other steps at own_history_raw_alpha: q also
//   rises when the others' median falls, as when a sleeping rank leaves the others a shared CPU core); withheld when
//   the rank's own communication grew by more than half its excess (it waits). Ranks with peers under a known layout
//   (own_history_with_peers) get, in the work classes (compute, memory; not idle, whose per-step regime flips on a
//   host-paced job are no change, nor annotated phases, parts of compute), the same test with q relative to their
//   group's other ranks and the sd at least the group's typical one, floor own_history_min_effect, at least 2 min_steps
//   slow steps and the BH test on the shift's p-value instead of the per-step z bar (a change
//   smaller than one step's noise is still several standard errors of a dozen steps' mean), and
//   must end at least half that floor above the group's median (a fast GPU that became like
//   the others holds nothing back).
//   A job of a single rank has no other ranks: no L2.
//   phase_cv: per phase, the median over groups and steps of the CV across comparable ranks
//   (ARGUS L2's "phase where ranks disagree").
// Accuracy: with S steps and the defaults a healthy rank is called a straggler only if three
//   or more of its steps exceed 3.5 robust scales and 3 % of its peers' median while its peers'
//   rarely do; the FDR over all tests is at most fdr_q when the p-values are valid.
// Complexity: O(phases x ranks x steps log(group size)).
// Errors: invalid_argument for options out of range; a topology whose world size differs from
//   the model's throws invalid_argument.
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/routing.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/diagnose/job_model.hpp"
#include "failslow/diagnose/l1_windows.hpp"

namespace failslow::diagnose {

struct l2_options {
  double z_threshold = 3.5;   ///< robust z of an elevated step (Iglewicz-Hoaglin's cut-off)
  double min_effect = 0.03;   ///< ... and at least 3 % over the peers' median
  std::size_t min_steps = 3;  ///< elevated steps a claim needs (persistence)
  double min_fraction = 0.6;  ///< elevated fraction of the claimed span
  std::size_t max_gap = 1;    ///< normal steps allowed inside a claimed span
  /// A step under the bar but with z above this (and over min_effect) is still slow: no gap in
  /// a claim, and part of its slow fraction.
  double bridge_z = 2.0;
  /// Also count the steps above bridge_z (and min_effect) against the peers' rate of such
  /// steps: a rank moderately slower in most of 2 min_steps or more steps, on a machine whose
  /// noise keeps its steps under z_threshold (processes sharing cores). Each test's p-value
  /// then counts twice (two looks at one rank).
  bool moderate_count = true;
  double fdr_q = 0.01;         ///< Benjamini-Hochberg level over all (rank, phase) tests
  std::size_t min_group = 3;   ///< comparable ranks with data needed (the rank included)
  double min_phase_ns = 1000;  ///< phases whose peers' median is below this are not compared
  double resolution = 1e-3;    ///< the robust scale is at least this fraction of the median
  bool own_history = true;     ///< ranks without enough peers: compare with their own history
  /// Ranks with peers are also compared with their own history (relative to the others): a
  /// few-percent change hides in the spread of GPUs that differ by as much, not in the rank's
  /// own steps before it.
  bool own_history_with_peers = true;
  /// The sustained floor of an own-history claim of a rank with peers (L1's sustained floor);
  /// it must also run this much above the others' median during the claim.
  double own_history_min_effect = 0.02;
  /// An own-history claim relative to other ranks also needs the rank's own time to have risen:
  /// a one-sided t-test of its own log time, the window against its other steps, at this level.
  double own_history_raw_alpha = 0.05;
  /// A claim's excess per step must be at least this share of the iteration (the median over
  /// the claimed steps of the other ranks' iteration time): a phase 1.5x slower that costs
  /// 0.1 % of a step holds nothing back.
  double min_step_share = 0.005;
  /// The layout was guessed (no flags, no pg_config): ranks compared as equals may run other
  /// work (pipeline stages, the LM head), so a rank that differs from its first steps on is not
  /// called a straggler -- only one that changed.
  bool layout_assumed = false;
  /// Per rank, the work it runs (diagnose/roles.hpp's infer_roles, under a guessed layout):
  /// ranks of different roles are not compared. Empty: the layout's groups alone.
  std::vector<int> roles;
  router routing = router::defaults();
};

struct straggler {
  int rank = -1;
  std::size_t phase = 0;            ///< model phase index reported
  std::string group;                ///< "dp:3", "stage:1", "" (whole job)
  std::string compared_within;      ///< the dimensions compared along, e.g. "cp+ep+dp"
  std::vector<int> peers;           ///< comparable ranks with data, without the rank
  std::size_t first = 0, last = 0;  ///< claimed steps (model step indices)
  std::size_t elevated_steps = 0;
  /// The z bar elevated_steps counts over when it is not z_threshold: bridge_z for a claim of
  /// the moderate count (moderate_count), else NaN.
  double elevated_z = std::numeric_limits<double>::quiet_NaN();
  double observed_ns = 0, baseline_ns = 0, ratio = 1, z = 0;
  double p_value = 1, q_value = 1;
  double excess_ns = 0;  ///< observed - baseline
  double communication_ratio = std::numeric_limits<double>::quiet_NaN();
  std::size_t waiting_ranks = 0;
  double group_cv = 0, group_cv_before = std::numeric_limits<double>::quiet_NaN();
  double job_slowdown = 0;
  std::vector<std::pair<std::size_t, double>> also_slow;  ///< (phase, ratio) also significant
  bool guarded = false;  ///< own-history claim withheld: the rank waits longer in collectives too
  /// Own-history claims: the rank's excess over the other ranks' median during the claim, median
  /// over its steps, relative to their median phase time (idle: to their median iteration).
  double above_others = std::numeric_limits<double>::quiet_NaN();
  /// Own-history claims: the rank had comparable ranks (a guessed layout), so its own history
  /// was asked as well as them, not instead of them.
  bool had_peers = false;
  /// Own-history claims of a rank with peers under a known layout (own_history_with_peers):
  /// its series was taken relative to those peers, not to the whole job.
  bool referred_to_peers = false;
};

struct phase_disagreement {
  std::size_t phase = 0;
  double cv = 0;  ///< median over groups and steps of the CV across comparable ranks
};

struct l2_result {
  std::vector<straggler> stragglers;  ///< by job_slowdown, then z
  std::vector<phase_disagreement> phase_cv;
  std::size_t tests = 0;
  std::vector<std::string> notes;
};

namespace detail {

/// "dp:3" / "stage:1" when the compared dimensions (those of size > 1) are one communication
/// dimension or a whole stage; "" otherwise.
FAILSLOW_FUNC std::string group_label(const topology& topo, int rank, dim_set scope);

FAILSLOW_FUNC double finite_median(std::vector<double>& v);

// The iteration a claim's cost is weighed against: the median over steps [a, b] of the ranks'
// iteration times, rank `except` left out (NaN where none is finite).
FAILSLOW_FUNC double median_iteration(const job_model& m, const std::vector<int>& ranks, std::size_t a, std::size_t b,
                                      int except = -1);

// The groups of comparable ranks with data under `scope`: a group with fewer than min_group
// ranks with data is widened along tp (tensor shards do equal work), then split by role when
// roles are given (per rank; ranks of different roles run different work). Every present rank
// is in exactly one group; rank = the group's first present rank.
struct rank_group {
  std::vector<int> members;  // with data, ascending
  dim_set scope;             // after widening
  int rank = -1;
};
FAILSLOW_FUNC std::vector<rank_group> comparable_groups(const job_model& m, const topology& topo, dim_set scope,
                                                        std::size_t min_group, const std::vector<int>& roles = {});

// How many independent tests the best window of a scan over a series of n steps is worth: the
// factor its single-window p-value is multiplied by. Measured by simulating the scan -- the
// largest two-sample t of every window of at least 3 steps against the rest of an iid normal
// series, P(max t > c) / P(t(n - 2) > c) at c 4 and 4.5 (tests/reference/gen_diagnose_fixtures.py,
// window_scan.json): a window that lasts to the series' end (a change that stays, the fail-slow
// case) is one of 8 (16 steps) to 23 (60 steps), here 3 sqrt(n); one that ends before it, of 58
// (16 steps) to 390 (60 steps), here n^2 / 4: at these tails nearly every window counts by itself.
FAILSLOW_FUNC double window_scan_factor(double n, bool to_end);

// The typical noise of a group's ranks relative to each other in work phase p: per member the
// series ln(its time / the others' median), its sd around its own mean and its lag-1
// autocorrelation (below: about a change of level, bias-corrected); the medians over the
// members (a member with a change of its own sets neither). The others' median leaves the
// member out up to 32 members and includes it beyond (where one value moves it little). Zeros
// with fewer than 3 members or 3 steps.
struct ratio_noise {
  double sd = 0;
  double lag1 = 0;  ///< median lag-1 autocorrelation (consecutive measured steps)
  /// How many times more a mean of n steps varies than under iid noise of the same sd, for
  /// AR(1) noise of coefficient lag1 (clamped to [0, 0.9]): (1 + rho) / (1 - rho).
  double design_effect() const {
    const double rho = std::clamp(lag1, 0.0, 0.9);
    return (1 + rho) / (1 - rho);
  }
};

// A rank with too few comparable peers against its own history: the series of its phase time
// over the median of the other ranks' (for idle: (I + its idle) / (I + their median idle), I
// their median iteration), whose job-wide changes cancel -- the phase time itself when there
// are no other ranks (present holds only `rank`) -- through L1's series analysis (l1_windows.hpp: log
// space, pooled baseline, t-corrected thresholds) with min_effect as the sustained floor; the
// longest sustained window of at least min_steps steps is the claim, tested as in the synopsis
// (group: the noise of the rank's peers, or of the job's ranks without peers).
FAILSLOW_FUNC straggler own_history_claim(const job_model& m, int rank, std::size_t p, const std::vector<int>& present,
                                          const l2_options& o, double floor, ratio_noise group = {});

}  // namespace detail

FAILSLOW_FUNC l2_result find_stragglers(const job_model& m, const topology& topo, const l1_result* l1,
                                        const l2_options& o = {});

}  // namespace failslow::diagnose

#if FAILSLOW_HEADER_ONLY
#include "failslow/diagnose/impl/l2_stragglers.ipp"
#endif
