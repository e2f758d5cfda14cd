// failslow/io/detail/file_bytes.hpp -- the bytes of a whole file: read into memory when it is a
// plain file, gunzipped into memory when it is gzip data (magic bytes 1f 8b, whatever its name).
// Needs zlib (linked by failslow::simdjson).
// Memory: on Linux the bytes go into anonymous pages aligned to 2 MiB and advised as
//   transparent huge pages (advise_huge_pages, also used for the event vector): in virtual
//   machines a 4 KiB page fault costs ~10 us and the hardware prefetcher stops at every 4 KiB
//   page, so a 54 MB trace read this way is scanned ~2x faster than through a memory mapping
//   of the page cache. Elsewhere: new[] (POSIX without huge pages: the same, 4 KiB pages).
// file_stream: the same bytes one piece at a time (bounded memory: the .fsum readers).
// Errors: a file that cannot be opened or read (missing, a directory) throws
//   failslow::invalid_argument naming the path and the reason; corrupt or
//   truncated gzip data throws failslow::parse_error with the decompressed offset reached.
#pragma once

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "failslow/core/compile_mode.hpp"

namespace failslow::io::detail {

/// Asks the kernel to back the 2 MiB-aligned part of [p, p + bytes) with transparent huge
/// pages (Linux MADV_HUGEPAGE; a no-op elsewhere, for short ranges, or when refused). Call it
/// before the memory is first written.
FAILSLOW_FUNC void advise_huge_pages(const void* p, std::size_t bytes) noexcept;

/// A writable block of `size` bytes: anonymous pages starting at a 2 MiB boundary and advised
/// as huge pages where mmap exists, new[] otherwise. Move-only.
class byte_block {
 public:
  byte_block() = default;
  FAILSLOW_FUNC explicit byte_block(std::size_t size);
  byte_block(const byte_block&) = delete;
  byte_block& operator=(const byte_block&) = delete;
  byte_block(byte_block&& o) noexcept { swap(o); }
  byte_block& operator=(byte_block&& o) noexcept {
    swap(o);
    return *this;
  }
  ~byte_block();
  char* data() const noexcept { return data_; }
  void swap(byte_block& o) noexcept {
    std::swap(map_, o.map_);
    std::swap(map_len_, o.map_len_);
    std::swap(data_, o.data_);
    std::swap(heap_, o.heap_);
  }

 private:
  char* map_ = nullptr;
  std::size_t map_len_ = 0;
  char* data_ = nullptr;
  std::unique_ptr<char[]> heap_;
};

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

  std::string_view view() const noexcept { return std::string_view(block_.data(), size_); }
  bool compressed() const noexcept { return compressed_; }

  FAILSLOW_FUNC static file_bytes open(const std::string& path);

 private:
  void swap(file_bytes& o) noexcept {
    std::swap(size_, o.size_);
    std::swap(compressed_, o.compressed_);
    block_.swap(o.block_);
  }

  byte_block block_;
  std::size_t size_ = 0;
  bool compressed_ = false;
};

/// The bytes of a file one piece at a time, for readers that keep bounded memory (.fsum):
/// gunzipped when it is gzip data, as file_bytes, whatever its name (zlib reads plain files
/// unchanged). Errors as file_bytes: invalid_argument when it cannot be opened or is a
/// directory, parse_error for corrupt or truncated gzip data.
class file_stream {
 public:
  FAILSLOW_FUNC explicit file_stream(const std::string& path);

  /// Stores up to `capacity` next bytes at `buffer` and returns how many; 0 at the end.
  FAILSLOW_FUNC std::size_t read(char* buffer, std::size_t capacity);
  /// Bytes read so far (after decompression).
  std::uint64_t offset() const noexcept { return offset_; }

 private:
  std::string path_;
  std::unique_ptr<gzFile_s, int (*)(gzFile)> z_;
  std::uint64_t offset_ = 0;
};

}  // namespace failslow::io::detail

#if FAILSLOW_HEADER_ONLY
#include "failslow/io/detail/impl/file_bytes.ipp"
#endif
