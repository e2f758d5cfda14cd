// failslow/io/detail/kineto_input.hpp -- the document a Kineto read walks: the padded pieces
// simdjson parses, their offsets in the file, the errors that name them, and the scalar reads
// every part of the reader shares (part of io/kineto_reader.hpp).
//
// Synopsis
//   raw_string_text(raw)       a key or string as written in the file (escapes kept)
//   field_key_text(raw, value) a field's key as written, found back from its value's first byte
//   kineto_input in(doc, source, options, parser, buffer)
//     load(a, b, c)            copies a + b + c into the padded buffer simdjson reads
//     iterate()                an on-demand document over it (the parser grown as needed)
//     enter_skeleton(at, gap), enter_chunk(begin)
//                              what the buffer holds now: the document with [at, at + gap) cut
//                              out (the contents of traceEvents), or "[" + the chunk of events
//                              at document offset begin + "]"; offsets map back to the file
//     fail_at, fail_code       parse_error at a buffer position, with the file's line/column
//     malformed_event(what)    true when options.strict_events (then it has thrown)
//     number(tok, scale, v)    a JSON number token as value * 10^scale (kineto_num)
//     block_int/block_string   strict fields of the top-level blocks
//     expect_array/expect_object, string_or_empty, check_skipped_scalar
//   Built only with simdjson (FAILSLOW_HAS_SIMDJSON); raw_string_text and field_key_text always.
// Complexity: load O(piece); fail_at O(offset) (counts lines); the rest O(token).
// Errors: parse_error (malformed JSON, a wrong type where the format requires one), std::bad_alloc
//   when simdjson cannot allocate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/io/detail/decimal.hpp"

#if defined(FAILSLOW_HAS_SIMDJSON)
#include <simdjson.h>

#include <new>
#endif

namespace failslow::io::detail {

/// Raw text of a key or string value as it appears in the file (escapes not processed).
inline std::string_view raw_string_text(const char* raw) noexcept {
  // Keys are short: a plain loop over the first 32 bytes (the text is a validated string, so
  // its closing quote comes before the end of the buffer), memchr beyond.
  for (std::size_t k = 0; k < 32; ++k) {
    if (raw[k] == '\\') break;
    if (raw[k] == '"') return std::string_view(raw, k);
  }
  const char* p = raw;
  for (;;) {
    const char* q = static_cast<const char*>(std::memchr(p, '"', 1 << 20));
    if (!q) return std::string_view(raw, 0);
    std::size_t backslashes = 0;
    while (q - backslashes > raw && q[-1 - static_cast<std::ptrdiff_t>(backslashes)] == '\\') ++backslashes;
    if (backslashes % 2 == 0) return std::string_view(raw, static_cast<std::size_t>(q - raw));
    p = q + 1;
  }
}

/// A field's key as written (escapes kept), from simdjson's raw key (the byte after its opening
/// quote) and the first byte of the field's value: in a buffer simdjson has iterated to that
/// value, only white space, the ':' and white space lie between the key's closing quote and the
/// value (anything else would have been a structural character of its own), so the closing
/// quote is found a few bytes back instead of by scanning the key.
inline std::string_view field_key_text(const char* raw, const char* value) noexcept {
  const char* q = value - 1;
  while (is_json_space(*q)) --q;  // now at the ':'
  --q;
  while (is_json_space(*q)) --q;  // now at the key's closing quote
  return std::string_view(raw, static_cast<std::size_t>(q - raw));
}

#if defined(FAILSLOW_HAS_SIMDJSON)

/// Outcome of reading a number token: a value, a token of another JSON type, or a number out of
/// int64 range (malformed numbers throw).
enum class kineto_num : std::uint8_t { ok, type, range };

/// The document of one read and its errors (see the synopsis above).
class kineto_input {
 public:
  /// `doc` and `options`' referents outlive the input; `parser` and `buffer` are reused.
  kineto_input(std::string_view doc, std::string source, std::size_t max_depth, std::size_t chunk_bytes,
               bool strict_events, simdjson::ondemand::parser& parser, std::vector<char>& buffer)
      : begin_(doc.data()),
        size_(doc.size()),
        source_(std::move(source)),
        max_depth_(max_depth),
        chunk_bytes_(chunk_bytes),
        strict_events_(strict_events),
        parser_(parser),
        buffer_(buffer) {}

  const char* begin() const noexcept { return begin_; }
  std::size_t size() const noexcept { return size_; }
  const std::string& source() const noexcept { return source_; }
  /// The first byte of what simdjson reads now.
  const char* loaded() const noexcept { return buf_; }

  // ---- the buffer simdjson reads -------------------------------------------------------------
  /// The buffer holds the document with [at, at + gap) cut out (at == 0: nothing cut).
  void enter_skeleton(std::size_t at, std::size_t gap) noexcept {
    chunk_ = false;
    gap_at_ = at;
    gap_ = gap;
  }
  /// The buffer holds "[" + the events at document offset `begin` + "]".
  void enter_chunk(std::size_t begin) noexcept {
    chunk_ = true;
    chunk_begin_ = begin;
  }

  /// Copies the pieces into the padded buffer simdjson reads.
  void load(std::string_view a, std::string_view b, std::string_view c = {}) {
    auto& buf = buffer_;
    const std::size_t n = a.size() + b.size() + c.size();
    if (buf.size() < n + simdjson::SIMDJSON_PADDING) buf.resize(n + simdjson::SIMDJSON_PADDING);
    char* p = buf.data();
    if (!a.empty()) std::memcpy(p, a.data(), a.size());
    if (!b.empty()) std::memcpy(p + a.size(), b.data(), b.size());
    if (!c.empty()) std::memcpy(p + a.size() + b.size(), c.data(), c.size());
    std::memset(p + n, 0, simdjson::SIMDJSON_PADDING);
    buf_ = p;
    buf_size_ = n;
    // Positions marked in the piece before point into bytes now overwritten (or freed): an
    // error without a position of its own falls back on the end of this piece, never on them.
    event_begin_ = last_ = nullptr;
  }

  simdjson::ondemand::document iterate() {
    auto& parser = parser_;
    if (parser.max_depth() != max_depth_ || parser.capacity() < buf_size_) {
      const std::size_t want = buf_size_ < chunk_bytes_ ? chunk_bytes_ : buf_size_;
      if (auto e = parser.allocate(want < 64 ? 64 : want + want / 8, max_depth_)) fail_code(e, nullptr, "memory");
    }
    simdjson::ondemand::document doc;
    if (auto e = parser.iterate(simdjson::padded_string_view(buf_, buf_size_, buffer_.size())).get(doc))
      fail_code(e, stage1_error_at(e, buf_, buf_size_), "a JSON document");
    return doc;
  }

  /// Where in [p, p + n) simdjson's stage 1 found what it reports without a position: the first
  /// byte of a sequence that is not UTF-8 (UTF8_ERROR), the first control character inside a
  /// string (UNESCAPED_CHARS); nullptr for other errors (or when not found). Error path only.
  static const char* stage1_error_at(simdjson::error_code e, const char* p, std::size_t n) noexcept {
    const auto* u = reinterpret_cast<const unsigned char*>(p);
    if (e == simdjson::UTF8_ERROR) {
      // Well-formed sequences (Unicode, table 3-7): the lead byte gives the length and the
      // range of the second byte; the others are 80..BF.
      for (std::size_t i = 0; i < n;) {
        const unsigned c = u[i];
        std::size_t len = 1;
        unsigned lo = 0x80, hi = 0xBF;
        if (c < 0x80) {
          ++i;
          continue;
        }
        if (c >= 0xC2 && c <= 0xDF) {
          len = 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
          len = 3;
          if (c == 0xE0) lo = 0xA0;
          if (c == 0xED) hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
          len = 4;
          if (c == 0xF0) lo = 0x90;
          if (c == 0xF4) hi = 0x8F;
        } else {
          return p + i;  // a continuation byte without a lead, C0, C1, F5..FF
        }
        if (i + len > n || u[i + 1] < lo || u[i + 1] > hi) return p + i;
        for (std::size_t k = 2; k < len; ++k)
          if (u[i + k] < 0x80 || u[i + k] > 0xBF) return p + i;
        i += len;
      }
    } else if (e == simdjson::UNESCAPED_CHARS) {
      // As stage 1: quotes not escaped open and close strings; inside one (escaped or not) a
      // byte below 0x20 is an error.
      bool in_string = false, escaped = false;
      for (std::size_t i = 0; i < n; ++i) {
        const unsigned c = u[i];
        if (in_string && c < 0x20) return p + i;
        if (escaped) {
          escaped = false;
        } else if (c == '\\') {
          escaped = true;
        } else if (c == '"') {
          in_string = !in_string;
        }
      }
    }
    return nullptr;
  }

  /// Content after the top-level value: the document must be exhausted.
  void check_end(simdjson::ondemand::document& doc) const {
    const char* p = nullptr;
    if (!doc.current_location().get(p)) fail_at(p, "the end of the document after the top-level value");
  }

  // ---- positions and errors ------------------------------------------------------------------
  /// Offset in the original document of a pointer into the buffer simdjson reads.
  std::size_t doc_offset(const char* p) const noexcept {
    if (!p || p < buf_ || p > buf_ + buf_size_) p = buf_ + buf_size_;
    std::size_t o = static_cast<std::size_t>(p - buf_);
    if (chunk_) {
      o = o == 0 ? chunk_begin_ - 1 : chunk_begin_ + o - 1;
    } else if (gap_at_ != 0 && o >= gap_at_) {
      o += gap_;
    }
    return o > size_ ? size_ : o;
  }

  /// Where the parser of `doc` stands (nullptr when it cannot tell).
  template <class Doc>
  static const char* location(Doc& doc) {
    const char* p = nullptr;
    if (doc.current_location().get(p)) return nullptr;
    return p;
  }

  [[noreturn]] void fail_at(const char* where, const std::string& expected) const {
    const std::size_t off = doc_offset(where);
    source_location loc{source_, 1, 1, off};
    for (std::size_t i = 0; i < off; ++i) {
      if (begin_[i] == '\n') {
        ++loc.line;
        loc.column = 1;
      } else {
        ++loc.column;
      }
    }
    throw parse_error(loc, expected);
  }

  [[noreturn]] void fail_code(simdjson::error_code e, const char* where, const std::string& expected) const {
    if (e == simdjson::MEMALLOC) throw std::bad_alloc();
    const char* at = where ? where : last_;
    if (e == simdjson::DEPTH_ERROR)
      fail_at(at,
              "nesting at most " + std::to_string(max_depth_) + " deep (simdjson: " + simdjson::error_message(e) + ")");
    if (e == simdjson::INCOMPLETE_ARRAY_OR_OBJECT || e == simdjson::TAPE_ERROR || e == simdjson::EMPTY)
      at = where ? where : buf_ + buf_size_;
    fail_at(at, expected + " (simdjson: " + simdjson::error_message(e) + ")");
  }

  /// The last key or event seen (where errors without a position point).
  void mark(const char* p) noexcept { last_ = p; }
  /// The event being read (where a malformed event's error points).
  void begin_event(const char* p) noexcept {
    event_begin_ = p;
    last_ = p;
  }
  /// A malformed event: throws parse_error naming `what` in strict mode, else returns.
  void malformed_event(const char* what) const {
    if (strict_events_) fail_at(event_begin_, what);
  }

  // ---- values ----------------------------------------------------------------------------------
  static const char* last_token(simdjson::ondemand::value& v) { return v.raw_json_token().data(); }

  /// Number token -> value * 10^scale; malformed JSON numbers are parse errors.
  kineto_num number(std::string_view tok, int scale, std::int64_t& value, bool integral) const {
    const auto r = parse_scaled(tok, scale);
    switch (r.status) {
      case number_status::ok:
        if (integral && !r.exact) return kineto_num::type;
        value = r.value;
        return kineto_num::ok;
      case number_status::not_number:
        return kineto_num::type;
      case number_status::out_of_range:
        return kineto_num::range;
      case number_status::malformed:
        break;
    }
    fail_at(tok.data(), "a JSON value (a malformed number or literal)");
  }

  /// Integer field of a top-level block: strict (parse_error on anything but an integer).
  std::int64_t block_int(simdjson::ondemand::value v, const char* expected) const {
    const char* at = v.raw_json_token().data();
    const auto r = parse_scaled(v.raw_json_token(), 0);
    if (r.status != number_status::ok || !r.exact) fail_at(at, expected);
    return r.value;
  }
  std::string block_string(simdjson::ondemand::value v, const char* expected) const {
    std::string_view s;
    if (v.get_string().get(s)) fail_at(last_token(v), expected);
    return std::string(s);
  }

  /// The array / object `v` holds, or a parse_error naming `expected` (at the value when its
  /// type is wrong, at the parser's position otherwise).
  simdjson::ondemand::array expect_array(simdjson::ondemand::value& v, simdjson::ondemand::document& doc,
                                         const char* expected) const {
    simdjson::ondemand::array a;
    if (auto e = v.get_array().get(a)) {
      if (e == simdjson::INCORRECT_TYPE) fail_at(last_token(v), expected);
      fail_code(e, location(doc), expected);
    }
    return a;
  }
  simdjson::ondemand::object expect_object(simdjson::ondemand::value& v, simdjson::ondemand::document& doc,
                                           const char* expected) const {
    simdjson::ondemand::object o;
    if (auto e = v.get_object().get(o)) {
      if (e == simdjson::INCORRECT_TYPE) fail_at(last_token(v), expected);
      fail_code(e, location(doc), expected);
    }
    return o;
  }

  /// A skipped value: a malformed scalar must not pass unnoticed.
  void check_skipped_scalar(simdjson::ondemand::value& v) const { check_token(v.raw_json_token()); }

  /// A token captured but not converted must still be valid JSON.
  void check_token(std::string_view tok) const {
    if (tok.empty()) return;
    const char c = tok[0];
    if (c == '-' || is_digit(c)) {
      if (!is_json_number(tok)) fail_at(tok.data(), "a JSON value (a malformed number)");
    } else if (c != '"' && c != '{' && c != '[') {
      if (classify_non_number(tok) == number_status::malformed)
        fail_at(tok.data(), "a JSON value (true, false, null, a number, a string, an object or an array)");
    }
  }

  /// A string value, or "" (checked) for a value of another type.
  std::string_view string_or_empty(simdjson::ondemand::value& v) const {
    std::string_view s;
    const auto e = v.get_string().get(s);
    if (!e) return s;
    if (e != simdjson::INCORRECT_TYPE) fail_code(e, last_token(v), "a string");
    check_skipped_scalar(v);
    return std::string_view();
  }

 private:
  const char* begin_;  // the whole document
  std::size_t size_;
  std::string source_;
  std::size_t max_depth_, chunk_bytes_;
  bool strict_events_;
  simdjson::ondemand::parser& parser_;
  std::vector<char>& buffer_;  // the padded copy simdjson parses: the skeleton, then each chunk
  const char* buf_ = nullptr;  // what simdjson reads now: the skeleton or "[" chunk "]"
  std::size_t buf_size_ = 0;
  bool chunk_ = false;
  std::size_t gap_at_ = 0, gap_ = 0;  // skeleton: offset and length of the cut-out events
  std::size_t chunk_begin_ = 0;       // chunk: document offset of its first byte
  const char* event_begin_ = nullptr;
  const char* last_ = nullptr;
};

#endif  // FAILSLOW_HAS_SIMDJSON

}  // namespace failslow::io::detail
