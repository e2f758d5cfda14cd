// failslow/diagnose/impl/model_from_summaries.ipp -- the definitions of
// diagnose/model_from_summaries.hpp: included by that header (header-only) or compiled once in
// src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "failslow/diagnose/job_model.hpp"
#include "failslow/diagnose/model_from_summaries.hpp"

namespace failslow::diagnose {

FAILSLOW_FUNC_DEF void add_summaries(job_model_builder& b, std::string_view bytes, const std::string& source) {
  add_summary_stream(b, source, [bytes](char* buffer, std::size_t capacity) mutable {
    const std::size_t n = std::min(capacity, bytes.size());
    std::copy_n(bytes.data(), n, buffer);
    bytes.remove_prefix(n);
    return n;
  });
}

FAILSLOW_FUNC_DEF job_model build_job_model_from_summaries(std::string_view bytes, model_options options,
                                                           std::string_view source) {
  job_model_builder b(std::move(options));
  add_summaries(b, bytes, std::string(source));
  return b.finish();
}

}  // namespace failslow::diagnose
