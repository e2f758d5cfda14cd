// failslow/version.hpp -- the library version (kept equal to the CMake project version; a
// test checks it).
#pragma once

#define FAILSLOW_VERSION_MAJOR 0
#define FAILSLOW_VERSION_MINOR 1
#define FAILSLOW_VERSION_PATCH 0
#define FAILSLOW_VERSION_STRING "0.1.0"

namespace failslow {
inline constexpr int version_major = FAILSLOW_VERSION_MAJOR;
inline constexpr int version_minor = FAILSLOW_VERSION_MINOR;
inline constexpr int version_patch = FAILSLOW_VERSION_PATCH;
inline constexpr const char* version_string = FAILSLOW_VERSION_STRING;
}  // namespace failslow
