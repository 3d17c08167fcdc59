"""The real Pulumi engine, offline: CLI + Kubernetes provider + language host + Python policy pack.

    venv/bin/python -m pytest e2e/pulumi -q        # from the repository root

The binaries come from build.py (built on first use, then cached). Each test gets a private
PULUMI_HOME and file backend (engine.py). The Kubernetes provider is pointed at a kubeconfig
for a closed 127.0.0.1 port, so nothing leaves the machine.

pulumi v3.274 runs Python programs and Python policy packs only through the Python language host,
which build.py builds from the vendored archive (BUILD-NOTES.md). The repository's own program and pack
through this engine: e2e/cli.
"""

from __future__ import annotations

import _thread
import importlib.util
import json
import os
import re
import socket
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
VENV = REPO / "venv"


def _load(name: str, path: Path) -> ModuleType:
    # e2e/pulumi is no package (a package named `pulumi` would shadow the SDK), so load by path.
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


build = _load("nebius_dra_e2e_pulumi_build", HERE / "build.py")
engine_mod = _load("nebius_dra_e2e_pulumi_engine", HERE / "engine.py")

GREETING = "hello-from-e2e"
SECRET = "s3cr3t-e2e-value"
POLICY_RULE = "e2e-always-deny"
STACK = "e2e"
# Generous: the first run of a provider plugin or of Python with the SDK is slow on 2 cores.
TIMEOUT_S = 300.0


@pytest.fixture(scope="session")
def binaries() -> dict[str, Path]:
    try:
        return build.ensure_binaries()
    except build.BuildError as err:
        pytest.fail(f"building the Pulumi engine failed: {err}", pytrace=False)


@pytest.fixture()
def engine(binaries: dict[str, Path], tmp_path: Path):
    with engine_mod.OfflineEngine(binaries["pulumi"].parent, root=tmp_path / "engine") as eng:
        yield eng


@pytest.fixture()
def kubeconfig(tmp_path: Path) -> str:
    """A kubeconfig for a 127.0.0.1 port that nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # The port is closed again here: connections to it are refused.
    return textwrap.dedent(f"""\
        apiVersion: v1
        kind: Config
        clusters:
        - name: unreachable
          cluster:
            server: https://127.0.0.1:{port}
            insecure-skip-tls-verify: true
        contexts:
        - name: unreachable
          context: {{cluster: unreachable, user: nobody}}
        current-context: unreachable
        users:
        - name: nobody
          user: {{token: not-a-real-token}}
        """)


def _ok(result: tuple[int, str, str], what: str) -> str:
    code, out, err = result
    assert code == 0, f"`pulumi {what}` exited {code}\n--- stdout\n{out}\n--- stderr\n{err}"
    return out + err


# --------------------------------------------------------------------------- programs


def python_program(project: Path, kubeconfig: str, with_configmap: bool) -> None:
    project.mkdir(parents=True, exist_ok=True)
    (project / "Pulumi.yaml").write_text(
        json.dumps(
            {
                "name": "e2e-engine",
                "runtime": {"name": "python", "options": {"toolchain": "pip", "virtualenv": str(VENV)}},
            },
            indent=2,
        )
    )
    configmap = (
        textwrap.dedent("""\
        k8s.core.v1.ConfigMap(
            "cm",
            metadata={"name": "e2e-greeting"},
            data={"greeting": config.require("greeting")},
            opts=pulumi.ResourceOptions(provider=provider),
        )
        """)
        if with_configmap
        else ""
    )
    (project / "__main__.py").write_text(
        textwrap.dedent(f"""\
        import pulumi
        import pulumi_kubernetes as k8s

        config = pulumi.Config()
        provider = k8s.Provider("k8s", kubeconfig={kubeconfig!r})
        pulumi.export("greeting", config.require("greeting"))
        pulumi.export("token", config.require_secret("token"))
        pulumi.export("providerUrn", provider.urn)
        """)
        + configmap
    )


def policy_pack(pack: Path) -> None:
    """A pulumi-policy pack with one mandatory rule that always fails."""
    pack.mkdir(parents=True)
    (pack / "PulumiPolicy.yaml").write_text(
        textwrap.dedent(f"""\
        description: e2e pack whose only rule always fails
        runtime:
          name: python
          options:
            virtualenv: {VENV}
        version: 0.0.1
        """)
    )
    (pack / "__main__.py").write_text(
        textwrap.dedent(f"""\
        from pulumi_policy import EnforcementLevel, PolicyPack, StackValidationPolicy


        def always_deny(args, report_violation):
            report_violation("the e2e rule denies every stack ({{}} resources)".format(len(args.resources)))


        PolicyPack(
            name="e2e-deny",
            enforcement_level=EnforcementLevel.MANDATORY,
            policies=[
                StackValidationPolicy(
                    name="{POLICY_RULE}",
                    description="Always fails, to prove the CLI enforces mandatory Python policies.",
                    validate=always_deny,
                ),
            ],
        )
        """)
    )


# --------------------------------------------------------------------------- the lifecycle


def lifecycle(engine, project: Path, write_program: Callable[[bool], None], kubernetes_plugin: Path) -> None:
    write_program(True)
    _ok(engine.run(["stack", "init", STACK], project), "stack init")
    _ok(engine.run(["config", "set", "greeting", GREETING], project), "config set")
    _ok(engine.run(["config", "set", "--secret", "token", SECRET], project), "config set --secret")
    stack_file = (project / f"Pulumi.{STACK}.yaml").read_text()
    assert SECRET not in stack_file and "secure:" in stack_file, stack_file

    # With the ConfigMap: the provider plans it from its schema although the cluster is unreachable.
    out = _ok(engine.run(["preview"], project, timeout=TIMEOUT_S), "preview")
    assert re.search(r"\+\s+kubernetes:core/v1:ConfigMap\s+cm\s+create", out), out
    assert "+ 3 to create" in out, out
    # The engine names the provider binary it took from $PATH: the one build.py built ...
    assert f"using pulumi-resource-kubernetes from $PATH at {kubernetes_plugin}" in out, out
    # ... and its engine log shows where it found it and the version that binary reports (build.py's ldflags).
    _code, _out, log = engine.run(["preview", "--logtostderr", "-v=7"], project, timeout=TIMEOUT_S)
    found = r"GetPluginPath\(resource, kubernetes, [^,]*, [^)]*\): found on \$PATH " + re.escape(str(kubernetes_plugin))
    assert re.search(found, log), log[-3000:]
    version = build.kubernetes_provider_version()
    assert re.search(r"Provider\[\w+\]\.GetPluginInfo\(\) success \(#version=" + re.escape(version) + r"\)", log), log[
        -3000:
    ]

    # Creating the ConfigMap needs a cluster, so the rest of the lifecycle runs without it.
    write_program(False)
    out = _ok(engine.run(["preview"], project, timeout=TIMEOUT_S), "preview")
    assert re.search(r"\+\s+pulumi:providers:kubernetes\s+k8s\s+create", out) and "+ 2 to create" in out, out
    assert "[secret]" in out and SECRET not in out, out

    out = _ok(engine.run(["up", "--yes"], project, timeout=TIMEOUT_S), "up --yes")
    assert "+ 2 created" in out, out
    out = _ok(engine.run(["preview", "--expect-no-changes"], project, timeout=TIMEOUT_S), "preview --expect-no-changes")
    assert "2 unchanged" in out, out

    shown = json.loads(
        _ok(engine.run(["stack", "output", "--json", "--show-secrets"], project), "stack output --show-secrets")
    )
    assert shown == {
        "greeting": GREETING,
        "token": SECRET,
        "providerUrn": f"urn:pulumi:{STACK}::e2e-engine::pulumi:providers:kubernetes::k8s",
    }, shown
    hidden = json.loads(_ok(engine.run(["stack", "output", "--json"], project), "stack output"))
    assert hidden["token"] == "[secret]", hidden
    state = _ok(engine.run(["stack", "export"], project), "stack export")
    assert SECRET not in state, "the secret is stored in plain text in the state"

    out = _ok(engine.run(["destroy", "--yes"], project, timeout=TIMEOUT_S), "destroy --yes")
    assert "- 2 deleted" in out, out


# --------------------------------------------------------------------------- tests


def test_cli_is_the_pinned_build(engine, binaries: dict[str, Path], tmp_path: Path) -> None:
    out = _ok(engine.run(["version"], tmp_path), "version")
    cli_version = build.requirement(build.go_mod(HERE / "cli"), build.PKG_MODULE)
    assert out.strip() == cli_version


def modules_in(binary: Path) -> dict[str, str]:
    """{module path: version} of every module a Go binary was built from (`go version -m`: its `mod` and `dep` lines)."""
    out = build.run(["go", "version", "-m", str(binary)], binary.parent, f"go version -m {binary.name}")
    return {
        fields[1]: fields[2]
        for fields in (line.split() for line in out.splitlines())
        if fields[:1] in (["mod"], ["dep"])
    }


def test_the_cli_and_the_python_host_are_one_build_list(binaries: dict[str, Path]) -> None:
    """Built in one go build, the host shares the CLI's pkg/v3 compile: every module both contain is at one
    version, pkg/v3 and sdk/v3 at the CLI's pins (BUILD-NOTES.md, "Two build lists, not five")."""
    cli, host = modules_in(binaries["pulumi"]), modules_in(binaries["pulumi-language-python"])
    assert {path: host[path] for path in cli.keys() & host.keys() if cli[path] != host[path]} == {}
    assert {path: host.get(path) for path in build.cli_pins()} == build.cli_pins()


def test_python_program_lifecycle(engine, binaries: dict[str, Path], kubeconfig: str, tmp_path: Path) -> None:
    project = tmp_path / "project"
    lifecycle(
        engine, project, lambda cm: python_program(project, kubeconfig, cm), binaries["pulumi-resource-kubernetes"]
    )


def test_python_policy_pack_fails_preview(engine, binaries: dict[str, Path], kubeconfig: str, tmp_path: Path) -> None:
    # pulumi v3.274 runs a Python policy pack only through pulumi-language-python (RunPlugin); the
    # old fallback to the pulumi-analyzer-policy-python shim is gone from the engine.
    assert "pulumi-language-python" in binaries
    project, pack = tmp_path / "project", tmp_path / "pack"
    python_program(project, kubeconfig, with_configmap=False)
    policy_pack(pack)
    _ok(engine.run(["stack", "init", STACK], project), "stack init")
    _ok(engine.run(["config", "set", "greeting", GREETING], project), "config set")
    _ok(engine.run(["config", "set", "--secret", "token", SECRET], project), "config set --secret")
    code, out, err = engine.run(["preview", "--policy-pack", str(pack)], project, timeout=TIMEOUT_S)
    assert code != 0, f"preview with a failing mandatory policy exited 0\n{out}\n{err}"
    assert POLICY_RULE in out + err and "mandatory" in out + err, out + err


def _processes_of(pulumi_home: Path) -> dict[int, str]:
    """{pid: executable name} of every live process whose environment holds this PULUMI_HOME (the CLI hands its
    environment to the language host and the plugins)."""
    mark = f"PULUMI_HOME={pulumi_home}".encode()
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if mark in (entry / "environ").read_bytes().split(b"\0"):
                    found[int(entry.name)] = Path(os.readlink(entry / "exe")).name
            except OSError:
                continue  # gone meanwhile, or another user's
    return found


def test_an_interrupted_cli_takes_its_language_host_and_plugins_with_it(
    engine, binaries: dict[str, Path], kubeconfig: str, tmp_path: Path
) -> None:
    """Hostile review: Ctrl-C in `make bench-cli` during `pulumi up` killed the CLI alone; its language host and the
    Kubernetes provider stayed alive under init. The program waits, once its provider is registered (so the provider
    plugin runs), until the test interrupts `run_pulumi` as Ctrl-C would; then nothing of that CLI may be left."""
    project, started = tmp_path / "project", tmp_path / "started"
    python_program(project, kubeconfig, with_configmap=False)
    with (project / "__main__.py").open("a") as program:
        program.write(
            textwrap.dedent(f"""\
            import pathlib, time

            def _wait(urn):
                pathlib.Path({str(started)!r}).write_text(urn)
                time.sleep(TIMEOUT)

            provider.urn.apply(_wait)
            """).replace("TIMEOUT", repr(TIMEOUT_S))
        )
    _ok(engine.run(["stack", "init", STACK], project), "stack init")
    _ok(engine.run(["config", "set", "greeting", GREETING], project), "config set")
    _ok(engine.run(["config", "set", "--secret", "token", SECRET], project), "config set --secret")
    home = Path(engine.env["PULUMI_HOME"])
    seen: dict[int, str] = {}

    def interrupt_once_running() -> None:
        deadline = time.monotonic() + TIMEOUT_S
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        seen.update(_processes_of(home))
        _thread.interrupt_main()

    watcher = threading.Thread(target=interrupt_once_running, daemon=True)
    watcher.start()
    with pytest.raises(KeyboardInterrupt):
        engine.run(["preview"], project, timeout=2 * TIMEOUT_S)
    watcher.join()
    assert started.exists(), "the program never got its provider registered"
    assert {"pulumi", "pulumi-language-python", "pulumi-resource-kubernetes"} <= set(seen.values()), seen
    deadline = time.monotonic() + 30
    while _processes_of(home) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _processes_of(home) == {}, f"left running after the interrupt: {_processes_of(home)} (of {seen})"
