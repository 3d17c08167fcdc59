"""Build the real Pulumi engine for the end-to-end tests, from Go modules.

    python e2e/pulumi/build.py          # from the repository root

Builds whatever is missing into

    ${NEBIUS_DRA_E2E_CACHE:-${XDG_CACHE_HOME:-~/.cache}/nebius-dra-e2e}/pulumi-v<pulumi pin>/bin/

where <pulumi pin> is the `pulumi==` version in requirements.txt. Every
version comes from the wrapper modules beside this file (cli/, yaml/,
kubernetes/, python/ go.mod); nothing is repeated here. Each artifact is
built to a temporary name and renamed into place, with a stamp recording
what it was built from, so an interrupted build never leaves a half binary
and a changed pin rebuilds.

Only the Go toolchain and the Go module proxy are used (Python 3.11 stdlib).
See BUILD-NOTES.md for what the proxy does and does not serve.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
REQUIREMENTS = REPO / "requirements.txt"

CLI_PACKAGE = "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi"
CLI_VERSION_VAR = "github.com/pulumi/pulumi/sdk/v3/go/common/version.Version"
PKG_MODULE = "github.com/pulumi/pulumi/pkg/v3"
SDK_MODULE = "github.com/pulumi/pulumi/sdk/v3"
YAML_MODULE = "github.com/pulumi/pulumi-yaml"
YAML_VERSION_VAR = "github.com/pulumi/pulumi-yaml/pkg/version.Version"
K8S_PROVIDER_MODULE = "github.com/pulumi/pulumi-kubernetes/provider/v4"
K8S_SDK_MODULE = "github.com/pulumi/pulumi-kubernetes/sdk/v4"
K8S_PACKAGE = K8S_PROVIDER_MODULE + "/cmd/pulumi-resource-kubernetes"
K8S_VERSION_VAR = K8S_PROVIDER_MODULE + "/pkg/version.Version"
PYTHON_HOST_MODULE = "github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3"

# Per-build timeout for one `go` invocation (a cold CLI build on 2 cores is ~15 min).
GO_TIMEOUT_S = 60 * 60


class BuildError(Exception):
    """A step failed; the message is one line meant for a human."""


# --------------------------------------------------------------------------- locations


def cache_root() -> Path:
    explicit = os.environ.get("NEBIUS_DRA_E2E_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg).expanduser() / "nebius-dra-e2e"


def pinned(package: str) -> str:
    """The `package==X` pin from requirements.txt."""
    pattern = re.compile(rf"^\s*{re.escape(package)}\s*==\s*([^\s;#]+)", re.IGNORECASE)
    for line in REQUIREMENTS.read_text().splitlines():
        match = pattern.match(line)
        if match:
            return match.group(1)
    raise BuildError(f"no '{package}==' pin in {REQUIREMENTS}")


def install_root() -> Path:
    return cache_root() / f"pulumi-v{pinned('pulumi')}"


def bin_dir() -> Path:
    return install_root() / "bin"


def work_dir() -> Path:
    return install_root() / "work"


# --------------------------------------------------------------------------- go helpers


def go_env() -> dict[str, str]:
    env = dict(os.environ)
    env["CGO_ENABLED"] = "0"
    # Never let the go command fetch another toolchain behind our back.
    env.setdefault("GOTOOLCHAIN", "local")
    return env


def run(cmd: list[str], cwd: Path, what: str, env: dict[str, str] | None = None, timeout: float = GO_TIMEOUT_S) -> str:
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env or go_env(), capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        raise BuildError(f"{what}: '{cmd[0]}' not found on PATH") from None
    except subprocess.TimeoutExpired:
        raise BuildError(f"{what}: timed out after {timeout:.0f}s") from None
    if proc.returncode != 0:
        lines = [line for line in (proc.stderr or proc.stdout).splitlines() if line.strip()]
        # The go command puts the cause last; keep the last two lines on one line.
        detail = " | ".join(lines[-2:]) if lines else "no output"
        raise BuildError(f"{what} failed (exit {proc.returncode}): {detail}")
    return proc.stdout


def go_mod(module_dir: Path) -> dict:
    return json.loads(run(["go", "mod", "edit", "-json"], module_dir, f"reading {module_dir}/go.mod"))


def requirement(mod: dict, path: str) -> str | None:
    for req in mod.get("Require") or []:
        if req["Path"] == path:
            return req["Version"]
    return None


def module_dir(wrapper: Path, path: str) -> Path:
    """Download (if needed, verified against the wrapper's go.sum) and locate a module."""
    out = run(["go", "mod", "download", "-json", path], wrapper, f"downloading {path}")
    info = json.loads(out)
    if info.get("Error"):
        raise BuildError(f"downloading {path}: {info['Error']}")
    return Path(info["Dir"])


# --------------------------------------------------------------------------- artifacts


@dataclass
class Artifact:
    name: str  # file name in bin/
    stamp: str  # what it is built from; a change rebuilds it
    build: Callable[[Path], None]  # writes the artifact to the given temporary path

    @property
    def path(self) -> Path:
        return bin_dir() / self.name

    @property
    def stamp_path(self) -> Path:
        return bin_dir() / f".{self.name}.stamp"

    def up_to_date(self) -> bool:
        return (
            self.path.is_file()
            and os.access(self.path, os.X_OK)
            and self.stamp_path.is_file()
            and self.stamp_path.read_text() == self.stamp
        )

    def ensure(self) -> bool:
        """Build if missing; True if it was built."""
        if self.up_to_date():
            return False
        bin_dir().mkdir(parents=True, exist_ok=True)
        tmp = bin_dir() / f".{self.name}.tmp-{os.getpid()}"
        try:
            self.build(tmp)
            mode = tmp.stat().st_mode
            tmp.chmod(mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
            os.replace(tmp, self.path)
        finally:
            tmp.unlink(missing_ok=True)
        stamp_tmp = self.stamp_path.with_suffix(f".tmp-{os.getpid()}")
        stamp_tmp.write_text(self.stamp)
        os.replace(stamp_tmp, self.stamp_path)
        return True


def go_build(wrapper: Path, package: str, out: Path, ldflags: str) -> None:
    run(["go", "build", "-trimpath", "-ldflags", ldflags, "-o", str(out), package], wrapper, f"go build {package}")


def cli_artifact() -> Artifact:
    wrapper = HERE / "cli"
    mod = go_mod(wrapper)
    version = requirement(mod, PKG_MODULE)
    if not version:
        raise BuildError(f"{wrapper}/go.mod does not require {PKG_MODULE}")
    ldflags = f"-X {CLI_VERSION_VAR}={version}"
    return Artifact(
        "pulumi", f"{CLI_PACKAGE}@{version} {ldflags}", lambda out: go_build(wrapper, CLI_PACKAGE, out, ldflags)
    )


def yaml_artifact() -> Artifact:
    wrapper = HERE / "yaml"
    mod = go_mod(wrapper)
    version = requirement(mod, YAML_MODULE)
    if not version:
        raise BuildError(f"{wrapper}/go.mod does not require {YAML_MODULE}")
    package = YAML_MODULE + "/cmd/pulumi-language-yaml"
    ldflags = f"-X {YAML_VERSION_VAR}={version.lstrip('v')}"
    pkg = requirement(mod, PKG_MODULE)
    return Artifact(
        "pulumi-language-yaml",
        f"{package}@{version} pkg@{pkg} {ldflags}",
        lambda out: go_build(wrapper, package, out, ldflags),
    )


def _copy_writable(src: Path, dst: Path) -> None:
    """Copy a (read-only) module tree from the module cache to a writable place."""
    if dst.exists():
        shutil.rmtree(dst)
    for root, _dirs, files in os.walk(src):
        target = dst / Path(root).relative_to(src)
        target.mkdir(parents=True, exist_ok=True)
        for name in files:
            shutil.copyfile(Path(root) / name, target / name)


def kubernetes_provider_version() -> str:
    """The version the built provider reports: provider/v4 has no tags, so the release it belongs
    to is the one of the Go SDK (sdk/v4) the wrapper pins beside it."""
    wrapper = HERE / "kubernetes"
    release = requirement(go_mod(wrapper), K8S_SDK_MODULE)
    if not release:
        raise BuildError(f"{wrapper}/go.mod does not require {K8S_SDK_MODULE}")
    return release.lstrip("v")


def kubernetes_artifact() -> Artifact:
    wrapper = HERE / "kubernetes"
    mod = go_mod(wrapper)
    pseudo = requirement(mod, K8S_PROVIDER_MODULE)
    if not pseudo:
        raise BuildError(f"{wrapper}/go.mod does not require {K8S_PROVIDER_MODULE}")
    version = kubernetes_provider_version()
    ldflags = f"-X {K8S_VERSION_VAR}={version}"
    pkg = requirement(mod, PKG_MODULE)

    def build(out: Path) -> None:
        src_mod = module_dir(wrapper, K8S_PROVIDER_MODULE)
        work = work_dir() / f"kubernetes-{pseudo}"
        src = work / "provider"
        step(f"  copy {K8S_PROVIDER_MODULE}@{pseudo} to {src}", lambda: _copy_writable(src_mod, src))
        cmd_dir = src / "cmd" / "pulumi-resource-kubernetes"
        # Upstream Makefile (k8sprovider): `VERSION=<v> go generate cmd/pulumi-resource-kubernetes/main.go`,
        # whose directive is `go run ./generate.go`: it writes schema-embed.json and
        # terraform-mapping-embed.json (gitignored upstream, so not in the module zip).
        # The generator is compiled within the wrapper module (the provider's own go.mod points
        # at ../sdk, which a module copy does not have) and run in the command's directory.
        gen = work / "generate"
        step(
            "  compile upstream generate.go",
            lambda: run(["go", "build", "-o", str(gen), str(cmd_dir / "generate.go")], wrapper, "go build generate.go"),
        )
        env = go_env()
        env["VERSION"] = version
        step(
            f"  generate embedded schema (VERSION={version})", lambda: run([str(gen)], cmd_dir, "generate.go", env=env)
        )
        for name in ("schema-embed.json", "terraform-mapping-embed.json"):
            if not (cmd_dir / name).is_file():
                raise BuildError(f"generate.go did not write {cmd_dir / name}")
        # Build inside a copy of the wrapper module whose only change is pointing the
        # provider module at the generated copy.
        build_mod = work / "build"
        build_mod.mkdir(parents=True, exist_ok=True)
        for name in ("go.mod", "go.sum"):
            shutil.copyfile(wrapper / name, build_mod / name)
        run(["go", "mod", "edit", f"-replace={K8S_PROVIDER_MODULE}={src}"], build_mod, "go mod edit -replace")
        step(f"  go build {K8S_PACKAGE}", lambda: go_build(build_mod, K8S_PACKAGE, out, ldflags))

    return Artifact("pulumi-resource-kubernetes", f"{K8S_PACKAGE}@{pseudo} pkg@{pkg} {ldflags}", build)


def python_artifacts() -> list[Artifact]:
    """The Python language host and its exec script, when the wrapper pins the host."""
    wrapper = HERE / "python"
    mod = go_mod(wrapper)
    host = requirement(mod, PYTHON_HOST_MODULE)
    if not host:
        return []
    # The host's version string and its exec script come from the sdk/v3 of its build list.
    sdk_dir = module_dir(wrapper, SDK_MODULE)
    sdk = json.loads(run(["go", "list", "-m", "-json", SDK_MODULE], wrapper, "go list sdk/v3"))["Version"]
    ldflags = f"-X {CLI_VERSION_VAR}={sdk}"

    def copy_exec(out: Path) -> None:
        source = sdk_dir / "python" / "cmd" / "pulumi-language-python-exec"
        if not source.is_file():
            raise BuildError(f"{SDK_MODULE}@{sdk} has no python/cmd/pulumi-language-python-exec")
        shutil.copyfile(source, out)

    return [
        Artifact(
            "pulumi-language-python",
            f"{PYTHON_HOST_MODULE}@{host} {ldflags}",
            lambda out: go_build(wrapper, PYTHON_HOST_MODULE, out, ldflags),
        ),
        Artifact("pulumi-language-python-exec", f"{SDK_MODULE}@{sdk} python/cmd", copy_exec),
    ]


def python_host_available() -> bool:
    return requirement(go_mod(HERE / "python"), PYTHON_HOST_MODULE) is not None


# --------------------------------------------------------------------------- driver


def step(label: str, action: Callable[[], object]) -> None:
    print(f"[build] {label} ...", flush=True)
    start = time.monotonic()
    action()
    print(f"[build] {label}: done in {time.monotonic() - start:.1f}s", flush=True)


def ensure_binaries() -> dict[str, Path]:
    """Build whatever is missing; return {artifact name: path} of everything installed.

    Raises BuildError (one-line message) on failure.
    """
    if shutil.which("go") is None:
        raise BuildError("the Go toolchain ('go') is not on PATH")
    artifacts = [cli_artifact(), yaml_artifact(), kubernetes_artifact(), *python_artifacts()]
    result: dict[str, Path] = {}
    for artifact in artifacts:
        if artifact.up_to_date():
            print(f"[build] {artifact.name}: up to date ({artifact.path})", flush=True)
        else:
            step(f"{artifact.name} <- {artifact.stamp}", artifact.ensure)
        result[artifact.name] = artifact.path
    if not python_host_available():
        print(
            f"[build] pulumi-language-python: not built: {PYTHON_HOST_MODULE} is not served by the "
            "Go module proxy (see e2e/pulumi/BUILD-NOTES.md)",
            flush=True,
        )
    return result


def main() -> int:
    start = time.monotonic()
    try:
        built = ensure_binaries()
    except BuildError as err:
        print(f"[build] error: {err}", file=sys.stderr, flush=True)
        return 1
    except KeyboardInterrupt:
        print("[build] interrupted", file=sys.stderr, flush=True)
        return 130
    print(f"[build] all done in {time.monotonic() - start:.1f}s; bin dir: {bin_dir()}", flush=True)
    for name, path in built.items():
        print(f"[build]   {name}: {path}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
