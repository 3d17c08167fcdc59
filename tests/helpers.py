"""Helpers the test modules share: which stacks exist, found the way a user adds one, and the regex engines."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from components.config.dependent import CLUSTER_ONLY_KEYS
from components.config.stack_file import committed_stacks, declared_default, load_stack_config
from policies.dra_guardrails import Finding

STACKS = committed_stacks()
# The test tree and the checkout, for a test module at any depth of tests/ (its folder mirrors the source it tests).
TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


def suite_modules() -> list[Path]:
    """Every test module `make test` collects, at any depth of tests/ (the JavaScript engine's packages aside)."""
    return sorted(path for path in TESTS.rglob("test_*.py") if "node_modules" not in path.parts)


# The upstream charts vendored beside the checkouts (PROVENANCE.md there), unmodified.
VENDORED_CHARTS = Path("/work/shared/vendor/charts")


def with_gpu_groups_changed(stack: str, changes_of: Callable[[dict[str, Any]], Mapping[str, Any]]) -> dict[str, str]:
    """The stack's merged config with `changes_of(group)` applied to each GPU group; a value None removes the field."""
    config = dict(load_stack_config(stack))
    groups = json.loads(config["nebius-dra:gpuNodeGroups"])
    for group in groups:
        for key, value in changes_of(group).items():
            if value is None:
                group.pop(key, None)
            else:
                group[key] = value
    config["nebius-dra:gpuNodeGroups"] = json.dumps(groups)
    return config


UNLISTED_MINOR_POLICY = "gpu-drivers-preset-known"


def without_cluster_keys(config: Mapping[str, str]) -> dict[str, str]:
    """`config` (full keys to text) with the keys of the cluster the stack creates at their declared defaults, as
    the CLI hands them: what existing-cluster mode takes (`CLUSTER_ONLY_KEYS`, components/config/dependent.py)."""
    defaults = {f"nebius-dra:{key}": declared_default(key) for key in CLUSTER_ONLY_KEYS}
    return {**config, **{key: v if isinstance(v, str) else json.dumps(v) for key, v in defaults.items()}}


def beyond_the_unlisted_minor(findings: Sequence[Finding]) -> list[Finding]:
    """The findings besides the advisory each preset GPU group of a 1.34 stack gets.

    The dated table of Nebius driver presets has no row for Kubernetes 1.34, so the real stacks
    carry that advisory on every group with a driversPreset; anything else is a real finding.
    """
    return [f for f in findings if not (f.policy == UNLISTED_MINOR_POLICY and "has no row for 1.34 " in f.message)]


# The engines that read this project's regexes outside Python: Go's regexp (the Pulumi CLI) and
# ECMA-262 (editors, ajv); their small programs read probes as JSON on stdin (tests/regex_engines/).
REGEX_ENGINES = TESTS / "regex_engines"
JS_MODULES = REGEX_ENGINES / "js" / "node_modules"
# A cold `go run` compiles the standard library's regexp and JSON packages: tens of seconds on 2 shared cores.
ENGINE_TIMEOUT_S = 300


def _needs(toolchain: str) -> None:
    if shutil.which(toolchain) is None:
        pytest.skip(f"{toolchain} is not on PATH: the regex engine tests need it (CI has it)")


def _engine_output(command: list[str], program_dir: Path, stdin: Any) -> Any:
    """What an engine program writes as JSON for `stdin`; the test is skipped where its toolchain is not installed."""
    _needs(command[0])
    done = subprocess.run(
        command,
        cwd=program_dir,
        input=json.dumps(stdin),
        capture_output=True,
        text=True,
        timeout=ENGINE_TIMEOUT_S,
        # GOTOOLCHAIN=local: go.mod's go line never makes `go run` download a toolchain.
        env={**os.environ, "GOTOOLCHAIN": "local"},
        check=False,
    )
    assert done.returncode == 0, f"{' '.join(command)} exited {done.returncode}: {done.stderr}"
    return json.loads(done.stdout)


def go_program(program_dir: Path, stdin: Any) -> Any:
    """What the Go program in `program_dir` writes as JSON for `stdin` (`go run .`)."""
    return _engine_output(["go", "run", "."], program_dir, stdin)


def go_regexp(probes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each probe's pattern compiled with Go's regexp and matched against its inputs (tests/regex_engines/go)."""
    return go_program(REGEX_ENGINES / "go", probes)


def ecma_regexp(probes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same with `new RegExp(pattern, "u")` in node (tests/regex_engines/js/patterns.js)."""
    return _engine_output(["node", "patterns.js"], REGEX_ENGINES / "js", probes)


def ajv_errors(schema: Mapping[str, Any], documents: Mapping[str, Any]) -> dict[str, Any]:
    """ajv's strict-mode warnings and each document's errors as a user reads them (tests/regex_engines/js/validate.js)."""
    _needs("node")
    assert JS_MODULES.is_dir(), f"{JS_MODULES} is missing: `make engines` (or `make test`) installs ajv with npm ci"
    return _engine_output(["node", "validate.js"], REGEX_ENGINES / "js", {"schema": schema, "documents": documents})


def shows_the_hourly_cost(message: str, cost: float) -> bool:
    """Whether a budget finding says the stack costs `cost` an hour, to the digits it shows (at least cents)."""
    found = re.search(r"cost up to \$([0-9,]+\.[0-9]{2,}) per hour", message)
    return found is not None and abs(float(found[1].replace(",", "")) - cost) < 0.5 * 10 ** -len(found[1].split(".")[1])
