"""What the engineer sees: a live line per step, the findings in full, a summary table, a JSON report.

Plain text on stderr (the live display) and stdout (the table), so the same output reads
well in a terminal and in a CI log without another dependency.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import IO

from components.config.reading import printable
from components.redaction import redacted, redacted_leaves
from tools.verify.checks import Discrepancy
from tools.verify.expectations import Expectations
from tools.verify.runner import FAIL, PASS, SKIP, WARN, CheckResult

MARKS = {PASS: "PASS", FAIL: "FAIL", SKIP: "SKIP", WARN: "WARN"}


class Progress:
    """On a terminal the step's line is redrawn with the seconds spent so far; in a log each new state is one line."""

    def __init__(self, stream: IO[str], interactive: bool, clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream
        self.interactive = interactive
        self.clock = clock
        self.prefix = ""
        self.last_update = ""
        self.started = 0.0

    def _write(self, text: str) -> None:
        self.stream.write(redacted(text))
        self.stream.flush()

    def start(self, index: int, total: int, title: str) -> None:
        self.prefix = f"[{index}/{total}] {title}"
        self.last_update = ""
        self.started = self.clock()
        self._write(f"{self.prefix} ..." if self.interactive else f"{self.prefix} ...\n")

    def update(self, text: str) -> None:
        if self.interactive:
            width = shutil.get_terminal_size().columns
            self._write(f"\r\033[K{self.prefix} ... {self.clock() - self.started:.0f}s {printable(text)}"[: width + 4])
        elif text != self.last_update:
            self._write(f"    {printable(text)}\n")
        self.last_update = text

    def finish(self, result: CheckResult) -> None:
        clear = "\r\033[K" if self.interactive else ""
        timing = f" ({result.seconds:.1f}s)" if result.status != SKIP else ""
        self._write(f"{clear}{MARKS[result.status]} {self.prefix}: {printable(result.summary)}{timing}\n")
        for finding in result.findings:
            self._write(format_finding(finding))
        for warning in result.warnings:
            self._write(format_finding(warning, mark="!"))


def format_finding(finding: Discrepancy, mark: str = "x") -> str:
    """A finding as text; its parts quote the cluster's answers (names, messages, command output), so each is
    `printable`, as the plan prints outside text: no escape sequence or line break from a server reaches the terminal."""
    return (
        f"    {mark} {printable(finding.subject)}\n"
        f"        expected:     {printable(finding.expected)}\n"
        f"        found:        {printable(finding.found)}\n"
        f"        likely cause: {printable(finding.likely_cause)}\n"
    )


def summary_table(results: Sequence[CheckResult], interrupted: bool = False) -> str:
    rows = [("check", "result", "time", "summary")] + [
        (r.name, MARKS[r.status], f"{r.seconds:.1f}s" if r.status != SKIP else "-", printable(r.summary))
        for r in results
    ]
    widths = [max(len(row[column]) for row in rows) for column in range(3)]
    lines = [
        "  ".join([row[0].ljust(widths[0]), row[1].ljust(widths[1]), row[2].rjust(widths[2]), row[3]]) for row in rows
    ]
    lines.insert(1, "  ".join("-" * width for width in widths) + "  " + "-" * 7)
    return "\n".join(lines) + "\n" + verdict_line(results, interrupted) + "\n"


def verdict_line(results: Sequence[CheckResult], interrupted: bool = False) -> str:
    """The last line of the table; an interrupted run is never a pass, however many of its checks passed."""
    failed = [r.name for r in results if r.status == FAIL]
    ran = [r for r in results if r.status != SKIP]
    if interrupted:
        return (
            f"interrupted after {len(ran)} check(s)"
            + (f", {len(failed)} failed: {', '.join(failed)}" if failed else "")
            + "; the others did not run, so this is not a pass"
        )
    if failed:
        return f"{len(failed)} of {len(ran)} checks failed: {', '.join(failed)}"
    warned = [r.name for r in results if r.status == WARN]
    notes = [f"{len(results) - len(ran)} skipped"] if len(ran) < len(results) else []
    notes += [f"with warnings: {', '.join(warned)}"] if warned else []
    return f"all {len(ran)} checks passed" + (f" ({'; '.join(notes)})" if notes else "")


def all_passed(results: Sequence[CheckResult]) -> bool:
    return bool(results) and all(r.status != FAIL for r in results)


def json_report(
    results: Sequence[CheckResult],
    expect: Expectations,
    interrupted: bool,
    unreachable: bool = False,
    unusable: bool = False,
) -> dict:
    return {
        "stack": expect.stack,
        "passed": all_passed(results) and not interrupted and not unreachable and not unusable,
        "interrupted": interrupted,
        "unreachable": unreachable,
        "unusable": unusable,
        "checks": [asdict(result) for result in results],
    }


def write_json_report(
    path: Path,
    results: Sequence[CheckResult],
    expect: Expectations,
    interrupted: bool,
    unreachable: bool = False,
    unusable: bool = False,
) -> None:
    document = redacted_leaves(json_report(results, expect, interrupted, unreachable, unusable))
    path.write_text(json.dumps(document, indent=2) + "\n")
