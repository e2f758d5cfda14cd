// failslow/core/name_table.hpp -- interning of kernel, phase and operator names to dense ids.
//
// Synopsis
//   basic_name_table<Allocator> maps each distinct string to a dense id 0, 1, 2, ... in the
//   order of first appearance, and back. Events store the 4-byte id instead of the string.
//     intern(s)  id of s, adding it if new          O(|s|) expected (one hash)
//     find(s)    id of s if present, else nullopt   O(|s|) expected
//     name(id)   the string                         O(1)
//   Ids are stable for the table's lifetime and the string_views returned by name() stay
//   valid until the table is destroyed (strings are never moved once stored).
// Thread safety: every member function may be called concurrently from any number of threads
//   (a reader-writer lock; find/name take it shared, intern of a new string exclusive).
//   Hot paths should intern once and keep the id.
// Errors: name() of an id that was never handed out throws failslow::domain_error; more than
//   2^32 - 1 distinct names throws failslow::domain_error.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "failslow/core/error.hpp"
#include "failslow/core/event.hpp"

namespace failslow {

template <class Allocator = std::allocator<char>>
class basic_name_table {
 public:
  using allocator_type = Allocator;

  explicit basic_name_table(const Allocator& alloc = Allocator())
      : strings_(string_allocator(alloc)),
        index_(0, std::hash<std::string_view>{}, std::equal_to<std::string_view>{}, index_allocator(alloc)) {}

  basic_name_table(const basic_name_table&) = delete;
  basic_name_table& operator=(const basic_name_table&) = delete;
  // Moving keeps every stored string at its address (deque and node-based map move their
  // storage), so ids and views handed out by the source stay valid for the target.
  basic_name_table(basic_name_table&& other) noexcept(false)
      : basic_name_table(std::move(other), std::unique_lock<std::shared_mutex>(other.mutex_)) {}
  basic_name_table& operator=(basic_name_table&&) = delete;

  /// Id of `s`, adding it when it is new.
  name_id intern(std::string_view s) {
    {
      std::shared_lock<std::shared_mutex> lock(mutex_);
      auto it = index_.find(s);
      if (it != index_.end()) return it->second;
    }
    std::unique_lock<std::shared_mutex> lock(mutex_);
    auto it = index_.find(s);  // another thread may have added it meanwhile
    if (it != index_.end()) return it->second;
    if (strings_.size() >= std::numeric_limits<name_id>::max())
      throw domain_error("name_table: more than 2^32 - 1 distinct names");
    strings_.emplace_back(s.data(), s.size(), strings_.get_allocator());
    const auto id = static_cast<name_id>(strings_.size() - 1);
    const string_type& stored = strings_.back();
    index_.emplace(std::string_view(stored.data(), stored.size()), id);
    return id;
  }

  /// Id of `s` if it was interned.
  std::optional<name_id> find(std::string_view s) const {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    auto it = index_.find(s);
    if (it == index_.end()) return std::nullopt;
    return it->second;
  }

  /// The string of `id`; the view stays valid for the table's lifetime.
  std::string_view name(name_id id) const {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    if (id >= strings_.size())
      throw domain_error("name_table: unknown name id " + std::to_string(id) + " (table holds " +
                         std::to_string(strings_.size()) + " names)");
    const string_type& s = strings_[id];
    return std::string_view(s.data(), s.size());
  }

  /// Number of distinct names; ids are 0 .. size() - 1.
  std::size_t size() const {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    return strings_.size();
  }

  bool empty() const { return size() == 0; }

  allocator_type get_allocator() const { return allocator_type(strings_.get_allocator()); }

 private:
  using alloc_traits = std::allocator_traits<Allocator>;
  using string_type =
      std::basic_string<char, std::char_traits<char>, typename alloc_traits::template rebind_alloc<char>>;
  using string_allocator = typename alloc_traits::template rebind_alloc<string_type>;
  using index_value = std::pair<const std::string_view, name_id>;
  using index_allocator = typename alloc_traits::template rebind_alloc<index_value>;

  basic_name_table(basic_name_table&& other, std::unique_lock<std::shared_mutex>)
      : strings_(std::move(other.strings_)), index_(std::move(other.index_)) {}

  std::deque<string_type, string_allocator> strings_;
  std::unordered_map<std::string_view, name_id, std::hash<std::string_view>, std::equal_to<std::string_view>,
                     index_allocator>
      index_;
  mutable std::shared_mutex mutex_;
};

/// The name table with the standard allocator.
using name_table = basic_name_table<>;

}  // namespace failslow
