#!/usr/bin/env python3
"""Build (or reuse) the `helm` binary the e2e/helm tier renders the vendored charts with, from the Go module proxy.

The version is the one e2e/gpu-node/build.sh builds (its `helm.sh/helm/v3@v<version>` line, read here so that the
two never differ). The module is fetched with `go mod download -json helm.sh/helm/v3@v<version>` and `./cmd/helm`
is built in its own directory, with its own go.mod and go.sum, as upstream's `make build` builds it (its Makefile:
`go build -trimpath -ldflags '-w -s -X helm.sh/helm/v3/internal/version.version=...' ./cmd/helm`), with
CGO_ENABLED=0. Standard library only.

Output (reused when present):
    ${NEBIUS_DRA_E2E_CACHE:-${XDG_CACHE_HOME:-~/.cache}/nebius-dra-e2e}/helm-v<version>/bin/helm

Usage:
    python e2e/helm/helm_build.py       # build what is missing, print the binary's path
"""

from __future__ import annotations

import fcntl
import importlib.util
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parents[1]
GPU_NODE_BUILD = PROJECT / "e2e" / "gpu-node" / "build.sh"
MODULE = "helm.sh/helm/v3"
PACKAGE = "./cmd/helm"
VERSION_VARIABLE = f"{MODULE}/internal/version.version"


class BuildError(Exception):
    """A build problem with a message meant for humans."""


def _log(message: str) -> None:
    print(f"[e2e/helm/build] {message}", flush=True)


def _cache_root() -> Path:
    """The engines' cache directory, as e2e/kube/build.py names it."""
    spec = importlib.util.spec_from_file_location("nebius_dra_e2e_kube_build", PROJECT / "e2e" / "kube" / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return Path(module.cache_root())


def helm_version() -> str:
    """The helm version e2e/gpu-node/build.sh builds, e.g. `3.20.2`."""
    found = re.findall(rf"{re.escape(MODULE)}@v(\d+\.\d+\.\d+)\b", GPU_NODE_BUILD.read_text())
    if len(set(found)) != 1:
        raise BuildError(f"{GPU_NODE_BUILD} names {MODULE} at {sorted(set(found)) or 'no version'}, not one version")
    return found[0]


def binary_path(version: str) -> Path:
    return _cache_root() / f"helm-v{version}" / "bin" / "helm"


def module_dir(version: str) -> Path:
    """The served module's source, downloaded into the Go module cache when missing."""
    try:
        proc = subprocess.run(
            ["go", "mod", "download", "-json", f"{MODULE}@v{version}"],
            capture_output=True,
            text=True,
            timeout=600,
            cwd=HERE,
        )
    except FileNotFoundError:
        raise BuildError("the `go` command was not found on PATH; install Go >= 1.26") from None
    answer = json.loads(proc.stdout or "{}")
    if proc.returncode != 0 or "Dir" not in answer:
        raise BuildError(
            f"`go mod download {MODULE}@v{version}` failed (exit {proc.returncode}): "
            f"{answer.get('Error') or proc.stderr.strip()}"
        )
    return Path(answer["Dir"])


def ensure_helm() -> Path:
    """The helm binary, built when it is missing."""
    version = helm_version()
    out = binary_path(version)
    if out.is_file():
        _log(f"helm v{version} present at {out} (no build needed)")
        return out
    source = module_dir(version)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(_cache_root() / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if out.is_file():
            return out
        tmp = out.with_name(f".helm.tmp-{os.getpid()}")
        ldflags = f"-s -w -X {VERSION_VARIABLE}=v{version}"
        # Lowest CPU priority: the machines this runs on are shared.
        cmd = ["nice", "-n", "19", "go", "build", "-trimpath", "-ldflags", ldflags, "-o", str(tmp), PACKAGE]
        _log(f"building helm v{version}: (cd {source} && CGO_ENABLED=0 {' '.join(cmd)})")
        start = time.monotonic()
        proc = subprocess.run(cmd, cwd=source, env=dict(os.environ, CGO_ENABLED="0"), capture_output=True, text=True)
        if proc.returncode != 0:
            tmp.unlink(missing_ok=True)
            tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-40:])
            raise BuildError(f"`go build {PACKAGE}` failed (exit {proc.returncode}) in {source}:\n{tail}")
        os.replace(tmp, out)
        _log(f"built {out} in {time.monotonic() - start:.1f}s")
    return out


def main() -> int:
    try:
        binary = ensure_helm()
    except BuildError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"helm={binary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
