// failslow/core/error.hpp -- the exception hierarchy of failslow.
//
// Synopsis
//   Every error failslow throws derives from failslow::error (itself a std::runtime_error), so
//   one catch clause catches them all; the derived types say what went wrong:
//     invalid_argument  a parameter is outside what the function accepts (bad size, bad name)
//     domain_error      a value is outside the mathematical domain (rank >= world size, NaN)
//     parse_error       a text or file is malformed; carries the source, line, column or byte
//                       offset, and what was expected there
//     unavailable_error a component was not built in (e.g. the simdjson reader)
//   Hot streaming paths do not throw for bad events: they count them in a named skip reason
//   that the caller reads (see the component's documentation).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "failslow/core/compile_mode.hpp"

namespace failslow {

/// Root of every exception thrown by failslow.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A parameter is outside what the function accepts.
class invalid_argument : public error {
 public:
  using error::error;
};

/// A value is outside the domain of the computation (e.g. a rank outside the world).
class domain_error : public error {
 public:
  using error::error;
};

/// A required optional component was not compiled in.
class unavailable_error : public error {
 public:
  using error::error;
};

/// Where in a text or file a parse error happened. Lines and columns are 1-based; 0 means
/// "not known". The byte offset is 0-based.
struct source_location {
  std::string source;        ///< file name or a description such as "<routing rules>"
  std::uint64_t line = 0;    ///< 1-based line, 0 if not line-oriented
  std::uint64_t column = 0;  ///< 1-based column, 0 if unknown
  std::uint64_t offset = 0;  ///< 0-based byte offset from the start of the source
};

/// A malformed input: what was expected, and where.
class parse_error : public error {
 public:
  parse_error(source_location where, std::string expected)
      : error(format(where, expected)), where_(std::move(where)), expected_(std::move(expected)) {}

  const source_location& where() const noexcept { return where_; }
  const std::string& expected() const noexcept { return expected_; }

 private:
  FAILSLOW_FUNC static std::string format(const source_location& w, const std::string& expected);

  source_location where_;
  std::string expected_;
};

}  // namespace failslow

#if FAILSLOW_HEADER_ONLY
#include "failslow/core/impl/error.ipp"
#endif
