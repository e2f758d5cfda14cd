// failslow/io/impl/report_text.ipp -- the definitions of io/report_text.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "failslow/core/report.hpp"
#include "failslow/io/detail/text_format.hpp"
#include "failslow/io/report_text.hpp"

namespace failslow::io {

namespace detail {

inline void append_wrapped(std::string& out, std::string_view text, std::size_t indent, std::size_t width,
                           std::size_t first_indent) {
  std::size_t col = first_indent;
  out.append(first_indent, ' ');
  std::size_t i = 0;
  bool first_word = true;
  while (i < text.size()) {
    const std::size_t j = std::min(text.find(' ', i), text.size());
    const std::string_view word = text.substr(i, j - i);
    if (!first_word && width > 0 && col + 1 + word.size() > width) {
      out += '\n';
      out.append(indent, ' ');
      col = indent;
    } else if (!first_word) {
      out += ' ';
      ++col;
    }
    out += word;
    col += word.size();
    first_word = false;
    i = j + 1;
  }
  out += '\n';
}

FAILSLOW_FUNC_DEF std::string num(double v, const char* fmt) {
  if (!std::isfinite(v)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

inline std::string percent(double fraction) { return num(100 * fraction, "%.1f") + " %"; }

// The evidence lines of one finding, by kind; other kinds list their evidence generically.
inline std::vector<std::string> evidence_lines(const finding& f) {
  std::vector<std::string> lines;
  const auto& e = f.evidence;
  if (f.kind == "slow_window") {
    std::string l = steps_text(f) + ": " + (e.find("pattern") ? e.find("pattern")->text : std::string("window")) +
                    ", " + num(f.score, "%.2f") + "x the baseline (" + format_duration(e.number("observed_ns")) +
                    " vs " + format_duration(e.number("baseline_ns")) + " per step, peak " +
                    format_duration(e.number("peak_ns")) + " at step " + num(e.number("peak_step"), "%.0f") + ")";
    lines.push_back(l);
    lines.push_back("z " + num(e.number("z"), "%.1f") + " against a step-to-step noise of " +
                    format_duration(e.number("noise_ns")) + "; the job lost " + percent(e.number("job_slowdown")) +
                    " of its time over these steps");
    if (const auto* s = e.find("steps"); s && s->what == evidence_item::type::numbers && s->numbers.size() > 1 &&
                                         e.find("pattern") && e.find("pattern")->text == "recurring") {
      std::string list;
      for (double v : s->numbers) list += (list.empty() ? "" : ", ") + num(v, "%.0f");
      lines.push_back("slow steps: " + list);
    }
    return lines;
  }
  if (f.kind == "straggler") {
    std::string who = f.ranks.empty() ? std::string("?") : std::to_string(f.ranks.front());
    const auto* within = e.find("compared_within");
    const bool own = within && within->what == evidence_item::type::text && within->text == "own history";
    std::string peers = "its peers";
    if (const auto* p = e.find("peers"); p && p->what == evidence_item::type::numbers)
      peers = "its " + std::to_string(p->numbers.size()) + " peers";
    // A claim of L2's moderate count says the bar its steps are counted over.
    const auto* bar = e.find("elevated_z");
    const std::string counted = bar ? ", over z " + num(bar->number, "%.1f") + " in " : std::string(", elevated in ");
    const std::string stats = num(e.number("ratio"), "%.2f") + "x, z " + num(e.number("z"), "%.1f") + counted +
                              num(e.number("elevated_steps"), "%.0f") + " steps, q " +
                              (e.number("q_value") > 0 ? num(e.number("q_value"), "%.2g") : std::string("< 1e-300"));
    if (own)
      lines.push_back("rank " + who + ", " + f.phase + ", " + steps_text(f) + ": " +
                      format_duration(e.number("observed_ns")) + " per step vs " +
                      format_duration(e.number("baseline_ns")) + " in its other steps (" + stats +
                      "); no comparable ranks: judged against its own history, relative to the other ranks");
    else
      lines.push_back("rank " + who + ", " + f.phase + ", " + steps_text(f) + ": " +
                      format_duration(e.number("observed_ns")) + " per step vs " +
                      format_duration(e.number("baseline_ns")) + " for " + peers +
                      (f.group.empty() ? "" : " in " + f.group) + " (" + stats + ")");
    const double cr = e.number("communication_ratio", std::nan(""));
    std::string wait = "communication " + num(cr, "%.2f") + (own ? "x its other steps'" : "x its peers'");
    if (std::isfinite(cr) && cr < 1) wait += " (it does not wait: the others wait for it)";
    const double waiting = e.number("waiting_ranks");
    if (waiting > 0) wait += "; " + num(waiting, "%.0f") + " ranks wait longer in collectives";
    lines.push_back(wait);
    const double cv = e.number("group_cv", std::nan("")), cvb = e.number("group_cv_before", std::nan(""));
    std::string cvl;
    if (std::isfinite(cv)) {
      cvl = "CV of " + f.phase + " across the group " + num(cv, "%.3f");
      if (std::isfinite(cvb)) cvl += " (" + num(cvb, "%.3f") + " outside these steps)";
      cvl += "; ";
    }
    cvl += "the job lost " + percent(e.number("job_slowdown")) + " of its time over these steps";
    lines.push_back(cvl);
    if (const auto* a = e.find("also_slow"); a && a->what == evidence_item::type::text)
      lines.push_back("also slow: " + a->text);
    return lines;
  }
  if (f.kind == "host_stall") {
    std::string who;
    for (std::size_t i = 0; i < f.ranks.size() && i < 8; ++i) who += (i ? ", " : "") + std::to_string(f.ranks[i]);
    if (f.ranks.size() > 8) who += ", ... (" + std::to_string(f.ranks.size()) + " ranks)";
    std::string when = steps_text(f);
    if (const auto* s = e.find("steps"); s && s->what == evidence_item::type::numbers && s->numbers.size() > 1) {
      when = "steps ";
      for (std::size_t i = 0; i < s->numbers.size(); ++i) when += (i ? ", " : "") + num(s->numbers[i], "%.0f");
    }
    // Without cpu_busy_fraction the stall was measured from the step's idle, not a launch gap:
    // a CPU trace's time without a profiled operator (host_absent), or a summary's GPU idle.
    const bool gap = e.find("cpu_busy_fraction") != nullptr;
    const std::string what = gap                        ? ", the GPU idle "
                             : f.phase == "host_absent" ? ", no profiled operator ran for "
                                                        : ", the GPU ran no kernel for ";
    lines.push_back(
        (f.ranks.size() == 1 ? "rank " : "ranks ") + who + ", " + when + ": " + f.phase + what +
        format_duration(e.number("gpu_idle_ns")) + (gap ? " in the largest launch gap" : " in the step") + " (z " +
        num(e.number("z"), "%.1f") + " against its own steps)" +
        (e.number("period_steps") > 0 ? ", every " + num(e.number("period_steps"), "%.0f") + " steps" : std::string()));
    if (gap) {
      std::string host = "host operators covered " + percent(e.number("cpu_busy_fraction")) + " of the gap";
      if (const auto* ops = e.find("host_ops"); ops && ops->what == evidence_item::type::text) host += ": " + ops->text;
      lines.push_back(host);
    }
    if (const auto* k = e.find("new_kernels"); k && k->what == evidence_item::type::text)
      lines.push_back("kernels launched for the first time: " + k->text);
    std::string cost = "the job lost " + percent(e.number("job_slowdown")) + " of its time over these steps";
    if (e.number("caused_wait_ns") > 0)
      cost += "; other ranks waited " + format_duration(e.number("caused_wait_ns")) + " in collectives";
    lines.push_back(cost);
    if (const auto* c = e.find("co_occurs_with"); c && c->what == evidence_item::type::text)
      lines.push_back("co-occurs with: " + c->text);
    return lines;
  }
  if (f.kind == "slow_host") {
    lines.push_back(steps_text(f) + ": a launch every " + format_duration(e.number("launch_interval_ns")) +
                    " against " + format_duration(e.number("peer_launch_interval_ns")) + " on its peers' hosts (" +
                    num(e.number("launch_interval_ratio"), "%.2f") + "x, z " + num(e.number("z"), "%.1f") + ", q " +
                    num(e.number("q_value"), "%.2g") + ")");
    lines.push_back("GPU idle per step " + format_duration(e.number("gpu_idle_ns")) + ", its peers " +
                    format_duration(e.number("peer_gpu_idle_ns")));
    return lines;
  }
  std::string generic;
  for (const auto& item : e.items()) {
    if (!generic.empty()) generic += ", ";
    generic += item.name + " ";
    if (item.what == evidence_item::type::number)
      generic += num(item.number, "%.4g");
    else if (item.what == evidence_item::type::text)
      generic += item.text;
    else
      generic += "[" + std::to_string(item.numbers.size()) + " values]";
  }
  lines.push_back(steps_text(f) + (generic.empty() ? "" : ": " + generic));
  return lines;
}

}  // namespace detail

FAILSLOW_FUNC_DEF std::string report_to_text(const report& r, const text_report_options& o) {
  using detail::append_wrapped;
  std::string out;
  const auto& t = r.topology;
  std::string layout = "tp " + std::to_string(t.tp) + " x pp " + std::to_string(t.pp) + " x dp " + std::to_string(t.dp);
  if (t.cp > 1) layout += " x cp " + std::to_string(t.cp);
  if (t.ep > 1) layout += " x ep " + std::to_string(t.ep);
  layout += ", order " + t.order + (t.source.empty() ? "" : ", " + t.source);
  append_wrapped(out,
                 "failslow diagnosis: " + std::to_string(r.world_size) + " ranks (" + layout + "), steps " +
                     std::to_string(r.first_step) + "-" + std::to_string(r.last_step),
                 2, o.width, 0);
  out += '\n';

  // Verdict.
  const auto [blamed, worst_window] = verdict_of(r);
  if (r.findings.empty()) {
    append_wrapped(out,
                   "No fail-slow problem found in steps " + std::to_string(r.first_step) + "-" +
                       std::to_string(r.last_step) + " of " + std::to_string(r.world_size) + " ranks.",
                   2, o.width, 0);
  } else {
    out += "Verdict\n";
    std::size_t shown = 0;
    for (const auto* f : blamed) {
      if (shown++ == o.max_findings_per_level) break;
      append_wrapped(out, "- " + f->summary, 4, o.width, 2);
    }
    if (blamed.empty() && worst_window)
      append_wrapped(out, "- " + worst_window->summary + " (no rank, kernel or link is to blame at L2)", 4, o.width, 2);
    else if (blamed.size() > o.max_findings_per_level)
      append_wrapped(out, "- ... and " + std::to_string(blamed.size() - o.max_findings_per_level) + " more", 4, o.width,
                     2);
  }

  // Evidence, level by level.
  static const char* const titles[] = {"", "L1 slow windows (the job's iteration time)",
                                       "L2 stragglers (rank and phase, against comparable ranks)",
                                       "L3 degraded kernels, links and stages", "L4 who waits for whom, host stalls"};
  for (int level = 1; level <= 4; ++level) {
    std::vector<const finding*> here;
    for (const auto& f : r.findings)
      if (level_number(f.level) == level) here.push_back(&f);
    if (here.empty()) continue;
    out += '\n';
    out += titles[level];
    out += '\n';
    std::size_t shown = 0;
    for (const auto* f : here) {
      if (shown++ == o.max_findings_per_level) {
        append_wrapped(out,
                       "... " + std::to_string(here.size() - o.max_findings_per_level) + " more in the JSON report", 4,
                       o.width, 2);
        break;
      }
      const auto lines = detail::evidence_lines(*f);
      for (std::size_t i = 0; i < lines.size(); ++i)
        append_wrapped(out, (i == 0 ? "- " : "  ") + lines[i], 4, o.width, 2);
    }
  }
  if (!r.notes.empty()) {
    out += "\nNotes\n";
    for (const auto& n : r.notes) append_wrapped(out, "- " + n, 4, o.width, 2);
  }
  if (!r.files.empty()) {
    out += "\nFiles\n";
    for (const auto& f : r.files) {
      std::string refs;
      std::size_t named = 0;
      for (std::size_t i : f.findings) {
        if (i >= r.findings.size()) continue;
        if (named++ == 3) {
          refs += " and " + std::to_string(f.findings.size() - 3) + " more";
          break;
        }
        const auto& x = r.findings[i];
        refs += (refs.empty() ? "" : ", ") + x.kind +
                (!x.ranks.empty()   ? " rank " + std::to_string(x.ranks.front())
                 : !x.group.empty() ? " " + x.group
                                    : " " + detail::steps_text(x));
      }
      append_wrapped(out, "- " + f.path + ": " + f.title + (refs.empty() ? "" : " (" + refs + ")"), 4, o.width, 2);
    }
  }
  return out;
}

}  // namespace failslow::io
