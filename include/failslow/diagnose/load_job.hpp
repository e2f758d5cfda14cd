// failslow/diagnose/load_job.hpp -- a job as the diagnosis needs it, from the files a user has:
// the model (job_model.hpp) and the layout it runs.
//
// Synopsis
//   loaded_job load_job(paths, options)
//   paths: trace files and folders (Kineto .json/.json.gz, CSV/TSV kernel tables, Nsight
//   .sqlite; trace/trace_set.hpp reads them on options.threads threads), or .fsum summary files
//   (.fsum.gz too: read piece by piece, gunzipped, by io/detail/file_bytes.hpp's file_stream)
//   (compress/codec.hpp, read in 4 MiB chunks and decoded window by window, so memory is that
//   of the model whatever the file's length; several files are one job, e.g. one per node). A file that cannot be read
//   is reported in the notes and the rest is diagnosed. Ranks: trace/trace_set.hpp's rule
//   (distributedInfo, then the file name); a trace with neither takes the lowest free rank in
//   path order, and a note lists them. Layout, in turn:
//     1. options.sizes (and options.order), when given: "flags"
//     2. the process groups the traces list (trace/pg_topology.hpp): "pg_config"
//     3. pure data parallelism over the world size: "data-parallel (assumed)"
//   The model's world size is the layout's; a rank outside it is an error.
// Complexity: that of reading and of job_model_builder.
// Errors: invalid_argument for paths that do not exist, a mix of .fsum and trace files, a rank
//   outside a given layout, or a layout that does not fit (topology's own errors); parse_error
//   for a .fsum file without its header; everything else that goes wrong in a file is a note,
//   unless no trace file can be read at all (then the first one's error is thrown).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
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
#include "failslow/io/detail/file_bytes.hpp"
#include "failslow/trace/pg_topology.hpp"
#include "failslow/trace/trace_set.hpp"

namespace failslow::diagnose {

struct load_options {
  model_options model;
  unsigned threads = 0;                 ///< readers; 0 = every core
  std::optional<parallel_sizes> sizes;  ///< the layout, when the user knows it
  std::string order = std::string(topology::default_order);
  std::function<void(std::size_t, std::size_t)> progress;  ///< (files done, files) while reading
};

struct loaded_job {
  job_model model;
  topology topo;
  std::string topology_source;  ///< "flags", "pg_config", "data-parallel (assumed)"
  std::vector<std::string> topology_evidence;
  bool layout_assumed = false;  ///< neither given nor found in the traces
};

namespace detail {

inline bool is_fsum_path(std::string_view p) {
  const auto ends_with = [p](std::string_view end) {
    return p.size() > end.size() && p.substr(p.size() - end.size()) == end;
  };
  return ends_with(".fsum") || ends_with(".fsum.gz");
}

}  // namespace detail

template <class = void>
inline loaded_job load_job(const std::vector<std::string>& paths, const load_options& options = {}) {
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
      b.add_summary_stream(paths[i], [&f](char* buffer, std::size_t capacity) { return f.read(buffer, capacity); });
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
