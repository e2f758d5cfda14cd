#!/usr/bin/env python3
"""What an #include of failslow costs a user's build (issue 22).

For each public header (include/failslow/<area>/*.hpp, not detail/), each area as a whole, the
umbrella failslow/failslow.hpp and, for scale, the heavy libraries alone (<Eigen/Dense>, Boost.Math's
chi_squared.hpp), compile a translation unit holding only that #include and an empty main(), as a
user would (g++ -std=c++17 -O2 -c), and report:

  seconds   wall-clock and CPU (user + sys) seconds of the compiler, from /usr/bin/time -v
  MB        the compiler's peak resident memory
  code      bytes of code in the object beyond an empty TU's (size -A: .text* sections)
  symbols   defined symbols beyond main (nm --defined-only)
  init      static initialisers emitted (a .init_array section or _GLOBAL__sub_I_ symbol): "no",
            "iostream" (only GCC 12's std::ios_base::Init object of <iostream>, 52 bytes of code),
            or "yes"

Only python3's standard library, g++ and binutils. Run from anywhere:

  bench/compile_cost.py                      # every header, every area, the umbrella, references
  bench/compile_cost.py --only detect/ --only failslow.hpp
  bench/compile_cost.py -D FAILSLOW_SEPARATE_COMPILATION --only failslow.hpp
  bench/compile_cost.py --markdown           # the table as Markdown (bench/README.md)

Optional components (collect/cupti*, collect/mpi*, *simdjson*) are skipped: they need their own
dependencies. Times are from a shared 2-core machine: compare rows of one run, not across runs.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLUDE = os.path.join(ROOT, "include")
OPTIONAL = re.compile(r"^failslow/collect/(detail/)?(cupti|mpi)|simdjson")
REFERENCES = ["Eigen/Core", "Eigen/Dense", "boost/math/distributions/chi_squared.hpp",
              "boost/math/distributions/normal.hpp"]


def public_headers():
    found = []
    for dirpath, dirnames, filenames in os.walk(os.path.join(INCLUDE, "failslow")):
        dirnames[:] = sorted(d for d in dirnames if d != "detail")
        for name in sorted(filenames):
            if name.endswith(".hpp"):
                rel = os.path.relpath(os.path.join(dirpath, name), INCLUDE)
                if not OPTIONAL.search(rel):
                    found.append(rel)
    return sorted(found)


def rows_to_measure(args):
    headers = public_headers()
    rows = []  # (label, [includes])
    if not args.no_references:
        rows.append(("(empty main)", []))
        rows += [("<%s>" % r, [r]) for r in REFERENCES]
    if not args.no_headers:
        rows += [(h[len("failslow/"):], [h]) for h in headers if h != "failslow/failslow.hpp"]
    if not args.no_areas:
        areas = sorted({h.split("/")[1] for h in headers if h.count("/") == 2})
        rows += [("all of %s/" % a, [h for h in headers if h.startswith("failslow/%s/" % a)]) for a in areas]
    rows.append(("failslow.hpp (umbrella)", ["failslow/failslow.hpp"]))
    if args.only:
        rows = [r for r in rows if r[0] == "(empty main)" or any(o in r[0] for o in args.only)]
    return rows


def compile_once(includes, args, workdir):
    src = os.path.join(workdir, "tu.cpp")
    obj = os.path.join(workdir, "tu.o")
    with open(src, "w") as f:
        f.writelines("#include <%s>\n" % i for i in includes)
        f.write("int main() {}\n")
    cmd = ["/usr/bin/time", "-v", args.cxx, "-std=" + args.std, "-O2", "-c", src, "-o", obj,
           "-I", INCLUDE, "-isystem", args.eigen] + ["-D" + d for d in args.define] + args.flag
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit("compile failed: %s\n%s" % (" ".join(includes), proc.stderr[-4000:]))

    def field(name):
        return re.search(re.escape(name) + r": (.*)", proc.stderr).group(1).strip()

    wall = field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":")
    wall_s = sum(float(x) * 60 ** i for i, x in enumerate(reversed(wall)))
    cpu_s = float(field("User time (seconds)")) + float(field("System time (seconds)"))
    rss_mb = int(field("Maximum resident set size (kbytes)")) / 1024.0
    sections = subprocess.run(["size", "-A", obj], capture_output=True, text=True, check=True).stdout
    code = init = 0
    for line in sections.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[1].isdigit():
            if parts[0].startswith(".text"):
                code += int(parts[1])
            if parts[0] in (".init_array", ".ctors"):
                init += int(parts[1])
    symbols = subprocess.run(["nm", "-C", "--defined-only", obj], capture_output=True, text=True,
                             check=True).stdout.splitlines()
    symbols = [s.split(" ", 2)[2] for s in symbols if len(s.split(" ", 2)) == 3]
    symbols = [s for s in symbols if s != "main" and not s.startswith(".")]  # .LC*: local constants
    if init > 0 or any(s.startswith("_GLOBAL__sub_I") for s in symbols):
        # GCC 12's <iostream> defines a std::ios_base::Init object in every TU that includes it
        # (GCC 13 moved it into the library): told apart from initialisers of failslow's own.
        only_iostream = all(s.startswith("_GLOBAL__sub_I") or s == "std::__ioinit" for s in symbols)
        init = "iostream" if only_iostream else "yes"
    else:
        init = "no"
    return wall_s, cpu_s, rss_mb, code, symbols, init


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cxx", default="g++")
    p.add_argument("--std", default="c++17")
    p.add_argument("--eigen", default="/usr/include/eigen3")
    p.add_argument("-D", "--define", action="append", default=[], help="a macro for every TU")
    p.add_argument("--flag", action="append", default=[], help="a further compiler flag")
    p.add_argument("--only", action="append", default=[], help="rows whose label contains this")
    p.add_argument("--repeat", type=int, default=1, help="compile each TU N times, keep the fastest")
    p.add_argument("--no-headers", action="store_true", help="areas and umbrella only")
    p.add_argument("--no-areas", action="store_true")
    p.add_argument("--no-references", action="store_true")
    p.add_argument("--symbols", action="store_true", help="list the symbols a TU defines")
    p.add_argument("--markdown", action="store_true")
    args = p.parse_args()

    rows = rows_to_measure(args)
    if args.markdown:
        print("| include | wall s | cpu s | peak MB | code bytes | symbols | static init |")
        print("|---|---:|---:|---:|---:|---:|---|")
    else:
        print("%-44s %7s %7s %8s %10s %8s %5s" % ("include", "wall s", "cpu s", "peak MB", "code", "symbols",
                                                   "init"))
    with tempfile.TemporaryDirectory(prefix="failslow_compile_cost_") as workdir:
        base_code = compile_once([], args, workdir)[3]  # main() alone: subtracted from every row
        for label, includes in rows:
            runs = [compile_once(includes, args, workdir) for _ in range(max(1, args.repeat))]
            wall_s, cpu_s, rss_mb, code, symbols, init = min(runs, key=lambda r: r[1])
            code -= base_code
            if args.markdown:
                print("| `%s` | %.1f | %.1f | %.0f | %d | %d | %s |" % (label, wall_s, cpu_s, rss_mb, code,
                                                                      len(symbols), init))
            else:
                print("%-44s %7.1f %7.1f %8.0f %10d %8d %5s" % (label, wall_s, cpu_s, rss_mb, code, len(symbols),
                                                               init))
            if args.symbols:
                for s in symbols[:40]:
                    print("    " + s)
            sys.stdout.flush()


if __name__ == "__main__":
    main()
