#include <algorithm>
#include <catch2/catch.hpp>
#include <failslow/core/topology.hpp>
#include <iterator>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

using namespace failslow;

namespace {
// Independent reference: decode a rank by the definition (mixed radix along the order).
coordinates reference_coords(int rank, const parallel_sizes& s, const std::vector<parallel_dim>& order) {
  int values[parallel_dim_count] = {};
  for (parallel_dim d : order) {
    const auto i = static_cast<std::size_t>(d);
    if (i >= std::size(values)) throw std::logic_error("bad dimension");
    values[i] = rank % s[d];
    rank /= s[d];
  }
  coordinates c;
  for (parallel_dim d : all_parallel_dims) c[d] = values[static_cast<std::size_t>(d)];
  return c;
}

std::vector<parallel_dim> parse_order_ref(const std::string& order) {
  std::vector<parallel_dim> out;
  std::size_t pos = 0;
  while (pos <= order.size()) {
    const auto dash = order.find('-', pos);
    out.push_back(parse_parallel_dim(order.substr(pos, dash - pos)));
    if (dash == std::string::npos) break;
    pos = dash + 1;
  }
  for (parallel_dim d : all_parallel_dims)
    if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
  return out;
}

void check_shape(const parallel_sizes& s, const std::string& order) {
  const topology t(s, order);
  const auto ref_order = parse_order_ref(order);
  INFO("shape tp=" << s.tp << " cp=" << s.cp << " ep=" << s.ep << " dp=" << s.dp << " pp=" << s.pp << " order "
                   << order);
  REQUIRE(t.world_size() == s.tp * s.cp * s.ep * s.dp * s.pp);
  for (int r = 0; r < t.world_size(); ++r) {
    const coordinates c = t.coords(r);
    if (c != reference_coords(r, s, ref_order)) FAIL("coords(" << r << ") differ from the reference");
    if (t.rank(c) != r) FAIL("rank(coords(" << r << ")) != " << r);
  }
  // Groups along each dimension partition the world, are numbered by lowest rank, and differ
  // from their members only along that dimension.
  for (parallel_dim d : all_parallel_dims) {
    std::vector<int> owner(static_cast<std::size_t>(t.world_size()), -1);
    int last_lowest = -1;
    for (int g = 0; g < t.group_count(d); ++g) {
      const auto members = t.group_members(d, g);
      REQUIRE(static_cast<int>(members.size()) == s[d]);
      REQUIRE(std::is_sorted(members.begin(), members.end()));
      REQUIRE(members.front() > last_lowest);
      last_lowest = members.front();
      for (std::size_t k = 0; k < members.size(); ++k) {
        const int m = members[k];
        REQUIRE(owner[static_cast<std::size_t>(m)] == -1);
        owner[static_cast<std::size_t>(m)] = g;
        REQUIRE(t.coordinate(m, d) == static_cast<int>(k));
        for (parallel_dim o : all_parallel_dims)
          if (o != d) REQUIRE(t.coordinate(m, o) == t.coordinate(members.front(), o));
      }
    }
    for (int r = 0; r < t.world_size(); ++r) {
      REQUIRE(owner[static_cast<std::size_t>(r)] == t.group_index(r, d));
      if (r % 97 == 0) REQUIRE(t.group(r, d) == t.group_members(d, t.group_index(r, d)));
    }
  }
}
}  // namespace

TEST_CASE("topology round trips for several shapes and orders") {
  check_shape({2, 1, 1, 4, 2}, "tp-cp-ep-dp-pp");
  check_shape({8, 1, 1, 64, 16}, "tp-cp-ep-dp-pp");  // 8192 ranks
  check_shape({8, 1, 8, 8, 16}, "tp-cp-ep-dp-pp");
  check_shape({8, 1, 8, 8, 16}, "tp-pp-dp-ep-cp");
  check_shape({8, 2, 8, 4, 16}, "pp-dp-ep-cp-tp");
  check_shape({4, 1, 1, 3, 5}, "tp-dp-pp");  // cp, ep missing: size 1, appended
  check_shape({1, 1, 1, 1, 1}, "tp-cp-ep-dp-pp");
  check_shape({3, 5, 1, 7, 2}, "cp-tp-dp-pp");
}

TEST_CASE("the DESIGN example: tp=2, dp=4, pp=2") {
  const topology t({2, 1, 1, 4, 2});
  CHECK(t.group_members(parallel_dim::dp, 0) == std::vector<int>{0, 2, 4, 6});
  CHECK(t.group_members(parallel_dim::dp, 1) == std::vector<int>{1, 3, 5, 7});
  CHECK(t.group_members(parallel_dim::dp, 2) == std::vector<int>{8, 10, 12, 14});
  CHECK(t.group_members(parallel_dim::dp, 3) == std::vector<int>{9, 11, 13, 15});
  CHECK(t.group_name(13, parallel_dim::dp) == "dp:3");
  CHECK(t.group_name(13, parallel_dim::tp) == "tp:6");
  CHECK(t.group(13, parallel_dim::pp) == std::vector<int>{5, 13});
  CHECK(t.stage(1) == std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15});
  CHECK(t.stride(parallel_dim::pp) == 8);
  CHECK(t.order_string() == "tp-cp-ep-dp-pp");
  const coordinates c = t.coords(13);
  CHECK(c[parallel_dim::tp] == 1);
  CHECK(c[parallel_dim::dp] == 2);
  CHECK(c[parallel_dim::pp] == 1);
}

TEST_CASE("groups along several dimensions") {
  const topology t({2, 2, 2, 2, 2});
  const dim_set vary{parallel_dim::cp, parallel_dim::ep, parallel_dim::dp};
  const auto g = t.group(5, vary);  // same tp and pp as rank 5
  REQUIRE(g.size() == 8);
  for (int m : g) {
    CHECK(t.coordinate(m, parallel_dim::tp) == t.coordinate(5, parallel_dim::tp));
    CHECK(t.coordinate(m, parallel_dim::pp) == t.coordinate(5, parallel_dim::pp));
  }
  CHECK(t.group_count(vary) == 4);
  CHECK(t.group_size(vary) == 8);
  std::set<int> all;
  for (int i = 0; i < 4; ++i)
    for (int m : t.group_members(vary, i)) all.insert(m);
  CHECK(all.size() == 32);
  CHECK(t.group(5, dim_set{}) == std::vector<int>{5});
  CHECK(t.group(5, dim_set::all()).size() == 32);
}

TEST_CASE("dimension names and sets") {
  CHECK(parse_parallel_dim("ep") == parallel_dim::ep);
  CHECK(to_string(parallel_dim::cp) == "cp");
  CHECK_THROWS_AS(parse_parallel_dim("sp"), invalid_argument);
  CHECK(parse_dim_set("dp+cp+ep").to_string() == "cp+ep+dp");
  CHECK(parse_dim_set("pp") == dim_set{parallel_dim::pp});
  CHECK((~dim_set{parallel_dim::pp}).to_string() == "tp+cp+ep+dp");
  CHECK_THROWS_AS(parse_dim_set("dp+dp"), invalid_argument);
  CHECK_THROWS_AS(parse_dim_set("dp+"), invalid_argument);
  CHECK_THROWS_AS(parse_dim_set(""), invalid_argument);
}

TEST_CASE("topology errors") {
  CHECK_THROWS_AS(topology({0, 1, 1, 1, 1}), invalid_argument);
  CHECK_THROWS_AS(topology({-2, 1, 1, 1, 1}), invalid_argument);
  CHECK_THROWS_WITH(topology({2, 1, 1, 4, 2}, "tp-cp-ep-dp-pp", 15), Catch::Contains("world size 15"));
  CHECK_NOTHROW(topology({2, 1, 1, 4, 2}, "tp-cp-ep-dp-pp", 16));
  CHECK_THROWS_AS(topology({2, 1, 1, 4, 2}, "tp-dp-tp-pp"), invalid_argument);
  CHECK_THROWS_AS(topology({2, 1, 1, 4, 2}, "tp-xp-dp-pp"), invalid_argument);
  CHECK_THROWS_WITH(topology({2, 1, 1, 4, 2}, "tp-dp"), Catch::Contains("lacks pp"));
  CHECK_THROWS_AS(topology({2, 1, 1, 4, 2}, ""), invalid_argument);
  CHECK_THROWS_AS(topology({2, 1, 1, 4, 2}, "tp-dp-pp-"), invalid_argument);
  CHECK_THROWS_AS(topology({65536, 1, 1, 65536, 1}), invalid_argument);  // overflows int
  const topology t({2, 1, 1, 4, 2});
  CHECK_THROWS_AS(t.coords(16), domain_error);
  CHECK_THROWS_AS(t.coords(-1), domain_error);
  CHECK_THROWS_AS(t.group(99, parallel_dim::dp), domain_error);
  CHECK_THROWS_AS(t.group_index(16, parallel_dim::dp), domain_error);
  coordinates bad;
  bad[parallel_dim::dp] = 4;
  CHECK_THROWS_AS(t.rank(bad), domain_error);
  bad[parallel_dim::dp] = -1;
  CHECK_THROWS_AS(t.rank(bad), domain_error);
  CHECK_THROWS_AS(t.group_members(parallel_dim::dp, 4), domain_error);
  CHECK_THROWS_AS(t.stage(2), domain_error);
  CHECK_THROWS_AS(t.stage(-1), domain_error);
  CHECK(topology().world_size() == 1);
}
