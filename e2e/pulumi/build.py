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

import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

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
KUBERNETES_MODULE = "k8s.io/kubernetes"
PYTHON_HOST_ARCHIVE = "pulumi-language-python-src.tar.gz"
PYTHON_EXEC_MEMBER = "sdk/python/cmd/pulumi-language-python-exec"
K8S_PROVIDER_ARCHIVE = "pulumi-kubernetes-provider-src.tar.gz"

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


def kubernetes_provider_version() -> str:
    """The version the built provider reports: the archive is a commit after a release, so it reports
    the release of the Go SDK (sdk/v4) that the wrapper requires in place of upstream's ../sdk."""
    wrapper = HERE / "kubernetes"
    release = requirement(go_mod(wrapper), K8S_SDK_MODULE)
    if not release:
        raise BuildError(f"{wrapper}/go.mod does not require {K8S_SDK_MODULE}")
    return release.lstrip("v")


# --------------------------------------------------------------------------- vendored sources


def vendor_dir() -> Path:
    """Where the upstream source archives are: NEBIUS_DRA_E2E_VENDOR, or ../shared/vendor beside the repository."""
    explicit = os.environ.get("NEBIUS_DRA_E2E_VENDOR")
    return Path(explicit).expanduser() if explicit else REPO.parent / "shared" / "vendor"


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def unpack(archive: Path, dest: Path) -> None:
    """A fresh copy of an archive's tree; the `data` filter refuses links and paths that leave `dest`."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")


def _from_path(name: str, archive: Path) -> Path:
    found = shutil.which(name)
    if found is None:
        raise BuildError(
            f"{archive} is missing and no {name} is on PATH: put the archive there (or point "
            f"NEBIUS_DRA_E2E_VENDOR at its directory), or put a released {name} on PATH"
        )
    return Path(found)


@dataclass
class Released:
    """A binary the user already has on PATH, used as it is instead of a build from an archive."""

    name: str
    path: Path

    def up_to_date(self) -> bool:
        return True

    def ensure(self) -> bool:
        return False


def go_mod_retarget(module: Path, drop_replaces: list[str], requires: dict[str, str], what: str) -> None:
    """Point a copied upstream go.mod at served releases instead of the monorepo, then tidy it."""
    edits = [f"-dropreplace={path}" for path in drop_replaces] + [f"-require={p}@{v}" for p, v in requires.items()]
    run(["go", "mod", "edit", *edits], module, f"go mod edit ({what})")
    run(["go", "mod", "tidy"], module, f"go mod tidy ({what})")


def kubernetes_artifact() -> Artifact | Released:
    archive = vendor_dir() / K8S_PROVIDER_ARCHIVE
    if not archive.is_file():
        return Released("pulumi-resource-kubernetes", _from_path("pulumi-resource-kubernetes", archive))
    wrapper = HERE / "kubernetes"
    pins = {req["Path"]: req["Version"] for req in go_mod(wrapper).get("Require") or []}
    version = kubernetes_provider_version()
    ldflags = f"-X {K8S_VERSION_VAR}={version}"
    digest = sha256(archive)

    def build(out: Path) -> None:
        work = work_dir() / "kubernetes-provider"
        step(f"  unpack {archive.name}", lambda: unpack(archive, work))
        provider = work / "provider"
        step(
            "  retarget provider/go.mod at served releases",
            lambda: go_mod_retarget(provider, [K8S_SDK_MODULE], pins, "provider"),
        )
        swagger = step_value("  OpenAPI specs from the served k8s.io/kubernetes modules", lambda: openapi_specs(work))
        generator = work / "bin" / "pulumi-gen-kubernetes"
        step(
            "  go build pulumi-gen-kubernetes",
            lambda: run(
                ["go", "build", "-o", str(generator), "./cmd/pulumi-gen-kubernetes"], provider, "go build generator"
            ),
        )
        # The generator reads a Terraform schema only to write the Terraform conversion mapping, which
        # the provider embeds but these tests never use: an empty one, as PROVENANCE.md measured.
        (provider / "cmd" / "pulumi-gen-kubernetes" / "terraform.json").write_text("{}\n")
        step(
            "  pulumi-gen-kubernetes schema (the provider's own generator)",
            lambda: run([str(generator), "--version", version, "schema", str(swagger), str(work)], work, "schema"),
        )
        env = go_env()
        env["VERSION"] = version
        # Upstream Makefile (k8sprovider): `VERSION=<v> go generate cmd/pulumi-resource-kubernetes/main.go`
        # embeds schema.json and the mappings into the binary.
        step(
            "  go generate (embed the schema)",
            lambda: run(
                ["go", "generate", "./cmd/pulumi-resource-kubernetes/main.go"], provider, "go generate", env=env
            ),
        )
        step(
            f"  go build {K8S_PACKAGE}",
            lambda: run(
                ["go", "build", "-trimpath", "-ldflags", ldflags, "-o", str(out), "./cmd/pulumi-resource-kubernetes"],
                provider,
                "go build provider",
            ),
        )

    stamp = f"{K8S_PROVIDER_ARCHIVE} sha256:{digest} {' '.join(f'{p}@{v}' for p, v in sorted(pins.items()))} {ldflags}"
    return Artifact("pulumi-resource-kubernetes", stamp, build)


def makefile_kube_version(source: Path) -> str:
    """The Kubernetes release whose OpenAPI spec upstream generates the schema from (its Makefile's KUBE_VERSION)."""
    match = re.search(r"^KUBE_VERSION\s*\?=\s*(v[0-9]+\.[0-9]+\.[0-9]+)\s*$", (source / "Makefile").read_text(), re.M)
    if match is None:
        raise BuildError(f"no `KUBE_VERSION ?= vX.Y.Z` line in {source / 'Makefile'}")
    return match.group(1)


def legacy_spec_minors(source: Path) -> list[str]:
    """The older minors whose specs pulumi-gen-kubernetes merges in, read from its own source (it would
    download them from GitHub; placed beside the current spec, they are read instead)."""
    main = (source / "provider" / "cmd" / "pulumi-gen-kubernetes" / "main.go").read_text()
    match = re.search(r'filenameFmt := "swagger-v1\.%s\.0\.json"\s*for _, v := range \[\]string\{([^}]*)\}', main)
    if match is None:
        raise BuildError("pulumi-gen-kubernetes/main.go no longer lists its legacy specs the way build.py reads them")
    return re.findall(r'"([0-9]+)"', match.group(1))


def openapi_specs(source: Path) -> Path:
    """The current spec, with the legacy ones beside it, from k8s.io/kubernetes modules (api/openapi-spec/swagger.json)."""
    specs = source / "openapi"
    specs.mkdir(exist_ok=True)
    current = makefile_kube_version(source)
    wanted = {f"swagger-{current}.json": current}
    wanted.update({f"swagger-v1.{minor}.0.json": f"v1.{minor}.0" for minor in legacy_spec_minors(source)})
    for name, release in wanted.items():
        module = module_dir(HERE / "kubernetes", f"{KUBERNETES_MODULE}@{release}")
        shutil.copyfile(module / "api" / "openapi-spec" / "swagger.json", specs / name)
    return specs / f"swagger-{current}.json"


def python_artifacts() -> list[Artifact | Released]:
    """The Python language host and the exec script it starts, which sits beside it."""
    archive = vendor_dir() / PYTHON_HOST_ARCHIVE
    if not archive.is_file():
        host = _from_path("pulumi-language-python", archive)
        exec_script = host.with_name("pulumi-language-python-exec")
        if not exec_script.is_file():
            raise BuildError(f"{host} has no pulumi-language-python-exec beside it")
        return [Released("pulumi-language-python", host), Released("pulumi-language-python-exec", exec_script)]
    wrapper = HERE / "python"
    pins = {req["Path"]: req["Version"] for req in go_mod(wrapper).get("Require") or []}
    if SDK_MODULE not in pins or PKG_MODULE not in pins:
        raise BuildError(f"{wrapper}/go.mod must require {PKG_MODULE} and {SDK_MODULE}")
    ldflags = f"-X {CLI_VERSION_VAR}={pins[SDK_MODULE]}"
    digest = sha256(archive)
    work = work_dir() / "python-host"
    host_dir = work / "sdk" / "python" / "cmd" / "pulumi-language-python"

    def build_host(out: Path) -> None:
        step(f"  unpack {archive.name}", lambda: unpack(archive, work))
        step(
            "  retarget the host's go.mod at served releases",
            lambda: go_mod_retarget(host_dir, [PKG_MODULE, SDK_MODULE], pins, "python host"),
        )
        step(f"  go build {PYTHON_HOST_MODULE}", lambda: go_build(host_dir, ".", out, ldflags))

    def copy_exec(out: Path) -> None:
        with tarfile.open(archive) as tar:
            member = tar.extractfile(PYTHON_EXEC_MEMBER)
            if member is None:
                raise BuildError(f"{archive} has no {PYTHON_EXEC_MEMBER}")
            out.write_bytes(member.read())

    stamp = f"{PYTHON_HOST_ARCHIVE} sha256:{digest} {' '.join(f'{p}@{v}' for p, v in sorted(pins.items()))}"
    return [
        Artifact("pulumi-language-python", f"{stamp} {ldflags}", build_host),
        Artifact("pulumi-language-python-exec", stamp, copy_exec),
    ]


# --------------------------------------------------------------------------- driver


def step_value(label: str, action: Callable[[], T]) -> T:
    print(f"[build] {label} ...", flush=True)
    start = time.monotonic()
    value = action()
    print(f"[build] {label}: done in {time.monotonic() - start:.1f}s", flush=True)
    return value


def step(label: str, action: Callable[[], object]) -> None:
    step_value(label, action)


def ensure_binaries() -> dict[str, Path]:
    """Build whatever is missing; return {artifact name: path} of everything installed.

    Raises BuildError (one-line message) on failure.
    """
    if shutil.which("go") is None:
        raise BuildError("the Go toolchain ('go') is not on PATH")
    artifacts = [cli_artifact(), yaml_artifact(), kubernetes_artifact(), *python_artifacts()]
    result: dict[str, Path] = {}
    for artifact in artifacts:
        if isinstance(artifact, Released):
            print(f"[build] {artifact.name}: released binary on PATH ({artifact.path})", flush=True)
        elif artifact.up_to_date():
            print(f"[build] {artifact.name}: up to date ({artifact.path})", flush=True)
        else:
            step(f"{artifact.name} <- {artifact.stamp}", artifact.ensure)
        result[artifact.name] = artifact.path
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
