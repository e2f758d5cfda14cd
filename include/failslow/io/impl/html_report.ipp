// failslow/io/impl/html_report.ipp -- the definitions of io/html_report.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "failslow/core/report.hpp"
#include "failslow/io/detail/svg_canvas.hpp"
#include "failslow/io/detail/text_format.hpp"
#include "failslow/io/figure.hpp"
#include "failslow/io/html_report.hpp"
#include "failslow/version.hpp"

namespace failslow::io {

namespace detail {

inline const char* html_style() {
  return R"(body{font-family:"DejaVu Sans",Verdana,Arial,sans-serif;color:#222;background:#fff;margin:0 auto;max-width:1040px;padding:16px 24px;line-height:1.4}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ccc;padding-bottom:4px}
h3{font-size:15px;margin:0 0 6px}.meta{color:#555;margin:0}
.verdict{border-left:6px solid #b35806;background:#fdf3e7;padding:8px 16px;margin-top:16px}
.verdict.clean{border-color:#1b7837;background:#eef7ee}.verdict ul{margin:6px 0;padding-left:20px}
.finding{border:1px solid #ddd;border-radius:4px;padding:12px 16px;margin:14px 0}
.badge{display:inline-block;font-size:12px;font-weight:bold;color:#fff;background:#542788;border-radius:3px;padding:1px 6px;margin-right:6px}
.badge.L1{background:#8073ac}.badge.L2{background:#542788}.badge.L3{background:#2d004b}.badge.L4{background:#000}
.where{color:#555;font-size:13px}table.evidence{border-collapse:collapse;font-size:13px;margin:8px 0}
table.evidence td{border-top:1px solid #eee;padding:2px 12px 2px 0;vertical-align:top}
table.evidence td:first-child{color:#555;white-space:nowrap;font-family:"DejaVu Sans Mono",monospace}
figure{margin:12px 0;overflow-x:auto}figure svg{display:block;max-width:none}figcaption{font-size:13px;color:#555}
.seealso{font-size:13px}footer{margin-top:32px;color:#777;font-size:12px}code{font-family:"DejaVu Sans Mono",monospace}
)";
}

inline void append_html(std::string& out, std::string_view s) { append_xml_escaped(out, s); }

inline std::string html(std::string_view s) { return xml_escaped(s); }

inline std::string html_number(double v) {
  if (!std::isfinite(v)) return "n/a";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<long long>(v));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

inline bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

inline std::string evidence_value(const evidence_item& e, std::size_t max_list) {
  const bool ns = ends_with(e.name, "_ns") || ends_with(e.name, "_ns_per_step");
  auto one = [&](double v) { return ns ? format_duration(v) : html_number(v); };
  switch (e.what) {
    case evidence_item::type::number:
      if (e.name == "job_slowdown" && std::isfinite(e.number)) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.1f %%", 100 * e.number);
        return buf;
      }
      return one(e.number);
    case evidence_item::type::text:
      return e.text;
    case evidence_item::type::numbers: {
      std::string s;
      for (std::size_t i = 0; i < e.numbers.size() && i < max_list; ++i) s += (i ? ", " : "") + one(e.numbers[i]);
      if (e.numbers.size() > max_list) s += " ... (" + std::to_string(e.numbers.size()) + " in all)";
      return s.empty() ? "(none)" : s;
    }
  }
  return {};
}

inline std::string finding_steps(const finding& f) {
  return f.first_step == f.last_step ? "step " + std::to_string(f.first_step)
                                     : "steps " + std::to_string(f.first_step) + "-" + std::to_string(f.last_step);
}

}  // namespace detail

FAILSLOW_FUNC_DEF std::string report_to_html(const report& r, const std::vector<figure>& figures,
                                             const html_report_options& o) {
  using namespace detail;
  std::string out;
  const auto& t = r.topology;
  std::string layout = "tp " + std::to_string(t.tp) + " x pp " + std::to_string(t.pp) + " x dp " + std::to_string(t.dp);
  if (t.cp > 1) layout += " x cp " + std::to_string(t.cp);
  if (t.ep > 1) layout += " x ep " + std::to_string(t.ep);
  layout += ", order " + t.order + (t.source.empty() ? "" : ", " + t.source);

  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>";
  append_html(out, o.title + ": " + std::to_string(r.world_size) + " ranks, steps " + std::to_string(r.first_step) +
                       "-" + std::to_string(r.last_step));
  out += "</title>\n<style>\n";
  out += html_style();
  out += "</style>\n</head>\n<body>\n<header>\n<h1>";
  append_html(out, o.title);
  out += "</h1>\n<p class=\"meta\">";
  append_html(out, std::to_string(r.world_size) + " ranks (" + layout + "), steps " + std::to_string(r.first_step) +
                       "-" + std::to_string(r.last_step) + ", " + std::to_string(r.findings.size()) +
                       (r.findings.size() == 1 ? " finding" : " findings"));
  out += "</p>\n</header>\n";

  // Verdict, as the text report words it.
  const auto [blamed, worst_window] = verdict_of(r);
  out += std::string("<section class=\"verdict") + (r.findings.empty() ? " clean" : "") +
         "\" id=\"verdict\">\n<h2>Verdict</h2>\n";
  if (r.findings.empty()) {
    out += "<p>";
    append_html(out, "No fail-slow problem found in steps " + std::to_string(r.first_step) + "-" +
                         std::to_string(r.last_step) + " of " + std::to_string(r.world_size) + " ranks.");
    out += "</p>\n";
  } else {
    out += "<ul>\n";
    for (const auto* f : blamed) out += "<li>" + html(f->summary) + "</li>\n";
    if (blamed.empty() && worst_window)
      out += "<li>" + html(worst_window->summary + " (no rank, kernel or link is to blame at L2)") + "</li>\n";
    out += "</ul>\n";
  }
  out += "</section>\n";

  // Figures are numbered in the order the page shows them: under the first finding that refers
  // to them, then the overview.
  auto shows = [&](std::size_t k, std::size_t i) {
    return !figures[k].overview &&
           std::find(figures[k].findings.begin(), figures[k].findings.end(), i) != figures[k].findings.end();
  };
  std::vector<std::size_t> number(figures.size(), 0);
  std::size_t numbered = 0;
  for (std::size_t i = 0; i < r.findings.size(); ++i)
    for (std::size_t k = 0; k < figures.size(); ++k)
      if (number[k] == 0 && shows(k, i)) number[k] = ++numbered;
  for (auto& n : number)
    if (n == 0) n = ++numbered;

  // Findings with their evidence and figures.
  std::vector<bool> shown(figures.size(), false);
  auto put_figure = [&](std::size_t k) {
    const auto& fig = figures[k];
    const std::string n = std::to_string(number[k]);
    out += "<figure id=\"fig-" + n + "\" class=\"" + html(fig.kind) + "\">\n";
    out += fig.svg;
    out += "<figcaption>Figure " + n + ": " + html(fig.title) + " (<code>" + html(fig.file) +
           "</code>)</figcaption>\n</figure>\n";
    shown[k] = true;
  };
  if (!r.findings.empty()) out += "<section id=\"findings\">\n<h2>Findings</h2>\n";
  for (std::size_t i = 0; i < r.findings.size(); ++i) {
    const auto& f = r.findings[i];
    out += "<section class=\"finding\" id=\"finding-" + std::to_string(i + 1) + "\">\n<h3><span class=\"badge " +
           html(f.level) + "\">" + html(f.level) + "</span>" + std::to_string(i + 1) + ". " + html(f.kind) +
           "</h3>\n<p class=\"where\">";
    std::string where;
    if (!f.ranks.empty()) {
      where = f.ranks.size() == 1 ? "rank " : "ranks ";
      for (std::size_t k = 0; k < f.ranks.size(); ++k) where += (k ? ", " : "") + std::to_string(f.ranks[k]);
    } else {
      where = "job-wide";
    }
    if (!f.group.empty()) where += " · group " + f.group;
    if (!f.phase.empty()) where += " · " + f.phase;
    where += " · " + finding_steps(f) + " · score " + html_number(f.score);
    append_html(out, where);
    out += "</p>\n";
    if (!f.kernel.empty()) out += "<p class=\"where\">kernel <code>" + html(f.kernel) + "</code></p>\n";
    out += "<p>" + html(f.summary) + "</p>\n";
    if (!f.evidence.empty()) {
      out += "<table class=\"evidence\">\n";
      for (const auto& e : f.evidence.items())
        out += "<tr><td>" + html(e.name) + "</td><td>" + html(evidence_value(e, o.max_list)) + "</td></tr>\n";
      out += "</table>\n";
    }
    std::string seealso;
    for (std::size_t k = 0; k < figures.size(); ++k) {
      if (!shows(k, i)) continue;
      if (shown[k])
        seealso += std::string(seealso.empty() ? "" : ", ") + "<a href=\"#fig-" + std::to_string(number[k]) +
                   "\">figure " + std::to_string(number[k]) + "</a>";
      else
        put_figure(k);
    }
    if (!seealso.empty()) out += "<p class=\"seealso\">See also " + seealso + ".</p>\n";
    out += "</section>\n";
  }
  if (!r.findings.empty()) out += "</section>\n";

  bool overview = false;
  for (std::size_t k = 0; k < figures.size(); ++k) {
    if (shown[k]) continue;
    if (!overview) out += "<section id=\"overview\">\n<h2>The whole job</h2>\n";
    overview = true;
    put_figure(k);
  }
  if (overview) out += "</section>\n";

  if (!r.notes.empty()) {
    out += "<section id=\"notes\">\n<h2>Notes</h2>\n<ul>\n";
    for (const auto& n : r.notes) out += "<li>" + html(n) + "</li>\n";
    out += "</ul>\n</section>\n";
  }
  if (!r.files.empty()) {
    out += "<section id=\"files\">\n<h2>Files</h2>\n<ul>\n";
    for (const auto& f : r.files) out += "<li><code>" + html(f.path) + "</code>: " + html(f.title) + "</li>\n";
    out += "</ul>\n</section>\n";
  }
  out += "<footer>Report schema ";
  append_html(out, report::schema);
  out += ", written by failslow ";
  out += version_string;
  out += ".</footer>\n</body>\n</html>\n";
  return out;
}

}  // namespace failslow::io
