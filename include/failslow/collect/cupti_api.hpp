// failslow/collect/cupti_api.hpp -- the CUPTI functions the collector calls, as a table of
// function pointers, resolved at run time from the process's libcupti.
//
// Synopsis
//   struct cupti_api   one pointer per CUPTI function the collector uses (activity API,
//                      subscribe/unsubscribe for the probe, timestamps, result strings). Tests
//                      fill it with a fake that behaves like CUPTI; production code gets it from
//   load_cupti_api(path = "")   dlopen in this order, the first that works:
//                      1. `path`, or $FAILSLOW_CUPTI_LIBRARY when path is empty;
//                      2. a libcupti already in the process: dlopen(soname, RTLD_NOLOAD) with the
//                         soname of the CUPTI the headers belong to (libcupti.so.13 for CUDA 13) --
//                         PyTorch wheels bring their own libcupti; sharing that copy keeps one
//                         CUPTI per process (two copies would both attach to the driver);
//                      3. dlopen(soname): LD_LIBRARY_PATH, the runpath, ld.so.cache;
//                      4. /usr/local/cuda/lib64 and /usr/local/cuda/extras/CUPTI/lib64.
//                      Every symbol is looked up; the library is never closed (CUPTI keeps threads).
//   linked_cupti_api()   the same table from the linked symbols (needs -lcupti, CUDA::cupti);
//                        only code that calls it needs the library at link time.
//   result_string(api, r)  "CUPTI_ERROR_UNKNOWN (999)" from cuptiGetResultString, or the number.
// Complexity: load O(symbols). Errors: load_cupti_api throws failslow::unavailable_error naming
//   what was tried and dlerror() when no libcupti with every symbol is found.
#pragma once

#include <cupti.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "failslow/core/error.hpp"

namespace failslow::collect {

/// The soname of the CUPTI these headers describe, e.g. "libcupti.so.13".
inline std::string cupti_soname() { return "libcupti.so." + std::to_string(CUDA_VERSION / 1000); }

struct cupti_api {
  decltype(&cuptiGetVersion) get_version = nullptr;
  decltype(&cuptiGetResultString) get_result_string = nullptr;
  decltype(&cuptiGetTimestamp) get_timestamp = nullptr;
  decltype(&cuptiSubscribe) subscribe = nullptr;
  decltype(&cuptiUnsubscribe) unsubscribe = nullptr;
  decltype(&cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
  decltype(&cuptiActivityEnable) enable = nullptr;
  decltype(&cuptiActivityDisable) disable = nullptr;
  decltype(&cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&cuptiActivityFlushPeriod) flush_period = nullptr;
  decltype(&cuptiActivityGetNextRecord) get_next_record = nullptr;
  decltype(&cuptiActivityGetNumDroppedRecords) get_num_dropped_records = nullptr;
  std::string source;  ///< where the functions came from (a path, "linked", "fake ...")

  /// Every pointer set.
  bool complete() const noexcept {
    return get_version && get_result_string && get_timestamp && subscribe && unsubscribe && register_callbacks &&
           enable && disable && flush_all && flush_period && get_next_record && get_num_dropped_records;
  }
};

/// "NAME (code)" for a CUPTI result.
inline std::string result_string(const cupti_api& api, CUptiResult r) {
  const char* s = nullptr;
  std::string out;
  if (api.get_result_string && api.get_result_string(r, &s) == CUPTI_SUCCESS && s) out = s;
  if (out.empty()) out = "CUPTI result";
  return out + " (" + std::to_string(static_cast<int>(r)) + ")";
}

namespace detail {

template <class Fn>
bool resolve(void* lib, const char* symbol, Fn& out) {
  void* p = dlsym(lib, symbol);
  out = reinterpret_cast<Fn>(p);
  return p != nullptr;
}

inline bool fill_from(void* lib, cupti_api& api) {
  bool ok = true;  // look every symbol up, so the table shows all that are missing
  ok = resolve(lib, "cuptiGetVersion", api.get_version) && ok;
  ok = resolve(lib, "cuptiGetResultString", api.get_result_string) && ok;
  ok = resolve(lib, "cuptiGetTimestamp", api.get_timestamp) && ok;
  ok = resolve(lib, "cuptiSubscribe", api.subscribe) && ok;
  ok = resolve(lib, "cuptiUnsubscribe", api.unsubscribe) && ok;
  ok = resolve(lib, "cuptiActivityRegisterCallbacks", api.register_callbacks) && ok;
  ok = resolve(lib, "cuptiActivityEnable", api.enable) && ok;
  ok = resolve(lib, "cuptiActivityDisable", api.disable) && ok;
  ok = resolve(lib, "cuptiActivityFlushAll", api.flush_all) && ok;
  ok = resolve(lib, "cuptiActivityFlushPeriod", api.flush_period) && ok;
  ok = resolve(lib, "cuptiActivityGetNextRecord", api.get_next_record) && ok;
  ok = resolve(lib, "cuptiActivityGetNumDroppedRecords", api.get_num_dropped_records) && ok;
  return ok;
}

}  // namespace detail

/// CUPTI resolved at run time (see the synopsis for the search order).
inline cupti_api load_cupti_api(std::string path = {}) {
  if (path.empty())
    if (const char* env = std::getenv("FAILSLOW_CUPTI_LIBRARY")) path = env;
  const std::string soname = cupti_soname();
  std::string tried, last_error;
  auto attempt = [&](const std::string& name, int flags, std::string_view how) -> void* {
    dlerror();
    void* lib = dlopen(name.c_str(), flags);
    tried += (tried.empty() ? "" : ", ") + std::string(how) + " " + name;
    if (!lib) {
      const char* e = dlerror();
      if (e) last_error = e;
    }
    return lib;
  };
  void* lib = nullptr;
  if (!path.empty()) {
    lib = attempt(path, RTLD_NOW | RTLD_LOCAL, "dlopen");
  } else {
    lib = attempt(soname, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD, "already loaded");
    if (!lib) lib = attempt(soname, RTLD_NOW | RTLD_LOCAL, "dlopen");
    for (const char* dir : {"/usr/local/cuda/lib64/", "/usr/local/cuda/extras/CUPTI/lib64/"})
      if (!lib) lib = attempt(dir + soname, RTLD_NOW | RTLD_LOCAL, "dlopen");
  }
  if (!lib) throw unavailable_error("CUPTI not found (tried " + tried + "): " + last_error);
  cupti_api api;
  if (!detail::fill_from(lib, api))
    throw unavailable_error("CUPTI library " + path + " lacks activity API symbols (not CUPTI " +
                            std::to_string(CUDA_VERSION / 1000) + "?)");
  Dl_info info{};
  api.source = dladdr(reinterpret_cast<void*>(api.get_version), &info) && info.dli_fname ? info.dli_fname : soname;
  return api;
}

/// The table from the symbols linked into the program (-lcupti).
inline cupti_api linked_cupti_api() {
  cupti_api api;
  api.get_version = &cuptiGetVersion;
  api.get_result_string = &cuptiGetResultString;
  api.get_timestamp = &cuptiGetTimestamp;
  api.subscribe = &cuptiSubscribe;
  api.unsubscribe = &cuptiUnsubscribe;
  api.register_callbacks = &cuptiActivityRegisterCallbacks;
  api.enable = &cuptiActivityEnable;
  api.disable = &cuptiActivityDisable;
  api.flush_all = &cuptiActivityFlushAll;
  api.flush_period = &cuptiActivityFlushPeriod;
  api.get_next_record = &cuptiActivityGetNextRecord;
  api.get_num_dropped_records = &cuptiActivityGetNumDroppedRecords;
  api.source = "linked";
  return api;
}

}  // namespace failslow::collect
