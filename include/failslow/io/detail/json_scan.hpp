// failslow/io/detail/json_scan.hpp -- finds the traceEvents array of a Chrome-trace document
// and cuts it into chunks of whole events, without parsing the events.
//
// The scanner tracks only strings (quote masks and their prefix XOR, escapes resolved where a
// backslash occurs) and bracket depth, 64 bytes at a time: only brackets are walked one by one,
// the commas between two events are taken as a mask, so it runs at memory speed. The 64-byte
// compares run on the widest path the CPU has (stats/detail/simd_path.hpp: AVX-512BW or AVX2
// through target attributes, in builds without -march too; else what the build targets, SSE2
// on baseline x86-64, plain C++ elsewhere), a batch of blocks per call; every path gives the
// same masks, hence the same layout and errors. The loads ask for the bytes a page ahead
// (software prefetch: the hardware's stops at each 4 KiB page). Each chunk is then parsed and
// validated by simdjson with a small, reused parser (its index stays in cache, and memory does
// not grow with the file); on_chunk hands each chunk over as soon as it is found, so that it
// is parsed while its bytes are still in cache; more_trace_events tells that another
// "traceEvents" key follows the array found. Malformed structure the scanner meets (a file
// that ends inside a string, object or array; a missing ':' or ','; content after the
// top-level value of an array document; nesting deeper than max_depth, counting the
// document's own levels) throws parse_error with the byte offset; everything else is left to
// simdjson.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/stats/detail/simd_path.hpp"

#if defined(FAILSLOW_SIMD_DISPATCH) || defined(__AVX512BW__) || defined(__AVX2__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace failslow::io::detail {

struct events_layout {
  bool root_is_array = false;                               ///< the document is a bare array of events
  bool found = false;                                       ///< a traceEvents array (or a root array) was found
  std::size_t open = 0;                                     ///< offset of its '['
  std::size_t close = 0;                                    ///< offset of its ']'
  std::size_t count = 0;                                    ///< number of events in it
  std::vector<std::pair<std::size_t, std::size_t>> chunks;  ///< [begin, end) of runs of whole events
  /// Another "traceEvents" key follows the array found.
  bool more_trace_events = false;
};

/// Bit masks of one 64-byte block of JSON text (bit k = byte k).
struct json_scan_masks {
  std::uint64_t quote = 0, backslash = 0, open = 0, close = 0, comma = 0;
};

// One 64-byte block classified on each instruction set ('[' | 0x20 == '{', ']' | 0x20 == '}',
// and no other byte folds onto them). The AVX-512BW and AVX2 versions carry target attributes,
// so a baseline build has them too (FAILSLOW_SIMD_DISPATCH) and runs them where the CPU can.
#if defined(FAILSLOW_SIMD_DISPATCH) || defined(__AVX512BW__)
#if defined(FAILSLOW_SIMD_DISPATCH)
__attribute__((target("avx512f,avx512bw")))
#endif
inline json_scan_masks
json_classify_avx512(const char* p) noexcept {
  json_scan_masks m;
  const __m512i b = _mm512_loadu_si512(static_cast<const void*>(p));
  const __m512i folded = _mm512_or_si512(b, _mm512_set1_epi8(0x20));  // '[' -> '{', ']' -> '}'
  m.quote = _mm512_cmpeq_epi8_mask(b, _mm512_set1_epi8('"'));
  m.backslash = _mm512_cmpeq_epi8_mask(b, _mm512_set1_epi8('\\'));
  m.open = _mm512_cmpeq_epi8_mask(folded, _mm512_set1_epi8('{'));
  m.close = _mm512_cmpeq_epi8_mask(folded, _mm512_set1_epi8('}'));
  m.comma = _mm512_cmpeq_epi8_mask(b, _mm512_set1_epi8(','));
  return m;
}
#endif
#if defined(FAILSLOW_SIMD_DISPATCH) || defined(__AVX2__)
#if defined(FAILSLOW_SIMD_DISPATCH)
__attribute__((target("avx2")))
#endif
inline json_scan_masks
json_classify_avx2(const char* p) noexcept {
  json_scan_masks m;
  const __m256i q = _mm256_set1_epi8('"'), bs = _mm256_set1_epi8('\\'), ob = _mm256_set1_epi8('{'),
                cb = _mm256_set1_epi8('}'), cm = _mm256_set1_epi8(','), fold = _mm256_set1_epi8(0x20);
  // No lambda here: a lambda does not take the function's target attribute.
  for (int k = 0; k < 2; ++k) {
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32 * k));
    const __m256i folded = _mm256_or_si256(b, fold);  // '[' -> '{', ']' -> '}'
    const int shift = 32 * k;
    m.quote |= std::uint64_t{static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(b, q)))} << shift;
    m.backslash |= std::uint64_t{static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(b, bs)))} << shift;
    m.open |= std::uint64_t{static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(folded, ob)))} << shift;
    m.close |= std::uint64_t{static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(folded, cb)))} << shift;
    m.comma |= std::uint64_t{static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(b, cm)))} << shift;
  }
  return m;
}
#endif

// What the build targets: AVX-512BW, AVX2, SSE2, or plain C++.
inline json_scan_masks json_classify_baseline(const char* p) noexcept {
#if defined(__AVX512BW__)
  return json_classify_avx512(p);
#elif defined(__AVX2__)
  return json_classify_avx2(p);
#elif defined(__SSE2__)
  json_scan_masks m;
  const __m128i q = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\'), ob = _mm_set1_epi8('{'), cb = _mm_set1_epi8('}'),
                cm = _mm_set1_epi8(','), fold = _mm_set1_epi8(0x20);
  for (int k = 0; k < 4; ++k) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
    const __m128i folded = _mm_or_si128(b, fold);  // '[' -> '{', ']' -> '}'
    auto bits = [&](__m128i x) {
      return static_cast<std::uint64_t>(static_cast<unsigned>(_mm_movemask_epi8(x)) & 0xFFFFu) << (16 * k);
    };
    m.quote |= bits(_mm_cmpeq_epi8(b, q));
    m.backslash |= bits(_mm_cmpeq_epi8(b, bs));
    m.open |= bits(_mm_cmpeq_epi8(folded, ob));
    m.close |= bits(_mm_cmpeq_epi8(folded, cb));
    m.comma |= bits(_mm_cmpeq_epi8(b, cm));
  }
  return m;
#else
  json_scan_masks m;
  for (int k = 0; k < 64; ++k) {
    const std::uint64_t bit = std::uint64_t{1} << k;
    switch (p[k]) {
      case '"':
        m.quote |= bit;
        break;
      case '\\':
        m.backslash |= bit;
        break;
      case '{':
      case '[':
        m.open |= bit;
        break;
      case '}':
      case ']':
        m.close |= bit;
        break;
      case ',':
        m.comma |= bit;
        break;
      default:
        break;
    }
  }
  return m;
#endif
}

// How far ahead the scan asks for its bytes: one 4 KiB page (2-16 KiB measured the same; none
// was 8 % slower on a 54 MB trace in 4 KiB pages: the hardware prefetcher stops at each page).
inline constexpr std::size_t json_scan_prefetch_distance = 4096;
// Asks for the line `ahead` bytes past p (an address only, never dereferenced: a prefetch
// does not fault, and no pointer past the buffer is formed).
inline void json_scan_prefetch(const char* p, std::size_t ahead = json_scan_prefetch_distance) noexcept {
#if defined(__GNUC__)
  __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(p) + ahead));
#else
  (void)p;
  (void)ahead;
#endif
}

// `blocks` consecutive 64-byte blocks from p into out[0, blocks), on one path each (the loop
// carries the path's target, so its compares are inlined).
using json_classify_fn = void (*)(const char* p, std::size_t blocks, json_scan_masks* out);
inline void json_classify_blocks_baseline(const char* p, std::size_t blocks, json_scan_masks* out) noexcept {
  for (std::size_t b = 0; b < blocks; ++b) out[b] = json_classify_baseline(p + 64 * b);
}
#if defined(FAILSLOW_SIMD_DISPATCH)
__attribute__((target("avx2"))) inline void json_classify_blocks_avx2(const char* p, std::size_t blocks,
                                                                      json_scan_masks* out) noexcept {
  for (std::size_t b = 0; b < blocks; ++b) {
    json_scan_prefetch(p + 64 * b);
    out[b] = json_classify_avx2(p + 64 * b);
  }
}
__attribute__((target("avx512f,avx512bw"))) inline void json_classify_blocks_avx512(const char* p, std::size_t blocks,
                                                                                    json_scan_masks* out) noexcept {
  for (std::size_t b = 0; b < blocks; ++b) {
    json_scan_prefetch(p + 64 * b);
    out[b] = json_classify_avx512(p + 64 * b);
  }
}
#endif

/// The block classifier of `path`; invalid_argument when this CPU lacks it.
inline json_classify_fn json_classify_for(stats::detail::simd_path path) {
  using stats::detail::simd_path;
  if (!stats::detail::simd_path_supported(path))
    throw invalid_argument(std::string("json scan: this CPU lacks the ") + stats::detail::to_string(path) + " path");
#if defined(FAILSLOW_SIMD_DISPATCH)
  if (path == simd_path::avx512) return json_classify_blocks_avx512;
  if (path == simd_path::avx2) return json_classify_blocks_avx2;
#endif
  return json_classify_blocks_baseline;
}

class events_scanner {
 public:
  /// `path`: the instruction set of the 64-byte compares (the CPU's widest by default; tests
  /// force each); invalid_argument when this CPU lacks it.
  events_scanner(const char* data, std::size_t size, std::size_t chunk_bytes, std::size_t max_depth, std::string source,
                 stats::detail::simd_path path = stats::detail::best_simd_path())
      : d_(data),
        n_(size),
        chunk_(chunk_bytes == 0 ? 1 : chunk_bytes),
        max_depth_(max_depth),
        source_(std::move(source)),
        classify_(json_classify_for(path)),
        batched_(path != stats::detail::simd_path::baseline) {}

  /// Where each chunk goes as soon as it is found (besides events_layout::chunks): called with
  /// the chunk's [begin, end) while the scan goes on, so the caller can parse it while its bytes
  /// are still in cache. An exception it throws propagates out of scan().
  using chunk_sink = void (*)(void* context, std::size_t begin, std::size_t end);
  void on_chunk(chunk_sink sink, void* context) noexcept {
    sink_ = sink;
    sink_context_ = context;
  }

  events_layout scan() {
    events_layout out;
    std::size_t i = skip_ws(0);
    if (i >= n_) fail(i, "a JSON object or array at the top level (the document is empty)");
    if (d_[i] == '[') {
      out.root_is_array = true;
      out.found = true;
      out.open = i;
      out.close = elements(i, out);
      i = skip_ws(out.close + 1);
      if (i != n_) fail(i, "the end of the document after the top-level array");
      return out;
    }
    if (d_[i] != '{') return out;  // simdjson reports what the root is instead
    ++i;
    for (;;) {
      i = skip_ws(i);
      if (i >= n_) fail(i, "a key or '}' in the top-level object (the file is truncated)");
      if (d_[i] == '}') return out;
      if (d_[i] != '"') fail(i, "a quoted key in the top-level object");
      const std::size_t key_end = skip_string(i);
      const std::string_view key(d_ + i + 1, key_end - i - 2);
      i = skip_ws(key_end);
      if (i >= n_ || d_[i] != ':') fail(i, "':' after a key in the top-level object");
      i = skip_ws(i + 1);
      if (i >= n_) fail(i, "a value in the top-level object (the file is truncated)");
      if (key == "traceEvents" && out.found) out.more_trace_events = true;
      if (key == "traceEvents" && !out.found && d_[i] == '[') {
        out.found = true;
        out.open = i;
        out.close = elements(i, out);
        i = out.close + 1;
      } else {
        i = skip_value(i);
      }
      i = skip_ws(i);
      if (i >= n_) fail(i, "',' or '}' in the top-level object (the file is truncated)");
      if (d_[i] == ',') {
        ++i;
        continue;
      }
      if (d_[i] == '}') return out;
      fail(i, "',' or '}' in the top-level object");
    }
  }

 private:
  [[noreturn]] void fail(std::size_t at, const std::string& expected) const {
    if (at > n_) at = n_;
    source_location loc{source_, 1, 1, at};
    for (std::size_t k = 0; k < at; ++k) {
      if (d_[k] == '\n') {
        ++loc.line;
        loc.column = 1;
      } else {
        ++loc.column;
      }
    }
    throw parse_error(loc, expected);
  }

  // 1: '"', 2: '{' or '[', 3: '}' or ']', 0: anything else.
  static int char_class(char c) noexcept {
    static constexpr struct table {
      unsigned char v[256];
      constexpr table() : v() {
        v[static_cast<unsigned char>('"')] = 1;
        v[static_cast<unsigned char>('{')] = 2;
        v[static_cast<unsigned char>('[')] = 2;
        v[static_cast<unsigned char>('}')] = 3;
        v[static_cast<unsigned char>(']')] = 3;
      }
    } t;
    return t.v[static_cast<unsigned char>(c)];
  }

  [[noreturn]] void too_deep(std::size_t at) const {
    fail(at, "nesting at most " + std::to_string(max_depth_) + " deep");
  }

  std::size_t skip_ws(std::size_t i) const noexcept {
    while (i < n_ && (d_[i] == ' ' || d_[i] == '\n' || d_[i] == '\r' || d_[i] == '\t')) ++i;
    return i;
  }

  // First j >= i with d_[j] in the set (each byte of `set` a member; SSE2 16 bytes at a time
  // where available), or n_.
  template <int N>
  std::size_t find_any(std::size_t i, const char (&set)[N]) const noexcept {
#if defined(__SSE2__)
    __m128i needles[N - 1];
    for (int k = 0; k < N - 1; ++k) needles[k] = _mm_set1_epi8(set[k]);
    while (i + 16 <= n_) {
      const __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d_ + i));
      __m128i hit = _mm_cmpeq_epi8(block, needles[0]);
      for (int k = 1; k < N - 1; ++k) hit = _mm_or_si128(hit, _mm_cmpeq_epi8(block, needles[k]));
      const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(hit));
      if (mask != 0) return i + static_cast<std::size_t>(__builtin_ctz(mask));
      i += 16;
    }
#endif
    for (; i < n_; ++i)
      for (int k = 0; k < N - 1; ++k)
        if (d_[i] == set[k]) return i;
    return n_;
  }

  // i at the opening quote; returns one past the closing quote.
  std::size_t skip_string(std::size_t i) const {
    std::size_t j = i + 1;
    for (;;) {
      j = find_any(j, "\"\\");
      if (j >= n_) fail(n_, "a closing '\"' (the file ends inside a string)");
      if (d_[j] == '"') return j + 1;
      j += 2;  // an escape: skip the escaped character
    }
  }

  // Returns one past the end of the value starting at i.
  std::size_t skip_value(std::size_t i) const {
    const char c = d_[i];
    if (c == '"') return skip_string(i);
    if (c != '{' && c != '[') {
      while (i < n_ && d_[i] != ',' && d_[i] != '}' && d_[i] != ']' && d_[i] != ' ' && d_[i] != '\n' && d_[i] != '\r' &&
             d_[i] != '\t')
        ++i;
      return i;
    }
    std::size_t depth = 0;
    while (i < n_) {
      switch (char_class(d_[i])) {
        case 0:
          i = find_any(i + 1, "\"{}[]");
          continue;
        case 1:
          i = skip_string(i);
          continue;
        case 2:
          if (++depth + 1 > max_depth_) too_deep(i);
          break;
        default:
          if (--depth == 0) return i + 1;
          break;
      }
      ++i;
    }
    fail(n_, "a closing '}' or ']' (the file ends inside an object or array: truncated?)");
  }

  // Bit masks of one 64-byte block (bit k = byte k): json_scan_masks, filled in batches.
  using block_masks = json_scan_masks;

  // Bits set in x. Without POPCNT in the build's target (baseline x86-64) GCC and Clang call a
  // library function for __builtin_popcountll; this is a few instructions inline instead.
  static std::size_t popcount(std::uint64_t x) noexcept {
#if defined(__POPCNT__) || !defined(__x86_64__)
    return static_cast<std::size_t>(__builtin_popcountll(x));
#else
    x -= (x >> 1) & 0x5555555555555555ull;
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Full;
    return static_cast<std::size_t>((x * 0x0101010101010101ull) >> 56);
#endif
  }

  // Inclusive prefix XOR: bit k = xor of bits 0..k (1 inside a string, from its opening quote).
  static std::uint64_t prefix_xor(std::uint64_t x) noexcept {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    return x;
  }

  // Elements of the array opened at `open`; returns the offset of its ']'. 64 bytes at a time:
  // quotes not escaped by an odd run of backslashes open and close strings (prefix XOR), and
  // brackets and commas outside strings move the depth; chunks are cut at commas at depth 1.
  std::size_t elements(std::size_t open, events_layout& out) const {
    // The baseline path classifies each block in the loop (with SSE2, batches of stored masks
    // measured 40 % slower: its 16-byte compares spill); the wider paths in batches (AVX2 15 %
    // faster than in the loop).
    return batched_ ? elements_on<true>(open, out) : elements_on<false>(open, out);
  }

  template <bool Batched>
  std::size_t elements_on(std::size_t open, events_layout& out) const {
    std::size_t chunk_begin = open + 1;
    std::size_t last_cut = open;  // the '[' or the comma the current chunk starts after
    std::size_t depth = 1;
    bool in_string = false, escaped_next = false;
    std::size_t commas = 0;
    char tail[64];
    constexpr std::size_t batch = 64;  // blocks classified per call (4 KiB of text, 2.5 KiB of masks)
    block_masks masks[Batched ? batch : 1];
    std::size_t batch_base = 0, batch_blocks = 0;  // the blocks in masks[]: from batch_base
    for (std::size_t base = open + 1; base < n_; base += 64) {
      const char* p = d_ + base;
      const std::size_t len = n_ - base < 64 ? n_ - base : 64;
      if (Batched && base >= batch_base + 64 * batch_blocks) {  // classify the next batch of whole blocks
        batch_base = base;
        batch_blocks = std::min(batch, (n_ - base) / 64);
        if (batch_blocks > 0) classify_(p, batch_blocks, masks);
      }
      block_masks m;
      if (len < 64) {
        std::memset(tail, ' ', sizeof tail);
        std::memcpy(tail, p, len);
        p = tail;
        classify_(p, 1, &m);
      } else if (Batched) {
        m = masks[(base - batch_base) / 64];
      } else {
        json_scan_prefetch(p);
        m = json_classify_baseline(p);
      }
      // Escaped characters: rare in traces, so resolved byte by byte where a backslash occurs.
      std::uint64_t escaped = 0;
      if (m.backslash != 0 || escaped_next) {
        for (std::size_t k = 0; k < 64; ++k) {
          if (escaped_next) {
            escaped |= std::uint64_t{1} << k;
            escaped_next = false;
          } else if (p[k] == '\\') {
            escaped_next = true;
          }
        }
      }
      const std::uint64_t quotes = m.quote & ~escaped;
      std::uint64_t inside = prefix_xor(quotes);
      if (in_string) inside = ~inside;
      in_string = (inside >> 63) != 0;
      // Only brackets move the depth: walk them one by one; the commas between two brackets
      // (or the block's ends) share one depth, so those at depth 1 are taken as a mask.
      std::uint64_t brackets = (m.open | m.close) & ~inside;
      const std::uint64_t commas_out = m.comma & ~inside;
      int from = 0;  // first bit of the current run at one depth
      for (;;) {
        const int k = brackets != 0 ? __builtin_ctzll(brackets) : 64;
        if (depth == 1 && from < 64) {
          const std::uint64_t below_k = k == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << k) - 1;
          const std::uint64_t c = commas_out & below_k & ~((std::uint64_t{1} << from) - 1);
          if (c != 0) split_at(c, base, chunk_begin, last_cut, commas, out);
        }
        if (brackets == 0) break;
        brackets &= brackets - 1;
        const std::uint64_t bit = std::uint64_t{1} << k;
        const std::size_t pos = base + static_cast<std::size_t>(k);
        if (m.open & bit) {
          if (++depth > max_depth_) too_deep(pos);
        } else if (--depth == 0) {
          if (d_[pos] != ']') fail(pos, "']' closing traceEvents");
          finish_elements(chunk_begin, last_cut, pos, commas, out);
          return pos;
        }
        from = k + 1;
      }
    }
    if (in_string) fail(n_, "a closing '\"' (the file ends inside a string)");
    fail(n_, "']' closing traceEvents (the file ends inside traceEvents: truncated?)");
  }

  // Commas between two events (bits of `c`, in the block at `base`): counted, and the first
  // at least chunk_ bytes after the current chunk's start ends that chunk.
  void split_at(std::uint64_t c, std::size_t base, std::size_t& chunk_begin, std::size_t& last_cut, std::size_t& commas,
                events_layout& out) const {
    commas += popcount(c);
    const std::size_t last = base + 63 - static_cast<std::size_t>(__builtin_clzll(c));
    while (c != 0 && last - chunk_begin >= chunk_) {
      const std::size_t pos = base + static_cast<std::size_t>(__builtin_ctzll(c));
      c &= c - 1;
      if (pos - chunk_begin >= chunk_) {
        emit(chunk_begin, pos, out);
        chunk_begin = pos + 1;
      }
    }
    last_cut = last;
  }

  void finish_elements(std::size_t chunk_begin, std::size_t last_cut, std::size_t close, std::size_t commas,
                       events_layout& out) const {
    const std::size_t first = skip_ws(chunk_begin);
    if (first < close) {
      out.count = commas + 1;
      emit(chunk_begin, close, out);
    } else if (last_cut != close && d_[last_cut] == ',') {
      fail(first, "a trace event after ',' (no trailing commas in JSON)");
    }
  }

  void emit(std::size_t begin, std::size_t end, events_layout& out) const {
    out.chunks.emplace_back(begin, end);
    if (sink_) sink_(sink_context_, begin, end);
  }

  const char* d_;
  std::size_t n_;
  std::size_t chunk_;
  std::size_t max_depth_;
  std::string source_;
  json_classify_fn classify_;
  bool batched_;
  chunk_sink sink_ = nullptr;
  void* sink_context_ = nullptr;
};

}  // namespace failslow::io::detail
