"""A benchmark stopped by Ctrl-C or SIGTERM unwinds: one line, exit 128 + the signal, its scratch cleaned up.

Unhandled, SIGTERM ended Python without running a `finally` or a `with` exit: `make bench` left its scratch
directory (8 MB of shapes with the fleets) in /tmp, and `make bench-cli` or `make bench-e2e` would leave a control
plane and a Pulumi CLI's plugins running. Ctrl-C unwound but printed a `KeyboardInterrupt` traceback.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable


class Terminated(BaseException):
    """SIGTERM as an exception, so the stack unwinds as it does for Ctrl-C (no `except Exception` catches it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def run_interruptible(prog: str, measure: Callable[[], int]) -> int:
    """`measure()`'s exit status; 130 after Ctrl-C and 143 after SIGTERM, each with one line on stderr."""

    def terminated(signum: int, frame: object) -> None:
        raise Terminated(signum)

    previous = signal.signal(signal.SIGTERM, terminated)
    try:
        return measure()
    except KeyboardInterrupt:
        print(f"{prog}: interrupted; nothing reported", file=sys.stderr)
        return 128 + signal.SIGINT
    except Terminated as ended:
        print(f"{prog}: terminated; nothing reported", file=sys.stderr)
        return 128 + ended.signum
    finally:
        signal.signal(signal.SIGTERM, previous)
