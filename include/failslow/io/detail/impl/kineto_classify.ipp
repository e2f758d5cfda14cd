// failslow/io/detail/impl/kineto_classify.ipp -- the definitions of io/detail/kineto_classify.hpp: included by that
// header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <cstddef>
#include <string_view>

#include "failslow/core/event.hpp"
#include "failslow/core/kernel_class.hpp"
#include "failslow/io/detail/kineto_classify.hpp"

namespace failslow::io {

FAILSLOW_FUNC_DEF event_kind host_kind_by_name(std::string_view name, const kernel_classifier& classifier) noexcept {
  if (name.find("::") != std::string_view::npos) return event_kind::cpu_op;
  std::size_t end = name.size();
  while (end > 0 && name[end - 1] >= '0' && name[end - 1] <= '9') --end;
  constexpr std::string_view node = "Backward";
  if (end > node.size() && name.substr(end - node.size(), node.size()) == node) {
    bool identifier = true;
    for (std::size_t i = 0; i < end; ++i) {
      const char ch = name[i];
      identifier =
          identifier && ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_');
    }
    if (identifier) return event_kind::cpu_op;
  }
  if (classifier.classify(name) == kernel_class::communication) return event_kind::cpu_op;
  return event_kind::annotation;
}

}  // namespace failslow::io
