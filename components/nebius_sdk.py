"""`pulumi_nebius`, imported when a Nebius resource or Args is first built, not when the program starts.

The package's `__init__` imports every one of its ~260 generated modules (pulumi-nebius 0.6.73,
`pulumi_nebius/__init__.py`): about 0.17 s of CPU on this project's 2-core machine, paid by each
run of the program in the Python host (twice in a `pulumi up`: its preview, then the update).
A stack on an existing cluster registers no Nebius resource, so it never pays it. The module is
the standard library's lazy one (`importlib.util.LazyLoader`, Python 3.11 docs, "Implementing
lazy imports"): executed on first attribute access, so type hints still resolve through it.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType
from typing import TYPE_CHECKING


def lazy_module(name: str) -> ModuleType:
    """`name` as a module that is executed on its first attribute access (at once when it is already imported)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"no module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module


if TYPE_CHECKING:
    import pulumi_nebius as nebius
else:
    nebius = lazy_module("pulumi_nebius")

__all__ = ["lazy_module", "nebius"]
