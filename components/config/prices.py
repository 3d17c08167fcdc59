"""Prices: the table in `prices/nebius.yaml` and a stack's `nebius-dra:priceOverrides`, as one `PriceTable`.

The schema (`PriceTableInput`) checks each entry's shape, bounds and dates; here are the rules
across entries: a GPU entry names a `gpu-` platform and a CPU entry does not, and no platform
(and, for GPUs, no preset) is priced twice in one document. What neither document prices stays
unpriced: the estimate never borrows a sibling preset's price.
"""

from __future__ import annotations

from collections.abc import Collection
from decimal import Decimal
from functools import lru_cache
from pathlib import Path

from pydantic import Field, ValidationError

from components.config.errors import (
    ConfigError,
    ConfigProblems,
    add_validation_problems,
    config_key,
    did_you_mean,
    shown,
)
from components.config.reading import parse_yaml, read_text
from components.config.stack_file import PROJECT_DIR
from components.gpu_platforms import GPU_PLATFORMS, TABLE_FILE
from components.input.fields import Shape
from components.input.prices import CpuRateInput, GpuRateInput, PriceTableInput
from components.model import CpuPrice, CpuRate, GpuPrice, GpuRate, PriceSource, PriceTable

PRICE_TABLE_FILE = PROJECT_DIR / "prices" / "nebius.yaml"
OVERRIDES_KEY = "priceOverrides"


class PriceTableError(ConfigError):
    """The price table file cannot be used; the message names the file, the entry and what is allowed."""


class _PriceFile(Shape):
    """The file as one field, so that each problem is reported as `<file>: gpu[0].onDemand.date ...`."""

    table: PriceTableInput = Field(description="expected a map {currency?, gpu?: [...], cpu?: [...]}")


def _label(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(PROJECT_DIR))
    except ValueError:
        return str(path)


def _gpu_rate(rate: GpuRateInput, origin: str, note: str | None, doubtful: str | None) -> GpuRate:
    return GpuRate(Decimal(str(rate.usdPerGpuHour)), PriceSource(rate.source, rate.date, origin, note, doubtful))


def _cpu_rate(rate: CpuRateInput, origin: str, note: str | None, doubtful: str | None) -> CpuRate:
    return CpuRate(
        Decimal(str(rate.usdPerVcpuHour)),
        Decimal(str(rate.usdPerGibHour)),
        PriceSource(rate.source, rate.date, origin, note, doubtful),
    )


def price_table_from_input(document: PriceTableInput, origin: str, where: str, problems: ConfigProblems) -> PriceTable:
    """The validated document as a `PriceTable`; entries that break a cross-entry rule are reported and left out."""
    gpu: list[GpuPrice] = []
    seen_presets: set[tuple[str, str]] = set()
    for index, entry in enumerate(document.gpu):
        place = f"{where}: gpu[{index}] ({entry.platform})"
        if not entry.platform.startswith("gpu-"):
            problems.add(place, f"platform {shown(entry.platform)} is not a GPU platform (gpu-...); price it under cpu")
            continue
        repeated = sorted(
            {p for p in entry.presets if (entry.platform, p) in seen_presets or entry.presets.count(p) > 1}
        )
        if repeated:
            problems.add(
                place, f"prices preset(s) {', '.join(repeated)} again; give each platform and preset one price"
            )
            continue
        seen_presets.update((entry.platform, preset) for preset in entry.presets)
        gpu.append(
            GpuPrice(
                platform=entry.platform,
                presets=tuple(entry.presets),
                on_demand=_gpu_rate(entry.onDemand, origin, entry.note, entry.doubtful),
                spot=_gpu_rate(entry.spot, origin, entry.note, entry.doubtful) if entry.spot else None,
            )
        )
    cpu: list[CpuPrice] = []
    for index, cpu_entry in enumerate(document.cpu):
        place = f"{where}: cpu[{index}] ({cpu_entry.platform})"
        if cpu_entry.platform.startswith("gpu-"):
            problems.add(
                place,
                f"platform {shown(cpu_entry.platform)} is a GPU platform; price it under gpu, per GPU and preset",
            )
            continue
        if any(existing.platform == cpu_entry.platform for existing in cpu):
            problems.add(place, "prices the platform again; give each CPU platform one entry")
            continue
        cpu.append(
            CpuPrice(
                platform=cpu_entry.platform,
                on_demand=_cpu_rate(cpu_entry.onDemand, origin, cpu_entry.note, cpu_entry.doubtful),
                spot=_cpu_rate(cpu_entry.spot, origin, cpu_entry.note, cpu_entry.doubtful) if cpu_entry.spot else None,
            )
        )
    return PriceTable(gpu=tuple(gpu), cpu=tuple(cpu))


@lru_cache(maxsize=8)
def _parse_table(text: str, label: str) -> PriceTable:
    problems = ConfigProblems()
    document = parse_yaml(text, label, PriceTableError)
    try:
        validated = _PriceFile.model_validate({"table": document}).table
    except ValidationError as error:
        add_validation_problems(problems, error, {"table": document}, _PriceFile, where_for=lambda _: label)
        raise PriceTableError(_heading(label, problems)) from None
    table = price_table_from_input(validated, label, label, problems)
    if problems.lines:
        raise PriceTableError(_heading(label, problems))
    return table


def _heading(label: str, problems: ConfigProblems) -> str:
    count = len(problems.lines)
    return "\n".join(
        [
            f"invalid price table {label} ({count} problem{'s' if count > 1 else ''}):",
            *(f"  - {line}" for line in problems.lines),
        ]
    )


def parse_price_table(text: str, label: str = "prices/nebius.yaml") -> PriceTable:
    """A price table from YAML text (for example another branch's file); `PriceTableError` names every problem."""
    return _parse_table(text, label)


def load_price_table(path: Path = PRICE_TABLE_FILE) -> PriceTable:
    """The project's price table (default `prices/nebius.yaml`); `PriceTableError` when it cannot be used."""
    return _parse_table(read_text(path, f"the price table {_label(path)}", PriceTableError), _label(path))


def _fits_no_group(
    overrides: PriceTableInput,
    key: str,
    gpu_groups: Collection[tuple[str, str, bool]],
    cpu: tuple[str, Collection[str]],
    problems: ConfigProblems,
) -> None:
    """Refuses each override of a known platform that prices no node of the stack: a GPU entry's presets no GPU group
    runs on its platform, a CPU entry of a platform other than the system nodes', and a spot rate no spot
    (preemptible) group would be priced at: a GPU entry's when no group of its platform and presets runs spot, a CPU
    entry's always (the system nodes are on-demand). Such an override would be taken and used nowhere, and whoever
    wrote it would believe the estimate holds their price."""
    system_platform, known_cpu = cpu
    run = {(platform, preset) for platform, preset, _ in gpu_groups}
    spot = {(platform, preset) for platform, preset, preemptible in gpu_groups if preemptible}
    runs = ", ".join(f"{platform} {preset}" for platform, preset in sorted(run)) or "none"
    capacities = (
        ", ".join(
            f"{platform} {preset} {'spot' if preemptible else 'on-demand'}"
            for platform, preset, preemptible in sorted(set(gpu_groups))
        )
        or "none"
    )
    for index, gpu in enumerate(overrides.gpu):
        if gpu.platform not in GPU_PLATFORMS:
            continue  # refused above as no platform Nebius lists
        place = f"{key}: gpu[{index}] ({gpu.platform})"
        unused = [preset for preset in gpu.presets if (gpu.platform, preset) not in run]
        if unused:
            problems.add(
                place,
                f"prices {gpu.platform} preset(s) {', '.join(shown(preset) for preset in unused)}, which no group "
                f"of {config_key('gpuNodeGroups')} runs (they run: {runs}), so it would price no node; price only "
                "what a group runs, or remove it",
            )
        elif gpu.spot is not None and not any((gpu.platform, preset) in spot for preset in gpu.presets):
            problems.add(
                f"{place}.spot",
                f"prices spot for {gpu.platform} {', '.join(gpu.presets)}, but no group of "
                f"{config_key('gpuNodeGroups')} running them is spot (preemptible: capacity.type spot; they run: "
                f"{capacities}), so the spot rate would price no node; remove spot, or run a group on spot",
            )
    for index, entry in enumerate(overrides.cpu):
        if entry.platform not in known_cpu and entry.platform != system_platform:
            continue  # an unknown platform, a GPU one among them, is refused above
        place = f"{key}: cpu[{index}] ({entry.platform})"
        if entry.platform != system_platform:
            problems.add(
                place,
                f"prices platform {shown(entry.platform)}, which no node group runs: only the system nodes run on a "
                f"CPU platform, and {config_key('systemNodePlatform')} is {system_platform}, so it would price no "
                f"node; price {system_platform}, or remove it",
            )
        elif entry.spot is not None:
            problems.add(
                f"{place}.spot",
                f"prices spot for {entry.platform}, but the only nodes on a CPU platform, the system nodes "
                f"({config_key('systemNodePlatform')} {system_platform}), run on-demand, never spot, so the spot rate "
                "would price no node; remove spot",
            )


def stack_prices(
    base: PriceTable | None,
    overrides: PriceTableInput,
    problems: ConfigProblems,
    system_platform: str,
    gpu_groups: Collection[tuple[str, str, bool]],
    fit_problems: ConfigProblems,
) -> PriceTable:
    """The table (the project's, unless `base` is given) with the stack's `priceOverrides` winning.

    A platform is checked against what is known of it, so that a misspelt one is refused by name rather than priced
    for no node or left unpriced: a GPU override's against the GPU platforms Nebius lists (components/gpu_platforms.py),
    a CPU override's against the table's CPU platforms and the stack's `systemNodePlatform` (an override may price a
    platform the table lacks, for the system nodes), and `systemNodePlatform` against the CPU platforms priced. An
    override of a known platform must then price a node the stack runs: a (platform, preset) of `gpu_groups` (each
    with whether it runs spot, so a spot rate prices a spot group), or the system nodes' platform (on-demand); its
    problems go to `fit_problems`, which holds them back while a group was refused."""
    table = load_price_table() if base is None else base
    key = config_key(OVERRIDES_KEY)
    stack = price_table_from_input(overrides, key, key, problems)
    for index, gpu in enumerate(overrides.gpu):
        if gpu.platform.startswith("gpu-") and gpu.platform not in GPU_PLATFORMS:
            problems.add(
                f"{key}: gpu[{index}] ({gpu.platform})",
                f"platform {shown(gpu.platform)} is no GPU platform Nebius lists"
                f"{did_you_mean(gpu.platform, GPU_PLATFORMS)} (known: {', '.join(GPU_PLATFORMS)}; "
                f"{TABLE_FILE.relative_to(TABLE_FILE.parents[2])}), so it prices no node",
            )
    known_cpu = [price.platform for price in table.cpu]
    for index, cpu in enumerate(overrides.cpu):
        if cpu.platform not in (*known_cpu, system_platform) and not cpu.platform.startswith("gpu-"):
            problems.add(
                f"{key}: cpu[{index}] ({cpu.platform})",
                f"platform {shown(cpu.platform)} is neither a CPU platform the price table knows "
                f"({', '.join(known_cpu)}) nor the stack's {config_key('systemNodePlatform')} "
                f"({system_platform}), so it prices no node{did_you_mean(cpu.platform, [*known_cpu, system_platform])}",
            )
    _fits_no_group(overrides, key, gpu_groups, (system_platform, known_cpu), fit_problems)
    priced = table.overridden_by(stack)
    priced_cpu = [price.platform for price in priced.cpu]
    if not system_platform.startswith("gpu-") and system_platform not in priced_cpu:
        problems.add(
            config_key("systemNodePlatform"),
            f"got {shown(system_platform)}, which is no CPU platform the price table knows"
            f"{did_you_mean(system_platform, priced_cpu)} (known: {', '.join(priced_cpu)}; prices/nebius.yaml): a "
            f"platform Nebius adds is priced there, or in {key}, with its source",
        )
    return priced
