// Test support: access to the real Kineto traces in ../shared/data/kineto (not in the repo).
#pragma once

#include <zlib.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace failslow_test {

// The folder of real traces; skips the current test case (exit code FAILSLOW_SKIP_CODE, which
// ctest reports as "Skipped") with a clear message when it is absent.
inline std::filesystem::path kineto_dir_or_skip() {
  const std::filesystem::path dir = FAILSLOW_KINETO_DIR;
  if (!std::filesystem::is_directory(dir)) {
    std::cerr << "SKIPPED: real Kineto traces not found at " << dir.string()
              << " (set -DFAILSLOW_KINETO_DIR=... to run this test)\n";
    std::exit(FAILSLOW_SKIP_CODE);
  }
  return dir;
}

// All *.json and *.json.gz files below `dir`, sorted.
inline std::vector<std::filesystem::path> kineto_files(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (e.is_regular_file() &&
        (n.size() > 5 && (n.substr(n.size() - 5) == ".json" || (n.size() > 8 && n.substr(n.size() - 8) == ".json.gz"))))
      out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Whole file, gunzipped when compressed (gzread reads plain files unchanged).
inline std::string read_maybe_gz(const std::filesystem::path& p) {
  gzFile f = gzopen(p.string().c_str(), "rb");
  if (!f) throw std::runtime_error("cannot open " + p.string());
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  gzclose(f);
  if (n < 0) throw std::runtime_error("cannot read " + p.string());
  return out;
}

inline nlohmann::json load_trace(const std::filesystem::path& p) { return nlohmann::json::parse(read_maybe_gz(p)); }

}  // namespace failslow_test
