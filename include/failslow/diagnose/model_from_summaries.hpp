// failslow/diagnose/model_from_summaries.hpp -- a job model (diagnose/job_model.hpp) from .fsum
// window summaries (compress/codec.hpp), decoded one window at a time.
//
// Synopsis
//   add_summaries(builder, bytes, source)         every window of a .fsum byte stream in memory
//   add_summary_stream(builder, source, read)     every window of a .fsum stream read in 4 MiB
//                                                 pieces: read(buffer, capacity) stores the next
//                                                 bytes and returns how many, 0 at the end
//   build_job_model_from_summaries(bytes, options, source)   a builder, add_summaries, finish
//   Each stream is its own key space (.fsum key ids are per file): its kernel keys are
//   classified afresh by name (job_model_builder::new_key_space). Damaged blocks and windows
//   that lost their reference after damage are skipped and become notes of the model, naming
//   `source` and the byte offset. diagnose/load_job.hpp reads .fsum files this way.
// Complexity: O(bytes) to decode, add_window's O(keys) per window.
// Memory: one 4 MiB piece and the decoder's state (its name table and the reference windows),
//   never the whole stream.
// Errors: a damaged .fsum header throws failslow::parse_error (compress/codec.hpp); damage
//   later in the stream is reported in the notes and skipped; the builder's own errors (a
//   rank's window ids not increasing) throw failslow::invalid_argument.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "failslow/compress/codec.hpp"
#include "failslow/compress/window_summary.hpp"
#include "failslow/core/compile_mode.hpp"
#include "failslow/core/name_table.hpp"
#include "failslow/diagnose/job_model.hpp"

namespace failslow::diagnose {

/// Every window of a .fsum stream read in 4 MiB pieces by read(buffer, capacity) (0 at the end).
template <class Read>
void add_summary_stream(job_model_builder& b, const std::string& source, Read&& read) {
  b.new_key_space();
  compress::summary_decoder dec(source);
  auto sink = [&](compress::window_summary&& w, const compress::decoded_summaries& so_far) {
    b.add_window(std::move(w), [&](name_id key) -> std::string_view {
      const auto it = so_far.names.find(key);
      return it == so_far.names.end() ? std::string_view() : std::string_view(it->second);
    });
  };
  std::vector<char> piece(std::size_t{4} << 20);
  for (std::size_t n; (n = read(piece.data(), piece.size())) > 0;) dec.feed(std::string_view(piece.data(), n), sink);
  dec.finish(sink);
  const auto& d = dec.state();
  for (const auto& dmg : d.damaged)
    b.add_note(source + ": damaged block at byte " + std::to_string(dmg.offset) + " (" + dmg.reason + "), skipped");
  if (d.windows_without_reference > 0)
    b.add_note(source + ": " + std::to_string(d.windows_without_reference) +
               " windows lost their reference after damage, skipped");
}

/// Every window of a .fsum byte stream in memory.
FAILSLOW_FUNC void add_summaries(job_model_builder& b, std::string_view bytes, const std::string& source);

/// The model of a .fsum byte stream in memory.
FAILSLOW_FUNC job_model build_job_model_from_summaries(std::string_view bytes, model_options options = {},
                                                       std::string_view source = "<fsum>");

}  // namespace failslow::diagnose

#if FAILSLOW_HEADER_ONLY
#include "failslow/diagnose/impl/model_from_summaries.ipp"
#endif
