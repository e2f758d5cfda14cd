"""Peer of bench_kineto: Python's json.loads on the same bytes (it only parses).

usage: json_loads.py TRACE(.json or .json.gz) EVENTS
Prints the seconds per trace event (best of 3 json.loads of the decompressed bytes) as the
last line.
"""
import gzip
import json
import sys
import time


def main():
    path, events = sys.argv[1], int(sys.argv[2])
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        json.loads(raw)
        best = min(best, time.perf_counter() - t0)
    print(f"{len(raw)} bytes, best json.loads {best:.3f} s", file=sys.stderr)
    print(best / events)


if __name__ == "__main__":
    main()
