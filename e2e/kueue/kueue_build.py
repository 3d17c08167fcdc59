#!/usr/bin/env python3
"""Build (or reuse) the Kueue controller for the e2e tests, from the Go module the proxy serves.

The version is the one the stack pins (components/queue_model.py KUEUE_VERSION). The module is
fetched with `go mod download -json sigs.k8s.io/kueue@v<version>` and `./cmd/kueue` is built in
its own directory, with its own go.mod and go.sum (upstream's `make build` builds the same
package, `go build -o bin/manager cmd/kueue/main.go`). The module also holds the CRDs
(config/components/crd/bases) and webhook configurations (config/components/webhook) the test
applies, and the Helm chart (charts/kueue) the stack's release installs.

Output (reused when present):
    ${NEBIUS_DRA_E2E_CACHE:-${XDG_CACHE_HOME:-~/.cache}/nebius-dra-e2e}/kueue-v<version>/bin/kueue

Usage:
    python e2e/kueue/kueue_build.py       # build what is missing, print the binary's and the module's paths
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parents[1]
sys.path[:0] = [str(PROJECT), str(PROJECT / "e2e" / "dra")]

from dra_engines import load_by_path  # noqa: E402

from components.queue_model import KUEUE_VERSION  # noqa: E402

# The engines' cache directory is e2e/kube's (the same name control_plane.py loads it under).
kube_build = load_by_path("nebius_dra_e2e_kube_build", PROJECT / "e2e" / "kube" / "build.py")

MODULE = "sigs.k8s.io/kueue"
PACKAGE = "./cmd/kueue"
VERSION_PACKAGE = f"{MODULE}/pkg/version"


class BuildError(Exception):
    """A build problem with a message meant for humans."""


def _log(message: str) -> None:
    print(f"[e2e/kueue/build] {message}", flush=True)


def binary_path() -> Path:
    return kube_build.cache_root() / f"kueue-v{KUEUE_VERSION}" / "bin" / "kueue"


def module_dir() -> Path:
    """The served module's source, downloaded into the Go module cache when missing."""
    try:
        proc = subprocess.run(
            ["go", "mod", "download", "-json", f"{MODULE}@v{KUEUE_VERSION}"],
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
            f"`go mod download {MODULE}@v{KUEUE_VERSION}` failed (exit {proc.returncode}): "
            f"{answer.get('Error') or proc.stderr.strip()}"
        )
    return Path(answer["Dir"])


def ensure_kueue() -> tuple[Path, Path]:
    """(the controller binary, the module's source directory), building the binary when it is missing."""
    source = module_dir()
    out = binary_path()
    if out.is_file():
        _log(f"Kueue v{KUEUE_VERSION} present at {out} (no build needed)")
        return out, source
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(kube_build.cache_root() / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if out.is_file():
            return out, source
        tmp = out.with_name(f".kueue.tmp-{os.getpid()}")
        ldflags = f"-s -w -X {VERSION_PACKAGE}.GitVersion=v{KUEUE_VERSION}"
        # Lowest CPU priority: the machines this runs on are shared.
        cmd = ["nice", "-n", "19", "go", "build", "-trimpath", "-ldflags", ldflags, "-o", str(tmp), PACKAGE]
        _log(f"building kueue: (cd {source} && CGO_ENABLED=0 {' '.join(cmd)})")
        start = time.monotonic()
        proc = subprocess.run(cmd, cwd=source, env=dict(os.environ, CGO_ENABLED="0"), capture_output=True, text=True)
        if proc.returncode != 0:
            tmp.unlink(missing_ok=True)
            tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-40:])
            raise BuildError(f"`go build {PACKAGE}` failed (exit {proc.returncode}) in {source}:\n{tail}")
        os.replace(tmp, out)
        _log(f"built {out} in {time.monotonic() - start:.1f}s")
    return out, source


def main() -> int:
    try:
        binary, source = ensure_kueue()
    except BuildError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"kueue={binary}")
    print(f"module={source}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
