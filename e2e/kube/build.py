#!/usr/bin/env python3
"""Build (or reuse) the Kubernetes control-plane binaries for the e2e tests.

Builds kube-apiserver, kube-controller-manager and kube-scheduler of each Kubernetes minor from the
k8s.io/kubernetes Go module (one wrapper module per minor: ./kubernetes-*/go.mod) and etcd from
go.etcd.io/etcd/server/v3 (wrapper module: ./etcd/go.mod), using only the Go module proxy. Versions
are read from those go.mod files, the minor of a wrapper from the k8s.io/kubernetes version it requires.

Output (reused when present):
    ${NEBIUS_DRA_E2E_CACHE:-${XDG_CACHE_HOME:-~/.cache}/nebius-dra-e2e}/
        kube-v1.MINOR.N/bin/{kube-apiserver,kube-controller-manager,kube-scheduler}
        etcd-v3.6.M/bin/etcd

Usage:
    python e2e/kube/build.py               # every minor the wrappers declare: build what is missing, print the paths
    python e2e/kube/build.py --kube 1.36   # one minor (repeatable)

It also builds a command of any module the proxy serves, in that module's own directory, into the same cache
under the same lock (`ensure_served_command`: the Kueue controller, helm).

From Python (stdlib only, Python 3.11+):
    from build import ensure_binaries      # with e2e/kube on sys.path
    paths = ensure_binaries("1.36")        # {"kube-apiserver": Path(...), ...}; no argument: the oldest minor
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
KUBE_WRAPPERS_GLOB = "kubernetes-*/go.mod"
ETCD_MODULE_DIR = HERE / "etcd"

KUBE_MODULE = "k8s.io/kubernetes"
ETCD_MODULE = "go.etcd.io/etcd/server/v3"

KUBE_COMMANDS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")


class BuildError(Exception):
    """A build problem with a message meant for humans (no traceback needed)."""


def _log(msg: str) -> None:
    print(f"[e2e/kube/build] {msg}", flush=True)


def required_version(go_mod: Path, module: str) -> str:
    """Version of `module` in the require directive(s) of `go_mod`."""
    try:
        text = go_mod.read_text()
    except OSError as exc:
        raise BuildError(f"cannot read {go_mod}: {exc}") from None
    text = re.sub(r"//[^\n]*", "", text)
    # single-line form: require mod vX
    m = re.search(rf"^\s*require\s+{re.escape(module)}\s+(v\S+)", text, re.M)
    if not m:
        # block form: require ( ... mod vX ... )
        for block in re.findall(r"^\s*require\s*\((.*?)^\s*\)", text, re.M | re.S):
            m = re.search(rf"^\s*{re.escape(module)}\s+(v\S+)", block, re.M)
            if m:
                break
    if not m:
        raise BuildError(f"{go_mod} does not require {module}")
    return m.group(1)


def _minor(version: str) -> str:
    """v1.36.3 -> 1.36: the minor a wrapper builds, as stacks name it (kubernetesVersion)."""
    m = re.fullmatch(r"v(\d+)\.(\d+)\.\d+.*", version)
    if not m:
        raise BuildError(f"unexpected {KUBE_MODULE} version {version!r}")
    return f"{m.group(1)}.{m.group(2)}"


def _minor_key(minor: str) -> tuple[int, ...]:
    return tuple(int(part) for part in minor.split("."))


def kube_wrappers() -> dict[str, Path]:
    """{minor: wrapper module directory}, oldest first, read from the k8s.io/kubernetes each wrapper requires.

    The wrapper's directory name is not read: its go.mod is the one place a version is written.
    """
    found: dict[str, Path] = {}
    for go_mod in HERE.glob(KUBE_WRAPPERS_GLOB):
        minor = _minor(required_version(go_mod, KUBE_MODULE))
        if minor in found:
            raise BuildError(f"{go_mod} and {found[minor] / 'go.mod'} both build Kubernetes {minor}")
        found[minor] = go_mod.parent
    if not found:
        raise BuildError(f"no wrapper module {HERE / KUBE_WRAPPERS_GLOB}")
    return dict(sorted(found.items(), key=lambda item: _minor_key(item[0])))


def kube_minors() -> tuple[str, ...]:
    return tuple(kube_wrappers())


def default_minor() -> str:
    """The oldest minor a wrapper declares: the stack's floor, what a control plane runs unless asked otherwise."""
    return kube_minors()[0]


def kube_module_dir(minor: str | None = None) -> Path:
    wrappers = kube_wrappers()
    minor = minor or default_minor()
    if minor not in wrappers:
        raise BuildError(f"no wrapper module builds Kubernetes {minor}; declared: {', '.join(wrappers)}")
    return wrappers[minor]


def kube_version(minor: str | None = None) -> str:
    """The k8s.io/kubernetes version the wrapper of `minor` (default: the oldest) requires, e.g. v1.34.12."""
    return required_version(kube_module_dir(minor) / "go.mod", KUBE_MODULE)


def etcd_version() -> str:
    return required_version(ETCD_MODULE_DIR / "go.mod", ETCD_MODULE)


def cache_root() -> Path:
    env = os.environ.get("NEBIUS_DRA_E2E_CACHE")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg).expanduser() / "nebius-dra-e2e"


def _kube_ldflags(version: str) -> str:
    major, minor = _minor(version).split(".")
    pkg = "k8s.io/component-base/version"
    return f"-s -w -X {pkg}.gitVersion={version} -X {pkg}.gitMajor={major} -X {pkg}.gitMinor={minor}"


def _go() -> str:
    go = shutil.which("go")
    if not go:
        raise BuildError(
            "the `go` command was not found on PATH; install Go >= 1.26 "
            "(needed to build the e2e control plane from Go modules)"
        )
    return go


def _go_build(module_dir: Path, packages: list[str], ldflags: str, outs: list[Path]) -> None:
    """One `go build` of `packages` (main packages resolved in the wrapper module at module_dir) to `outs`,
    atomically: one invocation loads and hashes the module's packages once for all the binaries and compiles
    what they share once (the build cache would too, but each separate invocation loads them all again)."""
    tmp = outs[0].parent / f".build.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    env = dict(os.environ, CGO_ENABLED="0")
    # Lowest CPU priority: a cold build is ~17 CPU-minutes, and the machines it runs on are shared.
    # Into the directory several binaries are named for their packages (kube-apiserver, ...); one binary, named
    # for its output (etcd, whose package path ends in /v3).
    target = f"{tmp}{os.sep}" if len(packages) > 1 else str(tmp / outs[0].name)
    cmd = ["nice", "-n", "19", _go(), "build", "-trimpath", "-ldflags", ldflags, "-o", target, *packages]
    names = ", ".join(out.name for out in outs)
    _log(f"building {names}: (cd {module_dir} && CGO_ENABLED=0 {shlex.join(cmd)})")
    start = time.monotonic()
    try:
        proc = subprocess.run(
            cmd,
            cwd=module_dir,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        if proc.returncode != 0:
            lines = proc.stdout.strip().splitlines()
            tail = "\n".join(lines[-40:])
            hint = ""
            fetch_markers = (
                "not available",
                "403 Forbidden",
                "404 Not Found",
                "reading https://",
                "module lookup disabled",
            )
            if any(marker in proc.stdout for marker in fetch_markers):
                hint = (
                    "\n(fetching a Go module failed: check network access to GOPROXY; if the proxy does not serve"
                    " a required module/version, see e2e/kube/BUILD-NOTES.md)"
                )
            raise BuildError(
                f"`go build {' '.join(packages)}` failed (exit {proc.returncode}) in {module_dir}:\n{tail}{hint}"
            )
        for out in outs:
            built = tmp / out.name
            os.chmod(built, 0o755)
            os.replace(built, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    _log(f"built {names} in {time.monotonic() - start:.1f}s")


@contextlib.contextmanager
def _build_lock() -> Iterator[None]:
    """Serialise concurrent builders (parallel test sessions, the other e2e builds) on the cache's one lock."""
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".build.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            _log(f"another build holds {root / '.build.lock'}; waiting for it")
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def served_module_dir(module: str, version: str) -> Path:
    """The source of `module`@`version` as the Go module proxy serves it (`go mod download -json`), downloaded
    into the module cache when missing: what e2e/kueue and e2e/helm build a command of."""
    proc = subprocess.run(
        [_go(), "mod", "download", "-json", f"{module}@{version}"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=HERE,
    )
    answer = json.loads(proc.stdout or "{}")
    if proc.returncode != 0 or "Dir" not in answer:
        raise BuildError(
            f"`go mod download {module}@{version}` failed (exit {proc.returncode}): "
            f"{answer.get('Error') or proc.stderr.strip()}"
        )
    return Path(answer["Dir"])


def ensure_served_command(module: str, version: str, package: str, ldflags: str, out: Path) -> Path:
    """`out`, built when missing from `package` of the served module in the module's own directory (its go.mod
    and go.sum, as upstream's Makefile builds it), under the cache's build lock. Raises BuildError."""
    if out.is_file():
        _log(f"{out.name} {version} present at {out} (no build needed)")
        return out
    source = served_module_dir(module, version)
    out.parent.mkdir(parents=True, exist_ok=True)
    with _build_lock():
        if not out.is_file():
            _go_build(source, [package], ldflags, [out])
    return out


def binary_dirs(minor: str | None = None) -> dict[str, Path]:
    root = cache_root()
    return {
        "kube": root / f"kube-{kube_version(minor)}" / "bin",
        "etcd": root / f"etcd-{etcd_version()}" / "bin",
    }


def ensure_binaries(minor: str | None = None) -> dict[str, Path]:
    """Return {name: path} for kube-apiserver, kube-controller-manager and
    kube-scheduler of Kubernetes `minor` (default: the oldest the wrappers declare)
    and etcd, building whatever is missing. Raises BuildError."""
    total_start = time.monotonic()
    kver, ever = kube_version(minor), etcd_version()
    dirs = binary_dirs(minor)
    module_dir = kube_module_dir(minor)
    wanted: list[tuple[str, Path, Path, str, str]] = [
        (name, dirs["kube"] / name, module_dir, f"{KUBE_MODULE}/cmd/{name}", _kube_ldflags(kver))
        for name in KUBE_COMMANDS
    ]
    wanted.append(("etcd", dirs["etcd"] / "etcd", ETCD_MODULE_DIR, ETCD_MODULE, "-s -w"))
    paths = {name: out for name, out, *_ in wanted}

    missing = [w for w in wanted if not w[1].is_file()]
    if not missing:
        _log(f"Kubernetes {kver} and etcd {ever} binaries present in {cache_root()} (no build needed)")
        return paths

    with _build_lock():
        for name, out, *_ in wanted:
            if out.is_file():
                _log(f"{name}: present at {out}")
        # The missing binaries of one wrapper module in one invocation: the minor's three, etcd on its own.
        by_module: dict[tuple[Path, str], list[tuple[str, Path]]] = {}
        for _, out, module_dir, package, ldflags in wanted:
            if not out.is_file():
                by_module.setdefault((module_dir, ldflags), []).append((package, out))
        for (module_dir, ldflags), builds in by_module.items():
            _go_build(module_dir, [package for package, _ in builds], ldflags, [out for _, out in builds])
    _log(f"done in {time.monotonic() - total_start:.1f}s")
    return paths


def main() -> int:
    parser = argparse.ArgumentParser(prog="build.py", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--kube",
        action="append",
        metavar="MINOR",
        help="Kubernetes minor to build, e.g. 1.36 (default: every wrapper's)",
    )
    args = parser.parse_args()
    try:
        paths = {}
        for minor in args.kube or kube_minors():
            paths.update({f"{minor}/{name}": path for name, path in ensure_binaries(minor).items()})
    except BuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    for name, path in paths.items():
        print(f"{name}={path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
