// Test support: writes small Kineto traces (JSON text) with known contents.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace failslow_test {

struct synthetic_event {
  std::string cat;  // kernel, cuda_runtime, cpu_op, user_annotation, ...
  std::string name;
  std::int64_t ts_ns = 0, dur_ns = 0;
  int pid = 1, tid = 1;
  std::int64_t correlation = -1;  // -1: none
  std::string pg_name;            // NCCL "Process Group Name" when not empty
};

// ns -> "123.456" microseconds text (exact).
inline std::string us_text(std::int64_t ns) {
  const bool neg = ns < 0;
  const std::uint64_t a = neg ? static_cast<std::uint64_t>(-(ns + 1)) + 1 : static_cast<std::uint64_t>(ns);
  std::string frac = std::to_string(a % 1000);
  frac = std::string(3 - frac.size(), '0') + frac;
  return (neg ? "-" : "") + std::to_string(a / 1000) + "." + frac;
}

inline std::string kineto_json(int rank, int world, const std::vector<synthetic_event>& events) {
  std::string s = "{\"schemaVersion\": 1";
  if (rank >= 0)
    s += ", \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": " + std::to_string(rank) +
         ", \"world_size\": " + std::to_string(world) + "}";
  s += ", \"traceEvents\": [\n";
  for (std::size_t i = 0; i < events.size(); ++i) {
    const auto& e = events[i];
    const bool gpu = e.cat == "kernel" || e.cat == "gpu_memcpy" || e.cat == "gpu_memset";
    s += std::string(i ? ",\n" : "") + "{\"ph\": \"X\", \"cat\": \"" + e.cat + "\", \"name\": \"" + e.name +
         "\", \"pid\": " + std::to_string(e.pid) + ", \"tid\": " + std::to_string(e.tid) +
         ", \"ts\": " + us_text(e.ts_ns) + ", \"dur\": " + us_text(e.dur_ns) + ", \"args\": {";
    std::string args;
    if (gpu) args += "\"device\": " + std::to_string(e.pid) + ", \"stream\": " + std::to_string(e.tid);
    if (e.correlation >= 0)
      args += std::string(args.empty() ? "" : ", ") + "\"correlation\": " + std::to_string(e.correlation);
    if (!e.pg_name.empty())
      args += std::string(args.empty() ? "" : ", ") + "\"Process Group Name\": \"" + e.pg_name + "\"";
    s += args + "}}";
  }
  s += "\n]}\n";
  return s;
}

inline std::filesystem::path temp_dir(const std::string& name) {
  auto d = std::filesystem::temp_directory_path() / ("failslow_test_" + name);
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

inline void write_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

}  // namespace failslow_test
