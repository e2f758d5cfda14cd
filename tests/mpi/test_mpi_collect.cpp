// The MPI collector (collect/mpi.hpp), run under mpirun by ctest (tests/CMakeLists.txt: 4 and 8
// processes, nodes by shared memory and emulated by --ranks-per-node N). Each process carries the
// simulated ranks r with r % processes == its rank of a 16-rank job with a compute straggler;
// the gathered diagnosis must be byte for byte the single-process diagnosis of one .fsum of the
// same windows, name the straggler, and damaged or empty ranks must be reported, not block.
// Every test case makes the same collective calls on every process (Catch2 runs them in the same
// order everywhere); checks are CHECKs so that a failure never skips a collective call.
#include <mpi.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <failslow/collect/mpi.hpp>
#include <failslow/compress/codec.hpp>
#include <failslow/diagnose/diagnose.hpp>
#include <failslow/diagnose/job_model.hpp>
#include <failslow/diagnose/model_from_summaries.hpp>
#include <failslow/io/report_json.hpp>
#include <failslow/sim/summaries.hpp>
#include <map>
#include <string>
#include <vector>

using namespace failslow;
using collect::mpi_collector;
using collect::mpi_collector_options;
using compress::window_summary;

// --ranks-per-node=N (test_mpi_main.cpp): emulated nodes; 0: nodes by shared memory.
extern int failslow_mpi_test_ranks_per_node;

namespace {

int mpit_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int mpit_size() {
  int s = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

// The simulated job every process generates alike (the simulator is deterministic).
const sim::summary_run& mpit_job() {
  static const sim::summary_run run = [] {
    sim::job_config cfg;
    cfg.sizes = parallel_sizes{};
    cfg.sizes.tp = 2;
    cfg.sizes.pp = 2;
    cfg.sizes.dp = 4;
    cfg.steps = 12;
    cfg.seed = 7;
    return sim::collect_summaries(cfg, sim::scenario::compute_straggler);
  }();
  return run;
}

std::string mpit_name(name_id k) { return std::string(sim::kernel_key_name(k)); }

mpi_collector_options mpit_options() {
  mpi_collector_options o;
  o.sizes = mpit_job().config.sizes;
  o.ranks_per_node = failslow_mpi_test_ranks_per_node;
  return o;
}

// One .fsum of the windows with window id <= last_step, in (window id, rank) order.
std::string mpit_encode(std::uint64_t last_step) {
  std::vector<const window_summary*> ws;
  for (const auto& w : mpit_job().summaries)
    if (w.window_id <= last_step) ws.push_back(&w);
  std::stable_sort(ws.begin(), ws.end(), [](const auto* a, const auto* b) {
    return a->window_id != b->window_id ? a->window_id < b->window_id : a->rank < b->rank;
  });
  compress::summary_encoder enc(mpit_name);
  std::string bytes = enc.header();
  for (const auto* w : ws) enc.encode(*w, bytes);
  return bytes;
}

// The single-process diagnosis of those windows, as the collector's report JSON.
std::string mpit_reference_json(std::uint64_t last_step) {
  diagnose::model_options mo;
  mo.keep_windows = true;
  mo.world_size = mpit_job().topo.world_size();
  const auto model = diagnose::build_job_model_from_summaries(mpit_encode(last_step), mo);
  return io::report_to_json(diagnose::diagnose(model, topology(mpit_job().config.sizes)), 0);
}

// Adds this process's share of the windows of steps [first, last].
void mpit_add_share(mpi_collector& c, std::uint64_t first, std::uint64_t last, int skip_process = -1) {
  const int me = mpit_rank(), n = mpit_size();
  if (me == skip_process) return;
  for (const auto& w : mpit_job().summaries)
    if (w.window_id >= first && w.window_id <= last && w.rank % n == me) c.add(w, mpit_name);
}

int mpit_fault_rank() { return mpit_job().truth.faults.at(0).ranks.at(0); }

void mpit_check_rounds(bool blocking, int root) {
  const auto& job = mpit_job();
  auto o = mpit_options();
  o.root = root;
  mpi_collector c(MPI_COMM_WORLD, o);
  const auto first = static_cast<std::uint64_t>(job.config.first_step);
  const int per_round = 4;
  for (int round = 0; round < job.config.steps / per_round; ++round) {
    const std::uint64_t a = first + static_cast<std::uint64_t>(round * per_round), b = a + per_round - 1;
    mpit_add_share(c, a, b);
    collect::gather_result res;
    if (blocking) {
      res = c.gather();
    } else {
      c.post();
      CHECK(c.in_flight());
      while (!c.poll()) {
        // a trainer would run a training step here
      }
      CHECK_FALSE(c.in_flight());
      res = c.wait();
    }
    INFO("round " << round + 1 << ", blocking " << blocking << ", root " << root);
    CHECK(res.round == static_cast<std::uint64_t>(round + 1));
    CHECK(res.diagnosed);
    CHECK(res.error.empty());
    CHECK(res.bytes_sent > 0);
    CHECK(res.damaged_comm_ranks.empty());
    CHECK(res.report_json == mpit_reference_json(b));
    CHECK(res.report.has_value() == (mpit_rank() == root));
    if (mpit_rank() == root) {
      REQUIRE(res.receipts.size() == static_cast<std::size_t>(mpit_size()));
      std::uint64_t windows = 0;
      for (const auto& rc : res.receipts) {
        CHECK(rc.error.empty());
        CHECK(rc.damaged.empty());
        CHECK(rc.bytes > 0);
        windows += rc.windows;
        for (int j : rc.job_ranks) CHECK(j % mpit_size() == rc.comm_rank);
      }
      CHECK(windows == static_cast<std::uint64_t>(job.topo.world_size() * per_round));
      CHECK(res.model_s >= 0);
    }
    if (round + 1 == job.config.steps / per_round) {  // all 12 steps: the straggler is named
      const int f = mpit_fault_rank();
      CHECK(std::count(res.flagged_ranks.begin(), res.flagged_ranks.end(), f) == 1);
      CHECK(std::count(res.flagged_comm_ranks.begin(), res.flagged_comm_ranks.end(), f % mpit_size()) == 1);
      CHECK(res.report_json.find("compute straggler") != std::string::npos);
    }
  }
}

}  // namespace

TEST_CASE("mpi: the collector duplicates the caller's communicator and splits it into nodes", "[mpi]") {
  mpi_collector c(MPI_COMM_WORLD, mpit_options());
  int cmp = MPI_IDENT;
  MPI_Comm_compare(c.communicator(), MPI_COMM_WORLD, &cmp);
  CHECK(cmp == MPI_CONGRUENT);
  CHECK(c.comm_rank() == mpit_rank());
  CHECK(c.comm_size() == mpit_size());
  // Node leaders: one per node; the node sizes add up to the world.
  int leaders = c.node_rank() == 0 ? 1 : 0, members = c.node_rank() == 0 ? c.node_size() : 0;
  MPI_Allreduce(MPI_IN_PLACE, &leaders, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &members, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK(members == mpit_size());
  if (failslow_mpi_test_ranks_per_node > 0) {
    CHECK(leaders == (mpit_size() + failslow_mpi_test_ranks_per_node - 1) / failslow_mpi_test_ranks_per_node);
    CHECK(c.node_rank() == mpit_rank() % failslow_mpi_test_ranks_per_node);
  } else {
    CHECK(leaders == 1);  // one machine
  }
  if (c.is_root()) CHECK(c.node_count() == leaders);
}

TEST_CASE("mpi: gathered rounds give the single-process diagnosis and name the straggler", "[mpi]") {
  SECTION("blocking, root 0") { mpit_check_rounds(true, 0); }
  SECTION("non-blocking, the last rank as root") { mpit_check_rounds(false, mpit_size() - 1); }
}

TEST_CASE("mpi: a damaged rank's bytes are reported for that rank, the rest is diagnosed", "[mpi]") {
  REQUIRE(mpit_size() >= 4);
  const auto& job = mpit_job();
  mpi_collector c(MPI_COMM_WORLD, mpit_options());
  const int me = mpit_rank(), n = mpit_size();
  std::uint64_t carried = 0;
  if (me == 1) {  // its windows encoded elsewhere, a byte flipped in the middle
    compress::summary_encoder enc(mpit_name);
    std::string bytes = enc.header();
    for (const auto& w : job.summaries)
      if (w.rank % n == me) {
        enc.encode(w, bytes);
        ++carried;
      }
    bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x5A);
    c.add_encoded(bytes);
    CHECK_THROWS_AS(c.add(job.summaries.front(), mpit_name), invalid_argument);
  } else if (me == 2) {
    c.add_encoded("not a summary stream");
  } else {
    mpit_add_share(c, 0, UINT64_MAX);
  }
  const auto res = c.gather();
  CHECK(res.diagnosed);
  CHECK(res.damaged_comm_ranks == std::vector<int>{1, 2});
  CHECK(res.report_json.find("comm rank 1: damaged block at byte") != std::string::npos);
  CHECK(res.report_json.find("comm rank 2: ") != std::string::npos);
  if (c.is_root()) {
    const auto& r1 = res.receipts.at(1);
    CHECK_FALSE(r1.damaged.empty());
    CHECK(r1.error.empty());
    CHECK(r1.windows > 0);
    CHECK(r1.windows + r1.windows_without_reference + r1.damaged.size() >= 1);
    CHECK(r1.windows < static_cast<std::uint64_t>(job.summaries.size()) / static_cast<std::uint64_t>(n));
    CHECK(res.receipts.at(2).error.find("FSUM") != std::string::npos);
    CHECK(res.receipts.at(2).windows == 0);
    for (int r = 0; r < n; ++r)
      if (r != 1 && r != 2) {
        CHECK(res.receipts.at(static_cast<std::size_t>(r)).damaged.empty());
        CHECK(res.receipts.at(static_cast<std::size_t>(r)).windows ==
              job.summaries.size() / static_cast<std::size_t>(n));
      }
  }
}

TEST_CASE("mpi: a rank with no data or empty windows never blocks the others", "[mpi]") {
  const int me = mpit_rank(), n = mpit_size();
  auto o = mpit_options();
  o.sizes.reset();  // data-parallel over the ranks seen
  mpi_collector c(MPI_COMM_WORLD, o);
  for (int round = 1; round <= 2; ++round) {
    // The last process sends nothing; the others one window each without kernels.
    if (me != n - 1) {
      window_summary w;
      w.rank = me;
      w.window_id = static_cast<std::uint64_t>(round);
      w.start_ns = 1000 * round;
      w.end_ns = w.start_ns + 500;
      c.add(w, mpit_name);
    }
    c.post();
    if (me == n - 1) {
      while (!c.poll()) {
      }
    }
    const auto res = c.wait();
    CHECK(res.error.empty());
    CHECK(res.diagnosed);
    CHECK(res.windows_sent == (me == n - 1 ? 0u : 1u));
    CHECK((res.bytes_sent == 0) == (me == n - 1));
    if (c.is_root()) {
      CHECK(res.receipts.at(static_cast<std::size_t>(n - 1)).bytes == 0);
      CHECK(res.receipts.at(static_cast<std::size_t>(n - 1)).windows == 0);
      CHECK(res.receipts.at(0).windows == 1);
      REQUIRE(res.report.has_value());
      CHECK(res.report->world_size == n - 1);
    }
  }
}

TEST_CASE("mpi: a rank over the byte limit is reported, the root's errors are broadcast", "[mpi]") {
  const int n = mpit_size();
  SECTION("over the limit") {
    auto o = mpit_options();
    o.max_rank_bytes = 64;
    mpi_collector c(MPI_COMM_WORLD, o);
    CHECK(c.rank_byte_limit() == 64);
    mpit_add_share(c, 0, UINT64_MAX);
    const auto res = c.gather();
    CHECK(res.bytes_sent == 0);
    CHECK(static_cast<int>(res.damaged_comm_ranks.size()) == n);
    if (c.is_root())
      for (const auto& rc : res.receipts) CHECK(rc.error.find("over the limit of 64 bytes") != std::string::npos);
  }
  SECTION("a layout too small for the ranks") {
    auto o = mpit_options();
    o.sizes = parallel_sizes{};
    o.sizes->dp = 2;
    o.world_size = 0;
    mpi_collector c(MPI_COMM_WORLD, o);
    for (int round = 0; round < 2; ++round) {  // the collector stays usable
      mpit_add_share(c, 0, UINT64_MAX);
      const auto res = c.gather();
      CHECK_FALSE(res.diagnosed);
      CHECK(res.report_json.empty());
      CHECK(res.error.find("outside the layout of 2 ranks") != std::string::npos);
    }
  }
}

TEST_CASE("mpi: offline, the root writes one .fsum of every rank's windows", "[mpi]") {
  auto o = mpit_options();
  o.diagnose = false;
  o.merged_fsum = true;
  mpi_collector c(MPI_COMM_WORLD, o);
  mpit_add_share(c, 0, UINT64_MAX);
  const auto res = c.gather();
  CHECK_FALSE(res.diagnosed);
  CHECK(res.error.empty());
  CHECK(res.report_json.empty());
  if (!c.is_root()) {
    CHECK(res.fsum.empty());
    return;
  }
  // The same windows, values and order as one encoder of all of them (keys by name).
  const auto got = compress::decode_summaries(res.fsum), want = compress::decode_summaries(mpit_encode(UINT64_MAX));
  CHECK(got.damaged.empty());
  REQUIRE(got.windows.size() == want.windows.size());
  REQUIRE(got.windows.size() == mpit_job().summaries.size());
  std::size_t mismatched = 0;
  for (std::size_t i = 0; i < got.windows.size(); ++i) {
    const auto &g = got.windows[i], &w = want.windows[i];
    bool same = g.rank == w.rank && g.window_id == w.window_id && g.start_ns == w.start_ns && g.end_ns == w.end_ns &&
                g.kernels.size() == w.kernels.size();
    std::map<std::string, const compress::kernel_summary*> by_name;
    for (const auto& k : w.kernels) by_name[want.names.at(k.key)] = &k;
    for (const auto& k : g.kernels) {
      const auto it = by_name.find(got.names.at(k.key));
      same = same && it != by_name.end() && it->second->count == k.count && it->second->total_ns == k.total_ns &&
             it->second->clusters.size() == k.clusters.size() &&
             (k.clusters.empty() || it->second->clusters.back().p99 == k.clusters.back().p99);
    }
    mismatched += same ? 0 : 1;
  }
  CHECK(mismatched == 0);
}

TEST_CASE("mpi: misuse is a typed error before any collective call", "[mpi]") {
  auto o = mpit_options();
  o.root = mpit_size();
  CHECK_THROWS_AS(mpi_collector(MPI_COMM_WORLD, o), invalid_argument);
  o.root = 0;
  o.codec.precision_bits = 2;
  CHECK_THROWS_AS(mpi_collector(MPI_COMM_WORLD, o), invalid_argument);
  CHECK_THROWS_AS(mpi_collector(MPI_COMM_NULL, mpit_options()), invalid_argument);
  mpi_collector c(MPI_COMM_WORLD, mpit_options());
  window_summary bad;
  bad.rank = -1;
  CHECK_THROWS_AS(c.add(bad, mpit_name), invalid_argument);
  CHECK_THROWS_AS(c.poll(), invalid_argument);
  CHECK_THROWS_AS(c.wait(), invalid_argument);
  c.post();
  CHECK_THROWS_AS(c.post(), invalid_argument);
  CHECK_THROWS_AS(c.gather(), invalid_argument);
  const auto res = c.wait();
  CHECK(res.bytes_sent == 0);
}
