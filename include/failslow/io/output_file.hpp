// failslow/io/output_file.hpp -- write a file so that it is either whole or absent: the bytes go
// to a temporary name next to it, which is renamed to the file's name once they are all written.
//
// Synopsis
//   write_file_atomically(path, bytes)   the whole file at once
//   output_file f(path);                 streamed: f.write(bytes) as often as needed (or write to
//   f.write(bytes); ...; f.commit();     f.temp_path() with another library, e.g. zlib's gzopen,
//                                        after f.close_stream()); commit() renames
//   The temporary is PATH.tmp in the same folder (rename(2) is atomic within a file system, so a
//   reader -- a Prometheus textfile collector, a user's tail -- sees the old file or the new one,
//   never half of it). An output_file destroyed without commit() (an exception on the way, a
//   failed write) removes its temporary: a failed run leaves no partial file behind.
// Errors: invalid_argument naming the path and the system's reason (strerror) when the
//   temporary cannot be created, written, closed or renamed (a missing folder, a full disk, no
//   permission, the path is a directory).
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "failslow/core/compile_mode.hpp"

namespace failslow::io {

class output_file {
 public:
  FAILSLOW_FUNC explicit output_file(std::string path);
  output_file(const output_file&) = delete;
  output_file& operator=(const output_file&) = delete;
  ~output_file();

  const std::string& path() const noexcept { return path_; }
  const std::string& temp_path() const noexcept { return temp_; }

  FAILSLOW_FUNC void write(std::string_view bytes);

  /// Closes the stdio stream (for writers that reopen temp_path() themselves); idempotent.
  FAILSLOW_FUNC void close_stream();

  /// Flushes, closes and renames the temporary to the path: the file appears whole.
  FAILSLOW_FUNC void commit();

 private:
  std::string path_, temp_;
  std::FILE* file_ = nullptr;
  bool committed_ = false;
};

/// Writes `bytes` to PATH through PATH.tmp and a rename (file synopsis).
inline void write_file_atomically(const std::string& path, std::string_view bytes) {
  output_file f(path);
  f.write(bytes);
  f.commit();
}

}  // namespace failslow::io

#if FAILSLOW_HEADER_ONLY
#include "failslow/io/impl/output_file.ipp"
#endif
