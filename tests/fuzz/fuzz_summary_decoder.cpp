// libFuzzer target for the .fsum decoder (compress/codec.hpp): any input either fails on its file
// header with failslow::parse_error or decodes, reporting damage instead of failing, and never
// crashes, hangs or reads out of bounds (run it with ASan+UBSan). What decodes is well formed
// (keys ascending, sampled <= count) and re-encodes to bytes that decode to the same windows.
// Each input is decoded twice: as it is (the CRC path), and with every block's CRC-32C repaired,
// so that mutations reach the payload parser instead of stopping at the checksum.
//   tests/fuzz: cmake -DFAILSLOW_BUILD_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ ...;
//   ./seed_fsum_corpus corpus/ && ./fuzz_summary_decoder -max_total_time=30 corpus/
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <failslow/compress/codec.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace {

bool same(const failslow::compress::window_summary& a, const failslow::compress::window_summary& b) {
  if (a.rank != b.rank || a.window_id != b.window_id || a.start_ns != b.start_ns || a.end_ns != b.end_ns ||
      a.kernels.size() != b.kernels.size() || a.subsampled != b.subsampled || a.skipped.total() != b.skipped.total())
    return false;
  for (std::size_t i = 0; i < a.kernels.size(); ++i) {
    const auto &x = a.kernels[i], &y = b.kernels[i];
    if (x.key != y.key || x.count != y.count || x.sampled != y.sampled || x.clusters.size() != y.clusters.size())
      return false;
    for (std::size_t c = 0; c < x.clusters.size(); ++c)
      if (x.clusters[c].count != y.clusters[c].count || x.clusters[c].p50 != y.clusters[c].p50 ||
          x.clusters[c].p99 != y.clusters[c].p99 || x.clusters[c].max != y.clusters[c].max)
        return false;
  }
  return true;
}

// Rewrites the CRC of every well-delimited block so that the payload is what gets checked.
std::string with_repaired_crcs(std::string s) {
  namespace d = failslow::compress::detail;
  for (std::size_t pos = 8; pos + 4 <= s.size(); ++pos) {
    if (std::string_view(s).substr(pos, 4) != d::block_magic) continue;
    d::byte_reader r(std::string_view(s).substr(pos + 4));
    std::string_view type, payload;
    std::uint64_t length;
    if (!r.bytes(1, type) || !r.varint(length) || length > r.remaining() || !r.bytes(length, payload) ||
        r.remaining() < 4)
      continue;
    const std::uint32_t crc = d::crc32c(payload, d::crc32c(type));
    const std::size_t at = pos + 4 + r.position();
    for (int i = 0; i < 4; ++i) s[at + static_cast<std::size_t>(i)] = static_cast<char>((crc >> (8 * i)) & 0xFF);
    pos = at + 3;
  }
  return s;
}

void check(std::string_view input) {
  failslow::compress::decoded_summaries d;
  try {
    d = failslow::compress::decode_summaries(input, "<fuzz>");
  } catch (const failslow::parse_error&) {
    return;  // a missing or unknown file header: the one documented exception
  }
  for (const auto& b : d.damaged)
    if (b.offset > input.size()) std::abort();
  for (const auto& w : d.windows) {
    std::uint64_t prev = 0;
    for (std::size_t i = 0; i < w.kernels.size(); ++i) {
      const auto& k = w.kernels[i];
      if (i > 0 && k.key <= prev) std::abort();  // keys strictly ascending
      prev = k.key;
      if (k.sampled > k.count) std::abort();
    }
  }
  // Fed in pieces (sizes from the input's own bytes), the streaming decoder agrees.
  {
    failslow::compress::summary_decoder dec("<fuzz pieces>");
    std::vector<failslow::compress::window_summary> got;
    auto sink = [&](failslow::compress::window_summary&& w, const failslow::compress::decoded_summaries&) {
      got.push_back(std::move(w));
    };
    std::size_t at = 0, k = 0;
    while (at < input.size()) {
      const std::size_t n =
          std::min<std::size_t>(input.size() - at, 1 + static_cast<unsigned char>(input[k++ % input.size()]) % 64);
      dec.feed(input.substr(at, n), sink);
      at += n;
    }
    dec.finish(sink);
    const auto& st = dec.state();
    if (got.size() != d.windows.size() || st.damaged.size() != d.damaged.size() ||
        st.windows_without_reference != d.windows_without_reference || st.names != d.names)
      std::abort();
    for (std::size_t i = 0; i < got.size(); ++i)
      if (!same(got[i], d.windows[i])) std::abort();
    for (std::size_t i = 0; i < st.damaged.size(); ++i)
      if (st.damaged[i].offset != d.damaged[i].offset || st.damaged[i].reason != d.damaged[i].reason) std::abort();
  }
  // Whatever decoded re-encodes (names as decoded) and decodes to the same windows; format 1 is read
  // but no longer written, so its windows re-encode as format 2.
  auto options = d.options;
  options.format_version = std::max(options.format_version, 2u);
  failslow::compress::summary_encoder enc(
      [&](failslow::name_id id) {
        const auto it = d.names.find(id);
        return it == d.names.end() ? std::string("?") : it->second;
      },
      options);
  std::string again = enc.header();
  for (const auto& w : d.windows) enc.encode(w, again);
  const auto d2 = failslow::compress::decode_summaries(again, "<fuzz re-encoded>");
  if (!d2.damaged.empty() || d2.windows.size() != d.windows.size()) std::abort();
  for (std::size_t i = 0; i < d.windows.size(); ++i)
    if (!same(d.windows[i], d2.windows[i])) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  check(input);
  check(with_repaired_crcs(input));
  return 0;
}
