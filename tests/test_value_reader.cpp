// io/value_reader.hpp: numeric data sets against Python's float() (tests/reference/io/values.json,
// written by tests/reference/gen_value_fixtures.py), and the file-level cases: gzip, a missing
// file, a directory, an empty file.
#include <unistd.h>
#include <zlib.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <failslow/io/output_file.hpp>
#include <failslow/io/value_reader.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/fixtures.hpp"

using namespace failslow;

namespace {

bool same_double(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::memcmp(&a, &b, sizeof a) == 0;  // bit for bit: -0.0 is not 0.0
}

std::filesystem::path scratch_dir() {
  const auto dir = std::filesystem::temp_directory_path() / ("failslow_value_reader_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("value reader against Python float()") {
  const auto fx = failslow_test::load_fixture("io/values.json");
  for (const auto& c : fx["cases"]) {
    const std::string name = c["name"];
    INFO(name);
    io::value_read_options o;
    o.column = c["column"].get<std::string>();
    o.allow_nonfinite = c["allow_nonfinite"].get<bool>();
    const std::string text = c["text"];
    if (c.contains("error")) {
      try {
        (void)io::read_values(text, o, "case.txt");
        FAIL("no error");
      } catch (const parse_error& e) {
        INFO(e.what());
        CHECK(e.where().source == "case.txt");
        CHECK(e.where().line == c["error"]["line"].get<std::uint64_t>());
        CHECK(e.where().column == c["error"]["column"].get<std::uint64_t>());
        CHECK(std::string(e.what()).find("case.txt:") == 0);
      }
      continue;
    }
    const auto got = io::read_values(text, o, "case.txt");
    const auto& want = c["values"];
    REQUIRE(got.values.size() == want.size());
    for (std::size_t i = 0; i < got.values.size(); ++i) {
      const double w = std::strtod(want[i].get<std::string>().c_str(), nullptr);  // hex float: exact
      INFO("value " << i << ": " << want[i].get<std::string>());
      CHECK(same_double(got.values[i], w));
    }
    CHECK(got.header == !c["header"].is_null());
    CHECK(got.column == (c["header"].is_null() ? std::string() : c["header"].get<std::string>()));
  }
}

TEST_CASE("value reader counts lines and comments, and says what it found") {
  const auto got = io::read_values("# a\n\n1\n   \n2\n", {}, "x");
  CHECK(got.lines == 5);
  CHECK(got.comment_lines == 3);
  CHECK(got.values == std::vector<double>{1, 2});
  try {
    (void)io::read_values("1\n12abc\n", {}, "d.txt");
    FAIL("no error");
  } catch (const parse_error& e) {
    CHECK(std::string(e.what()) == "d.txt:2:1 (byte 2): expected a number, found '12abc'");
  }
  CHECK_THROWS_WITH(io::read_values("", {}, "e.txt"), "e.txt: no values (empty file)");
  CHECK_THROWS_WITH(io::read_values("# only\n\n", {}, "c.txt"), "c.txt: no values (2 lines, none holds a value)");
  CHECK_THROWS_AS(io::read_values("duration\n", {}, "h.txt"), invalid_argument);  // a header and no values
  // Lines of digits alone take a fast path: the same doubles as the general one, 15 digits or
  // 16 (from_chars), leading zeros, CRLF, a last line without a line feed, then an error.
  const auto digits = io::read_values("007\n999999999999999\n9007199254740993\n12\r\n0\n42", {}, "f");
  CHECK(digits.values == std::vector<double>{7, 999999999999999.0, 9007199254740992.0, 12, 0, 42});
  CHECK(digits.lines == 6);
  CHECK_THROWS_WITH(io::read_values("1\n2\n3x\n", {}, "g.txt"), Catch::Contains("g.txt:3:1"));
}

TEST_CASE("value reader files: plain, gzip, missing, a directory") {
  const auto dir = scratch_dir();
  const std::string plain = (dir / "v.csv").string(), gz = (dir / "v.csv.gz").string();
  const std::string text = "step,duration_ns\n0,26412\n1,26837.5\n";
  io::write_file_atomically(plain, text);
  CHECK_FALSE(std::filesystem::exists(plain + ".tmp"));
  {
    gzFile f = gzopen(gz.c_str(), "wb");
    REQUIRE(f);
    REQUIRE(gzwrite(f, text.data(), static_cast<unsigned>(text.size())) == static_cast<int>(text.size()));
    REQUIRE(gzclose(f) == Z_OK);
  }
  io::value_read_options o;
  o.column = "duration_ns";
  CHECK(io::read_values_file(plain, o).values == std::vector<double>{26412, 26837.5});
  CHECK(io::read_values_file(gz, o).values == std::vector<double>{26412, 26837.5});
  CHECK_THROWS_WITH(io::read_values_file((dir / "absent.txt").string(), o),
                    Catch::Contains("absent.txt") && Catch::Contains("No such file"));
  CHECK_THROWS_WITH(io::read_values_file(dir.string(), o), Catch::Contains("is a directory"));
  // A truncated gzip file: the reader says so instead of returning the values before the cut.
  {
    std::ifstream in(gz, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    io::write_file_atomically(gz, bytes.substr(0, bytes.size() - 6));
  }
  CHECK_THROWS_AS(io::read_values_file(gz, o), parse_error);
  std::filesystem::remove_all(dir);
}

TEST_CASE("file_stream: plain and gzip files piece by piece, the same errors as file_bytes") {
  const auto dir = scratch_dir();
  const std::string plain = (dir / "s.fsum").string(), gz = (dir / "s.fsum.gz").string();
  std::string text;
  for (int i = 0; i < 100000; ++i) text += static_cast<char>(i * 7 % 251);  // binary, > one piece
  io::write_file_atomically(plain, text);
  {
    gzFile f = gzopen(gz.c_str(), "wb");
    REQUIRE(f);
    REQUIRE(gzwrite(f, text.data(), static_cast<unsigned>(text.size())) == static_cast<int>(text.size()));
    REQUIRE(gzclose(f) == Z_OK);
  }
  for (const auto& path : {plain, gz}) {
    io::detail::file_stream s(path);
    std::string back;
    char piece[4096];
    for (std::size_t n; (n = s.read(piece, sizeof piece)) > 0;) back.append(piece, n);
    CHECK(back == text);
    CHECK(s.offset() == text.size());
  }
  CHECK_THROWS_WITH(io::detail::file_stream((dir / "absent.fsum").string()),
                    Catch::Contains("absent.fsum") && Catch::Contains("No such file"));
  CHECK_THROWS_WITH(io::detail::file_stream(dir.string()), Catch::Contains("is a directory"));
  {
    std::ifstream in(gz, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    io::write_file_atomically(gz, bytes.substr(0, bytes.size() / 2));
  }
  io::detail::file_stream cut(gz);
  char piece[4096];
  CHECK_THROWS_AS(
      [&] {
        while (cut.read(piece, sizeof piece) > 0) {
        }
      }(),
      parse_error);
  std::filesystem::remove_all(dir);
}

TEST_CASE("output_file leaves no partial file") {
  const auto dir = scratch_dir();
  const std::string path = (dir / "out.txt").string();
  {
    io::output_file f(path);
    f.write("half");
    CHECK(std::filesystem::exists(path + ".tmp"));
    CHECK_FALSE(std::filesystem::exists(path));
  }  // destroyed without commit: as after an error
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
  CHECK_FALSE(std::filesystem::exists(path));
  io::write_file_atomically(path, "whole\n");
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  CHECK(line == "whole");
  CHECK_THROWS_WITH(io::write_file_atomically((dir / "no" / "such" / "dir.txt").string(), "x"),
                    Catch::Contains("cannot write") && Catch::Contains("No such file"));
  std::filesystem::remove_all(dir);
}
