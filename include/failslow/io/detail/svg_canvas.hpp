// failslow/io/detail/svg_canvas.hpp -- what the SVG figures share: a document built as a string
// (numbers with at most two decimals, text escaped), the viridis colour map and its colour bar,
// "nice" axis ticks, duration units, and max-aggregation of a matrix into bins.
//
// Numbers are formatted in the "C" locale way whatever the global locale (std::to_chars), so
// the same figure gives the same bytes everywhere. Text is escaped for XML (& < > " ') and
// sanitised: control characters and bytes that are not UTF-8 become '?', so any kernel or phase
// name keeps the document well-formed.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "failslow/core/compile_mode.hpp"

namespace failslow::io::detail {

// ---- numbers and text ------------------------------------------------------------------------

/// x rounded to 0.01 without trailing zeros ("12", "12.5", "-0.25"); 0 for non-finite values.
FAILSLOW_FUNC void append_svg_number(std::string& out, double x);

inline std::string svg_number(double x) {
  std::string s;
  append_svg_number(s, x);
  return s;
}

/// Length of the UTF-8 sequence starting at s[i] (1-4), or 0 when it is not valid UTF-8.
FAILSLOW_FUNC std::size_t utf8_sequence(std::string_view s, std::size_t i) noexcept;

/// Appends s escaped for XML text and attribute values (see the file comment).
FAILSLOW_FUNC void append_xml_escaped(std::string& out, std::string_view s);

inline std::string xml_escaped(std::string_view s) {
  std::string out;
  append_xml_escaped(out, s);
  return out;
}

/// 64-bit FNV-1a of s in hex: ids that differ between figures inlined into one page.
FAILSLOW_FUNC std::string fnv1a_hex(std::string_view s);

/// "16,384": thousands separated, for figure text.
inline std::string grouped(std::size_t n) {
  std::string s = std::to_string(n);
  for (std::size_t i = s.size(); i > 3; i -= 3) s.insert(i - 3, 1, ',');
  return s;
}

inline std::string plural(std::size_t n, std::string_view one) {
  std::string s = grouped(n) + " " + std::string(one);
  if (n != 1) s += 's';
  return s;
}

// ---- colours ---------------------------------------------------------------------------------

struct rgb {
  std::uint8_t r = 0, g = 0, b = 0;
};

FAILSLOW_FUNC std::string hex(rgb c);

// matplotlib's viridis (van der Walt and Smith, CC0), every 8th of its 256 entries and the last,
// as 8-bit sRGB: perceptually uniform, readable in grey and with the common colour-vision
// deficiencies.
inline constexpr std::array<std::uint32_t, 33> viridis_table = {
    0x440154, 0x470d60, 0x48186a, 0x482374, 0x472d7b, 0x453781, 0x424086, 0x3e4989, 0x3b528b, 0x375b8d, 0x33638d,
    0x2f6b8e, 0x2c728e, 0x297a8e, 0x26828e, 0x23898e, 0x21918c, 0x1f988b, 0x1fa088, 0x22a785, 0x28ae80, 0x32b67a,
    0x3fbc73, 0x4ec36b, 0x5ec962, 0x70cf57, 0x84d44b, 0x98d83e, 0xaddc30, 0xc2df23, 0xd8e219, 0xece51b, 0xfde725};

/// Where entry i of viridis_table sits on [0, 1]: matplotlib's entry min(8 i, 255) of 0..255.
constexpr double viridis_position(std::size_t i) noexcept { return static_cast<double>(i < 32 ? 8 * i : 255) / 255.0; }

/// viridis(t), t in [0, 1] (clamped), linear between the table's entries.
FAILSLOW_FUNC rgb viridis(double t);

/// Cells without a value.
inline constexpr std::string_view no_data_fill = "#d9d9d9";

// ---- axes ------------------------------------------------------------------------------------

/// Tick values at 1, 2 or 5 x 10^k covering [lo, hi] with at most `max_ticks` ticks (at least
/// one). integral: steps of at least 1.
FAILSLOW_FUNC std::vector<double> nice_ticks(double lo, double hi, std::size_t max_ticks, bool integral = false);

/// The unit a duration axis reads best in, from its largest value: {ns per unit, name}.
struct duration_unit {
  double ns = 1;
  std::string_view name = "ns";
};

FAILSLOW_FUNC duration_unit duration_unit_for(double max_ns);

/// A tick label: up to 3 significant digits, no trailing zeros ("45.7", "120", "0.05").
FAILSLOW_FUNC std::string tick_label(double v);

// ---- aggregation -----------------------------------------------------------------------------

/// Items per bin so that n items fit in `limit` bins (1 when they fit).
inline std::size_t bin_size(std::size_t n, std::size_t limit) {
  return limit == 0 || n <= limit ? 1 : (n + limit - 1) / limit;
}

/// The row-major rows x cols matrix v aggregated into bins of rb rows and cb columns by their
/// largest value (NaN ignored; a bin without values is NaN): a straggler stays visible.
FAILSLOW_FUNC std::vector<double> aggregate_max(const std::vector<double>& v, std::size_t rows, std::size_t cols,
                                                std::size_t rb, std::size_t cb);

// ---- the document ----------------------------------------------------------------------------

inline constexpr std::string_view svg_font = "DejaVu Sans, Verdana, Arial, sans-serif";

/// An SVG document appended to a string; coordinates in pixels.
class svg_canvas {
 public:
  FAILSLOW_FUNC svg_canvas(double width, double height, std::string_view title);

  FAILSLOW_FUNC void rect(double x, double y, double w, double h, std::string_view fill, std::string_view extra = {});

  FAILSLOW_FUNC void line(double x1, double y1, double x2, double y2, std::string_view stroke, double width = 1,
                          std::string_view extra = {});

  /// anchor: start, middle or end; extra: further attributes (font-weight, transform, ...).
  FAILSLOW_FUNC void text(double x, double y, std::string_view s, std::string_view anchor = "start", double size = 12,
                          std::string_view extra = {});

  /// Markup the caller built (attribute values escaped with xml_escaped).
  void raw(std::string_view s) { out_ += s; }

  std::string finish() {
    out_ += "</svg>\n";
    return std::move(out_);
  }

 private:
  void attrs(std::string_view extra) {
    if (extra.empty()) return;
    out_ += ' ';
    out_ += extra;
  }
  std::string out_;
};

/// A vertical colour bar at (x, y), h high, 14 wide, from lo (bottom) to hi (top) in `unit`
/// (values already in that unit), its ticks to the right and `label` above it.
FAILSLOW_FUNC void colour_bar(svg_canvas& c, double x, double y, double h, double lo, double hi, std::string_view label,
                              std::string_view id);

/// Where a matrix of cells sits: its top-left corner, cell size, and how many data rows and
/// columns one cell aggregates. Written as data-* attributes so a checker can find a row.
struct cell_layout {
  double x = 0, y = 0, cell_w = 1, cell_h = 1;
  std::size_t rows = 0, cols = 0;  ///< cells drawn
  std::size_t row_bin = 1, col_bin = 1;
  std::size_t data_rows = 0, data_cols = 0;
};

/// Draws the cells of a row-major rows x cols matrix (already aggregated) coloured by
/// viridis((v - lo) / (hi - lo)), NaN grey; runs of equal colour in a row become one rect. The
/// group carries class `css_class` and the layout as data-* attributes; a 1 px frame (#333333)
/// surrounds the cells.
FAILSLOW_FUNC void draw_cells(svg_canvas& c, const std::vector<double>& v, const cell_layout& l, double lo, double hi,
                              std::string_view css_class);

/// The smallest and largest finite value (NaN, NaN when there is none).
FAILSLOW_FUNC std::pair<double, double> finite_range(const std::vector<double>& v);

/// Approximate width in pixels of s at font size `size` (DejaVu Sans averages ~0.6 em).
FAILSLOW_FUNC double text_width(std::string_view s, double size = 12);

}  // namespace failslow::io::detail

#if FAILSLOW_HEADER_ONLY
#include "failslow/io/detail/impl/svg_canvas.ipp"
#endif
