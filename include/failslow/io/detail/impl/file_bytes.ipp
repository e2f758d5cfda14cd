// failslow/io/detail/impl/file_bytes.ipp -- the definitions of io/detail/file_bytes.hpp: included by that
// header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <zlib.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "failslow/core/error.hpp"
#include "failslow/io/detail/file_bytes.hpp"

#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#define FAILSLOW_HAS_MMAP 1
#endif

namespace failslow::io::detail {

FAILSLOW_FUNC_DEF void advise_huge_pages(const void* p, std::size_t bytes) noexcept {
#if defined(FAILSLOW_HAS_MMAP) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t huge = std::uintptr_t{1} << 21;
  const auto b = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t lo = (b + huge - 1) & ~(huge - 1), hi = (b + bytes) & ~(huge - 1);
  if (hi > lo) ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

FAILSLOW_FUNC_DEF byte_block::byte_block(std::size_t size) {
#if defined(FAILSLOW_HAS_MMAP)
  constexpr std::size_t huge = std::size_t{1} << 21;
  const std::size_t len = size + (size >= huge ? huge : 0);
  void* p = ::mmap(nullptr, len == 0 ? 1 : len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p != MAP_FAILED) {
    map_ = static_cast<char*>(p);
    map_len_ = len == 0 ? 1 : len;
    data_ = map_;
    if (size >= huge) {
      const auto b = reinterpret_cast<std::uintptr_t>(map_);
      data_ = map_ + (((b + huge - 1) & ~(std::uintptr_t{huge} - 1)) - b);
      advise_huge_pages(data_, size);
    }
    return;
  }
#endif
  heap_.reset(new char[size == 0 ? 1 : size]);
  data_ = heap_.get();
}

FAILSLOW_INLINE byte_block::~byte_block() {
#if defined(FAILSLOW_HAS_MMAP)
  if (map_) ::munmap(map_, map_len_);
#endif
}

/// `path` opened for reading, or invalid_argument naming why not (errno) or that it is a
/// directory (fopen opens one for reading on Linux; its "size" is no file's).
inline std::unique_ptr<std::FILE, int (*)(std::FILE*)> open_for_reading(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!f) throw invalid_argument("cannot open " + path + ": " + std::strerror(errno));
#if defined(FAILSLOW_HAS_MMAP)
  struct stat st {};
  if (::fstat(::fileno(f.get()), &st) == 0 && S_ISDIR(st.st_mode))
    throw invalid_argument("cannot read " + path + ": it is a directory, not a file");
#endif
  return f;
}

FAILSLOW_FUNC_DEF file_bytes file_bytes::open(const std::string& path) {
  file_bytes out;
  auto f = open_for_reading(path);
  unsigned char magic[2] = {0, 0};
  const bool gz = std::fread(magic, 1, 2, f.get()) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  if (!gz) {
    if (std::fseek(f.get(), 0, SEEK_END) != 0) throw invalid_argument("cannot seek in " + path);
    const long end = std::ftell(f.get());
    if (end < 0) throw invalid_argument("cannot size " + path);
    const auto size = static_cast<std::size_t>(end);
    std::rewind(f.get());
    out.block_ = byte_block(size);
#if defined(FAILSLOW_HAS_MMAP)
    // pread(2) straight into the block: no stdio buffer in between (and no reliance on
    // where stdio left the descriptor's offset).
    std::size_t got = 0;
    const int fd = ::fileno(f.get());
    while (got < size) {
      const ::ssize_t n = ::pread(fd, out.block_.data() + got, size - got, static_cast<::off_t>(got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw invalid_argument("cannot read " + path);
      got += static_cast<std::size_t>(n);
    }
#else
    if (size != 0 && std::fread(out.block_.data(), 1, size, f.get()) != size)
      throw invalid_argument("cannot read " + path);
#endif
    out.size_ = size;
    return out;
  }
  // The gzip trailer holds the uncompressed size mod 2^32: a good first capacity.
  std::size_t capacity = 1 << 20;
  if (std::fseek(f.get(), -4, SEEK_END) == 0) {
    unsigned char t[4];
    if (std::fread(t, 1, 4, f.get()) == 4)
      capacity = static_cast<std::size_t>(t[0]) | static_cast<std::size_t>(t[1]) << 8 |
                 static_cast<std::size_t>(t[2]) << 16 | static_cast<std::size_t>(t[3]) << 24;
  }
  f.reset();
  capacity += 1;  // one spare byte: reaching it means the hint was short
  out.block_ = byte_block(capacity);
  out.compressed_ = true;
  std::unique_ptr<gzFile_s, int (*)(gzFile)> z(gzopen(path.c_str(), "rb"), gzclose);
  if (!z) throw invalid_argument("cannot open " + path);
  gzbuffer(z.get(), 1 << 17);
  std::size_t length = 0;
  for (;;) {
    if (length == capacity) {
      byte_block bigger(capacity * 2);
      std::memcpy(bigger.data(), out.block_.data(), length);
      out.block_ = std::move(bigger);
      capacity *= 2;
    }
    const std::size_t room = capacity - length;
    const unsigned chunk = room > (1u << 30) ? (1u << 30) : static_cast<unsigned>(room);
    const int n = gzread(z.get(), out.block_.data() + length, chunk);
    if (n < 0) {
      int code = 0;
      const char* msg = gzerror(z.get(), &code);
      throw parse_error(source_location{path, 0, 0, length},
                        std::string("valid gzip data (zlib: ") + (msg ? msg : "error") + ")");
    }
    if (n == 0) break;
    length += static_cast<std::size_t>(n);
  }
  // gzread stops without an error at a truncated stream; zlib says so through gzerror.
  int code = 0;
  gzerror(z.get(), &code);
  if (code == Z_BUF_ERROR)
    throw parse_error(source_location{path, 0, 0, length}, "the rest of the gzip stream (the file is truncated)");
  if (code != Z_OK) throw parse_error(source_location{path, 0, 0, length}, "valid gzip data (zlib error)");
  out.size_ = length;
  return out;
}

FAILSLOW_FUNC_DEF file_stream::file_stream(const std::string& path) : path_(path), z_(nullptr, gzclose) {
  open_for_reading(path);  // by stdio first: the reason it cannot be (errno), and no directory
  z_.reset(gzopen(path.c_str(), "rb"));
  if (!z_) throw invalid_argument("cannot open " + path);
  gzbuffer(z_.get(), 1 << 17);
}

FAILSLOW_FUNC_DEF std::size_t file_stream::read(char* buffer, std::size_t capacity) {
  const unsigned chunk = capacity > (1u << 30) ? (1u << 30) : static_cast<unsigned>(capacity);
  const int n = gzread(z_.get(), buffer, chunk);
  int code = 0;
  if (n < 0) {
    const char* msg = gzerror(z_.get(), &code);
    throw parse_error(source_location{path_, 0, 0, offset_},
                      std::string("valid gzip data (zlib: ") + (msg ? msg : "error") + ")");
  }
  if (n == 0) {  // gzread stops without an error at a truncated stream; zlib says so here
    gzerror(z_.get(), &code);
    if (code == Z_BUF_ERROR)
      throw parse_error(source_location{path_, 0, 0, offset_}, "the rest of the gzip stream (the file is truncated)");
    if (code != Z_OK) throw parse_error(source_location{path_, 0, 0, offset_}, "valid gzip data (zlib error)");
  }
  offset_ += static_cast<std::uint64_t>(n);
  return static_cast<std::size_t>(n);
}

}  // namespace failslow::io::detail
