"""What a pinned Helm release installs, as plain data the components hand to Helm."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypedDict

from components.repository_model import ChartRepositoryConfig, RepositoryAccess

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
    # Credentials and TLS files for a repository the stack names (Helm's repository options), else None.
    access: RepositoryAccess | None = None
    timeout_seconds: int = RELEASE_TIMEOUT_SECONDS
    secret_values: bool = False


class ChartLocation(TypedDict):
    chart: str
    repository: str | None
    access: RepositoryAccess | None


def chart_location(chart: str, repository: ChartRepositoryConfig) -> ChartLocation:
    """Helm pulls an OCI chart by its full reference and no repository URL; a classic repository
    (https://, http://) takes the bare chart name and the repository URL. The access goes with either: for an OCI
    chart the Kubernetes provider logs in to the reference's registry with it, for a classic one Helm sends it to the
    repository's scheme, host and port only (pulumi-kubernetes v4.32.0-27-g94977969d, the provider e2e builds:
    provider/pkg/helm/tool.go NewRegistryClient, provider/pkg/provider/helm_release.go locateChart)."""
    if repository.url.startswith(OCI_SCHEME):
        return ChartLocation(chart=f"{repository.url}/{chart}", repository=None, access=repository.access)
    return ChartLocation(chart=chart, repository=repository.url, access=repository.access)


def chart_source(chart: str, repository: str | None) -> tuple[str, str | None]:
    """The chart's name and where Helm fetches it, from what a release registers (`chart_location`'s inverse): an
    OCI reference `oci://<repository>/<name>` is split, so a mirror is a change of repository on either scheme."""
    if chart.startswith(OCI_SCHEME) and "/" in chart[len(OCI_SCHEME) :]:
        where, name = chart.rsplit("/", 1)
        return name, where
    return chart, repository
