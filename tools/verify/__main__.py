"""`python -m tools.verify --stack <stack>`: check a live cluster against what the stack promises.

Exit codes: 0 every check passed, 1 a check failed, 2 the stack config or the kubeconfig
could not be used, 130 interrupted (after the smoke objects were deleted).
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from components.config.errors import ConfigError
from tools.verify.cluster import ClusterError, KubeCluster
from tools.verify.expectations import load_expectations
from tools.verify.report import Progress, all_passed, format_finding, summary_table, write_json_report
from tools.verify.runner import FAIL, CheckResult, Verification
from tools.verify.smoke import SmokeInterrupted, SmokeSettings

DEFAULT_TIMEOUT_S = 300.0


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m tools.verify", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--stack", default="dev", help="stack whose Pulumi.<stack>.yaml says what to expect (default: dev)"
    )
    parser.add_argument("--kubeconfig", help="kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
    parser.add_argument("--context", help="kubeconfig context (default: the file's current context)")
    parser.add_argument("--json", type=Path, metavar="REPORT", help="also write a JSON report to this file")
    parser.add_argument("--skip-smoke", action="store_true", help="read-only: create no smoke workloads")
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        metavar="S",
        help=f"seconds a smoke pod may take to reach Running (default: {DEFAULT_TIMEOUT_S:.0f})",
    )
    parser.add_argument(
        "--image", help="smoke pod image; the GPU smoke runs nvidia-smi in it (default: a pinned CUDA base image)"
    )
    return parser.parse_args(argv)


def _terminate_as_interrupt(_signum: int, _frame: object) -> None:
    """A cancelled CI job sends SIGTERM: treat it like Ctrl-C so the smoke objects are deleted."""
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        expect = load_expectations(args.stack, args.image)
    except (FileNotFoundError, ConfigError) as error:
        print(f"error: stack {args.stack}: {error}", file=sys.stderr)
        return 2
    try:
        cluster = KubeCluster.from_kubeconfig(args.kubeconfig, args.context)
    except ClusterError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _terminate_as_interrupt)
    progress = Progress(sys.stderr, interactive=sys.stderr.isatty())
    smoke = None if args.skip_smoke else SmokeSettings(timeout_s=args.timeout)
    results: list[CheckResult] = []
    interrupted = False
    try:
        results.extend(Verification(cluster, expect, smoke, progress).run())
    except KeyboardInterrupt as interrupt:
        interrupted = True
        leftovers = interrupt.leftovers if isinstance(interrupt, SmokeInterrupted) else ()
        if leftovers:
            results.append(
                CheckResult(
                    "smoke-cleanup",
                    "Delete the smoke objects",
                    FAIL,
                    f"{len(leftovers)} object(s) left in the cluster",
                    leftovers,
                )
            )
            print("\ninterrupted: these smoke objects could not be deleted", file=sys.stderr)
            print("".join(format_finding(finding) for finding in leftovers), end="", file=sys.stderr)
        else:
            print(
                "\ninterrupted: nothing the verifier created is left in the cluster; the checks below are the ones that finished",
                file=sys.stderr,
            )
    print(summary_table(results), end="")
    if args.json:
        write_json_report(args.json, results, expect, interrupted)
    if interrupted:
        return 130
    return 0 if all_passed(results) else 1


if __name__ == "__main__":
    sys.exit(main())
