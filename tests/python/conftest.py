"""pytest set-up of failslow's Python tests (tests/python; ctest python.bindings and
python.torch_job run them with PYTHONPATH at the built package, docs/python.md).

A session in which every collected test skipped itself exits with FAILSLOW_SKIP_CODE (77) when
that variable is set, so ctest reports the test as skipped rather than passed."""

import os
import shutil

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
REFERENCE = os.path.join(ROOT, "tests", "reference")
DATA = os.path.join(ROOT, "examples", "data")
TORCH_GLOO = os.path.join(ROOT, "tests", "data", "torch_gloo")


@pytest.fixture(scope="session")
def cli():
    """The failslow tool the build made (FAILSLOW_CLI), else one on PATH; skips without."""
    path = os.environ.get("FAILSLOW_CLI") or shutil.which("failslow")
    if not path or not os.path.exists(path):
        pytest.skip("the failslow tool is not built (FAILSLOW_CLI unset): the comparison with it is skipped")
    return path


def pytest_sessionfinish(session, exitstatus):
    code = os.environ.get("FAILSLOW_SKIP_CODE")
    # 5: nothing collected, as when a module skipped itself at import (pytest.importorskip)
    if not code or exitstatus not in (0, 5):
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return
    passed = len(reporter.stats.get("passed", []))
    skipped = len(reporter.stats.get("skipped", []))
    if passed == 0 and skipped > 0:
        session.exitstatus = int(code)
