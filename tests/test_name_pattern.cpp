#include <catch2/catch.hpp>
#include <failslow/core/name_pattern.hpp>
#include <string>

using namespace failslow;

TEST_CASE("exact and prefix skip the 'void ' return type of demangled kernels") {
  const name_pattern exact("at::native::foo", match_kind::exact);
  CHECK(exact.matches("at::native::foo"));
  CHECK(exact.matches("void at::native::foo"));
  CHECK_FALSE(exact.matches("at::native::foo2"));
  const name_pattern prefix("at::native::", match_kind::prefix);
  CHECK(prefix.matches("void at::native::elementwise_kernel<128, 2>(...)"));
  CHECK_FALSE(prefix.matches("void fbgemm_gpu::permute"));
}

TEST_CASE("contains and case folding") {
  const name_pattern c("NCCL", match_kind::contains, case_sensitivity::insensitive);
  CHECK(c.matches("void ncclDevKernel_AllGather_RING_LL(ncclDevComm*)"));
  CHECK_FALSE(name_pattern("NCCL", match_kind::contains).matches("ncclKernel_"));
  CHECK(name_pattern("x", match_kind::contains).matches("x"));
  CHECK_FALSE(name_pattern("xy", match_kind::contains).matches("x"));
}

TEST_CASE("glob semantics") {
  auto g = [](const char* p, const char* s) { return name_pattern(p).matches(s); };
  CHECK(g("*", ""));
  CHECK(g("*", "anything"));
  CHECK(g("a*b", "ab"));
  CHECK(g("a*b", "axxxb"));
  CHECK_FALSE(g("a*b", "axxxbc"));
  CHECK(g("a*b*c", "abbbc"));
  CHECK(g("?", "x"));
  CHECK_FALSE(g("?", ""));
  CHECK(g("*sgemm_??x*", "volta_sgemm_32x128_nn"));
  CHECK_FALSE(g("*sgemm_??x*", "volta_sgemm_128x64_nn"));
  CHECK(g("*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaab"));
  CHECK_FALSE(g("*a*a*a*a*b", std::string(5000, 'a').c_str()));  // no exponential backtracking
}

TEST_CASE("textual form round-trips and rejects typos") {
  for (const char* spec : {"prefix:ncclDevKernel_", "contains/i:nccl", "exact:Memset (Device)", "glob:*fmha*"}) {
    CHECK(parse_name_pattern(spec).to_string() == spec);
  }
  const name_pattern bare = parse_name_pattern("at::native::*copy*");
  CHECK(bare.kind() == match_kind::glob);
  CHECK(bare.matches("at::native::direct_copy_kernel"));
  CHECK(parse_name_pattern("contains/i:NCCL").sensitivity() == case_sensitivity::insensitive);
  CHECK_THROWS_AS(parse_name_pattern("contians:nccl"), invalid_argument);
  CHECK_THROWS_AS(parse_name_pattern("prefix:"), invalid_argument);
  CHECK_THROWS_AS(name_pattern(""), invalid_argument);
}
