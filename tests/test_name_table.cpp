#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <failslow/core/name_table.hpp>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace failslow;

TEST_CASE("interning gives dense stable ids in order of first appearance") {
  name_table t;
  CHECK(t.empty());
  CHECK(t.intern("ncclDevKernel_AllReduce_Sum_bf16_RING_LL") == 0);
  CHECK(t.intern("flash_fwd_kernel") == 1);
  CHECK(t.intern("ncclDevKernel_AllReduce_Sum_bf16_RING_LL") == 0);
  CHECK(t.intern("") == 2);  // the empty name is a name like any other
  CHECK(t.size() == 3);
  CHECK(t.name(1) == "flash_fwd_kernel");
  CHECK(t.name(2).empty());
  CHECK(t.find("flash_fwd_kernel") == name_id{1});
  CHECK_FALSE(t.find("absent").has_value());
}

TEST_CASE("views stay valid while the table grows, short and long strings alike") {
  name_table t;
  const std::string_view short_view = t.name(t.intern("ab"));
  const std::string long_name(500, 'k');
  const std::string_view long_view = t.name(t.intern(long_name));
  for (int i = 0; i < 100000; ++i) t.intern("name_" + std::to_string(i));
  CHECK(short_view == "ab");
  CHECK(long_view == long_name);
  CHECK(t.size() == 100002);
}

TEST_CASE("a moved table keeps ids and views") {
  name_table a;
  const name_id id = a.intern("volta_sgemm_128x64_nn");
  const std::string_view v = a.name(id);
  name_table b(std::move(a));
  CHECK(b.name(id) == "volta_sgemm_128x64_nn");
  CHECK(v == "volta_sgemm_128x64_nn");
  CHECK(b.intern("volta_sgemm_128x64_nn") == id);
}

TEST_CASE("unknown ids are a domain error") {
  name_table t;
  CHECK_THROWS_AS(t.name(0), domain_error);
  t.intern("x");
  CHECK_THROWS_WITH(t.name(7), Catch::Contains("unknown name id 7"));
}

TEST_CASE("concurrent interning agrees on one id per name") {
  name_table t;
  constexpr int threads = 8, names = 2000, rounds = 3;
  std::vector<std::vector<name_id>> seen(threads, std::vector<name_id>(names));
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  for (int w = 0; w < threads; ++w) {
    pool.emplace_back([&, w] {
      while (!go.load()) std::this_thread::yield();
      std::mt19937 rng(static_cast<unsigned>(w));
      std::vector<int> order(names);
      for (int i = 0; i < names; ++i) order[static_cast<std::size_t>(i)] = i;
      for (int r = 0; r < rounds; ++r) {
        std::shuffle(order.begin(), order.end(), rng);
        for (int i : order) {
          const name_id id = t.intern("kernel_" + std::to_string(i));
          if (r > 0) {
            // Later rounds must see the id of the first round.
            if (seen[static_cast<std::size_t>(w)][static_cast<std::size_t>(i)] != id) std::abort();
          }
          seen[static_cast<std::size_t>(w)][static_cast<std::size_t>(i)] = id;
          (void)t.name(id);
        }
      }
    });
  }
  go = true;
  for (auto& th : pool) th.join();
  REQUIRE(t.size() == names);
  std::vector<int> hits(names, 0);
  for (int i = 0; i < names; ++i) {
    const name_id id = seen[0][static_cast<std::size_t>(i)];
    for (int w = 1; w < threads; ++w) CHECK(seen[static_cast<std::size_t>(w)][static_cast<std::size_t>(i)] == id);
    CHECK(t.name(id) == "kernel_" + std::to_string(i));
    ++hits[id];
  }
  for (int h : hits) CHECK(h == 1);  // dense: ids 0..names-1 each used once
}

namespace {
// Counts bytes through a stateful allocator, to show the allocator parameter is honoured.
template <class T>
struct counting_allocator {
  using value_type = T;
  std::shared_ptr<std::size_t> bytes;
  explicit counting_allocator(std::shared_ptr<std::size_t> b) : bytes(std::move(b)) {}
  template <class U>
  counting_allocator(const counting_allocator<U>& o) noexcept : bytes(o.bytes) {}
  T* allocate(std::size_t n) {
    *bytes += n * sizeof(T);
    return std::allocator<T>{}.allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    *bytes -= n * sizeof(T);
    std::allocator<T>{}.deallocate(p, n);
  }
  template <class U>
  bool operator==(const counting_allocator<U>& o) const noexcept {
    return bytes == o.bytes;
  }
  template <class U>
  bool operator!=(const counting_allocator<U>& o) const noexcept {
    return bytes != o.bytes;
  }
};
}  // namespace

TEST_CASE("the allocator parameter carries every allocation") {
  auto bytes = std::make_shared<std::size_t>(0);
  {
    basic_name_table<counting_allocator<char>> t{counting_allocator<char>(bytes)};
    const std::string long_name(1000, 'x');
    t.intern(long_name);
    t.intern("short");
    CHECK(*bytes >= 1000);
    CHECK(t.name(0) == long_name);
  }
  CHECK(*bytes == 0);
}
