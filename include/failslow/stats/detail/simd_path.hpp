// failslow/stats/detail/simd_path.hpp -- which vector instruction set a hot kernel runs with.
//
// Synopsis
//   A build for baseline x86-64 (no -march) still reaches AVX2 / AVX-512 speed in the kernels
//   that matter: each is compiled once per path, the AVX2 and AVX-512 copies with GCC/Clang
//   __attribute__((target(...))), and the path is picked at run time from the CPU.
//     simd_path                       baseline (what the build targets: SSE2 by default, more
//                                     with -march), avx2, avx512 (AVX-512F, DQ and BW: every
//                                     CPU with DQ has BW; the JSON scan's byte compares need it)
//     simd_path_supported(p)          whether this CPU (and OS) runs path p; baseline always
//     best_simd_path()                the widest supported path, looked up once
//   Only x86-64 with GCC or Clang has the avx2 / avx512 paths (FAILSLOW_SIMD_DISPATCH is then
//   defined); elsewhere every kernel has its plain code and only baseline is supported.
//   Kernels take the path as a parameter so tests run every path the machine has.
// Complexity: O(1) (one CPUID query per process).
// Errors: none; kernels asked for a path the CPU lacks throw failslow::invalid_argument.
#pragma once

#include <cstddef>

namespace failslow::stats::detail {

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define FAILSLOW_SIMD_DISPATCH 1
#endif

enum class simd_path { baseline, avx2, avx512 };
/// Number of simd_path values (they are 0 .. simd_path_count - 1).
inline constexpr std::size_t simd_path_count = 3;

inline const char* to_string(simd_path p) noexcept {
  switch (p) {
    case simd_path::avx2:
      return "avx2";
    case simd_path::avx512:
      return "avx512";
    default:
      return "baseline";
  }
}

/// Whether this CPU runs kernels compiled for path p.
inline bool simd_path_supported(simd_path p) noexcept {
#if defined(FAILSLOW_SIMD_DISPATCH)
  __builtin_cpu_init();
  switch (p) {
    case simd_path::avx2:
      return __builtin_cpu_supports("avx2");
    case simd_path::avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512bw");
    default:
      return true;
  }
#else
  return p == simd_path::baseline;
#endif
}

/// The widest path this CPU supports.
inline simd_path best_simd_path() noexcept {
  static const simd_path best = simd_path_supported(simd_path::avx512) ? simd_path::avx512
                                : simd_path_supported(simd_path::avx2) ? simd_path::avx2
                                                                       : simd_path::baseline;
  return best;
}

}  // namespace failslow::stats::detail
