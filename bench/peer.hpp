// Benchmark support: run a peer script (Python with numpy/scipy) once per distinct command line
// and return the seconds per item it measured, so a Google Benchmark run can report
// "x faster than the peer" next to its own time.
#pragma once

#include <benchmark/benchmark.h>

#include <array>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace failslow_bench {

// Runs `python3 peers/<script> <args>`; the script prints its seconds per item as the last
// line of its output. nullopt when Python or the peer's modules are missing.
inline std::optional<double> peer_seconds_per_item(const std::string& script, const std::string& args) {
  static std::map<std::string, std::optional<double>> cache;
  const std::string cmd =
      std::string(FAILSLOW_PYTHON) + " " + FAILSLOW_BENCH_PEERS_DIR + "/" + script + " " + args + " 2>/dev/null";
  if (auto it = cache.find(cmd); it != cache.end()) return it->second;
  std::optional<double> result;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  if (pipe) {
    std::array<char, 256> buf{};
    std::string last;
    while (fgets(buf.data(), static_cast<int>(buf.size()), pipe.get())) last = buf.data();
    try {
      if (!last.empty()) result = std::stod(last);
    } catch (...) {
      result.reset();
    }
  }
  cache[cmd] = result;
  return result;
}

// Sets counters "peer_s_per_item" and "speedup" (peer time / our time per item) on `state`,
// given our own measured seconds per item; marks the peer as missing otherwise.
inline void report_peer(benchmark::State& state, const std::string& script, const std::string& args,
                        double our_seconds_per_item) {
  const auto peer = peer_seconds_per_item(script, args);
  if (!peer || our_seconds_per_item <= 0) {
    state.SetLabel("peer " + script + " unavailable");
    return;
  }
  state.counters["peer_ns_per_item"] = *peer * 1e9;
  state.counters["speedup"] = *peer / our_seconds_per_item;
  state.SetLabel("vs " + script);
}

}  // namespace failslow_bench
