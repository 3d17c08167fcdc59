"""Where a chart is pulled from, and how the stack logs in to a private repository or registry.

Kept beside `components/model.py` (one concept per file): the DRA driver's, the Operators', the metrics' and
Kueue's models each hold a `ChartRepositoryConfig`.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class RepositoryAccess:
    """Helm's repository options besides the URL, as pulumi-kubernetes 4.34.2 takes them
    (`helm.v3.RepositoryOptsArgs`: `username`, `password`, `ca_file`, `cert_file`, `key_file`): basic-auth
    credentials for a classic repository or an OCI registry, and the TLS files of the machine that runs Pulumi.

    The password is never part of a repr; the release receives it as a Pulumi secret (components/release.py).
    """

    username: str = ""
    password: str = field(default="", repr=False)
    # The username was set with `pulumi config set --secret`: the release keeps it secret too.
    secret_username: bool = False
    ca_file: str = ""
    cert_file: str = ""
    key_file: str = ""


@dataclass(frozen=True)
class ChartRepositoryConfig:
    """A chart's repository URL (no trailing slash); `access` only when the stack names this repository (a mirror),
    never for a chart's upstream default, so no credential goes to a host the user did not name."""

    url: str
    access: RepositoryAccess | None = None
