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

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "failslow/core/compile_mode.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/diagnose/job_model.hpp"

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

FAILSLOW_FUNC loaded_job load_job(const std::vector<std::string>& paths, const load_options& options = {});

}  // namespace failslow::diagnose

#if FAILSLOW_HEADER_ONLY
#include "failslow/diagnose/impl/load_job.ipp"
#endif
