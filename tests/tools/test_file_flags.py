"""Every file flag of every tool refuses a directory, a FIFO or a device: one line naming the flag and the path,
exit status 2, no traceback, and no wait (opening a FIFO blocks until its other end is opened, so none is opened)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from components.config.stack_file import PROJECT_DIR
from components.shown import shown
from tools import stack_schema
from tools.cost import __main__ as cost_cli
from tools.plan import __main__ as plan_cli
from tools.verify import __main__ as verify_cli

Main = Callable[[Sequence[str]], int]

# (tool, its entry, the flag, what the flag wants, the other arguments). Verify's flags are refused before any
# cluster is asked, so no kubeconfig is needed.
FLAGS: list[tuple[str, Main, str, str, tuple[str, ...]]] = [
    ("plan", plan_cli.main, "--policy-config", "a regular file", ("--stack", "dev", "--out", "none")),
    ("plan", plan_cli.main, "--baseline", "a regular file", ("--stack", "dev", "--out", "none")),
    ("plan", plan_cli.main, "--stack-file", "a regular file", ("--out", "none")),
    ("plan", plan_cli.main, "--out", "a directory", ("--stack", "dev")),
    ("cost", cost_cli.main, "--stack-file", "a regular file", ()),
    ("verify", verify_cli.main, "--json", "a regular file", ("--stack", "dev")),
    ("verify", verify_cli.main, "--burn-in-state", "a regular file", ("--stack", "dev")),
    ("verify", verify_cli.main, "--burn-in-floors", "a regular file", ("--stack", "dev")),
    ("verify", verify_cli.main, "--burn-in-floors", "a regular file", ("--stack", "dev", "--skip-smoke")),
    ("verify", verify_cli.main, "--kubeconfig", "a regular file", ("--stack", "dev", "--skip-smoke")),
    ("stack_schema", stack_schema.main, "--out", "a regular file", ()),
]


@pytest.fixture
def unusable(tmp_path: Path) -> dict[str, Path]:
    """One path of each kind no file flag takes, each named like a stack file (so `--stack-file` reaches the check)."""
    fifo, folder, regular = tmp_path / "Pulumi.fifo.yaml", tmp_path / "Pulumi.folder.yaml", tmp_path / "Pulumi.f.yaml"
    os.mkfifo(fifo)
    folder.mkdir()
    regular.write_text("config: {}\n")
    return {"a FIFO": fifo, "a directory": folder, "a device": Path("/dev/zero"), "a regular file": regular}


@pytest.mark.parametrize(
    ("tool", "main", "flag", "wants", "others"), FLAGS, ids=[f"{t[0]} {t[2]} {t[4]}" for t in FLAGS]
)
@pytest.mark.parametrize("kind", ["a FIFO", "a directory", "a device", "a regular file"])
def test_a_file_flag_refuses_what_is_not_a_file_of_its_kind(tool, main, flag, wants, others, kind, unusable, capsys):
    if kind == wants:
        pytest.skip("what the flag takes")
    path = unusable[kind]
    started = time.monotonic()
    status = main([*others, flag, str(path)])
    err = capsys.readouterr().err
    assert time.monotonic() - started < 30
    assert status == 2, err
    # --burn-in-floors is read by tools/verify/floors.py, whose messages name the file as its label, not quoted.
    said = f"cannot read {path}" if flag == "--burn-in-floors" else shown(str(path))
    assert f"{flag}" in err and f"{said}: it is {kind}, not {wants}" in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize(
    ("tool", "main", "flag", "wants", "others"),
    [entry for entry in FLAGS if entry[0] in ("plan", "cost") and entry[3] == "a regular file"],
    ids=[f"{t[0]} {t[2]} {t[4]}" for t in FLAGS if t[0] in ("plan", "cost") and t[3] == "a regular file"],
)
def test_a_file_flag_given_an_empty_path_is_refused_as_one(tool, main, flag, wants, others, capsys):
    """Hostile round: `--policy-config ""` was refused as `.: it is a directory` (`Path("")` is the current folder),
    naming neither the flag's empty value nor what it takes."""
    with pytest.raises(SystemExit) as refused:
        main([*others, flag, ""])
    err = capsys.readouterr().err
    assert refused.value.code == 2, err
    assert f'error: {flag}: an empty path (""); give the path of a file, or leave {flag} out' in err, err
    assert "Traceback" not in err and "it is a directory" not in err, err


@pytest.mark.parametrize(
    ("tool", "arguments", "flag"),
    [
        ("tools.plan", ["--stack", "dev", "--out", "none", "--base=--"], "--base"),
        ("tools.cost", ["--stack", "dev", "--base=--"], "--base"),
        ("tools.verify", ["--stack=--"], "--stack"),
        ("tools.new_stack", ["--name=--", "--parent-id", "project-e00x", "--subnet-id", "vpcsubnet-e00x"], "--name"),
    ],
)
def test_an_option_given_the_end_of_options_as_its_value_is_refused_naming_it(tool, arguments, flag):
    """Hostile round, 2026-12-02: argparse reads `--base=--` as the end of the options and left `--base` a list,
    which the plan and the cost tool crashed on (a traceback, exit 1)."""
    done = subprocess.run(
        [sys.executable, "-m", tool, *arguments], cwd=PROJECT_DIR, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert f"{flag}: got --, which ends the options; give the option a value" in done.stderr


# (tool, its entry, the output flag, a path under it that cannot be written, the other arguments).
OUTPUTS: list[tuple[str, Main, str, str, tuple[str, ...]]] = [
    ("plan", plan_cli.main, "--out", "/proc", ("--stack", "dev")),
    ("plan", plan_cli.main, "--out", "/proc/plan/dev", ("--stack", "dev")),
    ("stack_schema", stack_schema.main, "--out", "/proc/schema.json", ()),
    ("verify", verify_cli.main, "--json", "/proc/report.json", ("--stack", "dev")),
    ("verify", verify_cli.main, "--burn-in-state", "/proc/state.json", ("--stack", "dev")),
]


@pytest.mark.parametrize(("tool", "main", "flag", "path", "others"), OUTPUTS, ids=[f"{t[0]} {t[3]}" for t in OUTPUTS])
def test_an_output_that_cannot_be_written_is_refused_before_anything_is_built(tool, main, flag, path, others, capsys):
    """Hostile review: `make plan OUT=/proc` ended in a bare errno, naming neither --out nor the path. /proc takes no
    new file even for root, whom no permission bit stops."""
    status = main([*others, flag, path])
    out, err = capsys.readouterr()
    assert status == 2 and f"{flag} {shown(path)}: cannot be written: No such file or directory" in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and not out, err


def test_the_write_probe_leaves_nothing_behind(tmp_path: Path, capsys):
    report, out = tmp_path / "report.json", tmp_path / "plans" / "a"
    assert verify_cli.main(["--stack", "no-such-stack", "--json", str(report)]) == 2
    assert plan_cli.main(["--stack", "no-such-stack", "--out", str(out)]) == 2
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["new\nline", "escape\x1b[2J", "CANARY:hunter2@host"])
def test_a_path_is_quoted_as_every_message_quotes_what_was_given(tmp_path: Path, name: str, capsys):
    """Issue 37: the file flags' refusals printed the path raw, so a newline or a terminal escape in it reached the
    terminal as it was; they quote it through `shown`, as the project's other messages do."""
    os.mkfifo(tmp_path / name)
    missing = tmp_path / f"{name}.json"
    assert plan_cli.main(["--stack", "dev", "--out", "none", "--policy-config", str(tmp_path / name)]) == 2
    assert plan_cli.main(["--stack", "dev", "--out", "none", "--baseline", str(missing)]) == 2
    err = capsys.readouterr().err
    assert f"--policy-config {shown(str(tmp_path / name))}: it is a FIFO" in err, err
    assert f"--baseline {shown(str(missing))}: no such file" in err, err
    assert "\x1b" not in err and "hunter2" not in err and len(err.strip().splitlines()) == 2, err
