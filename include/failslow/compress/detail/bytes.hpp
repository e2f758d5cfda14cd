// Internal: varints, zigzag, little-endian words and CRC-32C for the summary codec.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace failslow::compress::detail {

inline void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

constexpr std::uint64_t zigzag(std::int64_t v) noexcept {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
constexpr std::int64_t unzigzag(std::uint64_t v) noexcept {
  return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
}

inline void put_u32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), table-driven.
inline std::uint32_t crc32c(std::string_view data, std::uint32_t crc = 0) noexcept {
  static const std::array<std::uint32_t, 256> table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  crc = ~crc;
  for (unsigned char b : data) crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

// Small signed values as 4-bit nibbles, two per byte; a value outside [-7, 7] writes the
// escape nibble 15 and goes to a side stream as a zigzag varint. Repeating statistics change
// by a few quantisation steps from window to window, so most deltas cost half a byte.
class nibble_writer {
 public:
  void put(std::int64_t v) {
    const std::uint64_t z = zigzag(v);
    if (z < 15) {
      nibble(static_cast<unsigned>(z));
    } else {
      nibble(15);
      put_varint(escapes_, z);
    }
  }
  // Appends varint(nibble bytes), the nibble bytes, then the escapes.
  void finish(std::string& out) const {
    put_varint(out, nibbles_.size());
    out += nibbles_;
    out += escapes_;
  }

 private:
  void nibble(unsigned n) {
    if (half_)
      nibbles_.back() = static_cast<char>(static_cast<unsigned char>(nibbles_.back()) | (n << 4));
    else
      nibbles_.push_back(static_cast<char>(n));
    half_ = !half_;
  }
  std::string nibbles_, escapes_;
  bool half_ = false;
};

// Bounds-checked reader: every get reports failure instead of reading past the end.
class byte_reader {
 public:
  explicit byte_reader(std::string_view data) noexcept : data_(data) {}

  bool varint(std::uint64_t& v) noexcept {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= data_.size()) return false;
      const auto b = static_cast<unsigned char>(data_[pos_++]);
      if (shift == 63 && (b & 0x7E)) return false;  // more than 64 bits
      v |= static_cast<std::uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  }
  bool svarint(std::int64_t& v) noexcept {
    std::uint64_t u;
    if (!varint(u)) return false;
    v = unzigzag(u);
    return true;
  }
  bool u32(std::uint32_t& v) noexcept {
    if (data_.size() - pos_ < 4) return false;
    v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(static_cast<unsigned char>(data_[pos_++])) << (8 * i);
    return true;
  }
  bool bytes(std::size_t n, std::string_view& out) noexcept {
    if (data_.size() - pos_ < n) return false;
    out = data_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  std::size_t position() const noexcept { return pos_; }
  std::size_t remaining() const noexcept { return data_.size() - pos_; }

 private:
  std::string_view data_;
  std::size_t pos_ = 0;
};

// Reads what nibble_writer wrote; every get reports failure instead of reading past the end.
class nibble_reader {
 public:
  // Takes the nibble section from `r`; the escapes are the rest of `r`.
  bool open(byte_reader& r) noexcept {
    std::uint64_t n;
    if (!r.varint(n) || n > r.remaining()) return false;
    std::string_view bytes;
    if (!r.bytes(static_cast<std::size_t>(n), bytes)) return false;
    nibbles_ = bytes;
    escapes_ = &r;
    return true;
  }
  bool get(std::int64_t& v) noexcept {
    if (pos_ / 2 >= nibbles_.size()) return false;
    const auto byte = static_cast<unsigned char>(nibbles_[pos_ / 2]);
    const unsigned n = pos_ % 2 ? byte >> 4 : byte & 0x0F;
    ++pos_;
    if (n < 15) {
      v = unzigzag(n);
      return true;
    }
    std::uint64_t z;
    if (!escapes_->varint(z) || z < 15) return false;
    v = unzigzag(z);
    return true;
  }
  // All nibbles used (allowing the padding half of the last byte).
  bool exhausted() const noexcept { return (pos_ + 1) / 2 == nibbles_.size(); }

 private:
  std::string_view nibbles_;
  byte_reader* escapes_ = nullptr;
  std::size_t pos_ = 0;
};

}  // namespace failslow::compress::detail
