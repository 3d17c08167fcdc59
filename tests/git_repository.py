"""A git repository holding this project's stack files and price table, for tests that compare a change with its base.

The `repository` fixture (tests/conftest.py) commits the files once as the base; `git` runs git in it as a test user.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from components.config.stack_file import PROJECT_DIR
from tests.helpers import STACKS


def git(directory: Path, *args: str) -> None:
    identity = ["-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "-C", str(directory), *identity, *args], check=True, capture_output=True)


def base_repository(directory: Path) -> Path:
    """A git repository holding this project's stack files and price table, committed once as the base."""
    if shutil.which("git") is None:
        pytest.fail("git is needed to compare a change with its base")
    for name in ("Pulumi.yaml", *(f"Pulumi.{stack}.yaml" for stack in STACKS), "prices/nebius.yaml"):
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(PROJECT_DIR / name, directory / name)
    git(directory, "init", "--quiet")
    git(directory, "add", ".")
    git(directory, "commit", "--quiet", "-m", "base")
    return directory
