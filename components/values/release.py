"""What a pinned Helm release installs, as plain data the components hand to Helm."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypedDict

RELEASE_TIMEOUT_SECONDS = 600
OCI_SCHEME = "oci://"


@dataclass(frozen=True)
class ReleaseSpec:
    """One pinned chart: installed atomically (a failed install rolls back) into its own namespace."""

    release_name: str
    chart: str
    version: str
    namespace: str
    values: dict[str, Any]
    repository: str | None
    timeout_seconds: int = RELEASE_TIMEOUT_SECONDS
    secret_values: bool = False


class ChartLocation(TypedDict):
    chart: str
    repository: str | None


def chart_location(chart: str, repository: str) -> ChartLocation:
    """Helm pulls an OCI chart by its full reference and no repository option; a classic repository
    (https://, http://) takes the bare chart name and the repository URL."""
    if repository.startswith(OCI_SCHEME):
        return ChartLocation(chart=f"{repository}/{chart}", repository=None)
    return ChartLocation(chart=chart, repository=repository)


def chart_source(chart: str, repository: str | None) -> ChartLocation:
    """The chart's name and where Helm fetches it, from what a release registers (`chart_location`'s inverse): an
    OCI reference `oci://<repository>/<name>` is split, so a mirror is a change of repository on either scheme."""
    if chart.startswith(OCI_SCHEME) and "/" in chart[len(OCI_SCHEME) :]:
        where, name = chart.rsplit("/", 1)
        return ChartLocation(chart=name, repository=where)
    return ChartLocation(chart=chart, repository=repository)
