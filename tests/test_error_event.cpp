#include <catch2/catch.hpp>
#include <cstring>
#include <failslow/core/error.hpp>
#include <failslow/core/event.hpp>
#include <failslow/version.hpp>
#include <string>
#include <type_traits>

using namespace failslow;

TEST_CASE("every failslow exception derives from failslow::error") {
  STATIC_REQUIRE(std::is_base_of_v<error, invalid_argument>);
  STATIC_REQUIRE(std::is_base_of_v<error, domain_error>);
  STATIC_REQUIRE(std::is_base_of_v<error, parse_error>);
  STATIC_REQUIRE(std::is_base_of_v<error, unavailable_error>);
  STATIC_REQUIRE(std::is_base_of_v<std::runtime_error, error>);
  REQUIRE_THROWS_AS([] { throw domain_error("x"); }(), error);
}

TEST_CASE("parse_error carries and prints its location") {
  const parse_error e({"trace.json", 3, 14, 120}, "a ',' or '}'");
  CHECK(e.where().source == "trace.json");
  CHECK(e.where().line == 3);
  CHECK(e.where().column == 14);
  CHECK(e.where().offset == 120);
  CHECK(e.expected() == "a ',' or '}'");
  CHECK(std::string(e.what()) == "trace.json:3:14 (byte 120): expected a ',' or '}'");
  const parse_error bin({"", 0, 0, 77}, "a varint");
  CHECK(std::string(bin.what()) == "<input> (byte 77): expected a varint");
}

TEST_CASE("event is a compact trivially copyable record") {
  STATIC_REQUIRE(std::is_trivially_copyable_v<event>);
  STATIC_REQUIRE(sizeof(event) == 40);
  event e{};
  e.start_ns = 1'000;
  e.end_ns = 3'500;
  e.kind = event_kind::collective;
  CHECK(e.duration_ns() == 2'500);
  CHECK(e.is_well_formed());
  event copy;
  std::memcpy(&copy, &e, sizeof e);
  CHECK(copy.duration_ns() == 2'500);
  CHECK(copy.kind == event_kind::collective);
  e.end_ns = 999;
  CHECK_FALSE(e.is_well_formed());
  e.start_ns = -5;
  e.end_ns = 10;
  CHECK_FALSE(e.is_well_formed());
}

TEST_CASE("event kinds have names and device-ness") {
  CHECK(to_string(event_kind::kernel) == "kernel");
  CHECK(to_string(event_kind::collective) == "collective");
  CHECK(to_string(event_kind::runtime) == "runtime");
  CHECK(to_string(static_cast<event_kind>(200)) == "unknown");
  CHECK(is_device_activity(event_kind::memcpy));
  CHECK(is_device_activity(event_kind::collective));
  CHECK_FALSE(is_device_activity(event_kind::cpu_op));
  CHECK_FALSE(is_device_activity(event_kind::annotation));
}

TEST_CASE("header version equals the CMake project version") {
  CHECK(std::string(version_string) == FAILSLOW_CMAKE_PROJECT_VERSION);
  CHECK(std::to_string(version_major) + "." + std::to_string(version_minor) + "." + std::to_string(version_patch) ==
        version_string);
}
