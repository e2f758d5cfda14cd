// libfailslow_inject.so -- always-on kernel capture in any CUDA process, no code change:
//
//   CUDA_INJECTION64_PATH=/path/to/libfailslow_inject.so FAILSLOW_OUT=/shared/job42 python train.py
//
// At CUDA initialisation the driver calls InitializeInjection(), which starts the CUPTI
// collector (collect/cupti_collector.hpp) with per-window summaries written to
// $FAILSLOW_OUT/rank<R>.fsum (R from RANK, OMPI_COMM_WORLD_RANK, SLURM_PROCID or PMI_RANK, else
// the pid); it flushes at exit. It never crashes or stalls its host: every failure is a line on
// stderr ("failslow-inject: ...") and the process runs on untouched.
// Environment:
//   FAILSLOW_OUT                 folder of the .fsum files (default: the current directory)
//   FAILSLOW_WINDOW_MS           time windows of this length (default 1000) until step marks come
//   FAILSLOW_NVTX_STEP_PREFIX    NVTX ranges that start steps (e.g. "ProfilerStep#"; enables the
//                                MARKER activity: set NVTX_INJECTION64_PATH to libcupti too)
//   FAILSLOW_FLIGHT_RECORDER_MB  raw-record ring (default 0 = off); dumped on SIGUSR2 and when a
//                                window is 1.5x slower than the median of the previous 10, to
//                                $FAILSLOW_OUT/rank<R>-dump<N>.json (a Kineto trace)
//   FAILSLOW_LAUNCHES=1          also record the kernel launch calls (CUPTI RUNTIME records): each
//                                window's host launch pace, so a host that launches slower than its
//                                peers' is found before its GPU idles for it (a record per call)
//   FAILSLOW_CUPTI_LIBRARY       a libcupti to use instead of the soname lookup
//   FAILSLOW_QUIET=1             no status line on stderr
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <string>

#include <failslow/collect/cupti_collector.hpp>
#include <failslow/collect/step_windows.hpp>
#include <failslow/compress/codec.hpp>
#include <failslow/detect/ratio_gate.hpp>

namespace {

using namespace failslow;

const char* env(const char* name, const char* fallback = nullptr) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

long env_long(const char* name, long fallback) {
  const char* v = env(name);
  if (!v) return fallback;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  return end && *end == '\0' && x >= 0 ? x : fallback;
}

std::int32_t process_rank() {
  for (const char* name : {"RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "PMI_RANK"})
    if (const long r = env_long(name, -1); r >= 0) return static_cast<std::int32_t>(r);
  return static_cast<std::int32_t>(getpid());
}

void say(const std::string& line) {
  if (!env("FAILSLOW_QUIET")) std::fprintf(stderr, "failslow-inject: %s\n", line.c_str());
}

// Window summaries appended to one .fsum file, each window's blocks flushed as it closes.
class fsum_writer {
 public:
  fsum_writer(const std::string& path, const name_table& names)
      : file_(std::fopen(path.c_str(), "wb")), encoder_([&names](name_id id) { return std::string(names.name(id)); }) {
    if (!file_) throw invalid_argument("cannot open " + path + " for writing");
    const std::string h = encoder_.header();
    std::fwrite(h.data(), 1, h.size(), file_);
    std::fflush(file_);
  }
  ~fsum_writer() {
    if (file_) std::fclose(file_);
  }
  void write(const compress::window_summary& w) {
    buffer_.clear();
    encoder_.encode(w, buffer_);
    std::fwrite(buffer_.data(), 1, buffer_.size(), file_);
    std::fflush(file_);
  }

 private:
  std::FILE* file_;
  compress::summary_encoder encoder_;
  std::string buffer_;
};

struct injection {
  std::string out_dir;
  std::int32_t rank = -1;
  name_table names;
  std::unique_ptr<fsum_writer> writer;
  std::unique_ptr<collect::step_windows> windows;
  std::unique_ptr<collect::cupti_collector> collector;
  // In-process L1: a window 1.5x slower than the median of the previous 10 dumps the recorder.
  detect::ratio_gate<double> gate{[] {
    detect::ratio_gate_options o;
    o.open_threshold = 1.5;
    o.close_threshold = 1.2;
    return o;
  }()};
  std::atomic<int> dumps{0};

  void on_window(compress::window_summary&& w) {
    writer->write(w);
    const double span = static_cast<double>(w.end_ns - w.start_ns);
    if (gate.update(span).event == detect::gate_event::opened && collector) collector->request_dump();
  }

  void dump(collect::recorder_snapshot&& s) {
    const std::string path = out_dir + "/rank" + std::to_string(rank) + "-dump" + std::to_string(dumps++) + ".json";
    std::string json;
    collect::write_kineto_json(s, names, json, {rank, static_cast<std::int64_t>(getpid()), -1});
    if (std::FILE* f = std::fopen(path.c_str(), "wb")) {
      std::fwrite(json.data(), 1, json.size(), f);
      std::fclose(f);
      say("flight recorder dumped " + std::to_string(s.records.size()) + " records to " + path);
    }
  }
};

injection* g_injection = nullptr;
std::once_flag g_once;

void stop_at_exit() {
  try {
    if (g_injection && g_injection->collector) {
      g_injection->collector->stop();  // forced flush: the last windows reach the file
      const auto s = g_injection->collector->stats();
      say("stopped: " + std::to_string(s.parse.used()) + " records, " +
          std::to_string(g_injection->windows->windows()) + " windows, " + std::to_string(s.dropped) +
          " dropped by CUPTI");
    }
  } catch (const std::exception& e) {
    say(std::string("stop failed: ") + e.what());
  } catch (...) {
    say("stop failed");
  }
}

void start() {
  auto inj = std::make_unique<injection>();
  inj->out_dir = env("FAILSLOW_OUT", ".");
  inj->rank = process_rank();
  const std::string path = inj->out_dir + "/rank" + std::to_string(inj->rank) + ".fsum";
  inj->writer = std::make_unique<fsum_writer>(path, inj->names);
  collect::step_window_options wopt;
  wopt.time_window_ns = env_long("FAILSLOW_WINDOW_MS", 1000) * 1'000'000;
  injection* raw = inj.get();
  inj->windows = std::make_unique<collect::step_windows>(
      inj->rank, [raw](compress::window_summary&& w) { raw->on_window(std::move(w)); }, wopt);
  collect::collector_options copt;
  if (const char* prefix = env("FAILSLOW_NVTX_STEP_PREFIX")) {
    copt.nvtx = true;
    copt.parser.nvtx_step_prefix = prefix;
  }
  copt.launches = env_long("FAILSLOW_LAUNCHES", 0) != 0;
  copt.flight_recorder_bytes = static_cast<std::size_t>(env_long("FAILSLOW_FLIGHT_RECORDER_MB", 0)) << 20;
  copt.on_dump = [raw](collect::recorder_snapshot&& s) { raw->dump(std::move(s)); };
  collect::cupti_api api;
  try {
    api = collect::load_cupti_api();
  } catch (const unavailable_error& e) {
    say(std::string("not capturing: ") + e.what());
    return;
  }
  inj->collector = std::make_unique<collect::cupti_collector>(api, *inj->windows, inj->names, copt);
  const auto status = inj->collector->start();
  say("rank " + std::to_string(inj->rank) + ": " + std::string(to_string(status.state)) + ": " + status.message +
      (status.running() ? " -> " + path : ""));
  if (!status.running()) return;
  if (copt.flight_recorder_bytes > 0) collect::cupti_collector::install_dump_signal(SIGUSR2);
  g_injection = inj.release();  // lives until the process ends: CUPTI may call back until then
  std::atexit(stop_at_exit);
}

}  // namespace

/// Called by the CUDA driver when CUDA_INJECTION64_PATH names this library. Returns 1 always:
/// a failure to start the collector must not fail CUDA's initialisation.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  std::call_once(g_once, [] {
    try {
      start();
    } catch (const std::exception& e) {
      say(std::string("not capturing: ") + e.what());
    } catch (...) {
      say("not capturing: unknown error");
    }
  });
  return 1;
}
