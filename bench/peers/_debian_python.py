"""Shared by the peers: make sure numpy/scipy can be imported.

The python3 first on PATH (e.g. pyenv's) may lack numpy and scipy, which Debian installs for
/usr/bin/python3; require() re-runs the calling script under that interpreter when an import fails.
"""
import importlib
import os
import sys

DEBIAN_PYTHON = "/usr/bin/python3"


def require(*modules):
    try:
        for m in modules:
            importlib.import_module(m)
    except ImportError:
        if os.path.exists(DEBIAN_PYTHON) and os.path.realpath(sys.executable) != os.path.realpath(DEBIAN_PYTHON):
            os.execv(DEBIAN_PYTHON, [DEBIAN_PYTHON] + sys.argv)
        raise
