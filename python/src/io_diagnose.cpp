// python/src/io_diagnose.cpp -- the readers (Kineto/plain Chrome JSON, Nsight SQLite, CSV/TSV
// kernel tables) to numpy structured arrays, the window compressor with its .fsum encoder, the
// .fsum decoder, a rank's per-step breakdown and window summaries (failslow.torch's payload),
// and the diagnosis (report failslow.report/1 as JSON or text) of failslow._core.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "failslow/compress/codec.hpp"
#include "failslow/compress/trace_windows.hpp"
#include "failslow/compress/window_compressor.hpp"
#include "failslow/core/name_table.hpp"
#include "failslow/diagnose/diagnose.hpp"
#include "failslow/diagnose/load_job.hpp"
#include "failslow/diagnose/model_from_summaries.hpp"
#include "failslow/io/report_json.hpp"
#include "failslow/io/report_text.hpp"
#include "failslow/trace/load_trace_set.hpp"
#include "failslow/trace/step_breakdown.hpp"
#include "failslow/trace/steps.hpp"

namespace failslow_py {
namespace {

namespace cp = failslow::compress;
namespace tr = failslow::trace;

// ---- readers --------------------------------------------------------------------------------

/// numpy's view of failslow::event (core/event.hpp): 40 bytes, fields at their C++ offsets.
py::dtype event_dtype() {
  using failslow::event;
  py::dict spec;
  spec["names"] =
      py::make_tuple("start_ns", "end_ns", "correlation", "name", "rank", "stream", "device", "kind", "flags");
  spec["formats"] = py::make_tuple("<i8", "<i8", "<u4", "<u4", "<i4", "<u4", "<i2", "u1", "u1");
  spec["offsets"] = py::make_tuple(offsetof(event, start_ns), offsetof(event, end_ns), offsetof(event, correlation),
                                   offsetof(event, name), offsetof(event, rank), offsetof(event, stream),
                                   offsetof(event, device), offsetof(event, kind), offsetof(event, flags));
  spec["itemsize"] = sizeof(event);
  return py::dtype::from_args(spec);
}

py::tuple kind_names() {
  py::list l;
  for (std::size_t k = 0; k < failslow::event_kind_count; ++k)
    l.append(std::string(failslow::to_string(static_cast<failslow::event_kind>(k))));
  return py::tuple(l);
}

py::dict stats_dict(const failslow::io::read_stats& s) {
  py::dict d;
  d["events_seen"] = s.events_seen;
  d["stored"] = s.stored;
  d["metadata"] = s.metadata;
  d["flows"] = s.flows;
  d["instants"] = s.instants;
  d["other_phases"] = s.other_phases;
  d["unknown_category"] = s.unknown_category;
  py::dict cats;
  for (const auto& [name, n] : s.unknown_categories) cats[py::str(name)] = n;
  d["unknown_categories"] = cats;
  d["missing_field"] = s.missing_field;
  d["bad_type"] = s.bad_type;
  d["negative_duration"] = s.negative_duration;
  d["out_of_range"] = s.out_of_range;
  d["bad_args"] = s.bad_args;
  d["kind_by_name"] = s.kind_by_name;
  d["accounted"] = s.accounted();
  return d;
}

py::object distributed_dict(const std::optional<failslow::io::distributed_info>& info) {
  if (!info) return py::none();
  py::dict d;
  d["backend"] = info->backend;
  d["rank"] = info->rank;
  d["world_size"] = info->world_size;
  d["pg_count"] = info->pg_count;
  d["nccl_version"] = info->nccl_version;
  py::list groups;
  for (const auto& g : info->pg_config) {
    py::dict pg;
    pg["name"] = g.name;
    pg["desc"] = g.desc;
    pg["backend_config"] = g.backend_config;
    pg["size"] = g.size;
    pg["ranks"] = g.ranks;
    groups.append(pg);
  }
  d["pg_config"] = groups;
  return py::object(std::move(d));
}

py::dict read_traces(const std::vector<std::string>& paths, unsigned threads, bool assume_missing_ranks,
                     bool skip_unreadable, const std::map<std::string, std::int32_t>& rank_of) {
  tr::trace_set_options o;
  o.threads = threads;  // 0: every core
  o.assume_missing_ranks = assume_missing_ranks;
  o.skip_unreadable = skip_unreadable;
  o.rank_of = rank_of;
  std::shared_ptr<tr::trace_set> set;
  {
    py::gil_scoped_release release;
    set = std::make_shared<tr::trace_set>(tr::load_trace_set(paths, o));
  }
  // Every events array is a view of the set's memory; the set lives while one of them does.
  py::capsule owner(new std::shared_ptr<tr::trace_set>(set),
                    [](void* p) { delete static_cast<std::shared_ptr<tr::trace_set>*>(p); });
  const py::dtype dt = event_dtype();
  py::list traces;
  for (const auto& t : set->traces) {
    py::dict d;
    d["rank"] = t.rank;
    d["rank_from"] = tr::to_string(t.source);
    d["source"] = t.data.source;
    py::array events(dt, {static_cast<py::ssize_t>(t.data.events.size())},
                     {static_cast<py::ssize_t>(sizeof(failslow::event))}, t.data.events.data(), owner);
    events.attr("setflags")(py::arg("write") = false);
    d["events"] = events;
    d["stats"] = stats_dict(t.data.stats);
    d["distributed"] = distributed_dict(t.data.distributed);
    d["base_time_ns"] = t.data.base_time_ns;
    traces.append(d);
  }
  py::list names;
  for (std::size_t i = 0; i < set->names.size(); ++i)
    names.append(py::str(std::string(set->names.name(static_cast<failslow::name_id>(i)))));
  py::dict out;
  out["names"] = names;
  out["kinds"] = kind_names();
  out["traces"] = traces;
  out["world_size"] = set->world_size;
  out["missing_ranks"] = set->missing_ranks;
  out["duplicate_ranks"] = set->duplicate_ranks;
  out["skipped_files"] = set->skipped_files;
  out["unreadable_files"] = set->unreadable_files;
  return out;
}

// ---- window summaries -----------------------------------------------------------------------

template <class NameOf>
py::dict window_dict(const cp::window_summary& w, NameOf&& name_of) {
  py::dict d;
  d["rank"] = w.rank;
  d["window_id"] = w.window_id;
  d["start_ns"] = w.start_ns;
  d["end_ns"] = w.end_ns;
  py::list kernels;
  for (const auto& k : w.kernels) {
    py::dict kd;
    kd["name"] = py::str(std::string(name_of(k.key)));
    kd["key"] = k.key;
    kd["count"] = k.count;
    kd["total_ns"] = k.total_ns;
    kd["sampled"] = k.sampled;
    py::list clusters;
    for (const auto& c : k.clusters) {
      py::dict cd;
      cd["count"] = c.count;
      cd["sum"] = c.sum;
      cd["min"] = c.min;
      cd["max"] = c.max;
      cd["mean"] = c.mean;
      cd["variance"] = c.variance;
      cd["p50"] = c.p50;
      cd["p90"] = c.p90;
      cd["p99"] = c.p99;
      clusters.append(cd);
    }
    kd["clusters"] = clusters;
    kd["values"] = k.values;  // every duration (small keys), or the largest beside the knots
    kd["knots"] = k.knots;    // quantiles at compress::knot_probabilities, for keys no cluster fits
    kernels.append(kd);
  }
  d["kernels"] = kernels;
  py::dict skipped;
  skipped["invalid_duration"] = w.skipped.invalid_duration;
  skipped["invalid_key"] = w.skipped.invalid_key;
  skipped["no_window"] = w.skipped.no_window;
  d["skipped"] = skipped;
  d["subsampled"] = w.subsampled;
  py::dict launch;  // the host's kernel launch calls (count 0: not measured)
  launch["launches"] = w.launch.launches;
  launch["median_interval_ns"] = w.launch.median_interval_ns;
  d["launch"] = launch;
  return d;
}

/// The window compressor (compress/window_compressor.hpp) of one rank with its .fsum encoder:
/// every closed window is encoded at once and kept as a summary.
class compressor {
 public:
  compressor(std::int32_t rank, std::size_t per_key_cap, std::int64_t max_window_ns, unsigned precision_bits,
             unsigned key_frame_interval)
      : encoder_([this](failslow::name_id id) { return std::string(names_.name(id)); },
                 cp::codec_options{precision_bits, key_frame_interval}),
        compressor_(
            rank,
            [this](cp::window_summary&& w) {
              encoder_.encode(w, bytes_);
              closed_.push_back(std::move(w));
            },
            config(per_key_cap, max_window_ns)) {
    bytes_ = encoder_.header();
  }
  compressor(const compressor&) = delete;  // the sinks hold `this`
  compressor& operator=(const compressor&) = delete;

  failslow::name_id key(const std::string& name) { return names_.intern(name); }

  bool add(const py::object& name, std::int64_t start_ns, std::int64_t duration_ns) {
    const failslow::name_id k =
        py::isinstance<py::str>(name) ? key(name.cast<std::string>()) : known_key(name.cast<failslow::name_id>());
    return compressor_.add(k, start_ns, duration_ns);
  }

  bool add_launch(std::int64_t start_ns) { return compressor_.add_launch(start_ns); }

  std::size_t add_events(const py::object& names,
                         const py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>& start,
                         const py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>& duration) {
    if (start.ndim() != 1 || duration.ndim() != 1 || start.shape(0) != duration.shape(0))
      throw failslow::invalid_argument("add_events: start_ns and duration_ns must be 1-D of one length");
    const auto n = static_cast<std::size_t>(start.shape(0));
    std::vector<failslow::name_id> keys;
    keys.reserve(n);
    if (py::isinstance<py::array>(names) && py::cast<py::array>(names).dtype().kind() != 'U' &&
        py::cast<py::array>(names).dtype().kind() != 'O') {
      const auto ids = names.cast<py::array_t<failslow::name_id, py::array::c_style | py::array::forcecast>>();
      keys.assign(ids.data(), ids.data() + ids.size());
      for (const auto k : keys) known_key(k);
    } else {
      for (const auto& s : names) keys.push_back(key(s.cast<std::string>()));
    }
    if (keys.size() != n) throw failslow::invalid_argument("add_events: names and start_ns differ in length");
    const std::int64_t* s = start.data();
    const std::int64_t* d = duration.data();
    std::size_t added = 0;
    {
      py::gil_scoped_release release;
      for (std::size_t i = 0; i < n; ++i) added += compressor_.add(keys[i], s[i], d[i]) ? 1 : 0;
    }
    return added;
  }

  py::list close_window(std::int64_t end_ns) {
    const std::size_t before = closed_.size();
    {
      py::gil_scoped_release release;
      compressor_.close_window(end_ns);
    }
    return windows_from(before);
  }

  py::list windows() { return windows_from(0); }
  py::bytes fsum() const { return py::bytes(bytes_); }
  std::uint64_t pending_events() const { return compressor_.pending_events(); }

 private:
  // A key the caller passes as a number must be one key() gave: the encoder writes its name.
  failslow::name_id known_key(failslow::name_id k) const {
    if (k >= names_.size())
      throw failslow::invalid_argument("Compressor: key " + std::to_string(k) + " was not given by key(name)");
    return k;
  }

  static cp::compressor_config config(std::size_t per_key_cap, std::int64_t max_window_ns) {
    cp::compressor_config c;
    c.per_key_cap = per_key_cap;
    c.max_window_ns = max_window_ns;
    return c;
  }

  py::list windows_from(std::size_t first) {
    py::list l;
    for (std::size_t i = first; i < closed_.size(); ++i)
      l.append(window_dict(closed_[i], [this](failslow::name_id id) { return names_.name(id); }));
    return l;
  }

  failslow::name_table names_;
  std::string bytes_;
  std::vector<cp::window_summary> closed_;
  cp::summary_encoder encoder_;
  cp::window_compressor compressor_;
};

py::dict decode_fsum(const py::bytes& data, const std::string& source) {
  const std::string bytes = data;
  cp::decoded_summaries d;
  {
    py::gil_scoped_release release;
    d = cp::decode_summaries(bytes, source);
  }
  py::dict names;
  for (const auto& [id, name] : d.names) names[py::int_(id)] = py::str(name);
  py::list windows;
  for (const auto& w : d.windows)
    windows.append(window_dict(w, [&](failslow::name_id id) -> std::string {
      const auto it = d.names.find(id);
      return it == d.names.end() ? std::string() : it->second;
    }));
  py::list damaged;
  for (const auto& b : d.damaged) {
    py::dict bd;
    bd["offset"] = b.offset;
    bd["reason"] = b.reason;
    damaged.append(bd);
  }
  py::dict out;
  out["names"] = names;
  out["windows"] = windows;
  out["damaged"] = damaged;
  out["windows_without_reference"] = d.windows_without_reference;
  return out;
}

// ---- one rank's share: step breakdown and window summaries -----------------------------------

py::dict breakdown_dict(const tr::step_breakdown& b) {
  const std::size_t n = b.steps.size();
  std::vector<std::int64_t> number(n);
  std::vector<double> period(n), compute(n), comm(n), memory(n), busy(n), idle(n);
  std::vector<std::uint8_t> gpu(n), work(n);
  for (std::size_t k = 0; k < n; ++k) {
    const auto& t = b.steps[k];
    number[k] = t.number;
    period[k] = t.period_ns;
    compute[k] = t.compute_ns;
    comm[k] = t.communication_ns;
    memory[k] = t.memory_ns;
    busy[k] = t.busy_ns;
    idle[k] = t.idle_ns;
    gpu[k] = t.has_gpu_work ? 1 : 0;
    work[k] = t.has_work ? 1 : 0;
  }
  py::dict d;
  d["step"] = number;
  d["period_ns"] = period;
  d["compute_ns"] = compute;
  d["communication_ns"] = comm;
  d["memory_ns"] = memory;
  d["busy_ns"] = busy;
  d["idle_ns"] = idle;
  d["has_gpu_work"] = gpu;
  d["has_work"] = work;
  d["phase_names"] = b.phase_names;
  d["phase_compute_ns"] = b.phase_compute;
  d["phases_from_gpu"] = b.phases_from_gpu;
  d["from_host"] = b.from_host;
  d["device_events"] = b.device_events;
  d["outside_steps"] = b.outside_steps;
  d["phases_dropped"] = b.phases_dropped;
  return d;
}

tr::step_breakdown breakdown_of(const py::dict& d) {
  tr::step_breakdown b;
  const auto number = d["step"].cast<std::vector<std::int64_t>>();
  const auto period = d["period_ns"].cast<std::vector<double>>();
  const auto compute = d["compute_ns"].cast<std::vector<double>>();
  const auto comm = d["communication_ns"].cast<std::vector<double>>();
  const auto memory = d["memory_ns"].cast<std::vector<double>>();
  const auto busy = d["busy_ns"].cast<std::vector<double>>();
  const auto idle = d["idle_ns"].cast<std::vector<double>>();
  const auto gpu = d["has_gpu_work"].cast<std::vector<std::uint8_t>>();
  const auto work = d["has_work"].cast<std::vector<std::uint8_t>>();
  const std::size_t n = number.size();
  for (const auto* v : {&period, &compute, &comm, &memory, &busy, &idle})
    if (v->size() != n) throw failslow::invalid_argument("breakdown: the per-step lists differ in length");
  if (gpu.size() != n || work.size() != n)
    throw failslow::invalid_argument("breakdown: the per-step lists differ in length");
  for (std::size_t k = 0; k < n; ++k) {
    tr::step_times t;
    t.number = number[k];
    t.period_ns = period[k];
    t.compute_ns = compute[k];
    t.communication_ns = comm[k];
    t.memory_ns = memory[k];
    t.busy_ns = busy[k];
    t.idle_ns = idle[k];
    t.has_gpu_work = gpu[k] != 0;
    t.has_work = work[k] != 0;
    b.steps.push_back(t);
  }
  b.phase_names = d["phase_names"].cast<std::vector<std::string>>();
  b.phase_compute = d["phase_compute_ns"].cast<std::vector<std::vector<double>>>();
  if (b.phase_compute.size() != b.phase_names.size())
    throw failslow::invalid_argument("breakdown: phase_compute_ns needs one list per phase name");
  for (const auto& p : b.phase_compute)
    if (p.size() != n) throw failslow::invalid_argument("breakdown: a phase's list is not one value per step");
  b.phases_from_gpu = d["phases_from_gpu"].cast<bool>();
  b.from_host = d["from_host"].cast<bool>();
  b.device_events = d["device_events"].cast<std::uint64_t>();
  return b;
}

py::dict summarize_rank(const std::string& path, std::int32_t rank) {
  tr::trace_set_options o;
  if (rank >= 0) o.rank_of[path] = rank;
  tr::step_breakdown b;
  std::string bytes;
  std::int32_t found = -1;
  std::string source, inferred_from;
  {
    py::gil_scoped_release release;
    const auto set = tr::load_trace_set({path}, o);
    if (set.traces.size() != 1)
      throw failslow::invalid_argument("summarize_rank: '" + path + "' holds " + std::to_string(set.traces.size()) +
                                       " traces, not one");
    const auto& t = set.traces.front();
    found = t.rank;
    source = t.data.source;
    const auto steps = tr::map_steps(t.data, set.names);
    inferred_from = steps.inferred_from;
    b = tr::breakdown_steps(t.data, steps, set.names);
    cp::summary_encoder encoder([&](failslow::name_id id) { return std::string(set.names.name(id)); });
    bytes = encoder.header();
    // Kernels keyed by name and launch shape, as a diagnosis of the trace itself keys them.
    const auto keys = cp::launch_shape_keys(t.data, set.names);
    cp::trace_window_options wo;
    wo.keys = &keys;
    cp::summarize_trace(t.data, steps, t.rank, wo, [&](cp::window_summary&& w) { encoder.encode(w, bytes); });
  }
  py::dict out;
  out["rank"] = found;
  out["source"] = source;
  out["breakdown"] = breakdown_dict(b);
  out["steps_inferred_from"] = inferred_from;  // "" unless the trace has no ProfilerStep#N
  out["fsum"] = py::bytes(bytes);
  return out;
}

// ---- diagnosis ------------------------------------------------------------------------------

std::string write_report(const failslow::report& rep, const std::string& format, std::size_t width) {
  return choice(format, "format", {"json", "text"}) == "json" ? failslow::io::report_to_json(rep) + "\n"
                                                              : failslow::io::report_to_text(rep, {width, 20});
}

/// As `failslow diagnose PATHS` (examples/cli/cmd_diagnose.cpp): load_job, then diagnose.
std::string diagnose_paths(const std::vector<std::string>& paths, const std::optional<std::string>& topology,
                           const std::string& order, unsigned threads, const std::string& format, std::size_t width) {
  namespace dg = failslow::diagnose;
  choice(format, "format", {"json", "text"});
  dg::load_options lo;
  lo.threads = threads;
  lo.order = order;
  lo.model.keep_windows = true;
  if (topology && !topology->empty()) lo.sizes = failslow::parse_parallel_sizes(*topology);
  py::gil_scoped_release release;
  const auto job = dg::load_job(paths, lo);
  dg::diagnose_options dopt;
  dopt.topology_source = job.topology_source;
  dopt.layout_assumed = job.layout_assumed;
  return write_report(dg::diagnose(job.model, job.topo, dopt), format, width);
}

/// The ranks' shares (summarize_rank) as one job: each rank's steps from its breakdown, its
/// kernels' window summaries (L3) from its .fsum where the trace had GPU activity. The layout:
/// `topology`, else pure data parallelism over the ranks (shares state no process groups).
std::string diagnose_parts(const py::list& parts, const std::optional<std::string>& topology, const std::string& order,
                           const std::string& format, std::size_t width) {
  namespace dg = failslow::diagnose;
  choice(format, "format", {"json", "text"});
  struct share {
    int rank;
    std::string source, fsum;
    tr::step_breakdown steps;
  };
  std::vector<share> shares;
  for (const auto& p : parts) {
    const auto d = p.cast<py::dict>();
    shares.push_back({d["rank"].cast<int>(), d["source"].cast<std::string>(), d["fsum"].cast<std::string>(),
                      breakdown_of(d["breakdown"].cast<py::dict>())});
  }
  if (shares.empty()) throw failslow::invalid_argument("diagnose: no rank shares given");
  py::gil_scoped_release release;
  std::optional<failslow::topology> given;
  if (topology && !topology->empty()) given.emplace(failslow::parse_parallel_sizes(*topology), order);
  dg::model_options mo;
  mo.keep_windows = true;
  if (given) mo.world_size = given->world_size();
  dg::job_model_builder b(mo);
  std::size_t host = 0;
  for (const auto& s : shares) {
    if (s.rank < 0) throw failslow::invalid_argument("diagnose: a share of rank " + std::to_string(s.rank));
    if (s.steps.device_events > 0) dg::add_summaries(b, s.fsum, s.source + " (summaries)");
    b.add_steps(s.rank, s.steps);  // after the windows: the breakdown's step values stand
    host += s.steps.from_host ? 1 : 0;
    if (s.steps.steps.empty())
      b.add_note(s.source + " (rank " + std::to_string(s.rank) +
                 "): no ProfilerStep#N annotations, so no steps to diagnose");
  }
  if (host > 0)
    b.add_note(std::to_string(host) +
               " rank(s) have no GPU activity: their steps are measured on the host (compute and communication are "
               "CPU operator time, collectives' waits included; idle is time no operator ran)");
  auto model = b.finish();
  failslow::topology topo;
  std::string source = "flags";
  if (given) {
    topo = *given;
  } else {
    failslow::parallel_sizes dp_only;
    dp_only.dp = std::max(1, model.world_size);
    topo = failslow::topology(dp_only);
    source = "data-parallel (assumed: no layout given and none in the traces)";
  }
  if (model.world_size > topo.world_size())
    throw failslow::invalid_argument("rank " + std::to_string(model.world_size - 1) + " is outside the " + source +
                                     " layout of " + std::to_string(topo.world_size()) + " ranks");
  dg::diagnose_options dopt;
  dopt.topology_source = source;
  dopt.layout_assumed = !given;
  return write_report(dg::diagnose(model, topo, dopt), format, width);
}

}  // namespace

void bind_io_diagnose(py::module_& m) {
  using namespace pybind11::literals;
  m.attr("event_dtype") = event_dtype();
  m.attr("event_kinds") = kind_names();
  m.def("_read_traces", &read_traces, "paths"_a, "threads"_a = 0, "assume_missing_ranks"_a = false,
        "skip_unreadable"_a = false, "rank_of"_a = std::map<std::string, std::int32_t>{},
        "The traces of files and folders (trace/load_trace_set.hpp) as dicts; failslow.read_traces wraps it.");

  py::class_<compressor>(m, "Compressor", R"(Always-on compression of one rank's kernel durations into per-window
summaries (compress/window_compressor.hpp) and their .fsum encoding (compress/codec.hpp).

add(name, start_ns, duration_ns) or add_events(names, start_ns, duration_ns) (arrays; the GIL is
released) append durations in integer ns; close_window(end_ns) clusters each kernel's durations
at the valleys of their log density and returns the closed window(s) as dicts (count and total
exact; clusters with count, sum, min, max, mean, variance, p50, p90, p99; values and knots where
the clusters describe the key poorly, compress/window_summary.hpp); fsum() is the .fsum file
so far (header and every closed window). Events with a negative duration are counted, not added.)")
      .def(py::init<std::int32_t, std::size_t, std::int64_t, unsigned, unsigned>(), "rank"_a = 0, py::kw_only(),
           "per_key_cap"_a = 4096, "max_window_ns"_a = 0, "precision_bits"_a = 7, "key_frame_interval"_a = 16)
      .def("key", &compressor::key, "name"_a, "The key (a dense id) of a kernel name, interning it.")
      .def("add", &compressor::add, "name"_a, "start_ns"_a, "duration_ns"_a,
           "Adds one duration of a kernel (a name or a key); False when it was counted as skipped.")
      .def("add_events", &compressor::add_events, "names"_a, "start_ns"_a, "duration_ns"_a,
           "Adds many durations: names a list of str or an array of keys; returns how many were added.")
      .def("add_launch", &compressor::add_launch, "start_ns"_a,
           "Records a host kernel launch call: the window's 'launch' (count, median interval between "
           "consecutive calls, the host's pace); False when a call before the previous one was counted as skipped.")
      .def("close_window", &compressor::close_window, "end_ns"_a = 0,
           "Closes the window (a step marker at end_ns); returns the windows closed since the last call.")
      .def_property_readonly("windows", &compressor::windows, "Every closed window, as dicts.")
      .def_property_readonly("pending_events", &compressor::pending_events,
                             "Events added since the last close_window().")
      .def("fsum", &compressor::fsum, "The .fsum bytes of every closed window (a file failslow diagnose reads).");

  m.def("decode_fsum", &decode_fsum, "data"_a, "source"_a = "<fsum>",
        R"(Decodes .fsum bytes: names (key -> name), windows (dicts as Compressor.windows), damaged blocks
(offset, reason: skipped, never fatal) and windows_without_reference. A missing or unknown file
header raises failslow.ParseError.)");
  m.def("summarize_rank", &summarize_rank, "path"_a, "rank"_a = -1,
        R"(One rank's trace as what failslow.torch gathers instead of the JSON: the per-step breakdown
(trace/step_breakdown.hpp: period, compute, communication, memory, busy, idle and each annotated
phase's compute, ns; host operators when there is no GPU activity) and the .fsum window summaries
of its GPU activities (one window per ProfilerStep). rank: the rank to assign (-1: from the trace).)");
  m.def("_diagnose_paths", &diagnose_paths, "paths"_a, "topology"_a = py::none(), "order"_a = "tp-cp-ep-dp-pp",
        "threads"_a = 0, "format"_a = "json", "width"_a = 100);
  m.def("_diagnose_parts", &diagnose_parts, "parts"_a, "topology"_a = py::none(), "order"_a = "tp-cp-ep-dp-pp",
        "format"_a = "json", "width"_a = 100);
}

}  // namespace failslow_py
