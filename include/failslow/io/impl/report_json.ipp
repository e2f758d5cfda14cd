// failslow/io/impl/report_json.ipp -- the definitions of io/report_json.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "failslow/core/report.hpp"
#include "failslow/io/detail/json_writer.hpp"
#include "failslow/io/report_json.hpp"

namespace failslow::io {

namespace detail {

/// Appends JSON members and array elements with commas, line breaks and indentation.
class json_layout {
 public:
  json_layout(std::string& out, int indent) : out_(out), indent_(indent > 0 ? indent : 0) {}

  void begin(char bracket) {
    out_ += bracket;
    ++depth_;
    empty_ = true;
  }
  void end(char bracket) {
    --depth_;
    if (!empty_) newline();
    out_ += bracket;
    empty_ = false;
  }
  /// Starts the next element of the current array.
  void element() {
    if (!empty_) out_ += ',';
    newline();
    empty_ = false;
  }
  /// Starts the next member of the current object: its key, then the caller writes the value.
  void key(std::string_view name) {
    element();
    append_escaped(out_, name);
    out_ += indent_ > 0 ? ": " : ":";
  }
  template <class T>
  void numbers(const std::vector<T>& v) {
    out_ += '[';
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i) out_ += indent_ > 0 ? ", " : ",";
      append_number(out_, static_cast<double>(v[i]));
    }
    out_ += ']';
  }
  void string(std::string_view s) { append_escaped(out_, s); }
  void number(double x) { append_number(out_, x); }
  void integer(long long x) { out_ += std::to_string(x); }

 private:
  void newline() {
    if (indent_ == 0) return;
    out_ += '\n';
    out_.append(static_cast<std::size_t>(depth_) * static_cast<std::size_t>(indent_), ' ');
  }

  std::string& out_;
  int indent_;
  int depth_ = 0;
  bool empty_ = true;  ///< the open object or array has no member yet
};

}  // namespace detail

FAILSLOW_FUNC_DEF void write_report_json(const report& rep, std::string& out, int indent) {
  detail::json_layout j(out, indent);
  j.begin('{');
  j.key("schema");
  j.string(report::schema);
  j.key("world_size");
  j.integer(rep.world_size);
  j.key("steps");
  j.begin('{');
  j.key("first");
  j.integer(rep.first_step);
  j.key("last");
  j.integer(rep.last_step);
  j.end('}');

  const auto& t = rep.topology;
  j.key("topology");
  j.begin('{');
  j.key("tp");
  j.integer(t.tp);
  j.key("pp");
  j.integer(t.pp);
  j.key("dp");
  j.integer(t.dp);
  j.key("cp");
  j.integer(t.cp);
  j.key("ep");
  j.integer(t.ep);
  j.key("order");
  j.string(t.order);
  j.key("source");
  j.string(t.source);
  j.end('}');

  j.key("findings");
  j.begin('[');
  for (const auto& f : rep.findings) {
    j.element();
    j.begin('{');
    j.key("level");
    j.string(f.level);
    j.key("kind");
    j.string(f.kind);
    j.key("ranks");
    j.numbers(f.ranks);
    if (!f.group.empty()) {
      j.key("group");
      j.string(f.group);
    }
    if (!f.phase.empty()) {
      j.key("phase");
      j.string(f.phase);
    }
    if (!f.kernel.empty()) {
      j.key("kernel");
      j.string(f.kernel);
    }
    j.key("first_step");
    j.integer(f.first_step);
    j.key("last_step");
    j.integer(f.last_step);
    j.key("score");
    j.number(f.score);
    j.key("evidence");
    j.begin('{');
    for (const auto& e : f.evidence.items()) {
      j.key(e.name);
      switch (e.what) {
        case evidence_item::type::number:
          j.number(e.number);
          break;
        case evidence_item::type::text:
          j.string(e.text);
          break;
        case evidence_item::type::numbers:
          j.numbers(e.numbers);
          break;
      }
    }
    j.end('}');
    j.key("summary");
    j.string(f.summary);
    j.end('}');
  }
  j.end(']');

  j.key("notes");
  j.begin('[');
  for (const auto& n : rep.notes) {
    j.element();
    j.string(n);
  }
  j.end(']');

  if (!rep.files.empty()) {
    j.key("files");
    j.begin('[');
    for (const auto& f : rep.files) {
      j.element();
      j.begin('{');
      j.key("kind");
      j.string(f.kind);
      j.key("path");
      j.string(f.path);
      j.key("title");
      j.string(f.title);
      j.key("findings");
      j.numbers(f.findings);
      j.end('}');
    }
    j.end(']');
  }
  j.end('}');
}

}  // namespace failslow::io
