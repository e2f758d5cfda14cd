#include <catch2/catch.hpp>
#include <cmath>
#include <failslow/compress/codec.hpp>
#include <failslow/compress/window_compressor.hpp>
#include <failslow/core/name_table.hpp>
#include <failslow/stats/descriptive.hpp>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

using namespace failslow;
using namespace failslow::compress;

namespace {
// Windows of several ranks: steady kernels, one bimodal, one appearing late.
std::vector<window_summary> make_windows(name_table& names, int ranks, int windows, std::uint64_t seed) {
  std::vector<window_summary> out;
  std::vector<window_compressor> comps;
  for (int r = 0; r < ranks; ++r) comps.emplace_back(r, [&](window_summary&& w) { out.push_back(std::move(w)); });
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0, 1);
  std::vector<name_id> keys;
  for (int k = 0; k < 40; ++k) keys.push_back(names.intern("kernel_" + std::to_string(k) + "<float, 128>(float*)"));
  const name_id late = names.intern("jit_compiled_kernel");
  for (std::int64_t w = 0; w < windows; ++w) {  // 64-bit: w * 1e8 ns exceeds int
    for (int r = 0; r < ranks; ++r) {
      auto& c = comps[static_cast<std::size_t>(r)];
      for (int e = 0; e < 2000; ++e) {
        const auto k = static_cast<std::size_t>(e % 40);
        double median = 5e3 * static_cast<double>(k + 1);
        if (k == 3 && e % 5 == 0) median *= 3;  // bimodal
        c.add(keys[k], w * 100'000'000 + std::int64_t{e} * 10'000,
              static_cast<std::int64_t>(median * std::exp(0.03 * z(rng))));
      }
      if (w > windows / 2) c.add(late, w * 100'000'000, 1'000'000);
      c.close_window(w * 100'000'000 + 99'000'000);
    }
  }
  return out;
}

// rel: the precision of the durations; sd and p99 are within 2^coarse_shift times it.
void check_close(const window_summary& a, const window_summary& b, double rel, unsigned coarse_shift = 1) {
  const double coarse = std::ldexp(rel, static_cast<int>(coarse_shift));
  CHECK(a.rank == b.rank);
  CHECK(a.window_id == b.window_id);
  CHECK(a.start_ns == b.start_ns);
  CHECK(a.end_ns == b.end_ns);
  REQUIRE(a.kernels.size() == b.kernels.size());
  for (std::size_t i = 0; i < a.kernels.size(); ++i) {
    const auto &x = a.kernels[i], &y = b.kernels[i];
    CHECK(x.key == y.key);
    CHECK(x.count == y.count);
    CHECK(x.sampled == y.sampled);
    CHECK(std::abs(x.total_ns - y.total_ns) <= rel * y.total_ns);
    REQUIRE(x.clusters.size() == y.clusters.size());
    for (std::size_t c = 0; c < x.clusters.size(); ++c) {
      const auto &p = x.clusters[c], &q = y.clusters[c];
      CHECK(p.count == q.count);
      for (auto [u, v] : {std::pair{p.min, q.min}, {p.max, q.max}, {p.mean, q.mean}, {p.p50, q.p50}, {p.p90, q.p90}})
        CHECK(std::abs(u - v) <= rel * v);
      for (auto [u, v] : {std::pair{p.p99, q.p99}, {std::sqrt(p.variance), std::sqrt(q.variance)}})
        CHECK(std::abs(u - v) <= coarse * v);
    }
  }
}
}  // namespace

TEST_CASE("summaries round-trip within the documented precision") {
  name_table names;
  const auto windows = make_windows(names, 3, 40, 1);
  for (unsigned bits : {6u, 10u, 16u}) {
    codec_options opt;
    opt.precision_bits = bits;
    summary_encoder enc([&](name_id id) { return std::string(names.name(id)); }, opt);
    std::string bytes = enc.header();
    for (const auto& w : windows) enc.encode(w, bytes);
    const auto dec = decode_summaries(bytes);
    CHECK(dec.damaged.empty());
    CHECK(dec.windows_without_reference == 0);
    CHECK(dec.options.precision_bits == bits);
    REQUIRE(dec.windows.size() == windows.size());
    const double rel = std::ldexp(1.0, -static_cast<int>(bits) - 1) * 1.0001;  // s/2, s = ln(1 + 2^-bits)
    for (std::size_t i = 0; i < windows.size(); ++i) check_close(dec.windows[i], windows[i], rel);
    CHECK(dec.names.size() == names.size());
    for (const auto& [id, text] : dec.names) CHECK(text == names.name(id));
  }
}

TEST_CASE("delta coding shrinks repeated windows") {
  name_table names;
  const auto windows = make_windows(names, 2, 64, 2);
  std::size_t sizes[2];
  for (unsigned interval : {1u, 32u}) {
    codec_options opt;
    opt.key_frame_interval = interval;
    summary_encoder enc([&](name_id id) { return std::string(names.name(id)); }, opt);
    std::string bytes = enc.header();
    for (const auto& w : windows) enc.encode(w, bytes);
    sizes[interval == 1 ? 0 : 1] = bytes.size();
    CHECK(decode_summaries(bytes).windows.size() == windows.size());
  }
  INFO("key frames only: " << sizes[0] << " bytes, delta coded: " << sizes[1] << " bytes");
  CHECK(sizes[1] < sizes[0] * 3 / 4);
}

TEST_CASE("a damaged block costs at most one key-frame interval of its rank") {
  name_table names;
  const auto windows = make_windows(names, 2, 40, 3);
  codec_options opt;
  opt.key_frame_interval = 8;
  summary_encoder enc([&](name_id id) { return std::string(names.name(id)); }, opt);
  std::string bytes = enc.header();
  std::vector<std::size_t> offsets;
  for (const auto& w : windows) {
    offsets.push_back(bytes.size());
    enc.encode(w, bytes);
  }
  // Flip one payload byte of the window block of window 21 (rank 1, window id 10).
  const std::size_t victim = 21;
  std::size_t at = bytes.find("FSB1", offsets[victim]);
  // The window block is the last block written for the victim (names come first).
  while (true) {
    const auto next = bytes.find("FSB1", at + 4);
    if (next == std::string::npos || next >= offsets[victim + 1]) break;
    at = next;
  }
  bytes[at + 12] = static_cast<char>(bytes[at + 12] ^ 0x5A);
  const auto dec = decode_summaries(bytes);
  REQUIRE(dec.damaged.size() == 1);
  CHECK(dec.damaged[0].offset == at);
  CHECK(dec.damaged[0].reason == "CRC-32C mismatch");
  const std::size_t lost = windows.size() - dec.windows.size();
  CHECK(lost >= 1);
  CHECK(lost <= opt.key_frame_interval);
  CHECK(dec.windows_without_reference == lost - 1);
  for (const auto& w : dec.windows) CHECK(!(w.rank == 1 && w.window_id == 10));
}

TEST_CASE("truncated and random inputs never read out of bounds") {
  name_table names;
  const auto windows = make_windows(names, 1, 6, 4);
  summary_encoder enc([&](name_id id) { return std::string(names.name(id)); });
  std::string bytes = enc.header();
  for (const auto& w : windows) enc.encode(w, bytes);
  const std::size_t header = enc.header().size();
  for (std::size_t len = header; len < bytes.size(); len += 7) {
    const auto dec = decode_summaries(std::string_view(bytes).substr(0, len));
    CHECK(dec.windows.size() <= windows.size());
  }
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    std::string junk = bytes;
    for (int f = 0; f < 5; ++f) junk[header + rng() % (junk.size() - header)] = static_cast<char>(rng());
    const auto dec = decode_summaries(junk);
    CHECK(dec.windows.size() <= windows.size());
    std::string noise = enc.header();
    for (int b = 0; b < 200; ++b) noise.push_back(static_cast<char>(rng()));
    noise += "FSB1";
    noise.push_back(2);
    noise.push_back(static_cast<char>(0xFF));  // a length varint running off the end
    (void)decode_summaries(noise);
  }
  CHECK_THROWS_AS(decode_summaries("nope"), parse_error);
  CHECK_THROWS_AS(decode_summaries(std::string("FSUM\x05\x0a\x10\x00\x01\x00", 10)), parse_error);  // a later version
  CHECK_THROWS_WITH(decode_summaries(std::string("FSUM\x05\x0a\x10\x00\x01\x00", 10)),
                    Catch::Contains("format version 1, 2, 3 or 4"));
  CHECK_THROWS_AS(decode_summaries(std::string("FSUM\x03\x0a\x10\x00\x01\x07", 10)), parse_error);  // extremes 7
  CHECK_THROWS_AS(decode_summaries(std::string("FSUM\x02\x0a\x10\x00\x07", 9)), parse_error);       // coarse shift 7
  CHECK_THROWS_AS(decode_summaries(std::string("FSUM\x02\x0a\x10\x00", 8)), parse_error);           // truncated
  CHECK_THROWS_AS(decode_summaries(std::string("FSUM\x01\x40\x10\x00", 8)), parse_error);
  CHECK_THROWS_AS(summary_encoder([](name_id) { return std::string(); }, codec_options{2, 16}), invalid_argument);
}

TEST_CASE("the name dictionary's LZ77 round-trips and rejects bad streams", "[codec][lz]") {
  using failslow::compress::detail::byte_reader;
  std::mt19937_64 rng(GENERATE(1u, 2u));
  std::vector<std::string> inputs{"", "a", "abcd", std::string(5000, 'x')};
  // Kernel-like names: long shared substrings, not only prefixes.
  std::string names;
  const char* parts[] = {"void at::native::vectorized_elementwise_kernel<4, ",
                         "at::native::BinaryFunctor<float, float, float, ",
                         "at::native::MulFunctor<float> >, at::detail::Array<char*, 3> >(int, ",
                         "cutlass::Kernel<",
                         "cutlass_80_tensorop_s1688gemm_",
                         "128x128_32x3_nn_align4>(Params)"};
  std::uniform_int_distribution<int> pick(0, 5), byte(0, 255);
  for (int i = 0; i < 300; ++i) names += parts[pick(rng)];
  inputs.push_back(names);
  std::string noise;
  for (int i = 0; i < 3000; ++i) noise.push_back(static_cast<char>(byte(rng)));
  inputs.push_back(noise);
  for (const auto& in : inputs) {
    std::string z;
    failslow::compress::detail::lz_compress(in, z);
    byte_reader r(z);
    std::string back;
    REQUIRE(failslow::compress::detail::lz_decompress(r, in.size(), back));
    CHECK(back == in);
    CHECK(r.remaining() == 0);
    if (&in == &inputs[4]) CHECK(z.size() * 8 < in.size());  // repetitive names: more than 8x
  }
  // A distance before the start, a length past the declared size, a truncated literal run.
  for (std::string bad : {std::string("\x09\x05", 2),
                          std::string("\x02"
                                      "a\x0b\x01",
                                      4),
                          std::string("\x08"
                                      "ab",
                                      3)}) {
    byte_reader r(bad);
    std::string back;
    CHECK_FALSE(failslow::compress::detail::lz_decompress(r, 4, back));
  }
  byte_reader huge(
      std::string_view("\x02"
                       "a",
                       2));
  std::string back;
  CHECK_FALSE(failslow::compress::detail::lz_decompress(huge, std::uint64_t{1} << 40, back));
}

TEST_CASE("long kernel names cost a fraction of their length in the file", "[codec][lz]") {
  name_table names;
  std::vector<window_summary> windows(1);
  windows[0].rank = 0;
  std::size_t raw = 0;
  for (int i = 0; i < 100; ++i) {
    const std::string n =
        "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, float, float, "
        "at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, " +
        std::to_string(i) + "> >(int, at::native::AUnaryFunctor<float>, at::detail::Array<char*, 2>)";
    raw += n.size();
    kernel_summary k;
    k.key = names.intern(n);
    k.count = k.sampled = 1;
    std::vector<double> d{1000.0 + i};
    k.clusters.push_back(failslow::stats::summarize_sorted(d.data(), 1));
    windows[0].kernels.push_back(k);
  }
  summary_encoder enc([&](name_id id) { return std::string(names.name(id)); });
  std::string bytes = enc.header();
  enc.encode(windows[0], bytes);
  CHECK(bytes.size() * 5 < raw);
  const auto dec = decode_summaries(bytes);
  CHECK(dec.damaged.empty());
  REQUIRE(dec.names.size() == 100);
  for (const auto& [id, text] : dec.names) CHECK(text == names.name(id));
}

TEST_CASE("fed in pieces, the decoder gives what it gives on the whole stream, damage included") {
  name_table names;
  const auto windows = make_windows(names, 3, 30, 5);
  codec_options opt;
  opt.key_frame_interval = 4;
  summary_encoder enc([&](name_id id) { return std::string(names.name(id)); }, opt);
  std::string bytes = enc.header();
  for (const auto& w : windows) enc.encode(w, bytes);
  std::mt19937_64 rng(23);
  auto same = [](const decoded_summaries& a, const std::vector<window_summary>& got_windows,
                 const decoded_summaries& whole) {
    REQUIRE(got_windows.size() == whole.windows.size());
    for (std::size_t i = 0; i < got_windows.size(); ++i) {
      CHECK(got_windows[i].rank == whole.windows[i].rank);
      CHECK(got_windows[i].window_id == whole.windows[i].window_id);
      CHECK(got_windows[i].kernels.size() == whole.windows[i].kernels.size());
    }
    REQUIRE(a.damaged.size() == whole.damaged.size());
    for (std::size_t i = 0; i < a.damaged.size(); ++i) {
      CHECK(a.damaged[i].offset == whole.damaged[i].offset);
      CHECK(a.damaged[i].reason == whole.damaged[i].reason);
    }
    CHECK(a.windows_without_reference == whole.windows_without_reference);
    CHECK(a.names == whole.names);
  };
  for (int trial = 0; trial < 60; ++trial) {
    std::string data = bytes;
    // Clean streams, flipped bytes, a cut-off end and inserted garbage.
    if (trial % 3 == 1)
      for (int f = 0; f < 3; ++f) data[8 + rng() % (data.size() - 8)] = static_cast<char>(rng());
    if (trial % 3 == 2) {
      data.insert(8 + rng() % (data.size() - 8), std::string(37, 'x'));
      data.resize(data.size() - rng() % 50);
    }
    const auto whole = decode_summaries(data);
    summary_decoder dec;
    std::vector<window_summary> got;
    auto sink = [&](window_summary&& w, const decoded_summaries&) { got.push_back(std::move(w)); };
    std::size_t at = 0;
    while (at < data.size()) {
      const std::size_t n = std::min<std::size_t>(data.size() - at, 1 + rng() % (trial % 2 ? 7 : 400));
      dec.feed(std::string_view(data).substr(at, n), sink);
      at += n;
    }
    dec.finish(sink);
    INFO("trial " << trial);
    same(dec.state(), got, whole);
  }
  // No header at all, or a wrong one.
  summary_decoder empty;
  auto drop = [](window_summary&&, const decoded_summaries&) {};
  empty.feed("FSU", drop);
  CHECK_THROWS_AS(empty.finish(drop), parse_error);
}

TEST_CASE("a sink that only reads the windows sees what decode_summaries keeps, buffers reused or not") {
  // The decoder hands the same window object over again when the sink leaves it in place; key
  // lists and cluster counts that grow and shrink from window to window must not leak through.
  name_table names;
  auto windows = make_windows(names, 4, 24, 7);
  std::mt19937_64 rng(23);
  for (auto& w : windows)  // drop keys at random: key lists of different lengths, absolute keys
    for (std::size_t k = w.kernels.size(); k-- > 0;)
      if (rng() % 4 == 0) w.kernels.erase(w.kernels.begin() + static_cast<std::ptrdiff_t>(k));
  windows[5].kernels.clear();  // an empty window between full ones
  summary_encoder enc([&](name_id id) { return std::string(names.name(id)); });
  std::string bytes = enc.header();
  for (const auto& w : windows) enc.encode(w, bytes);
  const auto whole = decode_summaries(bytes);
  REQUIRE(whole.windows.size() == windows.size());
  std::vector<window_summary> seen;
  const auto rest =
      decode_summaries_to(bytes, [&](window_summary&& w, const decoded_summaries&) { seen.push_back(w); });
  CHECK(rest.windows.empty());
  REQUIRE(seen.size() == whole.windows.size());
  for (std::size_t i = 0; i < seen.size(); ++i) {
    const auto &a = seen[i], &b = whole.windows[i];
    INFO("window " << i);
    CHECK(a.rank == b.rank);
    CHECK(a.window_id == b.window_id);
    CHECK(a.start_ns == b.start_ns);
    CHECK(a.end_ns == b.end_ns);
    CHECK(a.subsampled == b.subsampled);
    CHECK(a.skipped.total() == b.skipped.total());
    REQUIRE(a.kernels.size() == b.kernels.size());
    CHECK(a.kernels.size() == windows[i].kernels.size());
    for (std::size_t k = 0; k < a.kernels.size(); ++k) {
      const auto &x = a.kernels[k], &y = b.kernels[k];
      CHECK(x.key == y.key);
      CHECK(x.count == y.count);
      CHECK(x.total_ns == y.total_ns);
      CHECK(x.sampled == y.sampled);
      REQUIRE(x.clusters.size() == y.clusters.size());
      for (std::size_t c = 0; c < x.clusters.size(); ++c) {
        const auto &p = x.clusters[c], &q = y.clusters[c];
        CHECK(p.count == q.count);
        CHECK((p.sum == q.sum && p.min == q.min && p.max == q.max && p.mean == q.mean && p.variance == q.variance &&
               p.p50 == q.p50 && p.p90 == q.p90 && p.p99 == q.p99));
      }
    }
  }
}

namespace {
// The windows of tests/data/fsum/v1_windows.fsum (format version 1, written by the codec before
// version 2), v2_zstd.fsum (version 2, zstd groups of 1 KiB) and v3_windows.fsum (version 3),
// built without the compressor so that the expectation does not move with it.
std::vector<window_summary> fsum_fixture_windows() {
  std::vector<window_summary> out;
  for (int rank = 0; rank < 2; ++rank)
    for (std::uint64_t id = 0; id < 20; ++id) {
      window_summary w;
      w.rank = rank;
      w.window_id = id;
      w.start_ns = static_cast<std::int64_t>(id) * 100'000'000 + rank * 1000;
      w.end_ns = w.start_ns + 90'000'000 + static_cast<std::int64_t>(id) * 7;
      w.skipped.invalid_duration = id % 3;
      w.subsampled = id == 5 ? 17 : 0;
      for (name_id key = 0; key < 6; ++key) {
        if (key == 5 && id < 10) continue;  // a key that appears late
        kernel_summary k;
        k.key = key;
        const double base = 1000.0 * (key + 1) * (1 + 0.01 * static_cast<double>((id * 7 + key) % 5)) + rank * 3;
        const int nclusters = key == 2 ? 2 : 1;
        for (int c = 0; c < nclusters; ++c) {
          stats::cluster_summary s;
          s.count = 100 + key * 10 + static_cast<std::uint64_t>(c) * 7 + id % 4;
          const double m = base * (c ? 5.0 : 1.0);
          s.min = 0.8 * m;
          s.max = 1.6 * m;
          s.mean = 1.02 * m;
          s.sum = s.mean * static_cast<double>(s.count);
          s.variance = (0.05 * m) * (0.05 * m);
          s.p50 = m;
          s.p90 = 1.1 * m;
          s.p99 = 1.3 * m;
          k.clusters.push_back(s);
          k.count += s.count;
          k.sampled += s.count;
          k.total_ns += s.sum;
        }
        if (id == 5 && key == 0) k.count += 17;  // subsampled events
        w.kernels.push_back(k);
      }
      out.push_back(w);
    }
  return out;
}

std::string read_fsum_fixture(const std::string& name) {
  const std::string path = std::string(FAILSLOW_TEST_REFERENCE_DIR) + "/../data/fsum/" + name;
  std::ifstream f(path, std::ios::binary);
  REQUIRE(f.good());
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}
}  // namespace

TEST_CASE("format version 1 files still decode", "[codec][version]") {
  const std::string bytes = read_fsum_fixture("v1_windows.fsum");
  REQUIRE(static_cast<int>(bytes[4]) == 1);
  const auto dec = decode_summaries(bytes);
  CHECK(dec.damaged.empty());
  const auto expected = fsum_fixture_windows();
  REQUIRE(dec.windows.size() == expected.size());
  const double rel = std::ldexp(1.0, -8) * 1.0001;  // 7 bits
  for (std::size_t i = 0; i < expected.size(); ++i) check_close(dec.windows[i], expected[i], rel, 0);
  CHECK(dec.options.coarse_shift == 0);  // version 1 has none
  CHECK(dec.names.at(3) == "kernel_3<float>(float const*, int)");
}

TEST_CASE("format version 3 files decode (the format frozen in a fixture)", "[codec][version]") {
  // tests/data/fsum/v3_windows.fsum: the fixture windows written by the format 3 encoder with
  // its defaults (7 bits, coarse shift 1, key frame every 8, no zstd). A change to the format
  // that old files cannot follow fails here.
  const std::string bytes = read_fsum_fixture("v3_windows.fsum");
  REQUIRE(static_cast<int>(bytes[4]) == 3);
  const auto dec = decode_summaries(bytes);
  CHECK(dec.damaged.empty());
  CHECK(dec.windows_without_reference == 0);
  CHECK(dec.options.coarse_shift == 1);
  CHECK(dec.options.extremes_shift == 0);
  const auto expected = fsum_fixture_windows();
  REQUIRE(dec.windows.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i)
    check_close(dec.windows[i], expected[i], std::ldexp(1.0, -8) * 1.0001);
  CHECK(dec.names.at(3) == "kernel_3<float>(float const*, int)");
}

TEST_CASE("zstd groups decode where zstd is built and say so clearly where not", "[codec][zstd]") {
  const std::string bytes = read_fsum_fixture("v2_zstd.fsum");
  REQUIRE(static_cast<int>(bytes[4]) == 2);
  const auto dec = decode_summaries(bytes);
  if (zstd_available) {
    CHECK(dec.damaged.empty());
    const auto expected = fsum_fixture_windows();
    REQUIRE(dec.windows.size() == expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i)
      check_close(dec.windows[i], expected[i], std::ldexp(1.0, -8) * 1.0001);
    CHECK(dec.zstd_blocks_unreadable == 0);
  } else {
    CHECK(dec.windows.empty());
    CHECK(dec.zstd_blocks_unreadable > 0);
    REQUIRE(!dec.damaged.empty());
    CHECK_THAT(dec.damaged.front().reason, Catch::Contains("this build has no zstd"));
  }
}

TEST_CASE("with zstd the stream is the same summaries, smaller, and a damaged group costs its windows only",
          "[codec][zstd]") {
  if (!zstd_available) return;  // the test above covers a build without zstd
  name_table names;
  const auto windows = make_windows(names, 3, 48, 4);
  auto encode = [&](int level, std::size_t group) {
    codec_options opt;
    opt.zstd_level = level;
    opt.group_bytes = group;
    opt.key_frame_interval = 8;
    summary_encoder enc([&](name_id id) { return std::string(names.name(id)); }, opt);
    std::string bytes = enc.header();
    for (const auto& w : windows) enc.encode(w, bytes);
    enc.flush(bytes);
    return bytes;
  };
  const std::string plain = encode(0, 1 << 18), packed = encode(3, 1 << 18), small = encode(3, 4096);
  CHECK(packed.size() < plain.size());
  INFO("plain " << plain.size() << " bytes, zstd " << packed.size() << ", zstd in 4 KiB groups " << small.size());
  const auto a = decode_summaries(plain), b = decode_summaries(packed);
  CHECK(b.damaged.empty());
  REQUIRE(a.windows.size() == b.windows.size());
  for (std::size_t i = 0; i < a.windows.size(); ++i) check_close(b.windows[i], a.windows[i], 0.0);
  // Damage one group of the small-group stream: its windows, and the deltas after it up to
  // each rank's next key window, are lost; the rest decodes.
  std::string damaged = small;
  const auto second = damaged.find("FSB1", damaged.find("FSB1") + 4);
  REQUIRE(second != std::string::npos);
  damaged[second + 20] = static_cast<char>(damaged[second + 20] ^ 0x33);
  const auto d = decode_summaries(damaged);
  REQUIRE(d.damaged.size() == 1);
  CHECK(d.damaged[0].offset == second);
  CHECK(d.windows.size() < windows.size());
  CHECK(d.windows.size() + 3 * 8 * 4 > windows.size());
}

TEST_CASE("values and knots round-trip and a v2 stream rejects what it cannot hold", "[codec][forms]") {
  window_summary w;
  w.rank = 2;
  kernel_summary few;  // values form: every duration
  few.key = 1;
  few.values = {1000, 1000, 1200, 5000, 5100};
  few.count = few.sampled = few.values.size();
  for (double v : few.values) few.total_ns += v;
  few.clusters = {stats::summarize_sorted(few.values.data(), 3), stats::summarize_sorted(few.values.data() + 3, 2)};
  kernel_summary flat;  // knots form: knots plus the top values
  flat.key = 4;
  std::vector<double> x;
  for (int i = 0; i < 400; ++i) x.push_back(100 * std::pow(10.0, 4.0 * (i + 0.5) / 400));
  flat.count = flat.sampled = x.size();
  for (double v : x) flat.total_ns += v;
  flat.clusters = {stats::summarize_sorted(x.data(), x.size())};
  for (double p : knot_probabilities) flat.knots.push_back(stats::quantile_sorted(x.data(), x.size() - 16, p));
  flat.values.assign(x.end() - 16, x.end());
  w.kernels = {few, flat};
  for (int level : {0, zstd_available ? 3 : 0}) {
    codec_options opt;
    opt.zstd_level = level;
    summary_encoder enc([](name_id id) { return "k" + std::to_string(id); }, opt);
    std::string bytes = enc.header();
    for (std::uint64_t id = 0; id < 3; ++id) {  // a key window then deltas (forms stay absolute)
      w.window_id = id;
      enc.encode(w, bytes);
    }
    enc.flush(bytes);
    const auto dec = decode_summaries(bytes);
    CHECK(dec.damaged.empty());
    REQUIRE(dec.windows.size() == 3);
    const double rel = std::ldexp(1.0, -8) * 1.0001;
    for (const auto& d : dec.windows) {
      REQUIRE(d.kernels.size() == 2);
      const auto &a = d.kernels[0], &b = d.kernels[1];
      CHECK(a.key == few.key);
      CHECK(a.count == few.count);
      REQUIRE(a.clusters.size() == 2);  // summaries of the decoded values
      CHECK(a.clusters[0].count == 3);
      CHECK(a.clusters[1].p50 == Approx(5050).epsilon(rel));
      CHECK(b.key == flat.key);
      CHECK(b.count == flat.count);
      CHECK(b.total_ns == Approx(flat.total_ns).epsilon(rel));
      REQUIRE(a.values.size() == few.values.size());
      for (std::size_t i = 0; i < a.values.size(); ++i) CHECK(a.values[i] == Approx(few.values[i]).epsilon(rel));
      CHECK(a.knots.empty());
      REQUIRE(b.knots.size() == knot_count);
      REQUIRE(b.values.size() == 16);
      for (std::size_t i = 0; i < knot_count; ++i) CHECK(b.knots[i] == Approx(flat.knots[i]).epsilon(rel));
      CHECK(b.values.back() == Approx(x.back()).epsilon(rel));
    }
  }
}

namespace {
std::string encode_all(const std::vector<window_summary>& windows, const name_table& names, codec_options opt) {
  summary_encoder enc([&](name_id id) { return std::string(names.name(id)); }, opt);
  std::string bytes = enc.header();
  for (const auto& w : windows) enc.encode(w, bytes);
  enc.flush(bytes);
  return bytes;
}
}  // namespace

TEST_CASE("format 4 (range-coded windows, launch paces) is the default, format 2 is still written on request and read",
          "[codec][version]") {
  name_table names;
  const auto windows = make_windows(names, 3, 40, 5);
  codec_options v2;
  v2.format_version = 2;
  const std::string old_format = encode_all(windows, names, v2), now = encode_all(windows, names, {});
  REQUIRE(static_cast<int>(old_format[4]) == 2);
  REQUIRE(static_cast<int>(now[4]) == 4);
  INFO("format 2: " << old_format.size() << " bytes, format 4: " << now.size());
  CHECK(now.size() < old_format.size() * 3 / 4);
  const auto a = decode_summaries(old_format), b = decode_summaries(now);
  CHECK(a.damaged.empty());
  CHECK(b.damaged.empty());
  CHECK(a.options.format_version == 2);
  CHECK(b.options.format_version == 4);
  REQUIRE(a.windows.size() == windows.size());
  REQUIRE(b.windows.size() == windows.size());
  const double rel = std::ldexp(1.0, -8) * 1.0001;  // 7 bits
  for (std::size_t i = 0; i < windows.size(); ++i) {
    check_close(a.windows[i], windows[i], rel);
    check_close(b.windows[i], windows[i], rel);
    // The same codes but the totals, which format 3 rebuilds from the clusters (within rel).
    for (std::size_t k = 0; k < b.windows[i].kernels.size(); ++k) {
      const auto &x = a.windows[i].kernels[k], &y = b.windows[i].kernels[k];
      REQUIRE(x.clusters.size() == y.clusters.size());
      for (std::size_t c = 0; c < x.clusters.size(); ++c) {
        CHECK(x.clusters[c].p50 == y.clusters[c].p50);
        CHECK(x.clusters[c].max == y.clusters[c].max);
        CHECK(x.clusters[c].variance == y.clusters[c].variance);
      }
    }
  }
  // An encoder asked for a format it cannot write says so.
  codec_options bad;
  bad.format_version = 5;
  CHECK_THROWS_AS(summary_encoder([](name_id) { return std::string(); }, bad), invalid_argument);
  bad.format_version = 2;
  bad.extremes_shift = 1;  // format 2 has no field for it
  CHECK_THROWS_AS(summary_encoder([](name_id) { return std::string(); }, bad), invalid_argument);
}

TEST_CASE("format 3: subsampled totals, coarse extremes and zero durations round-trip", "[codec][version]") {
  window_summary w;
  w.rank = 1;
  kernel_summary sub;  // subsampled: the total is stored, not rebuilt from the clusters
  sub.key = 3;
  sub.count = 5000;
  sub.sampled = 4096;
  stats::cluster_summary c;
  c.count = 4096;
  c.min = 900;
  c.max = 2500;
  c.mean = 1000;
  c.sum = c.mean * 4096;
  c.variance = 50.0 * 50.0;
  c.p50 = 990;
  c.p90 = 1100;
  c.p99 = 1400;
  sub.clusters = {c};
  sub.total_ns = 5000 * 1003.0;
  kernel_summary zero;  // zero-length launches: code 0 in every field
  zero.key = 7;
  zero.count = zero.sampled = 40;
  stats::cluster_summary z;
  z.count = 40;
  zero.clusters = {z};
  w.kernels = {sub, zero};
  for (unsigned extremes : {0u, 2u}) {
    codec_options opt;
    opt.extremes_shift = extremes;
    opt.key_frame_interval = 4;
    summary_encoder enc([](name_id id) { return "k" + std::to_string(id); }, opt);
    std::string bytes = enc.header();
    for (std::uint64_t id = 0; id < 6; ++id) {  // key windows and deltas
      w.window_id = id;
      w.kernels[0].clusters[0].mean = 1000.0 + 3.0 * static_cast<double>(id);
      enc.encode(w, bytes);
    }
    const auto dec = decode_summaries(bytes);
    CHECK(dec.damaged.empty());
    CHECK(dec.options.extremes_shift == extremes);
    REQUIRE(dec.windows.size() == 6);
    const double rel = std::ldexp(1.0, -8) * 1.0001, coarse = std::ldexp(rel, static_cast<int>(extremes));
    for (const auto& d : dec.windows) {
      REQUIRE(d.kernels.size() == 2);
      const auto &a = d.kernels[0], &b = d.kernels[1];
      CHECK(a.count == 5000);
      CHECK(a.sampled == 4096);
      CHECK(a.total_ns == Approx(5000 * 1003.0).epsilon(rel));
      CHECK(a.clusters.at(0).min == Approx(900).epsilon(coarse));
      CHECK(a.clusters.at(0).max == Approx(2500).epsilon(coarse));
      CHECK(a.clusters.at(0).mean == Approx(1000.0 + 3.0 * static_cast<double>(d.window_id)).epsilon(rel));
      CHECK(b.count == 40);
      CHECK(b.total_ns == 0);
      CHECK(b.clusters.at(0).p99 == 0);
    }
  }
}

TEST_CASE("format 3: blocks with a valid CRC and a damaged range-coded stream are reported, never read past",
          "[codec][version]") {
  name_table names;
  const auto windows = make_windows(names, 2, 12, 6);
  const std::string bytes = encode_all(windows, names, {});
  // Every window block, its payload bytes flipped one at a time and the CRC made valid again:
  // the decoder must reject or decode each without reading out of bounds (ASan/UBSan builds).
  std::size_t blocks = 0, rejected = 0;
  for (std::size_t at = bytes.find("FSB1"); at != std::string::npos; at = bytes.find("FSB1", at + 4)) {
    const auto type = static_cast<std::uint8_t>(bytes[at + 4]);
    if (type != 2 && type != 3) continue;
    failslow::compress::detail::byte_reader r(std::string_view(bytes).substr(at + 5));
    std::uint64_t length = 0;
    REQUIRE(r.varint(length));
    const std::size_t payload_at = at + 5 + r.position();
    ++blocks;
    for (std::size_t i = 0; i < length; i += 3) {
      std::string damaged = bytes;
      damaged[payload_at + i] = static_cast<char>(damaged[payload_at + i] ^ 0x5A);
      const std::string_view payload = std::string_view(damaged).substr(payload_at, static_cast<std::size_t>(length));
      std::string crc;
      failslow::compress::detail::put_u32(
          crc, failslow::compress::detail::crc32c(
                   payload, failslow::compress::detail::crc32c(std::string_view(damaged).substr(at + 4, 1))));
      damaged.replace(payload_at + static_cast<std::size_t>(length), 4, crc);
      const auto dec = decode_summaries(damaged);
      CHECK(dec.windows.size() <= windows.size());
      rejected += dec.damaged.empty() ? 0 : 1;
    }
  }
  CHECK(blocks == windows.size());
  CHECK(rejected > 0);
}

TEST_CASE(
    "format 4: each window's launch pace round-trips, key and delta windows, with and without zstd, and format 3 "
    "drops it",
    "[codec][version]") {
  name_table names;
  auto windows = make_windows(names, 3, 40, 5);
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> interval(2e3, 4e5);
  for (std::size_t i = 0; i < windows.size(); ++i)  // every third window without one (not measured)
    if (i % 3 != 0) windows[i].launch = {200 + i, interval(rng)};
  std::vector<codec_options> options(3);
  options[1].zstd_level = compress::zstd_available ? 3 : 0;
  options[2].format_version = 3;
  for (const auto& opt : options) {
    INFO("format " << opt.format_version << ", zstd " << opt.zstd_level);
    const auto dec = decode_summaries(encode_all(windows, names, opt));
    CHECK(dec.damaged.empty());
    REQUIRE(dec.windows.size() == windows.size());
    const double rel = std::ldexp(1.0, -8) * 1.0001;  // 7 bits
    for (std::size_t i = 0; i < windows.size(); ++i) {
      check_close(dec.windows[i], windows[i], rel);
      const auto &got = dec.windows[i].launch, &want = windows[i].launch;
      if (opt.format_version == 3 || want.launches == 0) {
        CHECK(got.launches == 0);
        CHECK(got.median_interval_ns == 0);
        CHECK_FALSE(got.measured());
        continue;
      }
      CHECK(got.launches == want.launches);
      CHECK(std::abs(got.median_interval_ns - want.median_interval_ns) <= rel * want.median_interval_ns);
      CHECK(got.measured());
    }
  }
}
