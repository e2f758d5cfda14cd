// failslow/diagnose/load_job.hpp -- a job as the diagnosis needs it, from the files a user has:
// the model (job_model.hpp) and the layout it runs.
//
// Synopsis
//   loaded_job load_job(paths, options)
//   paths: trace files and folders (Kineto .json/.json.gz, CSV/TSV kernel tables, Nsight
//   .sqlite; trace/trace_set.hpp reads them on options.threads threads), or .fsum summary files
//   (compress/codec.hpp, read in 4 MiB chunks and decoded window by window, so memory is that
//   of the model whatever the file's length; several files are one job, e.g. one per node). A file that cannot be read
//   is reported in the notes and the rest is diagnosed. Layout, in turn:
//     1. options.sizes (and options.order), when given: "flags"
//     2. the process groups the traces list (trace/pg_topology.hpp): "pg_config"
//     3. pure data parallelism over the world size: "data-parallel (assumed)"
//   The model's world size is the layout's; a rank outside it is an error.
// Complexity: that of reading and of job_model_builder.
// Errors: invalid_argument for paths that do not exist, a mix of .fsum and trace files, a rank
//   outside a given layout, or a layout that does not fit (topology's own errors); parse_error
//   for a .fsum file without its header; everything else that goes wrong in a file is a note.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "failslow/compress/codec.hpp"
#include "failslow/core/error.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/diagnose/job_model.hpp"
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

inline bool is_fsum_path(std::string_view p) { return p.size() > 5 && p.substr(p.size() - 5) == ".fsum"; }

inline int checked_world(const job_model& m, const topology& topo, const std::string& source) {
  if (m.world_size > topo.world_size())
    throw invalid_argument("rank " + std::to_string(m.world_size - 1) + " is outside the " + source + " layout of " +
                           std::to_string(topo.world_size()) + " ranks");
  return topo.world_size();
}

/// Pads a model to `world` ranks (ranks without data are NaN rows).
inline void pad_ranks(job_model& m, int world) {
  if (m.world_size >= world) return;
  const std::size_t R = static_cast<std::size_t>(world), P = m.phase_count(), S = m.step_count();
  xt::xtensor<double, 2> it = xt::xtensor<double, 2>::from_shape({R, S});
  xt::xtensor<double, 3> ph = xt::xtensor<double, 3>::from_shape({R, P, S});
  it.fill(std::numeric_limits<double>::quiet_NaN());
  ph.fill(std::numeric_limits<double>::quiet_NaN());
  for (std::size_t r = 0; r < m.rank_count(); ++r)
    for (std::size_t s = 0; s < S; ++s) {
      it(r, s) = m.iteration_ns(r, s);
      for (std::size_t p = 0; p < P; ++p) ph(r, p, s) = m.phase_ns(r, p, s);
    }
  const int missing = world - m.world_size;
  m.notes.push_back(std::to_string(missing) + " rank(s) above " + std::to_string(m.world_size - 1) +
                    " have no data: diagnosed without them");
  m.iteration_ns = std::move(it);
  m.phase_ns = std::move(ph);
  m.has_rank.resize(R, false);
  m.world_size = world;
}

}  // namespace detail

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

  std::vector<io::distributed_info> infos;
  if (fsum > 0) {
    job_model_builder b(opt);
    for (std::size_t i = 0; i < paths.size(); ++i) {
      b.new_key_space();
      // Read in chunks: memory stays that of the model, not of the file.
      std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(paths[i].c_str(), "rb"), std::fclose);
      if (!f) throw invalid_argument("cannot open " + paths[i]);
      compress::summary_decoder dec(paths[i]);
      auto sink = [&](compress::window_summary&& w, const compress::decoded_summaries& so_far) {
        b.add_window(std::move(w), [&](name_id key) -> std::string_view {
          const auto it = so_far.names.find(key);
          return it == so_far.names.end() ? std::string_view() : std::string_view(it->second);
        });
      };
      std::vector<char> chunk(std::size_t{4} << 20);
      for (;;) {
        const std::size_t n = std::fread(chunk.data(), 1, chunk.size(), f.get());
        if (n > 0) dec.feed(std::string_view(chunk.data(), n), sink);
        if (n < chunk.size()) break;
      }
      if (std::ferror(f.get())) throw invalid_argument("cannot read " + paths[i]);
      dec.finish(sink);
      const auto& d = dec.state();
      for (const auto& dmg : d.damaged)
        b.add_note(paths[i] + ": damaged block at byte " + std::to_string(dmg.offset) + " (" + dmg.reason +
                   "), skipped");
      if (d.windows_without_reference > 0)
        b.add_note(paths[i] + ": " + std::to_string(d.windows_without_reference) +
                   " windows lost their reference after damage, skipped");
      if (options.progress) options.progress(i + 1, paths.size());
    }
    out.model = b.finish();
  } else {
    trace::trace_set_options to;
    to.threads = options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
    to.skip_unreadable = true;
    to.progress = options.progress;
    auto set = trace::load_trace_set(paths, to);
    if (given && set.world_size > given->world_size()) {
      // Traces may state a larger world than the given layout: that is the user's error.
      for (const auto& t : set.traces)
        if (t.rank >= given->world_size())
          throw invalid_argument("rank " + std::to_string(t.rank) + " (" + t.data.source + ") is outside the given " +
                                 "layout of " + std::to_string(given->world_size()) + " ranks");
      set.world_size = given->world_size();
    }
    for (const auto& t : set.traces)
      if (t.data.distributed) infos.push_back(*t.data.distributed);
    out.model = build_job_model(set, opt);
    for (const auto& [path, why] : set.unreadable_files)
      out.model.notes.push_back(path + ": not read (" + why + "); the other ranks are diagnosed");
  }

  if (given) {
    out.topo = *given;
    out.topology_source = "flags";
  } else if (auto inf = trace::infer_topology(infos); inf && inf->world_size >= out.model.world_size) {
    out.topo = topology(inf->sizes, inf->order);
    out.topology_source = "pg_config";
    out.topology_evidence = inf->evidence;
  } else {
    parallel_sizes dp_only;
    dp_only.dp = std::max(1, out.model.world_size);
    out.topo = topology(dp_only);
    out.topology_source = "data-parallel (assumed: no layout given and none in the traces)";
    out.layout_assumed = true;
  }
  detail::pad_ranks(out.model, detail::checked_world(out.model, out.topo, out.topology_source));
  return out;
}

}  // namespace failslow::diagnose
