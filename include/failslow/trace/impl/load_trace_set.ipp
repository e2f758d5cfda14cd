// failslow/trace/impl/load_trace_set.ipp -- the definitions of trace/load_trace_set.hpp: included by that
// header (header-only) or compiled once in src/failslow.cpp (core/compile_mode.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "failslow/core/error.hpp"
#include "failslow/core/name_table.hpp"
#include "failslow/core/parallel_for.hpp"
#include "failslow/io/csv_reader.hpp"
#include "failslow/io/kineto_reader.hpp"
#include "failslow/io/nsys_reader.hpp"
#include "failslow/io/trace_data.hpp"
#include "failslow/trace/load_trace_set.hpp"
#include "failslow/trace/trace_set.hpp"

namespace failslow::trace {
namespace detail {
inline bool ends_with(const std::string& s, const char* suffix) {
  const std::size_t n = std::char_traits<char>::length(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

enum class trace_format { kineto, table, nsys };

inline trace_format format_of(const std::string& path) {
  for (const char* table : {".csv", ".tsv", ".csv.gz", ".tsv.gz"})
    if (ends_with(path, table)) return trace_format::table;
  if (ends_with(path, ".sqlite")) return trace_format::nsys;
  return trace_format::kineto;
}

inline bool is_trace_file(const std::string& name) {
  for (const char* trace : {".json", ".json.gz", ".csv", ".csv.gz", ".tsv", ".tsv.gz", ".sqlite"})
    if (ends_with(name, trace)) return true;
  return false;
}

}  // namespace detail
FAILSLOW_FUNC_DEF std::int32_t rank_from_file_name(const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  auto is_alpha = [&](char c) { return lower(c) >= 'a' && lower(c) <= 'z'; };
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  auto word_at = [&](std::size_t i, const char* w) {
    std::size_t k = 0;
    for (; w[k] != '\0'; ++k)
      if (i + k >= name.size() || lower(name[i + k]) != w[k]) return std::size_t{0};
    return k;
  };
  std::int32_t found = -1;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (i > 0 && is_alpha(name[i - 1])) continue;
    std::size_t n = word_at(i, "rank");
    if (n == 0) n = word_at(i, "worker");
    if (n == 0) continue;
    std::size_t j = i + n;
    if (j < name.size() && (name[j] == '-' || name[j] == '_')) ++j;
    const std::size_t first = j;
    std::int64_t value = 0;
    while (j < name.size() && is_digit(name[j]) && j - first < 9) value = value * 10 + (name[j++] - '0');
    if (j == first || (j < name.size() && (is_alpha(name[j]) || is_digit(name[j])))) continue;
    if (found >= 0 && found != value) return -1;  // two different ranks named: ambiguous
    found = static_cast<std::int32_t>(value);
  }
  return found;
}

FAILSLOW_FUNC_DEF std::vector<std::string> expand_trace_paths(const std::vector<std::string>& paths,
                                                              std::vector<bool>* from_folder) {
  std::vector<std::string> out;
  if (from_folder) from_folder->clear();
  for (const auto& p : paths) {
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) {
      std::vector<std::string> found;
      for (const auto& e : std::filesystem::recursive_directory_iterator(p))
        if (e.is_regular_file() && detail::is_trace_file(e.path().filename().string()))
          found.push_back(e.path().string());
      if (found.empty())
        throw invalid_argument("no trace files (*.json, *.csv, *.tsv and their .gz, *.sqlite) in " + p);
      std::sort(found.begin(), found.end());
      out.insert(out.end(), found.begin(), found.end());
      if (from_folder) from_folder->resize(out.size(), true);
    } else if (std::filesystem::exists(p, ec)) {
      out.push_back(p);
      if (from_folder) from_folder->push_back(false);
    } else {
      throw invalid_argument("no such trace file or folder: " + p);
    }
  }
  return out;
}

FAILSLOW_FUNC_DEF trace_set load_trace_set(const std::vector<std::string>& paths, const trace_set_options& options) {
  if (options.shard_index >= options.shard_count)
    throw invalid_argument("load_trace_set: shard " + std::to_string(options.shard_index) + " of " +
                           std::to_string(options.shard_count));
  std::vector<bool> from_folder;
  const auto files = expand_trace_paths(paths, &from_folder);
  const auto in_share = [&](std::size_t i) { return i % options.shard_count == options.shard_index; };
  trace_set set;
  std::vector<std::vector<io::trace_data>> loaded(files.size());
  std::vector<std::exception_ptr> errors(files.size());
  std::vector<std::size_t> share;  // the files this call reads
  for (std::size_t i = 0; i < files.size(); ++i)
    if (in_share(i)) share.push_back(i);
  std::vector<io::kineto_reader> kineto(parallel_workers(share.size(), options.threads));  // one per worker
  std::size_t done = 0;
  std::mutex progress_mutex;
  parallel_for(share.size(), options.threads, [&](std::size_t k, std::size_t worker) {
    const std::size_t i = share[k];
    try {
      switch (detail::format_of(files[i])) {
        case detail::trace_format::kineto:
          loaded[i].push_back(kineto[worker].read_file(files[i], set.names, options.kineto));
          break;
        case detail::trace_format::table:
          loaded[i] = io::read_kernel_table_file(files[i], set.names, options.table);
          break;
        case detail::trace_format::nsys:
          loaded[i].push_back(io::read_nsys_sqlite(files[i], set.names));
          break;
      }
    } catch (...) {
      errors[i] = std::current_exception();
    }
    if (options.progress) {
      const std::lock_guard<std::mutex> lock(progress_mutex);
      options.progress(++done, share.size());
    }
  });
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (!errors[i]) continue;
    if (!options.skip_unreadable) std::rethrow_exception(errors[i]);
    try {
      std::rethrow_exception(errors[i]);
    } catch (const error& e) {
      set.unreadable_files.emplace_back(files[i], e.what());
      loaded[i].clear();
    }
  }

  std::vector<rank_trace> traces;
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (!in_share(i)) continue;
    const auto mapped = options.rank_of.find(files[i]);
    if (from_folder[i] && loaded[i].size() == 1 && !loaded[i].front().has_trace_events) {
      set.skipped_files.push_back(files[i]);
      continue;
    }
    for (auto& d : loaded[i]) {
      rank_trace rt;
      if (mapped != options.rank_of.end() && loaded[i].size() == 1) {
        rt.rank = mapped->second;
        rt.source = rank_source::mapping;
      } else if (detail::format_of(files[i]) == detail::trace_format::table) {
        rt.rank = d.stated_rank();
        rt.source = rank_source::table;
      } else if (d.stated_rank() >= 0) {
        rt.rank = d.stated_rank();
        rt.source = rank_source::stated;
      } else if (const std::int32_t r = rank_from_file_name(files[i]); r >= 0) {
        rt.rank = r;
        rt.source = rank_source::file_name;
      } else {
        rt.rank = -1;
        rt.source = rank_source::unknown;
      }
      if (d.distributed && d.distributed->world_size > set.world_size) set.world_size = d.distributed->world_size;
      rt.file_index = i;
      rt.data = std::move(d);
      traces.push_back(std::move(rt));
    }
  }
  if (options.assume_missing_ranks) {
    std::vector<std::int32_t> claimed;
    for (const auto& t : traces)
      if (t.rank >= 0) claimed.push_back(t.rank);
    std::sort(claimed.begin(), claimed.end());
    std::int32_t candidate = 0;
    for (auto& t : traces) {
      if (t.rank >= 0) continue;
      while (std::binary_search(claimed.begin(), claimed.end(), candidate)) ++candidate;
      t.rank = candidate++;
      t.source = rank_source::assumed;
    }
  }
  for (auto& t : traces)
    for (auto& e : t.data.events) e.rank = t.rank;
  std::stable_sort(traces.begin(), traces.end(),
                   [](const rank_trace& a, const rank_trace& b) { return a.rank < b.rank; });
  std::int32_t max_rank = -1;
  for (std::size_t i = 0; i < traces.size(); ++i) {
    max_rank = std::max(max_rank, traces[i].rank);
    if (i > 0 && traces[i].rank >= 0 && traces[i].rank == traces[i - 1].rank &&
        (set.duplicate_ranks.empty() || set.duplicate_ranks.back() != traces[i].rank))
      set.duplicate_ranks.push_back(traces[i].rank);
  }
  if (set.world_size < max_rank + 1) set.world_size = max_rank + 1;
  std::vector<std::int32_t> present;
  for (const auto& t : traces) present.push_back(t.rank);  // already sorted
  for (std::int64_t r = 0; r < set.world_size && set.missing_ranks.size() < 1000000; ++r)
    if (!std::binary_search(present.begin(), present.end(), static_cast<std::int32_t>(r)))
      set.missing_ranks.push_back(static_cast<std::int32_t>(r));
  set.traces = std::move(traces);
  return set;
}

}  // namespace failslow::trace