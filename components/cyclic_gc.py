"""The cyclic garbage collector off while a program builds its stack, back as it was after.

Every registration a program makes stays pending in the SDK (its Outputs, futures, tasks and their
contexts: about 360 objects a resource) until the event loop gets to it, so the heap grows with the
stack, and each full collection walks all of it for nothing: they are live. Measured with
`python -m tools.bench` at 4,019 resources (1,000 GPU groups, 2,000 templates): with the collector on,
its full collections were 17 walks of up to 2.7 million objects, over half the run's CPU time, and the
marginal cost of a resource rose by two thirds from 419 to 4,019 resources. The same holds, smaller,
for the imports: the project's validation models (pydantic 2) and the providers' modules are live for
the whole run, and dev's plan spent 0.09-0.17 s of its 1.5-2.4 s of CPU in 140 young and 14 older
collections of them (counted with `gc.callbacks`, 2026-12-03). What the collector would reclaim
meanwhile is the SDK's own cyclic garbage (a closure per `rpc.contains_unknowns` call, pulumi 3.272.0):
40 MB more peak memory at 4,019 resources (511 against 471 MB), collected once the collector is back.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def without_cyclic_gc(freeze_after: bool = False) -> Iterator[None]:
    """Off inside; after, on again only if it was on before, so a caller that turned it off keeps it off.

    `freeze_after`, for a process that runs one program and exits (the Pulumi CLI's language host): before the
    collector comes back, everything tracked so far is moved out of its reach (`gc.freeze`). Else its first young
    collection walks every object made inside, about 170,000 for dev (the validation models, the SDK's modules),
    its older ones walk them again, and so does the one at exit; they are live to the end anyway. What the SDK left
    as cyclic garbage inside stays until the process ends.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if freeze_after:
                gc.freeze()
            gc.enable()
