"""The pack's own quoting of a value in a message: credentials hidden, terminal characters escaped, length bounded."""

from __future__ import annotations

import pytest

from policies.dra_guardrails import PolicyConfigError, check_resources
from policies.dra_guardrails.planned import CLUSTER_TYPE, PlannedResource
from policies.dra_guardrails.quoting import SHOWN_LIMIT, TOKEN_FORM, listed, quoted, shown

CANARY = "CANARY"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("https://u:CANARY@h/x", "https://[credentials]@h/x"),
        ("oci://h/x?token=CANARY&page=2", "oci://h/x?token=[redacted]&page=2"),
        ("https://h/x?a=1&X-Amz-Signature=CANARY#part", "https://h/x?a=1&X-Amz-Signature=[redacted]#part"),
        ("registry/u:CANARY@harbor.example/x", "registry/[credentials]@harbor.example/x"),
        ("Authorization: Bearer CANARY", "Authorization: [redacted] [redacted]"),
        ("Bearer CANARY", "Bearer [redacted]"),
        ("apiKey=CANARY", "apiKey=[redacted]"),
        ("namehttps://u:CANARY@h", "namehttps://[credentials]@h"),
    ],
)
def test_credential_shaped_text_is_hidden(value, expected):
    assert shown(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        "oci://registry.k8s.io/kueue/charts",
        "https://charts.mirror.example:8443/proxy/nvidia",
        "nvcr.io/nvidia/pytorch:25.01-py3",
        "nvcr.io/x:v1@sha256:" + "0" * 64,
        "nebius-dra:queues",
        "h200-train",
        "1.34-nebius-node.2",
    ],
)
def test_ordinary_values_are_shown_as_they_are(value):
    assert shown(value) == value


def test_terminal_and_format_characters_are_escaped():
    assert shown("a\x1b[31mb\x07\u202ec\x9b") == "a\\x1b[31mb\\x07\\u202ec\\x9b"


def test_a_long_value_is_cut_with_its_length_said():
    text = shown("x" * 102400)
    assert len(text) <= SHOWN_LIMIT and text.endswith("... (102400 characters)")
    assert len(shown("\x1b" * 1000)) <= SHOWN_LIMIT


def test_a_credential_past_the_cut_is_hidden_before_the_cut():
    text = shown("https://u:" + CANARY * 50 + "@h/x")
    assert CANARY not in text and text == "https://[credentials]@h/x"


def test_values_of_other_types_and_lists():
    assert (shown(None), shown(3), shown({"a": ["b"]})) == ("null", "3", '{"a": ["b"]}')
    assert (quoted(None), quoted("x"), quoted(2)) == ("None", "'x'", "2")
    assert listed([f"g{i}" for i in range(12)]) == ", ".join(f"g{i}" for i in range(10)) + " and 2 more"


def test_a_hostile_cluster_version_and_minimum_version_are_quoted_in_the_refusals():
    cluster = PlannedResource(
        "urn:x", CLUSTER_TYPE, "c\x1b]0;t\x07", {"controlPlane": {"version": "https://u:CANARY@h/?token=CANARY"}}
    )
    [finding] = check_resources([cluster])
    assert "\x1b" not in finding.message and CANARY not in finding.message
    with pytest.raises(PolicyConfigError) as refused:
        check_resources([cluster], {"mk8s-cluster-version": {"minimumVersion": "\x1b[31m" + "9" * 102400}})
    assert "\x1b" not in str(refused.value) and len(str(refused.value)) < 400


def test_the_packs_token_forms_are_the_programs():
    """The pack cannot import components/ (the CLI runs it from inside policies/): its copy is kept in step here."""
    from components import redaction

    assert TOKEN_FORM.pattern == redaction._TOKEN_FORM.pattern


@pytest.mark.parametrize(
    "token",
    [
        "ghp_CANARYabcdefghijklmnopqrstuvwxyz0123",
        "github_pat_CANARY_abcdefghijklmnopqrstuvwxyz",
        "glpat-CANARYabcdefghijklmnop",
        "xoxb-CANARY-0123456789",
        "AKIACANARYQ7ZK012345",
        "eyJhbGciOiJIUzI1NiJ9.eyJCANARY.sig",
    ],
)
@pytest.mark.parametrize("before", ["", "5", "x", "vpcsubnet-e00"])
def test_a_token_of_a_known_form_is_hidden(token, before):
    """Attack4 #1: a token glued to the text before it (`5ghp_...`) is hidden as one standing alone."""
    assert shown(f'productName == "{before}{token}".') == f'productName == "{before}[redacted]".'
    with pytest.raises(PolicyConfigError) as refused:
        check_resources([], {f"{before}{token}": "advisory"})
    assert "CANARY" not in str(refused.value) and "unknown policy" in str(refused.value)


@pytest.mark.parametrize("token", ["sk-CANARYabcdefghijklmnop0123", "sk-proj-CANARYabcdefghijklmnop0123"])
def test_an_api_key_starting_a_word_is_hidden_and_one_inside_a_word_is_none(token):
    """Attack5 #2: an OpenAI or Anthropic key (`sk-...`) was no known form; `task-...` and `disk-...` end in `sk-`."""
    assert shown(f'image "cuda:{token}"') == 'image "cuda:[redacted]"'
    assert shown(f"disk-{token[3:]}") == f"disk-{token[3:]}"


TOKEN_SHAPED = ["yC8ttsxgp4yYsGht", "0123456789abcdef0123456789abcdef", "nvidia2024mirror", "ABCDEFGHIJKLMNOP1234"]


def test_the_packs_token_shaped_labels_are_the_programs():
    """The pack's copy of the host-label rule (its pattern, thresholds and verdicts) is the program's."""
    from components import redaction
    from policies.dra_guardrails import quoting

    assert quoting.LABEL_RUN.pattern == redaction._LABEL_RUN.pattern
    assert (quoting.TOKEN_WORD_LENGTH, quoting.HEX_TOKEN_LENGTH) == (
        redaction.TOKEN_WORD_LENGTH,
        redaction.HEX_TOKEN_LENGTH,
    )
    assert [quoting.token_shaped_word(word) for word in TOKEN_SHAPED] == [
        redaction.token_shaped_word(word) for word in TOKEN_SHAPED
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("https://yC8ttsxgp4yYsGht.charts.example/nvidia", "https://[redacted].charts.example/nvidia"),
        ("oci://mirror.CANARYx7Kq2mPz9Wv4Lb.registry.example/c", "oci://mirror.[redacted].registry.example/c"),
        ("https://nvidia2024mirror.example.com/charts", "https://nvidia2024mirror.example.com/charts"),
        ("Mk8sV1NodeGroupArgs.template", "Mk8sV1NodeGroupArgs.template"),
    ],
)
def test_a_token_shaped_host_label_is_hidden_by_the_pack(text, expected):
    """Issue 37: a repository URL in a violation (a release's `repositoryOpts.repo`) showed a token-shaped host label."""
    assert shown(text) == expected
