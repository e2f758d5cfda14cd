"""python3 -m failslow diagnose ...: the command-line tool's diagnose from Python.

    python3 -m failslow diagnose TRACE...|DIR|FILE.fsum... [--topology tp=2,pp=4,dp=8] [--order ORDER]
                                 [--format text|json] [-o FILE] [--threads N] [--width N]

The same library calls as `failslow diagnose` (diagnose/load_job.hpp, then diagnose.hpp), so the
same report for the same files. The figure and view options of the tool (--svg, --html,
--perfetto, --prometheus, --context) are not offered here: use the tool for them. Exit status 0
with or without findings, 2 on errors (one line on stderr), as the tool.
"""

from __future__ import annotations

import argparse
import sys
from typing import List, Optional

from . import diagnose

_TOOL_ONLY = ("--svg", "--html", "--perfetto", "--prometheus", "--prometheus-steps", "--context", "--model-type")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python3 -m failslow", description="failslow from Python")
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser(
        "diagnose",
        help="which steps were slow, and which rank and phase hold the job back (report failslow.report/1)",
    )
    d.add_argument("inputs", nargs="+", help="Kineto .json/.json.gz, Nsight .sqlite, .csv/.tsv, folders, or .fsum files")
    d.add_argument("--topology", help="layout, e.g. tp=2,pp=4,dp=8 (default: pg_config, else pure data parallel)")
    d.add_argument("--order", default="tp-cp-ep-dp-pp", help="Megatron order of the layout, fastest first")
    d.add_argument("--format", default="text", help="text (default) or json")
    d.add_argument("-o", "--out", help="write the report to FILE instead of standard output")
    d.add_argument("--threads", type=int, default=0, help="files read in parallel (default: all cores)")
    d.add_argument("--width", type=int, default=100, help="wrap the text report at this many columns")
    return p


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    for a in argv:
        if a.split("=")[0] in _TOOL_ONLY:
            print(f"failslow: {a.split('=')[0]} is offered by the failslow tool only, not by python3 -m failslow",
                  file=sys.stderr)
            return 2
    try:
        args = _parser().parse_args(argv)
    except SystemExit as e:  # argparse: --help exits 0, a bad command line 2
        return int(e.code or 0)
    try:
        if args.format not in ("text", "json"):
            raise ValueError(f"diagnose: --format is text or json, not '{args.format}'")
        text = diagnose(args.inputs, topology=args.topology, order=args.order, threads=args.threads,
                        format=args.format, width=args.width)
        if args.out:
            with open(args.out, "w", encoding="utf-8") as f:
                f.write(text)
        else:
            sys.stdout.write(text)
        return 0
    except (ValueError, OSError, RuntimeError) as e:
        print(f"failslow: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
