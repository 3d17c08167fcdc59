"""The burn-in's command-line options (`python -m tools.verify --burn-in ...`), kept beside the step they set."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from tools.verify.burnin import DEFAULT_BURN_IN_TIMEOUT_S, DEFAULT_STATE_FILE, BurnInSettings
from tools.verify.burnin_job import DEFAULT_BINARY, DEFAULT_IMAGE
from tools.verify.flags import absolute_file, image, path
from tools.verify.floors import floors_for_run


def add_burn_in_arguments(parser: argparse.ArgumentParser, seconds: Callable[[str], float]) -> None:
    group = parser.add_argument_group(
        "burn-in",
        "NCCL all_reduce_perf over each GPU group, one pod per node, through the stack's claim templates; it runs "
        "by default when the GPU groups or their nodes changed since the last passing burn-in on this cluster "
        "(docs/verify.md, Burn-in)",
    )
    choice = group.add_mutually_exclusive_group()
    choice.add_argument("--burn-in", dest="burn_in", action="store_true", default=None, help="run the burn-in")
    choice.add_argument("--no-burn-in", dest="burn_in", action="store_false", help="do not run the burn-in")
    group.add_argument(
        "--burn-in-timeout",
        type=seconds,
        default=DEFAULT_BURN_IN_TIMEOUT_S,
        metavar="S",
        help=f"seconds one group's burn-in Job may run, start to end (default: {DEFAULT_BURN_IN_TIMEOUT_S:.0f})",
    )
    group.add_argument(
        "--burn-in-image",
        default=DEFAULT_IMAGE,
        type=image,
        help=f"image with mpirun, sshd and nccl-tests (default: {DEFAULT_IMAGE})",
    )
    group.add_argument(
        "--burn-in-binary",
        default=DEFAULT_BINARY,
        type=absolute_file(DEFAULT_BINARY),
        help=f"all_reduce_perf in that image (default: {DEFAULT_BINARY})",
    )
    group.add_argument(
        "--burn-in-floors",
        type=path,
        metavar="FILE",
        help="the stack's own bus-bandwidth floors (the shape of tools/verify/nccl_floors.yaml); its entries come first",
    )
    group.add_argument(
        "--burn-in-state",
        type=path,
        default=DEFAULT_STATE_FILE,
        metavar="FILE",
        help=f"where the last passing burn-in per stack and cluster is kept (default: {DEFAULT_STATE_FILE})",
    )


def burn_in_settings(args: argparse.Namespace) -> BurnInSettings:
    """Raises FloorsError for a floors file that cannot be used (exit 2, before the cluster is asked)."""
    return BurnInSettings(
        requested=args.burn_in,
        timeout_s=args.burn_in_timeout,
        start_timeout_s=args.timeout,
        image=args.burn_in_image,
        binary=args.burn_in_binary,
        floors=floors_for_run(args.burn_in_floors),
        state_file=args.burn_in_state,
    )


def burn_in_budget_s(settings: BurnInSettings | None) -> float:
    """What the burn-in may add to the run's time limit: its timeout, when it may run at all."""
    return 0.0 if settings is None or settings.requested is False else settings.timeout_s
