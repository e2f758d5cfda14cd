// failslow/core/impl/error.ipp -- the definitions of core/error.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <string>

#include "failslow/core/error.hpp"

namespace failslow {

FAILSLOW_FUNC_DEF std::string parse_error::format(const source_location& w, const std::string& expected) {
  std::string msg = w.source.empty() ? std::string("<input>") : w.source;
  if (w.line != 0) {
    msg += ':' + std::to_string(w.line);
    if (w.column != 0) msg += ':' + std::to_string(w.column);
  }
  msg += " (byte " + std::to_string(w.offset) + "): expected " + expected;
  return msg;
}

}  // namespace failslow
