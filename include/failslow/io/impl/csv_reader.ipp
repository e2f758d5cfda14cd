// failslow/io/impl/csv_reader.ipp -- the definitions of io/csv_reader.hpp: included by that header
// (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/core/event.hpp"
#include "failslow/core/kernel_class.hpp"
#include "failslow/core/name_table.hpp"
#include "failslow/io/csv_reader.hpp"
#include "failslow/io/detail/decimal.hpp"
#include "failslow/io/detail/file_bytes.hpp"
#include "failslow/io/trace_data.hpp"

namespace failslow::io {

FAILSLOW_FUNC_DEF bool parse_event_kind(std::string_view s, event_kind& out) noexcept {
  for (std::size_t k = 0; k < event_kind_count; ++k)
    if (to_string(static_cast<event_kind>(k)) == s) {
      out = static_cast<event_kind>(k);
      return true;
    }
  return false;
}

namespace detail {

class table_parser {
 public:
  table_parser(std::string_view text, std::string source, char delimiter)
      : text_(text), source_(std::move(source)), delim_(delimiter) {}

  /// Next data line's fields (false at the end); skips comments and empty lines.
  bool next_row(std::vector<std::string>& fields) {
    for (;;) {
      if (pos_ >= text_.size()) return false;
      ++line_;
      line_begin_ = pos_;
      if (text_[pos_] == '#' || text_[pos_] == '\n' || (text_[pos_] == '\r' && peek_newline(pos_ + 1))) {
        skip_line();
        continue;
      }
      if (delim_ == 0) detect_delimiter();
      split(fields);
      return true;
    }
  }

  [[noreturn]] void fail_field(std::size_t field, const std::string& expected) const {
    const std::size_t off = field < field_offsets_.size() ? field_offsets_[field] : line_begin_;
    throw parse_error(source_location{source_, line_, off - line_begin_ + 1, off}, expected);
  }
  [[noreturn]] void fail_line(const std::string& expected) const {
    throw parse_error(source_location{source_, line_, 1, line_begin_}, expected);
  }
  std::uint64_t line() const noexcept { return line_; }

 private:
  bool peek_newline(std::size_t i) const noexcept { return i >= text_.size() || text_[i] == '\n'; }
  void skip_line() {
    const auto nl = text_.find('\n', pos_);
    pos_ = nl == std::string_view::npos ? text_.size() : nl + 1;
  }
  void detect_delimiter() {
    const auto nl = text_.find('\n', pos_);
    const auto header = text_.substr(pos_, nl == std::string_view::npos ? std::string_view::npos : nl - pos_);
    delim_ = header.find('\t') != std::string_view::npos ? '\t' : ',';
  }

  void split(std::vector<std::string>& fields) {
    fields.clear();
    field_offsets_.clear();
    const bool quoting = delim_ == ',';
    std::string cur;
    for (;;) {
      field_offsets_.push_back(pos_);
      cur.clear();
      if (quoting && pos_ < text_.size() && text_[pos_] == '"') {
        const std::size_t open = pos_++;
        const std::uint64_t open_line = line_;
        for (;;) {
          if (pos_ >= text_.size())
            throw parse_error(source_location{source_, open_line, open - line_begin_ + 1, open},
                              "a closing '\"' for the quoted field");
          const char c = text_[pos_++];
          if (c == '"') {
            if (pos_ < text_.size() && text_[pos_] == '"') {
              cur += '"';
              ++pos_;
              continue;
            }
            break;
          }
          if (c == '\n') ++line_;
          cur += c;
        }
        if (pos_ < text_.size() && text_[pos_] != delim_ && text_[pos_] != '\n' && text_[pos_] != '\r')
          throw parse_error(source_location{source_, line_, pos_ - line_begin_ + 1, pos_},
                            "a delimiter or the end of the line after a quoted field");
      } else {
        while (pos_ < text_.size() && text_[pos_] != delim_ && text_[pos_] != '\n') cur += text_[pos_++];
        if (!cur.empty() && cur.back() == '\r' && (pos_ >= text_.size() || text_[pos_] == '\n')) cur.pop_back();
      }
      if (pos_ < text_.size() && text_[pos_] == '\r') ++pos_;
      fields.push_back(cur);
      if (pos_ >= text_.size()) return;
      if (text_[pos_] == '\n') {
        ++pos_;
        return;
      }
      ++pos_;  // the delimiter
    }
  }

  std::string_view text_;
  std::string source_;
  char delim_;
  std::size_t pos_ = 0, line_begin_ = 0;
  std::uint64_t line_ = 0;
  std::vector<std::size_t> field_offsets_;
};

}  // namespace detail

FAILSLOW_FUNC_DEF std::vector<trace_data> read_kernel_table(std::string_view text, name_table& names,
                                                            const kernel_table_options& options,
                                                            const std::string& source) {
  static const kernel_classifier default_classifier = kernel_classifier::defaults();
  const kernel_classifier& classifier = options.classifier ? *options.classifier : default_classifier;
  detail::table_parser p(text, source, options.delimiter);
  std::vector<std::string> fields;
  if (!p.next_row(fields))  // nothing but comments or empty lines: no table at all
    throw parse_error(source_location{source, 0, 0, text.size()},
                      "a header line naming the columns (rank, step, name, start_ns, duration_ns); the table is empty");
  enum col { rank, step, name, start, duration, stream, kind, device, correlation };
  constexpr std::size_t col_count = 9;
  const char* col_names[] = {"rank",   "step", "name",   "start_ns",   "duration_ns",
                             "stream", "kind", "device", "correlation"};
  static_assert(std::size(col_names) == col_count, "one name per column");
  long index[col_count];
  std::fill(std::begin(index), std::end(index), -1L);
  for (std::size_t i = 0; i < fields.size(); ++i)
    for (std::size_t c = 0; c < col_count; ++c)
      if (fields[i] == col_names[c]) index[c] = static_cast<long>(i);
  for (int c = 0; c <= duration; ++c)
    if (index[c] < 0) p.fail_line(std::string("a header with a '") + col_names[c] + "' column");
  const std::size_t width = fields.size();

  std::map<std::int32_t, trace_data> by_rank;
  auto integer = [&](std::size_t f, std::int64_t lo, std::int64_t hi, const char* what) {
    const auto r = detail::parse_scaled(fields[f], 0);
    if (r.status == detail::number_status::out_of_range ||
        (r.status == detail::number_status::ok && r.exact && (r.value < lo || r.value > hi)))
      p.fail_field(f, std::string(what) + " in range");
    if (r.status != detail::number_status::ok || !r.exact) p.fail_field(f, std::string("an integer ") + what);
    return r.value;
  };
  while (p.next_row(fields)) {
    if (fields.size() != width)
      p.fail_line("a row of " + std::to_string(width) + " fields (found " + std::to_string(fields.size()) + ")");
    event e;
    const auto r = static_cast<std::int32_t>(
        integer(static_cast<std::size_t>(index[rank]), 0, std::numeric_limits<std::int32_t>::max(), "rank"));
    std::int64_t st = -1;
    if (!fields[static_cast<std::size_t>(index[step])].empty())
      st = integer(static_cast<std::size_t>(index[step]), -1, std::numeric_limits<std::int64_t>::max(), "step");
    e.start_ns =
        integer(static_cast<std::size_t>(index[start]), 0, std::numeric_limits<std::int64_t>::max(), "start_ns");
    const auto dur =
        integer(static_cast<std::size_t>(index[duration]), 0, std::numeric_limits<std::int64_t>::max(), "duration_ns");
    if (e.start_ns > std::numeric_limits<std::int64_t>::max() - dur)
      p.fail_field(static_cast<std::size_t>(index[duration]), "start_ns + duration_ns that fits int64");
    e.end_ns = e.start_ns + dur;
    const std::string& nm = fields[static_cast<std::size_t>(index[name])];
    e.name = names.intern(nm);
    e.kind = classifier.device_kind(nm);
    if (index[kind] >= 0 && !fields[static_cast<std::size_t>(index[kind])].empty() &&
        !parse_event_kind(fields[static_cast<std::size_t>(index[kind])], e.kind))
      p.fail_field(static_cast<std::size_t>(index[kind]),
                   "a kind: kernel, memcpy, memset, collective, annotation, cpu_op or runtime");
    if (index[stream] >= 0 && !fields[static_cast<std::size_t>(index[stream])].empty())
      e.stream = static_cast<std::uint32_t>(
          integer(static_cast<std::size_t>(index[stream]), 0, std::numeric_limits<std::uint32_t>::max(), "stream"));
    e.device = is_device_activity(e.kind) ? 0 : -1;
    if (index[device] >= 0 && !fields[static_cast<std::size_t>(index[device])].empty())
      e.device = static_cast<std::int16_t>(
          integer(static_cast<std::size_t>(index[device]), -1, std::numeric_limits<std::int16_t>::max(), "device"));
    if (index[correlation] >= 0 && !fields[static_cast<std::size_t>(index[correlation])].empty())
      e.correlation = static_cast<std::uint32_t>(integer(static_cast<std::size_t>(index[correlation]), 0,
                                                         std::numeric_limits<std::uint32_t>::max(), "correlation"));
    e.rank = r;
    auto& t = by_rank[r];
    if (t.events.empty()) {
      t.source = source;
      t.distributed = distributed_info{};
      t.distributed->rank = r;
    }
    t.events.push_back(e);
    t.event_steps.push_back(st);
    ++t.stats.events_seen;
    ++t.stats.stored;
  }
  std::vector<trace_data> out;
  for (auto& [r, t] : by_rank) out.push_back(std::move(t));
  return out;
}

FAILSLOW_FUNC_DEF std::vector<trace_data> read_kernel_table_file(const std::string& path, name_table& names,
                                                                 const kernel_table_options& options) {
  const auto bytes = detail::file_bytes::open(path);
  kernel_table_options o = options;
  const auto ends_with = [&path](std::string_view end) {
    return path.size() >= end.size() && path.compare(path.size() - end.size(), end.size(), end) == 0;
  };
  if (o.delimiter == 0 && (ends_with(".tsv") || ends_with(".tsv.gz"))) o.delimiter = '\t';
  return read_kernel_table(bytes.view(), names, o, path);
}

}  // namespace failslow::io
