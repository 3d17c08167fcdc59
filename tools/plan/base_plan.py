"""The JSON plan of a stack as a git revision has it: the baseline of `python -m tools.plan --base REF`.

A pull request's plan names the node groups whose nodes it recreates only against the plan of
the base branch. That plan is made by the base's own code and config: the revision's files are
unpacked with `git archive` into a temporary folder (this checkout, its index and its worktree
list are never touched) and its `tools.plan` is run there with this environment's Python, as
`--format json --out none`. That is the revision's own code running on this machine, so it gets only
the environment a plan needs (PATH, HOME, the locale, TMPDIR, the virtual environment): a
credential of the caller (NEBIUS_IAM_TOKEN, a CI token) never reaches code from a branch under
review. A base that has no such stack gives no baseline (NoBaselineError, with the reason the plan
then prints: every node group of it is new). A base whose plan fails (BasePlanFailedError, with
the first line of its refusal) gives none either: the default base (the last commit) is then
reported and the plan goes on, while an explicit `--base REF` is refused (exit status 2), since
the comparison asked for (a CI job's "RECREATES NODES" check) cannot be made. A REF that is not a
revision of this repository is the caller's mistake (UnknownRevisionError, exit status 2).
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
import tempfile
from functools import lru_cache
from pathlib import Path

from components.config.reading import InputError, parse_json, printable
from components.config.stack_file import PROJECT_DIR
from components.redaction import redacted
from components.shown import shown

# A plan takes seconds; the limit only keeps a broken base from holding a CI job.
PLAN_TIMEOUT_S = 600


# What the base revision's plan is run with: nothing else of the caller's environment reaches its code.
PLAN_ENVIRONMENT = ("PATH", "HOME", "LANG", "LANGUAGE", "TMPDIR", "VIRTUAL_ENV")


def plan_environment(environment: dict[str, str]) -> dict[str, str]:
    """The part of `environment` the base revision's plan is given: PLAN_ENVIRONMENT and the locale (LC_*)."""
    return {name: value for name, value in environment.items() if name in PLAN_ENVIRONMENT or name.startswith("LC_")}


class NoBaselineError(Exception):
    """The revision gives no usable plan of the stack; the message says why."""


class BasePlanFailedError(NoBaselineError):
    """The revision has the stack but its plan could not be made (refused, crashed, unreadable): for an explicit
    `--base REF` the comparison asked for cannot be made, and the CLI refuses (exit status 2)."""


class UnknownRevisionError(ValueError):
    """`--base` names no commit of this repository (or its history is not fetched)."""


def _unpack(ref: str, folder: Path, project_dir: Path) -> None:
    """The project's files at `ref` under `folder`, as `git archive` gives them (regular files and folders only)."""
    archive = subprocess.run(
        ["git", "-C", str(project_dir), "archive", "--format=tar", f"{ref}^{{tree}}", "--", "."],
        capture_output=True,
        timeout=120,
        check=False,
    )
    if archive.returncode != 0:
        reason = printable(archive.stderr.decode(errors="replace").strip())
        raise BasePlanFailedError(f"{ref} cannot be read with git archive: {reason}")
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        try:
            tar.extractall(folder, filter="data")
        except tarfile.FilterError as unsafe:  # e.g. a committed link to an absolute path
            raise BasePlanFailedError(f"{ref} cannot be unpacked safely: {printable(str(unsafe))}") from None


def _git(project_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            ["git", "-C", str(project_dir), *args], capture_output=True, text=True, timeout=60, check=False
        )
    except FileNotFoundError:
        raise NoBaselineError("git is not installed, so the last commit cannot be read") from None


def default_base(project_dir: Path = PROJECT_DIR) -> str:
    """The last commit of the checkout (its full hash), the baseline a plan without --base or --baseline uses.

    NoBaselineError says why there is none: not a git checkout (an unpacked archive), or no commit yet.
    """
    inside = _git(project_dir, "rev-parse", "--is-inside-work-tree")
    if inside.returncode != 0 or inside.stdout.strip() != "true":
        raise NoBaselineError(
            f"{project_dir} is not a git checkout, so there is no last commit to compare with; give --baseline PLAN.json"
        )
    head = _git(project_dir, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    if head.returncode != 0:
        raise NoBaselineError("the checkout has no commit yet, so there is nothing to compare with")
    return head.stdout.strip()


def base_plan(stack: str, ref: str, project_dir: Path = PROJECT_DIR) -> str:
    """The JSON text of `stack`'s plan at `ref`; NoBaselineError when there is none to compare with."""
    known = _git(project_dir, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if known.returncode != 0:
        raise UnknownRevisionError(
            f"--base {shown(ref)} is not a git revision of this repository (or its history is not fetched)"
        )
    return _plan_at(stack, known.stdout.strip(), shown(ref), project_dir)


@lru_cache(maxsize=16)
def _plan_at(stack: str, commit: str, named: str, project_dir: Path) -> str:
    """One commit's plan of a stack: the same for every call in a process (a commit's files do not change). `named` is
    the revision as messages name it (`shown`: the user's text, which may be anything git resolves)."""
    with tempfile.TemporaryDirectory(prefix="nebius-dra-base-") as directory:
        folder = Path(directory)
        _unpack(commit, folder, project_dir)
        if not (folder / f"Pulumi.{stack}.yaml").is_file():
            raise NoBaselineError(f"{named} has no stack file Pulumi.{stack}.yaml: every node group of it is new")
        done = subprocess.run(
            [sys.executable, "-m", "tools.plan", "--stack", stack, "--format", "json", "--out", "none"],
            cwd=folder,
            env=plan_environment(dict(os.environ)),
            capture_output=True,
            text=True,
            timeout=PLAN_TIMEOUT_S,
            check=False,
        )
    # Status 1 (a mandatory policy blocks the base) still plans every resource; 2 plans none.
    if done.returncode not in (0, 1):
        reason = failure_reason(done.stderr, done.stdout)
        raise BasePlanFailedError(f"the plan of {stack} at {named} failed (exit {done.returncode}): {reason}")
    try:
        document = parse_json(done.stdout, f"the plan of {stack} at {named}")
    except InputError as unreadable:
        raise BasePlanFailedError(
            f"the plan of {stack} at {named} printed no JSON document it can read: {unreadable}"
        ) from None
    if not isinstance(document, dict) or document.get("error") or "nodeGroups" not in document:
        raise BasePlanFailedError(f"the plan of {stack} at {named} lists no node groups to compare with")
    return done.stdout


NO_REASON = "it printed no reason"
_PREFIX = "python -m tools.plan: "
REASON_LIMIT = 600


def failure_reason(stderr: str, stdout: str) -> str:
    """Why a base plan failed, in one line: the first refusal of its stderr, or else of the `error` of the JSON
    document it printed (a config refusal goes there with --format json, and stderr is then empty); NO_REASON when
    neither has one. Its heading (`invalid stack configuration (2 problems):`) is joined to its first problem. The
    revision's code wrote it, so it is redacted and made printable, and cut to REASON_LIMIT characters."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    if not lines:
        try:
            error = parse_json(stdout, "the base plan's output").get("error")
        except (InputError, AttributeError):
            error = None
        lines = [line.strip() for line in error.splitlines() if line.strip()] if isinstance(error, str) else []
    if not lines:
        return NO_REASON
    reason = lines[0].removeprefix(_PREFIX)
    if reason.endswith(":") and len(lines) > 1:
        reason = f"{reason} {lines[1].removeprefix('- ')}"
    more = len(lines) - (2 if lines[0].endswith(":") and len(lines) > 1 else 1)
    reason += f" (and {more} more line(s))" if more > 0 else ""
    reason = printable(redacted(reason))
    return reason if len(reason) <= REASON_LIMIT else f"{reason[: REASON_LIMIT - 20]}... ({len(reason)} characters)"
