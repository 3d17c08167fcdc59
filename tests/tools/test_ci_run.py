"""`.ci/run`'s stages: what it builds and runs, in which order, what it prints, and its verdict."""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import sys

import pytest

from tests.helpers import ROOT
from tools import ci_run

MINORS = ci_run.kube_minors()


def test_every_e2e_directory_with_tests_is_a_tier():
    directories = {path.parent.name for path in (ROOT / "e2e").glob("*/test_*.py")}
    assert {tier.name.removeprefix("e2e/") for tier in ci_run.tier_stages(MINORS)} == directories


def test_every_build_is_started_by_a_tier_and_every_tier_needs_only_builds_that_exist():
    builds = {build.name for build in ci_run.build_stages(MINORS)}
    needed = {need for tier in ci_run.tier_stages(MINORS) for need in tier.needs}
    assert needed == builds


def test_each_tier_needs_the_binaries_its_control_planes_and_engines_start():
    """What the tiers' fixtures start (e2e/*/conftest.py): a control plane of the oldest minor unless a scenario
    names another, the engine from e2e/pulumi/build.py, the controller from e2e/kueue/kueue_build.py."""
    tiers = {tier.name: set(tier.needs) for tier in ci_run.tier_stages(MINORS)}
    oldest = f"build kube {MINORS[0]}"
    assert tiers["e2e/dra"] == {f"build kube {minor}" for minor in MINORS}
    assert tiers["e2e/kueue"] == {oldest, "build kueue"}
    for tier, engine in (("e2e/cli", "engine_build.ensure_binaries"), ("e2e/pulumi", "build.ensure_binaries")):
        assert engine in "".join(path.read_text() for path in (ROOT / tier).glob("*.py"))
        assert tiers[tier] == {oldest, "build pulumi engine"}
    assert tiers["e2e/kube"] == {oldest}
    assert "ensure_helm" in (ROOT / "e2e" / "helm" / "conftest.py").read_text()
    assert tiers["e2e/helm"] == {"build helm"}


def test_builds_run_under_nice_and_tiers_through_make_e2e():
    for build in ci_run.build_stages(MINORS):
        assert build.command[:3] == ("nice", "-n", "19"), build
    for tier in ci_run.tier_stages(MINORS):
        assert tier.command == ("make", "e2e", f"E2E={tier.name}")
    makefile = (ROOT / "Makefile").read_text()
    e2e = r'^e2e:.*\n\t\$\(PY\) -m tools.ci_run --e2e="\$\$E2E"$'
    assert re.search(e2e, makefile, re.M), "make e2e: ci_run builds in the foreground first, then runs pytest"
    assert re.search(r"^E2E \?= e2e$", makefile, re.M)
    assert 'exec "${PYTHON:-python3.11}" -m tools.ci_run' in (ROOT / ".ci" / "run").read_text()


@pytest.mark.parametrize(
    ("paths", "builds"),
    [
        ("e2e", [*(f"build kube {minor}" for minor in MINORS), "build pulumi engine", "build kueue", "build helm"]),
        ("e2e/helm", ["build helm"]),
        ("e2e/kube", [f"build kube {MINORS[0]}"]),
        ("e2e/kube/test_control_plane.py::test_x -k x", [f"build kube {MINORS[0]}"]),
        ("e2e/kueue e2e/cli/", [f"build kube {MINORS[0]}", "build pulumi engine", "build kueue"]),
        ("e2e/yaml_v3", []),
        ("e2e/no-such-tier", []),
    ],
)
def test_make_e2e_builds_what_the_tiers_under_its_paths_start_in_build_order(paths, builds):
    assert [build.name for build in ci_run.builds_for(paths, MINORS)] == builds


@pytest.mark.parametrize(
    ("value", "arguments"),
    [
        ("e2e", ["e2e"]),
        ("e2e/cli -x", ["e2e/cli", "-x"]),
        (" e2e/kube  e2e/helm/ -k taint ", ["e2e/kube", "e2e/helm/", "-k", "taint"]),
        ("-x e2e/kube/test_control_plane.py::test_x", ["-x", "e2e/kube/test_control_plane.py::test_x"]),
    ],
)
def test_make_e2e_takes_paths_under_e2e_and_pytests_x_and_k(value, arguments):
    """Hostile review: E2E='e2e/cli -x', the form ci_run's own message suggests, reached pytest as one path."""
    assert ci_run.e2e_arguments(value) == arguments


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("-k x", "it names no path"),
        ("", "it names no path"),
        ("/etc", "'/etc' is not under this repository's e2e/"),
        ("e2e/../tools", "'e2e/../tools' is not under this repository's e2e/"),
        ("e2e/no-such-tier", "'e2e/no-such-tier': no such file or directory"),
        ("e2e/kube -k", "-k needs one word after it"),
        # The a38 hostile round: each of these passed, the builds ran, and only then did pytest refuse it.
        ("e2e -k not", "-k needs one word after it"),
        ("e2e -k e2e/cli", "-k needs one word after it"),
        ("e2e/yaml_v3/README.md", "'e2e/yaml_v3/README.md' is no test module (test_*.py)"),
        ("e2e/cli/conftest.py", "'e2e/cli/conftest.py' is no test module (test_*.py)"),
        ("e2e::x", "'e2e::x': '::' names a test inside a test module, not a directory"),
        ("e2e/" + "x" * 300, f"'e2e/{'x' * 76}'...: File name too long"),
        ("e2e/kube -c /etc/x.ini", "'-c' is not an option make e2e passes to pytest"),
        ("--", "'--' is not an option make e2e passes to pytest"),
    ],
)
def test_any_other_e2e_is_refused_naming_e2e_what_was_given_and_what_it_takes(value, why):
    """Hostile review: E2E='-k x' and E2E=/etc reached pytest, which collected whatever it found there."""
    with pytest.raises(ci_run.E2EError) as refused:
        ci_run.e2e_arguments(value)
    assert str(refused.value).startswith(f"E2E={value!r}: {why}; E2E takes paths under this repository's e2e/")


def test_a_refused_e2e_stops_before_any_build(capsys):
    assert ci_run.main(["--e2e", "/etc"]) == 2
    assert ci_run.main(["--builds-for=-x"]) == 2
    assert ci_run.main(["--e2e=--"]) == 2
    out, err = capsys.readouterr()
    assert "E2E='/etc': '/etc' is not under" in err and "E2E='-x': it names no path" in err, err
    assert "[ci]" not in out


def test_a_build_in_the_foreground_says_its_cold_figure_as_it_starts_and_each_step_as_it_starts(tmp_path):
    """make e2e's builds take minutes from an empty cache: their start, and each step, are printed, not only logged."""
    said: list[str] = []
    run = ci_run.Run(said.append, logs=tmp_path / "logs", cwd=tmp_path, steps=True)
    script = "print('[e2e/kube/build] building kube-apiserver'); print('go: compiling'); print('[build] done')"
    run.run_builds([ci_run.Stage(f"build kube {MINORS[0]}", python(script))])
    figure = next(
        b for b in json.loads(ci_run.FIGURES.read_text())["builds"] if b["stage"] == f"build kube {MINORS[0]}"
    )
    assert said[0].startswith(f"[ci] build kube {MINORS[0]}: started, log logs/build-kube-{MINORS[0]}.log; ")
    assert f"from an empty cache it took {figure['cpu_minutes']:.1f} CPU-minutes, {figure['wall']}" in said[0]
    assert said[1:3] == ["[ci]   [e2e/kube/build] building kube-apiserver", "[ci]   [build] done"]
    assert "go: compiling" in (tmp_path / "logs" / f"build-kube-{MINORS[0]}.log").read_text()
    quiet: list[str] = []
    ci_run.Run(quiet.append, logs=tmp_path / "bg", cwd=tmp_path).run_builds([ci_run.Stage("build x", python(script))])
    assert len(quiet) == 2 and "no figure of it in .ci/figures.json" in quiet[0], "beside make test: no step lines"


def test_pytests_closing_line_is_recognised():
    for line in [
        "1946 passed in 190.21s (0:03:10)",
        "1 failed, 1946 passed in 3.0s",
        "=== 2 passed, 1 skipped in 0.5s ===",
    ]:
        assert ci_run.PYTEST_CLOSING.match(line), line
    assert not ci_run.PYTEST_CLOSING.match("[build] built pulumi in 10.0s")


# A stage that waits for a file another stage writes, for at most 30 s (then it fails, it never hangs).
WAIT_FOR = """import os, sys, time
def wait_for(path):
    deadline = time.monotonic() + 30
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            sys.exit(9)
        time.sleep(0.05)
wait_for"""


def python(code: str) -> tuple[str, ...]:
    return (sys.executable, "-c", code)


def test_a_run_times_every_stage_builds_beside_the_tests_and_fails_on_any_failure(tmp_path):
    said: list[str] = []
    run = ci_run.Run(said.append, logs=tmp_path / "logs", cwd=tmp_path)
    marker, started_b = tmp_path / "built-a", tmp_path / "started-b"
    builds = [
        ci_run.Stage("build a", python(f"open({str(marker)!r}, 'w').write('x')")),
        ci_run.Stage("build b", python(f"open({str(started_b)!r}, 'w'); print('go: boom'); raise SystemExit(3)")),
    ]
    # The test stage waits until build a has finished and build b has started: builds run beside it, not after it,
    # and no tier (e2e/x needs only build a) can start before build b (once a race under load: e2e/x before it).
    test = ci_run.Stage(
        "test",
        python(f"{WAIT_FOR}({str(marker)!r})\nwait_for({str(started_b)!r})\nprint('3 passed in 0.1s')"),
    )
    tiers = [
        ci_run.Stage("e2e/x", python("print('1 failed, 2 passed in 0.2s'); raise SystemExit(1)"), ("build a",)),
        ci_run.Stage("e2e/y", python("print('ran')"), ("build a", "build b")),
        ci_run.Stage("e2e/z", python("print('4 passed in 0.3s')"), ("build a",)),
    ]
    assert run.run([ci_run.Stage("setup", python("pass"))], test, builds, tiers) == 1
    text = "\n".join(said)
    results = {result.name: result for result in run.results.values()}
    assert {name: result.status for name, result in results.items()} == {
        "setup": "passed",
        "test": "passed",
        "build a": "passed",
        "build b": "failed",
        "e2e/x": "failed",
        "e2e/y": "skipped",
        "e2e/z": "passed",
    }
    assert results["test"].closing == "3 passed in 0.1s"
    # How long a stage took is the machine's to say (a loaded one starts Python in more than half a second).
    assert re.search(r"^\[ci\] e2e/x: failed in \d+m\d\ds \(1 failed, 2 passed in 0\.2s\)$", text, re.M)
    assert "[ci] e2e/y: skipped (build b did not pass)" in text
    assert "[ci]   go: boom" in text  # a failed build's log tail
    assert (tmp_path / "logs" / "build-b.log").read_text() == "go: boom\n"
    summary = text[text.index("[ci] summary:") :].splitlines()
    assert summary[1].split() == ["stage", "status", "started", "took", "pytest"]
    rows = [line.split()[0] for line in summary[3:]]
    # By start: setup, then the test and the builds (which of them started first is the threads' to say),
    # then the tiers that ran, the skipped ones, the total.
    assert rows[0] == "setup" and sorted(rows[1:4]) == ["build", "build", "test"]
    assert rows[4:] == ["e2e/x", "e2e/z", "e2e/y", "total"]
    recorded = json.loads((tmp_path / "logs" / "timings.json").read_text())
    assert [stage["name"] for stage in recorded["stages"]][-1] == "e2e/y" and recorded["cores"]


def test_a_failed_make_test_stops_the_builds_and_skips_the_tiers(tmp_path):
    said: list[str] = []
    run = ci_run.Run(said.append, logs=tmp_path / "logs", cwd=tmp_path)
    started = tmp_path / "started"
    builds = [
        ci_run.Stage("build slow", python(f"import time; open({str(started)!r}, 'w'); time.sleep(120)")),
        ci_run.Stage("build next", python("pass")),
    ]
    test = ci_run.Stage(
        "test",
        python(f"{WAIT_FOR}({str(started)!r})\nraise SystemExit(1)"),
    )
    tiers = [ci_run.Stage("e2e/x", python("pass"), ("build slow",))]
    assert run.run([], test, builds, tiers) == 1
    statuses = {result.name: (result.status, result.why) for result in run.results.values()}
    assert statuses["build slow"][0] == "failed" and run.results["build slow"].seconds < 60
    assert statuses["build next"] == ("skipped", "make test failed")
    assert statuses["e2e/x"] == ("skipped", "test failed")


def test_the_figures_are_stated_once_in_docs_ci_md_as_the_figures_file_says():
    figures = json.loads(ci_run.FIGURES.read_text())
    doc = ci_run.CI_DOC.read_text()
    assert ci_run.documented(doc, figures) == doc, "docs/ci-run.md is stale: python -m tools.ci_run --write-docs"
    assert {build["stage"] for build in figures["builds"]} == {build.name for build in ci_run.build_stages(MINORS)}
    pages = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "e2e").glob("*/README.md")]
    for path in [*(page for page in pages if page != ci_run.CI_DOC), ROOT / ".github" / "workflows" / "test.yml"]:
        text = path.read_text()
        assert not re.search(r"CPU-minutes|\d+ minutes of two", text), f"{path.relative_to(ROOT)} repeats a figure"
        if path.name != "test.yml" and re.search(r"\bcold\b", text):
            assert "ci-run.md" in text, f"{path.relative_to(ROOT)} speaks of a cold run without pointing at the figures"


def test_no_figure_states_a_bound_a_recorded_cold_run_beats():
    """The builds' CPU-minutes are each from an empty Go build cache: their sum bounds one run from above."""
    figures = json.loads(ci_run.FIGURES.read_text())
    text = ci_run.figures_markdown(figures)
    for floor in re.findall(r"at least (\d+) minutes", text):
        assert all(run["minutes"] >= int(floor) for run in figures["cold_runs"]), f"at least {floor} minutes"
    total = sum(build["cpu_minutes"] for build in figures["builds"])
    assert f"CPU of at most {total / 2:.0f} minutes of two busy cores (not wall time" in text


def test_a_recorded_run_is_rendered_as_its_table(tmp_path):
    run = ci_run.Run(lambda _: None, logs=tmp_path, cwd=tmp_path)
    run.run([], ci_run.Stage("test", python("print('5 passed in 1.0s')")), [], [])
    recorded = json.loads((tmp_path / "timings.json").read_text())
    text = ci_run.figures_markdown({"builds": [], "cold_runs": [], "test_runs": [], "ci_runs": [recorded]})
    assert f"`.ci/run` at {recorded['commit'][:7]}" in text and "5 passed in 1.0s" in text


def test_the_builds_share_the_go_build_and_module_caches():
    """No build script points the go command at a cache of its own: a package compiled for one is reused by the next."""
    scripts = [
        ROOT / "e2e" / "kube" / "build.py",
        ROOT / "e2e" / "pulumi" / "build.py",
        ROOT / "e2e" / "kueue" / "kueue_build.py",
        ROOT / "e2e" / "helm" / "helm_build.py",
    ]
    for stage in ci_run.build_stages(MINORS):
        assert ROOT / stage.command[4] in scripts, stage
    for script in scripts:
        assert not re.search(r"GOCACHE|GOMODCACHE|GOFLAGS", script.read_text()), script


def test_the_helm_build_uses_the_standard_library_only_and_builds_the_gpu_node_scripts_version():
    """e2e/helm/helm_build.py runs before any venv package is needed (`python3 e2e/helm/helm_build.py`), and builds
    the helm e2e/gpu-node/build.sh builds, static (CGO_ENABLED=0) and -trimpath."""
    script = ROOT / "e2e" / "helm" / "helm_build.py"
    tree = ast.parse(script.read_text())
    imported = {
        name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for name in ([alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""])
    }
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}, imported
    spec = importlib.util.spec_from_file_location("helm_build_under_test", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.helm_version() == re.search(
        r"helm\.sh/helm/v3@v(\S+)", (ROOT / "e2e" / "gpu-node" / "build.sh").read_text()
    ).group(1)
    assert "ensure_served_command(" in script.read_text()
    go_build = (ROOT / "e2e" / "kube" / "build.py").read_text().split("def _go_build(", 1)[1].split("\ndef ", 1)[0]
    assert '"-trimpath"' in go_build and 'CGO_ENABLED="0"' in go_build
    assert module.binary_path("3.20.2").parts[-3:] == ("helm-v3.20.2", "bin", "helm")


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("[1, 2]", "the top level is not an object"),
        ('{"stages": 1}', "commit is not str"),
        ("{", "not JSON"),
        ('{"commit": "a", "commit": "b"}', "gives 'commit' twice"),
    ],
)
def test_a_record_that_is_no_runs_timings_is_refused_before_anything_is_written(tmp_path, capsys, content, why):
    """The a38 hostile round: a record of another shape was written into .ci/figures.json, then a traceback."""
    record = tmp_path / "timings.json"
    record.write_text(content)
    figures, doc = ci_run.FIGURES.read_text(), ci_run.CI_DOC.read_text()
    assert ci_run.main(["--write-docs", "--record", str(record)]) == 2
    assert why in capsys.readouterr().err
    assert (ci_run.FIGURES.read_text(), ci_run.CI_DOC.read_text()) == (figures, doc)


def test_a_record_that_is_no_regular_file_is_refused_at_once(tmp_path, capsys):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert ci_run.main(["--write-docs", "--record", str(fifo)]) == 2
    assert ci_run.main(["--write-docs", "--record", str(tmp_path)]) == 2
    assert ci_run.main(["--write-docs", "--record", str(tmp_path / "missing.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("--record") == 3 and "Traceback" not in err, err


def test_a_record_without_write_docs_starts_no_run(capsys):
    with pytest.raises(SystemExit) as stopped:
        ci_run.main(["--record", "build/ci/timings.json"])
    assert stopped.value.code == 2 and "--record is read only with --write-docs" in capsys.readouterr().err
