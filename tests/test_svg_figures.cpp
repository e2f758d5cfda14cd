// SVG figures (io/svg_heatmap.hpp, io/svg_w1_matrix.hpp, io/svg_series.hpp), the figures of a
// diagnosed job (io/diagnosis_figures.hpp) and the one-page HTML report (io/html_report.hpp):
// well-formed XML (a small checker below; the ctest checks also parse them with python's
// xml.etree and render them with rsvg-convert and Chromium), the culprit's row in the top
// colour of the scale, aggregation by max at 16,384 ranks, escaping, determinism.
#include <Eigen/Core>
#include <catch2/catch.hpp>
#include <cctype>
#include <failslow/diagnose/diagnose.hpp>
#include <failslow/io/diagnosis_figures.hpp>
#include <failslow/io/html_report.hpp>
#include <failslow/io/report_json.hpp>
#include <failslow/io/report_text.hpp>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "support/simulated_job.hpp"

using namespace failslow;

namespace {

// ---- a small XML well-formedness checker -----------------------------------------------------
// Elements nest and close in order, one root, attribute values quoted and unique per element,
// '&' only in the five predefined entities or numeric references, no '<' in text or values,
// comments, processing instructions and DOCTYPE skipped. Returns "" or what is wrong.
std::string svgfig_xml_error(const std::string& s) {
  std::vector<std::string> open;
  std::size_t i = 0, roots = 0;
  auto name_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':' || c == '.';
  };
  auto check_text = [&](std::size_t a, std::size_t b) -> std::string {
    for (std::size_t k = a; k < b; ++k) {
      if (s[k] == '<') return "'<' in text at " + std::to_string(k);
      if (s[k] != '&') continue;
      const std::size_t semi = s.find(';', k);
      if (semi == std::string::npos || semi > b) return "unterminated entity at " + std::to_string(k);
      const std::string ent = s.substr(k + 1, semi - k - 1);
      const bool numeric = ent.size() > 1 && ent[0] == '#' && std::all_of(ent.begin() + 1, ent.end(), [](char c) {
                             return std::isdigit(static_cast<unsigned char>(c));
                           });
      if (!numeric && ent != "amp" && ent != "lt" && ent != "gt" && ent != "quot" && ent != "apos")
        return "unknown entity &" + ent + "; at " + std::to_string(k);
    }
    return "";
  };
  while (i < s.size()) {
    const std::size_t lt = s.find('<', i);
    const std::size_t text_end = lt == std::string::npos ? s.size() : lt;
    if (auto e = check_text(i, text_end); !e.empty()) return e;
    if (open.empty())
      for (std::size_t k = i; k < text_end; ++k)
        if (!std::isspace(static_cast<unsigned char>(s[k]))) return "text outside the root at " + std::to_string(k);
    if (lt == std::string::npos) break;
    if (s.compare(lt, 4, "<!--") == 0) {
      const std::size_t e = s.find("-->", lt);
      if (e == std::string::npos) return "unterminated comment";
      i = e + 3;
      continue;
    }
    if (s.compare(lt, 2, "<?") == 0 || s.compare(lt, 2, "<!") == 0) {
      i = s.find('>', lt);
      if (i == std::string::npos) return "unterminated declaration";
      ++i;
      continue;
    }
    const bool closing = s[lt + 1] == '/';
    std::size_t k = lt + (closing ? 2 : 1);
    const std::size_t n0 = k;
    while (k < s.size() && name_char(s[k])) ++k;
    const std::string name = s.substr(n0, k - n0);
    if (name.empty()) return "empty element name at " + std::to_string(lt);
    if (closing) {
      while (k < s.size() && std::isspace(static_cast<unsigned char>(s[k]))) ++k;
      if (k >= s.size() || s[k] != '>') return "bad closing tag at " + std::to_string(lt);
      if (open.empty() || open.back() != name)
        return "</" + name + "> does not close <" + (open.empty() ? "" : open.back()) + ">";
      open.pop_back();
      i = k + 1;
      continue;
    }
    std::vector<std::string> attrs;
    for (;;) {
      while (k < s.size() && std::isspace(static_cast<unsigned char>(s[k]))) ++k;
      if (k >= s.size()) return "unterminated tag <" + name;
      if (s[k] == '>' || s.compare(k, 2, "/>") == 0) break;
      const std::size_t a0 = k;
      while (k < s.size() && name_char(s[k])) ++k;
      const std::string an = s.substr(a0, k - a0);
      if (an.empty() || k >= s.size() || s[k] != '=') return "bad attribute in <" + name + "> at " + std::to_string(a0);
      if (std::find(attrs.begin(), attrs.end(), an) != attrs.end()) return "duplicate attribute " + an;
      attrs.push_back(an);
      ++k;
      if (k >= s.size() || (s[k] != '"' && s[k] != '\'')) return "unquoted attribute " + an;
      const char q = s[k];
      const std::size_t v1 = s.find(q, k + 1);
      if (v1 == std::string::npos) return "unterminated attribute " + an;
      if (auto e = check_text(k + 1, v1); !e.empty()) return "attribute " + an + ": " + e;
      k = v1 + 1;
    }
    const bool empty = s[k] == '/';
    if (open.empty()) ++roots;
    if (!empty) open.push_back(name);
    i = k + (empty ? 2 : 1);
  }
  if (!open.empty()) return "<" + open.back() + "> not closed";
  if (roots != 1) return std::to_string(roots) + " root elements";
  return "";
}

// ---- reading cells back ------------------------------------------------------------------------

std::string svgfig_attr(const std::string& tag, const std::string& name) {
  const std::string key = " " + name + "=\"";
  const std::size_t a = tag.find(key);
  if (a == std::string::npos) return "";
  const std::size_t b = tag.find('"', a + key.size());
  return tag.substr(a + key.size(), b - a - key.size());
}

struct svgfig_cells {
  double x = 0, y = 0, w = 0, h = 0;
  std::size_t rows = 0, cols = 0, row_bin = 1, col_bin = 1;
  std::vector<std::string> rects;  // the <rect .../> tags inside the group
};

svgfig_cells svgfig_read_cells(const std::string& svg, const std::string& cls) {
  svgfig_cells c;
  const std::size_t g = svg.find("<g class=\"" + cls + "\"");
  REQUIRE(g != std::string::npos);
  const std::string tag = svg.substr(g, svg.find('>', g) - g);
  c.x = std::stod(svgfig_attr(tag, "data-x"));
  c.y = std::stod(svgfig_attr(tag, "data-y"));
  c.w = std::stod(svgfig_attr(tag, "data-cell-width"));
  c.h = std::stod(svgfig_attr(tag, "data-cell-height"));
  c.rows = std::stoul(svgfig_attr(tag, "data-rows"));
  c.cols = std::stoul(svgfig_attr(tag, "data-cols"));
  c.row_bin = std::stoul(svgfig_attr(tag, "data-rows-per-cell"));
  c.col_bin = std::stoul(svgfig_attr(tag, "data-cols-per-cell"));
  const std::size_t end = svg.find("</g>", g);
  for (std::size_t p = svg.find("<rect", g); p < end; p = svg.find("<rect", p + 1))
    c.rects.push_back(svg.substr(p, svg.find("/>", p) - p));
  return c;
}

/// The fill of the cell that holds data row r, column k.
std::string svgfig_fill_at(const svgfig_cells& c, std::size_t r, std::size_t k) {
  const double px = c.x + (static_cast<double>(k / c.col_bin) + 0.5) * c.w;
  const double py = c.y + (static_cast<double>(r / c.row_bin) + 0.5) * c.h;
  for (const auto& t : c.rects) {
    const double x = std::stod(svgfig_attr(t, "x")), y = std::stod(svgfig_attr(t, "y"));
    const double w = std::stod(svgfig_attr(t, "width")), h = std::stod(svgfig_attr(t, "height"));
    if (px >= x && px < x + w && py >= y && py < y + h) return svgfig_attr(t, "fill");
  }
  return "";
}

/// Where a fill sits on the viridis scale (0..1), by the nearest of 1001 samples.
double svgfig_scale_position(const std::string& fill) {
  REQUIRE(fill.size() == 7);
  const int r = std::stoi(fill.substr(1, 2), nullptr, 16), g = std::stoi(fill.substr(3, 2), nullptr, 16),
            b = std::stoi(fill.substr(5, 2), nullptr, 16);
  double best = 1e9, at = -1;
  for (int i = 0; i <= 1000; ++i) {
    const auto c = io::detail::viridis(i / 1000.0);
    const double d = std::pow(c.r - r, 2) + std::pow(c.g - g, 2) + std::pow(c.b - b, 2);
    if (d < best) best = d, at = i / 1000.0;
  }
  return at;
}

}  // namespace

TEST_CASE("viridis: matplotlib's colours at 0, 1/4, 1/2, 3/4 and 1", "[io][svg]") {
  // matplotlib.cm.viridis(x) for x = 0, 0.25, 0.5, 0.75, 1 (entries 0, 64, 128, 191.25, 255).
  CHECK(io::detail::hex(io::detail::viridis(0)) == "#440154");
  CHECK(io::detail::hex(io::detail::viridis(64 / 255.0)) == "#3b528b");
  CHECK(io::detail::hex(io::detail::viridis(128 / 255.0)) == "#21918c");
  CHECK(io::detail::hex(io::detail::viridis(192 / 255.0)) == "#5ec962");
  CHECK(io::detail::hex(io::detail::viridis(1)) == "#fde725");
  CHECK(io::detail::hex(io::detail::viridis(-3)) == "#440154");  // clamped
  // Lightness rises monotonically (sum of channels as a proxy): readable in grey.
  double prev = -1;
  for (int i = 0; i <= 64; ++i) {
    const auto c = io::detail::viridis(i / 64.0);
    const double l = 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b;
    CHECK(l > prev);
    prev = l;
  }
}

TEST_CASE("svg heatmap: the straggler's row is the top colour, at every size, aggregated by max", "[io][svg]") {
  std::mt19937_64 rng(GENERATE(1u, 2u));
  for (std::size_t ranks : {8u, 64u, 1000u, 16384u}) {
    const std::size_t steps = ranks > 1000 ? 30 : 12;
    const int culprit = static_cast<int>(rng() % ranks);
    const std::size_t onset = steps / 3;
    std::normal_distribution<double> noise(0, 0.2e6);
    std::vector<double> v(ranks * steps);
    for (std::size_t r = 0; r < ranks; ++r)
      for (std::size_t k = 0; k < steps; ++k)
        v[r * steps + k] = 30e6 + noise(rng) + (static_cast<int>(r) == culprit && k >= onset ? 15e6 : 0);
    io::heatmap_options o;
    o.title = "backward compute per step";
    o.value_name = "backward compute";
    for (std::size_t k = 0; k < steps; ++k) o.col_labels.push_back(100 + static_cast<std::int64_t>(k));
    o.marked_rows = {culprit};
    o.row_separators = {ranks / 2};
    const std::string svg = io::heatmap_svg(v, ranks, steps, o);
    INFO("ranks " << ranks << ", culprit " << culprit);
    REQUIRE(svgfig_xml_error(svg).empty());
    CHECK(svg == io::heatmap_svg(v, ranks, steps, o));  // deterministic
    const auto cells = svgfig_read_cells(svg, "heatmap-cells");
    CHECK(cells.rows == ranks);
    CHECK(cells.rows / cells.row_bin <= 512);
    CHECK(cells.h * static_cast<double>((ranks + cells.row_bin - 1) / cells.row_bin) <= 512);
    // The culprit's cells after the onset hold the largest values: the top of the scale.
    CHECK(svgfig_scale_position(svgfig_fill_at(cells, static_cast<std::size_t>(culprit), steps - 1)) > 0.9);
    CHECK(svgfig_scale_position(svgfig_fill_at(cells, static_cast<std::size_t>(culprit), onset)) > 0.9);
    CHECK(svgfig_scale_position(svgfig_fill_at(cells, static_cast<std::size_t>(culprit), 0)) < 0.3);
    // Another bin's row stays in the lower part of the scale (healthy: 30 +- 0.6 ms of 30-45 ms).
    const std::size_t other = (static_cast<std::size_t>(culprit) + ranks / 2) % ranks;
    CHECK(svgfig_scale_position(svgfig_fill_at(cells, other, steps - 1)) < 0.3);
    CHECK(svg.find("rank " + std::to_string(culprit) + "</text>") != std::string::npos);
    if (ranks > 512)
      CHECK(svg.find("each row is " + std::to_string(cells.row_bin) + " ranks (" + io::detail::grouped(ranks) +
                     " in ") != std::string::npos);
    else
      CHECK(svg.find("Aggregated") == std::string::npos);
    CHECK(svg.find(">ms</text>") != std::string::npos);  // the colour bar's unit
  }
}

TEST_CASE("svg heatmap: columns beyond the width are aggregated, and missing data is grey", "[io][svg]") {
  const std::size_t ranks = 4, steps = 1000;
  std::vector<double> v(ranks * steps, 1e6);
  v[2 * steps + 777] = 5e6;  // one slow step of rank 2
  for (std::size_t k : {9u, 10u, 11u, 20u}) v[3 * steps + k] = std::numeric_limits<double>::quiet_NaN();
  const std::string svg = io::heatmap_svg(v, ranks, steps);
  REQUIRE(svgfig_xml_error(svg).empty());
  const auto cells = svgfig_read_cells(svg, "heatmap-cells");
  CHECK(cells.col_bin == 3);  // 1000 steps in 360 columns at most
  CHECK(svgfig_fill_at(cells, 2, 777) == "#fde725");
  CHECK(svgfig_fill_at(cells, 2, 778) == "#fde725");  // same bin (777 / 3 = 778 / 3)
  CHECK(svgfig_fill_at(cells, 2, 0) == "#440154");
  CHECK(svgfig_fill_at(cells, 3, 10) == std::string(io::detail::no_data_fill));  // bin 3: steps 9-11, none
  CHECK(svgfig_fill_at(cells, 3, 20) == "#440154");                              // bin 6: steps 18-20, two with data
  CHECK(svg.find("each column is 3 steps (1,000 in 334 columns)") != std::string::npos);
  CHECK(svg.find("Grey: no data.") != std::string::npos);
  CHECK(io::heatmap_svg(std::vector<double>(6, 1.0), 2, 3).find("no data") == std::string::npos);
}

TEST_CASE("svg figures escape their text and reject bad shapes", "[io][svg]") {
  io::heatmap_options o;
  o.title = "<script>alert('x')</script> & \"quotes\" \x01 bad \xff byte, caf\xc3\xa9";
  o.value_name = "a<b";
  const std::string svg = io::heatmap_svg({1, 2, 3, 4}, 2, 2, o);
  REQUIRE(svgfig_xml_error(svg).empty());
  CHECK(svg.find("<script") == std::string::npos);
  CHECK(
      svg.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;quotes&quot; ? bad ? byte, caf\xc3\xa9") !=
      std::string::npos);
  CHECK_THROWS_AS(io::heatmap_svg({1, 2, 3}, 2, 2), invalid_argument);
  CHECK_THROWS_AS(io::heatmap_svg({}, 0, 0), invalid_argument);
  io::heatmap_options bad;
  bad.col_labels = {1};
  CHECK_THROWS_AS(io::heatmap_svg({1, 2, 3, 4}, 2, 2, bad), invalid_argument);
  io::w1_matrix_options wo;
  wo.labels = {0, 1};
  CHECK_THROWS_AS(io::w1_matrix_svg(Eigen::MatrixXd::Zero(2, 3), wo), invalid_argument);
  wo.labels = {0};
  CHECK_THROWS_AS(io::w1_matrix_svg(Eigen::MatrixXd::Zero(2, 2), wo), invalid_argument);
  wo.labels = {0, 1};
  wo.group_starts = {2};
  CHECK_THROWS_AS(io::w1_matrix_svg(Eigen::MatrixXd::Zero(2, 2), wo), invalid_argument);
  io::iteration_series s;
  s.steps = {1, 2};
  s.median_ns = {1};
  CHECK_THROWS_AS(io::iteration_series_svg(s), invalid_argument);
}

TEST_CASE("svg W1 matrix: a degraded rank is a bright cross, group boundaries and names drawn", "[io][svg]") {
  // Two groups of 8 ranks; rank 5's distribution is shifted by 40 us, the others by < 2 us:
  // W1 of two shifted copies is the shift.
  const std::size_t n = 16;
  std::vector<double> shift(n);
  for (std::size_t i = 0; i < n; ++i) shift[i] = 1e3 * static_cast<double>(i % 3);
  shift[5] = 40e3;
  Eigen::MatrixXd d(n, n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      d(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) = std::fabs(shift[i] - shift[j]);
  io::w1_matrix_options o;
  o.title = "W1 between ranks: gemm";
  for (std::size_t i = 0; i < n; ++i) o.labels.push_back(static_cast<int>(2 * i));
  o.group_starts = {8};
  o.group_names = {"dp:0", "dp:1"};
  o.marked = {5};
  const std::string svg = io::w1_matrix_svg(d, o);
  REQUIRE(svgfig_xml_error(svg).empty());
  failslow::dense_array<double, 2> table({n, n});  // the library's own type: the same bytes
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) table(i, j) = d(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j));
  CHECK(io::w1_matrix_svg(table, o) == svg);
  const auto cells = svgfig_read_cells(svg, "w1-cells");
  CHECK(svgfig_fill_at(cells, 5, 12) == "#fde725");  // 40 - 0 us: the largest distance
  CHECK(svgfig_fill_at(cells, 12, 5) == "#fde725");
  CHECK(svgfig_fill_at(cells, 5, 5) == "#440154");                   // the diagonal
  CHECK(svgfig_scale_position(svgfig_fill_at(cells, 1, 2)) < 0.06);  // 1 us of 40
  CHECK(svg.find(">dp:0</text>") != std::string::npos);
  CHECK(svg.find(">dp:1</text>") != std::string::npos);
  CHECK(svg.find(">rank 10</text>") != std::string::npos);  // member 5 is rank 10
  CHECK(svg.find(">us</text>") != std::string::npos);
  CHECK(svg.find("stroke=\"#ffffff\" stroke-width=\"2\"") != std::string::npos);  // the boundary
}

TEST_CASE("svg series: slow windows shaded and labelled, the line breaks at missing steps", "[io][svg]") {
  io::iteration_series s;
  for (int k = 0; k < 40; ++k) {
    s.steps.push_back(100 + k);
    const double y = k >= 20 ? 114e6 : 105e6;
    s.median_ns.push_back(k == 7 ? std::numeric_limits<double>::quiet_NaN() : y);
    s.min_ns.push_back(y - 1e6);
    s.max_ns.push_back(y + 1e6);
  }
  io::series_options o;
  o.windows = {{120, 139, "shift 1.09x", true}, {121, 125, "rank 7: drift 1.20x", false}};
  o.baseline_ns = 105e6;
  const std::string svg = io::iteration_series_svg(s, o);
  REQUIRE(svgfig_xml_error(svg).empty());
  CHECK(svg.find("fill=\"#fdb863\"") != std::string::npos);
  CHECK(svg.find("fill=\"#fee0b6\"") != std::string::npos);
  CHECK(svg.find(">shift 1.09x</text>") != std::string::npos);
  CHECK(svg.find("(1) rank 7: drift 1.20x") != std::string::npos);  // overlapping label listed below
  std::size_t lines = 0;
  for (std::size_t p = svg.find("<polyline"); p != std::string::npos; p = svg.find("<polyline", p + 1)) ++lines;
  CHECK(lines == 2);  // steps 100-106 and 108-139
  CHECK(svg.find("stroke-dasharray") != std::string::npos);
}

TEST_CASE("diagnosis figures and the HTML page of a simulated straggler", "[io][svg][html]") {
  const std::uint64_t seed = GENERATE(3u, 8u);
  sim::job_config cfg;
  cfg.sizes = parse_parallel_sizes("tp=2,pp=2,dp=4");
  cfg.seed = seed;
  cfg.steps = 12;
  sim::scenario_options so;
  so.onset = 4;
  auto tj = failslow_test::simulate_traces(cfg, sim::scenario::compute_straggler, so);
  diagnose::model_options mo;
  mo.keep_windows = true;
  const auto m = diagnose::build_job_model(tj.set, mo);
  auto rep = diagnose::diagnose(m, tj.job.topo);
  REQUIRE(!tj.job.truth.faults.empty());
  const int culprit = tj.job.truth.faults.front().ranks.front();
  INFO("seed " << seed << ", culprit " << culprit);

  const auto figs = io::diagnosis_figures(m, tj.job.topo, rep);
  std::map<std::string, const io::figure*> by_file;
  for (const auto& f : figs) {
    INFO(f.file);
    CHECK(svgfig_xml_error(f.svg).empty());
    CHECK(by_file.emplace(f.file, &f).second);  // unique names
    for (char ch : f.file) CHECK((std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.'));
    for (std::size_t i : f.findings) CHECK(i < rep.findings.size());
  }
  REQUIRE(by_file.count("iteration_series.svg"));
  REQUIRE(by_file.count("heatmap_iteration.svg"));
  CHECK(by_file["iteration_series.svg"]->overview);
  // The straggler's phase heatmap: the culprit's row over the claim is brighter than every
  // other rank's.
  const finding* st = nullptr;
  for (const auto& f : rep.findings)
    if (f.kind == "straggler") st = &f;
  REQUIRE(st != nullptr);
  CHECK(st->ranks.front() == culprit);
  const auto* hm = by_file.count("heatmap_" + io::detail::file_stem(st->phase) + ".svg")
                       ? by_file["heatmap_" + io::detail::file_stem(st->phase) + ".svg"]
                       : nullptr;
  REQUIRE(hm != nullptr);
  const auto cells = svgfig_read_cells(hm->svg, "heatmap-cells");
  const auto last = m.step_count() - 1;
  const double mine = svgfig_scale_position(svgfig_fill_at(cells, static_cast<std::size_t>(culprit), last));
  CHECK(mine > 0.9);
  for (int r = 0; r < m.world_size; ++r)
    if (r != culprit)
      CHECK(svgfig_scale_position(svgfig_fill_at(cells, static_cast<std::size_t>(r), last)) < mine - 0.3);
  // A W1 matrix of a finding on the culprit marks it.
  for (const auto& f : figs)
    if (f.kind == "w1_matrix" && rep.findings[f.findings.front()].ranks == std::vector<int>{culprit})
      CHECK(f.svg.find(">rank " + std::to_string(culprit) + "</text>") != std::string::npos);

  // The report refers to the files; JSON and text name them.
  io::refer_to_figures(rep, figs, "figs");
  REQUIRE(rep.files.size() == figs.size());
  const std::string json = io::report_to_json(rep);
  CHECK(json.find("\"files\": [") != std::string::npos);
  CHECK(json.find("\"path\": \"figs/heatmap_iteration.svg\"") != std::string::npos);
  CHECK(io::report_to_text(rep).find("\nFiles\n  - figs/iteration_series.svg: ") != std::string::npos);

  // The page: verdict first, then the findings, every figure inline once, nothing external.
  const std::string page = io::report_to_html(rep, figs);
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  const std::size_t verdict = page.find("id=\"verdict\""), findings = page.find("id=\"findings\"");
  REQUIRE(verdict != std::string::npos);
  CHECK(verdict < findings);
  CHECK(page.find(io::detail::xml_escaped(st->summary)) < findings);  // in the verdict
  for (const auto& f : figs) CHECK(page.find(f.svg) != std::string::npos);
  std::size_t previous = 0;  // figures numbered in the order the page shows them
  for (std::size_t n = 1; n <= figs.size(); ++n) {
    const std::size_t at = page.find("<figure id=\"fig-" + std::to_string(n) + "\"");
    REQUIRE(at != std::string::npos);
    CHECK(at > previous);
    previous = at;
  }
  CHECK(page.find("<script") == std::string::npos);
  CHECK(page.find("src=") == std::string::npos);
  CHECK(page.find("href=\"http") == std::string::npos);
  CHECK(page.find("@import") == std::string::npos);
  CHECK(page == io::report_to_html(rep, figs));
}

TEST_CASE("HTML report: text escaped, no findings says so", "[io][html]") {
  report r;
  r.world_size = 8;
  r.first_step = 1;
  r.last_step = 5;
  r.notes.push_back("<b>not bold</b> & 'quoted'");
  const std::string page = io::report_to_html(r, {});
  CHECK(page.find("No fail-slow problem found in steps 1-5 of 8 ranks.") != std::string::npos);
  CHECK(page.find("&lt;b&gt;not bold&lt;/b&gt; &amp; &#39;quoted&#39;") != std::string::npos);
  CHECK(page.find("<b>") == std::string::npos);
  CHECK(page.find("id=\"findings\"") == std::string::npos);
}
