"""Where each chart is pulled from: every release's repository is a setting, so a mirror can serve them all.

An air-gapped or proxied cluster pulls its charts from a mirror (a Harbor or Artifactory project, a
classic repository on a private host); the stack's upstream repositories are only the defaults.

A mirror that needs a login gets it from the `chartRepository*` settings, never from its URL (a credential in
a URL would reach the release's inputs, the state and the plan in clear): Helm's repository options, a username
and a password (set as a secret) for basic authentication of a classic repository or an OCI registry, and TLS
files. They go to every repository the stack names and to no upstream default, so all the named repositories
must be on one host: one login is never sent to a host it was not meant for, an upstream default's host neither
(a default written into a key is a named repository).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Collection, Mapping
from urllib.parse import urlsplit

from components.config.errors import ConfigProblems, config_key, shown
from components.dra_constants import (
    DCGM_EXPORTER_REPOSITORY,
    KUBERNETES_OCI_REPOSITORY,
    NGC_REPOSITORY,
    PROMETHEUS_COMMUNITY_REPOSITORY,
)
from components.input.stack import StackInput
from components.model import StackConfig
from components.queue_model import KUEUE_REPOSITORY
from components.repository_model import ChartRepositoryConfig, RepositoryAccess

USERNAME_KEY = "chartRepositoryUsername"
PASSWORD_KEY = "chartRepositoryPassword"
CERT_FILE_KEY = "chartRepositoryCertFile"
KEY_FILE_KEY = "chartRepositoryKeyFile"
CA_FILE_KEY = "chartRepositoryCaFile"
# Each setting and the field of Helm's repository options it fills.
ACCESS_FIELDS = {
    USERNAME_KEY: "username",
    PASSWORD_KEY: "password",
    CA_FILE_KEY: "ca_file",
    CERT_FILE_KEY: "cert_file",
    KEY_FILE_KEY: "key_file",
}
ACCESS_KEYS = tuple(ACCESS_FIELDS)
# The port a repository URL without one is reached on: HTTP's and HTTPS's (RFC 9110 sections 4.2.1 and 4.2.2); an
# OCI registry is reached over HTTPS (OCI distribution-spec, "registry API"), as Helm's OCI client does.
DEFAULT_PORTS = {"http": 80, "https": 443, "oci": 443}
_PORT = re.compile(r":([0-9]+)$")
# Every chart's upstream default, by host: public repositories that serve anyone and ask no login, so a login a
# repository key sends there was meant for a mirror (a default copied into the key, or a mirror's URL mistyped).
UPSTREAM_REPOSITORIES = {
    urlsplit(url).hostname or "": url
    for url in (
        NGC_REPOSITORY,
        KUBERNETES_OCI_REPOSITORY,
        DCGM_EXPORTER_REPOSITORY,
        PROMETHEUS_COMMUNITY_REPOSITORY,
        KUEUE_REPOSITORY,
    )
}
# NGC also serves private organisations' charts on its upstream's host, logged in to with an NGC API key: the user
# is this literal text and the password the key (NGC's documentation, "Generating Your NGC API Key"). Such a login
# is NGC's own, so it may go to NGC's host; any other login there was meant for another host.
NGC_API_KEY_USER = "$oauthtoken"


def chart_repository(given: str, upstream: str, access: RepositoryAccess | None = None) -> ChartRepositoryConfig:
    """The stack's mirror when it names one, with the stack's access, else the chart's upstream without it; no
    trailing slash either way."""
    if given:
        return ChartRepositoryConfig(given.rstrip("/"), access)
    return ChartRepositoryConfig(upstream.rstrip("/"))


def _pair_problem(settings: StackInput, first: str, second: str, what: str, problems: ConfigProblems) -> bool:
    """One of two keys that Helm uses only together is set without the other: refused, naming both."""
    given = [key for key in (first, second) if getattr(settings, key)]
    if len(given) != 1:
        return False
    (set_key,) = given
    missing = second if set_key == first else first
    value = "is set" if set_key == PASSWORD_KEY else f"got {shown(getattr(settings, set_key))}"
    problems.add(
        config_key(set_key),
        f"{value}, but {config_key(missing)} is empty: {what}; set both, or neither",
    )
    return True


def repository_access(
    settings: StackInput, secret_keys: Collection[str], problems: ConfigProblems
) -> RepositoryAccess | None:
    """The `chartRepository*` settings as Helm's repository options, or None when none is set (or one is refused)."""
    if not any(getattr(settings, key) for key in ACCESS_KEYS):
        return None
    refused = _pair_problem(
        settings,
        USERNAME_KEY,
        PASSWORD_KEY,
        "basic authentication sends a username and a password together (the Kubernetes provider logs in to an OCI "
        "registry only with both)",
        problems,
    )
    refused |= _pair_problem(
        settings,
        CERT_FILE_KEY,
        KEY_FILE_KEY,
        "a TLS client certificate is presented with its private key",
        problems,
    )
    if settings.chartRepositoryPassword and PASSWORD_KEY not in secret_keys:
        problems.add(
            config_key(PASSWORD_KEY),
            "is set in plain text, but it is the password of a chart repository: set it as a secret, "
            f"`pulumi config set {config_key(PASSWORD_KEY)} --secret < password-file` (and remove the plain value; it "
            "is not shown); to plan offline without the Pulumi CLI, put a `secure:` placeholder in its place "
            "(docs/configuration.md, Writing a secret)",
        )
        refused = True
    if refused:
        return None
    return RepositoryAccess(
        **{field: getattr(settings, key) for key, field in ACCESS_FIELDS.items()},
        secret_username=USERNAME_KEY in secret_keys,
    )


def release_repositories(config: StackConfig) -> dict[str, ChartRepositoryConfig]:
    """Each release's repository by the key that names it, as users write it."""
    return {
        config_key("draDriverRepository"): config.driver.repository,
        config_key("gpuOperatorRepository"): config.driver.gpu_operator_repository,
        config_key("networkOperatorRepository"): config.driver.network_operator_repository,
        config_key("dcgmExporterRepository"): config.observability.repository,
        config_key("kubePrometheusStackRepository"): config.observability.kube_prometheus_stack_repository,
        f"{config_key('queues')}: repository": config.queues.repository,
    }


def _loopback(url: str) -> bool:
    """A repository on this machine's loopback interface (RFC 6890: 127.0.0.0/8 and ::1; RFC 6761 section 6.3:
    localhost): an http:// login to it never crosses a network, so it is not sent in clear to anyone."""
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _host(url: str) -> str:
    """scheme://host:port, what Helm compares before it sends a classic repository's credentials on, normalised as
    RFC 3986 section 6.2.2.1 (scheme and host are case-insensitive) and 6.2.3 (a scheme's default port given or left
    out is one port) compare URLs; an IPv6 literal keeps its brackets."""
    parts = urlsplit(url)
    scheme, host = parts.scheme.lower(), parts.hostname or ""
    port = _PORT.search(parts.netloc)
    return f"{scheme}://{f'[{host}]' if ':' in host else host}:{int(port[1]) if port else DEFAULT_PORTS[scheme]}"


def mirror_access_problems(
    access: RepositoryAccess | None, mirrors: Mapping[str, ChartRepositoryConfig], problems: ConfigProblems
) -> None:
    """An access needs a repository the stack names, and every named repository on one host.

    `mirrors` are the releases' repositories (`release_repositories`); those with the access are the ones the
    stack names.
    """
    if access is None:
        return
    given = ", ".join(config_key(key) for key in ACCESS_KEYS if _is_set(access, key))
    verb = "are" if "," in given else "is"
    hosts: dict[str, list[str]] = {}
    for key, repository in mirrors.items():
        if repository.access is not None:
            hosts.setdefault(_host(repository.url), []).append(key)
    login = [config_key(key) for key in (USERNAME_KEY, PASSWORD_KEY) if _is_set(access, key)]
    plain_http = [
        key for key, repository in mirrors.items() if repository.access and repository.url.startswith("http://")
    ]
    in_clear = [key for key in plain_http if not _loopback(mirrors[key].url)]
    tls = [config_key(key) for key in (CA_FILE_KEY, CERT_FILE_KEY, KEY_FILE_KEY) if _is_set(access, key)]
    if tls and plain_http:
        problems.add(
            ", ".join(tls),
            f"{'are' if len(tls) > 1 else 'is'} set, but {', '.join(plain_http)} {'are' if len(plain_http) > 1 else 'is'} "
            "an http:// repository, which no TLS file applies to (plain HTTP has no certificate to check, and none "
            "to present): serve the mirror over https:// or oci://, or remove them",
        )
    if login and in_clear:
        problems.add(
            ", ".join(login),
            f"would be sent in clear to {', '.join(in_clear)}, an http:// repository (basic authentication only "
            "encodes them, RFC 7617 section 4): serve the mirror over https://, or pull from it without a login",
        )
    if login:
        _upstream_login_problems(access, login, mirrors, problems)
    if not hosts:
        problems.add(
            given,
            f"{verb} set, but no chart repository is: the login and TLS files go only to a repository the "
            f"stack names ({', '.join(mirrors)}), never to a chart's upstream default; set the mirror's repository, "
            "or remove them",
        )
    elif len(hosts) > 1:
        listed = "; ".join(f"{', '.join(keys)} on {host}" for host, keys in sorted(hosts.items()))
        problems.add(
            given,
            f"{verb} sent to every chart repository the stack names, and those are on {len(hosts)} hosts ({listed}): one "
            "login is never sent to a host it was not meant for; serve the charts from one mirror, or leave the "
            "others at their upstream default",
        )


def _upstream_login_problems(
    access: RepositoryAccess, login: list[str], mirrors: Mapping[str, ChartRepositoryConfig], problems: ConfigProblems
) -> None:
    """A login is refused for a repository key that names the host of a chart's upstream default (the default
    written out, or another path on its host): the key gets the login as any named repository does, and that host is
    a public one the login was not made for."""
    for key, repository in mirrors.items():
        host = (urlsplit(repository.url).hostname or "").lower()
        upstream = UPSTREAM_REPOSITORIES.get(host)
        if repository.access is None or upstream is None:
            continue
        if upstream == NGC_REPOSITORY and access.username == NGC_API_KEY_USER:
            continue
        ngc = f" (an NGC API key logs in there with the user {NGC_API_KEY_USER})" if upstream == NGC_REPOSITORY else ""
        problems.add(
            ", ".join(login),
            f"would be sent to {host}, which {key} names: the host of the upstream default {upstream}, a public "
            f"repository that needs no login{ngc}, and a login goes only to a mirror; leave {key} empty to pull the "
            "chart from upstream without the login, or set it to the mirror",
        )


def _is_set(access: RepositoryAccess, key: str) -> bool:
    return bool(getattr(access, ACCESS_FIELDS[key]))
