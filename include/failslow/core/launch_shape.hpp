// failslow/core/launch_shape.hpp -- the key of a kernel launched with a given grid and block.
//
// Synopsis
//   launch_shape_key(name, grid, block)   "name <<<gx x gy x gz, bx x by x bz>>>", written
//                                          "gemm_kernel <<<128x1x1, 256x1x1>>>"
//   kernel_base_name(key)                 the name without that suffix (the key itself when it
//                                          has none)
//   launch_shape_of(key)                  the suffix's "128x1x1, 256x1x1", or empty
//   launch_shape_interner<Table> in(names); in.key(kernel, grid, block)
//                                          the key's id in `names` (a name_table), interned
//                                          once per distinct (kernel, grid, block)
//   One kernel function launched with several shapes (a GEMM over different matrix sizes, a
//   reduction over different lengths) runs several duration distributions; keyed by name alone
//   their mix looks like a slowdown whenever the mix changes. Readers that know a launch's grid
//   and block (Kineto args, Nsight's kernel table) let the compressor key kernels by name plus
//   shape (compress/trace_windows.hpp); classifiers and routing rules match the base name.
// Complexity: O(|name|); interner.key O(log shapes) once a shape is known.
// Errors: none (a name that merely ends in ">>>" without the " <<<" opener is its own base).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>

#include "failslow/core/event.hpp"

namespace failslow {

/// "name <<<gx x gy x gz, bx x by x bz>>>" (see the synopsis).
inline std::string launch_shape_key(std::string_view name, const std::array<std::uint32_t, 3>& grid,
                                    const std::array<std::uint32_t, 3>& block) {
  std::string key(name);
  key += " <<<";
  for (std::size_t i = 0; i < 3; ++i) {
    if (i) key += 'x';
    key += std::to_string(grid[i]);
  }
  key += ", ";
  for (std::size_t i = 0; i < 3; ++i) {
    if (i) key += 'x';
    key += std::to_string(block[i]);
  }
  key += ">>>";
  return key;
}

namespace detail {
// Where the " <<<...>>>" suffix starts, or key.size().
inline std::size_t launch_shape_start(std::string_view key) noexcept {
  if (key.size() < 8 || key.substr(key.size() - 3) != ">>>") return key.size();
  const auto at = key.rfind(" <<<");
  return at == std::string_view::npos ? key.size() : at;
}
}  // namespace detail

/// The kernel's name without a launch-shape suffix.
inline std::string_view kernel_base_name(std::string_view key) noexcept {
  return key.substr(0, detail::launch_shape_start(key));
}

/// The launch shape of a key ("128x1x1, 256x1x1"), or empty.
inline std::string_view launch_shape_of(std::string_view key) noexcept {
  const auto at = detail::launch_shape_start(key);
  return at == key.size() ? std::string_view{} : key.substr(at + 4, key.size() - at - 7);
}

/// The launch-shape keys of kernels, interned into a name table (see the synopsis).
template <class Table>
class launch_shape_interner {
 public:
  explicit launch_shape_interner(Table& names) : names_(names) {}

  name_id key(name_id kernel, const std::array<std::uint32_t, 3>& grid, const std::array<std::uint32_t, 3>& block) {
    const shape s{kernel, grid, block};
    auto it = known_.find(s);
    if (it == known_.end())
      it = known_.emplace(s, names_.intern(launch_shape_key(names_.name(kernel), grid, block))).first;
    return it->second;
  }

 private:
  using shape = std::tuple<name_id, std::array<std::uint32_t, 3>, std::array<std::uint32_t, 3>>;
  Table& names_;
  std::map<shape, name_id> known_;
};

}  // namespace failslow
