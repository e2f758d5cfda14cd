// failslow/core/dense_array.hpp -- a dense N-dimensional array of values (rank x step tables).
//
// Synopsis
//   dense_array<T, Rank, Allocator> holds shape()[0] x ... x shape()[Rank-1] values of T in one
//   contiguous row-major block (the last index varies fastest), value-initialised (0 for numbers)
//   or filled with a given value:
//       dense_array<double, 2> a({ranks, steps});         a(r, s) = 1.5;
//       dense_array<double, 3> p({ranks, phases, steps}, nan);
//   a(i, j, ...) takes exactly Rank indices (unchecked, as std::vector's operator[]; at() checks
//   them); shape(), shape(axis), size(), data(), begin()/end() over every value in memory order,
//   fill(v). The diagnosis keeps its per-rank, per-step (and per-phase) figures in these
//   (diagnose/job_model.hpp); they are what a caller reads back from a job_model.
// Why not xtensor or Eigen: the diagnosis needs a container, not lazy expressions; xtensor costs
//   every including file ~0.8 s of compile time and a <iostream> static initialiser, Eigen has no
//   dense 3-D type outside its unsupported Tensor module.
// Complexity: element access O(Rank) (multiply-adds); construction O(size()).
// Errors: at() with an index out of its axis throws failslow::invalid_argument; a shape whose
//   product overflows std::size_t throws failslow::invalid_argument.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "failslow/core/error.hpp"

namespace failslow {

template <class T, std::size_t Rank, class Allocator = std::allocator<T>>
class dense_array {
  static_assert(Rank >= 1, "dense_array: Rank must be at least 1");

 public:
  using value_type = T;
  using size_type = std::size_t;
  using shape_type = std::array<std::size_t, Rank>;
  using allocator_type = Allocator;
  using iterator = typename std::vector<T, Allocator>::iterator;
  using const_iterator = typename std::vector<T, Allocator>::const_iterator;

  /// An empty array: every extent 0.
  dense_array() = default;

  /// shape[0] x ... x shape[Rank-1] copies of `value` (T() by default: 0 for numbers).
  explicit dense_array(const shape_type& shape, const T& value = T(), const Allocator& alloc = Allocator())
      : shape_(shape), values_(element_count(shape), value, alloc) {}

  const shape_type& shape() const noexcept { return shape_; }
  size_type shape(size_type axis) const noexcept { return shape_[axis]; }
  size_type size() const noexcept { return values_.size(); }
  bool empty() const noexcept { return values_.empty(); }

  T* data() noexcept { return values_.data(); }
  const T* data() const noexcept { return values_.data(); }
  iterator begin() noexcept { return values_.begin(); }
  iterator end() noexcept { return values_.end(); }
  const_iterator begin() const noexcept { return values_.begin(); }
  const_iterator end() const noexcept { return values_.end(); }

  void fill(const T& value) { std::fill(values_.begin(), values_.end(), value); }

  template <class... Index>
  T& operator()(Index... index) noexcept {
    return values_[offset(index...)];
  }
  template <class... Index>
  const T& operator()(Index... index) const noexcept {
    return values_[offset(index...)];
  }

  /// Checked access.
  template <class... Index>
  T& at(Index... index) {
    check(index...);
    return values_[offset(index...)];
  }
  template <class... Index>
  const T& at(Index... index) const {
    check(index...);
    return values_[offset(index...)];
  }

  friend bool operator==(const dense_array& a, const dense_array& b) {
    return a.shape_ == b.shape_ && a.values_ == b.values_;
  }
  friend bool operator!=(const dense_array& a, const dense_array& b) { return !(a == b); }

 private:
  static size_type element_count(const shape_type& shape) {
    size_type n = 1;
    for (size_type extent : shape) {
      if (extent != 0 && n > std::numeric_limits<size_type>::max() / extent)
        throw invalid_argument("dense_array: the shape's element count overflows std::size_t");
      n *= extent;
    }
    return n;
  }

  template <class... Index>
  size_type offset(Index... index) const noexcept {
    static_assert(sizeof...(Index) == Rank, "dense_array: give one index per axis");
    static_assert((std::is_integral_v<Index> && ...), "dense_array: indices must be integers");
    const size_type idx[Rank] = {static_cast<size_type>(index)...};
    size_type at = idx[0];
    for (size_type axis = 1; axis < Rank; ++axis) at = at * shape_[axis] + idx[axis];
    return at;
  }

  template <class... Index>
  void check(Index... index) const {
    const long long idx[Rank] = {static_cast<long long>(index)...};
    for (size_type axis = 0; axis < Rank; ++axis)
      if (idx[axis] < 0 || static_cast<unsigned long long>(idx[axis]) >= shape_[axis])
        throw invalid_argument("dense_array: index " + std::to_string(idx[axis]) + " out of axis " +
                               std::to_string(axis) + " of extent " + std::to_string(shape_[axis]));
  }

  shape_type shape_{};
  std::vector<T, Allocator> values_;
};

}  // namespace failslow
