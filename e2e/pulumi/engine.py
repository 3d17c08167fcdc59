"""Run the real Pulumi CLI offline, for the end-to-end tests.

    # e2e/pulumi is deliberately no package (it would shadow the `pulumi` SDK): load this file by
    # path (importlib.util.spec_from_file_location), as test_engine.py does.
    with OfflineEngine(bin_dir) as engine:
        code, out, err = engine.run(["stack", "init", "dev"], cwd=project_dir)

What an offline CLI run needs (checked against pulumi v3.274 and build.py's artifacts):

* a private PULUMI_HOME (plugin cache, credentials, workspace files) in a temp dir, and the
  DIY file backend (PULUMI_BACKEND_URL=file://<tmp>) so no Pulumi Cloud login is attempted;
* PULUMI_CONFIG_PASSPHRASE for the passphrase secrets provider of the file backend (a test
  value; PULUMI_CONFIG_PASSPHRASE_FILE must not also be set);
* PULUMI_SKIP_UPDATE_CHECK=true (no version check against the service),
  PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true (never download a plugin) and
  PULUMI_DISABLE_REGISTRY_RESOLVE=true (never ask the Pulumi registry about packages);
* the bin dir first on PATH: the CLI takes a plugin `pulumi-<kind>-<name>` found on PATH
  ("ambient" plugin) before its plugin cache, whatever version the program asks for, unless
  PULUMI_IGNORE_AMBIENT_PLUGINS is set, so that variable is removed. Language hosts
  (pulumi-language-python, -yaml) are also looked for next to the `pulumi` executable. Nothing has
  to be registered with `pulumi plugin install`.
* Python policy packs: pulumi v3.274 runs them only through the pulumi-language-python host
  (RunPlugin), whatever the program's language; the older fallback to a
  `pulumi-analyzer-policy-python` shim plugin is gone from the engine. The pack's PulumiPolicy.yaml
  `runtime.options.virtualenv` must name a venv with `pulumi` and `pulumi-policy` (the project's
  venv has both). build.py builds that host from the vendored archive (BUILD-NOTES.md).

Every other PULUMI_* variable of the calling environment is dropped, so a developer's login,
organisation or debug settings cannot leak into a test.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

TEST_PASSPHRASE = "e2e-test-passphrase-not-a-secret"
DEFAULT_TIMEOUT_S = 300.0


def offline_env(bin_dir: Path, root: Path, base: dict[str, str] | None = None) -> dict[str, str]:
    """Environment for an offline CLI run with private state under `root`."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if not k.startswith("PULUMI_")}
    home = root / "pulumi-home"
    state = root / "state"
    home.mkdir(parents=True, exist_ok=True)
    state.mkdir(parents=True, exist_ok=True)
    env.update(
        {
            "PULUMI_HOME": str(home),
            "PULUMI_BACKEND_URL": state.as_uri(),
            "PULUMI_CONFIG_PASSPHRASE": TEST_PASSPHRASE,
            "PULUMI_SKIP_UPDATE_CHECK": "true",
            "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
            "PULUMI_DISABLE_REGISTRY_RESOLVE": "true",
            "PATH": os.pathsep.join([str(bin_dir), env.get("PATH", os.defpath)]),
        }
    )
    return env


def run_pulumi(
    args: list[str], cwd: Path, env: dict[str, str], bin_dir: Path, timeout: float = DEFAULT_TIMEOUT_S
) -> tuple[int, str, str]:
    """Run `pulumi <args>`; returns (exit code, stdout, stderr). A timeout kills it and returns 124.

    The CLI runs in a session of its own, and a timeout or an interrupt (Ctrl-C, a test's failure) ends the whole
    session: killing `pulumi` alone left its language host and provider plugins running under init.
    """
    cmd = [str(bin_dir / "pulumi"), "--color=never", *args]
    with subprocess.Popen(
        cmd,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as proc:
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _end_session(proc)
            stdout, stderr = proc.communicate()
            return 124, stdout, stderr + f"\n[engine] timed out after {timeout:.0f}s"
        except BaseException:
            _end_session(proc)
            raise
    return proc.returncode, stdout, stderr


def _end_session(proc: subprocess.Popen[str]) -> None:
    """SIGKILL to every process of the CLI's session (its id is the CLI's pid: `start_new_session`).

    Not its process group: the CLI starts the language host and each plugin in a group of its own (seen with
    the Pulumi CLI v3.274.0, e2e/pulumi/test_engine.py), but they keep its session. Linux's /proc, as the e2e tier is.
    """
    for _ in range(10):  # a process may start another while the first are killed
        members = _session_members(proc.pid)
        if not members:
            break
        for pid in members:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    proc.wait()


def _session_members(session: int) -> list[int]:
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue  # gone meanwhile
            # pid (comm) state ppid pgrp session ...: comm may hold spaces and parentheses.
            fields = stat[stat.rindex(")") + 2 :].split()
            if int(fields[3]) == session and fields[0] != "Z":
                members.append(int(entry.name))
    return members


class OfflineEngine:
    """A private, throw-away Pulumi home + file backend around the built CLI."""

    def __init__(self, bin_dir: Path, root: Path | None = None):
        self.bin_dir = Path(bin_dir)
        if not (self.bin_dir / "pulumi").is_file():
            raise FileNotFoundError(f"no pulumi CLI in {self.bin_dir} (run python e2e/pulumi/build.py)")
        self._owned = root is None
        self.root = Path(tempfile.mkdtemp(prefix="pulumi-e2e-")) if root is None else Path(root)
        self.env = offline_env(self.bin_dir, self.root)

    def run(
        self, args: list[str], cwd: Path, timeout: float = DEFAULT_TIMEOUT_S, extra_env: dict[str, str] | None = None
    ) -> tuple[int, str, str]:
        env = {**self.env, **(extra_env or {})}
        return run_pulumi(args, cwd, env, self.bin_dir, timeout)

    def close(self) -> None:
        if self._owned:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> OfflineEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
