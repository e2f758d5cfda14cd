// failslow topology: the ranks of a job, their coordinates and their groups, as JSON.
#include <failslow/core/topology.hpp>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "commands.hpp"

namespace failslow_cli {
namespace {

struct topology_options {
  failslow::parallel_sizes sizes;
  std::string order{failslow::topology::default_order};
  std::optional<int> world_size;
  std::optional<int> rank;
};

nlohmann::json rank_json(const failslow::topology& t, int rank) {
  nlohmann::json coords, groups;
  for (failslow::parallel_dim d : failslow::all_parallel_dims) {
    const std::string dim(failslow::to_string(d));
    coords[dim] = t.coordinate(rank, d);
    if (d != failslow::parallel_dim::pp) groups[dim] = t.group_name(rank, d);
  }
  groups["stage"] = "stage:" + std::to_string(t.coordinate(rank, failslow::parallel_dim::pp));
  return {{"rank", rank}, {"coords", coords}, {"groups", groups}};
}

void run(const topology_options& o) {
  const failslow::topology t =
      o.world_size ? failslow::topology(o.sizes, o.order, *o.world_size) : failslow::topology(o.sizes, o.order);
  nlohmann::json out;
  out["world_size"] = t.world_size();
  out["order"] = t.order_string();
  for (failslow::parallel_dim d : failslow::all_parallel_dims) out[std::string(failslow::to_string(d))] = t.size(d);
  if (o.rank) {
    out["rank"] = rank_json(t, *o.rank);
    for (failslow::parallel_dim d : failslow::all_parallel_dims)
      out["rank"]["members"][std::string(failslow::to_string(d))] = t.group(*o.rank, d);
  } else {
    nlohmann::json ranks = nlohmann::json::array();
    for (int r = 0; r < t.world_size(); ++r) ranks.push_back(rank_json(t, r));
    out["ranks"] = std::move(ranks);
  }
  std::cout << out.dump(2) << '\n';
}

}  // namespace

void add_topology_command(CLI::App& app) {
  auto opts = std::make_shared<topology_options>();
  CLI::App* cmd = app.add_subcommand("topology", "Coordinates and groups of the ranks of a job (JSON)");
  cmd->add_option("--tp", opts->sizes.tp, "tensor-parallel size")->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--cp", opts->sizes.cp, "context-parallel size")->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--ep", opts->sizes.ep, "expert-parallel size")->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--dp", opts->sizes.dp, "data-parallel size")->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--pp", opts->sizes.pp, "pipeline-parallel size")->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--order", opts->order, "rank order, fastest first")->capture_default_str();
  cmd->add_option("--world-size", opts->world_size, "check that the sizes multiply to this");
  cmd->add_option("--rank", opts->rank, "show one rank with its group members");
  cmd->callback([opts] { run(*opts); });
}

}  // namespace failslow_cli
