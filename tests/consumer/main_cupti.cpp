// The CUPTI component through the installed or vendored package: the collector's header compiles
// against failslow::cupti's include path and links with its libraries (CUPTI itself is loaded at
// run time, so this runs on a machine without a GPU too).
#include <failslow/collect/cupti_collector.hpp>
#include <iostream>

int main() {
  failslow::collect::collector_options o;
  std::cout << "failslow::cupti: collector options, " << o.buffer_count << " buffers\n";
  return o.buffer_count > 0 ? 0 : 1;
}
