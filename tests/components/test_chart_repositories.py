"""Every chart the stack installs can come from a mirror: the repository is a setting, upstream is the default.

A mirror that needs a login gets Helm's repository options from the `chartRepository*` settings: a username and a
secret password, TLS files; they go with every repository the stack names and with no upstream default.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import pulumi
import pytest
import yaml
from pulumi.runtime import rpc
from pulumi.runtime.sync_await import _sync_await

from components.config.stack_file import load_stack_config
from components.dra_constants import (
    DCGM_EXPORTER_REPOSITORY,
    GPU_OPERATOR_CHART,
    KUBE_PROMETHEUS_STACK_CHART,
    LEGACY_CHART,
    NETWORK_OPERATOR_CHART,
    NGC_REPOSITORY,
    PROMETHEUS_COMMUNITY_REPOSITORY,
    RENAMED_CHART,
)
from components.input.fields import CHART_REPOSITORY_RULE, url_problem
from components.release import REPOSITORY_OPTS, repository_options
from components.repository_model import RepositoryAccess
from components.values.release import ReleaseSpec
from tests.kubernetes_manifests import releases
from tools.plan.mock_engine import ProgramRun, RegisteredResource, run_program

MIRROR = "https://charts.mirror.example:8443/proxy/nvidia"
OCI_MIRROR = "oci://harbor.example/charts"
DCGM_EXPORTER_CHART = "dcgm-exporter"

# Which key moves which chart; the operators appear only on prod without its driversPresets.
CHART_KEYS = {
    LEGACY_CHART: "draDriverRepository",
    GPU_OPERATOR_CHART: "gpuOperatorRepository",
    NETWORK_OPERATOR_CHART: "networkOperatorRepository",
    DCGM_EXPORTER_CHART: "dcgmExporterRepository",
    KUBE_PROMETHEUS_STACK_CHART: "kubePrometheusStackRepository",
}
UPSTREAM = {
    LEGACY_CHART: NGC_REPOSITORY,
    GPU_OPERATOR_CHART: NGC_REPOSITORY,
    NETWORK_OPERATOR_CHART: NGC_REPOSITORY,
    DCGM_EXPORTER_CHART: DCGM_EXPORTER_REPOSITORY,
    KUBE_PROMETHEUS_STACK_CHART: PROMETHEUS_COMMUNITY_REPOSITORY,
}


def every_release_stack(secret: Mapping[str, str] | None = None, **settings: str) -> ProgramRun:
    """prod in operator mode with kube-prometheus-stack: all five charts are installed. `secret` keys are set as
    `pulumi config set --secret` sets them."""
    config = dict(load_stack_config("prod"))
    groups = yaml.safe_load(config["nebius-dra:gpuNodeGroups"])
    config["nebius-dra:gpuNodeGroups"] = json.dumps(
        [{key: value for key, value in group.items() if key != "driversPreset"} for group in groups]
    )
    config["nebius-dra:kubePrometheusStack"] = "true"
    config.update({f"nebius-dra:{key}": value for key, value in {**settings, **(secret or {})}.items()})
    return run_program("prod", config=config, secret_keys=[f"nebius-dra:{key}" for key in secret or {}])


def release_of(run: ProgramRun, chart: str) -> RegisteredResource:
    (release,) = releases(run, chart)
    return release


def test_without_settings_every_chart_comes_from_its_upstream_repository():
    run = every_release_stack()
    assert run.error is None, run.error
    for chart, repository in UPSTREAM.items():
        release = release_of(run, chart)
        assert (release.inputs["chart"], release.inputs["repositoryOpts"]) == (chart, {"repo": repository}), chart


@pytest.mark.parametrize("chart", list(CHART_KEYS))
def test_a_classic_mirror_moves_only_its_own_chart(chart):
    run = every_release_stack(**{CHART_KEYS[chart]: MIRROR + "/"})
    assert run.error is None, run.error
    for other, repository in UPSTREAM.items():
        expected = MIRROR if other == chart else repository
        assert release_of(run, other).inputs["repositoryOpts"] == {"repo": expected}, other


@pytest.mark.parametrize("chart", list(CHART_KEYS))
def test_an_oci_mirror_is_pulled_by_the_charts_full_reference(chart):
    run = every_release_stack(**{CHART_KEYS[chart]: OCI_MIRROR})
    assert run.error is None, run.error
    release = release_of(run, chart)
    assert release.inputs["chart"] == f"{OCI_MIRROR}/{chart}"
    assert release.inputs.get("repositoryOpts") is None


def test_the_renamed_driver_chart_takes_a_mirror_too():
    run = every_release_stack(draDriverChart=RENAMED_CHART, draDriverRepository=MIRROR)
    assert run.error is None, run.error
    assert release_of(run, RENAMED_CHART).inputs["repositoryOpts"] == {"repo": MIRROR}


@pytest.mark.parametrize("key", sorted(set(CHART_KEYS.values())))
@pytest.mark.parametrize(
    ("given", "problem"),
    [
        ("https://robot:hunter2@charts.example/nvidia", "it has a user or password part (before an @)"),
        ("ftp://charts.example/nvidia", 'its scheme is "ftp"'),
        ("charts.example/nvidia", "it has no scheme (https://, http:// or oci://)"),
        ("https://charts.example/nvidia\n", "character 30 is U+000A"),
        ("https://charts.example/nvidia?token=abc", "it has a query (?...)"),
        ("https://charts.example/nvidia#top", "it has a fragment (#...)"),
        ("https://charts.example:99999/nvidia", "its port is 99999: 1 to 65535"),  # hostile review: it was taken
        ("oci://charts.example:65536/nvidia", "its port is 65536: 1 to 65535"),
        ("https://charts.example:0/nvidia", "its port is 0: 1 to 65535"),
        # Hostile review a40 #3: a look-alike '@' (or none) left the userinfo quoted.
        ("https://robot:hunter2\uff20charts.example/nvidia", "it has a user or password part"),
        ("oci://robot:hunter2\ufe6bcharts.example/nvidia", "it has a user or password part"),
        ("https://robot:hunter2%40charts.example/nvidia", "it has a user or password part"),
        ("https://robot:hunter2/nvidia", "its port (after ':') is not a number"),
        # Hostile review a40 #12: a host of no valid labels, an IPv6 literal that is none.
        ("https://charts..example/nvidia", 'its host\'s label 2 is ""'),
        ("https://-charts.example/nvidia", 'its host\'s label 1 is "-charts"'),
        ("https://charts-.example/nvidia", 'its host\'s label 1 is "charts-"'),
        (f"https://{'a' * 64}.example/nvidia", "its host's label 1 is"),
        ("https://charts_mirror.example/nvidia", 'its host\'s label 1 is "charts_mirror"'),
        ("https://[::::]/nvidia", "its host in brackets is no IPv6 address"),
        ("oci://[1:2:3]:8443/nvidia", "its host in brackets is no IPv6 address"),
        # Hostile review round five: dot segments, which a client removes before it fetches (RFC 3986 5.2.4).
        ("https://charts.example/mirror/../nvidia", 'the path\'s segment 2 is "..", which a client removes'),
        ("https://charts.example/mirror/%2e%2e/nvidia", 'the path\'s segment 2 is "..", percent-encoded'),
        ("oci://charts.example/./nvidia", 'the path\'s segment 1 is "."'),
        ("https://charts.example/%2E/nvidia", 'the path\'s segment 1 is ".", percent-encoded'),
        ("https://charts.example/a//nvidia", "the path's segment 2 is empty ('//')"),
        ("https://charts.example/" + "a" * 240, "it has 263 characters, over the limit of 255"),
    ],
)
def test_a_refused_repository_names_the_part_that_failed_then_the_rule(key, given, problem):
    """Issue 37: one rule of 450 characters did not say which part failed; the refusal names it (what may hold a
    credential described, never quoted), then the rule as one short `allowed:` line."""
    run = every_release_stack(**{key: given})
    assert run.resources == []
    message = str(run.error)
    assert f"nebius-dra:{key}: got" in message and f": {problem}" in message, message
    assert f"; {CHART_REPOSITORY_RULE}" in message and message.count("allowed:") == 1, message
    assert "hunter2" not in message, message


@pytest.mark.parametrize("key", sorted(set(CHART_KEYS.values())))
@pytest.mark.parametrize(
    ("given", "token"),
    [
        ("https://harbor.example.com/ghp_CANARYabcdefghijklmnopqrstuvwxyz0123", "ghp_CANARY"),
        ("https://dl.cloudsmith.io/yC8ttsxgp4yYsGht/org/repo/helm/charts/", "yC8ttsxgp4yYsGht"),
        ("https://repo.fury.io/CANARYx7Kq2mPz9Wv4Lb/nvidia/", "CANARYx7Kq2mPz9Wv4Lb"),
        ("oci://registry.example/charts/eyJhbGciOiJIUzI1NiJ9", "eyJhbGciOiJ"),
        ("https://charts.example/robot%3Dhunter2/nvidia", "hunter2"),
    ],
)
def test_a_repository_with_a_credential_in_a_path_segment_is_refused_without_quoting_it(key, given, token):
    """A token in the path (Cloudsmith's and Gemfury's URLs carry one there) would be printed by the plan, written to
    the values files and kept in the release's inputs in clear: refused like a user part, never quoted."""
    run = every_release_stack(**{key: given})
    assert run.resources == []
    message = str(run.error)
    assert f"nebius-dra:{key}: got" in message and "may hold a credential" in message, message
    assert "path segment" in message and token not in message, message


@pytest.mark.parametrize("key", sorted(set(CHART_KEYS.values())))
@pytest.mark.parametrize(
    ("given", "token", "label"),
    [
        ("https://yC8ttsxgp4yYsGht.charts.example/nvidia", "yC8ttsxgp4yYsGht", 1),
        ("oci://mirror.CANARYx7Kq2mPz9Wv4Lb.registry.example/charts", "CANARYx7Kq2mPz9Wv4Lb", 2),
        ("https://AKIACANARYQ7ZK012345.charts.example/nvidia", "AKIACANARY", 1),
        (f"oci://{'0123456789abcdef' * 2}.registry.example/charts", "0123456789abcdef", 1),
    ],
)
def test_a_repository_with_a_token_shaped_host_label_is_refused_without_quoting_it(key, given, token, label):
    """Issue 37: a host label of a token's shape (a service handing out a host per customer) was taken, and the URL
    printed with it; refused as a path segment of that shape is, never quoted."""
    run = every_release_stack(**{key: given})
    assert run.resources == []
    message = str(run.error)
    assert f'nebius-dra:{key}: got "<{len(given)} characters: ' in message, message
    assert f"its host's label {label} may hold a credential (not quoted)" in message, message
    assert token not in message, message


@pytest.mark.parametrize(
    "taken",
    [
        # Issue 37: a 16-character word with a year in it was taken for a token (one case, so none).
        "https://charts.example/nvidia2024mirror/stable",
        "https://nvidia2024mirror.example.com/charts",
        "https://raw.githubusercontent.com/org/charts/0123456789abcdef0123456789abcdef01234567/stable",
        "https://gitlab.example.com/api/v4/projects/12345/packages/helm/stable",
        "https://charts.example/my%20charts",
    ],
)
def test_a_path_segment_of_no_credential_shape_is_taken(taken):
    assert url_problem(taken) is None


@pytest.mark.parametrize(
    "taken", ["", MIRROR, MIRROR + "/", OCI_MIRROR, "http://10.0.0.5:8080/charts", "oci://[2001:db8::1]:5000/x"]
)
def test_every_url_the_rule_allows_has_no_problem(taken):
    assert url_problem(taken) is None


USERNAME = "robot$dra+ci"
PASSWORD = "s3cret:pa@ss"
LOGIN = {"chartRepositoryUsername": USERNAME}
SECRET_PASSWORD = {"chartRepositoryPassword": PASSWORD}
TLS_FILES = {
    "chartRepositoryCaFile": "/etc/ssl/mirror-ca.pem",
    "chartRepositoryCertFile": "/etc/ssl/client.pem",
    "chartRepositoryKeyFile": "/etc/ssl/client.key",
}


def secret_options(release: RegisteredResource) -> object:
    """The release's repository options, which the engine holds as a secret: the Python SDK reads a map with a secret
    field as a secret map (pulumi 3 `rpc.deserialize_property`); fails when they are not a secret."""
    options = release.inputs[REPOSITORY_OPTS]
    assert rpc.is_rpc_secret(options), options
    return rpc.unwrap_rpc_secret(options)


def test_credentials_go_with_every_named_repository_as_a_secret_and_never_upstream():
    run = every_release_stack(SECRET_PASSWORD, draDriverRepository=MIRROR, gpuOperatorRepository=MIRROR + "/", **LOGIN)
    assert run.error is None, run.error
    for chart in (LEGACY_CHART, GPU_OPERATOR_CHART):
        release = release_of(run, chart)
        assert secret_options(release) == {"repo": MIRROR, "username": USERNAME, "password": PASSWORD}, chart
        assert release.additional_secret_outputs == [REPOSITORY_OPTS], chart
    for chart in (NETWORK_OPERATOR_CHART, DCGM_EXPORTER_CHART, KUBE_PROMETHEUS_STACK_CHART):
        release = release_of(run, chart)
        assert release.inputs[REPOSITORY_OPTS] == {"repo": UPSTREAM[chart]}, chart
        assert release.additional_secret_outputs == [], chart


def test_an_oci_registry_gets_the_login_without_a_repository_url():
    """pulumi-kubernetes logs in to the registry of an OCI chart reference with the options' username and password
    (v4.32.0-27-g94977969d provider/pkg/provider/helm_release.go getChart)."""
    run = every_release_stack(SECRET_PASSWORD, dcgmExporterRepository=OCI_MIRROR, **LOGIN)
    assert run.error is None, run.error
    release = release_of(run, DCGM_EXPORTER_CHART)
    assert release.inputs["chart"] == f"{OCI_MIRROR}/{DCGM_EXPORTER_CHART}"
    assert secret_options(release) == {"username": USERNAME, "password": PASSWORD}


def test_tls_files_reach_helms_options():
    run = every_release_stack({**SECRET_PASSWORD, **LOGIN}, draDriverRepository=MIRROR, **TLS_FILES)
    assert run.error is None, run.error
    assert secret_options(release_of(run, LEGACY_CHART)) == {
        "repo": MIRROR,
        "username": USERNAME,
        "password": PASSWORD,
        "caFile": "/etc/ssl/mirror-ca.pem",
        "certFile": "/etc/ssl/client.pem",
        "keyFile": "/etc/ssl/client.key",
    }


def test_a_ca_file_alone_goes_with_the_mirror_and_nothing_is_secret():
    run = every_release_stack(draDriverRepository=MIRROR, chartRepositoryCaFile="/etc/ssl/mirror-ca.pem")
    assert run.error is None, run.error
    release = release_of(run, LEGACY_CHART)
    assert release.inputs[REPOSITORY_OPTS] == {"repo": MIRROR, "caFile": "/etc/ssl/mirror-ca.pem"}
    assert release.additional_secret_outputs == []


def spec_with(access: RepositoryAccess) -> ReleaseSpec:
    return ReleaseSpec("r", "c", "1.0.0", "ns", {}, MIRROR, access)


async def is_secret(value: object) -> bool:
    return isinstance(value, pulumi.Output) and await value.is_secret()


@pytest.mark.parametrize("secret_username", [False, True])
def test_the_password_and_a_secret_username_are_pulumi_secrets_in_helms_options(secret_username):
    """What the engine receives, field by field: the password is a secret Output, the username one only when it
    was set as a secret (then the state keeps it encrypted too)."""
    options = repository_options(spec_with(RepositoryAccess(USERNAME, PASSWORD, secret_username)))
    assert options is not None
    assert _sync_await(is_secret(options.password)) and _sync_await(options.password.future()) == PASSWORD
    assert _sync_await(is_secret(options.username)) is secret_username
    assert "password" not in repr(RepositoryAccess(USERNAME, PASSWORD)) and PASSWORD not in repr(
        RepositoryAccess(USERNAME, PASSWORD)
    )


@pytest.mark.parametrize(
    ("secret", "settings", "expected"),
    [
        pytest.param(
            {},
            LOGIN,
            f'nebius-dra:chartRepositoryUsername: got "{USERNAME}", but nebius-dra:chartRepositoryPassword is empty',
            id="username-alone",
        ),
        pytest.param(
            SECRET_PASSWORD,
            {},
            "nebius-dra:chartRepositoryPassword: is set, but nebius-dra:chartRepositoryUsername is empty",
            id="password-alone",
        ),
        pytest.param(
            {},
            {"chartRepositoryCertFile": "/etc/ssl/client.pem"},
            'nebius-dra:chartRepositoryCertFile: got "/etc/ssl/client.pem", but nebius-dra:chartRepositoryKeyFile '
            "is empty",
            id="cert-alone",
        ),
        pytest.param(
            {},
            {**LOGIN, **SECRET_PASSWORD},
            "nebius-dra:chartRepositoryPassword: is set in plain text, but it is the password of a chart repository: "
            "set it as a secret, `pulumi config set nebius-dra:chartRepositoryPassword --secret < password-file` "
            "(and remove the plain value; it is not shown); to plan offline without the Pulumi CLI, put a `secure:` "
            "placeholder in its place (docs/configuration.md, Writing a secret)",
            id="plain-password",
        ),
    ],
)
def test_half_a_login_or_a_plain_password_is_refused_naming_the_keys(secret, settings, expected):
    run = every_release_stack(secret, draDriverRepository=MIRROR, **settings)
    assert run.resources == []
    assert expected in str(run.error), run.error
    assert PASSWORD not in str(run.error)


def test_a_login_without_a_named_repository_is_refused():
    run = every_release_stack(SECRET_PASSWORD, **LOGIN)
    assert run.resources == []
    message = str(run.error)
    assert (
        "nebius-dra:chartRepositoryUsername, nebius-dra:chartRepositoryPassword: are set, but no chart repository is"
        in message
    ), message
    assert "never to a chart's upstream default" in message and PASSWORD not in message


def test_a_login_for_repositories_on_two_hosts_is_refused():
    run = every_release_stack(
        SECRET_PASSWORD, draDriverRepository=MIRROR, dcgmExporterRepository="https://other.example/charts", **LOGIN
    )
    assert run.resources == []
    message = str(run.error)
    assert (
        "are on 2 hosts (nebius-dra:draDriverRepository on https://charts.mirror.example:8443; "
        "nebius-dra:dcgmExporterRepository on https://other.example:443): one login is never sent to a host" in message
    ), message


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("https://HARBOR.example.com/a", "https://harbor.example.com/b"),
        ("https://harbor.example.com:443/a", "https://harbor.example.com/b"),
        ("oci://Registry.example:443/a", "oci://registry.example/b"),
        ("https://[::1]:8443/a", "https://[::1]:8443/b"),
    ],
)
def test_a_login_for_repositories_on_one_host_spelt_two_ways_is_accepted(first, second):
    """Attack 2, #16: hosts compare case-insensitively and with the scheme's default port (RFC 3986 section 6.2.2.1
    and 6.2.3), and an IPv6 literal is a host."""
    run = every_release_stack(SECRET_PASSWORD, draDriverRepository=first, dcgmExporterRepository=second, **LOGIN)
    assert run.error is None, run.error


def test_a_login_over_http_is_refused_naming_both_keys():
    """Attack 2, #16: basic authentication over http:// puts the password on the wire in clear."""
    run = every_release_stack(SECRET_PASSWORD, draDriverRepository="http://charts.internal/nvidia", **LOGIN)
    assert run.resources == []
    message = str(run.error)
    assert (
        "nebius-dra:chartRepositoryUsername, nebius-dra:chartRepositoryPassword: would be sent in clear to "
        "nebius-dra:draDriverRepository, an http:// repository" in message
    ), message
    assert PASSWORD not in message
    plain = every_release_stack(None, draDriverRepository="http://charts.internal/nvidia")
    assert plain.error is None, plain.error


@pytest.mark.parametrize("host", ["127.0.0.1:8879", "[::1]:8879", "localhost:8879"])
def test_a_login_over_http_to_this_machines_loopback_is_accepted(host):
    """The e2e chart repository (e2e/cli) serves on 127.0.0.1: a login to it never crosses a network."""
    run = every_release_stack(SECRET_PASSWORD, draDriverRepository=f"http://{host}/nvidia", **LOGIN)
    assert run.error is None, run.error


def test_a_login_over_http_to_a_name_that_only_starts_like_loopback_is_refused():
    run = every_release_stack(SECRET_PASSWORD, draDriverRepository="http://127.0.0.1.example.com/nvidia", **LOGIN)
    assert "would be sent in clear" in str(run.error)


@pytest.mark.parametrize(
    ("key", "repository", "settings"),
    [
        ("draDriverRepository", "oci://registry.k8s.io/dra-driver-nvidia/charts", {"draDriverChart": RENAMED_CHART}),
        ("draDriverRepository", NGC_REPOSITORY, {}),
        ("gpuOperatorRepository", "https://HELM.ngc.nvidia.com/other", {"draDriverRepository": OCI_MIRROR}),
        ("dcgmExporterRepository", DCGM_EXPORTER_REPOSITORY, {}),
        ("kubePrometheusStackRepository", PROMETHEUS_COMMUNITY_REPOSITORY, {}),
    ],
)
def test_a_login_for_a_key_naming_an_upstream_defaults_host_is_refused(key, repository, settings):
    """Hostile review a40 #1: an upstream default written into a key is a named repository, so the mirror's login
    would go to the public upstream."""
    run = every_release_stack(SECRET_PASSWORD, **{key: repository, **settings}, **LOGIN)
    assert run.resources == []
    message = str(run.error)
    host = repository.split("/")[2].lower()
    assert (
        f"nebius-dra:chartRepositoryUsername, nebius-dra:chartRepositoryPassword: would be sent to {host}, which "
        f"nebius-dra:{key} names: the host of the upstream default" in message
    ), message
    assert PASSWORD not in message


def test_an_ngc_api_key_login_may_go_to_ngcs_host():
    """NGC's own login (the user `$oauthtoken`, the password an API key) is meant for NGC's host."""
    run = every_release_stack(
        SECRET_PASSWORD, draDriverRepository="https://helm.ngc.nvidia.com/my-org", chartRepositoryUsername="$oauthtoken"
    )
    assert run.error is None, run.error


@pytest.mark.parametrize(
    ("files", "named"),
    [
        ({"chartRepositoryCaFile": "/etc/ssl/ca.pem"}, "nebius-dra:chartRepositoryCaFile: is set"),
        (
            {"chartRepositoryCertFile": "/etc/ssl/client.pem", "chartRepositoryKeyFile": "/etc/ssl/client.key"},
            "nebius-dra:chartRepositoryCertFile, nebius-dra:chartRepositoryKeyFile: are set",
        ),
    ],
)
@pytest.mark.parametrize("host", ["h.example.com", "127.0.0.1:8879"])
def test_tls_files_for_an_http_repository_are_refused_naming_the_keys_and_the_repository(files, named, host):
    """Hostile review a40 #10: a CA bundle or a client certificate means nothing over plain HTTP, loopback too."""
    run = every_release_stack(draDriverRepository=f"http://{host}/n", **files)
    assert run.resources == []
    assert f"{named}, but nebius-dra:draDriverRepository is an http:// repository, which no TLS file applies to" in str(
        run.error
    ), run.error


@pytest.mark.parametrize("given", ["/", "/etc/ssl/", "/etc/ssl/.", "/etc/..", "etc/ssl/ca.pem", "/etc/ssl/ca pem"])
def test_a_tls_file_setting_that_names_no_file_is_refused_stating_the_rule(given):
    """Hostile review a40 #11: `/` and a directory's path were taken, and a path with a space was refused as "not an
    absolute path"."""
    run = every_release_stack(draDriverRepository=MIRROR, chartRepositoryCaFile=given)
    assert run.resources == []
    assert (
        "nebius-dra:chartRepositoryCaFile: got " in str(run.error)
        and "expected a file's absolute path such as /etc/ssl/certs/mirror-ca.pem, or empty: at most 255 characters, "
        "'/' then ASCII letters, digits, '.', '_', '-' and '/' (no space), naming a file (not ending in '/', '.' or "
        "'..')"
        in str(run.error)
    ), run.error


@pytest.mark.parametrize("given", ["/etc/ssl/.ca.pem", "/etc/ssl/..pem", "/a", "/etc/ssl/mirror-ca_2.pem"])
def test_a_tls_file_path_is_taken(given):
    run = every_release_stack(draDriverRepository=MIRROR, chartRepositoryCaFile=given)
    assert run.error is None, run.error


@pytest.mark.parametrize(
    "given", [f"https://{'a' * 63}.example/nvidia", "https://[2001:db8::1]/nvidia", "oci://[::ffff:10.0.0.1]:5000/c"]
)
def test_a_repository_of_valid_labels_or_a_real_ipv6_literal_is_taken(given):
    run = every_release_stack(draDriverRepository=given)
    assert run.error is None, run.error
