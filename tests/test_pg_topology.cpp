#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <failslow/io/kineto_reader.hpp>
#include <failslow/sim/kineto_writer.hpp>
#include <failslow/sim/simulator.hpp>
#include <failslow/trace/pg_topology.hpp>
#include <iostream>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "support/kineto_data.hpp"

using namespace failslow;
using failslow::trace::infer_topology;
using failslow::trace::inferred_topology;

namespace {

io::process_group make_pg(std::string name, std::string desc, const std::vector<int>& ranks) {
  io::process_group pg;
  pg.name = std::move(name);
  pg.desc = std::move(desc);
  pg.backend_config = "cuda:nccl";
  pg.size = static_cast<std::int64_t>(ranks.size());
  pg.ranks.assign(ranks.begin(), ranks.end());
  return pg;
}

std::vector<int> all_ranks(int world) {
  std::vector<int> v(static_cast<std::size_t>(world));
  for (int r = 0; r < world; ++r) v[static_cast<std::size_t>(r)] = r;
  return v;
}

// distributedInfo of `rank` as sim/kineto_writer.hpp writes it: the default group, then every
// tp, cp, ep, dp, pp group of more than one rank the rank belongs to, with Megatron's names.
io::distributed_info simulated_info(const topology& topo, int rank) {
  io::distributed_info info;
  info.backend = "nccl";
  info.rank = rank;
  info.world_size = topo.world_size();
  info.nccl_version = "2.21.5";
  info.pg_config.push_back(make_pg("0", "default_pg", all_ranks(topo.world_size())));
  for (parallel_dim d : all_parallel_dims) {
    const std::string name = sim::process_group_name(topo, rank, d);
    if (name.empty()) continue;
    info.pg_config.push_back(make_pg(name, std::string(sim::process_group_description(d)), topo.group(rank, d)));
  }
  info.pg_count = static_cast<std::int64_t>(info.pg_config.size());
  return info;
}

std::vector<io::distributed_info> simulated_infos(const topology& topo, const std::vector<int>& ranks) {
  std::vector<io::distributed_info> out;
  for (int r : ranks) out.push_back(simulated_info(topo, r));
  return out;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += "  " + l + "\n";
  return s;
}

bool mentions(const inferred_topology& t, const std::string& what) {
  return std::any_of(t.evidence.begin(), t.evidence.end(),
                     [&](const std::string& e) { return e.find(what) != std::string::npos; });
}

// The inferred topology yields the same group as `truth` for every rank and dimension.
void check_same_groups(const inferred_topology& got, const topology& truth) {
  REQUIRE(got.world_size == truth.world_size());
  const topology t = got.to_topology();
  for (parallel_dim d : all_parallel_dims) CHECK(got.sizes[d] == truth.size(d));
  for (int r = 0; r < truth.world_size(); ++r)
    for (parallel_dim d : all_parallel_dims) {
      INFO("rank " << r << " dim " << to_string(d));
      REQUIRE(t.group(r, d) == truth.group(r, d));
    }
}

struct layout {
  parallel_sizes sizes;
  std::string order;
  std::vector<int> traced;  // ranks whose traces are given
  std::string expected_order;
};

}  // namespace

TEST_CASE("simulated pg_config round-trips sizes and order, from any subset of ranks") {
  const std::vector<layout> layouts = {
      {{2, 1, 1, 8, 4}, "tp-cp-ep-dp-pp", {0, 13, 63}, "tp-cp-ep-dp-pp"},
      {{2, 1, 1, 8, 4}, "tp-cp-ep-dp-pp", {37}, "tp-cp-ep-dp-pp"},
      {{4, 1, 1, 2, 2}, "tp-cp-ep-pp-dp", {5}, "tp-cp-ep-pp-dp"},
      {{4, 1, 1, 2, 2}, "tp-pp-dp", {0, 15}, "tp-cp-ep-pp-dp"},
      {{8, 1, 1, 16, 1}, "tp-cp-ep-dp-pp", {0, 127}, "tp-cp-ep-dp-pp"},
      {{1, 1, 1, 8, 1}, "tp-cp-ep-dp-pp", {3}, "tp-cp-ep-dp-pp"},
      {{1, 1, 1, 1, 4}, "tp-cp-ep-dp-pp", {1, 2}, "tp-cp-ep-dp-pp"},
      {{2, 2, 2, 2, 2}, "tp-cp-ep-dp-pp", {0, 31}, "tp-cp-ep-dp-pp"},
      {{2, 2, 2, 2, 2}, "tp-cp-ep-dp-pp", {22}, "tp-cp-ep-dp-pp"},
      {{2, 2, 4, 1, 2}, "ep-tp-cp-pp-dp", {9}, "ep-tp-cp-dp-pp"},
      {{2, 4, 1, 2, 1}, "cp-tp-dp", {0, 6, 15}, "cp-tp-ep-dp-pp"},
      {{1, 1, 1, 1, 1}, "tp-cp-ep-dp-pp", {0}, ""},  // one rank: only the default group
  };
  for (const auto& l : layouts) {
    const topology truth(l.sizes, l.order);
    INFO("layout tp" << l.sizes.tp << " cp" << l.sizes.cp << " ep" << l.sizes.ep << " dp" << l.sizes.dp << " pp"
                     << l.sizes.pp << " " << l.order << ", " << l.traced.size() << " traces");
    const auto got = infer_topology(simulated_infos(truth, l.traced));
    if (l.expected_order.empty()) {
      CHECK_FALSE(got);
      continue;
    }
    REQUIRE(got);
    INFO(joined(got->evidence));
    CHECK(got->order == l.expected_order);
    check_same_groups(*got, truth);
  }

  // Every rank's trace, and the evidence says what it used.
  const topology truth(parallel_sizes{2, 1, 1, 8, 4});
  const auto got = infer_topology(simulated_infos(truth, all_ranks(64)));
  REQUIRE(got);
  INFO(joined(got->evidence));
  check_same_groups(*got, truth);
  CHECK(got->order == "tp-cp-ep-dp-pp");
  CHECK(mentions(*got, "TENSOR_MODEL_PARALLEL_GROUP: 32 groups of 2 ranks"));
  CHECK(mentions(*got, "PIPELINE_MODEL_PARALLEL_GROUP: 16 groups of 4 ranks"));
  CHECK(mentions(*got, "default_pg: 1 group of all 64 ranks"));
  CHECK(got->evidence.front() == "tp=2 cp=1 ep=1 dp=8 pp=4, order tp-cp-ep-dp-pp");
}

TEST_CASE("several consistent orders: the default one is preferred and the evidence says so") {
  // tp and dp only (pp = cp = ep = 1): every order with tp before dp reproduces the groups.
  const topology truth(parallel_sizes{4, 1, 1, 2, 1});
  const auto got = infer_topology(simulated_infos(truth, {0}));
  REQUIRE(got);
  INFO(joined(got->evidence));
  CHECK(got->order == "tp-cp-ep-dp-pp");
  CHECK(mentions(*got, "differing only in dimensions of size 1"));
  CHECK(mentions(*got, "the default order"));

  // Not the default: dp fastest; the first consistent order in permutation order.
  const topology swapped(parallel_sizes{4, 1, 1, 2, 1}, "dp-tp");
  const auto got2 = infer_topology(simulated_infos(swapped, {3}));
  REQUIRE(got2);
  INFO(joined(got2->evidence));
  CHECK(got2->order == "cp-ep-dp-tp-pp");  // first permutation with dp before tp
  check_same_groups(*got2, swapped);
  CHECK(mentions(*got2, "the first consistent order in permutation order"));
}

TEST_CASE("Megatron MoE groups, ignored groups and torch DeviceMesh descriptions") {
  // Megatron with EP: DATA_PARALLEL_GROUP spans ep and dp (the decoder generator has ep = 1),
  // EXPERT_DATA_PARALLEL_GROUP is this library's dp; plus groups that are no dimension.
  const topology truth(parallel_sizes{2, 1, 2, 2, 2});  // 16 ranks
  std::vector<io::distributed_info> infos;
  for (int r : {0, 11}) {
    io::distributed_info info;
    info.rank = r;
    info.world_size = 16;
    auto& pgs = info.pg_config;
    pgs.push_back(make_pg("0", "default_pg", all_ranks(16)));
    pgs.push_back(
        make_pg("1", "DATA_PARALLEL_GROUP_WITH_CP", truth.group(r, dim_set{parallel_dim::ep, parallel_dim::dp})));
    pgs.push_back(
        make_pg("2", "DATA_PARALLEL_GROUP_WITH_CP_GLOO", truth.group(r, dim_set{parallel_dim::ep, parallel_dim::dp})));
    pgs.push_back(make_pg("3", "DATA_PARALLEL_GROUP", truth.group(r, dim_set{parallel_dim::ep, parallel_dim::dp})));
    pgs.push_back(make_pg("4", "CONTEXT_PARALLEL_GROUP", {r}));
    pgs.push_back(make_pg("5", "MODEL_PARALLEL_GROUP", truth.group(r, dim_set{parallel_dim::tp, parallel_dim::pp})));
    pgs.push_back(make_pg("6", "TENSOR_MODEL_PARALLEL_GROUP", truth.group(r, parallel_dim::tp)));
    const auto pp = truth.group(r, parallel_dim::pp);
    pgs.push_back(make_pg("7", "PIPELINE_MODEL_PARALLEL_GROUP", pp));
    pgs.push_back(make_pg("8", "EMBEDDING_GROUP", {pp.front(), pp.back()}));
    pgs.push_back(make_pg("9", "POSITION_EMBEDDING_GROUP", {pp.front()}));
    pgs.push_back(make_pg("10", "EXPERT_MODEL_PARALLEL_GROUP", truth.group(r, parallel_dim::ep)));
    pgs.push_back(make_pg("11", "EXPERT_TENSOR_PARALLEL_GROUP", truth.group(r, parallel_dim::tp)));
    pgs.push_back(make_pg("12", "EXPERT_DATA_PARALLEL_GROUP", truth.group(r, parallel_dim::dp)));
    pgs.push_back(make_pg("13", "EXPERT_DATA_PARALLEL_GROUP_GLOO", truth.group(r, parallel_dim::dp)));
    infos.push_back(info);
  }
  auto got = infer_topology(infos);
  REQUIRE(got);
  INFO(joined(got->evidence));
  check_same_groups(*got, truth);
  CHECK(got->order == "tp-cp-ep-dp-pp");
  CHECK(mentions(*got, "DATA_PARALLEL_GROUP: 2 groups of 4 ranks"));
  CHECK(mentions(*got, "ep+dp (fallback reading)"));
  CHECK(mentions(*got, "EMBEDDING_GROUP: 2 groups ignored"));

  // torch DeviceMesh (("dp", "tp"), shape (4, 2)) of torchtitan: "mesh_dp", "mesh_tp".
  const topology mesh(parallel_sizes{2, 1, 1, 4, 1});
  io::distributed_info info;
  info.rank = 5;
  info.world_size = 8;
  info.pg_config.push_back(make_pg("0", "default_pg", all_ranks(8)));
  info.pg_config.push_back(make_pg("1", "mesh_dp", mesh.group(5, parallel_dim::dp)));
  info.pg_config.push_back(make_pg("2", "mesh_tp", mesh.group(5, parallel_dim::tp)));
  got = infer_topology({info});
  REQUIRE(got);
  INFO(joined(got->evidence));
  check_same_groups(*got, mesh);

  // A torchtitan mesh with one data-parallel kind (dp_shard) reads it as dp.
  info.pg_config[1].desc = "mesh_dp_shard";
  got = infer_topology({info});
  REQUIRE(got);
  check_same_groups(*got, mesh);
}

TEST_CASE("undescribed groups are explained structurally by constant strides") {
  // Megatron tp2 pp4 dp8 on an older torch: every group "undefined", plus groups that are
  // no single dimension (embedding: first and last stage; model parallel: tp x pp; tp x dp).
  const topology truth(parallel_sizes{2, 1, 1, 8, 4});
  std::vector<io::distributed_info> infos;
  for (int r : {0, 13, 63}) {
    io::distributed_info info;
    info.rank = r;
    info.world_size = 64;
    auto& pgs = info.pg_config;
    pgs.push_back(make_pg("0", "", all_ranks(64)));
    pgs.push_back(make_pg("1", "undefined", truth.group(r, parallel_dim::dp)));
    pgs.push_back(make_pg("2", "undefined", truth.group(r, dim_set{parallel_dim::tp, parallel_dim::pp})));
    pgs.push_back(make_pg("3", "undefined", truth.group(r, parallel_dim::tp)));
    const auto pp = truth.group(r, parallel_dim::pp);
    pgs.push_back(make_pg("4", "undefined", pp));
    pgs.push_back(make_pg("5", "undefined", {pp.front(), pp.back()}));
    pgs.push_back(make_pg("6", "undefined", {pp.front()}));
    pgs.push_back(make_pg("7", "undefined", truth.group(r, dim_set{parallel_dim::tp, parallel_dim::dp})));
    infos.push_back(info);
  }
  const auto got = infer_topology(infos);
  REQUIRE(got);
  INFO(joined(got->evidence));
  check_same_groups(*got, truth);
  CHECK(got->order == "tp-cp-ep-dp-pp");
  CHECK(mentions(*got, "is a guess"));

  // The DeviceMesh's "mesh_dim_N" for unnamed meshes is undescribed too.
  const topology mesh(parallel_sizes{4, 1, 1, 2, 1});
  io::distributed_info info;
  info.rank = 6;
  info.world_size = 8;
  info.pg_config.push_back(make_pg("0", "mesh_dim_0", mesh.group(6, parallel_dim::dp)));
  info.pg_config.push_back(make_pg("1", "mesh_dim_1", mesh.group(6, parallel_dim::tp)));
  const auto got2 = infer_topology({info});
  REQUIRE(got2);
  INFO(joined(got2->evidence));
  check_same_groups(*got2, mesh);
}

TEST_CASE("odd input gives nullopt and never throws") {
  CHECK_FALSE(infer_topology({}));

  io::distributed_info info;
  CHECK_FALSE(infer_topology({info}));  // world_size -1
  info.world_size = 0;
  CHECK_FALSE(infer_topology({info}));
  info.world_size = std::numeric_limits<std::int64_t>::max();
  info.pg_config.push_back(make_pg("1", "TENSOR_MODEL_PARALLEL_GROUP", {0, 1}));
  CHECK_NOTHROW(infer_topology({info}));
  CHECK_FALSE(infer_topology({info}));

  // Only the default group: the caller assumes pure data parallelism.
  info = {};
  info.world_size = 8;
  info.pg_config.push_back(make_pg("0", "default_pg", all_ranks(8)));
  CHECK_FALSE(infer_topology({info}));

  // Malformed groups are skipped: size -1, empty ranks, out of range, repeated, size mismatch.
  auto bad = make_pg("1", "TENSOR_MODEL_PARALLEL_GROUP", {0, 1});
  bad.size = -1;
  info.pg_config.push_back(bad);
  info.pg_config.push_back(make_pg("2", "DATA_PARALLEL_GROUP", {}));
  info.pg_config.push_back(make_pg("3", "DATA_PARALLEL_GROUP", {0, 8}));
  info.pg_config.push_back(make_pg("4", "DATA_PARALLEL_GROUP", {-1, 0}));
  info.pg_config.push_back(make_pg("5", "DATA_PARALLEL_GROUP", {0, 0}));
  auto mismatch = make_pg("6", "DATA_PARALLEL_GROUP", {0, 2, 4, 6});
  mismatch.size = 3;
  info.pg_config.push_back(mismatch);
  CHECK_NOTHROW(infer_topology({info}));
  CHECK_FALSE(infer_topology({info}));
  // ... and what remains is used.
  info.pg_config.push_back(make_pg("7", "TENSOR_MODEL_PARALLEL_GROUP", {0, 1}));
  info.pg_config.push_back(make_pg("8", "DATA_PARALLEL_GROUP", {0, 2, 4, 6}));
  auto got = infer_topology({info});
  REQUIRE(got);
  INFO(joined(got->evidence));
  CHECK(got->sizes.tp == 2);
  CHECK(got->sizes.dp == 4);
  CHECK(mentions(*got, "skipped malformed process groups"));

  // Groups of one dimension that disagree; a group no layout has; sizes short of the world.
  info = {};
  info.world_size = 8;
  info.pg_config.push_back(make_pg("1", "TENSOR_MODEL_PARALLEL_GROUP", {0, 1}));
  info.pg_config.push_back(make_pg("2", "TENSOR_MODEL_PARALLEL_GROUP", {4, 5, 6, 7}));
  CHECK_FALSE(infer_topology({info}));
  info.pg_config = {make_pg("1", "TENSOR_MODEL_PARALLEL_GROUP", {1, 2})};  // rank 1 cannot start a group of 2
  CHECK_FALSE(infer_topology({info}));
  info.pg_config = {make_pg("1", "TENSOR_MODEL_PARALLEL_GROUP", {0, 3, 6})};  // 3 does not divide 8
  CHECK_FALSE(infer_topology({info}));
  info.pg_config = {make_pg("1", "TENSOR_MODEL_PARALLEL_GROUP", {0, 1})};  // dp, pp unknown: 2 != 8
  CHECK_FALSE(infer_topology({info}));
  info.pg_config = {make_pg("1", "DATA_PARALLEL_GROUP", {0, 1, 4, 5})};  // no constant stride for one dim
  info.pg_config.push_back(make_pg("2", "TENSOR_MODEL_PARALLEL_GROUP", {0, 1}));
  CHECK_FALSE(infer_topology({info}));

  // Random garbage: never throws; a result always multiplies to the world size.
  std::mt19937 rng(7);
  const std::vector<std::string> descs = {"",
                                          "undefined",
                                          "default_pg",
                                          "TENSOR_MODEL_PARALLEL_GROUP",
                                          "DATA_PARALLEL_GROUP",
                                          "PIPELINE_MODEL_PARALLEL_GROUP",
                                          "CONTEXT_PARALLEL_GROUP",
                                          "EXPERT_MODEL_PARALLEL_GROUP",
                                          "DATA_PARALLEL_GROUP_WITH_CP",
                                          "EMBEDDING_GROUP",
                                          "mesh_tp",
                                          "mesh_dp_shard",
                                          "mesh_dim_0",
                                          "whatever"};
  int found = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::vector<io::distributed_info> infos(1 + rng() % 3);
    for (auto& in : infos) {
      in.world_size = static_cast<std::int64_t>(rng() % 34) - 1;
      const int n_pg = static_cast<int>(rng() % 6);
      for (int p = 0; p < n_pg; ++p) {
        io::process_group pg;
        pg.name = std::to_string(p);
        pg.desc = descs[rng() % descs.size()];
        const int n = static_cast<int>(rng() % 9);
        if (rng() % 2) {  // strided, likely valid
          const int start = static_cast<int>(rng() % 4), stride = 1 + static_cast<int>(rng() % 8);
          for (int k = 0; k < n; ++k) pg.ranks.push_back(start + k * stride);
        } else {
          for (int k = 0; k < n; ++k) pg.ranks.push_back(static_cast<std::int32_t>(rng() % 40) - 2);
        }
        pg.size = rng() % 5 == 0 ? -1 : static_cast<std::int64_t>(pg.ranks.size());
        in.pg_config.push_back(pg);
      }
    }
    std::optional<inferred_topology> t;
    REQUIRE_NOTHROW(t = infer_topology(infos));
    if (!t) continue;
    ++found;
    const auto& s = t->sizes;
    REQUIRE(static_cast<std::int64_t>(s.tp) * s.cp * s.ep * s.dp * s.pp == t->world_size);
    REQUIRE_NOTHROW(t->to_topology());
  }
  CHECK(found > 0);
}

#if FAILSLOW_HAS_SIMDJSON

TEST_CASE("simulated Kineto traces, written and read back, give their job's topology") {
  sim::job_config cfg;
  cfg.sizes = parallel_sizes{2, 1, 1, 2, 2};
  cfg.order = "tp-pp-dp";
  cfg.steps = 2;
  cfg.microbatches = 2;
  cfg.layers_per_stage = 1;
  const auto job = sim::simulate(cfg, sim::scenario::healthy);
  name_table names;
  std::vector<io::distributed_info> infos;
  for (int r : {1, 6}) {
    const auto t = io::read_kineto_buffer(sim::kineto_trace(job, r), names);
    REQUIRE(t.distributed);
    infos.push_back(*t.distributed);
  }
  const auto got = infer_topology(infos);
  REQUIRE(got);
  INFO(joined(got->evidence));
  check_same_groups(*got, job.topo);
  CHECK(got->order == "tp-cp-ep-pp-dp");
}

TEST_CASE("real traces: pg_config of nccl_parser_config and cpu_only") {
  const auto dir = failslow_test::kineto_dir_or_skip();
  for (const char* rel :
       {"nccl_parser_config/nccl_data.json.gz", "cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"}) {
    INFO(rel);
    name_table names;
    const auto t = io::read_kineto_file((dir / rel).string(), names);
    REQUIRE(t.distributed);
    const auto& info = *t.distributed;
    std::optional<inferred_topology> got;
    REQUIRE_NOTHROW(got = infer_topology({info}));
    std::cout << rel << ": rank " << info.rank << " of " << info.world_size << ", " << info.pg_config.size()
              << " process groups -> ";
    if (!got) {
      std::cout << "no topology\n";
    } else {
      std::cout << got->order << "\n" << joined(got->evidence);
      CHECK(got->world_size == info.world_size);
      const auto& s = got->sizes;
      CHECK(static_cast<std::int64_t>(s.tp) * s.cp * s.ep * s.dp * s.pp == info.world_size);
    }
    // Both list only groups of every rank (nccl_parser_config: the default group of 2 ranks;
    // cpu_only: the default group and ten "undefined" groups of all 300 ranks), which say
    // nothing about tp / pp: the caller assumes pure data parallelism.
    CHECK_FALSE(got);
  }
}

#else

TEST_CASE("real traces need the Kineto reader") {
  CHECK_FALSE(io::kineto_reader_available);
  std::cerr << "SKIPPED: the real-trace checks need simdjson (failslow built without it)\n";
}

#endif
