// failslow/diagnose/impl/load_job.ipp -- the definitions of diagnose/load_job.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "failslow/compress/codec.hpp"
#include "failslow/core/error.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/diagnose/job_model.hpp"
#include "failslow/diagnose/l4_host.hpp"
#include "failslow/diagnose/l4_waits.hpp"
#include "failslow/diagnose/load_job.hpp"
#include "failslow/diagnose/model_from_summaries.hpp"
#include "failslow/io/detail/file_bytes.hpp"
#include "failslow/trace/load_trace_set.hpp"
#include "failslow/trace/pg_topology.hpp"
#include "failslow/trace/trace_set.hpp"

namespace failslow::diagnose::detail {

inline bool is_fsum_path(std::string_view p) {
  const auto ends_with = [p](std::string_view end) {
    return p.size() > end.size() && p.substr(p.size() - end.size()) == end;
  };
  return ends_with(".fsum") || ends_with(".fsum.gz");
}

}  // namespace failslow::diagnose::detail

namespace failslow::diagnose {

FAILSLOW_FUNC_DEF loaded_job load_job(const std::vector<std::string>& paths, const load_options& options) {
  if (paths.empty()) throw invalid_argument("load_job: no trace or .fsum path given");
  const std::size_t fsum = static_cast<std::size_t>(std::count_if(paths.begin(), paths.end(), detail::is_fsum_path));
  if (fsum != 0 && fsum != paths.size())
    throw invalid_argument("load_job: give either .fsum summary files or traces, not both");
  loaded_job out;
  std::optional<topology> given;
  if (options.sizes) given.emplace(*options.sizes, options.order);
  auto opt = options.model;
  if (given) opt.world_size = given->world_size();

  // The layout is settled before the model is built, so that the model has the layout's ranks.
  auto settle_layout = [&](const std::vector<io::distributed_info>& infos, int ranks_seen) {
    if (given) {
      out.topo = *given;
      out.topology_source = "flags";
    } else if (auto inf = trace::infer_topology(infos); inf && inf->world_size >= ranks_seen) {
      out.topo = topology(inf->sizes, inf->order);
      out.topology_source = "pg_config";
      out.topology_evidence = inf->evidence;
    } else {
      parallel_sizes dp_only;
      dp_only.dp = std::max(1, ranks_seen);
      out.topo = topology(dp_only);
      out.topology_source = "data-parallel (assumed: no layout given and none in the traces)";
      out.layout_assumed = true;
    }
  };
  if (fsum > 0) {
    job_model_builder b(opt);
    for (std::size_t i = 0; i < paths.size(); ++i) {
      io::detail::file_stream f(paths[i]);  // .fsum or gzipped .fsum
      add_summary_stream(b, paths[i], [&f](char* buffer, std::size_t capacity) { return f.read(buffer, capacity); });
      if (options.progress) options.progress(i + 1, paths.size());
    }
    out.model = b.finish();
    settle_layout({}, out.model.world_size);  // summaries state no process groups
  } else {
    trace::trace_set_options to;
    to.threads = options.threads;  // 0: every core
    to.skip_unreadable = true;
    to.progress = options.progress;
    to.assume_missing_ranks = true;  // a trace of unknown rank takes a free one, and a note says so
    auto set = trace::load_trace_set(paths, to);
    if (set.traces.empty() && !set.unreadable_files.empty()) {  // no job to diagnose: the first file's error
      const auto& [path, why] = set.unreadable_files.front();
      throw invalid_argument((why.rfind(path, 0) == 0 ? why : path + ": " + why) +
                             (set.unreadable_files.size() > 1
                                  ? " (and " + std::to_string(set.unreadable_files.size() - 1) + " more unreadable)"
                                  : std::string()));
    }
    std::vector<io::distributed_info> infos;
    for (const auto& t : set.traces)
      if (t.data.distributed) infos.push_back(*t.data.distributed);
    int ranks_seen = static_cast<int>(
        std::min<std::int64_t>(std::max<std::int64_t>(set.world_size, 0), std::numeric_limits<int>::max()));
    settle_layout(infos, ranks_seen);
    for (const auto& t : set.traces)
      if (t.rank >= out.topo.world_size())
        throw invalid_argument("rank " + std::to_string(t.rank) + " (" + t.data.source + ") is outside the " +
                               out.topology_source + " layout of " + std::to_string(out.topo.world_size()) + " ranks");
    set.world_size = out.topo.world_size();
    opt.world_size = out.topo.world_size();
    out.model = build_job_model(set, opt);
    attribute_waits(out.model, set, out.topo);  // L4 needs the collective instances, kept only here
    measure_host_activity(out.model, set);      // and the host events around the launches
    std::string assumed;
    std::size_t n_assumed = 0;
    for (const auto& t : set.traces)
      if (t.source == trace::rank_source::assumed && n_assumed++ < 4)
        assumed += (assumed.empty() ? "" : ", ") + t.data.source + " -> " + std::to_string(t.rank);
    if (n_assumed > 0)
      out.model.notes.push_back(std::to_string(n_assumed) +
                                " trace(s) state no rank (no distributedInfo, none in the file name); assumed in "
                                "path order: " +
                                assumed + (n_assumed > 4 ? ", ..." : ""));
    for (const auto& [path, why] : set.unreadable_files)
      out.model.notes.push_back(path + ": not read (" + why + "); the other ranks are diagnosed");
  }
  if (out.model.world_size > out.topo.world_size())
    throw invalid_argument("rank " + std::to_string(out.model.world_size - 1) + " is outside the " +
                           out.topology_source + " layout of " + std::to_string(out.topo.world_size()) + " ranks");
  return out;
}

}  // namespace failslow::diagnose
