"""`python -m tools.verify --stack <stack>`: check a live cluster against what the stack promises.

Exit codes: 0 every check passed, 1 a check failed, 2 the stack config or the kubeconfig
could not be used or the cluster could not be asked (its API server did not answer within
--request-timeout or --run-timeout or could not be reached, it refused the credential (401, 403), its answers could
not be used: not JSON, not shaped as the API returns objects, larger than 64 MiB, an HTTP error at the first read; or
the kubeconfig's exec
credential command gave no credential within --exec-plugin-timeout), 130 interrupted by Ctrl-C or SIGTERM (after the
smoke objects were deleted; an interrupted run never reports a pass).

Nothing waits without a limit: every API request, from its connection to the last byte of
its answer, and the opening of the exec stream into the smoke pod take at most
--request-timeout (default 30 s), the whole run talks to the cluster for at most --run-timeout
(default 1800 s; the smoke objects are still deleted after it), the exec credential command (for
example the `nebius` CLI, which may wait for a browser login) is killed after
--exec-plugin-timeout (default 60 s), and a smoke pod has --timeout to reach Running
(default 300 s), and the GPU metrics exporter has --metrics-timeout to name that pod (default 90 s). A malformed kubeconfig is one line naming the file and what is wrong.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

import urllib3

from components.config.errors import ConfigError
from components.config.reading import InputError, check_file_flag, check_output_flag, parsed_arguments, printable
from components.redaction import redacted
from components.shown import shown
from tools.plan.stack_source import StackNameError, check_stack_name
from tools.verify.burnin_cli import add_burn_in_arguments, burn_in_budget_s, burn_in_settings
from tools.verify.cluster import DEFAULT_EXEC_PLUGIN_TIMEOUT_S, DEFAULT_REQUEST_TIMEOUT_S, ClusterError, KubeCluster
from tools.verify.expectations import load_expectations
from tools.verify.flags import image, name, path, seconds
from tools.verify.floors import FloorsError
from tools.verify.kubeconfig import KubeconfigError, kubeconfig_files
from tools.verify.report import Progress, all_passed, format_finding, summary_table, write_json_report
from tools.verify.runner import FAIL, CheckResult, Verification
from tools.verify.smoke import SmokeInterrupted, SmokeSettings

DEFAULT_TIMEOUT_S = 300.0
DEFAULT_METRICS_TIMEOUT_S = 90.0
# Both smoke workloads at their --timeout, the metrics read and every request at its limit fit in it.
DEFAULT_RUN_TIMEOUT_S = 1800.0


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m tools.verify", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--stack", default="dev", help="stack whose Pulumi.<stack>.yaml says what to expect (default: dev)"
    )
    parser.add_argument(
        "--kubeconfig", type=path, metavar="FILE", help="kubeconfig file (default: $KUBECONFIG or ~/.kube/config)"
    )
    parser.add_argument("--context", type=name, help="kubeconfig context (default: the file's current context)")
    parser.add_argument("--json", type=path, metavar="REPORT", help="also write a JSON report to this file")
    parser.add_argument("--skip-smoke", action="store_true", help="read-only: create no smoke workloads")
    parser.add_argument(
        "--timeout",
        type=seconds,
        default=DEFAULT_TIMEOUT_S,
        metavar="S",
        help=f"seconds a smoke pod may take to reach Running (default: {DEFAULT_TIMEOUT_S:.0f})",
    )
    parser.add_argument(
        "--metrics-timeout",
        type=seconds,
        default=DEFAULT_METRICS_TIMEOUT_S,
        metavar="S",
        help=(
            "seconds the GPU metrics exporter may take to name the GPU smoke pod and its claim "
            f"(default: {DEFAULT_METRICS_TIMEOUT_S:.0f})"
        ),
    )
    parser.add_argument(
        "--request-timeout",
        type=seconds,
        default=DEFAULT_REQUEST_TIMEOUT_S,
        metavar="S",
        help=(
            "seconds the API server may take to accept a connection and send its whole answer, for every request, "
            f"and to open the exec stream (default: {DEFAULT_REQUEST_TIMEOUT_S:.0f})"
        ),
    )
    parser.add_argument(
        "--run-timeout",
        type=seconds,
        metavar="S",
        help=(
            "seconds the whole verification may talk to the cluster; no request but the smoke objects' deletion "
            f"is sent or waited for after it (default: {DEFAULT_RUN_TIMEOUT_S:.0f}, plus --burn-in-timeout when the "
            "burn-in may run)"
        ),
    )
    parser.add_argument(
        "--exec-plugin-timeout",
        type=seconds,
        default=DEFAULT_EXEC_PLUGIN_TIMEOUT_S,
        metavar="S",
        help=(
            "seconds the kubeconfig's exec credential command (the `nebius` CLI) may run before it is killed "
            f"(default: {DEFAULT_EXEC_PLUGIN_TIMEOUT_S:.0f})"
        ),
    )
    parser.add_argument(
        "--image",
        type=image,
        # The default is the stack's own (tools/verify/expectations.py, smoke_image): the image its sample Pod runs.
        help=(
            "smoke pod image; the GPU smoke runs nvidia-smi in it (default: the stack's nebius-dra:sampleGpuImage, "
            "a pinned CUDA image unless the stack file sets another)"
        ),
    )
    add_burn_in_arguments(parser, seconds)
    return parsed_arguments(parser, argv)


def _terminate_as_interrupt(_signum: int, _frame: object) -> None:
    """A cancelled CI job sends SIGTERM: treat it like Ctrl-C so the smoke objects are deleted."""
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    previous_sigterm = signal.signal(signal.SIGTERM, _terminate_as_interrupt)
    try:
        return _verify(args)
    finally:
        signal.signal(signal.SIGTERM, previous_sigterm)


def _verify(args: argparse.Namespace) -> int:
    def refuse(message: str) -> int:
        return _refused(message, report=args.json)

    try:
        expect = load_expectations(check_stack_name(args.stack), args.image)
    except StackNameError as error:
        return refuse(f"--stack: {error}")
    except (FileNotFoundError, ConfigError) as error:
        return refuse(f"stack {shown(args.stack)}: {error}")
    except KeyboardInterrupt:
        print("\ninterrupted before the cluster was read: nothing was checked", file=sys.stderr)
        return 130
    if args.skip_smoke and args.burn_in:
        return refuse("--burn-in runs workloads on the GPU nodes and --skip-smoke creates none: give one of them")
    try:
        kubeconfig = args.kubeconfig.expanduser() if args.kubeconfig is not None else None
        check_distinct_files(
            [
                ("--json", args.json),
                ("--burn-in-state", args.burn_in_state),
                ("--burn-in-floors", args.burn_in_floors),
                *kubeconfig_flags(kubeconfig),
            ]
        )
        for flag, file, written in (
            ("--json", args.json, True),
            ("--burn-in-state", args.burn_in_state, True),
            ("--kubeconfig", kubeconfig, False),
        ):
            if file is not None:
                (check_output_flag if written else check_file_flag)(file, flag)
        if args.json is not None and not args.json.absolute().parent.is_dir():
            # The report is the run's record: a mistyped folder is refused now, not made, and not found after the run.
            return refuse(
                f"--json {shown(str(args.json))}: its folder {shown(str(args.json.absolute().parent))} does not exist; "
                "make it first, or give a report path in a folder that exists"
            )
        # Read whenever the burn-in is configured, even when --skip-smoke leaves it out: a broken file is never news
        # only on the day it first runs.
        settings = burn_in_settings(args)
    except InputError as error:
        return refuse(str(error))
    except FloorsError as error:
        return refuse(f"--burn-in-floors: {error}")
    burn_in = None if args.skip_smoke else settings
    run_timeout = args.run_timeout or DEFAULT_RUN_TIMEOUT_S + burn_in_budget_s(burn_in)
    try:
        cluster = KubeCluster.from_kubeconfig(
            None if kubeconfig is None else str(kubeconfig),
            args.context,
            request_timeout_s=args.request_timeout,
            exec_plugin_timeout_s=args.exec_plugin_timeout,
            run_deadline=time.monotonic() + run_timeout,
        )
    except ClusterError as error:
        return refuse(str(error))
    except KeyboardInterrupt:
        print("\ninterrupted before the cluster was read: nothing was checked", file=sys.stderr)
        return 130
    unverified = getattr(cluster, "tls_unverified", None)  # a test's stand-in cluster has no TLS
    if unverified is not None:
        # Said once here, in place of the urllib3 InsecureRequestWarning it would print for every request.
        warnings.simplefilter("ignore", urllib3.exceptions.InsecureRequestWarning)
        print(
            f"warning: TLS verification is off: the kubeconfig's {unverified} says "
            "insecure-skip-tls-verify: true, so the API server's certificate is not checked and anyone on the path "
            "could answer in its name",
            file=sys.stderr,
        )
    progress = Progress(sys.stderr, interactive=sys.stderr.isatty())
    smoke = None if args.skip_smoke else SmokeSettings(timeout_s=args.timeout, metrics_timeout_s=args.metrics_timeout)
    verification = Verification(cluster, expect, smoke, progress, burn_in=burn_in)
    results: list[CheckResult] = []
    interrupted = False
    try:
        results.extend(verification.run())
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
            print(redacted("".join(format_finding(finding) for finding in leftovers)), end="", file=sys.stderr)
        else:
            print(
                "\ninterrupted: nothing the verifier created is left in the cluster; the checks below are the ones that finished",
                file=sys.stderr,
            )
    print(redacted(summary_table(results, interrupted)), end="")
    if args.json:
        try:
            write_json_report(args.json, results, expect, interrupted, verification.unreachable, verification.unusable)
        except OSError as failure:
            return _refused(f"--json {args.json}: the report could not be written: {failure.strerror or failure}")
    if interrupted:
        return 130
    if verification.unreachable or verification.unusable:
        print(
            "error: the cluster could not be asked, or its answers could not be used (the failed step names why); exit 2",
            file=sys.stderr,
        )
        return 2
    return 0 if all_passed(results) else 1


def kubeconfig_flags(kubeconfig: Path | None) -> list[tuple[str, Path | None]]:
    """The kubeconfig file(s) the run reads, named as given: --kubeconfig, or the files of $KUBECONFIG or
    ~/.kube/config that it falls back to (a problem with those is said when they are read)."""
    if kubeconfig is not None:
        return [("--kubeconfig", kubeconfig)]
    try:
        files = kubeconfig_files(None)
    except KubeconfigError:
        return []
    return [("the kubeconfig (--kubeconfig left out: $KUBECONFIG or ~/.kube/config)", file) for file in files]


def _same_file(first: Path, second: Path) -> bool:
    try:
        return os.path.samefile(first, second)
    except OSError:  # one or both are not there yet: the paths they would be made at
        # realpath, not Path.resolve: a symlink loop raises RuntimeError there; here the flag's own check says it.
        return os.path.realpath(first.expanduser()) == os.path.realpath(second.expanduser())


def check_distinct_files(flags: Sequence[tuple[str, Path | None]]) -> None:
    """Refuses two file flags naming one file (a link or `./` included), before anything is read or written: the
    report or the burn-in state written over the kubeconfig would destroy its credentials."""
    given = [(flag, file) for flag, file in flags if file is not None]
    for index, (flag, file) in enumerate(given):
        for other, other_file in given[index + 1 :]:
            if _same_file(file, other_file):
                raise InputError(
                    f"{flag} {shown(str(file))} names the same file as {other} {shown(str(other_file))}; give each "
                    "its own file (one written over the other would destroy what it holds)"
                )


def _refused(message: str, report: Path | None = None) -> int:
    """A usage or input error: one message, escaped and redacted, and exit status 2; with the --json `report` asked
    for, the message says that none was written (nothing was checked), so a caller does not look for one; a refusal
    of the --json path itself already says so."""
    written = (
        f"\nno report was written to {report} (--json): nothing was checked"
        if report is not None and not message.startswith("--json ")
        else ""
    )
    print(f"error: {printable(redacted(message + written), lines=True)}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
