// failslow/core/compile_mode.hpp -- header-only (the default) or separately compiled.
//
// Synopsis
//   Header-only: every header holds its declarations and includes its definitions
//   (<area>/impl/<name>.ipp) at its end. Functions that do real work are templates on a
//   defaulted, unused parameter (FAILSLOW_FUNC): nothing is instantiated or emitted in a
//   translation unit that does not call them.
//   Separately compiled (as Boost.Asio's BOOST_ASIO_SEPARATE_COMPILATION): define
//   FAILSLOW_SEPARATE_COMPILATION in every translation unit (linking the CMake target
//   failslow::compiled does) and the headers are declarations only -- the .ipp files are not
//   read, so an #include costs the parse of the types and signatures, not of the bodies. The
//   definitions are compiled once, as ordinary functions, in src/failslow.cpp (the library of
//   failslow::compiled), which defines FAILSLOW_BUILDING_LIBRARY as well.
//
//   FAILSLOW_HEADER_ONLY   1 where the headers include their definitions
//   FAILSLOW_FUNC          on a function's declaration in its header (a member function's in its
//                          class): header-only `template <class = void> inline`, separately nothing
//   FAILSLOW_FUNC_DEF      on the same function's definition in the .ipp:
//                            header-only `template <class> inline`, separately compiled nothing
//   FAILSLOW_FRIEND_FUNC   befriends a FAILSLOW_FUNC function (declared before the class):
//                            header-only `template <class> friend`, separately `friend`
//   FAILSLOW_INLINE        on what cannot be a template -- destructors, virtual functions, functions
//                          passed by name as callbacks -- defined in the .ipp: header-only
//                          `inline`, separately nothing
//
//   Templates on real types (allocators, value types, Eigen expressions) and constexpr functions
//   stay in the headers in both modes.
// Errors: none; mixing the modes in one program is an ODR violation (the CMake targets keep
//   a program on one of them).
#pragma once

// One marker per line reads better than the formatter's three.
// clang-format off
#if !defined(FAILSLOW_SEPARATE_COMPILATION)
#define FAILSLOW_HEADER_ONLY 1
#define FAILSLOW_FUNC template <class = void> inline
#define FAILSLOW_FUNC_DEF template <class> inline
#define FAILSLOW_FRIEND_FUNC template <class> friend
#define FAILSLOW_INLINE inline
#else
#if defined(FAILSLOW_BUILDING_LIBRARY)
#define FAILSLOW_HEADER_ONLY 1
#else
#define FAILSLOW_HEADER_ONLY 0
#endif
#define FAILSLOW_FUNC
#define FAILSLOW_FUNC_DEF
#define FAILSLOW_FRIEND_FUNC friend
#define FAILSLOW_INLINE
#endif
// clang-format on
