"""Hooks of the real torch.distributed job (tests/reference/gen_torch_gloo_traces.py worker,
hooks="torch_job_hooks"): the profiler hands each rank's trace to failslow.torch's handler, which
keeps the JSON in the job's folder (for `failslow diagnose` on the same files) and compresses it
into the rank's share; after the profiled steps every rank gathers its share on rank 0 over
torch.distributed, and rank 0 writes the diagnosis of the shares to gathered_report.json beside the traces' folder."""

import json
import os

import failslow.torch


def trace_handler(rank, outdir):
    return failslow.torch.trace_handler(rank=rank, trace_dir=outdir)


def after_profile(rank, outdir):
    report = failslow.torch.gather_and_diagnose()
    if report is not None:
        with open(os.path.join(os.path.dirname(outdir), "gathered_report.json"), "w") as f:
            json.dump(report, f, indent=1)
