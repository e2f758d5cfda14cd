#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <failslow/core/dense_array.hpp>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

using failslow::dense_array;

TEST_CASE("dense_array: row-major layout, value-initialised, filled") {
  dense_array<double, 3> a({2, 3, 4});
  CHECK(a.size() == 24);
  CHECK(a.shape(0) == 2);
  CHECK(a.shape(1) == 3);
  CHECK(a.shape(2) == 4);
  CHECK(a.shape() == std::array<std::size_t, 3>{2, 3, 4});
  for (double v : a) CHECK(v == 0.0);
  // The last index varies fastest: (i, j, k) sits at (i * 3 + j) * 4 + k.
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t j = 0; j < 3; ++j)
      for (std::size_t k = 0; k < 4; ++k) a(i, j, k) = static_cast<double>(100 * i + 10 * j + k);
  CHECK(a.data()[(1 * 3 + 2) * 4 + 3] == 123.0);
  CHECK(a.data()[(0 * 3 + 1) * 4 + 0] == 10.0);
  const auto& c = a;
  CHECK(c(1, 0, 2) == 102.0);
  CHECK(std::accumulate(c.begin(), c.end(), 0.0) == 1476.0);  // 100 * 12 + 10 * 3 * 8 + 6 * 6
  a.fill(std::numeric_limits<double>::quiet_NaN());
  for (double v : c) CHECK(std::isnan(v));

  const dense_array<int, 2> ones({3, 5}, 1);
  CHECK(std::accumulate(ones.begin(), ones.end(), 0) == 15);
  CHECK(ones(2, 4) == 1);
}

TEST_CASE("dense_array: empty shapes, equality, checked access") {
  const dense_array<double, 2> empty;
  CHECK(empty.empty());
  CHECK(empty.size() == 0);
  CHECK(empty.shape(0) == 0);
  const dense_array<double, 2> no_steps({64, 0});
  CHECK(no_steps.empty());
  CHECK(no_steps.shape(0) == 64);

  dense_array<double, 2> a({2, 2}), b({2, 2});
  CHECK(a == b);
  b(1, 1) = 3;
  CHECK(a != b);
  CHECK(dense_array<double, 2>({4, 1}) != dense_array<double, 2>({1, 4}));  // same values, other shape

  CHECK(b.at(1, 1) == 3.0);
  b.at(0, 1) = 2;
  CHECK(b(0, 1) == 2.0);
  CHECK_THROWS_AS(b.at(2, 0), failslow::invalid_argument);
  CHECK_THROWS_AS(b.at(0, -1), failslow::invalid_argument);
  CHECK_THROWS_WITH(b.at(0, 7), Catch::Contains("index 7 out of axis 1 of extent 2"));
  const std::size_t huge = std::numeric_limits<std::size_t>::max() / 2;
  CHECK_THROWS_AS((dense_array<double, 2>({huge, 4})), failslow::invalid_argument);
}
