"""Peer of bench_name_table: interning names with a Python dict (what a Python profiler does).

usage: intern_names.py DISTINCT LOOKUPS
Prints the seconds per interned name (best of 5) as the last line.
"""
import sys
import time


def main():
    distinct, lookups = int(sys.argv[1]), int(sys.argv[2])
    # The same name stream as the C++ benchmark: name i % distinct, in a fixed stride order.
    names = [f"void at::native::elementwise_kernel<128, 4, op_{i}>(int, float*)" for i in range(distinct)]
    stream = [names[(k * 7919) % distinct] for k in range(lookups)]
    best = float("inf")
    for _ in range(5):
        table = {}
        t0 = time.perf_counter()
        for s in stream:
            table.setdefault(s, len(table))
        best = min(best, time.perf_counter() - t0)
    print(best / lookups)


if __name__ == "__main__":
    main()
