// failslow/io/impl/perfetto_trace.ipp -- the definitions of io/perfetto_trace.hpp: included by that
// header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/core/event.hpp"
#include "failslow/core/report.hpp"
#include "failslow/core/topology.hpp"
#include "failslow/diagnose/detail/rank_list.hpp"
#include "failslow/diagnose/job_model.hpp"
#include "failslow/io/detail/json_writer.hpp"
#include "failslow/io/detail/text_format.hpp"
#include "failslow/io/perfetto_trace.hpp"
#include "failslow/io/trace_data.hpp"
#include "failslow/trace/clock_align.hpp"
#include "failslow/trace/steps.hpp"
#include "failslow/trace/trace_set.hpp"

namespace failslow::io {

namespace detail {

/// Ranks named by a finding: its ranks, else its group's (evidence group_ranks, stage_ranks).
template <class = void>
inline std::vector<int> finding_ranks(const finding& f) {
  if (!f.ranks.empty()) return f.ranks;
  std::vector<int> r;
  for (const char* key : {"group_ranks", "stage_ranks"})
    if (const auto* e = f.evidence.find(key); e && e->what == evidence_item::type::numbers && r.empty())
      for (double v : e->numbers) r.push_back(static_cast<int>(v));
  return r;
}

template <class = void>
inline bool rank_present(const diagnose::job_model& m, int r) {
  return r >= 0 && r < m.world_size && m.has_rank[static_cast<std::size_t>(r)];
}

}  // namespace detail

FAILSLOW_FUNC_DEF perfetto_view choose_perfetto_view(const report& rep, const diagnose::job_model& m,
                                                     const topology& topo, const perfetto_options& o) {
  if (topo.world_size() != m.world_size)
    throw invalid_argument("perfetto: the topology has " + std::to_string(topo.world_size()) + " ranks, the model " +
                           std::to_string(m.world_size));
  perfetto_view v;
  const std::size_t S = m.step_count();
  if (S == 0 || m.present_ranks().empty()) {
    v.why = "no steps with data: nothing to show";
    return v;
  }
  // The finding: one that names a rank, else a group's ranks, else the most severe.
  for (int pass = 0; pass < 2 && v.finding == perfetto_view::none; ++pass)
    for (std::size_t i = 0; i < rep.findings.size() && v.finding == perfetto_view::none; ++i) {
      const auto named = pass == 0 ? rep.findings[i].ranks : detail::finding_ranks(rep.findings[i]);
      for (int r : named)
        if (detail::rank_present(m, r)) {
          v.finding = i;
          break;
        }
    }
  if (v.finding == perfetto_view::none && !rep.findings.empty()) v.finding = 0;
  const finding* f = v.finding == perfetto_view::none ? nullptr : &rep.findings[v.finding];

  // The finding's step range as model indices (the whole job when there is none).
  std::size_t a = 0, b = S;
  if (f) {
    a = static_cast<std::size_t>(std::lower_bound(m.steps.begin(), m.steps.end(), f->first_step) - m.steps.begin());
    b = static_cast<std::size_t>(std::upper_bound(m.steps.begin(), m.steps.end(), f->last_step) - m.steps.begin());
    if (a >= b) a = 0, b = S;
  }
  auto job_median = [&](std::size_t s) {
    std::vector<double> x;
    for (int r : m.present_ranks())
      if (!std::isnan(m.iteration_ns(static_cast<std::size_t>(r), s)))
        x.push_back(m.iteration_ns(static_cast<std::size_t>(r), s));
    return x.empty() ? -1.0 : stats::median(x);
  };

  int culprit = -1;
  std::vector<int> candidates;
  if (f)
    for (int r : detail::finding_ranks(*f))
      if (detail::rank_present(m, r)) candidates.push_back(r);
  std::size_t worst = a;
  if (!candidates.empty()) {
    culprit = candidates.front();
    double longest = -1;
    for (std::size_t s = a; s < b; ++s) {
      const double x = m.iteration_ns(static_cast<std::size_t>(culprit), s);
      if (!std::isnan(x) && x > longest) longest = x, worst = s;
    }
  } else {
    double longest = -1;
    for (std::size_t s = a; s < b; ++s)
      if (const double x = job_median(s); x > longest) longest = x, worst = s;
    double most = -1;
    for (int r : m.present_ranks()) {
      const double x = m.phase_ns(static_cast<std::size_t>(r), diagnose::compute_phase, worst);
      if (!std::isnan(x) && x > most) most = x, culprit = r;
    }
    if (culprit < 0) culprit = m.present_ranks().front();
  }
  if (f)
    if (const auto* p = f->evidence.find("peak_step"); p && p->what == evidence_item::type::number) {
      const auto it = std::lower_bound(m.steps.begin(), m.steps.end(), static_cast<std::int64_t>(p->number));
      if (it != m.steps.end() && *it == static_cast<std::int64_t>(p->number))
        worst = static_cast<std::size_t>(it - m.steps.begin());
    }

  // Peers: whom the finding compared it with, a group's other members, else its dp group.
  v.ranks.push_back(culprit);
  std::vector<int> peers;
  if (f)
    if (const auto* p = f->evidence.find("peers"); p && p->what == evidence_item::type::numbers)
      for (double x : p->numbers) peers.push_back(static_cast<int>(x));
  if (peers.empty())
    for (std::size_t k = 1; k < candidates.size(); ++k) peers.push_back(candidates[k]);
  if (peers.empty()) peers = topo.group(culprit, parallel_dim::dp);
  for (int r : peers)
    if (v.ranks.size() < 1 + o.peers && r != culprit && detail::rank_present(m, r) &&
        std::find(v.ranks.begin(), v.ranks.end(), r) == v.ranks.end())
      v.ranks.push_back(r);

  const std::size_t n = std::max<std::size_t>(1, std::min(o.max_steps, S));
  std::size_t first = worst >= (n - 1) / 2 ? worst - (n - 1) / 2 : 0;
  if (first + n > S) first = S - n;
  v.first_index = first;
  v.last_index = first + n - 1;
  v.first_step = m.steps[v.first_index];
  v.last_step = m.steps[v.last_index];
  const std::string steps = v.first_step == v.last_step
                                ? "step " + std::to_string(v.first_step)
                                : "steps " + std::to_string(v.first_step) + "-" + std::to_string(v.last_step);
  if (f && !candidates.empty())
    v.why = steps + " around step " + std::to_string(m.steps[worst]) + ", the worst of: " + f->summary;
  else if (f)
    v.why = steps + " around step " + std::to_string(m.steps[worst]) + " (" + f->summary + "); rank " +
            std::to_string(culprit) + " ran the most compute there";
  else
    v.why = steps + " around the job's slowest step " + std::to_string(m.steps[worst]) + " (no findings); rank " +
            std::to_string(culprit) + " ran the most compute there";
  return v;
}

namespace detail {

/// Appends the Chrome trace: events in order, one per line.
class chrome_trace_writer {
 public:
  explicit chrome_trace_writer(std::string& out) : out_(out) {}

  /// Starts an event object: {"ph": ph, "name": name, "pid": pid, "tid": tid
  void begin(std::string_view ph, std::string_view name, std::int64_t pid, std::int64_t tid) {
    out_ += first_ ? "\n  {" : ",\n  {";
    first_ = false;
    out_ += "\"ph\": \"";
    out_ += ph;
    out_ += "\", \"name\": ";
    append_escaped(out_, name);
    out_ += ", \"pid\": " + std::to_string(pid) + ", \"tid\": " + std::to_string(tid);
  }
  void category(std::string_view cat) {
    out_ += ", \"cat\": ";
    append_escaped(out_, cat);
  }
  /// ", \"ts\": us" with three decimals (exact ns), relative to the origin.
  void time(std::string_view key, std::int64_t ns) {
    out_ += ", \"";
    out_ += key;
    out_ += "\": ";
    if (ns < 0) {
      out_ += '-';
      ns = -ns;
    }
    out_ += std::to_string(ns / 1000);
    const auto frac = static_cast<int>(ns % 1000);
    out_ += '.';
    out_ += static_cast<char>('0' + frac / 100);
    out_ += static_cast<char>('0' + (frac / 10) % 10);
    out_ += static_cast<char>('0' + frac % 10);
  }
  void raw(std::string_view s) { out_ += s; }
  void end() { out_ += '}'; }

 private:
  std::string& out_;
  bool first_ = true;
};

/// Appends `"key": value` members of an args object.
class json_args {
 public:
  explicit json_args(std::string& out) : out_(out) { out_ += ", \"args\": {"; }
  ~json_args() { out_ += "}"; }
  json_args(const json_args&) = delete;
  json_args& operator=(const json_args&) = delete;

  void key(std::string_view k) {
    if (!first_) out_ += ", ";
    first_ = false;
    append_escaped(out_, k);
    out_ += ": ";
  }
  void number(std::string_view k, double v) {
    key(k);
    append_number(out_, v);
  }
  void integer(std::string_view k, std::int64_t v) {
    key(k);
    out_ += std::to_string(v);
  }
  void text(std::string_view k, std::string_view v) {
    key(k);
    append_escaped(out_, v);
  }
  template <class T>
  void list(std::string_view k, const std::vector<T>& v) {
    key(k);
    out_ += '[';
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i) out_ += ", ";
      append_number(out_, static_cast<double>(v[i]));
    }
    out_ += ']';
  }
  void dims(std::string_view k, const std::array<std::uint32_t, 3>& d) {
    key(k);
    out_ += "[" + std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]) + "]";
  }

 private:
  std::string& out_;
  bool first_ = true;
};

inline std::string_view kineto_category(const event& e) {
  switch (e.kind) {
    case event_kind::kernel:
    case event_kind::collective:
      return "kernel";
    case event_kind::memcpy:
      return "gpu_memcpy";
    case event_kind::memset:
      return "gpu_memset";
    case event_kind::annotation:
      return e.device >= 0 ? "gpu_user_annotation" : "user_annotation";
    case event_kind::cpu_op:
      return "cpu_op";
    case event_kind::runtime:
      return "cuda_runtime";
  }
  return "kernel";
}

inline bool is_gpu_side(const event& e) {
  return is_device_activity(e.kind) || (e.kind == event_kind::annotation && e.device >= 0);
}

// Synthetic tracks of each rank's process; far above stream and thread ids in practice.
inline constexpr std::int64_t iterations_tid = 2147480000, findings_tid = 2147480001, phase_tid_base = 2147480100;

/// One shown step of one rank on the aligned clock: [start, end) of its iteration.
struct shown_step {
  std::size_t index = 0;  ///< model step index
  std::int64_t start = 0, end = 0;
  bool known = false;
};

}  // namespace detail

FAILSLOW_FUNC_DEF perfetto_result perfetto_trace(const report& rep, const diagnose::job_model& m, const topology& topo,
                                                 const trace::trace_set* traces, const perfetto_options& o) {
  perfetto_result res;
  res.view = choose_perfetto_view(rep, m, topo, o);
  const auto& v = res.view;
  res.from_traces = traces != nullptr;
  const diagnose::window_index idx(m);

  // Clock offsets from the collectives of the given traces.
  std::map<int, std::int64_t> offset;
  std::map<int, bool> aligned;
  trace::clock_alignment ca;
  if (traces && o.align_clocks && traces->traces.size() > 1) ca = trace::estimate_clock_offsets(*traces);
  for (const auto& c : ca.traces)
    if (!offset.count(c.rank)) {
      offset[c.rank] = c.aligned ? c.offset_ns : 0;
      aligned[c.rank] = c.aligned;
    }

  struct rank_view {
    int rank = -1;
    const trace::rank_trace* trace = nullptr;
    trace::step_map steps;
    std::vector<detail::shown_step> shown;
    std::vector<std::uint32_t> events;  // indices into the trace's events
    std::int64_t offset = 0;
  };
  std::vector<rank_view> ranks;
  for (int r : v.ranks) {
    rank_view rv;
    rv.rank = r;
    rv.trace = traces ? traces->find(r) : nullptr;
    if (traces && !rv.trace) res.notes.push_back("rank " + std::to_string(r) + ": no trace, shown from the model");
    rv.offset = rv.trace && offset.count(r) ? offset[r] : 0;
    ranks.push_back(std::move(rv));
  }
  res.clock_aligned = res.from_traces && o.align_clocks;
  if (!traces)
    res.notes.push_back(
        "from summaries: iteration and phase totals per rank and step, no events; each rank on "
        "its own clock (summaries hold no collectives to align them by)");
  for (const auto& rv : ranks)
    if (o.align_clocks && rv.trace && !(aligned.count(rv.rank) && aligned[rv.rank])) {
      res.clock_aligned = false;
      res.notes.push_back("rank " + std::to_string(rv.rank) +
                          ": not linked to the others by collectives, on its own clock");
    }

  // Which events, and the steps' spans, per rank (times still on the rank's clock).
  std::uint64_t budget = o.max_events;
  for (auto& rv : ranks) {
    const std::size_t n_shown = v.last_index - v.first_index + 1;
    rv.shown.resize(n_shown);
    for (std::size_t k = 0; k < n_shown; ++k) rv.shown[k].index = v.first_index + k;
    if (rv.trace) {
      const auto& d = rv.trace->data;
      rv.steps = trace::map_steps(d, traces->names);
      std::int64_t span_a = std::numeric_limits<std::int64_t>::max(), span_b = std::numeric_limits<std::int64_t>::min();
      std::vector<char> in_window(rv.steps.steps.size(), 0);
      for (std::size_t s = 0; s < rv.steps.steps.size(); ++s) {
        const auto& st = rv.steps.steps[s];
        if (st.number < v.first_step || st.number > v.last_step) continue;
        in_window[s] = 1;
        span_a = std::min(span_a, st.gpu_start_ns >= 0 ? std::min(st.cpu_start_ns, st.gpu_start_ns) : st.cpu_start_ns);
        span_b = std::max(span_b, std::max(st.cpu_end_ns, st.gpu_end_ns));
      }
      // Iteration spans: the previous step's last GPU end to this step's.
      for (auto& sh : rv.shown) {
        const std::int64_t number = m.steps[sh.index];
        for (std::size_t s = 0; s < rv.steps.steps.size(); ++s) {
          const auto& st = rv.steps.steps[s];
          if (st.number != number || st.gpu_end_ns < 0) continue;
          sh.end = st.gpu_end_ns;
          sh.start = st.gpu_start_ns;
          for (const auto& prev : rv.steps.steps)
            if (prev.number == number - 1 && prev.gpu_end_ns >= 0 && prev.gpu_end_ns < st.gpu_end_ns)
              sh.start = prev.gpu_end_ns;
          sh.known = true;
        }
      }
      for (std::size_t i = 0; i < d.events.size(); ++i) {
        const auto& e = d.events[i];
        const std::int32_t s = rv.steps.step_of_event[i];
        const bool in =
            s >= 0 ? in_window[static_cast<std::size_t>(s)] != 0 : e.start_ns >= span_a && e.start_ns < span_b;
        if (!in) continue;
        if (!o.host_events && !detail::is_gpu_side(e) &&
            !(e.kind == event_kind::annotation && trace::profiler_step_number(traces->names.name(e.name))))
          continue;
        if (budget == 0) {
          ++res.events_cut;
          continue;
        }
        --budget;
        rv.events.push_back(static_cast<std::uint32_t>(i));
      }
    } else {
      // From the model: the window summaries' spans, or end to end from 0.
      std::int64_t t = 0;
      for (std::size_t s = 0; s < v.first_index; ++s) {
        const double x = m.iteration_ns(static_cast<std::size_t>(rv.rank), s);
        if (!std::isnan(x)) t += static_cast<std::int64_t>(x);
      }
      for (auto& sh : rv.shown) {
        const double x = m.iteration_ns(static_cast<std::size_t>(rv.rank), sh.index);
        const auto* w = idx.window(rv.rank, sh.index);
        if (w && !std::isnan(x)) {
          sh.end = static_cast<std::int64_t>(w->end_ns);
          sh.start = sh.end - static_cast<std::int64_t>(x);
          sh.known = true;
        } else if (!std::isnan(x)) {
          sh.start = t;
          sh.end = t + static_cast<std::int64_t>(x);
          sh.known = true;
        }
        if (!std::isnan(x)) t += static_cast<std::int64_t>(x);
      }
    }
  }
  if (res.events_cut > 0)
    res.notes.push_back(std::to_string(res.events_cut) + " events of the window past the limit of " +
                        std::to_string(o.max_events) + " were not written (the culprit's come first)");

  // The origin: the earliest aligned time written.
  std::int64_t origin = std::numeric_limits<std::int64_t>::max();
  for (const auto& rv : ranks) {
    for (const auto& sh : rv.shown)
      if (sh.known) origin = std::min(origin, sh.start - rv.offset);
    if (rv.trace)
      for (auto i : rv.events) origin = std::min(origin, rv.trace->data.events[i].start_ns - rv.offset);
  }
  if (origin == std::numeric_limits<std::int64_t>::max()) origin = 0;

  std::string& out = res.json;
  out += "{\n  \"displayTimeUnit\": \"ms\",\n  \"traceEvents\": [";
  detail::chrome_trace_writer w(out);
  const std::string rank_list = [&] {
    std::string s;
    for (int r : v.ranks) s += (s.empty() ? "" : ", ") + std::to_string(r);
    return s;
  }();

  // Metadata: process and thread names, the culprit first.
  for (std::size_t k = 0; k < ranks.size(); ++k) {
    const auto& rv = ranks[k];
    const bool named = v.finding != perfetto_view::none && !detail::finding_ranks(rep.findings[v.finding]).empty();
    std::string name =
        diagnose::detail::rank_placed(topo, rv.rank) + (k == 0 ? (named ? " -- culprit" : " -- slowest") : " -- peer");
    if (!rv.trace) name += " (from summaries: steps and phase totals, no events)";
    w.begin("M", "process_name", rv.rank, 0);
    {
      detail::json_args a(out);
      a.text("name", name);
    }
    w.end();
    w.begin("M", "process_sort_index", rv.rank, 0);
    {
      detail::json_args a(out);
      a.integer("sort_index", static_cast<std::int64_t>(k));
    }
    w.end();
    std::map<std::int64_t, std::string> threads;
    if (rv.trace)
      for (auto i : rv.events) {
        const auto& e = rv.trace->data.events[i];
        threads.emplace(e.stream, detail::is_gpu_side(e)
                                      ? "stream " + std::to_string(e.stream) + " (GPU " + std::to_string(e.device) + ")"
                                      : "host thread " + std::to_string(e.stream));
      }
    threads[detail::iterations_tid] = "iterations (failslow: time between step completions)";
    threads[detail::findings_tid] = "findings (failslow)";
    if (!rv.trace)
      for (std::size_t p = 0; p < m.phase_count(); ++p)
        threads[detail::phase_tid_base + static_cast<std::int64_t>(p)] =
            m.phases[p].name + " (per-step total; its place in the step is not recorded)";
    for (const auto& [tid, tname] : threads) {
      w.begin("M", "thread_name", rv.rank, tid);
      {
        detail::json_args a(out);
        a.text("name", tname);
      }
      w.end();
    }
  }

  // The trace events, as Kineto writes them.
  for (const auto& rv : ranks) {
    if (!rv.trace) continue;
    const auto& d = rv.trace->data;
    std::unordered_map<std::uint32_t, std::size_t> launch_of, collective_of;
    for (std::size_t k = 0; k < d.launches.size(); ++k) launch_of.emplace(d.launches[k].event, k);
    for (std::size_t k = 0; k < d.collectives.size(); ++k) collective_of.emplace(d.collectives[k].event, k);
    auto name_of = [&](name_id id) { return traces->names.name(id); };
    for (auto i : rv.events) {
      const auto& e = d.events[i];
      w.begin("X", name_of(e.name), rv.rank, e.stream);
      w.category(detail::kineto_category(e));
      w.time("ts", e.start_ns - rv.offset - origin);
      w.time("dur", e.end_ns - e.start_ns);
      {
        detail::json_args a(out);
        if (detail::is_gpu_side(e)) {
          a.integer("device", e.device);
          a.integer("stream", e.stream);
        }
        if (e.correlation != 0) a.integer("correlation", e.correlation);
        if (auto it = launch_of.find(i); it != launch_of.end()) {
          a.dims("grid", d.launches[it->second].grid);
          a.dims("block", d.launches[it->second].block);
        }
        if (auto it = collective_of.find(i); it != collective_of.end()) {
          const auto& c = d.collectives[it->second];
          constexpr auto no_name = collective_args::no_name;
          if (c.collective != no_name) a.text("Collective name", name_of(c.collective));
          if (c.in_nelems >= 0) a.integer("In msg nelems", c.in_nelems);
          if (c.out_nelems >= 0) a.integer("Out msg nelems", c.out_nelems);
          if (c.group_size >= 0) a.integer("Group size", c.group_size);
          if (c.dtype != no_name) a.text("dtype", name_of(c.dtype));
          if (c.pg_name != no_name) a.text("Process Group Name", name_of(c.pg_name));
          if (c.pg_desc != no_name) a.text("Process Group Description", name_of(c.pg_desc));
          if (c.ranks != collective_args::no_ranks && c.ranks < d.rank_lists.size()) {
            std::string list = "[";
            for (std::size_t k = 0; k < d.rank_lists[c.ranks].size(); ++k)
              list += (k ? ", " : "") + std::to_string(d.rank_lists[c.ranks][k]);
            a.text("Process Group Ranks", list + "]");
          }
        }
      }
      w.end();
      ++res.events;
    }
  }

  // Iteration slices with the model's phase times; from summaries, one track per phase.
  for (const auto& rv : ranks) {
    const auto r = static_cast<std::size_t>(rv.rank);
    for (const auto& sh : rv.shown) {
      if (!sh.known) continue;
      const std::int64_t number = m.steps[sh.index];
      w.begin("X", "iteration " + std::to_string(number), rv.rank, detail::iterations_tid);
      w.category("failslow");
      w.time("ts", sh.start - rv.offset - origin);
      w.time("dur", sh.end - sh.start);
      {
        detail::json_args a(out);
        a.integer("step", number);
        a.number("iteration_ns", m.iteration_ns(r, sh.index));
        for (std::size_t p = 0; p < m.phase_count(); ++p)
          if (!std::isnan(m.phase_ns(r, p, sh.index))) a.number(m.phases[p].name + "_ns", m.phase_ns(r, p, sh.index));
        if (!rv.trace)
          if (const auto* win = idx.window(rv.rank, sh.index)) {
            std::vector<const compress::kernel_summary*> ks;
            for (const auto& k : win->kernels) ks.push_back(&k);
            std::sort(ks.begin(), ks.end(), [](auto* x, auto* y) { return x->total_ns > y->total_ns; });
            std::string top;
            for (std::size_t k = 0; k < ks.size() && k < 5; ++k) {
              const std::string kname = ks[k]->key < m.kernel_names.size() ? m.kernel_names[ks[k]->key] : "?";
              top += (top.empty() ? "" : "; ") + detail::format_kernel_name(kname, 60) + ": " +
                     std::to_string(ks[k]->count) + " x " +
                     detail::format_duration(ks[k]->total_ns /
                                             static_cast<double>(std::max<std::uint64_t>(1, ks[k]->count)));
            }
            a.text("costliest_kernels", top);
          }
      }
      w.end();
      if (rv.trace) continue;
      for (std::size_t p = 0; p < m.phase_count(); ++p) {
        const double x = m.phase_ns(r, p, sh.index);
        if (!(x > 0)) continue;
        const auto dur = std::min(sh.end - sh.start, static_cast<std::int64_t>(std::llround(x)));
        w.begin("X", m.phases[p].name + " " + detail::format_duration(x), rv.rank,
                detail::phase_tid_base + static_cast<std::int64_t>(p));
        w.category("failslow");
        w.time("ts", sh.start - rv.offset - origin);
        w.time("dur", std::max<std::int64_t>(0, dur));
        {
          detail::json_args a(out);
          a.integer("step", number);
          a.number(m.phases[p].name + "_ns", x);
        }
        w.end();
      }
    }
  }

  // Findings: an instant at the start of their overlap with the window on every shown rank
  // they name, and a slice over the overlap; job-wide findings as global instants.
  auto finding_args = [&](const finding& f) {
    detail::json_args a(out);
    a.text("level", f.level);
    a.text("kind", f.kind);
    a.text("summary", f.summary);
    a.list("ranks", f.ranks);
    if (!f.group.empty()) a.text("group", f.group);
    if (!f.phase.empty()) a.text("phase", f.phase);
    if (!f.kernel.empty()) a.text("kernel", f.kernel);
    a.integer("first_step", f.first_step);
    a.integer("last_step", f.last_step);
    a.number("score", f.score);
    for (const auto& item : f.evidence.items()) {
      if (item.what == evidence_item::type::number)
        a.number(item.name, item.number);
      else if (item.what == evidence_item::type::text)
        a.text(item.name, item.text);
      else
        a.list(item.name, item.numbers);
    }
  };
  for (const auto& f : rep.findings) {
    const std::int64_t lo = std::max(f.first_step, v.first_step), hi = std::min(f.last_step, v.last_step);
    if (lo > hi) continue;
    const std::string label =
        f.level + " " + f.kind + (f.phase.empty() ? "" : " " + f.phase) +
        (f.kernel.empty() || f.kind == "straggler" ? "" : " " + detail::format_kernel_name(f.kernel, 60));
    const auto named = detail::finding_ranks(f);
    for (const auto& rv : ranks) {
      const bool job_wide = named.empty();
      if (!job_wide && std::find(named.begin(), named.end(), rv.rank) == named.end()) continue;
      if (job_wide && &rv != &ranks.front()) continue;
      std::int64_t start = std::numeric_limits<std::int64_t>::max(), end = std::numeric_limits<std::int64_t>::min();
      for (const auto& sh : rv.shown)
        if (sh.known && m.steps[sh.index] >= lo && m.steps[sh.index] <= hi) {
          start = std::min(start, sh.start);
          end = std::max(end, sh.end);
        }
      if (start > end) continue;
      w.begin("i", label, rv.rank, detail::findings_tid);
      w.category("failslow_finding");
      w.time("ts", start - rv.offset - origin);
      w.raw(job_wide ? ", \"s\": \"g\"" : ", \"s\": \"t\"");
      finding_args(f);
      w.end();
      if (job_wide) continue;
      w.begin("X", label, rv.rank, detail::findings_tid);
      w.category("failslow_finding");
      w.time("ts", start - rv.offset - origin);
      w.time("dur", end - start);
      {
        detail::json_args a(out);
        a.text("summary", f.summary);
      }
      w.end();
    }
  }
  out += "\n  ],\n  \"baseTimeNanoseconds\": " + std::to_string(origin) + ",\n  \"otherData\": {";
  {
    // otherData: what is shown and why, for the person who opens the file.
    std::string body;
    auto member = [&](std::string_view k, const std::string& json_value) {
      out += body.empty() ? "\n    " : ",\n    ";
      body = "x";
      detail::append_escaped(out, k);
      out += ": " + json_value;
    };
    auto str = [](std::string_view s) {
      std::string x;
      detail::append_escaped(x, s);
      return x;
    };
    member("generator", str("failslow"));
    member("view", str(v.why));
    member("ranks", "[" + rank_list + "]");
    member("steps", "[" + std::to_string(v.first_step) + ", " + std::to_string(v.last_step) + "]");
    member("source", str(res.from_traces ? "traces: the events of the shown steps"
                                         : "summaries: steps and phase totals per rank from the model, no events"));
    std::string offsets = "{";
    for (std::size_t k = 0; k < ranks.size(); ++k)
      offsets += (k ? ", " : "") + str(std::to_string(ranks[k].rank)) + ": " + std::to_string(ranks[k].offset);
    member("clock_offsets_ns", offsets + "}");
    member("clock_aligned", res.clock_aligned ? "true" : "false");
    member("events", std::to_string(res.events));
    member("events_cut", std::to_string(res.events_cut));
    std::string fl = "[";
    for (std::size_t k = 0; k < rep.findings.size(); ++k)
      fl += (k ? ", " : "") + str(rep.findings[k].level + " " + rep.findings[k].kind + ": " + rep.findings[k].summary);
    member("findings", fl + "]");
    std::string nl = "[";
    for (std::size_t k = 0; k < res.notes.size(); ++k) nl += (k ? ", " : "") + str(res.notes[k]);
    member("notes", nl + "]");
  }
  out += "\n  }\n}\n";
  return res;
}

}  // namespace failslow::io
