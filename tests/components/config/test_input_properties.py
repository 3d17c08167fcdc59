"""Property tests, one per input surface: structure-aware generated documents of each format (stack files, price
tables, policy config, baselines, kubeconfigs) and API answers served from 127.0.0.1 either read or are refused
with the surface's own error, never another exception. No run has a deadline: a 2 s one failed by chance on a
loaded machine (issue 38); the readers' own limits (size, depth, the client's request timeout) bound them.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from components.config.prices import PriceTableError, parse_price_table
from components.config.reading import InputError, markdown_text, parse_json, parse_yaml, printable
from components.config.stack_file import PROJECT_DIR, StackFileError, read_stack_file
from policies.dra_guardrails import PolicyConfigError, validate_policy_config
from tests.generated_input import OUTSIDE_SCALARS
from tools.plan.baseline import BaselineError, read_baseline
from tools.verify.cluster import ClusterError, KubeCluster
from tools.verify.kubeconfig import KubeconfigError, load_kubeconfig

FAST = settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
KEYS = st.sampled_from(["name", "stack", "nodeGroups", "urn", "template", "gpu", "cpu", "enforcementLevel", "a"])
VALUES = st.recursive(
    OUTSIDE_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.one_of(KEYS, st.text(max_size=8)), inner, max_size=4)
    ),
    max_leaves=20,
)
DEEP = st.integers(min_value=1, max_value=3000).map(lambda depth: "[" * depth + "]" * depth)


def json_text(value: Any) -> str:
    return json.dumps(value, allow_nan=True)


@FAST
@given(st.one_of(VALUES.map(json_text), DEEP, st.text(max_size=50)))
def test_json_from_outside_reads_or_is_an_input_error(text):
    with contextlib.suppress(InputError):
        parse_json(text, "input")


@FAST
@given(st.one_of(VALUES.map(lambda value: yaml.safe_dump(value, allow_unicode=True)), DEEP, st.text(max_size=50)))
def test_yaml_from_outside_reads_or_is_an_input_error(text):
    with contextlib.suppress(InputError):
        parse_yaml(text, "input")


@FAST
@given(st.text(max_size=40))
def test_echoed_text_carries_no_control_character_and_no_markup(text):
    for shown in (printable(text), markdown_text(text)):
        assert not any(unicodedata.category(character) in ("Cc", "Cf", "Zl", "Zp") for character in shown)
    assert "<" not in markdown_text(text) and "[" not in markdown_text(text).replace("\\[", "")


@FAST
@given(VALUES)
def test_a_stack_file_reads_or_names_the_file(tmp_path_factory, value):
    folder = tmp_path_factory.mktemp("stack")
    (folder / "Pulumi.yaml").write_text((PROJECT_DIR / "Pulumi.yaml").read_text())
    (folder / "Pulumi.t.yaml").write_text(yaml.safe_dump({"config": {"nebius-dra:draDriverValues": value}}))
    try:
        read_stack_file("t", folder)
    except StackFileError as error:
        assert "Pulumi.t.yaml" in str(error)


@FAST
@given(st.fixed_dictionaries({}, optional={"currency": OUTSIDE_SCALARS, "gpu": VALUES, "cpu": VALUES}))
def test_a_price_table_parses_or_names_every_problem(document):
    try:
        parse_price_table(yaml.safe_dump(document), "prices/generated.yaml")
    except PriceTableError as error:
        assert "prices/generated.yaml" in str(error)


POLICY_ENTRIES = st.one_of(
    VALUES,
    st.fixed_dictionaries(
        {
            "enforcementLevel": st.one_of(
                OUTSIDE_SCALARS, st.lists(OUTSIDE_SCALARS, min_size=1), st.sampled_from(["advisory", ""])
            )
        }
    ),
)


@FAST
@given(
    st.dictionaries(st.sampled_from(["all", "max-hourly-cost", "gpu-drivers-preset-known"]), POLICY_ENTRIES, max_size=3)
)
def test_a_policy_config_is_valid_or_a_policy_config_error(document):
    with contextlib.suppress(PolicyConfigError, InputError):
        validate_policy_config(parse_json(json_text(document), "--policy-config"))


@FAST
@given(st.one_of(VALUES, st.fixed_dictionaries({"stack": OUTSIDE_SCALARS, "nodeGroups": VALUES})))
def test_a_baseline_is_read_or_a_baseline_error(document):
    with contextlib.suppress(BaselineError):
        read_baseline(document, "dev")


KUBECONFIG_PARTS = st.fixed_dictionaries(
    {},
    optional={
        "clusters": st.lists(st.fixed_dictionaries({"name": OUTSIDE_SCALARS, "cluster": VALUES}), max_size=2),
        "contexts": st.lists(st.fixed_dictionaries({"name": OUTSIDE_SCALARS, "context": VALUES}), max_size=2),
        "users": st.lists(st.fixed_dictionaries({"name": OUTSIDE_SCALARS, "user": VALUES}), max_size=2),
        "current-context": OUTSIDE_SCALARS,
    },
)


@FAST
@given(KUBECONFIG_PARTS)
def test_a_kubeconfig_is_loaded_or_one_kubeconfig_error(tmp_path_factory, document):
    path = tmp_path_factory.mktemp("kube") / "kubeconfig"
    path.write_text(yaml.safe_dump(document))
    try:
        load_kubeconfig(str(path))
    except KubeconfigError as error:
        assert str(error).startswith(f"kubeconfig {path}") and "\n" not in str(error)


class AnswerServer(http.server.BaseHTTPRequestHandler):
    """Answers every GET with the body the test set, as JSON."""

    body: ClassVar[bytes] = b"{}"

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *_args: Any) -> None:
        return


@pytest.fixture(scope="module")
def answer_cluster(tmp_path_factory) -> Iterator[KubeCluster]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), AnswerServer)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    path = Path(tmp_path_factory.mktemp("answers")) / "kubeconfig"
    url = f"http://127.0.0.1:{server.server_address[1]}"
    path.write_text(
        yaml.safe_dump(
            {
                "clusters": [{"name": "c", "cluster": {"server": url}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "current-context": "x",
            }
        )
    )
    yield KubeCluster.from_kubeconfig(str(path), request_timeout_s=2)
    server.shutdown()
    server.server_close()


@FAST
@given(
    st.one_of(
        st.fixed_dictionaries({"kind": st.just("NodeList"), "items": VALUES}).map(json_text),
        VALUES.map(json_text),
        DEEP,
        st.text(max_size=40),
    ).map(str.encode)
)
def test_an_api_answer_is_read_as_objects_or_is_a_cluster_error(answer_cluster, body):
    AnswerServer.body = body
    try:
        nodes = answer_cluster.list_nodes()
    except ClusterError:
        return
    assert isinstance(nodes, list) and all(isinstance(node, dict) for node in nodes)
