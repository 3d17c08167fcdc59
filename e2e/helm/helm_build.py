#!/usr/bin/env python3
"""Build (or reuse) the `helm` binary the e2e/helm tier renders the vendored charts with, from the Go module proxy.

The version is the one e2e/gpu-node/build.sh builds (its `helm.sh/helm/v3@v<version>` line, read here so that the
two never differ). The module is fetched with `go mod download -json helm.sh/helm/v3@v<version>` and `./cmd/helm`
is built in its own directory, with its own go.mod and go.sum, as upstream's `make build` builds it (its Makefile:
`go build -trimpath -ldflags '-w -s -X helm.sh/helm/v3/internal/version.version=...' ./cmd/helm`), with
CGO_ENABLED=0, by e2e/kube/build.py's `ensure_served_command` (the Kueue build's too). Standard library only.

Output (reused when present):
    ${NEBIUS_DRA_E2E_CACHE:-${XDG_CACHE_HOME:-~/.cache}/nebius-dra-e2e}/helm-v<version>/bin/helm

Usage:
    python e2e/helm/helm_build.py       # build what is missing, print the binary's path
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parents[1]
GPU_NODE_BUILD = PROJECT / "e2e" / "gpu-node" / "build.sh"
MODULE = "helm.sh/helm/v3"
PACKAGE = "./cmd/helm"
VERSION_VARIABLE = f"{MODULE}/internal/version.version"


def _kube_build() -> ModuleType:
    """e2e/kube/build.py, which owns the engines' cache, its build lock and the build of a served module."""
    name = "nebius_dra_e2e_kube_build"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, PROJECT / "e2e" / "kube" / "build.py")
        assert spec is not None and spec.loader is not None
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


BuildError = _kube_build().BuildError


def helm_version() -> str:
    """The helm version e2e/gpu-node/build.sh builds, e.g. `3.20.2`."""
    found = re.findall(rf"{re.escape(MODULE)}@v(\d+\.\d+\.\d+)\b", GPU_NODE_BUILD.read_text())
    if len(set(found)) != 1:
        raise BuildError(f"{GPU_NODE_BUILD} names {MODULE} at {sorted(set(found)) or 'no version'}, not one version")
    return found[0]


def binary_path(version: str) -> Path:
    return Path(_kube_build().cache_root()) / f"helm-v{version}" / "bin" / "helm"


def ensure_helm() -> Path:
    """The helm binary, built when it is missing (static: e2e/kube/build.py builds with CGO_ENABLED=0)."""
    version = helm_version()
    ldflags = f"-s -w -X {VERSION_VARIABLE}=v{version}"
    return Path(_kube_build().ensure_served_command(MODULE, f"v{version}", PACKAGE, ldflags, binary_path(version)))


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
