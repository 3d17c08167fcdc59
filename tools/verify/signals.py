"""Ctrl-C and SIGTERM held back across a step that must not be cut in two.

A cleanup (the smoke workload's, the burn-in's) must run to its end once begun, and starting a child process must
not be cut between the fork and the caller holding its handle: a Ctrl-C there leaves a child nothing will stop.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def signals_deferred() -> Iterator[list[int]]:
    """Holds Ctrl-C and SIGTERM until the block ends; yields what arrived, for the caller to act on after it.

    Off the main thread Python runs no signal handler (and `signal.signal` refuses to install one), so there is
    nothing to hold: the block runs as it is."""
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return
    previous = {
        sig: signal.signal(sig, lambda number, _frame: received.append(number))
        for sig in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        yield received
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
