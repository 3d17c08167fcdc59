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

import sys
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


BuildError = kube_build.BuildError


def binary_path() -> Path:
    return kube_build.cache_root() / f"kueue-v{KUEUE_VERSION}" / "bin" / "kueue"


def module_dir() -> Path:
    """The served module's source, downloaded into the Go module cache when missing."""
    return kube_build.served_module_dir(MODULE, f"v{KUEUE_VERSION}")


def ensure_kueue() -> tuple[Path, Path]:
    """(the controller binary, the module's source directory), building the binary when it is missing."""
    ldflags = f"-s -w -X {VERSION_PACKAGE}.GitVersion=v{KUEUE_VERSION}"
    out = kube_build.ensure_served_command(MODULE, f"v{KUEUE_VERSION}", PACKAGE, ldflags, binary_path())
    return out, module_dir()


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
