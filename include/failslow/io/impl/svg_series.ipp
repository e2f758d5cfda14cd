// failslow/io/impl/svg_series.ipp -- the definitions of io/svg_series.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/io/detail/svg_canvas.hpp"
#include "failslow/io/svg_series.hpp"

namespace failslow::io {

FAILSLOW_FUNC_DEF std::string iteration_series_svg(const iteration_series& s, const series_options& o) {
  using namespace detail;
  const std::size_t n = s.steps.size();
  if (n == 0) throw invalid_argument("iteration_series_svg: no steps");
  if (s.median_ns.size() != n || (!s.min_ns.empty() && s.min_ns.size() != n) ||
      (!s.max_ns.empty() && s.max_ns.size() != n) || s.min_ns.size() != s.max_ns.size())
    throw invalid_argument("iteration_series_svg: the series have different lengths");
  for (std::size_t i = 1; i < n; ++i)
    if (s.steps[i] <= s.steps[i - 1]) throw invalid_argument("iteration_series_svg: steps must ascend");
  if (!(o.plot_width >= 16) || !(o.plot_height >= 16))
    throw invalid_argument("iteration_series_svg: plot below 16 pixels");

  const bool band = !s.min_ns.empty();
  std::vector<double> all(s.median_ns);
  if (band) {
    all.insert(all.end(), s.min_ns.begin(), s.min_ns.end());
    all.insert(all.end(), s.max_ns.begin(), s.max_ns.end());
  }
  if (std::isfinite(o.baseline_ns)) all.push_back(o.baseline_ns);
  auto [lo, hi] = finite_range(all);
  if (!std::isfinite(lo)) lo = 0, hi = 1;
  const auto unit = duration_unit_for(hi);
  double pad = (hi - lo) * 0.08;
  if (!(pad > 0)) pad = std::max(1.0, std::fabs(hi) * 0.05);
  const auto yticks = nice_ticks((lo - pad) / unit.ns, (hi + pad) / unit.ns, 6);
  const double ylo = std::min(lo - pad, yticks.front() * unit.ns), yhi = std::max(hi + pad, yticks.back() * unit.ns);

  // Window labels above the plot; those that would collide are numbered and listed below.
  const double first = static_cast<double>(s.steps.front()), last = static_cast<double>(s.steps.back());
  const double span = std::max(1.0, last - first + 1);
  const double x0 = 72, W = o.plot_width, H = o.plot_height;
  auto xof = [&](double step) { return x0 + (step - first + 0.5) / span * W; };
  std::vector<std::string> listed;
  const double y0 = 58;
  const double xmax = x0 + W;
  double width = xmax + 24;
  width = std::max(width, 16 + text_width(o.title, 14));

  std::vector<std::string> notes;
  std::string legend = "Dark line: median over ranks";
  if (band) legend += "; band: fastest to slowest rank";
  if (std::isfinite(o.baseline_ns)) legend += "; dashed: healthy pace";
  if (!o.windows.empty()) legend += "; orange: slow windows (L1)";
  notes.push_back(legend + ".");

  // Lay out window labels first so the height is known.
  struct placed {
    double a, b;
    std::string text;
    bool job;
  };
  std::vector<placed> wins;
  for (const auto& w : o.windows) {
    if (w.last < s.steps.front() || w.first > s.steps.back()) continue;
    const double a = xof(static_cast<double>(std::max(w.first, s.steps.front())) - 0.5);
    const double b = xof(static_cast<double>(std::min(w.last, s.steps.back())) + 0.5);
    wins.push_back({a, b, w.label, w.job});
  }
  double label_end = -1e9;
  std::vector<std::string> label_text(wins.size());
  for (std::size_t i = 0; i < wins.size(); ++i) {
    const double tw = text_width(wins[i].text, 11);
    if (wins[i].a >= label_end + 6 && wins[i].a + tw <= width) {
      label_text[i] = wins[i].text;
      label_end = wins[i].a + tw;
    } else {
      const std::string tag = "(" + std::to_string(listed.size() + 1) + ")";
      if (wins[i].a >= label_end + 4) {
        label_text[i] = tag;
        label_end = wins[i].a + text_width(tag, 11);
      }
      listed.push_back(tag + " " + wins[i].text);
    }
  }
  for (const auto& t : listed) notes.push_back(t);
  for (const auto& t : notes) width = std::max(width, 16 + text_width(t, 11));
  const double height = y0 + H + 44 + 16 * static_cast<double>(notes.size());

  svg_canvas c(std::ceil(width), std::ceil(height), o.title);
  c.text(8, 20, o.title, "start", 14, "font-weight=\"bold\"");
  c.text(8, 38,
         grouped(n) + " steps (" + std::to_string(s.steps.front()) + "-" + std::to_string(s.steps.back()) +
             "), iteration time in " + std::string(unit.name),
         "start", 11, "fill=\"#444444\"");
  auto yof = [&](double ns) { return y0 + H - (ns - ylo) / (yhi - ylo) * H; };
  c.raw("<g class=\"series-plot\" data-x=\"" + svg_number(x0) + "\" data-y=\"" + svg_number(y0) + "\" data-width=\"" +
        svg_number(W) + "\" data-height=\"" + svg_number(H) + "\">\n");
  for (std::size_t i = 0; i < wins.size(); ++i) {
    c.rect(wins[i].a, y0, wins[i].b - wins[i].a, H, wins[i].job ? "#fdb863" : "#fee0b6", "fill-opacity=\"0.6\"");
    if (!label_text[i].empty()) c.text(wins[i].a, y0 - 6, label_text[i], "start", 11, "fill=\"#8c510a\"");
  }
  for (double t : yticks) {
    const double y = yof(t * unit.ns);
    c.line(x0, y, xmax, y, "#e5e5e5");
    c.line(x0 - 4, y, x0, y, "#333333");
    c.text(x0 - 6, y + 4, tick_label(t), "end", 11);
  }
  // Polylines, broken where a value is missing.
  auto polyline = [&](const std::vector<double>& v, std::string_view style) {
    std::string pts;
    auto flush = [&] {
      if (!pts.empty()) c.raw("<polyline fill=\"none\" " + std::string(style) + " points=\"" + pts + "\"/>\n");
      pts.clear();
    };
    for (std::size_t i = 0; i < n; ++i) {
      if (!std::isfinite(v[i])) {
        flush();
        continue;
      }
      if (!pts.empty()) pts += ' ';
      pts += svg_number(xof(static_cast<double>(s.steps[i]))) + "," + svg_number(yof(v[i]));
    }
    flush();
  };
  if (band) {
    // The band as one polygon per run of steps where both ends are known.
    std::size_t i = 0;
    while (i < n) {
      while (i < n && !(std::isfinite(s.min_ns[i]) && std::isfinite(s.max_ns[i]))) ++i;
      std::size_t e = i;
      while (e < n && std::isfinite(s.min_ns[e]) && std::isfinite(s.max_ns[e])) ++e;
      if (e > i) {
        std::string pts;
        for (std::size_t k = i; k < e; ++k)
          pts += svg_number(xof(static_cast<double>(s.steps[k]))) + "," + svg_number(yof(s.max_ns[k])) + " ";
        for (std::size_t k = e; k-- > i;)
          pts += svg_number(xof(static_cast<double>(s.steps[k]))) + "," + svg_number(yof(s.min_ns[k])) +
                 (k > i ? " " : "");
        c.raw("<polygon fill=\"#b9a7d0\" fill-opacity=\"0.55\" points=\"" + pts + "\"/>\n");
      }
      i = e;
    }
  }
  if (std::isfinite(o.baseline_ns))
    c.line(x0, yof(o.baseline_ns), xmax, yof(o.baseline_ns), "#555555", 1, "stroke-dasharray=\"5,4\"");
  polyline(s.median_ns, "stroke=\"#440154\" stroke-width=\"2\"");
  c.rect(x0, y0, W, H, "none", "stroke=\"#333333\" stroke-width=\"1\"");
  c.raw("</g>\n");
  const auto xticks = nice_ticks(first, last, std::max<std::size_t>(2, static_cast<std::size_t>(W / 60)), true);
  for (double t : xticks) {
    const double x = xof(t);
    c.line(x, y0 + H, x, y0 + H + 4, "#333333");
    c.text(x, y0 + H + 16, tick_label(t), "middle", 11);
  }
  c.text(x0 + W / 2, y0 + H + 32, "step", "middle", 12);
  c.text(16, y0 + H / 2, std::string(unit.name), "middle", 12,
         "transform=\"rotate(-90 16 " + svg_number(y0 + H / 2) + ")\"");
  for (std::size_t i = 0; i < notes.size(); ++i)
    c.text(8, y0 + H + 52 + 16 * static_cast<double>(i), notes[i], "start", 11, "fill=\"#444444\"");
  return c.finish();
}

}  // namespace failslow::io
