// Embedding the CUPTI collector in a C++ training loop: begin_step() at each step, scoped
// phases, window summaries to a .fsum file, a flight-recorder dump on request.
//
//   example_embed_trainer [out.fsum]
//
// Without a GPU (or with another tool holding CUPTI) start() says why and the loop runs on
// untouched -- this is what the smoke test checks on machines without one. The "training
// step" here is a host loop; a real trainer launches its kernels where the comment says.
#include <cstdio>
#include <string>

#include <failslow/collect/cupti_collector.hpp>
#include <failslow/collect/step_windows.hpp>
#include <failslow/compress/codec.hpp>

int main(int argc, char** argv) {
  using namespace failslow;
  const std::string out_path = argc > 1 ? argv[1] : "embed_trainer.fsum";
  const int rank = 0;

  name_table names;
  compress::summary_encoder encoder([&](name_id id) { return std::string(names.name(id)); });
  std::string fsum = encoder.header();
  std::size_t windows = 0;
  collect::step_windows sink(rank, [&](compress::window_summary&& w) {
    encoder.encode(w, fsum);
    ++windows;
  });

  collect::collector_options options;
  options.flight_recorder_bytes = std::size_t{16} << 20;  // the last ~260,000 raw records
  options.on_dump = [&](collect::recorder_snapshot&& s) {
    std::string json;
    collect::write_kineto_json(s, names, json, {rank, 0, -1});
    std::printf("flight recorder: %zu records, %zu bytes of Kineto JSON\n", s.records.size(), json.size());
  };

  collect::cupti_api api;
  try {
    api = collect::load_cupti_api();
  } catch (const unavailable_error& e) {
    std::printf("no CUPTI: %s\n", e.what());  // api stays empty: start() reports unavailable
  }
  collect::cupti_collector collector(api, sink, names, options);
  const collect::collector_status status = collector.start();
  std::printf("collector %s: %s\n", std::string(to_string(status.state)).c_str(), status.message.c_str());

  double loss = 1.0;
  for (int step = 0; step < 20; ++step) {
    collector.begin_step(step);  // after the previous step's synchronisation point
    {
      auto forward = collector.phase("forward");
      for (int i = 0; i < 10000; ++i) loss *= 0.99999;  // launch the forward kernels here
    }
    {
      auto backward = collector.phase("backward");
      for (int i = 0; i < 20000; ++i) loss *= 1.000001;  // and the backward ones here
    }
    if (step == 10) collector.request_dump();  // e.g. when an in-process L1 alarm fires
  }
  collector.stop();

  const auto s = collector.stats();
  std::printf("loss %.6f; %llu kernels, %llu collectives, %llu memcpy, %llu memset captured, %llu dropped by CUPTI\n",
              loss, static_cast<unsigned long long>(s.parse.kernels),
              static_cast<unsigned long long>(s.parse.collectives), static_cast<unsigned long long>(s.parse.memcpys),
              static_cast<unsigned long long>(s.parse.memsets), static_cast<unsigned long long>(s.dropped));
  if (status.running()) {
    if (std::FILE* f = std::fopen(out_path.c_str(), "wb")) {
      std::fwrite(fsum.data(), 1, fsum.size(), f);
      std::fclose(f);
      std::printf("%zu windows -> %s\n", windows, out_path.c_str());
    }
  }
  return 0;
}
