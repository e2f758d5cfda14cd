// A fake CUPTI for tests and benchmarks: the real record structs from the CUDA 13 headers,
// packed into buffers the way CUPTI packs them (each record 8-byte aligned, its size given by
// its kind), handed out and taken back through the collector's request/complete callbacks,
// with dropped-record counts when no buffer is given. Global state, like CUPTI's.
#pragma once

#include <cupti.h>

#include <cstdint>
#include <cstring>
#include <mutex>
#include <set>
#include <vector>

#include <failslow/collect/clock_anchor.hpp>
#include <failslow/collect/cupti_api.hpp>

namespace fake_cupti {

struct state {
  std::recursive_mutex mutex;
  CUpti_BuffersCallbackRequestFunc request = nullptr;
  CUpti_BuffersCallbackCompleteFunc complete = nullptr;
  std::multiset<int> enabled;
  std::vector<int> enable_calls;
  std::uint8_t* buffer = nullptr;  // the buffer being filled
  std::size_t size = 0, used = 0;
  std::size_t dropped = 0;  // since the last query
  std::size_t dropped_total = 0;
  CUptiResult subscribe_result = CUPTI_SUCCESS;
  CUptiResult enable_result = CUPTI_SUCCESS;
  CUptiResult version_result = CUPTI_SUCCESS;
  int subscribers = 0;
  int flush_forced = 0, flush_default = 0;
  std::uint32_t flush_period = 0;
  std::int64_t device_minus_host_ns = -1'000'000'000;  // CUPTI's clock runs 1 s behind the host's
};

inline state& s() {
  static state st;
  return st;
}

inline void reset() {
  auto& st = s();
  std::lock_guard<std::recursive_mutex> lock(st.mutex);
  st.request = nullptr;
  st.complete = nullptr;
  st.enabled.clear();
  st.enable_calls.clear();
  st.buffer = nullptr;
  st.size = st.used = st.dropped = st.dropped_total = 0;
  st.subscribe_result = st.enable_result = st.version_result = CUPTI_SUCCESS;
  st.subscribers = 0;
  st.flush_forced = st.flush_default = 0;
  st.flush_period = 0;
}

/// Size CUPTI gives a record of this kind (0: a kind the fake does not know).
inline std::size_t record_size(CUpti_ActivityKind k) {
  switch (k) {
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return sizeof(CUpti_ActivityKernel10);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return sizeof(CUpti_ActivityMemcpy6);
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      return sizeof(CUpti_ActivityMemcpyPtoP4);
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return sizeof(CUpti_ActivityMemset4);
    case CUPTI_ACTIVITY_KIND_MARKER:
      return sizeof(CUpti_ActivityMarker2);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
      return sizeof(CUpti_ActivityAPI);
    default:
      return 0;
  }
}

inline CUptiResult CUPTIAPI get_version(std::uint32_t* v) {
  *v = CUPTI_API_VERSION;
  return s().version_result;
}
inline CUptiResult CUPTIAPI get_result_string(CUptiResult r, const char** str) {
  *str = r == CUPTI_SUCCESS                                    ? "CUPTI_SUCCESS"
         : r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ? "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"
                                                               : "CUPTI_ERROR_UNKNOWN";
  return CUPTI_SUCCESS;
}
inline CUptiResult CUPTIAPI get_timestamp(std::uint64_t* t) {
  *t = static_cast<std::uint64_t>(failslow::collect::host_clock_ns() + s().device_minus_host_ns);
  return CUPTI_SUCCESS;
}
inline CUptiResult CUPTIAPI subscribe(CUpti_SubscriberHandle* h, CUpti_CallbackFunc, void*) {
  if (s().subscribe_result != CUPTI_SUCCESS) return s().subscribe_result;
  ++s().subscribers;
  *h = reinterpret_cast<CUpti_SubscriberHandle>(&s());
  return CUPTI_SUCCESS;
}
inline CUptiResult CUPTIAPI unsubscribe(CUpti_SubscriberHandle) {
  --s().subscribers;
  return CUPTI_SUCCESS;
}
inline CUptiResult CUPTIAPI register_callbacks(CUpti_BuffersCallbackRequestFunc rq,
                                               CUpti_BuffersCallbackCompleteFunc c) {
  std::lock_guard<std::recursive_mutex> lock(s().mutex);
  s().request = rq;
  s().complete = c;
  return CUPTI_SUCCESS;
}
inline CUptiResult CUPTIAPI enable(CUpti_ActivityKind k) {
  std::lock_guard<std::recursive_mutex> lock(s().mutex);
  s().enable_calls.push_back(static_cast<int>(k));
  // enable_result applies to memset (a later kind), so earlier kinds were enabled first.
  if (k == CUPTI_ACTIVITY_KIND_MEMSET && s().enable_result != CUPTI_SUCCESS) return s().enable_result;
  s().enabled.insert(static_cast<int>(k));
  return CUPTI_SUCCESS;
}
inline CUptiResult CUPTIAPI disable(CUpti_ActivityKind k) {
  std::lock_guard<std::recursive_mutex> lock(s().mutex);
  auto it = s().enabled.find(static_cast<int>(k));
  if (it != s().enabled.end()) s().enabled.erase(it);
  return CUPTI_SUCCESS;
}
/// Hands the buffer being filled back through the completion callback.
inline void complete_current() {
  auto& st = s();
  std::lock_guard<std::recursive_mutex> lock(st.mutex);
  if (!st.buffer) return;
  std::uint8_t* b = st.buffer;
  const std::size_t used = st.used, size = st.size;
  st.buffer = nullptr;
  st.used = st.size = 0;
  st.complete(nullptr, 0, b, size, used);
}
inline CUptiResult CUPTIAPI flush_all(std::uint32_t flag) {
  ++(flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED ? s().flush_forced : s().flush_default);
  complete_current();
  return CUPTI_SUCCESS;
}
inline CUptiResult CUPTIAPI flush_period(std::uint32_t ms) {
  s().flush_period = ms;
  return CUPTI_SUCCESS;
}
inline CUptiResult CUPTIAPI get_next_record(std::uint8_t* buffer, std::size_t valid, CUpti_Activity** record) {
  if (!buffer) return CUPTI_ERROR_INVALID_PARAMETER;
  std::size_t at = 0;
  if (*record) {
    const auto* cur = *record;
    at = static_cast<std::size_t>(reinterpret_cast<std::uint8_t*>(*record) - buffer) + record_size(cur->kind);
  }
  if (at >= valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  if (valid - at < sizeof(CUpti_Activity)) return CUPTI_ERROR_INVALID_KIND;
  auto* next = reinterpret_cast<CUpti_Activity*>(buffer + at);
  const std::size_t n = record_size(next->kind);
  if (n == 0 || valid - at < n) return CUPTI_ERROR_INVALID_KIND;  // unknown to CUPTI, or cut short
  *record = next;
  return CUPTI_SUCCESS;
}
inline CUptiResult CUPTIAPI get_num_dropped(CUcontext, std::uint32_t, std::size_t* dropped) {
  std::lock_guard<std::recursive_mutex> lock(s().mutex);
  *dropped = s().dropped;
  s().dropped = 0;
  return CUPTI_SUCCESS;
}

inline failslow::collect::cupti_api api() {
  failslow::collect::cupti_api a;
  a.get_version = &get_version;
  a.get_result_string = &get_result_string;
  a.get_timestamp = &get_timestamp;
  a.subscribe = &subscribe;
  a.unsubscribe = &unsubscribe;
  a.register_callbacks = &register_callbacks;
  a.enable = &enable;
  a.disable = &disable;
  a.flush_all = &flush_all;
  a.flush_period = &flush_period;
  a.get_next_record = &get_next_record;
  a.get_num_dropped_records = &get_num_dropped;
  a.source = "fake CUPTI";
  return a;
}

/// "The device" writes one record: into the current buffer, asking for one when needed;
/// dropped (and counted) when the client gives none. Only kinds that are enabled are written.
template <class Record>
bool emit(const Record& r) {
  auto& st = s();
  std::lock_guard<std::recursive_mutex> lock(st.mutex);
  if (!st.enabled.count(static_cast<int>(r.kind))) return false;
  const std::size_t n = sizeof(Record);
  if (st.buffer && st.size - st.used < n) complete_current();
  if (!st.buffer) {
    std::size_t max_records = 0;
    st.request(&st.buffer, &st.size, &max_records);
    st.used = 0;
    if (!st.buffer || st.size < n) {
      st.buffer = nullptr;
      ++st.dropped;
      ++st.dropped_total;
      return false;
    }
  }
  std::memcpy(st.buffer + st.used, &r, n);
  st.used += n;
  return true;
}

// Record builders (device timestamps in CUPTI's clock).
inline CUpti_ActivityKernel10 kernel(const char* name, std::uint64_t start, std::uint64_t end, std::uint32_t corr,
                                     std::uint32_t stream = 7, std::uint32_t device = 0) {
  CUpti_ActivityKernel10 k;
  std::memset(&k, 0, sizeof k);
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = start;
  k.end = end;
  k.name = name;
  k.correlationId = corr;
  k.streamId = stream;
  k.deviceId = device;
  k.contextId = 1;
  return k;
}
inline CUpti_ActivityMemcpy6 memcpy_record(std::uint8_t copy_kind, std::uint8_t src, std::uint8_t dst,
                                           std::uint64_t start, std::uint64_t end, std::uint64_t bytes) {
  CUpti_ActivityMemcpy6 m;
  std::memset(&m, 0, sizeof m);
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = copy_kind;
  m.srcKind = src;
  m.dstKind = dst;
  m.start = start;
  m.end = end;
  m.bytes = bytes;
  m.streamId = 3;
  m.correlationId = 99;
  return m;
}

/// A runtime API call (kind RUNTIME), e.g. CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000.
inline CUpti_ActivityAPI runtime_call(CUpti_CallbackId cbid, std::uint64_t start, std::uint64_t end, std::uint32_t corr,
                                      std::uint32_t thread = 11) {
  CUpti_ActivityAPI a;
  std::memset(&a, 0, sizeof a);
  a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  a.cbid = cbid;
  a.start = start;
  a.end = end;
  a.correlationId = corr;
  a.threadId = thread;
  a.processId = 1;
  return a;
}

}  // namespace fake_cupti
