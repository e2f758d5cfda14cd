// failslow/io/detail/file_bytes.hpp -- the bytes of a whole file: memory-mapped when it is a
// plain file (POSIX), gunzipped into memory when it is gzip data (magic bytes 1f 8b, whatever
// its name). Needs zlib (linked by failslow::simdjson).
// Errors: a file that cannot be opened or read throws failslow::invalid_argument; corrupt or
//   truncated gzip data throws failslow::parse_error with the decompressed offset reached.
#pragma once

#include <zlib.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "failslow/core/error.hpp"

#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#define FAILSLOW_HAS_MMAP 1
#endif

namespace failslow::io::detail {

class file_bytes {
 public:
  file_bytes() = default;
  file_bytes(const file_bytes&) = delete;
  file_bytes& operator=(const file_bytes&) = delete;
  file_bytes(file_bytes&& o) noexcept { swap(o); }
  file_bytes& operator=(file_bytes&& o) noexcept {
    swap(o);
    return *this;
  }
  ~file_bytes() { release(); }

  std::string_view view() const noexcept { return std::string_view(data_, size_); }
  bool compressed() const noexcept { return compressed_; }

  static file_bytes open(const std::string& path) {
    file_bytes out;
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), std::fclose);
    if (!f) throw invalid_argument("cannot open " + path);
    unsigned char magic[2] = {0, 0};
    const bool gz = std::fread(magic, 1, 2, f.get()) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    if (!gz) {
      if (std::fseek(f.get(), 0, SEEK_END) != 0) throw invalid_argument("cannot seek in " + path);
      const long end = std::ftell(f.get());
      if (end < 0) throw invalid_argument("cannot size " + path);
      const auto size = static_cast<std::size_t>(end);
#if defined(FAILSLOW_HAS_MMAP)
      if (size != 0) {
        const int fd = ::open(path.c_str(), O_RDONLY);
        if (fd >= 0) {
          int flags = MAP_PRIVATE;
#if defined(MAP_POPULATE)
          flags |= MAP_POPULATE;  // one fault-in pass instead of a fault per page
#endif
          void* p = ::mmap(nullptr, size, PROT_READ, flags, fd, 0);
          ::close(fd);
          if (p != MAP_FAILED) {
            out.mapped_ = true;
            out.data_ = static_cast<const char*>(p);
            out.size_ = size;
            return out;
          }
        }
      }
#endif
      std::rewind(f.get());
      out.heap_.reset(new char[size == 0 ? 1 : size]);
      if (size != 0 && std::fread(out.heap_.get(), 1, size, f.get()) != size)
        throw invalid_argument("cannot read " + path);
      out.data_ = out.heap_.get();
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
    out.heap_.reset(new char[capacity]);
    out.compressed_ = true;
    std::unique_ptr<gzFile_s, int (*)(gzFile)> z(gzopen(path.c_str(), "rb"), gzclose);
    if (!z) throw invalid_argument("cannot open " + path);
    gzbuffer(z.get(), 1 << 17);
    std::size_t length = 0;
    for (;;) {
      if (length == capacity) {
        std::unique_ptr<char[]> bigger(new char[capacity * 2]);
        std::memcpy(bigger.get(), out.heap_.get(), length);
        out.heap_ = std::move(bigger);
        capacity *= 2;
      }
      const std::size_t room = capacity - length;
      const unsigned chunk = room > (1u << 30) ? (1u << 30) : static_cast<unsigned>(room);
      const int n = gzread(z.get(), out.heap_.get() + length, chunk);
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
    out.data_ = out.heap_.get();
    out.size_ = length;
    return out;
  }

 private:
  void release() noexcept {
#if defined(FAILSLOW_HAS_MMAP)
    if (mapped_ && data_) ::munmap(const_cast<char*>(data_), size_);
#endif
    mapped_ = false;
    data_ = nullptr;
    size_ = 0;
    heap_.reset();
  }
  void swap(file_bytes& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(mapped_, o.mapped_);
    std::swap(compressed_, o.compressed_);
    std::swap(heap_, o.heap_);
  }

  const char* data_ = nullptr;
  std::size_t size_ = 0;
  bool mapped_ = false;
  bool compressed_ = false;
  std::unique_ptr<char[]> heap_;
};

}  // namespace failslow::io::detail
