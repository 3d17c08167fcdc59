"""Fixtures of the Helm tier: the `helm` binary built from the Go module proxy (helm_build.py), never one on PATH."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parents[1]
for path in (str(PROJECT), str(HERE)):
    if path not in sys.path:
        sys.path.insert(0, path)

from helm_build import ensure_helm, helm_version  # noqa: E402


@pytest.fixture(scope="session")
def helm() -> Path:
    """The built helm, checked to be the version e2e/gpu-node/build.sh names before any chart is rendered."""
    binary = ensure_helm()
    shown = subprocess.run([str(binary), "version", "--short"], capture_output=True, text=True, timeout=60, check=True)
    assert shown.stdout.startswith(f"v{helm_version()}"), shown.stdout
    return binary
