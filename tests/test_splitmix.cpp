// core/detail/splitmix.hpp: the one portable random source (simulator, FAST-MCD starts,
// compressor sampling, SimHash features).
#include <array>
#include <catch2/catch.hpp>
#include <cstdint>
#include <failslow/core/detail/splitmix.hpp>
#include <type_traits>

using failslow::detail::splitmix64;
using failslow::detail::splitmix64_engine;
using failslow::detail::uniform_index;

TEST_CASE("splitmix64_engine gives the published SplitMix64 sequence") {
  // Vigna's reference splitmix64.c seeded with 1234567 (the sequence other ports test against).
  splitmix64_engine g(1234567);
  const std::array<std::uint64_t, 5> expected = {6457827717110365317ull, 3203168211198807973ull, 9817491932198370423ull,
                                                 4593380528125082431ull, 16408922859458223821ull};
  for (std::uint64_t e : expected) CHECK(g() == e);
  CHECK(splitmix64(1234567) == expected[0]);
  STATIC_REQUIRE(splitmix64_engine::min() == 0);
  STATIC_REQUIRE(splitmix64_engine::max() == ~std::uint64_t{0});
  STATIC_REQUIRE(std::is_same_v<decltype(g()), splitmix64_engine::result_type>);
}

TEST_CASE("uniform_index stays in range and is uniform") {
  splitmix64_engine g(42);
  CHECK(uniform_index(g, 0) == 0);
  CHECK(uniform_index(g, 1) == 0);
  // n just above 2^63 rejects almost half of the draws: every result still below n.
  const std::uint64_t big = (std::uint64_t{1} << 63) + 1;
  for (int i = 0; i < 1000; ++i) CHECK(uniform_index(g, big) < big);
  // Chi-square over 7 bins, 70,000 draws: 6 degrees of freedom, 0.999 quantile 22.46.
  std::array<double, 7> count{};
  const int draws = 70000;
  for (int i = 0; i < draws; ++i) {
    const std::uint64_t k = uniform_index(g, 7);
    REQUIRE(k < 7);
    count[k] += 1;
  }
  double chi2 = 0;
  for (double c : count) chi2 += (c - draws / 7.0) * (c - draws / 7.0) / (draws / 7.0);
  CHECK(chi2 < 22.46);
}
