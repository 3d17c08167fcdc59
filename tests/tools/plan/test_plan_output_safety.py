"""Hostile input to `python -m tools.plan`: links in its output directory, names added to its marker and stack
names that are paths.

The plan writes and deletes files under `<out>/<stack>/`. It must never do so through a symbolic
link (a link there could point at anything the user can write), never delete a file because its
marker names it (anyone who can write the marker could name any file), and `--stack` must be a Pulumi
stack name before it is used as a file name or a folder. Each refusal exits with status 2 and a
message on stderr, never a traceback, and leaves every file as it was.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
from pathlib import Path

import pytest

from components.shown import shown
from tools.plan import __main__ as plan
from tools.plan.files import MARKER, MARKER_TEXT, SymlinkRefusedError, plan_files, write_plan_files
from tools.plan.mock_engine import RegisteredResource
from tools.plan.stack_source import check_stack_name

VICTIM_TEXT = "precious, outside the plan directory\n"
FIFO_DEADLINE_S = 30


def _tree(directory: Path) -> dict[str, str]:
    """Every entry below `directory`, links not followed: files with their text, links with their target."""
    entries = {}
    for path in sorted(directory.rglob("*")):
        relative = str(path.relative_to(directory))
        if path.is_symlink():
            entries[relative] = f"-> {os.readlink(path)}"
        elif path.is_file():
            entries[relative] = path.read_text()
        else:
            entries[relative] = "/"
    return entries


def _refused(capsys, argv: list[str]) -> str:
    assert plan.main(argv) == plan.EXIT_PROGRAM
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and captured.out == ""
    return captured.err


@pytest.fixture
def planned(tmp_path, program_runs, capsys) -> Path:
    """`<tmp>/out/dev`, written by one plan run."""
    out = tmp_path / "out"
    assert plan.main(["--stack", "dev", "--out", str(out)]) == plan.EXIT_OK
    capsys.readouterr()
    return out / "dev"


# Links


@pytest.mark.parametrize("plan_made", [False, True], ids=["empty-target", "plan-made-target"])
def test_a_symlinked_stack_directory_is_refused(tmp_path, program_runs, capsys, plan_made):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    if plan_made:  # looks like the plan's own folder: the old code cleaned it, deleting through the link
        (elsewhere / MARKER).write_text("")
        (elsewhere / "victim.yaml").write_text(VICTIM_TEXT)
    out = tmp_path / "out"
    out.mkdir()
    (out / "dev").symlink_to(elsewhere, target_is_directory=True)
    before = _tree(elsewhere)
    err = _refused(capsys, ["--stack", "dev", "--out", str(out)])
    assert f"{out / 'dev'} is a symbolic link" in err
    assert _tree(elsewhere) == before
    assert (out / "dev").is_symlink()


def test_a_symlinked_file_inside_is_refused_and_its_target_kept(tmp_path, planned, capsys):
    victim = tmp_path / "victim.txt"
    victim.write_text(VICTIM_TEXT)
    [values] = sorted((planned / "helm").rglob("*.values.yaml"))[:1]
    values.unlink()
    values.symlink_to(victim)
    before = _tree(planned)
    err = _refused(capsys, ["--stack", "dev", "--out", str(planned.parent)])
    assert f"{values} is a symbolic link" in err
    assert victim.read_text() == VICTIM_TEXT
    assert _tree(planned) == before


def test_a_symlinked_folder_inside_is_refused_and_nothing_written_through_it(tmp_path, planned, capsys):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "victim.yaml").write_text(VICTIM_TEXT)
    shutil.rmtree(planned / "kubernetes")
    (planned / "kubernetes").symlink_to(elsewhere, target_is_directory=True)
    err = _refused(capsys, ["--stack", "dev", "--out", str(planned.parent)])
    assert f"{planned / 'kubernetes'} is a symbolic link" in err
    assert _tree(elsewhere) == {"victim.yaml": VICTIM_TEXT}


def test_a_stale_symlink_inside_is_refused_not_cleaned(tmp_path, planned, capsys):
    victim = tmp_path / "victim.txt"
    victim.write_text(VICTIM_TEXT)
    (planned / "kubernetes" / "gone.yaml").symlink_to(victim)
    err = _refused(capsys, ["--stack", "dev", "--out", str(planned.parent)])
    assert "gone.yaml is a symbolic link" in err
    assert (planned / "kubernetes" / "gone.yaml").is_symlink() and victim.read_text() == VICTIM_TEXT


def test_a_symlinked_marker_is_refused(tmp_path, planned, capsys):
    victim = tmp_path / "victim.txt"
    victim.write_text(VICTIM_TEXT)
    (planned / MARKER).unlink()
    (planned / MARKER).symlink_to(victim)
    err = _refused(capsys, ["--stack", "dev", "--out", str(planned.parent)])
    assert f"{planned / MARKER} is a symbolic link" in err
    assert victim.read_text() == VICTIM_TEXT


def test_a_fifo_inside_is_refused_instead_of_blocking_the_plan(planned, capsys):
    [values] = sorted((planned / "helm").rglob("*.values.yaml"))[:1]
    values.unlink()
    os.mkfifo(values)

    def blocked(signum, frame):
        raise TimeoutError("the plan blocked opening a FIFO in its output directory")

    previous = signal.signal(signal.SIGALRM, blocked)
    signal.alarm(FIFO_DEADLINE_S)
    try:
        err = _refused(capsys, ["--stack", "dev", "--out", str(planned.parent)])
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert f"{values} is neither a file nor a directory" in err


def test_an_out_directory_that_is_itself_a_link_is_the_users_choice(tmp_path, program_runs, capsys):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "out").symlink_to(real, target_is_directory=True)
    assert plan.main(["--stack", "dev", "--out", str(tmp_path / "out")]) == plan.EXIT_OK
    assert (real / "dev" / MARKER).is_file()


def test_a_hard_link_inside_is_replaced_not_written_through(tmp_path, planned, capsys):
    victim = tmp_path / "victim.txt"
    victim.write_text(VICTIM_TEXT)
    [values] = sorted((planned / "helm").rglob("*.values.yaml"))[:1]
    planned_text = values.read_text()
    values.unlink()
    os.link(victim, values)
    assert plan.main(["--stack", "dev", "--out", str(planned.parent)]) == plan.EXIT_OK
    assert victim.read_text() == VICTIM_TEXT
    assert values.read_text() == planned_text and not values.samefile(victim)


def test_write_plan_files_refuses_a_plan_path_that_climbs_out(tmp_path):
    with pytest.raises(OSError, match="every part must be a plain name"):
        write_plan_files({"kubernetes/../../escape.yaml": "x\n"}, tmp_path / "dev")
    assert not (tmp_path / "escape.yaml").exists()


def test_write_plan_files_refuses_a_link_swapped_in_for_the_directory(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "dev").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(SymlinkRefusedError):
        write_plan_files({"helm/a/b.values.yaml": "x\n"}, tmp_path / "dev")
    assert list(elsewhere.iterdir()) == []


def test_a_namespace_or_release_named_dots_stays_a_name_not_a_folder():
    config_map = "urn:pulumi:dev::nebius-dra::kubernetes:core/v1:ConfigMap::odd"
    release = "urn:pulumi:dev::nebius-dra::kubernetes:helm.sh/v3:Release::rel"
    resources = [
        RegisteredResource(config_map, "kubernetes:core/v1:ConfigMap", "odd", True, {}, "", [], {}, "", False),
        RegisteredResource(release, "kubernetes:helm.sh/v3:Release", "rel", True, {}, "", [], {}, "", False),
    ]
    inputs = {
        config_map: {"metadata": {"namespace": "..", "name": "."}},
        release: {"name": "..", "namespace": ".", "chart": "c"},
    }
    paths = plan_files(resources, inputs)
    assert sorted(paths) == ["helm/_/__.values.yaml", "kubernetes/__/configmap-_.yaml"]


# The marker


def _entry(relative: str, data: bytes) -> str:
    return f"{hashlib.sha256(data).hexdigest()}  {relative}\n"


def test_a_name_added_to_the_marker_does_not_delete_the_file(planned, capsys):
    """A file the plan did not write, named in its marker with any digest but the file's own, is kept and said."""
    notes = planned / "kubernetes" / "mine" / "notes.yaml"
    notes.parent.mkdir()
    notes.write_text("mine\n")
    with (planned / MARKER).open("a") as marker:
        marker.write(_entry("kubernetes/mine/notes.yaml", b"what the plan wrote\n"))
    assert plan.main(["--stack", "dev", "--out", str(planned.parent)]) == plan.EXIT_OK
    out = capsys.readouterr().out
    assert notes.read_text() == "mine\n"
    assert "0 stale removed, 1 stale kept, changed since the plan wrote them (delete by hand): " in out, out
    assert "kubernetes/mine/notes.yaml" in out
    # Listed again, so the next run says so again rather than refusing the directory or forgetting the file.
    assert _entry("kubernetes/mine/notes.yaml", b"what the plan wrote\n") in (planned / MARKER).read_text()
    assert plan.main(["--stack", "dev", "--out", str(planned.parent), "--format", "json"]) == plan.EXIT_OK
    files = json.loads(capsys.readouterr().out)["files"]
    assert files["kept"] == ["kubernetes/mine/notes.yaml"] and files["removed"] == []
    assert notes.read_text() == "mine\n"


def test_a_stale_file_edited_since_the_plan_wrote_it_is_kept(planned, capsys):
    """Of the files no longer planned, the one the user edited stays; the untouched ones go, as the counts say."""
    gone = planned / "kubernetes" / "gone"
    gone.mkdir()
    with (planned / MARKER).open("a") as marker:
        for name in ("edited", "untouched"):
            (gone / f"pod-{name}.yaml").write_text("kind: Pod\n")
            marker.write(_entry(f"kubernetes/gone/pod-{name}.yaml", b"kind: Pod\n"))
    (gone / "pod-edited.yaml").write_text("kind: Pod\n# my note\n")
    assert plan.main(["--stack", "dev", "--out", str(planned.parent)]) == plan.EXIT_OK
    out = capsys.readouterr().out
    assert "1 stale removed, 1 stale kept, changed since the plan wrote them (delete by hand): " in out, out
    assert (gone / "pod-edited.yaml").read_text() == "kind: Pod\n# my note\n"
    assert not (gone / "pod-untouched.yaml").exists()


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        (_entry("../../README.md", b""), "names no file of the plan's shapes"),
        (_entry("Pulumi.yaml", b""), "names no file of the plan's shapes"),
        (_entry("/etc/passwd", b""), "names no file of the plan's shapes"),
        (_entry("kubernetes/../../x.yaml", b""), "names no file of the plan's shapes"),
        (_entry("kubernetes/./x.yaml", b""), "names no file of the plan's shapes"),
        (_entry("kubernetes/a/b/c.yaml", b""), "names no file of the plan's shapes"),
        (_entry("helm/a/b.yaml", b""), "names no file of the plan's shapes"),
        (_entry("kubernetes/a/\x1b[2Jx.yaml", b""), "names no file of the plan's shapes"),
        ("kubernetes/_cluster/namespace-x.yaml\n", "is not '<sha256 in lowercase hex>  <file>'"),
        (_entry("kubernetes/a/b.yaml", b"").upper(), "is not '<sha256 in lowercase hex>  <file>'"),
        (_entry("kubernetes/a/b.yaml", b"") * 2, "names a file listed before"),
    ],
    ids=[
        "climbs",
        "project-file",
        "absolute",
        "climbs-inside",
        "dot",
        "deeper",
        "helm-shape",
        "escape",
        "no-digest",
        "upper",
        "twice",
    ],
)
def test_a_malformed_marker_is_trusted_for_nothing(planned, capsys, line, problem):
    victim = planned.parent.parent / "README.md"
    victim.write_text(VICTIM_TEXT)
    with (planned / MARKER).open("a") as marker:
        marker.write(line)
    before = _tree(planned.parent.parent)
    err = _refused(capsys, ["--stack", "dev", "--out", str(planned.parent)])
    assert f"{planned / MARKER}, line " in err and problem in err, err
    assert "the plan trusts none of its list and changed nothing" in err
    assert "\x1b" not in err
    assert _tree(planned.parent.parent) == before


def test_a_marker_cut_short_or_not_the_plans_is_trusted_for_nothing(planned, capsys):
    for text in (MARKER_TEXT + _entry("kubernetes/a/b.yaml", b"x").rstrip("\n"), "", "\xff\xfe junk\n"):
        (planned / MARKER).write_text(text)
        before = _tree(planned)
        err = _refused(capsys, ["--stack", "dev", "--out", str(planned.parent)])
        assert f"{planned / MARKER} does not" in err and "the plan trusts none of its list" in err, err
        assert _tree(planned) == before


# Stack names


@pytest.mark.parametrize(
    "stack", ["../x", "a/b", "../../etc", "/etc", ".", "..", "", "dev prod", "dev\n", "dév", "x" * 101]
)
def test_a_stack_name_that_is_not_a_pulumi_name_is_refused_before_any_use(tmp_path, program_runs, capsys, stack):
    out = tmp_path / "out"
    err = _refused(capsys, ["--stack", stack, "--out", str(out)])
    assert f"invalid stack name {shown(stack)}" in err
    assert "letters, digits, '-', '_' or '.'" in err and "not '.' or '..'" in err
    assert program_runs == [], "the program ran for a stack name that is not one"
    assert sorted(tmp_path.iterdir()) == [], "something was written for a refused stack name"


@pytest.mark.parametrize("stack", ["dev", "prod", "feature-x.eu_1", "-", "...", "A" * 100])
def test_pulumi_stack_names_are_accepted(stack):
    assert check_stack_name(stack) == stack


def test_an_empty_out_is_refused_and_writes_nothing_where_the_plan_runs(tmp_path, monkeypatch, capsys):
    # Path("") is ".": the plan wrote dev/helm and dev/kubernetes into the folder it ran in (attack 37, F11f).
    monkeypatch.chdir(tmp_path)
    err = _refused(capsys, ["--stack-file", str(Path(plan.__file__).parents[2] / "Pulumi.dev.yaml"), "--out", ""])
    assert "--out: empty; give a folder for the plan's files, or 'none' to write none" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("output_format", ["json", "text"])
def test_a_reader_that_closed_the_pipe_is_no_traceback_and_no_blocked_status(output_format):
    """`make plan | head -c 100`: a reader gone before the plan is written raised BrokenPipeError out of main, a
    traceback and exit 1, the status of a BLOCKED plan."""
    import subprocess
    import sys

    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "tools.plan", "--no-base", "--out", "none", "--format", output_format],
            stdout=write,
            stderr=subprocess.PIPE,
            cwd=Path(__file__).resolve().parents[3],
            timeout=120,
            check=False,
        )
    finally:
        os.close(write)
    assert (done.returncode, done.stderr.decode()) == (0, "")
