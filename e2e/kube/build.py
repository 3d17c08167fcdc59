#!/usr/bin/env python3
"""Build (or reuse) the Kubernetes control-plane binaries for the e2e tests.

Builds kube-apiserver, kube-controller-manager and kube-scheduler from the
k8s.io/kubernetes Go module (wrapper module: ./go.mod) and etcd from
go.etcd.io/etcd/server/v3 (separate wrapper module: ./etcd/go.mod), using only
the Go module proxy. Versions are read from those go.mod files.

Output (reused when present):
    ${NEBIUS_DRA_E2E_CACHE:-${XDG_CACHE_HOME:-~/.cache}/nebius-dra-e2e}/
        kube-v1.34.N/bin/{kube-apiserver,kube-controller-manager,kube-scheduler}
        etcd-v3.6.M/bin/etcd

Usage:
    python e2e/kube/build.py          # build what is missing, print the paths

From Python (stdlib only, Python 3.11+):
    from build import ensure_binaries  # with e2e/kube on sys.path
    paths = ensure_binaries()          # {"kube-apiserver": Path(...), ...}
"""

from __future__ import annotations

import fcntl
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
KUBE_MODULE_DIR = HERE
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


def kube_version() -> str:
    return required_version(KUBE_MODULE_DIR / "go.mod", KUBE_MODULE)


def etcd_version() -> str:
    return required_version(ETCD_MODULE_DIR / "go.mod", ETCD_MODULE)


def cache_root() -> Path:
    env = os.environ.get("NEBIUS_DRA_E2E_CACHE")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg).expanduser() / "nebius-dra-e2e"


def _kube_ldflags(version: str) -> str:
    m = re.fullmatch(r"v(\d+)\.(\d+)\.\d+.*", version)
    if not m:
        raise BuildError(f"unexpected {KUBE_MODULE} version {version!r}")
    pkg = "k8s.io/component-base/version"
    return f"-s -w -X {pkg}.gitVersion={version} -X {pkg}.gitMajor={m.group(1)} -X {pkg}.gitMinor={m.group(2)}"


def _go() -> str:
    go = shutil.which("go")
    if not go:
        raise BuildError(
            "the `go` command was not found on PATH; install Go >= 1.26 "
            "(needed to build the e2e control plane from Go modules)"
        )
    return go


def _go_build(module_dir: Path, package: str, ldflags: str, out: Path) -> None:
    """go build `package` (resolved in the wrapper module at module_dir) to `out`, atomically."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    env = dict(os.environ, CGO_ENABLED="0")
    cmd = [_go(), "build", "-trimpath", "-ldflags", ldflags, "-o", str(tmp), package]
    _log(f"building {out.name}: (cd {module_dir} && CGO_ENABLED=0 go {shlex.join(cmd[1:])})")
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
            raise BuildError(f"`go build {package}` failed (exit {proc.returncode}) in {module_dir}:\n{tail}{hint}")
        os.chmod(tmp, 0o755)
        os.replace(tmp, out)
    finally:
        if tmp.exists():
            tmp.unlink()
    _log(f"built {out} in {time.monotonic() - start:.1f}s")


def binary_dirs() -> dict[str, Path]:
    root = cache_root()
    return {
        "kube": root / f"kube-{kube_version()}" / "bin",
        "etcd": root / f"etcd-{etcd_version()}" / "bin",
    }


def ensure_binaries() -> dict[str, Path]:
    """Return {name: path} for kube-apiserver, kube-controller-manager,
    kube-scheduler and etcd, building whatever is missing. Raises BuildError."""
    total_start = time.monotonic()
    kver, ever = kube_version(), etcd_version()
    dirs = binary_dirs()
    wanted: list[tuple[str, Path, Path, str, str]] = [
        (name, dirs["kube"] / name, KUBE_MODULE_DIR, f"{KUBE_MODULE}/cmd/{name}", _kube_ldflags(kver))
        for name in KUBE_COMMANDS
    ]
    wanted.append(("etcd", dirs["etcd"] / "etcd", ETCD_MODULE_DIR, ETCD_MODULE, "-s -w"))
    paths = {name: out for name, out, *_ in wanted}

    missing = [w for w in wanted if not w[1].is_file()]
    if not missing:
        _log(f"Kubernetes {kver} and etcd {ever} binaries present in {cache_root()} (no build needed)")
        return paths

    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    # Serialise concurrent builders (e.g. parallel test sessions) on one lock.
    with open(root / ".build.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            _log(f"another build holds {root / '.build.lock'}; waiting for it")
            fcntl.flock(lock, fcntl.LOCK_EX)
        for name, out, module_dir, package, ldflags in wanted:
            if out.is_file():
                _log(f"{name}: present at {out}")
                continue
            _go_build(module_dir, package, ldflags, out)
    _log(f"done in {time.monotonic() - total_start:.1f}s")
    return paths


def main() -> int:
    try:
        paths = ensure_binaries()
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
