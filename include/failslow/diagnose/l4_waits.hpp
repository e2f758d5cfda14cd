// failslow/diagnose/l4_waits.hpp -- L4: who waited for whom. The rank that holds the job back,
// what it costs its peers per step, and what it was doing before it arrived late.
//
// Synopsis
//   void attribute_waits(model, set, topo, options)   fills model.waits from the traces
//   l4_result find_holdbacks(model, topo, options)    the ranks the job waits for
//
//   Instances. Clock offsets between the traces are estimated from collectives that end
//   together (trace/clock_align.hpp); collective kernels are matched into instances
//   (trace/collective_match.hpp): group collectives by process group and order,
//   point-to-point transfers with the neighbouring pipeline stages of the layout (the two
//   kernels of a send/receive end together). Kernels in no instance are counted
//   (waits.unmatched) and reported in the notes, never guessed.
//   Attribution. In an instance with aligned arrivals (kernel starts) a_m, the last arriver L
//   releases everyone: member m waited w_m = a_L - a_m, blamed on L -- or on whoever L
//   inherited its lateness from. With S the second-last arriver and e_x the aligned end of
//   x's previous instance, L's excess a_L - a_S splits into
//       inherited = clamp(e_L - e_S, 0, a_L - a_S)   L's previous instance ended later than
//                                                    S's: blamed as that instance was
//       own       = the rest                          L's work since then took longer
//   so blame follows the chain back to the rank whose own work made it late (the root of a
//   cascade, not its middle). Instances are processed in order of their last arrival.
//   Per group-collective instance its transfer time, the shortest member's duration (the last
//   arriver waits for nobody, so inherited waits cannot inflate it), with the group's ranks,
//   the key and the step (waits.transfers, detail/instance_transfer.hpp): L3's link test.
//   Per rank and step (the waiting member's step, trace/steps.hpp): waited_ns, caused_ns
//   (others' wait blamed on the rank), late_ns (its own part of the excess as the last
//   arriver); edges root -> victim summed over the job; phase_before_late: the GPU user
//   annotation (or kernel class) of the last activity before its late arrivals, weighted by
//   the excess.
//   Findings. What a rank causes includes the schedule's own waits (a pipeline's stages wait
//   for each other every step), so a rank is judged by its own lateness, late_ns, against its
//   peers -- the ranks in its place in the other data-parallel replicas (else its stage, else
//   the job; at least 3). It holds the job back over steps [first, last] when
//     - z = (mean own lateness - peers' median) / scale >= min_z, and that excess >=
//       min_excess_fraction x the median iteration, with scale the largest of 1.4826 MAD of
//       the peers' means, the standard error of a mean over the steps (1.4826 MAD of every
//       peer's per-step deviation from the peers' median that step, / sqrt(steps)), the
//       job's spread (1.4826 MAD over every rank of its mean lateness minus its peers'
//       median: GPUs differ by a percent or so) and 0.2 % of the median iteration. Seven peers'
//       means can agree closely by chance while each step's lateness varies by milliseconds (a
//       host-paced pipeline's last stage: 0.2-6 ms per step; the MAD of 7 means gave z 7 to a
//       healthy rank, the standard error z 3);
//     - it is late by that much over its peers' median in at least max(min_steps,
//       persistence x the range's steps) steps of the range, k of the range's n steps, and
//       that is rare for its peers: p = P(Binomial(n, max(rate, min_peer_rate)) >= k), rate
//       the share of (peer, step) in which a peer is that late over the median of the others
//       (the rank among them); Benjamini-Hochberg at fdr_q over every rank tested. In a
//       host-paced job which rank of a tensor-parallel pair arrives last flips in runs of
//       steps, so every rank has late runs (healthy ranks: 20-30 % of their steps); a rank
//       that holds the job back is late in nearly all of them;
//     - a range that starts within the first min_steps steps (late from the trace's start: no
//       change seen, only the slowest of its peers) costs at least from_start_min_excess_fraction
//       (3 %) of the median iteration and keeps z >= min_z with the scale at least the same
//       spread over the rank's pipeline stage (where it has min_stage_ranks such ranks: a
//       host-paced last stage races at every collective, its healthy ranks 2-18 of 24 steps
//       late, the first stages do not); else a note. GPUs of one model differ by a percent or
//       so and the slowest of a group is last at every step (a healthy noise-x2 job's GPU 1.5 %
//       slower than its peers from the start was held to hold the job back at z 5.07).
//     - it waited at collectives (point-to-point transfers aside) for other ranks over the range
//       less than cascade_wait_ratio (4) times its own lateness, else a note: a rank in the middle
//       of another's cascade (a healthy data-parallel partner of a rank whose host launched 20x
//       slower waited 240 ms a step for it and arrived last elsewhere 6.4 ms a step; the root
//       itself waits 3 ms a step for others and is late by 233 ms);
//   Score: z. The cost: others' wait blamed on it per step, job-wide and per victim.
//   The pipeline's cost (pipeline_wait_change): per rank and step waits in point-to-point
//   transfers are kept apart (p2p_waited_ns); for a slow rank or stage over [first, last], per
//   stage the change of its ranks' transfer waits against the other steps -- the stages the
//   delay propagates to wait more, the slow one does not (its peers wait for it).
// Complexity: O(n log n) in the collective kernels; findings O(ranks x steps).
// Accuracy: arrivals are as good as the clock alignment (waits.clocks_aligned; its spread is
//   tens of microseconds on real traces), so waits below that are noise and count for nothing.
// Errors: none; without collectives there is nothing to attribute (waits.available = false).
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/kernel_class.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/diagnose/job_model.hpp"
#include "failslow/trace/trace_set.hpp"

namespace failslow::diagnose {

struct wait_options {
  std::size_t max_edges = 256;
  std::size_t max_blame_roots = 4;  ///< roots kept per instance when the blame is split
};

/// Fills m.waits from the traces of m (the trace set it was built from) and the layout.
FAILSLOW_FUNC void attribute_waits(job_model& m, const trace::trace_set& set, const topology& topo,
                                   const wait_options& options = {},
                                   const kernel_classifier& classifier = kernel_classifier::defaults());

/// What a slow rank or stage costs the pipeline (see the synopsis): per stage, the change of its
/// ranks' point-to-point waits (median over the stage's ranks of the mean per step) over model
/// steps [first, last] against the other steps (the first step, warm-up, left out). Empty
/// without wait attribution, with one stage, or without steps outside the range.
FAILSLOW_FUNC std::vector<double> pipeline_wait_change(const job_model& m, const topology& topo, std::size_t first,
                                                       std::size_t last);

struct l4_options {
  double min_z = 5;                    ///< robust z of its own lateness against its peers'
  double min_excess_fraction = 0.005;  ///< own lateness over the peers', per step, / median iteration
  double persistence = 0.5;            ///< fraction of the range's steps where it is that late
  std::size_t min_steps = 3;
  double min_peer_rate = 0.05;  ///< the binomial test's rate is at least this (steps are not independent)
  double fdr_q = 0.01;          ///< Benjamini-Hochberg level over the ranks tested
  /// A rank late from the trace's first steps (its range starts within min_steps) shows no
  /// change, only that it is the slowest of its peers: it needs this much lateness over them
  /// per step (/ median iteration). GPUs of one model differ by a percent or so, and the
  /// slowest of a group arrives last at every step (L2's min_effect for the same reason).
  double from_start_min_excess_fraction = 0.03;
  /// A rank late from the first steps is also judged against the spread of its pipeline
  /// stage's ranks (their mean lateness over their peers) where the stage has at least this
  /// many ranks with peers.
  std::size_t min_stage_ranks = 8;
  /// A rank that waited at collectives (not point-to-point) for others over its range at least
  /// this many times as long as it was late itself is a link in their cascade: after a long wait
  /// its arrivals at the next collectives carry what remained of it.
  double cascade_wait_ratio = 4;
};

/// A rank the job waits for.
struct holdback {
  int rank = -1;
  std::size_t first = 0, last = 0;   ///< step indices
  double caused_ns_per_step = 0;     ///< others' wait blamed on it, summed over them, per step
  double per_victim_ns = 0;          ///< that, per rank that waited for it
  double late_ns_per_step = 0;       ///< its own lateness as the last arriver, per step
  double peer_late_ns_per_step = 0;  ///< the same, median of its peers
  double z = 0;
  double peer_rate = 0;             ///< share of (peer, step) late by the floor over the others
  double p_value = 1, q_value = 1;  ///< binomial persistence test; BH-adjusted
  std::size_t victims = 0, steps = 0;
  std::vector<int> peers;
  std::vector<std::pair<int, double>> top_victims;  ///< (rank, wait ns over the job), largest first
  std::string phase_before;
  double job_slowdown = 0;  ///< excess lateness per step / the median iteration time
};

struct l4_result {
  std::vector<holdback> holdbacks;
  std::vector<std::string> notes;
};

FAILSLOW_FUNC l4_result find_holdbacks(const job_model& m, const topology& topo, const l4_options& o = {});

}  // namespace failslow::diagnose

#if FAILSLOW_HEADER_ONLY
#include "failslow/diagnose/impl/l4_waits.ipp"
#endif
