// failslow/io/detail/kineto_metadata.hpp -- the top-level blocks of a Kineto trace besides its
// events: distributedInfo (with pg_config) and deviceProperties (part of io/kineto_reader.hpp).
//
// Synopsis
//   read_distributed_info(in, v, doc)      distributedInfo {backend, rank, world_size, pg_count,
//                                          nccl_version, pg_config[{pg_name, pg_desc,
//                                          backend_config, pg_size, ranks[]}]}
//   read_device_properties(in, v, doc, out)  deviceProperties[{id, name, totalGlobalMem,
//                                          computeMajor, computeMinor, numSms}], appended to out
//   Other keys are skipped (a malformed scalar among them is still an error). pg_name may be an
//   integer (older writers). Built only with simdjson (FAILSLOW_HAS_SIMDJSON).
// Complexity: O(size of the block).
// Errors: parse_error (kineto_input) for a block or field of the wrong type, a rank outside
//   [0, 2^31 - 1] (distributedInfo.rank also -1), or malformed JSON.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "failslow/io/detail/kineto_input.hpp"
#include "failslow/io/trace_data.hpp"

#if defined(FAILSLOW_HAS_SIMDJSON)
#include <simdjson.h>

namespace failslow::io::detail {

/// One pg_config array into info.pg_config.
inline void read_pg_config(const kineto_input& in, simdjson::ondemand::value v, simdjson::ondemand::document& doc,
                           distributed_info& info) {
  simdjson::ondemand::array arr = in.expect_array(v, doc, "distributedInfo.pg_config to be an array");
  for (auto item_res : arr) {
    simdjson::ondemand::value item;
    if (auto e = std::move(item_res).get(item))
      in.fail_code(e, kineto_input::location(doc), "a process group object in pg_config");
    simdjson::ondemand::object obj = in.expect_object(item, doc, "a process group object in pg_config");
    process_group pg;
    for (auto f_res : obj) {
      simdjson::ondemand::field f;
      if (auto e = std::move(f_res).get(f))
        in.fail_code(e, kineto_input::location(doc), "a key/value pair in a pg_config entry");
      const std::string_view key = raw_string_text(f.key().raw());
      simdjson::ondemand::value fv = f.value();
      if (key == "pg_name") {
        // Older writers use a number for the name.
        const std::string_view tok = fv.raw_json_token();
        if (!tok.empty() && tok[0] != '"')
          pg.name = std::to_string(in.block_int(fv, "a string or integer pg_name"));
        else
          pg.name = in.block_string(fv, "a string pg_name");
      } else if (key == "pg_desc") {
        pg.desc = in.block_string(fv, "a string pg_desc");
      } else if (key == "backend_config") {
        pg.backend_config = in.block_string(fv, "a string backend_config");
      } else if (key == "pg_size") {
        pg.size = in.block_int(fv, "an integer pg_size");
      } else if (key == "ranks") {
        simdjson::ondemand::array ranks = in.expect_array(fv, doc, "pg_config ranks to be an array");
        for (auto r_res : ranks) {
          simdjson::ondemand::value rv;
          if (auto e = std::move(r_res).get(rv))
            in.fail_code(e, kineto_input::location(doc), "a rank in pg_config ranks");
          const auto r = in.block_int(rv, "an integer rank in pg_config ranks");
          if (r < 0 || r > std::numeric_limits<std::int32_t>::max())
            in.fail_at(kineto_input::last_token(rv), "a rank between 0 and 2^31 - 1");
          pg.ranks.push_back(static_cast<std::int32_t>(r));
        }
      } else {
        in.check_skipped_scalar(fv);
      }
    }
    info.pg_config.push_back(std::move(pg));
  }
}

/// The distributedInfo object.
inline distributed_info read_distributed_info(const kineto_input& in, simdjson::ondemand::value v,
                                              simdjson::ondemand::document& doc) {
  simdjson::ondemand::object obj = in.expect_object(v, doc, "distributedInfo to be an object");
  distributed_info info;
  for (auto f_res : obj) {
    simdjson::ondemand::field f;
    if (auto e = std::move(f_res).get(f))
      in.fail_code(e, kineto_input::location(doc), "a key/value pair in distributedInfo");
    const std::string_view key = raw_string_text(f.key().raw());
    simdjson::ondemand::value fv = f.value();
    if (key == "backend") {
      info.backend = in.block_string(fv, "a string distributedInfo.backend");
    } else if (key == "rank") {
      const auto r = in.block_int(fv, "an integer distributedInfo.rank");
      if (r < -1 || r > std::numeric_limits<std::int32_t>::max())
        in.fail_at(kineto_input::last_token(fv), "distributedInfo.rank between 0 and 2^31 - 1");
      info.rank = static_cast<std::int32_t>(r);
    } else if (key == "world_size") {
      info.world_size = in.block_int(fv, "an integer distributedInfo.world_size");
    } else if (key == "pg_count") {
      info.pg_count = in.block_int(fv, "an integer distributedInfo.pg_count");
    } else if (key == "nccl_version") {
      info.nccl_version = in.block_string(fv, "a string distributedInfo.nccl_version");
    } else if (key == "pg_config") {
      read_pg_config(in, fv, doc, info);
    } else {
      in.check_skipped_scalar(fv);
    }
  }
  return info;
}

/// The deviceProperties array, appended to `out`.
inline void read_device_properties(const kineto_input& in, simdjson::ondemand::value v,
                                   simdjson::ondemand::document& doc, std::vector<device_properties>& out) {
  simdjson::ondemand::array arr = in.expect_array(v, doc, "deviceProperties to be an array");
  for (auto item_res : arr) {
    simdjson::ondemand::value item;
    if (auto e = std::move(item_res).get(item))
      in.fail_code(e, kineto_input::location(doc), "a device object in deviceProperties");
    simdjson::ondemand::object obj = in.expect_object(item, doc, "a device object in deviceProperties");
    device_properties d;
    for (auto f_res : obj) {
      simdjson::ondemand::field f;
      if (auto e = std::move(f_res).get(f))
        in.fail_code(e, kineto_input::location(doc), "a key/value pair in deviceProperties");
      const std::string_view key = raw_string_text(f.key().raw());
      simdjson::ondemand::value fv = f.value();
      if (key == "id") {
        d.id = in.block_int(fv, "an integer device id");
      } else if (key == "name") {
        d.name = in.block_string(fv, "a string device name");
      } else if (key == "totalGlobalMem") {
        d.total_global_mem = in.block_int(fv, "an integer totalGlobalMem");
      } else if (key == "computeMajor") {
        d.compute_major = in.block_int(fv, "an integer computeMajor");
      } else if (key == "computeMinor") {
        d.compute_minor = in.block_int(fv, "an integer computeMinor");
      } else if (key == "numSms") {
        d.num_sms = in.block_int(fv, "an integer numSms");
      } else {
        in.check_skipped_scalar(fv);
      }
    }
    out.push_back(std::move(d));
  }
}

}  // namespace failslow::io::detail

#endif  // FAILSLOW_HAS_SIMDJSON
