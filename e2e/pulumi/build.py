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
    names: tuple[str, ...]  # the files in bin/ that one build makes
    stamp: str  # what they are built from; a change rebuilds them
    build: Callable[[Path], None]  # writes every one of `names` into the given temporary directory

    def path(self, name: str) -> Path:
        return bin_dir() / name

    def stamp_path(self, name: str) -> Path:
        return bin_dir() / f".{name}.stamp"

    def up_to_date(self) -> bool:
        return all(
            self.path(name).is_file()
            and os.access(self.path(name), os.X_OK)
            and self.stamp_path(name).is_file()
            and self.stamp_path(name).read_text() == self.stamp
            for name in self.names
        )

    def ensure(self) -> bool:
        """Build if missing; True if it was built."""
        if self.up_to_date():
            return False
        bin_dir().mkdir(parents=True, exist_ok=True)
        tmp = bin_dir() / f".build.tmp-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        try:
            self.build(tmp)
            for name in self.names:
                built = tmp / name
                if not built.is_file():
                    raise BuildError(f"the build of {', '.join(self.names)} made no {name}")
                built.chmod(built.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
                os.replace(built, self.path(name))
                stamp_tmp = self.stamp_path(name).with_suffix(f".tmp-{os.getpid()}")
                stamp_tmp.write_text(self.stamp)
                os.replace(stamp_tmp, self.stamp_path(name))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return True


# Every `go build` here compiles with the same flags, so a package that two binaries import at the same
# version is compiled once and taken from the build cache the second time (-trimpath is part of a compiled package's
# cache key: one build without it compiles everything, the standard library included, again). -s -w leave
# the symbol table and DWARF out of the binaries, which nothing here reads, and save the linker that work.
BUILD_FLAGS = ("-trimpath",)
LINK_FLAGS = "-s -w"


def go_build(module: Path, packages: list[str], out: Path, ldflags: str) -> None:
    """One `go build` of `packages` (main packages of `module`'s build list) into the directory `out`: one
    invocation loads the packages once and schedules all their compiles together."""
    cmd = ["go", "build", *BUILD_FLAGS, "-ldflags", f"{LINK_FLAGS} {ldflags}", "-o", f"{out}{os.sep}", *packages]
    run(cmd, module, f"go build {' '.join(packages)}")


def cli_pins() -> dict[str, str]:
    """pkg/v3 and sdk/v3 as cli/go.mod requires them: the Pulumi version the CLI and the Python host build with."""
    wrapper = HERE / "cli"
    mod = go_mod(wrapper)
    pins = {path: requirement(mod, path) for path in (PKG_MODULE, SDK_MODULE)}
    missing = [path for path, version in pins.items() if not version]
    if missing:
        raise BuildError(f"{wrapper}/go.mod does not require {', '.join(missing)}")
    return {path: version for path, version in pins.items() if version}


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
        # Built with the provider's flags: it imports 1386 of the 1417 packages it needs from the provider's
        # own build list (go list -deps), which the provider's build below then takes from the build cache.
        step(
            "  go build pulumi-gen-kubernetes",
            lambda: run(
                ["go", "build", *BUILD_FLAGS, "-o", str(generator), "./cmd/pulumi-gen-kubernetes"],
                provider,
                "go build generator",
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
        # Upstream Makefile (k8sprovider): `VERSION=<v> go generate cmd/pulumi-resource-kubernetes/main.go`, whose
        # one directive, `go run ./generate.go` in that directory, embeds schema.json and the mappings into the
        # binary; run here as that directive with the builds' flags, so what it compiles is compiled once.
        step(
            "  go run ./generate.go (embed the schema)",
            lambda: run(
                ["go", "run", *BUILD_FLAGS, "./generate.go"],
                provider / "cmd" / "pulumi-resource-kubernetes",
                "go run ./generate.go",
                env=env,
            ),
        )
        step(
            f"  go build {K8S_PACKAGE}", lambda: go_build(provider, ["./cmd/pulumi-resource-kubernetes"], out, ldflags)
        )

    stamp = f"{K8S_PROVIDER_ARCHIVE} sha256:{digest} {' '.join(f'{p}@{v}' for p, v in sorted(pins.items()))} {ldflags}"
    return Artifact(("pulumi-resource-kubernetes",), f"{stamp} {LINK_FLAGS}", build)


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


def engine_artifacts() -> list[Artifact | Released]:
    """The CLI and the Python language host (with the exec script it starts, which sits beside it).

    The host is built in the same build list as the CLI: a module made from cli/go.mod that also requires
    the host's module, replaced by its unpacked archive, so both binaries come from one `go build` and the
    host's 884 packages (872 of them the CLI's too, go list -deps) are compiled once, at the CLI's pkg/v3."""
    wrapper = HERE / "cli"
    pins = cli_pins()
    ldflags = f"-X {CLI_VERSION_VAR}={pins[SDK_MODULE]}"
    cli_stamp = f"{CLI_PACKAGE}@{pins[PKG_MODULE]} {LINK_FLAGS} {ldflags}"
    archive = vendor_dir() / PYTHON_HOST_ARCHIVE
    if not archive.is_file():
        host = _from_path("pulumi-language-python", archive)
        exec_script = host.with_name("pulumi-language-python-exec")
        if not exec_script.is_file():
            raise BuildError(f"{host} has no pulumi-language-python-exec beside it")
        return [
            Artifact(("pulumi",), cli_stamp, lambda out: go_build(wrapper, [CLI_PACKAGE], out, ldflags)),
            Released("pulumi-language-python", host),
            Released("pulumi-language-python-exec", exec_script),
        ]
    archive_stamp = f"{PYTHON_HOST_ARCHIVE} sha256:{sha256(archive)}"
    work = work_dir() / "python-host"
    host_dir = work / "sdk" / "python" / "cmd" / "pulumi-language-python"
    engine = work_dir() / "engine"

    def build(out: Path) -> None:
        step(f"  unpack {archive.name}", lambda: unpack(archive, work))
        # Upstream's go.mod points pkg/v3 and sdk/v3 at the monorepo; the engine module's own requirement
        # (the CLI's) decides their version, and the host's must name versions the proxy serves.
        step(
            "  point the host's go.mod at the CLI's pkg/v3 and sdk/v3",
            lambda: run(
                [
                    "go",
                    "mod",
                    "edit",
                    *(f"-dropreplace={p}" for p in pins),
                    *(f"-require={p}@{v}" for p, v in pins.items()),
                ],
                host_dir,
                "go mod edit (python host)",
            ),
        )
        step(
            "  the engine module: cli/go.mod and the host's module, go mod tidy",
            lambda: engine_module(engine, host_dir),
        )
        step(
            f"  go build {CLI_PACKAGE} {PYTHON_HOST_MODULE}",
            lambda: go_build(engine, [CLI_PACKAGE, PYTHON_HOST_MODULE], out, ldflags),
        )

    def copy_exec(out: Path) -> None:
        with tarfile.open(archive) as tar:
            member = tar.extractfile(PYTHON_EXEC_MEMBER)
            if member is None:
                raise BuildError(f"{archive} has no {PYTHON_EXEC_MEMBER}")
            (out / "pulumi-language-python-exec").write_bytes(member.read())

    return [
        Artifact(("pulumi", "pulumi-language-python"), f"{cli_stamp} {archive_stamp}", build),
        Artifact(("pulumi-language-python-exec",), archive_stamp, copy_exec),
    ]


# The version of a module that a go.mod requires and replaces by a directory (what `go mod edit` writes).
LOCAL_VERSION = "v3.0.0-00010101000000-000000000000"


def engine_module(engine: Path, host_dir: Path) -> None:
    """A fresh module in `engine`: cli/go.mod and go.sum (the CLI's build list, its replace included), plus the
    Python host's module as a tool, replaced by `host_dir`; tidied, which adds what the host needs beyond."""
    if engine.exists():
        shutil.rmtree(engine)
    engine.mkdir(parents=True)
    for name in ("go.mod", "go.sum"):
        shutil.copyfile(HERE / "cli" / name, engine / name)
    edits = [
        "-module=nebius-dra-e2e/pulumi-engine",
        f"-require={PYTHON_HOST_MODULE}@{LOCAL_VERSION}",
        f"-replace={PYTHON_HOST_MODULE}={host_dir}",
        f"-tool={PYTHON_HOST_MODULE}",
    ]
    run(["go", "mod", "edit", *edits], engine, "go mod edit (engine module)")
    run(["go", "mod", "tidy"], engine, "go mod tidy (engine module)")


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
    result: dict[str, Path] = {}
    for artifact in [*engine_artifacts(), kubernetes_artifact()]:
        if isinstance(artifact, Released):
            print(f"[build] {artifact.name}: released binary on PATH ({artifact.path})", flush=True)
            result[artifact.name] = artifact.path
            continue
        names = ", ".join(artifact.names)
        if artifact.up_to_date():
            print(f"[build] {names}: up to date ({bin_dir()})", flush=True)
        else:
            step(f"{names} <- {artifact.stamp}", artifact.ensure)
        result.update({name: artifact.path(name) for name in artifact.names})
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
