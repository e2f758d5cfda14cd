#include <atomic>
#include <catch2/catch.hpp>
#include <cstddef>
#include <failslow/core/parallel_for.hpp>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace failslow;

TEST_CASE("threads = 0 means every core") {
  CHECK(thread_count(0) == std::max(1u, std::thread::hardware_concurrency()));
  CHECK(thread_count(3) == 3);
  CHECK(parallel_workers(2, 0) <= 2);
  CHECK(parallel_workers(0, 8) == 0);
  CHECK(parallel_workers(100, 4) == 4);
}

TEST_CASE("parallel_for runs every index once, whatever the thread count") {
  for (unsigned threads : {0u, 1u, 2u, 7u}) {
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{1000}}) {
      std::vector<int> runs(n, 0);
      std::vector<std::size_t> worker_of(n, 999);
      parallel_for(n, threads, [&](std::size_t i, std::size_t w) {
        ++runs[i];
        worker_of[i] = w;
      });
      for (std::size_t i = 0; i < n; ++i) {
        CHECK(runs[i] == 1);
        CHECK(worker_of[i] < parallel_workers(n, threads));
      }
      std::vector<double> out(n);
      parallel_for(n, threads, [&](std::size_t i) { out[i] = 2.0 * static_cast<double>(i); });
      for (std::size_t i = 0; i < n; ++i) CHECK(out[i] == 2.0 * static_cast<double>(i));
    }
  }
}

TEST_CASE("parallel_for rethrows the first exception and stops handing out indices") {
  std::atomic<std::size_t> ran{0};
  CHECK_THROWS_AS(parallel_for(100000, 4,
                               [&](std::size_t i) {
                                 ++ran;
                                 if (i == 10) throw std::runtime_error("item 10");
                               }),
                  std::runtime_error);
  CHECK(ran.load() < 100000);
}
