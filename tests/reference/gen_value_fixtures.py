#!/usr/bin/env python3
r"""Reference fixture for failslow's numeric data-set reader (include/failslow/io/value_reader.hpp).

Run from the repository root:

    python3 tests/reference/gen_value_fixtures.py

Standard library only. It writes tests/reference/io/values.json:

  {"cases": [{"name", "text", "column", "allow_nonfinite",
              "values": [float.hex(v), ...], "header": str or null}            -- a readable data set
          or {"name", "text", "column", "allow_nonfinite",
              "error": {"line": L, "column": C}}                               -- a parse error there
  ]}

Values are Python's float() of each field's text (correctly rounded, as std::from_chars), written
as float.hex so that the test compares the doubles bit for bit. The number forms come from a fixed
random.Random(11): shortest repr, %.17g, %e, %.3f, leading '+' and zeros, '.5', '5.', 'E'
exponents, spaces around the field, subnormals and the largest double, and the edges of the
reader's exact fast path (15/16 significant digits, 10^22/10^23). The CSV cases put a quoted
kernel name with commas before the value column. Where failslow's grammar is stricter than
float() the case says so: digit separators ('1_000'), inf/nan without allow_nonfinite, hex.
"""
import json
import os
import random

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "io", "values.json")


def number_texts(rng, n):
    out = []
    for i in range(n):
        mag = 10 ** rng.uniform(-8, 12)
        v = rng.choice([1, 1, 1, -1]) * mag
        form = i % 10
        if form == 0:
            t = repr(v)
        elif form == 1:
            t = "%.17g" % v
        elif form == 2:
            t = "%e" % v
        elif form == 3:
            t = "%.3f" % abs(v)
        elif form == 4:
            t = "+" + repr(abs(v))
        elif form == 5:
            t = "00" + ("%.6f" % abs(v))
        elif form == 6:
            t = ("%.4E" % v)
        elif form == 7:
            t = " %d\t" % int(abs(v))
        elif form == 8:
            t = "%.5g" % v
        else:
            t = repr(float(int(abs(v))))
        out.append(t)
    out += [".5", "5.", "1e5", "1E-5", "-0", "0.0", "4.9e-324", "2.2250738585072014e-308",
            "1.7976931348623157e308", "123456789012345678901234567890", "0.1", "3",
            # the edges of the exact fast path (15 significant digits, powers of ten up to 22)
            "999999999999999", "9999999999999999", "9007199254740993", "1e22", "1e23", "-1E-22",
            "1e-23", "123456789012345e-22", "1.23456789012345e+22", "0.000000000000000000001",
            "0.3", "2.675", "1.005", "000000000000000000000012.5"]
    return out


def ok_case(name, text, fields, column="", header=None, allow_nonfinite=False):
    return {"name": name, "text": text, "column": column, "allow_nonfinite": allow_nonfinite,
            "values": [float(f).hex() for f in fields], "header": header}


def error_case(name, text, line, col, column="", allow_nonfinite=False):
    return {"name": name, "text": text, "column": column, "allow_nonfinite": allow_nonfinite,
            "error": {"line": line, "column": col}}


def main():
    rng = random.Random(11)
    nums = number_texts(rng, 200)
    cases = []
    cases.append(ok_case("one per line", "".join(t + "\n" for t in nums), nums))
    body = "# durations\n\nduration_ns\r\n" + "".join(t + "\r\n" for t in nums[:50]) + "  # end\n"
    cases.append(ok_case("header, comments, CRLF", body, nums[:50], header="duration_ns"))
    cases.append(ok_case("no final newline", "1\n2\n3", ["1", "2", "3"]))
    rows = ["rank,name,duration_ns"]
    for k, t in enumerate(nums[:60]):
        rows.append('%d,"void gemm<float, %d>(float*, ""x"")",%s' % (k % 4, k, t))
    cases.append(ok_case("CSV column by name", "\n".join(rows) + "\n", nums[:60], column="duration_ns",
                         header="duration_ns"))
    cases.append(ok_case("CSV column by index with header", "\n".join(rows) + "\n", nums[:60], column="2",
                         header="duration_ns"))
    cases.append(ok_case("CSV column by index, quoted values", "".join('a,"%s"\n' % t.strip() for t in nums[:20]),
                         nums[:20], column="1"))
    tsv = "step\tduration\n" + "".join("%d\t%s\n" % (k, t) for k, t in enumerate(nums[:40]))
    cases.append(ok_case("TSV column by name", tsv, nums[:40], column="duration", header="duration"))
    cases.append(ok_case("nonfinite when asked", "1\ninf\n-Infinity\nnan\n2\n", ["1", "inf", "-inf", "nan", "2"],
                         allow_nonfinite=True))
    cases.append(error_case("inf rejected", "1\n2\ninf\n", 3, 1))
    cases.append(error_case("nan rejected in a column", "a,b\n1,2\n3,NaN\n", 3, 3, column="b"))
    cases.append(error_case("text after a number", "1\n2x\n", 2, 1))
    cases.append(error_case("digit separator (float() takes it)", "1\n1_000\n", 2, 1))
    cases.append(error_case("hex is not decimal", "1\n0x10\n", 2, 1))
    cases.append(error_case("out of double range", "1\n1e400\n", 2, 1))
    cases.append(error_case("empty field", "a,b\n1,\n", 2, 3, column="b"))
    cases.append(error_case("too few fields", "a,b\n1,2\n3\n", 3, 2, column="b"))
    cases.append(error_case("no such column", "a,b\n1,2\n", 1, 1, column="c"))
    cases.append(error_case("several fields, no column", "1,2\n", 1, 1))
    cases.append(error_case("a second header", "x\n1\ny\n", 3, 1))
    cases.append(error_case("binary bytes", "1\n\x00\x01\x02\n", 2, 1))
    cases.append(error_case("unterminated quote", 'a,b\n"x,1\n', 2, 5, column="b"))
    cases.append(error_case("sign only", "1\n+\n", 2, 1))
    cases.append(error_case("double sign", "1\n+-1\n", 2, 1))
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump({"cases": cases}, f, indent=1)
        f.write("\n")
    with open(OUT) as f:
        back = json.load(f)
    print("%s: %d cases, %d values" % (OUT, len(back["cases"]),
                                       sum(len(c.get("values", [])) for c in back["cases"])))


if __name__ == "__main__":
    main()
