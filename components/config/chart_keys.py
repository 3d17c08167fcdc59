"""The value keys each supported chart reads, so a misspelt override in draDriverValues or gpuMetricsValues is refused.

Helm ignores a value no template reads without a word: `serviceMonitr: {enabled: true}` installs
the chart's default and the user never learns why nothing changed. The key lists live in
`components/chart_keys/<chart>-<version>.keys`, one dotted path a line, each file naming in its
header what it was read from (the release's values.yaml, and the templates for keys values.yaml
does not write). A path ending in `.*` is a map any key may go under: one the chart leaves empty
for the user, or one its templates hand to Kubernetes whole. Below any other key the chart
defines no nesting of its own (a list, a number, a string), so a map there is not looked into.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from components.config.errors import path_text
from components.redaction import redacted

CHART_KEYS_DIR = Path(__file__).resolve().parents[1] / "chart_keys"
OPEN_MAP = ".*"


@dataclass(frozen=True)
class ChartKeys:
    """The dotted paths of one chart release's values, and the maps under which any key is allowed."""

    chart: str
    file_name: str
    paths: frozenset[str]
    open_maps: frozenset[str]

    def under(self, parent: str) -> list[str]:
        """The keys the chart defines directly under `parent` ("" for the top level), sorted."""
        prefix = f"{parent}." if parent else ""
        names = [path[len(prefix) :] for path in sorted(self.paths | self.open_maps) if path.startswith(prefix)]
        return sorted({name for name in names if name and "." not in name})


def keys_file(chart: str, version: str) -> Path:
    return CHART_KEYS_DIR / f"{chart}-{version}.keys"


@lru_cache(maxsize=8)
def chart_keys(chart: str, version: str) -> ChartKeys:
    """The key list of `chart` at `version`, read from its file in components/chart_keys/."""
    lines = [line for line in keys_file(chart, version).read_text().splitlines() if line and not line.startswith("#")]
    return ChartKeys(
        chart=f"{chart} {version}",
        file_name=keys_file(chart, version).name,
        paths=frozenset(line for line in lines if not line.endswith(OPEN_MAP)),
        open_maps=frozenset(line[: -len(OPEN_MAP)] for line in lines if line.endswith(OPEN_MAP)),
    )


# The unknown keys told one by one; the rest are counted. A value of 0.9 MB of unknown keys gave 30 MB of problems
# (issue 37): each line names the key, the chart's keys and a close match, so the output grows with the input.
MAX_UNKNOWN_LISTED = 20


def unknown_key_problems(values: Mapping[str, Any], keys: ChartKeys) -> list[str]:
    """One complaint for each of the first `MAX_UNKNOWN_LISTED` keys of `values` the chart does not read, with the
    closest known key if one is near, and one line counting the rest."""
    unknown = _unknown_below(values, keys, ())
    problems = [
        f"{path_text([*parent, key])} {_unknown_key(str(key), '.'.join(parent), keys)}"
        for parent, key in unknown[:MAX_UNKNOWN_LISTED]
    ]
    if len(unknown) > MAX_UNKNOWN_LISTED:
        problems.append(f"and {len(unknown) - MAX_UNKNOWN_LISTED} more keys chart {keys.chart} does not read")
    return problems


def _unknown_below(
    values: Mapping[str, Any], keys: ChartKeys, parent: tuple[str, ...]
) -> list[tuple[tuple[str, ...], Any]]:
    """Each key of `values` the chart does not read, as (its parent's path, the key)."""
    unknown: list[tuple[tuple[str, ...], Any]] = []
    dotted_parent = ".".join(parent)
    for key, value in values.items():
        dotted = f"{dotted_parent}.{key}" if parent else str(key)
        if dotted in keys.open_maps:
            continue
        if dotted not in keys.paths:
            unknown.append((parent, key))
        elif isinstance(value, Mapping) and keys.under(dotted):
            unknown.extend(_unknown_below(value, keys, (*parent, str(key))))
    return unknown


def _unknown_key(key: str, parent: str, keys: ChartKeys) -> str:
    known = keys.under(parent)
    there = f"under {parent}" if parent else "at the top level"
    said = f"is not a value of chart {keys.chart} (components/chart_keys/{keys.file_name})"
    close = difflib.get_close_matches(key, known, n=1)
    if close:
        return f"{said}; did you mean {'.'.join(filter(None, (parent, close[0])))}?"
    return f"{said}; the chart's keys {there}: {', '.join(known) or 'none'}"


def credential_shaped_paths(values: Any, parent: tuple[Any, ...] = ()) -> list[str]:
    """The path of each text of a chart values document (a leaf or a map key) that the redactor rewrites
    (`components.redaction.redacted`): a credential's shape. Set in plain text, such a value would reach the release
    (and the state) in clear while the plan's values file, redacted leaf by leaf, shows another value."""
    found: list[str] = []
    pending: list[tuple[tuple[Any, ...], Any]] = [(parent, values)]
    while pending:
        path, value = pending.pop(0)
        if isinstance(value, Mapping):
            for key, item in value.items():
                if isinstance(key, str) and redacted(key) != key:
                    found.append(path_text([*path, key]))
                pending.append(((*path, key), item))
        elif isinstance(value, list):
            pending.extend(((*path, index), item) for index, item in enumerate(value))
        elif isinstance(value, str) and redacted(value) != value:
            found.append(path_text(path))
    return found
