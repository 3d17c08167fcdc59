"""`.ci/run` (`python -m tools.ci_run`): CI's verdict on a fresh clone, and where its time goes.

`make setup engines` first; then `make test` in the foreground while the e2e engines build in the background,
one after another under `nice -n 19` (one Go build cache, ~/.cache/go-build, for all of them), each into its
log under build/ci/. Once `make test` has passed, each e2e tier (a directory of e2e/, run as `make e2e
E2E=e2e/<tier>`) starts as soon as the builds it starts binaries of are done, one tier at a time, while the
later builds go on. Every stage prints a line as it ends; the end is a table of all of them (status, when it
started, how long it took, pytest's closing line) and build/ci/timings.json. The exit status is 1 when any
stage failed: a failed `make test` stops the builds and skips the tiers; a failed build skips the tiers that
need it; a failed tier leaves the others running.

`python -m tools.ci_run --builds` (`make e2e-build`) runs only the builds, in the foreground;
`--builds-for PATH` (`make demo`) only those the e2e tiers under PATH start binaries of, their logs under
build/e2e/; `--e2e E2E` (`make e2e`) those, then pytest on E2E's paths under e2e/ and its -x or -k. A build in the foreground prints its steps as they start; every build's first line
says what it took when measured from an empty cache (.ci/figures.json).
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import re
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parents[1]
LOGS = ROOT / "build" / "ci"
E2E_LOGS = ROOT / "build" / "e2e"  # make e2e's builds: never the logs of a .ci/run whose tiers run make e2e
PYTHON = "venv/bin/python"
# The lines the build scripts print as a step starts or ends (e2e/kube/build.py, e2e/pulumi/build.py,
# e2e/kueue/kueue_build.py, e2e/helm/helm_build.py), not the go command's own output.
BUILD_STEP = re.compile(r"^\[(build|e2e/[\w-]+/build)\] ")
# pytest's last line: "1 failed, 1946 passed in 190.21s (0:03:10)".
PYTEST_CLOSING = re.compile(
    r"^=*\s*(\d+ (passed|failed|errors?|skipped|deselected|xfailed|xpassed|warnings?|no tests ran)(, )?)+.* in \d"
)


@dataclass(frozen=True)
class Stage:
    name: str
    command: tuple[str, ...]
    needs: tuple[str, ...] = ()  # builds whose binaries this tier starts


@dataclass
class Result:
    name: str
    status: str = "skipped"  # passed, failed, skipped
    started_s: float = 0.0  # since the run began
    seconds: float = 0.0
    closing: str = ""  # pytest's closing line, when the stage ran pytest
    why: str = ""  # what a skipped stage waited on


def kube_minors() -> tuple[str, ...]:
    """The minors e2e/kube's wrapper modules build, read by e2e/kube/build.py itself (standard library only)."""
    spec = importlib.util.spec_from_file_location("nebius_dra_e2e_kube_build", ROOT / "e2e" / "kube" / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return tuple(module.kube_minors())


def build_stages(minors: Sequence[str]) -> list[Stage]:
    """Every minor first (the DRA tier needs them all and then runs beside the engine's build), then the small
    builds, Kueue and helm (so the tiers left waiting when the builds end are their short ones)."""
    nice = ("nice", "-n", "19", PYTHON)
    return [
        *(Stage(f"build kube {minor}", (*nice, "e2e/kube/build.py", "--kube", minor)) for minor in minors),
        Stage("build pulumi engine", (*nice, "e2e/pulumi/build.py")),
        Stage("build kueue", (*nice, "e2e/kueue/kueue_build.py")),
        Stage("build helm", (*nice, "e2e/helm/helm_build.py")),
    ]


def tier_stages(minors: Sequence[str]) -> list[Stage]:
    """The e2e directories and the builds each starts binaries of: the oldest minor's control plane unless a
    tier runs several (e2e/dra, one per minor), the engine for the CLI and engine tiers, Kueue for its own."""
    oldest = f"build kube {minors[0]}"

    def tier(name: str, *needs: str) -> Stage:
        return Stage(f"e2e/{name}", ("make", "e2e", f"E2E=e2e/{name}"), needs)

    return [
        tier("kube", oldest),
        tier("dra", *(f"build kube {minor}" for minor in minors)),
        tier("cli", oldest, "build pulumi engine"),
        tier("pulumi", oldest, "build pulumi engine"),
        tier("kueue", oldest, "build kueue"),
        tier("helm", "build helm"),  # renders the vendored charts; no control plane
        tier("yaml_v3"),  # builds its own small Go program against gopkg.in/yaml.v3
    ]


def builds_for(paths: str, minors: Sequence[str]) -> list[Stage]:
    """The builds the e2e tiers under the paths of `paths` (make's E2E: words, pytest's options among them) start
    binaries of, or of the tier a path lies in; in build order. A word that names no tier needs no build here."""
    targets = [(ROOT / word.split("::")[0]).resolve() for word in paths.split() if not word.startswith("-")]
    needed = {
        need
        for tier in tier_stages(minors)
        for target in targets
        if (ROOT / tier.name).is_relative_to(target) or target.is_relative_to(ROOT / tier.name)
        for need in tier.needs
    }
    return [build for build in build_stages(minors) if build.name in needed]


E2E_FORMS = (
    "E2E takes paths under this repository's e2e/ (e2e, e2e/<tier>, a test file, or file::test), several separated "
    "by blanks, and pytest's -x and -k <one-word expression> (E2E='e2e/cli -x', E2E='e2e/kube e2e/helm -k taint')"
)


# pytest's -k takes an expression; make e2e takes one word of it (a part of a test's name), so that no expression
# (`not`, `or`, parentheses) fails only after the builds.
K_WORD = re.compile(r"[A-Za-z0-9_]+")
K_OPERATORS = frozenset({"and", "or", "not"})
TEST_MODULE = re.compile(r"test_[A-Za-z0-9_]*\.py")


class E2EError(ValueError):
    """make's E2E is not one of the forms `make e2e` takes (E2E_FORMS)."""


def e2e_arguments(value: str) -> list[str]:
    """pytest's arguments for make's E2E, split at blanks: the paths under e2e/ it names and the options among them.

    The Makefile hands E2E over whole, so that no shell parses it (a quote or ';' stays part of it); it is split
    here instead, and every word is one of the forms of E2E_FORMS: pytest given `/etc`, or `-k x` without a path,
    would collect whatever it finds there, and an option it takes a path after (`-c`, `--rootdir`) would read
    files from anywhere."""

    def refused(why: str) -> E2EError:
        return E2EError(f"E2E={value!r}: {why}; {E2E_FORMS}")

    words, arguments, paths = value.split(), [], 0
    while words:
        word = words.pop(0)
        if word in ("-x", "--exitfirst"):
            arguments.append(word)
        elif word == "-k":
            if not words or not K_WORD.fullmatch(words[0]) or words[0] in K_OPERATORS:
                raise refused("-k needs one word after it")
            arguments += [word, words.pop(0)]
        elif word.startswith("-"):
            raise refused(f"{word!r} is not an option make e2e passes to pytest")
        else:
            path, _, test = word.partition("::")
            try:
                target = (ROOT / path).resolve()
                kind = "directory" if target.is_dir() else "file" if target.is_file() else None
            except OSError as failure:  # a name too long for the file system
                raise refused(f"{word[:80]!r}...: {failure.strerror or failure}") from None
            if not target.is_relative_to(ROOT / "e2e"):
                raise refused(f"{word!r} is not under this repository's e2e/")
            if kind is None:
                raise refused(f"{word!r}: no such file or directory")
            # Checked here, before any build: pytest would say only after the builds that it found no tests there.
            if kind == "file" and not TEST_MODULE.fullmatch(target.name):
                raise refused(f"{word!r} is no test module (test_*.py)")
            if test and kind != "file":
                raise refused(f"{word!r}: '::' names a test inside a test module, not a directory")
            arguments.append(word)
            paths += 1
    if not paths:
        raise refused("it names no path")
    return arguments


def cold_figure(stage: str) -> str:
    """What the build took from an empty cache when measured, as .ci/figures.json records it."""
    figures = json.loads(FIGURES.read_text())
    for build in figures["builds"]:
        if build["stage"] == stage:
            return (
                f"from an empty cache it took {build['cpu_minutes']:.1f} CPU-minutes, {build['wall']}, when measured "
                "(docs/ci-run.md#figures); seconds once built"
            )
    return "no figure of it in .ci/figures.json"


def duration(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes}m{rest:02d}s"


def table(results: Sequence[Result], total_s: float) -> str:
    rows = [("stage", "status", "started", "took", "pytest")] + [
        (
            result.name,
            result.status,
            duration(result.started_s) if result.status != "skipped" else "-",
            duration(result.seconds) if result.status != "skipped" else "-",
            result.closing or result.why,
        )
        for result in results
    ]
    rows.append(("total", "", "", duration(total_s), ""))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)


class Run:
    """One CI run's stages, their processes and their results, printed as they end."""

    def __init__(
        self, say: Callable[[str], None] = print, logs: Path = LOGS, cwd: Path = ROOT, steps: bool = False
    ) -> None:
        """`steps`: the builds run in the foreground, so each build step's line is printed as well as logged."""
        self.say = say
        self.steps = steps
        self.logs = logs
        self.cwd = cwd
        self.started = time.monotonic()
        self.results: dict[str, Result] = {}
        self.lock = threading.Condition()
        self.builds_stopped = threading.Event()
        self.build_process: subprocess.Popen[str] | None = None

    def execute(self, stage: Stage, log: IO[str] | None = None) -> Result:
        """Runs `stage`, its output to the terminal (or to `log`), and records how it went."""
        result = Result(stage.name, started_s=time.monotonic() - self.started)
        with subprocess.Popen(
            stage.command,
            cwd=self.cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=log is not None,  # a background build's process group can be stopped as one
        ) as proc:
            if log is not None:
                self.build_process = proc
            assert proc.stdout is not None
            for line in proc.stdout:
                (log or sys.stdout).write(line)
                if log is not None and self.steps and BUILD_STEP.match(line):
                    self.say(f"[ci]   {line.rstrip()}")
                if PYTEST_CLOSING.match(line):
                    result.closing = line.strip(" =\n")
            (log or sys.stdout).flush()
        result.seconds = time.monotonic() - self.started - result.started_s
        result.status = "passed" if proc.returncode == 0 else "failed"
        if proc.returncode != 0 and log is not None:
            result.why = f"exit {proc.returncode}, log {Path(log.name).relative_to(self.cwd)}"
        self.record(result)
        return result

    def record(self, result: Result) -> None:
        with self.lock:
            self.results[result.name] = result
            self.lock.notify_all()
        if result.status == "skipped":
            self.say(f"[ci] {result.name}: skipped ({result.why})")
        else:
            detail = f" ({result.closing or result.why})" if result.closing or result.why else ""
            self.say(f"[ci] {result.name}: {result.status} in {duration(result.seconds)}{detail}")

    def run_builds(self, builds: Sequence[Stage]) -> None:
        try:
            self._run_builds(builds)
        finally:  # a build that could not even start still ends its tiers' wait
            for build in builds:
                if build.name not in self.results:
                    self.record(Result(build.name, status="failed", why="the build could not run"))

    def _run_builds(self, builds: Sequence[Stage]) -> None:
        self.logs.mkdir(parents=True, exist_ok=True)
        for build in builds:
            if self.builds_stopped.is_set():
                self.record(Result(build.name, why="make test failed"))
                continue
            path = self.logs / f"{build.name.replace(' ', '-')}.log"
            self.say(f"[ci] {build.name}: started, log {path.relative_to(self.cwd)}; {cold_figure(build.name)}")
            with path.open("w") as log:
                if self.execute(build, log).status == "failed":
                    log.flush()
                    for line in path.read_text().splitlines()[-20:]:
                        self.say(f"[ci]   {line}")

    def stop_builds(self) -> None:
        self.builds_stopped.set()
        proc = self.build_process
        if proc is not None and proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)

    def wait_for(self, needs: Sequence[str]) -> list[Result]:
        with self.lock:
            self.lock.wait_for(lambda: all(need in self.results for need in needs))
            return [self.results[need] for need in needs]

    def run_tiers(self, tiers: Sequence[Stage]) -> None:
        """Each tier once its builds are done: the first in order whose builds are, one at a time."""
        left = list(tiers)
        while left:
            with self.lock:
                self.lock.wait_for(lambda: any(all(n in self.results for n in tier.needs) for tier in left))
                tier = next(tier for tier in left if all(n in self.results for n in tier.needs))
            left.remove(tier)
            missing = [result.name for result in self.wait_for(tier.needs) if result.status != "passed"]
            if missing:
                self.record(Result(tier.name, why=f"{', '.join(missing)} did not pass"))
            else:
                self.execute(tier)

    def run(self, first: Sequence[Stage], test: Stage, builds: Sequence[Stage], tiers: Sequence[Stage]) -> int:
        for stage in first:
            if self.execute(stage).status == "failed":
                return self.finish([*(s.name for s in (test, *builds, *tiers))], why=f"{stage.name} failed")
        building = threading.Thread(target=self.run_builds, args=(builds,), daemon=True)
        building.start()
        if self.execute(test).status == "failed":
            self.stop_builds()
            building.join()
            return self.finish([tier.name for tier in tiers], why=f"{test.name} failed")
        self.run_tiers(tiers)
        building.join()
        return self.finish([], why="")

    def finish(self, skipped: Sequence[str], why: str) -> int:
        for name in skipped:
            if name not in self.results:
                self.record(Result(name, why=why))
        total = time.monotonic() - self.started
        ordered = sorted(self.results.values(), key=lambda result: (result.status == "skipped", result.started_s))
        self.say("[ci] summary:\n" + table(ordered, total))
        self.logs.mkdir(parents=True, exist_ok=True)
        (self.logs / "timings.json").write_text(json.dumps(timings(ordered, total), indent=2) + "\n")
        return 0 if all(result.status == "passed" for result in ordered) else 1


def timings(results: Sequence[Result], total_s: float) -> dict:
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    return {
        "commit": commit,
        "finished": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "cores": os.cpu_count(),
        "load_average_at_end": [round(load, 1) for load in os.getloadavg()],
        "total_seconds": round(total_s, 1),
        "stages": [{**asdict(result), "seconds": round(result.seconds, 1)} for result in results],
    }


FIGURES = ROOT / ".ci" / "figures.json"
CI_DOC = ROOT / "docs" / "ci-run.md"
BEGIN = "<!-- generated from .ci/figures.json by python -m tools.ci_run --write-docs -->"
END = "<!-- end of generated figures -->"


def figures_markdown(figures: dict) -> str:
    """The figures' one statement: the builds' CPU time, the cold runs measured, and the last recorded `.ci/run`."""
    builds = figures["builds"]
    total = sum(build["cpu_minutes"] for build in builds)
    lines = ["| build | CPU-minutes | wall when measured | source |", "| --- | --- | --- | --- |"]
    lines += [f"| {b['stage']} | {b['cpu_minutes']:.1f} | {b['wall'] or '-'} | {b['source']} |" for b in builds]
    lines += [
        f"| all builds | {total:.1f} | CPU of at most {total / 2:.0f} minutes of two busy cores (not wall time: "
        "the builds run one after another beside the tests; the recorded run below says what one run took) | the "
        "sum; each figure is from an empty Go build cache, and one run's builds share it, so together they take "
        "less CPU |",
        "",
        *(
            f"- {run['what']}: {run['minutes']} minutes, {run['passed']} passed ({run['source']})."
            for run in figures["cold_runs"]
        ),
        *(
            f"- {run['what']}: {run['minutes']} minutes"
            + (
                f" ({run['cpu_minutes']} minutes of CPU time)"
                if "cpu_minutes" in run
                else " a run (CPU time not measured)"
            )
            + f", {run['passed']} passed ({run['source']})."
            for run in figures["test_runs"]
        ),
    ]
    for run in figures.get("ci_runs", []):
        results = [Result(**stage) for stage in run["stages"]]
        lines += [
            "",
            f"`.ci/run` at {run['commit'][:7]}, finished {run['finished']} on {run['cores']} cores "
            f"(load average at the end {', '.join(map(str, run['load_average_at_end']))}):",
            "",
            "```",
            table(results, run["total_seconds"]),
            "```",
        ]
    return "\n".join(lines)


def documented(text: str, figures: dict) -> str:
    """`text` (docs/ci-run.md) with its generated block rewritten from `figures`."""
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{figures_markdown(figures)}\n{END}{tail}"


# A timings.json is a few KiB (one entry a stage); anything far larger is no run's record.
MAX_RECORD_BYTES = 1 << 20
RECORD_FIELDS = {"commit": str, "finished": str, "cores": int, "load_average_at_end": list, "total_seconds": float}
STAGE_FIELDS = {"name": str, "status": str, "started_s": float, "seconds": float, "closing": str, "why": str}


class RecordError(ValueError):
    """A --record file that is not a run's build/ci/timings.json; the message names the flag and what is wrong."""


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    keys = [key for key, _ in pairs]
    twice = sorted({key for key in keys if keys.count(key) > 1})
    if twice:
        raise RecordError(f"gives {', '.join(map(repr, twice))} twice")
    return dict(pairs)


def _of_type(value: object, kind: type) -> bool:
    return (isinstance(value, kind) and not isinstance(value, bool)) or (kind is float and type(value) is int)


def read_record(path: Path) -> dict:
    """The recorded run, checked whole before anything is written: a regular file (opened without blocking, so a
    FIFO is refused, not waited on) of at most MAX_RECORD_BYTES, JSON without a key given twice, of timings()'s
    shape. Only the standard library: .ci/run starts before the project's virtual environment exists."""
    where = f"--record {path}"
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as failure:
        raise RecordError(f"{where}: cannot be read: {failure.strerror or failure}") from None
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):  # before a file object is made: a directory's refuses
        os.close(descriptor)
        raise RecordError(f"{where}: not a regular file; give a run's build/ci/timings.json")
    with os.fdopen(descriptor, "rb") as file:
        data = file.read(MAX_RECORD_BYTES + 1)
    if len(data) > MAX_RECORD_BYTES:
        raise RecordError(f"{where}: larger than {MAX_RECORD_BYTES >> 20} MiB, which no run's timings.json is")
    try:
        record = json.loads(data.decode(), object_pairs_hook=_unique_keys)
    except RecordError as twice:
        raise RecordError(f"{where}: {twice}") from None
    except (UnicodeDecodeError, ValueError) as invalid:
        raise RecordError(f"{where}: not JSON ({invalid})") from None
    problems = [] if isinstance(record, dict) else ["the top level is not an object"]
    if not problems:
        problems += [
            f"{key} is not {kind.__name__}"
            for key, kind in RECORD_FIELDS.items()
            if not _of_type(record.get(key), kind)
        ]
        stages = record.get("stages")
        if not isinstance(stages, list) or not stages:
            problems.append("stages is not a list of stages")
        else:
            problems += [
                f"stages[{index}].{key} is not {kind.__name__}"
                for index, stage in enumerate(stages)
                for key, kind in STAGE_FIELDS.items()
                if not isinstance(stage, dict) or not _of_type(stage.get(key), kind)
            ][:5]
    if problems:
        raise RecordError(f"{where}: not a run's timings.json as .ci/run writes it: {'; '.join(problems)}")
    return record


def write_docs(record: Path | None) -> int:
    figures = json.loads(FIGURES.read_text())
    if record is not None:
        try:
            figures["ci_runs"] = [read_record(record)]
        except RecordError as refused:
            print(f"python -m tools.ci_run: {refused}", file=sys.stderr)
            return 2
        FIGURES.write_text(json.dumps(figures, indent=2) + "\n")
    CI_DOC.write_text(documented(CI_DOC.read_text(), figures))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.ci_run", description=__doc__.split("\n\n")[0], allow_abbrev=False
    )
    parser.add_argument("--builds", action="store_true", help="only the e2e engines' builds (make e2e-build)")
    parser.add_argument(
        "--builds-for",
        metavar="PATHS",
        help="only the builds the e2e tiers under PATHS start binaries of (make demo), logs under build/e2e/",
    )
    parser.add_argument(
        "--e2e",
        metavar="E2E",
        help="make e2e: the builds the tiers under E2E's paths start binaries of, then pytest on E2E (its paths "
        "under e2e/, -x, -k <expression>)",
    )
    parser.add_argument(
        "--write-docs", action="store_true", help="rewrite docs/ci-run.md's figures from .ci/figures.json"
    )
    parser.add_argument(
        "--record",
        type=Path,
        metavar="TIMINGS",
        help="with --write-docs: a run's build/ci/timings.json becomes the recorded run",
    )
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.record is not None and not args.write_docs:
        parser.error("--record is read only with --write-docs (without it a whole CI run would start)")
    if args.write_docs:
        return write_docs(args.record)
    given = args.e2e if args.e2e is not None else args.builds_for
    if isinstance(given, list):  # argparse reads `--e2e=--` as the end of the options and leaves an empty list
        given = "--"
    try:
        pytest_arguments = None if given is None else e2e_arguments(given)
    except E2EError as invalid:
        print(f"python -m tools.ci_run: {invalid}", file=sys.stderr)
        return 2
    minors = kube_minors()
    foreground = args.builds or given is not None
    run = Run(lambda line: print(line, flush=True), logs=LOGS if given is None else E2E_LOGS, steps=foreground)
    try:
        if given is not None:
            run.run_builds(builds_for(given, minors))
            if not all(result.status == "passed" for result in run.results.values()):
                return 1
            if args.e2e is None or pytest_arguments is None:
                return 0
            pytest = (sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *pytest_arguments)
            return subprocess.run(pytest, cwd=ROOT).returncode
        if args.builds:
            run.run_builds(build_stages(minors))
            return run.finish([], why="")
        setup = Stage("setup", ("make", "setup", "engines"))
        return run.run([setup], Stage("test", ("make", "test")), build_stages(minors), tier_stages(minors))
    except KeyboardInterrupt:
        run.stop_builds()
        print("[ci] interrupted", flush=True)
        return 130


if __name__ == "__main__":
    sys.exit(main())
