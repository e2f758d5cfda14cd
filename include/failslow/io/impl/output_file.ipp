// failslow/io/impl/output_file.ipp -- the definitions of io/output_file.hpp: included
// by that header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "failslow/core/error.hpp"
#include "failslow/io/output_file.hpp"

namespace failslow::io {

FAILSLOW_FUNC_DEF output_file::output_file(std::string path) : path_(std::move(path)), temp_(path_ + ".tmp") {
  file_ = std::fopen(temp_.c_str(), "wb");
  if (!file_) throw invalid_argument("cannot write " + path_ + ": " + std::strerror(errno));
}

FAILSLOW_INLINE output_file::~output_file() {
  if (committed_) return;
  if (file_) std::fclose(file_);
  std::remove(temp_.c_str());
}

FAILSLOW_FUNC_DEF void output_file::write(std::string_view bytes) {
  if (!file_) throw invalid_argument("cannot write " + path_ + ": the file is closed");
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size())
    throw invalid_argument("cannot write " + path_ + ": " + std::strerror(errno));
}

FAILSLOW_FUNC_DEF void output_file::close_stream() {
  if (!file_) return;
  const bool ok = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!ok) throw invalid_argument("cannot write " + path_ + ": " + std::strerror(errno));
}

FAILSLOW_FUNC_DEF void output_file::commit() {
  close_stream();
  if (std::rename(temp_.c_str(), path_.c_str()) != 0)
    throw invalid_argument("cannot write " + path_ + ": renaming " + temp_ + " failed: " + std::strerror(errno));
  committed_ = true;
}

}  // namespace failslow::io
