// failslow/compress/codec.hpp -- compact binary encoding of window summaries (.fsum).
//
// Synopsis
//   file    := "FSUM" version:u8 precision_bits:u8 key_frame_interval:u16le coarse_shift:u8
//              extremes_shift:u8 block*     (version 4, the default: version 3 with each window's
//              launch pace; version 3 files, without it, and version 2 files, without
//              extremes_shift and with the windows below coded as varints and nibbles, and
//              version 1 files, which also have no coarse_shift byte, no key forms and no
//              groups, are still read; codec_options::format_version = 2 still writes version 2
//              for older readers, 3 likewise; a later version is a parse_error that names the
//              versions read)
//   block   := "FSB1" type:u8 length:varint payload[length] crc:u32le
//              crc = CRC-32C (Castagnoli) of type and payload (as stored)
//   types   := 1 names (new dictionary entries: count, then id and length each, then the
//              total length and the names' bytes as one LZ77 stream, detail/lz.hpp: C++
//              kernel names repeat long substrings, ~10x smaller on real traces)
//              2 key window (self-contained)   3 delta window (against the same rank's
//              previous window, which it names)
//              4 group: records (type:u8 length:varint payload) of blocks of types 1-3, in
//              stream order, without marker or CRC (the group's CRC covers them)
//              type | 0x80: the payload is one zstd frame (with its content size) of the
//              payload of that type: the entropy stage, written as zstd-compressed groups
//              of about codec_options::group_bytes (256 KiB) when zstd_level > 0. A build
//              without zstd (FAILSLOW_HAS_ZSTD, the failslow::zstd target) reports each such
//              block as damage that says so and counts it in zstd_blocks_unreadable.
//   window  := rank, window id, [reference window id], start, duration, skip counts,
//              subsampled, key count, layout (1: the reference's key list, not repeated;
//              0: key ids as deltas from the previous key), one mode bit per key (delta or
//              absolute), then for absolute keys count, total, count - sampled,
//              4 x cluster count + form, and by form (window_summary.hpp):
//                0 clusters: per cluster count, min, max, mean, sd, p50, p90, p99 (varints)
//                1 values: the cluster sizes but the last, the first value's code; the
//                  steps between the ascending codes go to the nibble section (the
//                  clusters are summaries of the decoded values)
//                2 knots: the clusters as in 0, the number of top values, the first code,
//                  then the ascending steps of knot_count knots and the top values (varints)
//              then the nibble section: per key in order, the deltas of a delta key's fields
//              or a values key's steps. (Version 2.)
//   window v4 := the layout byte's bit 1 set when the window has a launch pace
//              (window_summary::launch), followed by its launch count and the code of its median
//              interval (varints, the durations' log-quantisation); then as v3.
//   window v3 := the same up to the layout and key ids; then one range-coded stream
//              (detail/range_coder.hpp: adaptive binary range coder, a context per field, reset
//              at each window) holding per key its mode bit and fields: a delta key (clusters
//              of the same count as the reference's, or values against values) codes the
//              change of each count and mean, and the change of every other statistic minus
//              its mean's (a cluster that moves, moves as a whole); the last cluster's count
//              is what the others leave; an absolute key codes its statistics relative to its
//              cluster's mean. Durations are coded as log-values (code 1, 3, 5 -> 0, 1, 2), a
//              duration <= 0 by a flag. A key's total is stored only where it was subsampled;
//              else it is the sum of its clusters' mean * count (within the same precision).
//              bench/README.md breaks the bytes down by field: 44 % fewer than version 2
//              with zstd on bench_compress's steps, the same W1.
//   Durations are log-quantised: code = zigzag(round(ln x / s)) + 1 (0 for x <= 0) with
//   s = ln(1 + 2^-precision_bits); decoding returns x = exp(v s), so every duration, mean and
//   quantile comes back within a relative error of s / 2 ~ 2^-(bits+1) (3.9e-3 for the default
//   7 bits, below the noise of a window's statistics: a p99 of a hundred kernels moves by a few
//   percent from window to window; 8 bits cost 14 % more bytes on the simulated steps of
//   bench/README.md for 0.03 points of median W1/mean); sd likewise; a cluster's sum is
//   mean * count. A cluster's sd and p99, its noisiest statistics, are quantised
//   2^coarse_shift times coarser (default 1: within 7.8e-3; 3 % fewer bytes on those steps,
//   the same W1, bench/README.md). Format 3 may quantise min and max 2^extremes_shift times
//   coarser (default 0: as fine as the others). Counts are exact.
//   Delta windows store each key present in the reference with the same number of clusters
//   (clusters form in both) as differences of the codes and counts, packed as 4-bit nibbles
//   (values in [-7, 7]) with larger ones escaped to varints: kernels repeat, so most fields
//   cost half a byte. Other keys are stored absolutely. A key window every
//   `key_frame_interval` windows of a rank bounds the loss from a damaged block to that many
//   windows (with zstd, a damaged group loses its windows and the deltas after them up to each
//   rank's next key window). The name dictionary is written once: each name before the first
//   window that uses it.
// Decoding validates every length, count and value (a duration code past the range of double is
//   damage) and never reads out of bounds; a block with
//   a bad CRC or an inconsistent payload is reported (offset, reason) and skipped, decoding
//   resumes at the next "FSB1"; delta windows whose reference was lost are reported and
//   skipped until the rank's next key window.
//   decode_summaries(bytes) keeps every window; decode_summaries_to(bytes, sink) hands them to
//   a sink; summary_decoder is fed the stream in pieces of any size (a file read in chunks) with
//   the same result, in the memory of one incomplete block and one window per rank.
// Complexity: encode and decode O(size of the summaries).
// Errors: decode_summaries throws failslow::parse_error only for a missing or unknown file
//   header; all damage after it is reported in decoded_summaries::damaged.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "failslow/compress/detail/bytes.hpp"
#include "failslow/compress/detail/lz.hpp"
#include "failslow/compress/window_summary.hpp"
#include "failslow/core/compile_mode.hpp"
#include "failslow/core/error.hpp"

#if FAILSLOW_HAS_ZSTD
#include <zstd.h>
#endif

namespace failslow::compress {

/// Whether this build can write and read zstd-compressed blocks (FAILSLOW_HAS_ZSTD, the
/// failslow::zstd target: Debian libzstd-dev).
#if FAILSLOW_HAS_ZSTD
inline constexpr bool zstd_available = true;
#else
inline constexpr bool zstd_available = false;
#endif

struct codec_options {
  unsigned precision_bits = 7;       ///< log-quantisation step ln(1 + 2^-bits), 4..20
  unsigned key_frame_interval = 16;  ///< a self-contained window every this many per rank
  /// zstd level (1..19) of the entropy stage, 0 = none. With it the encoder gathers blocks
  /// into groups of about group_bytes (call flush() at the end); needs zstd_available.
  int zstd_level = 0;
  std::size_t group_bytes = std::size_t{1} << 18;  ///< raw bytes per zstd group, 1 KiB..16 MiB
  /// A cluster's min, max, sd and p99 are quantised 2^coarse_shift times coarser than the
  /// other durations (0..6): they are its noisiest statistics (a p99 or a max of a hundred
  /// launches moves by several percent from window to window) and the reconstruction is
  /// least sensitive to them; bench/README.md measures the bytes and W1 of each shift.
  unsigned coarse_shift = 1;
  /// The format written: 4 (the entropy-coded windows with the host's launch pace), 3 for
  /// readers that only know format 3 (the same without window_summary::launch, which it
  /// drops), or 2 for readers that only know format 2 (nibbles and varints). Readers of this
  /// build read 1 to 4.
  unsigned format_version = 4;
  /// Format 3: a cluster's min and max quantised 2^extremes_shift times coarser (0..6). 0 by
  /// default: at 1 the steps of bench_compress cost 8 % fewer bytes for the same W1, but the
  /// summaries' battery's median W1/mean rises from 0.49 % to 0.53 % (bench/README.md).
  unsigned extremes_shift = 0;
};

namespace detail {

inline constexpr std::string_view file_magic = "FSUM";
inline constexpr std::string_view block_magic = "FSB1";
inline constexpr std::uint8_t file_version =
    4;  // 1: clusters only, no groups; 2: nibbles; 3: no launch pace (all read)
enum block_type : std::uint8_t { names_block = 1, key_window = 2, delta_window = 3, group_block = 4 };
inline constexpr std::uint8_t zstd_flag = 0x80;  // the block's payload is one zstd frame
// A key's form (v2): clusters only, its durations (values), or clusters and knots.
enum key_form : std::uint8_t { form_clusters = 0, form_values = 1, form_knots = 2 };

// A coarse code (codec_options::coarse_shift) stands for the fine code of its log-value times
// 2^shift: x = exp(v 2^shift s).
inline std::uint64_t from_coarse(std::uint64_t coarse, unsigned shift) noexcept {
  if (coarse == 0 || shift == 0) return coarse;
  return zigzag(unzigzag(coarse - 1) * (std::int64_t{1} << shift)) + 1;
}

struct quantizer {
  double step;
  explicit quantizer(unsigned bits) : step(std::log1p(std::ldexp(1.0, -static_cast<int>(bits)))) {}
  std::uint64_t code(double x, unsigned coarse_shift = 0) const noexcept {
    if (!(x > 0) || !std::isfinite(x)) return 0;
    return zigzag(static_cast<std::int64_t>(
               std::llround(std::log(x) / std::ldexp(step, static_cast<int>(coarse_shift))))) +
           1;
  }
  double value(std::uint64_t c) const noexcept {
    return c == 0 ? 0.0 : std::exp(static_cast<double>(unzigzag(c - 1)) * step);
  }
};

// The codes of one window as the decoder sees them (the reference of the next delta).
struct cluster_codes {
  std::uint64_t count, min, max, mean, sd, p50, p90, p99;
};
struct key_codes {
  name_id key;
  std::uint64_t count, total, sampled;
  std::vector<cluster_codes> clusters;
  std::uint8_t form = form_clusters;
  std::vector<std::uint64_t> extra;  // the codes of the values or knots, ascending
};
struct window_codes {
  std::uint64_t window_id = 0;
  std::uint64_t launches = 0, launch_interval = 0;  // format 4: the host's launch pace (0: none)
  std::vector<key_codes> keys;                      // sorted by key
  const key_codes* find(name_id k) const noexcept {
    auto it = std::lower_bound(keys.begin(), keys.end(), k, [](const key_codes& a, name_id b) { return a.key < b; });
    return it != keys.end() && it->key == k ? &*it : nullptr;
  }
};

#if FAILSLOW_HAS_ZSTD
struct zstd_free {
  void operator()(ZSTD_CCtx* c) const noexcept { ZSTD_freeCCtx(c); }
  void operator()(ZSTD_DCtx* d) const noexcept { ZSTD_freeDCtx(d); }
};
using zstd_cctx = std::unique_ptr<ZSTD_CCtx, zstd_free>;
using zstd_dctx = std::unique_ptr<ZSTD_DCtx, zstd_free>;
#endif

inline void put_delta(std::string& out, std::uint64_t v, std::uint64_t ref) {
  put_varint(out, zigzag(static_cast<std::int64_t>(v - ref)));
}

}  // namespace detail

/// Appends encoded blocks for windows, one rank or many, in any interleaving.
class summary_encoder {
 public:
  /// `name_of(id)` gives the string of a key id (e.g. a name_table's name()).
  FAILSLOW_FUNC summary_encoder(std::function<std::string(name_id)> name_of, codec_options opt = {});

  /// The file header; write it once, before the first block.
  FAILSLOW_FUNC std::string header() const;

  /// Appends the blocks of one window (new names first) to `out`; with zstd_level > 0 to the
  /// current group, written to `out` when it reaches group_bytes (and by flush()).
  FAILSLOW_FUNC void encode(const window_summary& w, std::string& out);

 private:
  // Format 2: absolute values as varints; deltas against the reference as nibbles.
  FAILSLOW_FUNC static void encode_keys_v2(const detail::window_codes& codes, const detail::window_codes& ref,
                                           const std::string& modes, std::string& payload);

 public:
  /// Writes the current zstd group to `out` (nothing without zstd or when it is empty). Call
  /// it after the last encode(); a group is a block, so a stream may also be cut after it.
  FAILSLOW_FUNC void flush(std::string& out);

 private:
  struct state {
    detail::window_codes ref;
    bool has_ref = false;
    unsigned since_key = 0;
  };

  // A block: to `out`, or as a record (type, length, payload) of the current zstd group.
  FAILSLOW_FUNC void put_block(std::string& out, std::uint8_t type, const std::string& payload);
  FAILSLOW_FUNC static void write_block(std::string& out, std::uint8_t type, const std::string& payload);

  FAILSLOW_FUNC detail::window_codes quantize(const window_summary& w) const;

  std::uint64_t coarse(double x) const noexcept { return q_.code(x, opt_.coarse_shift); }

  std::function<std::string(name_id)> name_of_;
  codec_options opt_;
  detail::quantizer q_;
  std::unordered_set<name_id> written_names_;
  std::map<std::int32_t, state> ranks_;
  std::string group_;  // records of the zstd group being gathered
#if FAILSLOW_HAS_ZSTD
  detail::zstd_cctx cctx_;  // made at the first group
#endif
};

/// A block the decoder could not use.
struct damaged_block {
  std::uint64_t offset;  ///< byte offset of the block (or of the damage) in the input
  std::string reason;
};

struct decoded_summaries {
  codec_options options;
  std::map<name_id, std::string> names;         ///< the file's key ids and their strings
  std::vector<window_summary> windows;          ///< in file order
  std::vector<damaged_block> damaged;           ///< bad CRC, truncated or inconsistent blocks
  std::uint64_t windows_without_reference = 0;  ///< delta windows skipped after a loss
  std::uint64_t zstd_blocks_unreadable = 0;     ///< zstd blocks a build without zstd skipped
};

namespace detail {

// Parses one window payload into codes; false on any inconsistency.
FAILSLOW_FUNC bool read_window(std::string_view payload, bool is_delta,
                               const std::map<std::int32_t, window_codes>& refs, std::uint64_t max_code,
                               unsigned version, unsigned coarse_shift, unsigned extremes_shift, window_summary& w,
                               window_codes& codes, bool& missing_reference);

}  // namespace detail

/// A .fsum decoder fed in pieces: feed() the bytes as they arrive (a file read in chunks, a
/// socket), finish() at the end. Each complete block is decoded at once and each window handed to
/// `sink(window_summary&&, const decoded_summaries& so_far)`; so_far.names holds every name the
/// stream defined up to the window (a name block precedes the windows using it), so_far.windows
/// stays empty. Memory: the bytes of one incomplete block plus one window's codes per rank (the
/// delta references), whatever the length of the stream. Damage is reported as by
/// decode_summaries; a block that declares more than max_block_bytes is damage at once (the
/// encoder never writes one: a window of a rank is a few KB). A sink that only reads the window
/// (does not move it out) lets the decoder reuse its buffers for the next one: no allocation per
/// key, ~25 % faster on a 16,384-rank file.
class summary_decoder {
 public:
  static constexpr std::uint64_t max_block_bytes = std::uint64_t{64} << 20;

  explicit summary_decoder(std::string source = "<fsum>") : source_(std::move(source)) {}

  /// Decodes the complete blocks among the bytes fed so far. Throws parse_error for a missing
  /// or unknown file header.
  template <class Sink>
  void feed(std::string_view bytes, Sink&& sink) {
    pending_.append(bytes.data(), bytes.size());
    run(sink, false);
  }

  /// The end of the stream: what is left is a truncated block (damage), or nothing.
  template <class Sink>
  void finish(Sink&& sink) {
    run(sink, true);
    if (!header_done_) throw parse_error({source_, 0, 0, 0}, "the .fsum magic \"FSUM\"");
  }

  const decoded_summaries& state() const noexcept { return out_; }
  decoded_summaries take() { return std::move(out_); }

 private:
  // Decodes from the start of pending_; keeps what cannot be decoded yet (unless at the end).
  template <class Sink>
  void run(Sink& sink, bool at_end) {
    using namespace detail;
    std::string_view data(pending_);
    std::size_t pos = 0;
    if (!header_done_) {
      const std::uint8_t declared = data.size() > 4 ? static_cast<std::uint8_t>(data[4]) : 0;
      const std::size_t header_size = declared >= 3 ? 10 : declared == 2 ? 9 : 8;
      if (data.size() < header_size) {
        if (at_end && !data.empty()) throw parse_error({source_, 0, 0, 0}, "the .fsum magic \"FSUM\"");
        return;
      }
      if (data.substr(0, 4) != file_magic) throw parse_error({source_, 0, 0, 0}, "the .fsum magic \"FSUM\"");
      version_ = static_cast<std::uint8_t>(data[4]);
      if (version_ < 1 || version_ > file_version)
        throw parse_error({source_, 0, 0, 4}, "format version 1, 2, 3 or 4 (this build reads up to 4)");
      out_.options.precision_bits = static_cast<unsigned char>(data[5]);
      out_.options.key_frame_interval =
          static_cast<unsigned char>(data[6]) | (static_cast<unsigned>(static_cast<unsigned char>(data[7])) << 8);
      if (out_.options.precision_bits < 4 || out_.options.precision_bits > 20 || out_.options.key_frame_interval == 0)
        throw parse_error({source_, 0, 0, 5}, "precision bits in [4, 20] and a key frame interval >= 1");
      out_.options.coarse_shift = header_size > 8 ? static_cast<unsigned char>(data[8]) : 0;
      if (out_.options.coarse_shift > 6) throw parse_error({source_, 0, 0, 8}, "a coarse shift in [0, 6]");
      out_.options.extremes_shift = header_size > 9 ? static_cast<unsigned char>(data[9]) : 0;
      if (out_.options.extremes_shift > 6) throw parse_error({source_, 0, 0, 9}, "an extremes shift in [0, 6]");
      out_.options.format_version = version_;
      q_ = quantizer(out_.options.precision_bits);
      // Codes whose value exp(v s) stays a normal double: |v s| <= 700 (ln DBL_MAX = 709.8).
      max_code_ = zigzag(static_cast<std::int64_t>(std::floor(700.0 / q_.step))) + 1;
      header_done_ = true;
      pos = header_size;
    }
    // The next "FSB1" at or after `from`, or where the data may still hold its first bytes; the
    // bytes skipped on the way are damage already reported.
    auto resync = [&](std::size_t from) {
      const auto next = data.find(block_magic, from);
      in_garbage_ = next == std::string_view::npos;
      if (!in_garbage_) return next;
      return at_end ? data.size() : std::max(from, data.size() >= 3 ? data.size() - 3 : std::size_t{0});
    };
    while (pos < data.size()) {
      const std::size_t block_start = pos;
      const std::uint64_t offset = consumed_ + block_start;
      if (data.size() - pos < 4 && !at_end && block_magic.substr(0, data.size() - pos) == data.substr(pos)) break;
      if (data.substr(pos, 4) != block_magic) {
        if (!in_garbage_) out_.damaged.push_back({offset, "expected a block marker \"FSB1\""});
        pos = resync(pos + 1);
        if (in_garbage_ && !at_end) break;
        continue;
      }
      in_garbage_ = false;
      byte_reader r(data.substr(pos + 4));
      std::string_view type_byte, payload;
      std::uint64_t length = 0;
      std::uint32_t crc;
      const bool have_type = r.bytes(1, type_byte);
      const bool have_length = have_type && r.varint(length);
      if (have_length && length > max_block_bytes) {
        out_.damaged.push_back({offset, "block length past the limit"});
        pos = resync(pos + 4);
        continue;
      }
      if (!have_length || length > r.remaining() || !r.bytes(length, payload) || !r.u32(crc)) {
        if (!at_end) break;  // wait for the rest of the block
        out_.damaged.push_back({offset, "truncated block"});
        pos = resync(pos + 4);
        continue;
      }
      const std::size_t next = pos + 4 + r.position();
      if (crc32c(payload, crc32c(type_byte)) != crc) {
        out_.damaged.push_back({offset, "CRC-32C mismatch"});
        pos = resync(pos + 4);
        continue;
      }
      pos = next;
      decode_block(static_cast<std::uint8_t>(type_byte[0]), payload, offset, sink);
    }
    consumed_ += pos;
    pending_.erase(0, pos);
  }

  template <class Sink>
  void decode_block(std::uint8_t type, std::string_view payload, std::uint64_t offset, Sink& sink,
                    bool in_group = false) {
    using namespace detail;
    if (version_ >= 2 && (type & zstd_flag) && !in_group) {
#if FAILSLOW_HAS_ZSTD
      const unsigned long long size = ZSTD_getFrameContentSize(payload.data(), payload.size());
      if (size == ZSTD_CONTENTSIZE_UNKNOWN || size == ZSTD_CONTENTSIZE_ERROR || size > max_block_bytes) {
        out_.damaged.push_back({offset, "zstd block without a valid content size"});
        return;
      }
      std::string raw(static_cast<std::size_t>(size), '\0');
      if (!dctx_) dctx_.reset(ZSTD_createDCtx());
      const std::size_t n =
          dctx_ ? ZSTD_decompressDCtx(dctx_.get(), raw.data(), raw.size(), payload.data(), payload.size())
                : std::size_t(-1);
      if (ZSTD_isError(n) || n != raw.size()) {
        out_.damaged.push_back({offset, "zstd block does not decompress"});
        return;
      }
      decode_block(static_cast<std::uint8_t>(type & ~zstd_flag), raw, offset, sink, true);
#else
      ++out_.zstd_blocks_unreadable;
      out_.damaged.push_back({offset,
                              "zstd-compressed block: this build has no zstd (configure with -DFAILSLOW_WITH_ZSTD=ON, "
                              "Debian libzstd-dev), its windows are skipped"});
#endif
      return;
    }
    if (version_ >= 2 && type == group_block) {  // records: type, length, payload
      byte_reader gr(payload);
      while (gr.remaining() > 0) {
        std::string_view inner_type, inner;
        std::uint64_t length;
        if (!gr.bytes(1, inner_type) || !gr.varint(length) || length > gr.remaining() ||
            !gr.bytes(static_cast<std::size_t>(length), inner) ||
            (static_cast<std::uint8_t>(inner_type[0]) & zstd_flag) ||
            static_cast<std::uint8_t>(inner_type[0]) == group_block) {
          out_.damaged.push_back({offset, "inconsistent group block"});
          return;
        }
        decode_block(static_cast<std::uint8_t>(inner_type[0]), inner, offset, sink, true);
      }
      return;
    }
    if (type == names_block) {
      byte_reader nr(payload);
      std::uint64_t count, id, len, total = 0, text_size = 0;
      std::vector<std::pair<name_id, std::uint64_t>> entries;
      bool ok = nr.varint(count) && count <= nr.remaining();
      for (std::uint64_t i = 0; ok && i < count; ++i) {
        ok = nr.varint(id) && id <= std::numeric_limits<name_id>::max() && nr.varint(len) && len <= lz_max_size - total;
        if (ok) {
          entries.emplace_back(static_cast<name_id>(id), len);
          total += len;
        }
      }
      std::string text;
      ok =
          ok && nr.varint(text_size) && text_size == total && lz_decompress(nr, text_size, text) && nr.remaining() == 0;
      if (ok) {
        std::size_t at = 0;
        for (const auto& [key, name_length] : entries) {
          out_.names[key] = text.substr(at, static_cast<std::size_t>(name_length));
          at += static_cast<std::size_t>(name_length);
        }
      } else {
        out_.damaged.push_back({offset, "inconsistent name block"});
      }
    } else if (type == key_window || type == delta_window) {
      // The window handed over last time, reused: a sink that does not move it out leaves its
      // buffers (kernels, clusters) warm in cache for this one, no allocation per key.
      window_summary& w = window_;
      {
        auto kernels = std::move(w.kernels);
        w = window_summary{};
        w.kernels = std::move(kernels);
      }
      window_codes codes;
      bool missing = false;
      if (!read_window(payload, type == delta_window, refs_, max_code_, version_, out_.options.coarse_shift,
                       out_.options.extremes_shift, w, codes, missing)) {
        if (missing) {
          ++out_.windows_without_reference;
        } else {
          out_.damaged.push_back({offset, "inconsistent window block"});
        }
        refs_.erase(w.rank);  // later deltas of this rank wait for its next key window
        return;
      }
      w.launch = {codes.launches, value(codes.launch_interval)};
      w.kernels.resize(codes.keys.size());
      for (std::size_t i = 0; i < codes.keys.size(); ++i) {
        const auto& kc = codes.keys[i];
        kernel_summary& k = w.kernels[i];
        {
          auto clusters = std::move(k.clusters);
          auto values = std::move(k.values), knots = std::move(k.knots);
          k = kernel_summary{};
          k.clusters = std::move(clusters);
          k.clusters.clear();
          k.values = std::move(values);
          k.values.clear();
          k.knots = std::move(knots);
          k.knots.clear();
        }
        k.key = kc.key;
        k.count = kc.count;
        k.total_ns = value(kc.total);
        k.sampled = kc.sampled;
        if (kc.form == form_values) {  // the clusters are summaries of the values
          for (std::uint64_t c : kc.extra) k.values.push_back(value(c));
          std::size_t at = 0;
          for (const auto& c : kc.clusters) {
            k.clusters.push_back(stats::summarize_sorted(k.values.data() + at, static_cast<std::size_t>(c.count)));
            at += static_cast<std::size_t>(c.count);
          }
          if (version_ >= 3) k.total_ns = clusters_sum(k);  // format 3 does not store it
          continue;
        }
        if (kc.form == form_knots) {
          for (std::size_t v = 0; v < kc.extra.size(); ++v)
            (v < knot_count ? k.knots : k.values).push_back(value(kc.extra[v]));
        }
        for (const auto& c : kc.clusters) {
          stats::cluster_summary cs;
          cs.count = c.count;
          const unsigned shift = out_.options.coarse_shift;
          cs.min = value(from_coarse(c.min, out_.options.extremes_shift));
          cs.max = value(from_coarse(c.max, out_.options.extremes_shift));
          cs.mean = value(c.mean);
          cs.sum = cs.mean * static_cast<double>(c.count);
          const double sd = value(from_coarse(c.sd, shift));
          cs.variance = sd * sd;
          cs.p50 = value(c.p50);
          cs.p90 = value(c.p90);
          cs.p99 = value(from_coarse(c.p99, shift));
          k.clusters.push_back(cs);
        }
        if (version_ >= 3 && kc.sampled == kc.count) k.total_ns = clusters_sum(k);  // not stored
      }
      refs_[w.rank] = std::move(codes);
      sink(std::move(w), static_cast<const decoded_summaries&>(out_));
    } else {
      out_.damaged.push_back({offset, "unknown block type " + std::to_string(type)});
    }
  }

  // Format 3's total of a key none of whose launches was left out of its clusters: the sum of
  // the clusters' sums (each mean * count), within the precision of the means.
  static double clusters_sum(const kernel_summary& k) noexcept {
    double sum = 0;
    for (const auto& c : k.clusters) sum += c.sum;
    return sum;
  }

  // q_.value(c) memoised: a stream's durations take few distinct codes (a kernel's time
  // repeats), and exp() was 14 % of decoding. Codes below value_cache_limit are cached
  // (the 7-bit default's whole range, 180 k codes, fits), others computed; the same doubles.
  static constexpr std::uint64_t value_cache_limit = std::uint64_t{1} << 18;
  double value(std::uint64_t c) {
    if (c >= value_cache_limit) return q_.value(c);
    if (c >= value_cache_.size()) value_cache_.resize(static_cast<std::size_t>(c) + 1, -1.0);
    double& v = value_cache_[static_cast<std::size_t>(c)];
    if (v < 0) v = q_.value(c);
    return v;
  }

  std::string source_;
  std::string pending_;         // bytes fed but not decoded yet
  std::uint64_t consumed_ = 0;  // stream offset of pending_[0]
  bool header_done_ = false;
  unsigned version_ = 0;
#if FAILSLOW_HAS_ZSTD
  detail::zstd_dctx dctx_;  // made at the first zstd block
#endif
  bool in_garbage_ = false;  // inside bytes already reported as "expected a block marker"
  detail::quantizer q_{7};
  std::uint64_t max_code_ = 0;
  std::map<std::int32_t, detail::window_codes> refs_;
  window_summary window_;            // the window being decoded (buffers reused)
  std::vector<double> value_cache_;  // value(code), -1 where not computed yet
  decoded_summaries out_;
};

/// Decodes a whole .fsum byte stream, handing each window to `sink(window_summary&&, const
/// decoded_summaries& so_far)` in file order instead of keeping it (summary_decoder, fed once).
template <class Sink>
decoded_summaries decode_summaries_to(std::string_view data, Sink&& sink, std::string_view source = "<fsum>") {
  summary_decoder d{std::string(source)};
  d.feed(data, sink);
  d.finish(sink);
  return d.take();
}

/// Decodes a .fsum byte stream (see the synopsis for what damage does).
FAILSLOW_FUNC decoded_summaries decode_summaries(std::string_view data, std::string_view source = "<fsum>");

}  // namespace failslow::compress

#if FAILSLOW_HEADER_ONLY
#include "failslow/compress/impl/codec.ipp"
#endif
