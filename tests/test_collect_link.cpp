// The real libcupti (CUDA 13): every symbol the collector uses resolves, both linked (-lcupti)
// and through dlopen; on a machine without a driver or GPU start() fails open with a status
// (no exception, no crash) and leaves nothing enabled. With a GPU it runs and stops cleanly.
#include <dlfcn.h>
#include <catch2/catch.hpp>
#include <failslow/collect/cupti_api.hpp>
#include <failslow/collect/cupti_collector.hpp>
#include <failslow/collect/step_windows.hpp>
#include <string>
#include <vector>

using namespace failslow;
using namespace failslow::collect;

TEST_CASE("collect link: the linked CUPTI has every function and reports its version") {
  const cupti_api api = linked_cupti_api();
  REQUIRE(api.complete());
  std::uint32_t version = 0;
  REQUIRE(api.get_version(&version) == CUPTI_SUCCESS);
  CHECK(version >= CUPTI_API_VERSION);
  CHECK(result_string(api, CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED).find("MULTIPLE_SUBSCRIBERS") !=
        std::string::npos);
}

TEST_CASE("collect link: dlopen finds the copy already in the process") {
  // The linked copy is loaded, so the soname lookup must return that very library.
  const cupti_api api = load_cupti_api();
  REQUIRE(api.complete());
  CHECK(api.get_version == &cuptiGetVersion);
  CHECK(api.source.find("libcupti.so") != std::string::npos);
  const cupti_api by_path = load_cupti_api(FAILSLOW_TEST_CUPTI_LIBRARY);
  CHECK(by_path.get_version == &cuptiGetVersion);
  CHECK_THROWS_AS(load_cupti_api("/nonexistent/libcupti.so.13"), failslow::unavailable_error);
  CHECK(cupti_soname() == "libcupti.so.13");
}

TEST_CASE("collect link: start fails open without a GPU, runs with one") {
  name_table names;
  std::vector<compress::window_summary> windows;
  step_windows sink(0, [&](compress::window_summary&& w) { windows.push_back(std::move(w)); });
  cupti_collector c(load_cupti_api(), sink, names);
  const collector_status s = c.start();
  INFO(to_string(s.state) << ": " << s.message);
  CHECK_FALSE(s.message.empty());
  const bool have_driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD) || dlopen("libcuda.so.1", RTLD_LAZY);
  if (!have_driver) {
    CHECK(s.state == collector_state::unavailable);
    CHECK(s.message.find("CUPTI") != std::string::npos);
  } else {
    CHECK((s.state == collector_state::running || s.state == collector_state::unavailable ||
           s.state == collector_state::in_use));
  }
  c.begin_step(0);  // harmless whatever the state
  c.stop();
  CHECK(c.stats().buffers_outstanding == 0);
}
