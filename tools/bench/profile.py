"""Where a plan's time goes: a cProfile of one run, summed by package.

cProfile's cumulative times nest (a program function's cumulative time includes the SDK calls
it makes), so the packages are compared by *own* time (cProfile's tottime, which adds up to
the whole run), and each package lists its functions with the largest cumulative time, which
say where to look. Time in the standard library and in built-ins (`typing` building the SDK's
generic types at import, `compile` behind frozen dataclasses, the asyncio loop) is charged to
the package that called it, through cProfile's record of each function's callers, split by the
time each caller's calls took; what only the interpreter calls stays `other`. cProfile slows
Python code several times over, so its seconds compare with each other, never with wall clock.
"""

from __future__ import annotations

import cProfile
import pstats
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from tools.bench import PROJECT_DIR

OTHER = "other"

# Package -> the path fragments of its modules. The SDK is what any program on this SDK runs: the
# Pulumi core, the provider SDKs, what they run on (gRPC, protobuf) and the mock engine standing in
# for the engine (the SDK floor runs it too). The benchmark's own harness is `other`.
PACKAGES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("pydantic", ("/pydantic/", "/pydantic_core/")),
    ("cel", ("/celpy/", "/cel_expr_python/", "/lark/")),
    (
        "sdk",
        ("/pulumi/", "/pulumi_kubernetes/", "/pulumi_nebius/", "/grpc/", "/google/protobuf/", "/plan/mock_engine.py"),
    ),
    (OTHER, ("/tools/bench/",)),
)
SUMMARY_PACKAGES = ("sdk", "program", "pydantic", "cel", OTHER)

FunctionKey = tuple[str, int, str]
Shares = dict[str, float]


@dataclass(frozen=True)
class FunctionCost:
    name: str
    own_seconds: float
    cumulative_seconds: float


@dataclass(frozen=True)
class PackageCost:
    package: str
    own_seconds: float
    top: tuple[FunctionCost, ...]


def package_of(filename: str) -> str:
    """The package a profiled function's file belongs to; the program is this repository outside its venv."""
    for package, fragments in PACKAGES:
        if any(fragment in filename for fragment in fragments):
            return package
    if filename.startswith(f"{PROJECT_DIR}/") and "/venv/" not in filename:
        return "program"
    return OTHER


def _function_name(key: FunctionKey) -> str:
    filename, line, name = key
    if not line:
        return name
    short = filename.removeprefix(f"{PROJECT_DIR}/")
    for marker in ("site-packages/", "lib/python3.11/"):
        short = short.split(marker, 1)[-1]
    return f"{short}:{line}({name})"


def charged_shares(stats: Mapping[FunctionKey, tuple]) -> dict[FunctionKey, Shares]:
    """For every function, which packages its own time is charged to.

    Its own package; for `other`, its callers' packages in proportion to the time of their
    calls (through `other` callers, theirs in turn). A cycle of `other` functions, or one with
    no recorded callers, stays `other`.
    """
    charged: dict[FunctionKey, Shares] = {}

    def shares_of(key: FunctionKey, path: frozenset[FunctionKey]) -> Shares:
        if key in charged:
            return charged[key]
        package = package_of(key[0])
        callers = stats[key][4]
        if package != OTHER or not callers or key in path:
            return charged.setdefault(key, {package: 1.0})
        total = sum(timing[2] for timing in callers.values())
        shares: Shares = {}
        for caller, timing in callers.items():
            weight = timing[2] / total if total else 1.0 / len(callers)
            for caller_package, share in shares_of(caller, path | {key}).items():
                shares[caller_package] = shares.get(caller_package, 0.0) + weight * share
        charged[key] = shares
        return shares

    for key in stats:
        shares_of(key, frozenset())
    return charged


def summarise(stats: Mapping[FunctionKey, tuple], top: int) -> list[PackageCost]:
    own: dict[str, float] = dict.fromkeys(SUMMARY_PACKAGES, 0.0)
    functions: dict[str, list[FunctionCost]] = {package: [] for package in SUMMARY_PACKAGES}
    charged = charged_shares(stats)
    for key, (_, _, own_seconds, cumulative, _) in stats.items():
        for package, share in charged[key].items():
            own[package] += own_seconds * share
        functions[package_of(key[0])].append(FunctionCost(_function_name(key), own_seconds, cumulative))
    return [
        PackageCost(package, own[package], tuple(sorted(costs, key=lambda f: -f.cumulative_seconds)[:top]))
        for package, costs in functions.items()
    ]


def profile_summary(work: Callable[[], object], top: int = 4) -> list[PackageCost]:
    """Runs `work` under cProfile; per package, the own time charged to it and its `top` functions by cumulative time."""
    profiler = cProfile.Profile()
    profiler.runcall(work)
    return summarise(pstats.Stats(profiler).stats, top)  # type: ignore[attr-defined]


def render_summary(label: str, costs: list[PackageCost]) -> list[str]:
    total = sum(cost.own_seconds for cost in costs) or 1.0
    lines = [f"profile: {label} (cProfile s; own time by package, then its top functions by cumulative time)"]
    for cost in costs:
        lines.append(f"  {cost.package:<8} {cost.own_seconds:7.3f} s  {cost.own_seconds / total:4.0%}")
        lines += [f"      {f.cumulative_seconds:7.3f} cum  {f.own_seconds:7.3f} own  {f.name}" for f in cost.top]
    return lines
