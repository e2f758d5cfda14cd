// failslow/core/parallel_for.hpp -- the library's one way to spread work over threads.
//
// Synopsis
//   unsigned thread_count(threads)      threads, or (0) every core: std::thread::hardware_concurrency(),
//                                       at least 1. Every `threads` option of failslow means this:
//                                       0 = all cores, n = n threads, 1 = the calling thread only.
//   parallel_for(n, threads, body)      body(i) once for each i in [0, n), on min(thread_count(threads), n)
//                                       threads, the calling thread being one of them. Indices are
//                                       handed out one at a time from a shared counter, so items of
//                                       uneven cost (rows of a triangle, files of different sizes)
//                                       balance; which thread runs which i is unspecified, so body
//                                       writes only to its own item's outputs. No pool is kept:
//                                       the threads are started and joined by each call.
//   parallel_for(n, threads, body(i, worker))  the same, telling body which worker runs it, in
//                                       [0, parallel_workers(n, threads)): per-thread state (a
//                                       reader's buffers) indexed by worker, no locking.
//   parallel_workers(n, threads)        min(thread_count(threads), n): the threads a call starts.
// Complexity: n calls of body plus one thread start per extra thread (tens of microseconds).
// Errors: the first exception body throws is rethrown on the calling thread after every thread
//   has stopped; once one is thrown no new index is handed out (items already started finish).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <type_traits>
#include <vector>

namespace failslow {

/// `threads`, or every core when it is 0 (at least 1).
inline unsigned thread_count(unsigned threads) noexcept {
  return threads ? threads : std::max(1u, std::thread::hardware_concurrency());
}

/// The threads parallel_for(n, threads, ...) runs on (the calling one included).
inline std::size_t parallel_workers(std::size_t n, unsigned threads) noexcept {
  return std::min<std::size_t>(thread_count(threads), n);
}

/// body(i) or body(i, worker) for i in [0, n) on parallel_workers(n, threads) threads (see the
/// synopsis).
template <class Body>
void parallel_for(std::size_t n, unsigned threads, Body&& body) {
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto worker = [&](std::size_t w) {
    try {
      for (std::size_t i; (i = next.fetch_add(1)) < n;) {
        if constexpr (std::is_invocable_v<Body&, std::size_t, std::size_t>)
          body(i, w);
        else
          body(i);
      }
    } catch (...) {
      const std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      next = n;
    }
  };
  const std::size_t used = parallel_workers(n, threads);
  std::vector<std::thread> pool;
  try {
    for (std::size_t t = 1; t < used; ++t) pool.emplace_back(worker, t);
  } catch (const std::system_error&) {  // no more threads to be had: the ones started do the work
  }
  worker(0);
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace failslow
