// failslow/collect/mpi.hpp -- always-on window summaries gathered over MPI and diagnosed at a
// root while the job runs; the verdict is broadcast back to every rank. Optional component
// failslow::mpi (CMake FAILSLOW_WITH_MPI, Debian libopenmpi-dev / openmpi-bin).
//
// Synopsis
//   mpi_collector c(comm, options)        collective over `comm`: duplicates it (MPI_Comm_dup;
//                                         nothing is sent on the caller's communicator), then
//                                         splits the duplicate into nodes and node leaders
//   c.add(window, name_of)                local: encodes one closed window (compress/codec.hpp)
//                                         into this rank's message of the next round
//   c.add_encoded(fsum_bytes)             local: or an already encoded .fsum as that message
//   c.gather()                            collective, blocking: the round (MPI_Gather/Gatherv/Bcast)
//   c.post(); c.poll() ... c.wait()       collective, non-blocking: the same round with
//                                         MPI_Igather/Igatherv/Ibcast; poll() advances it and says
//                                         whether it is complete, so a trainer keeps training
//   One round, every rank, in this order (the "collective order": every rank of `comm` makes
//   these calls in the same order; a rank with nothing to send still takes part, with an
//   empty message, so it never blocks the others):
//     1. node    (I)gather   {bytes, status} of each rank to its node leader
//     2. node    (I)gatherv  the encoded bytes to the node leader (one message per node)
//     3. leaders (I)gather   the size of each node's message to the root       (leaders only)
//     4. leaders (I)gatherv  the node messages to the root                      (leaders only)
//     5. root: decodes each rank's bytes on their own (summary_decoder), merges them into its
//        history (the last history_steps window ids; a rank's window id must increase), builds
//        the job model (diagnose/job_model.hpp, windows added in (window id, rank) order as a
//        single .fsum of the same windows would add them) and diagnoses it (diagnose.hpp)
//     6. all     (I)bcast    the verdict's length, then 7. all (I)bcast the verdict
//   Nodes: ranks sharing memory (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)), or, with
//   options.ranks_per_node = n > 0, blocks of n consecutive ranks (emulates nodes on one
//   machine). The root is its node's leader. A node message: varint member count, per member
//   (comm rank, status, byte count) as varints, then the members' bytes.
//   Each rank's message of a round is a self-contained .fsum (header, names, a key window, then
//   deltas): damage stays within one rank and one round. Decoding errors (a bad header, damaged
//   blocks, lost delta references) are reported for that rank (receipts at the root, notes in
//   the report, damaged_comm_ranks everywhere) and the other ranks are diagnosed.
//   The verdict, on every rank: whether the root diagnosed, the report as JSON
//   (failslow.report/1, io/report_json.hpp, one line), the job ranks its findings name and the
//   communicator ranks that sent them, the communicator ranks whose bytes were damaged, and the
//   root's error when it could not diagnose (e.g. a rank outside the layout): the root never
//   throws between collectives, it broadcasts the error.
//   Offline (options.diagnose = false, options.merged_fsum = true): the root's result holds one
//   .fsum of the round's windows, re-encoded in (window id, rank) order with one dictionary
//   (`failslow compress --mpi`: each rank compresses its share of the trace files).
// Limits: MPI counts are int, so a rank sends at most min(max_rank_bytes,
//   (INT_MAX - 64 x comm size) / comm size) bytes per round; a rank over it sends no bytes and
//   status "over the limit", reported at the root for that rank.
// Complexity: encode O(window); root O(bytes received + history windows) plus the diagnosis.
// Errors: invalid_argument for MPI not initialised, a bad root or ranks_per_node, codec options
//   the encoder rejects, post()/gather() while a round is in flight, add() of a window with a
//   negative rank; mpi_error when an MPI call returns an error (only with an error handler
//   other than MPI_ERRORS_ARE_FATAL on `comm`). A collector must be destroyed before
//   MPI_Finalize; its destructor completes a round in flight (the buffers are MPI's until then).
#pragma once

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "failslow/compress/codec.hpp"
#include "failslow/compress/detail/bytes.hpp"
#include "failslow/compress/window_summary.hpp"
#include "failslow/core/error.hpp"
#include "failslow/core/name_table.hpp"
#include "failslow/core/report.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/diagnose/diagnose.hpp"
#include "failslow/diagnose/job_model.hpp"
#include "failslow/io/report_json.hpp"

namespace failslow::collect {

/// An MPI call returned an error code (the communicator's handler lets it return).
class mpi_error : public error {
 public:
  using error::error;
};

struct mpi_collector_options {
  int root = 0;                           ///< communicator rank that diagnoses
  int ranks_per_node = 0;                 ///< 0: nodes by shared memory; n > 0: n consecutive ranks
  compress::codec_options codec;          ///< of each rank's message
  std::size_t max_rank_bytes = 64 << 20;  ///< per rank and round (see Limits)
  bool diagnose = true;                   ///< the root diagnoses each round
  bool merged_fsum = false;               ///< the root keeps the round's windows as one .fsum
  std::optional<parallel_sizes> sizes;    ///< the job's layout; none: data-parallel over the ranks seen
  std::string order = std::string(topology::default_order);
  int world_size = 0;              ///< job ranks; 0: the layout's, else the largest rank seen + 1
  std::size_t history_steps = 64;  ///< the root diagnoses the last this many window ids; 0: all
  diagnose::model_options model = [] {
    diagnose::model_options m;
    m.keep_windows = true;  // L3 compares kernels
    return m;
  }();
  diagnose::diagnose_options diagnosis;
};

/// What the root received from one communicator rank in a round.
struct rank_receipt {
  int comm_rank = -1;
  int node = -1;               ///< index of its node message at the root
  std::uint64_t bytes = 0;     ///< encoded bytes received
  std::uint64_t windows = 0;   ///< windows decoded and kept
  std::vector<int> job_ranks;  ///< the job ranks its windows carried, ascending
  std::vector<compress::damaged_block> damaged;
  std::uint64_t windows_without_reference = 0;
  std::uint64_t windows_out_of_order = 0;  ///< a window id not after the rank's last: dropped
  std::string error;                       ///< a bad .fsum header or "over the limit"; empty if none
};

struct gather_result {
  std::uint64_t round = 0;  ///< 1, 2, ... on every rank
  // Every rank: the verdict broadcast by the root.
  bool diagnosed = false;
  std::string report_json;              ///< failslow.report/1 on one line; empty when not diagnosed
  std::vector<int> flagged_ranks;       ///< job ranks named by findings, ascending
  std::vector<int> flagged_comm_ranks;  ///< communicator ranks whose windows carried them
  std::vector<int> damaged_comm_ranks;  ///< communicator ranks whose bytes did not all decode
  std::string error;                    ///< why the root could not diagnose; empty otherwise
  std::uint64_t bytes_sent = 0;         ///< this rank's message
  std::uint64_t windows_sent = 0;
  // The root only.
  std::optional<failslow::report> report;
  std::vector<rank_receipt> receipts;                ///< per communicator rank
  std::string fsum;                                  ///< with options.merged_fsum
  double decode_s = 0, model_s = 0, diagnose_s = 0;  ///< the root's work in step 5
};

namespace detail {

inline void mpi_check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) len = 0;
  throw mpi_error(std::string(what) + ": " + std::string(text, static_cast<std::size_t>(std::max(len, 0))));
}

inline void put_ints(std::string& out, const std::vector<int>& v) {
  compress::detail::put_varint(out, v.size());
  for (int x : v) compress::detail::put_varint(out, static_cast<std::uint64_t>(x));
}
inline bool get_ints(compress::detail::byte_reader& r, std::vector<int>& v) {
  std::uint64_t n = 0, x = 0;
  if (!r.varint(n) || n > r.remaining()) return false;
  v.clear();
  for (std::uint64_t i = 0; i < n; ++i) {
    if (!r.varint(x) || x > static_cast<std::uint64_t>(INT_MAX)) return false;
    v.push_back(static_cast<int>(x));
  }
  return true;
}
inline void put_text(std::string& out, std::string_view s) {
  compress::detail::put_varint(out, s.size());
  out.append(s.data(), s.size());
}
inline bool get_text(compress::detail::byte_reader& r, std::string& s) {
  std::uint64_t n = 0;
  std::string_view v;
  if (!r.varint(n) || n > r.remaining() || !r.bytes(static_cast<std::size_t>(n), v)) return false;
  s.assign(v.data(), v.size());
  return true;
}

enum rank_status : int { status_ok = 0, status_over_limit = 1 };

}  // namespace detail

/// Gathers every rank's window summaries at a root, diagnoses them there and broadcasts the
/// verdict (see the synopsis). Not copyable; one round in flight at a time.
class mpi_collector {
 public:
  mpi_collector(MPI_Comm comm, mpi_collector_options options = {}) : opt_(std::move(options)) {
    int initialized = 0, finalized = 0;
    detail::mpi_check(MPI_Initialized(&initialized), "MPI_Initialized");
    detail::mpi_check(MPI_Finalized(&finalized), "MPI_Finalized");
    if (!initialized || finalized) throw invalid_argument("mpi_collector: MPI is not initialised (or finalised)");
    if (comm == MPI_COMM_NULL) throw invalid_argument("mpi_collector: MPI_COMM_NULL");
    int size = 0;
    detail::mpi_check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
    // Checked on every rank alike before the first collective call, so that all throw or none.
    if (opt_.root < 0 || opt_.root >= size)
      throw invalid_argument("mpi_collector: root " + std::to_string(opt_.root) + " outside [0, " +
                             std::to_string(size) + ")");
    if (opt_.ranks_per_node < 0) throw invalid_argument("mpi_collector: ranks_per_node must be >= 0");
    compress::summary_encoder probe([](name_id) { return std::string(); }, opt_.codec);  // validates
    detail::mpi_check(MPI_Comm_dup(comm, &comm_), "MPI_Comm_dup");
    detail::mpi_check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    size_ = size;
    // The root sorts first on its node and among the leaders (key 0), so it leads both.
    const int key = rank_ == opt_.root ? 0 : 1;
    if (opt_.ranks_per_node > 0)
      detail::mpi_check(MPI_Comm_split(comm_, rank_ / opt_.ranks_per_node, key, &node_), "MPI_Comm_split");
    else
      detail::mpi_check(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, key, MPI_INFO_NULL, &node_),
                        "MPI_Comm_split_type");
    detail::mpi_check(MPI_Comm_rank(node_, &node_rank_), "MPI_Comm_rank");
    detail::mpi_check(MPI_Comm_size(node_, &node_size_), "MPI_Comm_size");
    detail::mpi_check(MPI_Comm_split(comm_, node_rank_ == 0 ? 0 : MPI_UNDEFINED, key, &leaders_), "MPI_Comm_split");
    if (leaders_ != MPI_COMM_NULL) detail::mpi_check(MPI_Comm_size(leaders_, &leader_count_), "MPI_Comm_size");
    // Every count and displacement stays an int: a node's and the root's total included.
    const auto frame = std::size_t{64} * static_cast<std::size_t>(size_);
    limit_ =
        std::min(opt_.max_rank_bytes, (static_cast<std::size_t>(INT_MAX) - std::min<std::size_t>(frame, INT_MAX / 2)) /
                                          static_cast<std::size_t>(size_));
    if (opt_.world_size == 0 && opt_.sizes) opt_.world_size = topology(*opt_.sizes, opt_.order).world_size();
  }

  mpi_collector(const mpi_collector&) = delete;
  mpi_collector& operator=(const mpi_collector&) = delete;

  ~mpi_collector() {
    int finalized = 1;
    MPI_Finalized(&finalized);
    if (finalized) return;
    if (in_flight()) try {
        advance(true);
      } catch (...) {  // a destructor does not throw; MPI has released the buffers or aborted
      }
    for (MPI_Comm* c : {&leaders_, &node_, &comm_})
      if (*c != MPI_COMM_NULL) MPI_Comm_free(c);
  }

  int comm_rank() const noexcept { return rank_; }
  int comm_size() const noexcept { return size_; }
  int node_rank() const noexcept { return node_rank_; }  ///< 0: this rank leads its node
  int node_size() const noexcept { return node_size_; }
  int node_count() const noexcept { return leader_count_; }  ///< known on the leaders only (0 elsewhere)
  bool is_root() const noexcept { return rank_ == opt_.root; }
  /// A round was posted and is not complete yet.
  bool in_flight() const noexcept { return stage_ != stage::idle && stage_ != stage::done; }
  /// The largest message this rank may send per round (see Limits).
  std::size_t rank_byte_limit() const noexcept { return limit_; }
  /// The duplicate of the caller's communicator that the rounds' broadcasts use.
  MPI_Comm communicator() const noexcept { return comm_; }
  /// Bytes encoded for the next round so far.
  std::size_t pending_bytes() const noexcept { return next_.size(); }

  /// Encodes a closed window into this rank's next message; name_of(key) gives a key's name
  /// (std::string or string_view). Local: no MPI call.
  template <class NameOf>
  void add(const compress::window_summary& w, NameOf&& name_of) {
    if (w.rank < 0) throw invalid_argument("mpi_collector::add: window of rank " + std::to_string(w.rank));
    if (raw_) throw invalid_argument("mpi_collector::add: this round's message was given encoded (add_encoded)");
    if (!encoder_) {
      encoder_.emplace([this](name_id k) { return current_name_(k); }, opt_.codec);
      next_ = encoder_->header();
    }
    current_name_ = [&name_of](name_id k) { return std::string(name_of(k)); };
    encoder_->encode(w, next_);
    current_name_ = nullptr;
    ++next_windows_;
  }

  /// Makes an already encoded .fsum stream (header included: a file, another encoder) this
  /// rank's message of the next round. Not together with add() in one round. Local.
  void add_encoded(std::string_view fsum) {
    if (raw_ || !next_.empty())
      throw invalid_argument("mpi_collector::add_encoded: this round already has a message (add or add_encoded)");
    next_.assign(fsum.data(), fsum.size());
    raw_ = true;
  }

  /// The blocking round (collective): MPI_Gather, MPI_Gatherv, MPI_Bcast.
  gather_result gather() {
    start(true);
    advance(true);
    stage_ = stage::idle;
    return std::move(result_);
  }

  /// Posts a non-blocking round (collective): MPI_Igather, MPI_Igatherv, MPI_Ibcast.
  void post() {
    start(false);
    advance(false);
  }
  /// Advances the posted round; true when it is complete (then wait() returns at once).
  bool poll() {
    if (stage_ == stage::idle) throw invalid_argument("mpi_collector::poll: no round posted");
    return advance(false);
  }
  /// Completes the posted round and returns its result; the next round may be posted after.
  gather_result wait() {
    if (stage_ == stage::idle) throw invalid_argument("mpi_collector::wait: no round posted");
    advance(true);
    stage_ = stage::idle;
    return std::move(result_);
  }

 private:
  enum class stage { idle, node_counts, node_bytes, leader_counts, leader_bytes, verdict_length, verdict, done };

  void start(bool blocking) {
    if (stage_ != stage::idle)
      throw invalid_argument("mpi_collector: the round posted before was not collected with wait()");
    blocking_ = blocking;
    result_ = gather_result{};
    result_.round = ++round_;
    if (encoder_) encoder_->flush(next_);  // the zstd stage's last group (a no-op without it)
    send_ = std::move(next_);
    next_.clear();
    encoder_.reset();  // each round's message is self-contained
    raw_ = false;
    result_.windows_sent = next_windows_;
    next_windows_ = 0;
    my_counts_[1] = detail::status_ok;
    if (send_.size() > limit_) {
      send_.clear();
      my_counts_[1] = detail::status_over_limit;
    }
    my_counts_[0] = static_cast<int>(send_.size());
    result_.bytes_sent = send_.size();
    if (node_rank_ == 0) node_counts_.assign(2 * static_cast<std::size_t>(node_size_), 0);
    collective(stage::node_counts);
  }

  // Runs the stages until the round is done (or, not blocking, until one is still running).
  bool advance(bool block) {
    while (stage_ != stage::done) {
      if (request_ != MPI_REQUEST_NULL) {
        int flag = 0;
        if (block) {
          detail::mpi_check(MPI_Wait(&request_, MPI_STATUS_IGNORE), "MPI_Wait");
          flag = 1;
        } else {
          detail::mpi_check(MPI_Test(&request_, &flag, MPI_STATUS_IGNORE), "MPI_Test");
        }
        if (!flag) return false;
      }
      next_stage();
    }
    return true;
  }

  // Posts (or, blocking, runs) the collective of stage s.
  void collective(stage s) {
    stage_ = s;
    const bool b = blocking_;
    MPI_Request* rq = &request_;
    switch (s) {
      case stage::node_counts:
        detail::mpi_check(b ? MPI_Gather(my_counts_, 2, MPI_INT, node_counts_.data(), 2, MPI_INT, 0, node_)
                            : MPI_Igather(my_counts_, 2, MPI_INT, node_counts_.data(), 2, MPI_INT, 0, node_, rq),
                          "MPI_(I)gather");
        break;
      case stage::node_bytes:
        detail::mpi_check(b ? MPI_Gatherv(send_.data(), my_counts_[0], MPI_BYTE, node_buf_.data(), recv_counts_.data(),
                                          displs_.data(), MPI_BYTE, 0, node_)
                            : MPI_Igatherv(send_.data(), my_counts_[0], MPI_BYTE, node_buf_.data(), recv_counts_.data(),
                                           displs_.data(), MPI_BYTE, 0, node_, rq),
                          "MPI_(I)gatherv");
        break;
      case stage::leader_counts:
        detail::mpi_check(
            b ? MPI_Gather(&node_msg_size_, 1, MPI_INT, leader_sizes_.data(), 1, MPI_INT, 0, leaders_)
              : MPI_Igather(&node_msg_size_, 1, MPI_INT, leader_sizes_.data(), 1, MPI_INT, 0, leaders_, rq),
            "MPI_(I)gather");
        break;
      case stage::leader_bytes:
        detail::mpi_check(b ? MPI_Gatherv(node_msg_.data(), node_msg_size_, MPI_BYTE, root_buf_.data(),
                                          recv_counts_.data(), displs_.data(), MPI_BYTE, 0, leaders_)
                            : MPI_Igatherv(node_msg_.data(), node_msg_size_, MPI_BYTE, root_buf_.data(),
                                           recv_counts_.data(), displs_.data(), MPI_BYTE, 0, leaders_, rq),
                          "MPI_(I)gatherv");
        break;
      case stage::verdict_length:
        detail::mpi_check(b ? MPI_Bcast(&verdict_size_, 1, MPI_UINT64_T, opt_.root, comm_)
                            : MPI_Ibcast(&verdict_size_, 1, MPI_UINT64_T, opt_.root, comm_, rq),
                          "MPI_(I)bcast");
        break;
      case stage::verdict:
        detail::mpi_check(
            b ? MPI_Bcast(verdict_.data(), static_cast<int>(verdict_size_), MPI_BYTE, opt_.root, comm_)
              : MPI_Ibcast(verdict_.data(), static_cast<int>(verdict_size_), MPI_BYTE, opt_.root, comm_, rq),
            "MPI_(I)bcast");
        break;
      default:
        break;
    }
  }

  // The stage that just completed hands over to the next one.
  void next_stage() {
    switch (stage_) {
      case stage::node_counts:
        if (node_rank_ == 0) {  // sizes and offsets of the members' bytes
          recv_counts_.assign(static_cast<std::size_t>(node_size_), 0);
          displs_.assign(static_cast<std::size_t>(node_size_), 0);
          int at = 0;
          for (std::size_t i = 0; i < recv_counts_.size(); ++i) {
            recv_counts_[i] = node_counts_[2 * i];
            displs_[i] = at;
            at += recv_counts_[i];
          }
          node_buf_.assign(static_cast<std::size_t>(at) + 1, '\0');  // + 1: data() of an empty message
        }
        collective(stage::node_bytes);
        return;
      case stage::node_bytes:
        if (node_rank_ == 0) {
          build_node_message();
          if (rank_ == opt_.root) leader_sizes_.assign(static_cast<std::size_t>(leader_count_), 0);
          collective(stage::leader_counts);
        } else {
          collective(stage::verdict_length);
        }
        return;
      case stage::leader_counts:
        if (rank_ == opt_.root) {
          recv_counts_.assign(leader_sizes_.begin(), leader_sizes_.end());
          displs_.assign(recv_counts_.size(), 0);
          int at = 0;
          for (std::size_t i = 0; i < recv_counts_.size(); ++i) {
            displs_[i] = at;
            at += recv_counts_[i];
          }
          root_buf_.assign(static_cast<std::size_t>(at) + 1, '\0');
        }
        collective(stage::leader_bytes);
        return;
      case stage::leader_bytes:
        verdict_.clear();
        if (rank_ == opt_.root) root_work();
        verdict_size_ = verdict_.size();
        collective(stage::verdict_length);
        return;
      case stage::verdict_length:
        if (rank_ != opt_.root) verdict_.assign(static_cast<std::size_t>(verdict_size_), '\0');
        if (verdict_size_ > 0) {
          collective(stage::verdict);
          return;
        }
        [[fallthrough]];
      case stage::verdict:
        read_verdict();
        stage_ = stage::done;
        return;
      default:
        return;
    }
  }

  void build_node_message() {
    node_msg_.clear();
    compress::detail::put_varint(node_msg_, static_cast<std::uint64_t>(node_size_));
    // Node rank -> communicator rank: translated once (local, no communication).
    if (node_members_.empty()) {
      std::vector<int> node_ranks(static_cast<std::size_t>(node_size_));
      for (int i = 0; i < node_size_; ++i) node_ranks[static_cast<std::size_t>(i)] = i;
      node_members_.assign(node_ranks.size(), -1);
      MPI_Group from, to;
      detail::mpi_check(MPI_Comm_group(node_, &from), "MPI_Comm_group");
      detail::mpi_check(MPI_Comm_group(comm_, &to), "MPI_Comm_group");
      const int rc = MPI_Group_translate_ranks(from, node_size_, node_ranks.data(), to, node_members_.data());
      MPI_Group_free(&from);
      MPI_Group_free(&to);
      detail::mpi_check(rc, "MPI_Group_translate_ranks");
    }
    for (std::size_t i = 0; i < static_cast<std::size_t>(node_size_); ++i) {
      compress::detail::put_varint(node_msg_, static_cast<std::uint64_t>(node_members_[i]));
      compress::detail::put_varint(node_msg_, static_cast<std::uint64_t>(node_counts_[2 * i + 1]));
      compress::detail::put_varint(node_msg_, static_cast<std::uint64_t>(node_counts_[2 * i]));
    }
    node_msg_.append(node_buf_.data(), node_buf_.size() - 1);
    node_msg_size_ = static_cast<int>(node_msg_.size());
    node_msg_.push_back('\0');  // data() of a message never empty
  }

  // Step 5 at the root: never throws (the other ranks wait for the verdict); an error is sent.
  void root_work() {
    using clock = std::chrono::steady_clock;
    auto seconds = [](clock::time_point a, clock::time_point b) {
      return std::chrono::duration<double>(b - a).count();
    };
    std::string error;
    std::vector<int> flagged, flagged_comm, damaged_comm;
    bool diagnosed = false;
    try {
      const auto t0 = clock::now();
      std::vector<compress::window_summary> round_windows;
      decode_round(round_windows);
      for (const auto& rc : result_.receipts)
        if (!rc.error.empty() || !rc.damaged.empty() || rc.windows_without_reference > 0)
          damaged_comm.push_back(rc.comm_rank);
      if (opt_.merged_fsum) result_.fsum = encode_sorted(round_windows);
      const auto t1 = clock::now();
      result_.decode_s = seconds(t0, t1);
      if (opt_.diagnose) {
        const auto model = build_model();
        const auto t2 = clock::now();
        result_.model_s = seconds(t1, t2);
        topology topo;
        auto dopt = opt_.diagnosis;
        if (opt_.sizes) {
          topo = topology(*opt_.sizes, opt_.order);
        } else {
          parallel_sizes dp_only;
          dp_only.dp = std::max(1, model.world_size);
          topo = topology(dp_only);
          dopt.topology_source = "data-parallel (assumed: no layout given)";
          dopt.layout_assumed = true;
        }
        if (model.world_size > topo.world_size())
          throw invalid_argument("rank " + std::to_string(model.world_size - 1) + " is outside the layout of " +
                                 std::to_string(topo.world_size()) + " ranks");
        result_.report = diagnose::diagnose(model, topo, dopt);
        result_.diagnose_s = seconds(t2, clock::now());
        for (const auto& f : result_.report->findings) flagged.insert(flagged.end(), f.ranks.begin(), f.ranks.end());
        std::sort(flagged.begin(), flagged.end());
        flagged.erase(std::unique(flagged.begin(), flagged.end()), flagged.end());
        for (const auto& rc : result_.receipts)
          for (int j : rc.job_ranks)
            if (std::binary_search(flagged.begin(), flagged.end(), j)) {
              flagged_comm.push_back(rc.comm_rank);
              break;
            }
        diagnosed = true;
      }
    } catch (const std::exception& e) {
      error = e.what();
      diagnosed = false;
      result_.report.reset();
    }
    verdict_.push_back(diagnosed ? 1 : 0);
    detail::put_ints(verdict_, flagged);
    detail::put_ints(verdict_, flagged_comm);
    detail::put_ints(verdict_, damaged_comm);
    detail::put_text(verdict_, diagnosed ? io::report_to_json(*result_.report, 0) : std::string());
    detail::put_text(verdict_, error);
    if (verdict_.size() > static_cast<std::size_t>(INT_MAX)) {  // a broadcast count is an int
      verdict_.assign(1, '\0');
      for (int i = 0; i < 3; ++i) detail::put_ints(verdict_, {});
      detail::put_text(verdict_, "");
      detail::put_text(verdict_, "the report is over 2 GiB, not broadcast");
    }
  }

  void read_verdict() {
    compress::detail::byte_reader r(std::string_view(verdict_.data(), verdict_.size()));
    std::string_view status;
    if (!r.bytes(1, status) || !detail::get_ints(r, result_.flagged_ranks) ||
        !detail::get_ints(r, result_.flagged_comm_ranks) || !detail::get_ints(r, result_.damaged_comm_ranks) ||
        !detail::get_text(r, result_.report_json) || !detail::get_text(r, result_.error)) {
      result_.error = "the verdict broadcast by the root is inconsistent";
      return;
    }
    result_.diagnosed = status[0] == 1;
  }

  // Every member's bytes of every node message, decoded on their own; windows re-keyed into
  // the root's name table, kept in the history (and in `round` for the merged .fsum).
  void decode_round(std::vector<compress::window_summary>& round) {
    round_notes_.clear();
    result_.receipts.assign(static_cast<std::size_t>(size_), rank_receipt{});
    for (int i = 0; i < size_; ++i) result_.receipts[static_cast<std::size_t>(i)].comm_rank = i;
    std::vector<std::string> notes;
    for (std::size_t node = 0; node < recv_counts_.size(); ++node) {
      std::string_view msg(root_buf_.data() + displs_[node], static_cast<std::size_t>(recv_counts_[node]));
      compress::detail::byte_reader r(msg);
      std::uint64_t members = 0;
      struct member {
        std::uint64_t comm_rank, status, bytes;
      };
      std::vector<member> list;
      bool ok = r.varint(members) && members <= msg.size();
      for (std::uint64_t m = 0; ok && m < members; ++m) {
        member e{};
        ok = r.varint(e.comm_rank) && r.varint(e.status) && r.varint(e.bytes) &&
             e.comm_rank < static_cast<std::uint64_t>(size_);
        list.push_back(e);
      }
      std::uint64_t total = 0;
      for (const auto& e : list) total += e.bytes;
      if (!ok || total != r.remaining()) {  // the framing is ours: a bug, not the network
        error_note("node message " + std::to_string(node) + " is inconsistent, its ranks are not diagnosed");
        continue;
      }
      std::size_t at = msg.size() - static_cast<std::size_t>(r.remaining());
      for (const auto& e : list) {
        auto& rc = result_.receipts[static_cast<std::size_t>(e.comm_rank)];
        rc.node = static_cast<int>(node);
        rc.bytes = e.bytes;
        const std::string_view bytes = msg.substr(at, static_cast<std::size_t>(e.bytes));
        at += static_cast<std::size_t>(e.bytes);
        if (e.status == detail::status_over_limit)
          rc.error = "its message was over the limit of " + std::to_string(limit_) + " bytes, not sent";
        else if (!bytes.empty())
          decode_member(bytes, rc, round);
      }
    }
    for (auto& rc : result_.receipts) {
      std::sort(rc.job_ranks.begin(), rc.job_ranks.end());
      rc.job_ranks.erase(std::unique(rc.job_ranks.begin(), rc.job_ranks.end()), rc.job_ranks.end());
    }
    // The history: the last history_steps window ids.
    if (opt_.history_steps > 0 && !history_.empty()) {
      std::uint64_t newest = 0;
      for (const auto& [rank, ws] : history_)
        if (!ws.empty()) newest = std::max(newest, ws.rbegin()->first);
      const std::uint64_t keep_from = newest >= opt_.history_steps ? newest - opt_.history_steps + 1 : 0;
      for (auto& [rank, ws] : history_) ws.erase(ws.begin(), ws.lower_bound(keep_from));
    }
  }

  void error_note(std::string note) { round_notes_.push_back(std::move(note)); }

  void decode_member(std::string_view bytes, rank_receipt& rc, std::vector<compress::window_summary>& round) {
    const std::string source = "comm rank " + std::to_string(rc.comm_rank);
    try {
      const auto d = compress::decode_summaries_to(
          bytes,
          [&](compress::window_summary&& w, const compress::decoded_summaries& so_far) {
            for (auto& k : w.kernels) {
              const auto it = so_far.names.find(k.key);
              k.key = names_.intern(it == so_far.names.end() ? std::string_view() : std::string_view(it->second));
            }
            std::sort(
                w.kernels.begin(), w.kernels.end(),
                [](const compress::kernel_summary& a, const compress::kernel_summary& b) { return a.key < b.key; });
            auto& ws = history_[w.rank];
            if (!ws.empty() && ws.rbegin()->first >= w.window_id) {
              ++rc.windows_out_of_order;
              return;
            }
            rc.job_ranks.push_back(w.rank);
            ++rc.windows;
            if (opt_.merged_fsum) round.push_back(w);
            const auto id = w.window_id;
            if (opt_.diagnose) ws.emplace_hint(ws.end(), id, std::move(w));
          },
          source);
      rc.damaged = d.damaged;
      rc.windows_without_reference = d.windows_without_reference;
    } catch (const parse_error& e) {
      rc.error = e.what();
    }
    for (const auto& dmg : rc.damaged)
      error_note(source + ": damaged block at byte " + std::to_string(dmg.offset) + " (" + dmg.reason + "), skipped");
    if (rc.windows_without_reference > 0)
      error_note(source + ": " + std::to_string(rc.windows_without_reference) +
                 " windows lost their reference after damage, skipped");
    if (rc.windows_out_of_order > 0)
      error_note(source + ": " + std::to_string(rc.windows_out_of_order) +
                 " windows not after the same rank's last window id, dropped");
    if (!rc.error.empty()) error_note(source + ": " + rc.error + "; its windows of this round are not diagnosed");
  }

  // The history's windows in (window id, rank) order, as one .fsum of them would add them.
  std::vector<const compress::window_summary*> sorted_history() const {
    std::vector<const compress::window_summary*> all;
    for (const auto& [rank, ws] : history_)
      for (const auto& [id, w] : ws) all.push_back(&w);
    std::sort(all.begin(), all.end(), [](const auto* a, const auto* b) {
      return a->window_id != b->window_id ? a->window_id < b->window_id : a->rank < b->rank;
    });
    return all;
  }

  std::string encode_sorted(std::vector<compress::window_summary>& windows) const {
    std::sort(windows.begin(), windows.end(), [](const auto& a, const auto& b) {
      return a.window_id != b.window_id ? a.window_id < b.window_id : a.rank < b.rank;
    });
    compress::summary_encoder enc([this](name_id k) { return std::string(names_.name(k)); }, opt_.codec);
    std::string out = enc.header();
    for (const auto& w : windows) enc.encode(w, out);
    enc.flush(out);
    return out;
  }

  diagnose::job_model build_model() {
    auto mo = opt_.model;
    if (opt_.world_size > 0) mo.world_size = opt_.world_size;
    diagnose::job_model_builder b(mo);
    for (const auto* w : sorted_history()) b.add_window(*w, [this](name_id k) { return names_.name(k); });
    for (auto& n : round_notes_) b.add_note(std::move(n));
    round_notes_.clear();
    return b.finish();
  }

  mpi_collector_options opt_;
  MPI_Comm comm_ = MPI_COMM_NULL, node_ = MPI_COMM_NULL, leaders_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1, node_rank_ = 0, node_size_ = 1, leader_count_ = 0;
  std::size_t limit_ = 0;
  // This rank's messages.
  std::optional<compress::summary_encoder> encoder_;
  std::function<std::string(name_id)> current_name_;
  std::string next_, send_;
  std::uint64_t next_windows_ = 0, round_ = 0;
  bool raw_ = false;  // next_ came from add_encoded
  int my_counts_[2] = {0, 0};
  // The round in flight.
  stage stage_ = stage::idle;
  bool blocking_ = false;
  MPI_Request request_ = MPI_REQUEST_NULL;
  std::vector<int> node_counts_, recv_counts_, displs_, leader_sizes_, node_members_;
  std::string node_buf_, node_msg_, root_buf_, verdict_;
  int node_msg_size_ = 0;
  std::uint64_t verdict_size_ = 0;
  gather_result result_;
  // The root's state across rounds.
  name_table names_;
  std::map<int, std::map<std::uint64_t, compress::window_summary>> history_;
  std::vector<std::string> round_notes_;
};

}  // namespace failslow::collect
