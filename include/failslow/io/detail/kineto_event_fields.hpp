// failslow/io/detail/kineto_event_fields.hpp -- the fields of one trace event as written, before
// any conversion (part of io/kineto_reader.hpp).
//
// Synopsis
//   kineto_raw_event            ph, cat, name, ts, dur, pid, tid and the args failslow reads
//                               (device, stream, correlation, grid, block, the NCCL fields) as
//                               views of their tokens in simdjson's buffer
//   kineto_event_fields f(in)   f.read(object, doc, ev) fills ev from one event object
//   Fields of an unexpected type are flagged (name_type_error, cat_not_string, dims_ok,
//   nccl_ok) for the builder (kineto_builder.hpp) to count; unknown keys are skipped, a
//   malformed scalar among them is an error. Built only with simdjson (FAILSLOW_HAS_SIMDJSON).
// Complexity: O(size of the event); keys are told apart by length / first letter, then one
//   compare (a key's end is found back from its value's first byte: field_key_text).
// Errors: parse_error (kineto_input) for malformed JSON only.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "failslow/io/detail/kineto_classify.hpp"
#include "failslow/io/detail/kineto_input.hpp"

#if defined(FAILSLOW_HAS_SIMDJSON)
#include <simdjson.h>

namespace failslow::io::detail {

/// One event's fields as written (views into the buffer simdjson reads, valid for the chunk).
struct kineto_raw_event {
  std::string_view ph, cat, name, ts, dur, pid, tid;
  bool has_name = false, name_type_error = false;
  bool cat_not_string = false;  // "cat" present with a non-string value
  // args
  std::string_view device, stream, correlation;
  bool has_grid = false, has_block = false, dims_ok = true;
  std::array<std::uint32_t, 3> grid{}, block{};
  bool has_nccl = false, nccl_ok = true;
  std::string_view coll_name, pg_name, pg_desc, dtype, group_size, in_nelems, out_nelems;
  std::string_view pg_ranks_text;
  bool has_pg_ranks = false, pg_ranks_is_array = false;
  std::vector<std::int32_t>* pg_ranks_array = nullptr;  // valid until the next event is read

  /// Back to a fresh event (as constructed). The launch and NCCL fields are cleared only when
  /// has_grid, has_block or has_nccl says they were written (every write of them sets one):
  /// most events have neither, and a fresh record per event cost a 340-byte `rep stos`. Each
  /// field gets its own constant (a chained `a = b = {}` made GCC store a view and load it
  /// back as one 16-byte value: a store-forwarding stall per field).
  void clear() noexcept {
    if (has_grid || has_block || has_nccl) {
      has_grid = false;
      has_block = false;
      dims_ok = true;
      grid = {};
      block = {};
      has_nccl = false;
      nccl_ok = true;
      for (std::string_view* v :
           {&coll_name, &pg_name, &pg_desc, &dtype, &group_size, &in_nelems, &out_nelems, &pg_ranks_text})
        *v = std::string_view();
      has_pg_ranks = false;
      pg_ranks_is_array = false;
      pg_ranks_array = nullptr;
    }
    for (std::string_view* v : {&ph, &cat, &name, &ts, &dur, &pid, &tid, &device, &stream, &correlation})
      *v = std::string_view();
    has_name = false;
    name_type_error = false;
    cat_not_string = false;
  }
};

/// Reads the fields of events (see the synopsis above); keeps the rank list of the last one.
class kineto_event_fields {
 public:
  explicit kineto_event_fields(const kineto_input& in) : in_(in) {}

  void read(simdjson::ondemand::object& obj, simdjson::ondemand::document& doc, kineto_raw_event& ev) {
    for (auto f_res : obj) {
      if (auto e = f_res.error()) in_.fail_code(e, kineto_input::location(doc), "a key/value pair in a trace event");
      simdjson::ondemand::field&& f = std::move(f_res).value_unsafe();
      simdjson::ondemand::value& v = f.value();
      const std::string_view key = field_key_text(f.key().raw(), v.raw_json_token().data());
      if (key.size() == 2) {
        if (key_is(key, "ph")) {
          ev.ph = in_.string_or_empty(v);
          continue;
        }
        if (key_is(key, "ts")) {
          ev.ts = v.raw_json_token();
          continue;
        }
      } else if (key.size() == 3) {
        if (key_is(key, "cat")) {
          std::string_view s;
          const auto e = v.get_string().get(s);
          if (!e) {
            ev.cat = s;
          } else if (e == simdjson::INCORRECT_TYPE) {
            in_.check_skipped_scalar(v);
            ev.cat_not_string = true;
          } else {
            in_.fail_code(e, kineto_input::last_token(v), "a string");
          }
          continue;
        }
        if (key_is(key, "dur")) {
          ev.dur = v.raw_json_token();
          continue;
        }
        if (key_is(key, "pid")) {
          ev.pid = v.raw_json_token();
          continue;
        }
        if (key_is(key, "tid")) {
          ev.tid = v.raw_json_token();
          continue;
        }
      } else if (key_is(key, "name")) {
        std::string_view s;
        const auto e = v.get_string().get(s);
        if (!e) {
          ev.name = s;
          ev.has_name = true;
        } else if (e == simdjson::INCORRECT_TYPE) {
          in_.check_skipped_scalar(v);
          ev.name_type_error = true;
        } else {
          in_.fail_code(e, kineto_input::last_token(v), "a string event name");
        }
        continue;
      } else if (key_is(key, "args")) {
        read_args(v, doc, ev);
        continue;
      }
      in_.check_skipped_scalar(v);
    }
  }

 private:
  void read_dims(simdjson::ondemand::value& v, simdjson::ondemand::document& doc, std::array<std::uint32_t, 3>& dims,
                 kineto_raw_event& ev) {
    simdjson::ondemand::array a;
    const auto e = v.get_array().get(a);
    if (e == simdjson::INCORRECT_TYPE) {
      in_.check_skipped_scalar(v);
      ev.dims_ok = false;
      return;
    }
    if (e) in_.fail_code(e, kineto_input::location(doc), "an array [x, y, z]");
    std::size_t k = 0;
    for (auto d_res : a) {
      simdjson::ondemand::value dv;
      if (auto e2 = std::move(d_res).get(dv)) in_.fail_code(e2, kineto_input::location(doc), "an array [x, y, z]");
      std::int64_t x = 0;
      if (in_.number(dv.raw_json_token(), 0, x, true) != kineto_num::ok || x < 0 ||
          x > std::numeric_limits<std::uint32_t>::max() || k >= 3) {
        ev.dims_ok = false;
      } else {
        dims[k] = static_cast<std::uint32_t>(x);
      }
      ++k;
    }
    if (k != 3) ev.dims_ok = false;
  }

  void read_args(simdjson::ondemand::value& v, simdjson::ondemand::document& doc, kineto_raw_event& ev) {
    simdjson::ondemand::object a;
    const auto e = v.get_object().get(a);
    if (e == simdjson::INCORRECT_TYPE) {
      in_.check_skipped_scalar(v);
      return;  // args of another type carry nothing failslow reads
    }
    if (e) in_.fail_code(e, kineto_input::location(doc), "an args object");
    for (auto f_res : a) {
      if (auto e2 = f_res.error()) in_.fail_code(e2, kineto_input::location(doc), "a key/value pair in args");
      simdjson::ondemand::field&& f = std::move(f_res).value_unsafe();
      simdjson::ondemand::value& fv = f.value();
      const std::string_view key = field_key_text(f.key().raw(), fv.raw_json_token().data());
      switch (key.empty() ? '\0' : key[0]) {
        case 'd':
          if (key_is(key, "device")) {
            ev.device = fv.raw_json_token();
            continue;
          }
          if (key_is(key, "dtype")) {
            ev.has_nccl = true;
            ev.dtype = arg_string(fv, ev);
            continue;
          }
          break;
        case 's':
          if (key_is(key, "stream")) {
            ev.stream = fv.raw_json_token();
            continue;
          }
          break;
        case 'c':
          if (key_is(key, "correlation")) {
            ev.correlation = fv.raw_json_token();
            continue;
          }
          break;
        case 'g':
          if (key_is(key, "grid")) {
            ev.has_grid = true;
            read_dims(fv, doc, ev.grid, ev);
            continue;
          }
          break;
        case 'b':
          if (key_is(key, "block")) {
            ev.has_block = true;
            read_dims(fv, doc, ev.block, ev);
            continue;
          }
          break;
        case 'C':
          if (key_is(key, "Collective name")) {
            ev.has_nccl = true;
            ev.coll_name = arg_string(fv, ev);
            continue;
          }
          break;
        case 'G':
          if (key_is(key, "Group size")) {
            ev.has_nccl = true;
            ev.group_size = fv.raw_json_token();
            continue;
          }
          break;
        case 'I':
          if (key_is(key, "In msg nelems")) {
            ev.has_nccl = true;
            ev.in_nelems = fv.raw_json_token();
            continue;
          }
          break;
        case 'O':
          if (key_is(key, "Out msg nelems")) {
            ev.has_nccl = true;
            ev.out_nelems = fv.raw_json_token();
            continue;
          }
          break;
        case 'P':
          if (key_is(key, "Process Group Name")) {
            ev.has_nccl = true;
            const std::string_view tok = fv.raw_json_token();
            ev.pg_name = (!tok.empty() && tok[0] != '"') ? number_text(fv, ev) : arg_string(fv, ev);
            continue;
          }
          if (key_is(key, "Process Group Description")) {
            ev.has_nccl = true;
            ev.pg_desc = arg_string(fv, ev);
            continue;
          }
          if (key_is(key, "Process Group Ranks")) {
            ev.has_nccl = true;
            read_pg_ranks(fv, doc, ev);
            continue;
          }
          break;
        default:
          break;
      }
      in_.check_skipped_scalar(fv);
    }
  }

  std::string_view arg_string(simdjson::ondemand::value& v, kineto_raw_event& ev) {
    std::string_view s;
    const auto e = v.get_string().get(s);
    if (!e) return s;
    if (e != simdjson::INCORRECT_TYPE) in_.fail_code(e, kineto_input::last_token(v), "a string");
    in_.check_skipped_scalar(v);
    ev.nccl_ok = false;
    return std::string_view();
  }

  std::string_view number_text(simdjson::ondemand::value& v, kineto_raw_event& ev) {
    std::string_view tok = v.raw_json_token();
    in_.check_skipped_scalar(v);
    while (!tok.empty() && is_json_space(tok.back())) tok.remove_suffix(1);
    std::int64_t x = 0;
    if (in_.number(tok, 0, x, true) != kineto_num::ok) {
      ev.nccl_ok = false;
      return std::string_view();
    }
    return tok;
  }

  void read_pg_ranks(simdjson::ondemand::value& v, simdjson::ondemand::document& doc, kineto_raw_event& ev) {
    std::string_view s;
    const auto e = v.get_string().get(s);
    if (!e) {
      ev.pg_ranks_text = s;
      ev.has_pg_ranks = true;
      return;
    }
    if (e != simdjson::INCORRECT_TYPE) in_.fail_code(e, kineto_input::last_token(v), "a rank list");
    simdjson::ondemand::array a;
    const auto e2 = v.get_array().get(a);
    if (e2 == simdjson::INCORRECT_TYPE) {
      in_.check_skipped_scalar(v);
      ev.nccl_ok = false;
      return;
    }
    if (e2) in_.fail_code(e2, kineto_input::location(doc), "a rank list");
    ranks_.clear();
    for (auto r_res : a) {
      simdjson::ondemand::value rv;
      if (auto e3 = std::move(r_res).get(rv)) in_.fail_code(e3, kineto_input::location(doc), "a rank list");
      std::int64_t x = 0;
      if (in_.number(rv.raw_json_token(), 0, x, true) != kineto_num::ok ||
          x < std::numeric_limits<std::int32_t>::min() || x > std::numeric_limits<std::int32_t>::max()) {
        ev.nccl_ok = false;
      } else {
        ranks_.push_back(static_cast<std::int32_t>(x));
      }
    }
    ev.has_pg_ranks = true;
    ev.pg_ranks_is_array = true;
    ev.pg_ranks_array = &ranks_;
  }

  const kineto_input& in_;
  std::vector<std::int32_t> ranks_;  // the last event's Process Group Ranks array
};

}  // namespace failslow::io::detail

#endif  // FAILSLOW_HAS_SIMDJSON
