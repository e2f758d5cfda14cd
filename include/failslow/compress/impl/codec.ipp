// failslow/compress/impl/codec.ipp -- the definitions of compress/codec.hpp: included by that
// header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "failslow/compress/codec.hpp"
#include "failslow/compress/detail/bytes.hpp"
#include "failslow/compress/detail/lz.hpp"
#include "failslow/compress/detail/range_coder.hpp"
#include "failslow/compress/window_summary.hpp"
#include "failslow/core/error.hpp"

#if FAILSLOW_HAS_ZSTD
#include <zstd.h>
#endif

namespace failslow::compress {

namespace detail {

// Format 3: a window's keys after the modes are one range-coded stream (range_coder.hpp).
// Durations are coded as their log-values g = unzigzag(code - 1) (code 0, a duration <= 0, is
// the wrapped INT64_MIN), so a step of the quantiser is 1, not 2 as between zigzag codes.
// Delta keys: the change of each count, the change of each cluster's mean, and the change of
// each other statistic minus the change of the mean (a cluster that moves, moves as a whole;
// sd and p99 minus the mean's change in their coarser unit), then the total's change minus
// that of the largest cluster's mean. Absolute keys: count, unsampled, clusters * 4 + form,
// the cluster sizes but the last; per cluster its mean (from the previous cluster's), the
// other statistics relative to the mean; the total relative to the largest cluster's mean (to
// the largest value in the values form); values and knots as their first log-value and
// steps. Every integer has its own context (v3_context), reset at each window, so a window
// decodes alone given its reference, as in format 2.
enum v3_context : unsigned {
  d_count,
  d_unsampled,
  d_cluster_count,
  d_mean,
  d_min,
  d_max,
  d_sd,
  d_p50,
  d_p90,
  d_p99,
  d_total,
  a_count,
  a_unsampled,
  a_form,
  a_cluster_count,
  a_mean_first,
  a_mean_next,
  a_min,
  a_max,
  a_sd,
  a_p50,
  a_p90,
  a_p99,
  a_total,
  a_value_first,
  a_value_step,
  a_top,
  a_knot_first,
  a_knot_step,
  dv_count,
  dv_first,
  v3_context_count
};
inline std::int64_t log_code(std::uint64_t code) noexcept { return unzigzag(code - 1); }
inline std::uint64_t from_log_code(std::int64_t g) noexcept { return zigzag(g) + 1; }
inline std::int64_t wrap_sub(std::int64_t a, std::int64_t b) noexcept {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b));
}
inline std::int64_t wrap_add(std::int64_t a, std::int64_t b) noexcept {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}
struct v3_models {
  std::array<int_model, v3_context_count> m;
  rc_prob mode;  // a key delta coded against the reference
  int_model& operator[](v3_context c) noexcept { return m[c]; }
};
// A coarse log-value in fine steps (the first knot is predicted by the min).
inline std::int64_t fine_of(std::int64_t coarse, unsigned shift) noexcept {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(coarse) << shift);
}
inline std::int64_t count_delta(std::uint64_t a, std::uint64_t b) noexcept { return static_cast<std::int64_t>(a - b); }
inline std::size_t largest_cluster(const std::vector<cluster_codes>& cs) noexcept {
  std::size_t big = 0;
  for (std::size_t c = 1; c < cs.size(); ++c)
    if (cs[c].count > cs[big].count) big = c;
  return big;
}
// A key's values or knots past this many are stored as clusters only in format 3.
inline constexpr std::size_t v3_max_extra = std::size_t{1} << 16;

// A duration code: a flag for code 0 (a duration <= 0, rare), else its log-value minus `pred`.
inline void put_code(range_encoder& e, int_model& m, std::uint64_t code, std::int64_t pred) {
  e.bit(m.special, code == 0);
  if (code != 0) e.put_signed(m, wrap_sub(log_code(code), pred));
}
inline bool get_code(range_decoder& d, int_model& m, std::int64_t pred, std::uint64_t& code) {
  code = 0;
  if (d.bit(m.special)) return !d.overrun();
  std::int64_t v;
  if (!d.get_signed(m, v)) return false;
  code = from_log_code(wrap_add(pred, v));
  return true;
}

// Whether format 3 codes key k against the reference's key r: clusters of the same count, or
// values against values.
inline bool v3_delta(const key_codes& k, const key_codes& r) noexcept {
  return (r.form == form_clusters && k.form == form_clusters && r.clusters.size() == k.clusters.size()) ||
         (r.form == form_values && k.form == form_values);
}

inline void encode_key_v3(range_encoder& e, v3_models& m, const key_codes& k, const key_codes* r, unsigned shift,
                          unsigned eshift) {
  const auto g = log_code;
  e.bit(m.mode, r != nullptr);
  if (r && r->form == form_values) {  // values against the reference's values
    e.put_signed(m[dv_count], count_delta(k.count, r->count));
    e.put(m[a_form], k.clusters.size() * 4 + k.form);
    for (std::size_t c = 0; c + 1 < k.clusters.size(); ++c) e.put(m[a_cluster_count], k.clusters[c].count - 1);
    put_code(e, m[dv_first], k.extra.front(), g(r->extra.front()));
    for (std::size_t v = 1; v < k.extra.size(); ++v)
      e.put_signed(m[a_value_step], wrap_sub(g(k.extra[v]), g(k.extra[v - 1])));
    return;
  }
  if (r) {  // delta against the reference (clusters, the same count of them)
    e.put_signed(m[d_count], count_delta(k.count, r->count));
    e.put_signed(m[d_unsampled], count_delta(k.count - k.sampled, r->count - r->sampled));
    std::int64_t big_move = 0;
    const std::size_t big = largest_cluster(k.clusters);
    for (std::size_t c = 0; c < k.clusters.size(); ++c) {
      const auto &a = k.clusters[c], &b = r->clusters[c];
      if (c + 1 < k.clusters.size())  // the last one's count is what the others leave of sampled
        e.put_signed(m[d_cluster_count], count_delta(a.count, b.count));
      const std::int64_t move = wrap_sub(g(a.mean), g(b.mean));
      if (c == big) big_move = move;
      put_code(e, m[d_mean], a.mean, g(b.mean));
      put_code(e, m[d_min], a.min, wrap_add(g(b.min), move >> eshift));
      put_code(e, m[d_max], a.max, wrap_add(g(b.max), move >> eshift));
      put_code(e, m[d_sd], a.sd, wrap_add(g(b.sd), move >> shift));
      put_code(e, m[d_p50], a.p50, wrap_add(g(b.p50), move));
      put_code(e, m[d_p90], a.p90, wrap_add(g(b.p90), move));
      put_code(e, m[d_p99], a.p99, wrap_add(g(b.p99), move >> shift));
    }
    if (k.sampled < k.count) put_code(e, m[d_total], k.total, wrap_add(g(r->total), big_move));
    return;
  }
  e.put(m[a_count], k.count);
  e.put(m[a_unsampled], k.count - k.sampled);
  e.put(m[a_form], k.clusters.size() * 4 + k.form);
  for (std::size_t c = 0; c + 1 < k.clusters.size(); ++c) e.put(m[a_cluster_count], k.clusters[c].count - 1);
  if (k.form == form_values) {
    put_code(e, m[a_value_first], k.extra.front(), 0);
    for (std::size_t v = 1; v < k.extra.size(); ++v)
      e.put_signed(m[a_value_step], wrap_sub(g(k.extra[v]), g(k.extra[v - 1])));
    return;
  }
  std::int64_t previous_mean = 0;
  for (std::size_t c = 0; c < k.clusters.size(); ++c) {
    const auto& a = k.clusters[c];
    put_code(e, m[c == 0 ? a_mean_first : a_mean_next], a.mean, previous_mean);
    const std::int64_t mean = g(a.mean);
    previous_mean = mean;
    put_code(e, m[a_min], a.min, mean >> eshift);
    put_code(e, m[a_max], a.max, mean >> eshift);
    put_code(e, m[a_sd], a.sd, mean >> shift);
    put_code(e, m[a_p50], a.p50, mean);
    put_code(e, m[a_p90], a.p90, mean);
    put_code(e, m[a_p99], a.p99, mean >> shift);
  }
  const std::int64_t big_mean = k.clusters.empty() ? 0 : g(k.clusters[largest_cluster(k.clusters)].mean);
  if (k.sampled < k.count) put_code(e, m[a_total], k.total, big_mean);
  if (k.form == form_knots) {
    e.put(m[a_top], k.extra.size() - knot_count);
    put_code(e, m[a_knot_first], k.extra.front(), k.clusters.empty() ? 0 : fine_of(g(k.clusters.front().min), eshift));
    for (std::size_t v = 1; v < k.extra.size(); ++v)
      e.put_signed(m[a_knot_step], wrap_sub(g(k.extra[v]), g(k.extra[v - 1])));
  }
}

}  // namespace detail

FAILSLOW_FUNC_DEF summary_encoder::summary_encoder(std::function<std::string(name_id)> name_of, codec_options opt)
    : name_of_(std::move(name_of)), opt_(opt), q_(opt.precision_bits) {
  if (opt_.precision_bits < 4 || opt_.precision_bits > 20)
    throw invalid_argument("summary_encoder: precision_bits must be in [4, 20]");
  if (opt_.key_frame_interval < 1 || opt_.key_frame_interval > 65535)
    throw invalid_argument("summary_encoder: key_frame_interval must be in [1, 65535]");
  if (!name_of_) throw invalid_argument("summary_encoder: no name lookup");
  if (opt_.zstd_level < 0 || opt_.zstd_level > 19)
    throw invalid_argument("summary_encoder: zstd_level must be in [0, 19]");
  if (opt_.zstd_level > 0 && !zstd_available)
    throw invalid_argument(
        "summary_encoder: zstd_level > 0 but this build has no zstd (configure with -DFAILSLOW_WITH_ZSTD=ON, "
        "Debian libzstd-dev)");
  if (opt_.group_bytes < 1024 || opt_.group_bytes > (std::size_t{16} << 20))
    throw invalid_argument("summary_encoder: group_bytes must be in [1 KiB, 16 MiB]");
  if (opt_.coarse_shift > 6) throw invalid_argument("summary_encoder: coarse_shift must be in [0, 6]");
  if (opt_.format_version < 2 || opt_.format_version > detail::file_version)
    throw invalid_argument("summary_encoder: format_version must be 2, 3 or 4");
  if (opt_.extremes_shift > 6 || (opt_.extremes_shift > 0 && opt_.format_version < 3))
    throw invalid_argument("summary_encoder: extremes_shift must be in [0, 6], and 0 in format 2");
}

FAILSLOW_FUNC_DEF std::string summary_encoder::header() const {
  std::string h(detail::file_magic);
  h.push_back(static_cast<char>(opt_.format_version));
  h.push_back(static_cast<char>(opt_.precision_bits));
  h.push_back(static_cast<char>(opt_.key_frame_interval & 0xFF));
  h.push_back(static_cast<char>(opt_.key_frame_interval >> 8));
  h.push_back(static_cast<char>(opt_.coarse_shift));                                  // version 2
  if (opt_.format_version >= 3) h.push_back(static_cast<char>(opt_.extremes_shift));  // version 3
  return h;
}

FAILSLOW_FUNC_DEF void summary_encoder::encode(const window_summary& w, std::string& out) {
  std::string ids, text;
  std::uint64_t new_names = 0;
  for (const auto& k : w.kernels) {
    if (!written_names_.insert(k.key).second) continue;
    const std::string n = name_of_(k.key);
    detail::put_varint(ids, k.key);
    detail::put_varint(ids, n.size());
    text += n;
    ++new_names;
  }
  if (new_names) {  // count, (id, length)*, then the names' bytes as one LZ stream
    std::string payload;
    detail::put_varint(payload, new_names);
    payload += ids;
    detail::put_varint(payload, text.size());
    detail::lz_compress(text, payload);
    put_block(out, detail::names_block, payload);
  }
  state& st = ranks_[w.rank];
  const bool key = !st.has_ref || st.since_key + 1 >= opt_.key_frame_interval;
  detail::window_codes codes = quantize(w);
  std::string payload;
  detail::put_varint(payload, detail::zigzag(w.rank));
  detail::put_varint(payload, w.window_id);
  if (!key) detail::put_varint(payload, st.ref.window_id);
  detail::put_varint(payload, detail::zigzag(w.start_ns));
  detail::put_varint(payload, detail::zigzag(w.end_ns - w.start_ns));
  detail::put_varint(payload, w.skipped.invalid_duration);
  detail::put_varint(payload, w.skipped.invalid_key);
  detail::put_varint(payload, w.skipped.no_window);
  detail::put_varint(payload, w.subsampled);
  detail::put_varint(payload, codes.keys.size());
  // Layout 1: the same key list as the reference (the steady state), so no key ids are
  // written; layout 0: the key ids. Then one mode bit per key (1 = delta coded).
  bool same_keys = !key && st.ref.keys.size() == codes.keys.size();
  for (std::size_t i = 0; same_keys && i < codes.keys.size(); ++i) same_keys = st.ref.keys[i].key == codes.keys[i].key;
  // Format 4: bit 1 of the layout byte says the host's launch pace follows (two varints).
  const bool pace = opt_.format_version >= 4 && w.launch.launches > 0;
  payload.push_back(static_cast<char>((same_keys ? 1 : 0) | (pace ? 2 : 0)));
  if (pace) {
    detail::put_varint(payload, w.launch.launches);
    detail::put_varint(payload, q_.code(w.launch.median_interval_ns));
  }
  std::string modes((codes.keys.size() + 7) / 8, '\0');
  name_id prev = 0;
  for (std::size_t i = 0; i < codes.keys.size(); ++i) {
    const auto& k = codes.keys[i];
    const detail::key_codes* r = key ? nullptr : st.ref.find(k.key);
    if (r && (opt_.format_version >= 3 ? detail::v3_delta(k, *r)
                                       : r->clusters.size() == k.clusters.size() && r->form == detail::form_clusters &&
                                             k.form == detail::form_clusters))
      modes[i / 8] = static_cast<char>(static_cast<unsigned char>(modes[i / 8]) | (1u << (i % 8)));
    if (!same_keys) detail::put_varint(payload, k.key - prev);
    prev = k.key;
  }
  if (opt_.format_version >= 3) {  // the keys, their modes included, as one range-coded stream
    for (auto& k : codes.keys)     // a total is stored only where the clusters do not give it
      if (k.sampled == k.count) k.total = 0;
    detail::range_encoder e;
    auto models = std::make_unique<detail::v3_models>();
    for (std::size_t i = 0; i < codes.keys.size(); ++i) {
      const bool delta = (static_cast<unsigned char>(modes[i / 8]) >> (i % 8)) & 1;
      detail::encode_key_v3(e, *models, codes.keys[i], delta ? st.ref.find(codes.keys[i].key) : nullptr,
                            opt_.coarse_shift, opt_.extremes_shift);
    }
    e.finish(payload);
  } else {
    payload += modes;
    encode_keys_v2(codes, st.ref, modes, payload);
  }
  put_block(out, key ? detail::key_window : detail::delta_window, payload);
  codes.window_id = w.window_id;
  st.ref = std::move(codes);
  st.has_ref = true;
  st.since_key = key ? 0 : st.since_key + 1;
  if (opt_.zstd_level > 0 && group_.size() >= opt_.group_bytes) flush(out);
}

FAILSLOW_FUNC_DEF void summary_encoder::encode_keys_v2(const detail::window_codes& codes,
                                                       const detail::window_codes& ref, const std::string& modes,
                                                       std::string& payload) {
  detail::nibble_writer deltas;
  for (std::size_t i = 0; i < codes.keys.size(); ++i) {
    const auto& k = codes.keys[i];
    const bool delta = (static_cast<unsigned char>(modes[i / 8]) >> (i % 8)) & 1;
    const detail::key_codes* r = delta ? ref.find(k.key) : nullptr;
    auto diff = [](std::uint64_t a, std::uint64_t b) { return static_cast<std::int64_t>(a - b); };
    if (delta) {
      deltas.put(diff(k.count, r->count));
      deltas.put(diff(k.total, r->total));
      deltas.put(diff(k.count - k.sampled, r->count - r->sampled));
      for (std::size_t c = 0; c < k.clusters.size(); ++c) {
        const auto &a = k.clusters[c], &b = r->clusters[c];
        for (auto [x, y] : {std::pair{a.count, b.count},
                            {a.min, b.min},
                            {a.max, b.max},
                            {a.mean, b.mean},
                            {a.sd, b.sd},
                            {a.p50, b.p50},
                            {a.p90, b.p90},
                            {a.p99, b.p99}})
          deltas.put(diff(x, y));
      }
    } else {
      detail::put_varint(payload, k.count);
      detail::put_varint(payload, k.total);
      detail::put_varint(payload, k.count - k.sampled);
      detail::put_varint(payload, k.clusters.size() * 4 + k.form);
      if (k.form == detail::form_values) {  // cluster sizes, the first value; the steps as nibbles
        for (std::size_t c = 0; c + 1 < k.clusters.size(); ++c) detail::put_varint(payload, k.clusters[c].count);
        detail::put_varint(payload, k.extra.front());
        for (std::size_t v = 1; v < k.extra.size(); ++v) deltas.put(diff(k.extra[v], k.extra[v - 1]));
        continue;
      }
      for (const auto& a : k.clusters)
        for (std::uint64_t x : {a.count, a.min, a.max, a.mean, a.sd, a.p50, a.p90, a.p99})
          detail::put_varint(payload, x);
      if (k.form == detail::form_knots) {
        detail::put_varint(payload, k.extra.size() - knot_count);  // the top values
        detail::put_varint(payload, k.extra.front());
        for (std::size_t v = 1; v < k.extra.size(); ++v) detail::put_varint(payload, k.extra[v] - k.extra[v - 1]);
      }
    }
  }
  deltas.finish(payload);
}

FAILSLOW_FUNC_DEF void summary_encoder::flush(std::string& out) {
  if (group_.empty()) return;
#if FAILSLOW_HAS_ZSTD
  if (!cctx_) cctx_.reset(ZSTD_createCCtx());
  if (!cctx_) throw invalid_argument("summary_encoder: ZSTD_createCCtx failed");
  std::string frame(ZSTD_compressBound(group_.size()), '\0');
  const std::size_t n =
      ZSTD_compressCCtx(cctx_.get(), frame.data(), frame.size(), group_.data(), group_.size(), opt_.zstd_level);
  if (ZSTD_isError(n)) throw invalid_argument(std::string("summary_encoder: zstd: ") + ZSTD_getErrorName(n));
  frame.resize(n);
  write_block(out, detail::group_block | detail::zstd_flag, frame);
#else
  (void)out;
#endif
  group_.clear();
}

FAILSLOW_FUNC_DEF void summary_encoder::put_block(std::string& out, std::uint8_t type, const std::string& payload) {
  if (opt_.zstd_level > 0) {
    group_.push_back(static_cast<char>(type));
    detail::put_varint(group_, payload.size());
    group_ += payload;
    return;
  }
  write_block(out, type, payload);
}

FAILSLOW_FUNC_DEF void summary_encoder::write_block(std::string& out, std::uint8_t type, const std::string& payload) {
  out += detail::block_magic;
  out.push_back(static_cast<char>(type));
  detail::put_varint(out, payload.size());
  out += payload;
  std::string crc_input(1, static_cast<char>(type));
  detail::put_u32(out, detail::crc32c(payload, detail::crc32c(crc_input)));
}

FAILSLOW_FUNC_DEF detail::window_codes summary_encoder::quantize(const window_summary& w) const {
  detail::window_codes c;
  for (const auto& k : w.kernels) {
    detail::key_codes kc{k.key, k.count, q_.code(k.total_ns), k.sampled, {}, detail::form_clusters, {}};
    for (const auto& s : k.clusters)
      kc.clusters.push_back({s.count, q_.code(s.min, opt_.extremes_shift), q_.code(s.max, opt_.extremes_shift),
                             q_.code(s.mean), coarse(std::sqrt(s.variance)), q_.code(s.p50), q_.code(s.p90),
                             coarse(s.p99)});
    // Values only where they are all the key's durations and the clusters partition them.
    std::uint64_t in_clusters = 0;
    for (const auto& s : k.clusters) in_clusters += s.count;
    if (!k.values.empty() && k.values.size() == k.count && k.sampled == k.count && in_clusters == k.count &&
        !k.clusters.empty() && (opt_.format_version < 3 || k.values.size() <= detail::v3_max_extra)) {
      kc.form = detail::form_values;
      for (double v : k.values) kc.extra.push_back(q_.code(v));
    } else if (k.knots.size() == knot_count && k.values.size() <= top_values_limit && k.values.size() <= k.sampled) {
      kc.form = detail::form_knots;  // the knots, then the top values (all ascending)
      for (double v : k.knots) kc.extra.push_back(q_.code(v));
      for (double v : k.values) kc.extra.push_back(q_.code(v));
    }
    // Codes of ascending values ascend (zigzag is not monotone around 0: log values below
    // 1 ns); anything else is stored as clusters only.
    if (kc.form != detail::form_clusters && !std::is_sorted(kc.extra.begin(), kc.extra.end())) {
      kc.form = detail::form_clusters;
      kc.extra.clear();
    }
    c.keys.push_back(std::move(kc));
  }
  std::sort(c.keys.begin(), c.keys.end(), [](const auto& a, const auto& b) { return a.key < b.key; });
  return c;
}

namespace detail {

// Format 3: the range-coded keys (encode_key_v3) from the rest of `r`; false on any
// inconsistency or a stream that is not used up exactly.
template <class = void>
inline bool read_keys_v3(byte_reader& r, window_codes& codes, const window_codes* ref, bool same_keys, unsigned shift,
                         unsigned eshift) {
  std::string_view rest;
  if (!r.bytes(r.remaining(), rest)) return false;
  range_decoder d(rest);
  auto models = std::make_unique<v3_models>();
  v3_models& m = *models;
  const auto g = log_code;
  // Clusters and values a window may declare: a coded integer costs at least ~0.02 bits, so a
  // valid stream stays far below this; damage cannot make the decoder allocate without bound.
  std::uint64_t budget = 512 * static_cast<std::uint64_t>(rest.size()) + 65536;
  std::int64_t v;
  std::uint64_t u;
  // The cluster sizes but the last (which makes them add up to kc.sampled).
  auto cluster_sizes = [&](key_codes& kc, std::uint64_t nc) {
    if (nc > kc.sampled || nc > budget) return false;
    budget -= nc;
    kc.clusters.assign(static_cast<std::size_t>(nc), cluster_codes{});
    std::uint64_t left = kc.sampled;
    for (std::size_t c = 0; c + 1 < kc.clusters.size(); ++c) {
      if (!d.get(m[a_cluster_count], u) || u >= left - 1) return false;
      kc.clusters[c].count = u + 1;
      left -= u + 1;
    }
    if (!kc.clusters.empty()) kc.clusters.back().count = left;
    return true;
  };
  // Ascending codes from the first (decoded) and the steps between log-values.
  auto steps = [&](key_codes& kc, v3_context ctx, std::uint64_t n) {
    kc.extra.reserve(static_cast<std::size_t>(n));  // n is bounded by the budget above
    std::int64_t at = g(kc.extra.back());
    for (std::uint64_t i = 1; i < n; ++i) {
      if (!d.get_signed(m[ctx], v)) return false;
      at = wrap_add(at, v);
      kc.extra.push_back(from_log_code(at));
      if (kc.extra.back() < kc.extra[kc.extra.size() - 2]) return false;  // the encoder's are ascending
    }
    return true;
  };
  for (std::size_t i = 0; i < codes.keys.size(); ++i) {
    key_codes& kc = codes.keys[i];
    kc.extra.clear();
    kc.form = form_clusters;
    const bool delta = d.bit(m.mode) != 0;
    const key_codes* rk = !delta || !ref ? nullptr : same_keys ? &ref->keys[i] : ref->find(kc.key);
    if (delta && !rk) return false;
    if (rk && rk->form == form_values) {  // values against the reference's values
      std::uint64_t form, first;
      if (!d.get_signed(m[dv_count], v) || !d.get(m[a_form], form)) return false;
      kc.count = kc.sampled = rk->count + static_cast<std::uint64_t>(v);
      kc.form = form_values;
      if (form % 4 != form_values || kc.count == 0 || kc.count > v3_max_extra || kc.count > budget) return false;
      budget -= kc.count;
      if (!cluster_sizes(kc, form / 4) || kc.clusters.empty() || !get_code(d, m[dv_first], g(rk->extra.front()), first))
        return false;
      kc.extra.push_back(first);
      if (!steps(kc, a_value_step, kc.count)) return false;
      kc.total = 0;  // the sum of the values
      continue;
    }
    if (rk) {  // clusters against the reference's, the same count of them
      if (rk->form != form_clusters) return false;
      std::int64_t du;
      if (!d.get_signed(m[d_count], v) || !d.get_signed(m[d_unsampled], du)) return false;
      kc.count = rk->count + static_cast<std::uint64_t>(v);
      const std::uint64_t unsampled = (rk->count - rk->sampled) + static_cast<std::uint64_t>(du);
      if (unsampled > kc.count) return false;
      kc.sampled = kc.count - unsampled;
      kc.clusters.resize(rk->clusters.size());
      std::vector<std::int64_t> moves(kc.clusters.size());
      std::uint64_t left = kc.sampled;
      for (std::size_t c = 0; c < kc.clusters.size(); ++c) {
        const auto& b = rk->clusters[c];
        auto& a = kc.clusters[c];
        if (c + 1 < kc.clusters.size()) {
          if (!d.get_signed(m[d_cluster_count], v)) return false;
          a.count = b.count + static_cast<std::uint64_t>(v);
          if (a.count == 0 || a.count >= left) return false;
          left -= a.count;
        } else {
          a.count = left;
        }
        if (!get_code(d, m[d_mean], g(b.mean), a.mean)) return false;
        const std::int64_t move = moves[c] = wrap_sub(g(a.mean), g(b.mean));
        if (!get_code(d, m[d_min], wrap_add(g(b.min), move >> eshift), a.min) ||
            !get_code(d, m[d_max], wrap_add(g(b.max), move >> eshift), a.max) ||
            !get_code(d, m[d_sd], wrap_add(g(b.sd), move >> shift), a.sd) ||
            !get_code(d, m[d_p50], wrap_add(g(b.p50), move), a.p50) ||
            !get_code(d, m[d_p90], wrap_add(g(b.p90), move), a.p90) ||
            !get_code(d, m[d_p99], wrap_add(g(b.p99), move >> shift), a.p99))
          return false;
      }
      const std::int64_t big_move = kc.clusters.empty() ? 0 : moves[largest_cluster(kc.clusters)];
      kc.total = 0;  // the clusters' sum unless subsampled
      if (kc.sampled < kc.count && !get_code(d, m[d_total], wrap_add(g(rk->total), big_move), kc.total)) return false;
      continue;
    }
    std::uint64_t unsampled, form;
    if (!d.get(m[a_count], kc.count) || !d.get(m[a_unsampled], unsampled) || !d.get(m[a_form], form)) return false;
    if (unsampled > kc.count || form % 4 > form_knots) return false;
    kc.sampled = kc.count - unsampled;
    kc.form = static_cast<std::uint8_t>(form % 4);
    if (!cluster_sizes(kc, form / 4)) return false;
    if (kc.form == form_values) {
      if (unsampled != 0 || kc.clusters.empty() || kc.count > v3_max_extra || kc.count > budget) return false;
      budget -= kc.count;
      std::uint64_t first;
      if (!get_code(d, m[a_value_first], 0, first)) return false;
      kc.extra.push_back(first);
      if (!steps(kc, a_value_step, kc.count)) return false;
      kc.total = 0;
      continue;
    }
    std::int64_t previous_mean = 0;
    for (std::size_t c = 0; c < kc.clusters.size(); ++c) {
      auto& a = kc.clusters[c];
      if (!get_code(d, m[c == 0 ? a_mean_first : a_mean_next], previous_mean, a.mean)) return false;
      const std::int64_t mean = previous_mean = g(a.mean);
      if (!get_code(d, m[a_min], mean >> eshift, a.min) || !get_code(d, m[a_max], mean >> eshift, a.max) ||
          !get_code(d, m[a_sd], mean >> shift, a.sd) || !get_code(d, m[a_p50], mean, a.p50) ||
          !get_code(d, m[a_p90], mean, a.p90) || !get_code(d, m[a_p99], mean >> shift, a.p99))
        return false;
    }
    const std::int64_t big_mean = kc.clusters.empty() ? 0 : g(kc.clusters[largest_cluster(kc.clusters)].mean);
    kc.total = 0;
    if (kc.sampled < kc.count && !get_code(d, m[a_total], big_mean, kc.total)) return false;
    if (kc.form == form_knots) {
      std::uint64_t top, first;
      if (!d.get(m[a_top], top) || top > top_values_limit || top > kc.sampled) return false;
      if (!get_code(d, m[a_knot_first], kc.clusters.empty() ? 0 : fine_of(g(kc.clusters.front().min), eshift), first))
        return false;
      kc.extra.push_back(first);
      if (!steps(kc, a_knot_step, knot_count + top)) return false;
    }
  }
  return d.exhausted();
}

FAILSLOW_FUNC_DEF bool read_window(std::string_view payload, bool is_delta,
                                   const std::map<std::int32_t, window_codes>& refs, std::uint64_t max_code,
                                   unsigned version, unsigned coarse_shift, unsigned extremes_shift, window_summary& w,
                                   window_codes& codes, bool& missing_reference) {
  byte_reader r(payload);
  std::uint64_t u, ref_id = 0;
  std::int64_t s;
  missing_reference = false;
  if (!r.svarint(s) || s < std::numeric_limits<std::int32_t>::min() || s > std::numeric_limits<std::int32_t>::max())
    return false;
  w.rank = static_cast<std::int32_t>(s);
  if (!r.varint(w.window_id)) return false;
  const window_codes* ref = nullptr;
  if (is_delta) {
    if (!r.varint(ref_id)) return false;
    auto it = refs.find(w.rank);
    if (it == refs.end() || it->second.window_id != ref_id) {
      missing_reference = true;
      return false;
    }
    ref = &it->second;
  }
  std::int64_t span;
  if (!r.svarint(w.start_ns) || !r.svarint(span)) return false;
  if (span > 0 ? w.start_ns > std::numeric_limits<std::int64_t>::max() - span
               : w.start_ns < std::numeric_limits<std::int64_t>::min() - span)
    return false;
  w.end_ns = w.start_ns + span;
  if (!r.varint(w.skipped.invalid_duration) || !r.varint(w.skipped.invalid_key) || !r.varint(w.skipped.no_window) ||
      !r.varint(w.subsampled) || !r.varint(u))
    return false;
  // Each key takes at least one byte, but in format 3 a delta window with the reference's key
  // list (of its size) may take less.
  if (u > r.remaining() && (version < 3 || !ref || u != ref->keys.size())) return false;
  const std::uint64_t nkeys = u;
  codes.window_id = w.window_id;
  codes.keys.assign(static_cast<std::size_t>(nkeys), key_codes{});  // every field is set below
  // First pass: keys, modes and absolute values; delta keys are completed from the nibble
  // section that follows the key list.
  std::string_view layout, modes;
  if (!r.bytes(1, layout)) return false;
  const auto flags = static_cast<unsigned char>(layout[0]);
  if (flags > (version >= 4 ? 3u : 1u)) return false;
  const bool same_keys = (flags & 1) != 0;
  if ((flags & 2) != 0 &&
      (!r.varint(codes.launches) || !r.varint(codes.launch_interval) || codes.launch_interval > max_code))
    return false;
  if (same_keys) {  // the reference's key list
    if (!ref || ref->keys.size() != nkeys) return false;
    for (std::size_t i = 0; i < codes.keys.size(); ++i) codes.keys[i].key = ref->keys[i].key;
  } else {
    std::uint64_t key = 0;
    for (std::uint64_t i = 0; i < nkeys; ++i) {
      if (!r.varint(u) || (i > 0 && u == 0)) return false;
      key += u;
      if (key > std::numeric_limits<name_id>::max()) return false;
      codes.keys[static_cast<std::size_t>(i)].key = static_cast<name_id>(key);
    }
  }
  // A delta key's reference: the same position when the key lists are the same.
  auto ref_key = [&](std::size_t i) { return same_keys ? &ref->keys[i] : ref->find(codes.keys[i].key); };
  auto delta_mode = [&](std::size_t i) { return (static_cast<unsigned char>(modes[i / 8]) >> (i % 8)) & 1; };
  bool any_delta = false;
  if (version >= 3 && !read_keys_v3(r, codes, ref, same_keys, coarse_shift, extremes_shift)) return false;
  if (version < 3 && !r.bytes(static_cast<std::size_t>((nkeys + 7) / 8), modes)) return false;
  for (std::size_t i = 0; version < 3 && i < codes.keys.size(); ++i) {
    key_codes& kc = codes.keys[i];
    if (delta_mode(i)) {
      if (!ref || !ref_key(i)) return false;
      any_delta = true;
      continue;
    }
    std::uint64_t nc, unsampled;
    if (!r.varint(kc.count) || !r.varint(kc.total) || !r.varint(unsampled) || !r.varint(nc)) return false;
    kc.form = form_clusters;
    kc.extra.clear();
    if (version >= 2) {
      if (nc % 4 > form_knots) return false;
      kc.form = static_cast<std::uint8_t>(nc % 4);
      nc /= 4;
    }
    if (unsampled > kc.count) return false;
    kc.sampled = kc.count - unsampled;
    if (kc.form == form_values) {  // cluster sizes (the last one implied), the first value
      if (unsampled != 0 || nc == 0 || nc > kc.count || kc.count > 2 * r.remaining() + 1) return false;
      kc.clusters.assign(nc, cluster_codes{});
      std::uint64_t left = kc.count;
      for (std::size_t c = 0; c + 1 < nc; ++c) {
        if (!r.varint(kc.clusters[c].count) || kc.clusters[c].count == 0 || kc.clusters[c].count >= left) return false;
        left -= kc.clusters[c].count;
      }
      kc.clusters.back().count = left;
      std::uint64_t first;
      if (!r.varint(first) || first > max_code) return false;
      kc.extra.push_back(first);
      any_delta = true;  // the remaining values are in the nibble section
      continue;
    }
    if (nc > r.remaining() / 8) return false;  // eight fields of a byte or more
    kc.clusters.resize(nc);
    for (auto& a : kc.clusters)
      if (!r.varint(a.count) || !r.varint(a.min) || !r.varint(a.max) || !r.varint(a.mean) || !r.varint(a.sd) ||
          !r.varint(a.p50) || !r.varint(a.p90) || !r.varint(a.p99))
        return false;
    if (kc.form == form_knots) {  // knot_count + top codes: the first, then the ascending steps
      std::uint64_t top, code, step;
      if (!r.varint(top) || top > top_values_limit || top > kc.sampled || !r.varint(code)) return false;
      kc.extra.push_back(code);
      for (std::size_t v = 1; v < knot_count + top; ++v) {
        if (!r.varint(step) || step > max_code) return false;
        kc.extra.push_back(code += step);
      }
    }
  }
  nibble_reader deltas;
  if (version < 3 && !deltas.open(r)) return false;
  for (std::size_t i = 0; any_delta && i < codes.keys.size(); ++i) {
    key_codes& kc = codes.keys[i];
    if (!delta_mode(i) && kc.form == form_values) {  // the steps between ascending values
      for (std::uint64_t v = 1; v < kc.count; ++v) {
        std::int64_t d;
        if (!deltas.get(d) || d < 0 || static_cast<std::uint64_t>(d) > max_code) return false;
        kc.extra.push_back(kc.extra.back() + static_cast<std::uint64_t>(d));
      }
      continue;
    }
    if (!delta_mode(i)) continue;
    const key_codes* rk = ref_key(i);
    auto delta = [&](std::uint64_t base, std::uint64_t& out) {
      std::int64_t d;
      if (!deltas.get(d)) return false;
      out = base + static_cast<std::uint64_t>(d);
      return true;
    };
    std::uint64_t unsampled;
    if (!delta(rk->count, kc.count) || !delta(rk->total, kc.total) || !delta(rk->count - rk->sampled, unsampled))
      return false;
    if (unsampled > kc.count) return false;
    kc.sampled = kc.count - unsampled;
    kc.form = form_clusters;
    kc.extra.clear();
    kc.clusters.resize(rk->clusters.size());
    for (std::size_t c = 0; c < rk->clusters.size(); ++c) {
      const auto& b = rk->clusters[c];
      auto& a = kc.clusters[c];
      if (!delta(b.count, a.count) || !delta(b.min, a.min) || !delta(b.max, a.max) || !delta(b.mean, a.mean) ||
          !delta(b.sd, a.sd) || !delta(b.p50, a.p50) || !delta(b.p90, a.p90) || !delta(b.p99, a.p99))
        return false;
    }
  }
  if (any_delta && !deltas.exhausted()) return false;
  // Consistency: sampled <= count, cluster counts add up to sampled, every duration code
  // decodes to a finite positive double (or is 0).
  for (const auto& kc : codes.keys) {
    std::uint64_t in_clusters = 0;
    if (kc.total > max_code) return false;
    for (std::uint64_t c : kc.extra)
      if (c > max_code) return false;
    for (const auto& a : kc.clusters) {
      if (a.count == 0 || a.count > kc.sampled) return false;
      for (std::uint64_t c : {a.min, a.max, a.mean, a.sd, a.p50, a.p90, a.p99})
        if (c > max_code) return false;
      for (std::uint64_t c : {a.sd, a.p99})  // stored coarse (codec_options::coarse_shift)
        if (from_coarse(c, coarse_shift) > max_code) return false;
      for (std::uint64_t c : {a.min, a.max})  // codec_options::extremes_shift
        if (from_coarse(c, extremes_shift) > max_code) return false;
      in_clusters += a.count;
    }
    if (kc.sampled > kc.count || in_clusters != kc.sampled) return false;
  }
  return r.remaining() == 0;
}

}  // namespace detail

FAILSLOW_FUNC_DEF decoded_summaries decode_summaries(std::string_view data, std::string_view source) {
  std::vector<window_summary> windows;
  auto out = decode_summaries_to(
      data, [&](window_summary&& w, const decoded_summaries&) { windows.push_back(std::move(w)); }, source);
  out.windows = std::move(windows);
  return out;
}

}  // namespace failslow::compress
