// libFuzzer target for the Kineto reader: any input either reads (and then every record is
// accounted for and every stored event is well formed) or throws one of failslow's
// documented errors; never a crash, a hang or undefined behaviour (run it with ASan+UBSan).
//   tests/fuzz: cmake -DFAILSLOW_BUILD_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ ...; ./fuzz_kineto_reader
//   -max_total_time=30
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <failslow/io/kineto_reader.hpp>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  failslow::name_table names;
  failslow::io::kineto_read_options options;
  options.chunk_bytes = 64;  // exercise chunk boundaries on small inputs
  options.max_depth = 64;
  try {
    const auto t = failslow::io::read_kineto_buffer(std::string_view(reinterpret_cast<const char*>(data), size), names,
                                                    options, "<fuzz>");
    if (!t.stats.accounted()) std::abort();
    for (const auto& e : t.events)
      if (!e.is_well_formed()) std::abort();
  } catch (const failslow::parse_error& e) {
    if (e.where().offset > size) std::abort();
  } catch (const failslow::error&) {
  }
  return 0;
}
