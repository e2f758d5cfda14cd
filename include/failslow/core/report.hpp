// failslow/core/report.hpp -- the diagnosis report as plain data: findings with their evidence.
//
// Synopsis
//   struct report: what a diagnosis found in a job, schema "failslow.report/1" (docs/report.md):
//     world_size, steps {first, last} (ProfilerStep numbers), topology {tp, pp, dp, cp, ep,
//     order} and where it came from, findings, notes (what could not be diagnosed, why), and
//     the files written beside it (figures: report_file, the findings each one shows).
//   struct finding: level (L1..L4), kind (slow_window, straggler, degraded_kernel, ...), the
//     ranks it names (empty: job-wide), optionally a group ("dp:3", "stage:1"), a phase and a
//     kernel, the step range, a score (documented per kind), the evidence (named numbers,
//     texts and step lists) and one sentence for people.
//   verdict_of(report): the findings a verdict names (L2 and up) and the first L1 window.
//   severity_order(a, b): findings sort by job impact (evidence "job_slowdown", the fraction of
//     iteration time the job lost over the finding's steps), then the more specific level first
//     (L4 > L3 > L2 > L1), then score.
//   The writers (io/report_json.hpp, io/report_text.hpp), the scorer (sim/score.hpp) and the
//   bindings read this type; none of them includes the diagnosis engine.
// Complexity: plain data; evidence lookups O(items).
// Errors: none.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace failslow {

/// One named item of a finding's evidence: a number, a text or a list of numbers.
struct evidence_item {
  enum class type : std::uint8_t { number, text, numbers };
  /// Number of type values (they are 0 .. type_count - 1).
  static constexpr std::size_t type_count = 3;
  std::string name;
  type what = type::number;
  double number = 0;
  std::string text;
  std::vector<double> numbers;
};

/// The numbers behind a claim, in the order they were added.
class evidence {
 public:
  evidence& add(std::string name, double v) {
    evidence_item e;
    e.name = std::move(name);
    e.number = v;
    items_.push_back(std::move(e));
    return *this;
  }
  evidence& add(std::string name, std::string text) {
    evidence_item e;
    e.name = std::move(name);
    e.what = evidence_item::type::text;
    e.text = std::move(text);
    items_.push_back(std::move(e));
    return *this;
  }
  evidence& add(std::string name, std::vector<double> v) {
    evidence_item e;
    e.name = std::move(name);
    e.what = evidence_item::type::numbers;
    e.numbers = std::move(v);
    items_.push_back(std::move(e));
    return *this;
  }
  const evidence_item* find(std::string_view name) const noexcept {
    for (const auto& e : items_)
      if (e.name == name) return &e;
    return nullptr;
  }
  /// The number named `name`, or `fallback` when there is none.
  double number(std::string_view name, double fallback = 0) const noexcept {
    const auto* e = find(name);
    return e && e->what == evidence_item::type::number ? e->number : fallback;
  }
  const std::vector<evidence_item>& items() const noexcept { return items_; }
  bool empty() const noexcept { return items_.empty(); }

 private:
  std::vector<evidence_item> items_;
};

struct finding {
  std::string level;       ///< "L1" .. "L4"
  std::string kind;        ///< slow_window, straggler, degraded_kernel, degraded_link, slow_stage, host_stall, ...
  std::vector<int> ranks;  ///< empty for job-wide findings
  std::string group;       ///< "dp:3", "stage:1"; empty when none
  std::string phase;       ///< empty when none
  std::string kernel;      ///< empty when none
  std::int64_t first_step = 0;
  std::int64_t last_step = 0;
  double score = 0;  ///< effect size or test statistic, documented per kind
  failslow::evidence evidence;
  std::string summary;  ///< one sentence a person reads
};

/// A file written beside the report (a figure, a trace) and the findings it shows.
struct report_file {
  std::string kind;                   ///< "heatmap", "w1_matrix", "iteration_series", "html", ...
  std::string path;                   ///< as the writer was given it
  std::string title;                  ///< what it shows, for people
  std::vector<std::size_t> findings;  ///< indices into report::findings
};

/// The layout the diagnosis assumed, and where it came from.
struct report_topology {
  int tp = 1, pp = 1, dp = 1, cp = 1, ep = 1;
  std::string order = "tp-cp-ep-dp-pp";
  std::string source;  ///< "flags", "pg_config", "data-parallel (assumed: ...)"
};

struct report {
  static constexpr std::string_view schema = "failslow.report/1";
  int world_size = 0;  ///< 0 = not stated
  std::int64_t first_step = 0;
  std::int64_t last_step = 0;
  report_topology topology;
  std::vector<finding> findings;
  std::vector<std::string> notes;  ///< what was not diagnosed and why, missing ranks, skipped input
  std::vector<report_file> files;  ///< files written with the report (figures); empty: none
};

/// The rank of a level string ("L1" -> 1), 0 for anything else.
inline int level_number(std::string_view level) noexcept {
  return level.size() == 2 && level[0] == 'L' && level[1] >= '1' && level[1] <= '9' ? level[1] - '0' : 0;
}

/// What a verdict names: the findings that blame a rank, kernel, link or stage (L2 and up), in
/// report order, and the first job-wide L1 window, said when nothing is blamed.
struct verdict_findings {
  std::vector<const finding*> blamed;
  const finding* worst_window = nullptr;
};

inline verdict_findings verdict_of(const report& r) {
  verdict_findings v;
  for (const auto& f : r.findings) {
    if (level_number(f.level) >= 2)
      v.blamed.push_back(&f);
    else if (!v.worst_window)
      v.worst_window = &f;
  }
  return v;
}

/// Strict weak order: the more severe finding first (see the synopsis).
inline bool severity_order(const finding& a, const finding& b) noexcept {
  // NaN (not measured) counts as 0 so that the order stays a strict weak order.
  auto impact = [](const finding& f) {
    const double v = f.evidence.number("job_slowdown");
    return v == v ? v : 0.0;
  };
  const double ia = impact(a), ib = impact(b);
  if (ia != ib) return ia > ib;
  const int la = level_number(a.level), lb = level_number(b.level);
  if (la != lb) return la > lb;
  const double sa = a.score == a.score ? a.score : 0.0, sb = b.score == b.score ? b.score : 0.0;
  return sa > sb;
}

/// Sorts findings most severe first (stable: equal findings keep their order).
inline void sort_by_severity(std::vector<finding>& findings) {
  std::stable_sort(findings.begin(), findings.end(), severity_order);
}

}  // namespace failslow
