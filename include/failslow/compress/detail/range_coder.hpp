// Internal: the .fsum codec's entropy stage (format 3): an adaptive binary range coder (the
// coder of LZMA: 11-bit probabilities, moved 1/32 of the way to every bit they code) and
// integers over it, binarised as zero flag, sign, Elias-gamma length in unary and the top two
// bits below the leading one, each with its own adaptive probability per context (a field of
// the summary); lower bits go at probability 1/2. A field whose values concentrate near zero
// (a kernel's statistic from one step to the next) costs close to its empirical entropy,
// where nibbles cost 4 bits and more. A probability adapts fast while fresh (rc_prob). Encoder and decoder use integer
// arithmetic only. Decoding never reads past its input: a read past the end is counted and reported by overrun()
// (damage), and lengths are bounded (64 bits).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace failslow::compress::detail {

inline constexpr unsigned rc_prob_bits = 11;
inline constexpr std::uint16_t rc_half = 1u << (rc_prob_bits - 1);
inline constexpr unsigned rc_move_bits = 5;
inline constexpr std::uint32_t rc_top = 1u << 24;

/// An adaptive probability (of a 0 bit, in 1/2048): it moves half way to the first bit it
/// codes, then a quarter, ... down to 1/32 from the fifth on (a fresh model learns in a few
/// bits, where a fixed 1/32 takes dozens; models are reset at every window).
struct rc_prob {
  std::uint16_t p = rc_half;
  std::uint8_t seen = 0;
  void update(unsigned b) noexcept {
    const unsigned shift = seen < rc_move_bits ? ++seen : rc_move_bits;
    if (b == 0)
      p = static_cast<std::uint16_t>(p + (((1u << rc_prob_bits) - p) >> shift));
    else
      p = static_cast<std::uint16_t>(p - (p >> shift));
    p = p < 31 ? 31 : p > 2017 ? 2017 : p;  // never certain: a surprise costs at most 6 bits
  }
};

/// The adaptive probabilities of one kind of integer (a context).
struct int_model {
  rc_prob special{2017, 0};  // a flag the field may code first (code 0), rarely set
  rc_prob zero, sign;
  std::array<rc_prob, 24> length{};   // unary length: bit i of the prefix (the last shared)
  std::array<rc_prob, 24 * 3> top{};  // two bits below the leading one, as a tree
};

class range_encoder {
 public:
  void bit(rc_prob& p, unsigned b) {
    const std::uint32_t bound = (range_ >> rc_prob_bits) * p.p;
    if (b == 0) {
      range_ = bound;
    } else {
      low_ += bound;
      range_ -= bound;
    }
    p.update(b);
    while (range_ < rc_top) {
      range_ <<= 8;
      shift_low();
    }
  }
  void direct_bit(unsigned b) {
    range_ >>= 1;
    if (b) low_ += range_;
    while (range_ < rc_top) {
      range_ <<= 8;
      shift_low();
    }
  }
  /// An unsigned integer (context m).
  void put(int_model& m, std::uint64_t u) {
    bit(m.zero, u == 0);
    if (u != 0) magnitude(m, u);
  }
  /// A signed integer (context m).
  void put_signed(int_model& m, std::int64_t v) {
    bit(m.zero, v == 0);
    if (v == 0) return;
    bit(m.sign, v < 0);
    magnitude(m, v < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v));
  }
  /// Flushes the coder and appends its bytes to `out`.
  void finish(std::string& out) {
    for (int i = 0; i < 5; ++i) shift_low();
    out += bytes_;
  }

 private:
  void magnitude(int_model& m, std::uint64_t u) {  // u >= 1
    unsigned k = 0;                                // bits below the leading one
    while (k < 63 && (u >> (k + 1)) != 0) ++k;
    for (unsigned i = 0; i < k; ++i) bit(m.length[i < 23 ? i : 23], 1);
    if (k < 63) bit(m.length[k < 23 ? k : 23], 0);
    unsigned node = 1;
    for (unsigned i = 0; i < k; ++i) {
      const unsigned b = static_cast<unsigned>((u >> (k - 1 - i)) & 1);
      if (i < 2) {
        bit(m.top[(k < 23 ? k : 23) * 3 + node - 1], b);
        node = node * 2 + b;
      } else {
        direct_bit(b);
      }
    }
  }
  void shift_low() {
    if (static_cast<std::uint32_t>(low_) < 0xFF000000u || (low_ >> 32) != 0) {
      const auto carry = static_cast<std::uint8_t>(low_ >> 32);
      std::uint8_t temp = cache_;
      do {
        bytes_.push_back(static_cast<char>(static_cast<std::uint8_t>(temp + carry)));
        temp = 0xFF;
      } while (--cache_size_ != 0);
      cache_ = static_cast<std::uint8_t>(low_ >> 24);
    }
    ++cache_size_;
    low_ = (low_ & 0x00FFFFFFu) << 8;
  }

  std::uint64_t low_ = 0;
  std::uint32_t range_ = 0xFFFFFFFFu;
  std::uint8_t cache_ = 0;
  std::uint64_t cache_size_ = 1;
  std::string bytes_;
};

class range_decoder {
 public:
  explicit range_decoder(std::string_view data) : data_(data) {
    for (int i = 0; i < 5; ++i) code_ = (code_ << 8) | next();
  }
  unsigned bit(rc_prob& p) {
    const std::uint32_t bound = (range_ >> rc_prob_bits) * p.p;
    unsigned b;
    if (code_ < bound) {
      range_ = bound;
      b = 0;
    } else {
      code_ -= bound;
      range_ -= bound;
      b = 1;
    }
    p.update(b);
    normalize();
    return b;
  }
  unsigned direct_bit() {
    range_ >>= 1;
    unsigned b = 0;
    if (code_ >= range_) {
      code_ -= range_;
      b = 1;
    }
    normalize();
    return b;
  }
  /// False on damage (a read past the end).
  bool get(int_model& m, std::uint64_t& u) {
    u = 0;
    if (bit(m.zero)) return !overrun();
    return magnitude(m, u);
  }
  bool get_signed(int_model& m, std::int64_t& v) {
    v = 0;
    if (bit(m.zero)) return !overrun();
    const bool negative = bit(m.sign) != 0;
    std::uint64_t u;
    if (!magnitude(m, u)) return false;
    v = static_cast<std::int64_t>(negative ? std::uint64_t{0} - u : u);
    return true;
  }
  /// Whether the decoder read past its input (the stream is damaged).
  bool overrun() const noexcept { return overrun_ > 0; }
  /// Whether every byte was used: the encoder flushes exactly what the decoder reads.
  bool exhausted() const noexcept { return pos_ == data_.size() && overrun_ == 0; }

 private:
  bool magnitude(int_model& m, std::uint64_t& u) {
    unsigned k = 0;
    while (k < 63 && bit(m.length[k < 23 ? k : 23])) {
      ++k;
      if (overrun()) return false;
    }
    u = 1;
    unsigned node = 1;
    for (unsigned i = 0; i < k; ++i) {
      unsigned b;
      if (i < 2) {
        b = bit(m.top[(k < 23 ? k : 23) * 3 + node - 1]);
        node = node * 2 + b;
      } else {
        b = direct_bit();
      }
      u = (u << 1) | b;
    }
    return !overrun();
  }
  void normalize() {
    while (range_ < rc_top) {
      range_ <<= 8;
      code_ = (code_ << 8) | next();
    }
  }
  std::uint32_t next() {
    if (pos_ < data_.size()) return static_cast<unsigned char>(data_[pos_++]);
    ++overrun_;
    return 0;
  }

  std::string_view data_;
  std::size_t pos_ = 0;
  std::uint64_t overrun_ = 0;
  std::uint32_t code_ = 0;
  std::uint32_t range_ = 0xFFFFFFFFu;
};

}  // namespace failslow::compress::detail
