// Store 4-byte name ids in events instead of strings; look the strings up when reporting.
//   ./example_name_interning
#include <failslow/core/event.hpp>
#include <failslow/core/name_table.hpp>
#include <iostream>
#include <vector>

int main() {
  failslow::name_table names;  // thread-safe: readers on several threads may share it
  std::vector<failslow::event> events;
  const char* kernels[] = {"flash_fwd_kernel", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "flash_fwd_kernel"};
  std::int64_t t = 0;
  for (const char* k : kernels) {
    failslow::event e;
    e.start_ns = t;
    e.end_ns = t + 1500;
    e.name = names.intern(k);  // the same string always gets the same id
    e.rank = 0;
    events.push_back(e);
    t += 2000;
  }
  std::cout << names.size() << " distinct names for " << events.size() << " events\n";
  for (const auto& e : events) std::cout << e.name << " " << names.name(e.name) << " " << e.duration_ns() << " ns\n";
}
