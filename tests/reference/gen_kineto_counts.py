"""Independent per-category counts of the real Kineto traces, for test_kineto_reader.

usage: gen_kineto_counts.py [KINETO_DIR]   (default: ../shared/data/kineto next to the repo)
Writes tests/reference/kineto/counts.json. Uses only Python's json module (numbers read as
Decimal, so nanoseconds are exact), independently of failslow's reader. The mapping it
implements is the one documented in include/failslow/io/kineto_reader.hpp:
  "ph": "X" events by "cat": kernel (NCCL & co. -> collective, by the default kernel-class
  rules of core/kernel_class.hpp), gpu_memcpy, gpu_memset, cuda_runtime/cuda_driver -> runtime,
  cpu_op, user_annotation/gpu_user_annotation -> annotation; other categories are counted by
  name; M = metadata, s/t/f = flows, i/I = instants, any other ph = other_phases.
"""
import decimal
import gzip
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DIR = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "data", "kineto"))

# kernel_classifier::defaults(), in order: (class, kind, text, case_insensitive)
RULES = [
    ("memory", "prefix", "Memcpy", False), ("memory", "prefix", "Memset", False),
    ("communication", "prefix", "ncclKernel_", False), ("communication", "prefix", "ncclDevKernel_", False),
    ("communication", "contains", "nccl", True), ("communication", "contains", "rccl", True),
    ("communication", "contains", "nvshmem", True), ("communication", "contains", "deep_ep::", False),
    ("communication", "contains", "userbuffers", True), ("communication", "contains", "cross_device_reduce", False),
    ("communication", "contains", "all_reduce", True), ("communication", "contains", "allreduce", True),
    ("communication", "contains", "all_gather", True), ("communication", "contains", "allgather", True),
    ("communication", "contains", "reduce_scatter", True), ("communication", "contains", "reducescatter", True),
    ("communication", "contains", "all_to_all", True), ("communication", "contains", "alltoall", True),
    ("memory", "contains", "direct_copy_kernel", False), ("memory", "contains", "CatArrayBatchedCopy", False),
    ("memory", "contains", "FillFunctor", False), ("memory", "prefix", "__amd_rocclr_copy", False),
    ("memory", "prefix", "__amd_rocclr_fill", False),
]


def classify(name):
    for cls, kind, text, ci in RULES:
        n, t = (name.lower(), text.lower()) if ci else (name, text)
        if kind == "prefix":
            if n.startswith("void "):
                n = n[5:]
            if n.startswith(t):
                return cls
        elif t in n:
            return cls
    return "compute"


def device_kind(name):
    if classify(name) == "communication":
        return "collective"
    if name.startswith("Memcpy"):
        return "memcpy"
    if name.startswith("Memset"):
        return "memset"
    return "kernel"


CATS = {"gpu_memcpy": "memcpy", "gpu_memset": "memset", "cuda_runtime": "runtime", "cuda_driver": "runtime",
        "cpu_op": "cpu_op", "user_annotation": "annotation", "gpu_user_annotation": "annotation"}
KINDS = ["kernel", "memcpy", "memset", "collective", "annotation", "cpu_op", "runtime"]


def ns(x):
    return int((decimal.Decimal(x) * 1000).to_integral_value(rounding=decimal.ROUND_HALF_EVEN))


def is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def count(path):
    with (gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")) as f:
        doc = json.loads(f.read(), parse_float=decimal.Decimal)
    base = int(doc.get("baseTimeNanoseconds", 0))
    rank = doc.get("distributedInfo", {}).get("rank", -1)
    out = {"events_seen": 0, "stored": 0, "metadata": 0, "flows": 0, "instants": 0, "other_phases": 0,
           "unknown_category": 0, "malformed": 0, "unknown_categories": {}, "rank": rank, "launches": 0,
           "collective_args": 0, "kinds": {k: 0 for k in KINDS}, "duration_ns": {k: 0 for k in KINDS},
           "start_ns_sum": {k: 0 for k in KINDS}}
    for e in doc["traceEvents"]:
        out["events_seen"] += 1
        ph = e.get("ph")
        if ph != "X":
            key = {"M": "metadata", "s": "flows", "t": "flows", "f": "flows", "i": "instants", "I": "instants"}
            out[key.get(ph, "other_phases")] += 1
            continue
        cat = e.get("cat", "")
        if cat == "kernel":
            kind = device_kind(e["name"])
        elif cat in CATS:
            kind = CATS[cat]
        else:
            out["unknown_category"] += 1
            out["unknown_categories"][cat] = out["unknown_categories"].get(cat, 0) + 1
            continue
        args = e.get("args", {})
        device_side = cat in ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation")
        tid = e.get("tid")
        if not (is_int(e.get("ts")) or isinstance(e.get("ts"), decimal.Decimal)) or "dur" not in e \
                or (not device_side and not (is_int(tid) and -2**31 <= tid < 2**32)) or e["dur"] < 0:
            out["malformed"] += 1
            continue
        start = ns(e["ts"]) + base
        end = start + ns(e["dur"])
        out["stored"] += 1
        out["kinds"][kind] += 1
        out["duration_ns"][kind] += end - start
        out["start_ns_sum"][kind] += start
        if "grid" in args and "block" in args:
            out["launches"] += 1
        if device_side and any(k in args for k in ("Collective name", "Group size", "Process Group Name")):
            out["collective_args"] += 1
    # Sums as decimal strings: they exceed 2^63.
    for k in KINDS:
        out["start_ns_sum"][k] = str(out["start_ns_sum"][k])
        out["duration_ns"][k] = str(out["duration_ns"][k])
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_DIR
    result = {}
    for dirpath, _, files in sorted(os.walk(root)):
        for n in sorted(files):
            if n.endswith(".json") or n.endswith(".json.gz"):
                p = os.path.join(dirpath, n)
                result[os.path.relpath(p, root)] = count(p)
    os.makedirs(os.path.join(HERE, "kineto"), exist_ok=True)
    with open(os.path.join(HERE, "kineto", "counts.json"), "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"{len(result)} traces -> tests/reference/kineto/counts.json")


if __name__ == "__main__":
    main()
