// The workload of gpu-check.sh: steps of many short kernels and a few long ones on two
// streams, synchronised once per step like a training loop; prints what it launched and how
// long the timed steps took. gpu_check [steps] [short per step] [long per step]
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

__global__ void spin(long long cycles, float* sink) {
  const long long start = clock64();
  float x = threadIdx.x;
  while (clock64() - start < cycles) x = x * 0.999f + 1.0f;
  if (x == -1.0f) sink[0] = x;  // never true: keeps the loop
}

#define CHECK(call)                                                    \
  do {                                                                 \
    cudaError_t e_ = (call);                                           \
    if (e_ != cudaSuccess) {                                           \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_)); \
      return 1;                                                        \
    }                                                                  \
  } while (0)

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 200;
  const int shorts = argc > 2 ? std::atoi(argv[2]) : 500;
  const int longs = argc > 3 ? std::atoi(argv[3]) : 4;
  float* sink = nullptr;
  CHECK(cudaMalloc(&sink, sizeof(float)));
  cudaStream_t s[2];
  for (auto& x : s) CHECK(cudaStreamCreate(&x));
  int clock_khz = 0;
  CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  const long long short_cycles = clock_khz / 1000 * 2;  // ~2 us
  const long long long_cycles = clock_khz * 2LL;        // ~2 ms
  long long launched = 0;
  auto step = [&] {
    for (int i = 0; i < shorts; ++i) spin<<<1, 32, 0, s[i % 2]>>>(short_cycles, sink);
    for (int i = 0; i < longs; ++i) spin<<<1, 32, 0, s[i % 2]>>>(long_cycles, sink);
    launched += shorts + longs;
    return cudaDeviceSynchronize();
  };
  for (int w = 0; w < 5; ++w) CHECK(step());  // warm-up, not timed
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) CHECK(step());
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("launched %lld kernels; timed %d steps in %.3f ms\n", launched, steps, ms);
  return 0;
}
