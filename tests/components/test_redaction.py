"""No credential reaches any output: canary secrets at every position of every secret-bearing value.

`components.redaction.redacted` is the one function every output goes through. Its properties are
checked here on generated values (hypothesis), and then the tools' entry functions are run in
process on inputs that carry canaries in every place a credential can hide: the userinfo of a URL
with `@` in its password, a URL's query and fragment, an inline kubeconfig's token, every leaf of
a key set as a secret whatever its type, an exec plugin's output; nothing they print or write
holds a canary. URLs are split as `urllib.parse.urlsplit` splits them (its userinfo ends at the
netloc's last `@`), so the tests compare with the standard library, not with the code under test.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml
from hypothesis import example, given
from hypothesis import strategies as st
from pulumi.runtime import rpc

from components.config import ConfigError, parse_stack_config
from components.config.errors import ConfigProblems, shown_name
from components.config.raw import RawConfig
from components.config.stack_file import StackFileConfig, read_stack_file
from components.redaction import (
    may_hold_a_credential,
    names_a_credential,
    redacted_command,
    secrets_of,
    token_shaped_word,
)
from components.redaction import redacted as redact
from components.shown import NOT_QUOTED, shown
from policies.dra_guardrails.consequences import CONSEQUENCES
from tests.helpers import ROOT
from tests.kubeconfigs import EXEC_API, exec_user, kubeconfig_text, script
from tools.cost import __main__ as cost_cli
from tools.cost.teams import team_rows
from tools.plan import __main__ as plan_cli
from tools.plan import mock_engine
from tools.plan.mock_engine import run_program
from tools.plan.stack_source import read_stack_source
from tools.plan.values import presentable
from tools.verify import __main__ as verify_cli
from tools.verify.kubeconfig import ExecPlugin, ExecPluginError

CANARY = "CANARYq7Zk"
NUMBER_CANARY = 7348291056123
# RFC 3986 section 3.2.1: what userinfo may hold (unreserved, sub-delims, ':' and %-encodings), plus the '@' a
# careless password has, and the quote and backslash a JSON-escaped quote of it has.
USERINFO = st.text(alphabet="abcXYZ019-._~!$&'()*+,;=:%@\"\\", max_size=12)
HOST = st.from_regex(r"[a-z][a-z0-9-]{0,10}(\.[a-z]{2,5}){0,2}", fullmatch=True)


# How `shown` ends the description of a text it does not quote.
SHAPE_END = f"{NOT_QUOTED}>"
REDACTED_MARK = "[redacted]"


def every_form(text: str) -> list[str]:
    """How a text reaches outputs: as it is, JSON-quoted (what `shown` and the JSON plan write), as repr."""
    return [text, json.dumps(text), repr(text), shown(text)]


def assert_no_canary(*outputs: str, canaries: tuple[str, ...] = (CANARY, str(NUMBER_CANARY))) -> None:
    for output in outputs:
        for canary in canaries:
            assert canary not in output, (canary, output[:2000])


@given(user=USERINFO, before=USERINFO, after=USERINFO, host=HOST, scheme=st.sampled_from(["https", "http", "oci"]))
@example(user="u", before="p@", after="@x", host="charts.example.com", scheme="https")
@example(user="", before="", after='"@', host="h", scheme="oci")
def test_the_userinfo_is_redacted_to_the_last_at_as_urlsplit_reads_it(user, before, after, host, scheme):
    url = f"{scheme}://{user}:{before}{CANARY}{after}@{host}/charts"
    # The standard library's reading of the same URL: the canary is in its userinfo, the host is the host.
    assert CANARY in urlsplit(url).netloc.rpartition("@")[0] and urlsplit(url).hostname == host
    for form in every_form(url):
        shown_form = redact(f"got {form}; allowed: a mirror")
        assert_no_canary(shown_form)
        assert f"@{host}/charts" in shown_form or SHAPE_END in shown_form


@given(
    name=st.from_regex(r"[a-z_]{1,8}", fullmatch=True),
    before=st.text(alphabet="abc019-._~%+/", max_size=8),
    after=st.text(alphabet="abc019-._~%+/", max_size=8),
    where=st.sampled_from(["query", "fragment", "both"]),
)
@example(name="token", before="", after="", where="query")
def test_query_and_fragment_values_are_redacted(name, before, after, where):
    value = f"{before}{CANARY}{after}"
    query = f"?a=1&{name}={value}" if where in ("query", "both") else ""
    fragment = f"#{name}={value}&b=2" if where in ("fragment", "both") else ""
    url = f"https://charts.example.com/index.yaml{query}{fragment}"
    for form in every_form(url):
        assert_no_canary(redact(form))


@given(
    name=st.from_regex(r"[a-z_]{1,10}", fullmatch=True),
    before=st.text(alphabet="abc019-._~%+", max_size=8),
    after=st.text(alphabet="abc019-._~%+/", max_size=8),
)
@example(name="jsessionid", before="", after="")
def test_path_parameter_values_are_redacted(name, before, after):
    # RFC 3986 section 3.3: a path segment's parameters follow a ';' (a servlet's `;jsessionid=`).
    url = f"https://m.example.com/c;{name}={before}{CANARY}{after}"
    for form in every_form(url):
        shown_form = redact(f"got {form}; expected a mirror")
        assert_no_canary(shown_form)
        assert "https://m.example.com/c;" in shown_form or SHAPE_END in shown_form


@st.composite
def canary_texts(draw: Any) -> str:
    """A string holding the canary at any position, among printable and control characters."""
    around = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=10)
    return f"{draw(around)}{CANARY}{draw(around)}"


LEAVES = st.one_of(
    canary_texts(),
    st.just(NUMBER_CANARY),
    st.just(-NUMBER_CANARY),
    st.just(NUMBER_CANARY + 0.5),
)
SECRET_VALUES = st.recursive(
    LEAVES,
    lambda children: st.one_of(
        st.lists(children, min_size=1, max_size=3),
        st.dictionaries(st.from_regex(r"[a-z]{1,6}", fullmatch=True), children, min_size=1, max_size=3),
    ),
    max_leaves=6,
)


def leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in leaves(item)]
    if isinstance(value, list):
        return [leaf for item in value for leaf in leaves(item)]
    return [value]


@given(value=SECRET_VALUES)
@example(value={"a": NUMBER_CANARY, "b": [f"x{CANARY}"]})
def test_every_leaf_of_a_secret_value_is_redacted_whatever_its_type(value):
    secrets = secrets_of([json.dumps(value)])
    quoted = [shown(value), json.dumps(value), *(shown(leaf) for leaf in leaves(value)), *map(str, leaves(value))]
    for text in quoted:
        assert_no_canary(redact(f"draDriverValues.x: got {text}; expected a map", secrets))


def test_a_boolean_or_short_number_leaf_is_redacted_as_a_whole_word_only():
    secrets = secrets_of([json.dumps({"enabled": True, "replicas": 3})])
    assert redact("sets it to true; entry [3] has 3 replicas; 13 true-ish", secrets) == (
        "sets it to [secret]; entry [[secret]] has [secret] replicas; 13 true-ish"
    )


@given(start=st.integers(min_value=0, max_value=130))
def test_a_secret_cut_by_the_quote_limit_is_not_shown_by_its_start(start):
    text = "x" * start + CANARY * 30
    line = redact(f"got {shown(text)}", secrets_of([text[start:]]))
    assert_no_canary(line, canaries=(CANARY[:3],))


def kubeconfig_with_token(token: str) -> str:
    return kubeconfig_text("https://127.0.0.1:6443", {"token": token})


@pytest.mark.parametrize("position", ["start", "middle", "end"])
def test_a_refusal_never_quotes_an_inline_kubeconfigs_token(position):
    token = {"start": f"{CANARY}abc", "middle": f"ab{CANARY}cd", "end": f"abc{CANARY}"}[position]
    text = "users:\n- name: u\n  user:\n    token: " + token + "\n" + kubeconfig_with_token(token)
    for form in (shown(text), shown({"kubeconfig": text}), json.dumps(text)[:110]):
        assert_no_canary(redact(form))


# Values of a stack file that carry canaries in each place a credential hides, each refused by the program (so
# every refusal that quotes a value is exercised), as a user would write them in Pulumi.<stack>.yaml.
HOSTILE_STACK_VALUES = {
    "nebius-dra:draDriverRepository": f"https://user:p@ss{CANARY}@w@charts.example.com/x?token={CANARY}",
    "nebius-dra:gpuOperatorRepository": f"oci://{CANARY}:{CANARY}@registry.example.com/charts#sig={CANARY}",
    "nebius-dra:dcgmExporterRepository": f"https://mirror.example.com/charts?x=1&access_token={CANARY}&k={CANARY}",
    "nebius-dra:nebiusProfile": "apiVersion: v1\nusers:\n- user:\n    token: " + CANARY + "x" * 200,
    "nebius-dra:existingClusterKubeconfig": kubeconfig_with_token(CANARY),
    # A repository password in plain text (refused: it must be a secret), with the mirror it is for.
    "nebius-dra:chartRepositoryPassword": f"p{CANARY}:x@y",
}


def hostile_stack_file(tmp_path: Path, values: Mapping[str, Any]) -> Path:
    document = yaml.safe_load(Path("Pulumi.dev.yaml").read_text())
    document["config"].update(values)
    path = tmp_path / "Pulumi.hostile.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def outputs_of(capsys: pytest.CaptureFixture[str], folder: Path | None = None) -> list[str]:
    captured = capsys.readouterr()
    files = [p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file()] if folder else []
    return [captured.out, captured.err, *files]


@pytest.mark.parametrize("key", sorted(HOSTILE_STACK_VALUES))
@pytest.mark.parametrize("output", ["text", "markdown", "json"])
def test_no_canary_in_any_output_of_the_plan_and_the_cost(key, output, tmp_path, capsys):
    stack_file = hostile_stack_file(tmp_path, {key: HOSTILE_STACK_VALUES[key]})
    out = tmp_path / "plan"
    status = plan_cli.main(["--stack-file", str(stack_file), "--format", output, "--out", str(out)])
    assert status == plan_cli.EXIT_PROGRAM
    printed = outputs_of(capsys, out if out.exists() else None)
    assert key.split(":")[1] in "".join(printed)
    assert_no_canary(*printed)
    assert cost_cli.main(["--stack-file", str(stack_file), "--format", output]) == 2
    assert_no_canary(*outputs_of(capsys))


# Issue 37: a credential pasted into a group's or a template's name, or into a config key (of the stack file, of its
# top level), is named by its shape in the label that starts each problem line, in every plan format and the cost.
NAMED_CANARY = f"h:{CANARY}@x"
CANARY_NAMES = {
    "nebius-dra:gpuNodeGroups": [
        {"name": NAMED_CANARY, "platform": "gpu-h200-sxm", "preset": "1gpu-16vcpu-200gb", "fixedNodeCount": 1}
    ],
    "nebius-dra:userClaimTemplates": [
        {"name": NAMED_CANARY, "requests": [{"name": "a", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}
    ],
    f"nebius-dra:u{CANARY}@host": "x",
    f"nebius-dra:user:{CANARY}@host": "x",
}


@pytest.mark.parametrize("output", ["text", "markdown", "json"])
def test_no_canary_in_the_label_of_a_refused_name_or_key(output, tmp_path, capsys):
    stack_file = hostile_stack_file(tmp_path, CANARY_NAMES)
    status = plan_cli.main(["--stack-file", str(stack_file), "--format", output, "--out", "none", "--no-base"])
    assert status == plan_cli.EXIT_PROGRAM
    printed = outputs_of(capsys)
    assert "may be a credential" in "".join(printed)
    assert_no_canary(*printed)
    assert cost_cli.main(["--stack-file", str(stack_file), "--format", output]) == 2
    assert_no_canary(*outputs_of(capsys))


def test_no_canary_in_the_label_of_an_unknown_program_key():
    with pytest.raises(ConfigError) as refused:
        parse_stack_config({f"user:{CANARY}@host": "1"}, "dev")
    assert_no_canary(str(refused.value))


# A private mirror's login as `pulumi config set --secret` keeps it; the password is decrypted only for the program.
MIRROR_LOGIN = {
    "nebius-dra:draDriverRepository": "https://charts.mirror.example/nvidia",
    "nebius-dra:chartRepositoryUsername": "robot$dra+ci",
}
PASSWORD_KEY = "nebius-dra:chartRepositoryPassword"
CANARY_PASSWORD = f"p{CANARY}:x@y"


def decrypted(read: StackFileConfig, key: str, value: str) -> StackFileConfig:
    """The stack file as the program reads it under `pulumi preview`: `key` a secret, decrypted to `value`."""
    return StackFileConfig({**read.values, key: value}, read.secret_keys | {key})


@pytest.mark.parametrize("output", ["text", "markdown", "json"])
def test_no_decrypted_repository_password_in_any_output_of_the_plan(output, tmp_path, capsys, monkeypatch):
    """`make plan` cannot decrypt a secret; were it handed the password itself, as the program is under `pulumi
    preview`, the plan still shows only its placeholder: the release receives it as a Pulumi secret."""
    stack_file = hostile_stack_file(tmp_path, MIRROR_LOGIN)
    read = decrypted(read_stack_source("hostile", stack_file), PASSWORD_KEY, CANARY_PASSWORD)
    monkeypatch.setattr(mock_engine, "read_stack_source", lambda *args, **kwargs: read)
    out = tmp_path / "plan"
    status = plan_cli.main(["--stack-file", str(stack_file), "--format", output, "--out", str(out), "--no-base"])
    printed = outputs_of(capsys, out)
    assert status == plan_cli.EXIT_OK, printed[1]
    assert "repositoryOpts" in printed[0] and "[secret]" in printed[0], printed[0][:3000]
    assert_no_canary(*printed)


def test_the_programs_registered_inputs_hold_the_repository_password_only_as_a_secret():
    """Under the mock engine every input the program registers, and every stack output, is free of the password
    once its secrets are placeholders: the password reaches the engine wrapped as a secret, nowhere else."""
    config = {**read_stack_file("dev").values, **MIRROR_LOGIN, PASSWORD_KEY: CANARY_PASSWORD}
    run = run_program("dev", config=config, secret_keys=[PASSWORD_KEY])
    assert run.error is None, run.error
    wrapped = [r for r in run.resources if rpc.is_rpc_secret(r.inputs.get("repositoryOpts"))]
    assert [rpc.unwrap_rpc_secret(r.inputs["repositoryOpts"])["password"] for r in wrapped] == [CANARY_PASSWORD]
    assert [r.additional_secret_outputs for r in wrapped] == [["repositoryOpts"]]
    shown_inputs = [presentable(r.inputs, {}) for r in run.resources]
    public_outputs = {key: value for key, value in run.outputs.items() if key not in run.secret_outputs}
    assert_no_canary(json.dumps(shown_inputs, default=str), json.dumps(public_outputs, default=str))


@pytest.mark.parametrize("secret", [True, False], ids=["secret", "plain"])
def test_a_repository_password_refused_for_its_shape_is_never_quoted(secret):
    """A password is a credential however it was given: refused for a control character, set as a secret or in
    plain text, the refusal names the key and what is allowed, never the value."""
    config = {**read_stack_file("dev").values, **MIRROR_LOGIN, PASSWORD_KEY: f"{CANARY_PASSWORD}\n"}
    run = run_program("dev", config=config, secret_keys=[PASSWORD_KEY] if secret else [])
    assert run.error is not None and not run.resources
    assert f"{PASSWORD_KEY}: " in str(run.error) and "printable ASCII" in str(run.error), run.error
    assert_no_canary(str(run.error))


def secret_driver_values(leaf: Any) -> dict[str, Any]:
    """draDriverValues that the program refuses in several ways, each quoting `leaf` if it could: a guarded value,
    a key the chart does not read, a value of the wrong type."""
    return {
        "gpuResourcesEnabledOverride": leaf,
        "kubeletPlugin": {"tolerationz": [leaf, {"k": leaf}], "priorityClassName": leaf},
        "resources": {"gpus": {"enabled": leaf}},
        "image": {"tag": leaf},
    }


SECRET_LEAVES = [
    f"{CANARY}tail",
    f"head{CANARY}",
    f"a\n{CANARY}\u001b[31m",
    NUMBER_CANARY,
    NUMBER_CANARY + 0.25,
    [NUMBER_CANARY, {"deep": [f"x{CANARY}"]}],
]


@pytest.mark.parametrize("leaf", SECRET_LEAVES, ids=lambda leaf: type(leaf).__name__ + str(len(json.dumps(leaf))))
def test_no_leaf_of_a_secret_key_reaches_the_programs_refusal(leaf):
    """What `pulumi preview` prints is the program's refusal: run under the mock engine with the keys set as
    secrets, every leaf of every secret-capable key is a canary."""
    config = dict(read_stack_file("dev").values)
    config["nebius-dra:draDriverValues"] = json.dumps(secret_driver_values(leaf))
    config["nebius-dra:existingClusterKubeconfig"] = kubeconfig_with_token(json.dumps(leaf))[:-1] + ": ["
    secret = ["nebius-dra:draDriverValues", "nebius-dra:existingClusterKubeconfig"]
    run = run_program("dev", config=config, secret_keys=secret)
    assert run.error is not None and not run.resources
    assert "draDriverValues" in str(run.error)
    assert_no_canary(str(run.error))
    raw = RawConfig({k.split(":")[1]: v for k, v in config.items()}, frozenset(s.split(":")[1] for s in secret))
    with pytest.raises(ConfigError) as refused:
        parse_stack_config(raw, "dev")
    assert_no_canary(str(refused.value))


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(text)
    return path


def verify_outputs(capsys: pytest.CaptureFixture[str], report: Path) -> list[str]:
    captured = capsys.readouterr()
    return [captured.out, captured.err, report.read_text() if report.exists() else ""]


@pytest.mark.parametrize(
    "server",
    [
        f"https://user:p@ss{CANARY}@127.0.0.1:9",
        f"http://127.0.0.1:9/?token={CANARY}",
        f"ftp://{CANARY}:{CANARY}@127.0.0.1:9",
        f"https://[{CANARY}@127.0.0.1:9",
    ],
)
def test_no_canary_in_verifys_output_for_a_server_url_with_credentials(server, tmp_path, capsys):
    report = tmp_path / "verify.json"
    path = write(tmp_path, kubeconfig_text(server))
    status = verify_cli.main(["--stack", "dev", "--skip-smoke", "--kubeconfig", str(path), "--json", str(report)])
    assert status == 2
    assert_no_canary(*verify_outputs(capsys, report))


@pytest.mark.parametrize(
    ("name", "body"),
    [
        ("newline-token", json.dumps({"token": f"abc\n{CANARY}"})),
        ("trailing-newline", json.dumps({"token": f"{CANARY}\n"})),
        ("space-token", json.dumps({"token": f"Bearer {CANARY}"})),
        ("expiry", json.dumps({"token": f"abc{CANARY}\u0000", "expirationTimestamp": "soon"})),
    ],
)
def test_no_canary_in_verifys_output_for_an_exec_token_a_header_cannot_carry(name, body, tmp_path, capsys):
    credential = f'{{"apiVersion": "{EXEC_API}", "kind": "ExecCredential", "status": {body}}}'
    script(tmp_path, "get-token.sh", f"cat <<'JSON'\n{credential}\nJSON\n")
    report = tmp_path / "verify.json"
    path = write(tmp_path, kubeconfig_text("http://127.0.0.1:9", exec_user("./get-token.sh")))
    assert verify_cli.main(["--stack", "dev", "--skip-smoke", "--kubeconfig", str(path), "--json", str(report)]) == 2
    assert_no_canary(*verify_outputs(capsys, report))


def outputs_of_a_failing_plugin(tmp_path: Path, capsys: Any, body: str, args: tuple[str, ...] = ()) -> list[str]:
    """What verify prints and writes when the exec plugin (`body`, run with `args` after `--profile dev`) exits 3."""
    script(tmp_path, "get-token.sh", body + "exit 3\n")
    user = exec_user("./get-token.sh")
    user["exec"]["args"] += list(args)
    report = tmp_path / "verify.json"
    path = write(tmp_path, kubeconfig_text("http://127.0.0.1:9", user))
    assert verify_cli.main(["--stack", "dev", "--skip-smoke", "--kubeconfig", str(path), "--json", str(report)]) == 2
    printed = verify_outputs(capsys, report)
    assert "exited with status 3" in printed[1]
    return printed


@pytest.mark.parametrize(
    "stderr",
    [
        f"token: {CANARY}",
        f"Authorization: Bearer {CANARY}",
        f'{{"password": "{CANARY}"}}',
        f"error: token {CANARY} expired",  # hostile review a37 F5
        f"password {CANARY}",
        f"the api key: {CANARY} is revoked",
        # Hostile round three (a37 N1): a plugin's words are not the project's, so any credential word or opaque
        # word there is hidden.
        f"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ{CANARY}.c2lnbmF0dXJl",
        f"secret: {CANARY}",
        f"token\uff1a{CANARY}",
        f"session {CANARY}",
        "secret HUNTERPASSWORDCANARY",
        # Round four: a name ending a longer one, a passphrase of words, a token of capitals alone, a value two words on.
        f'{{"error":"invalid_client","client_secret":"{CANARY}RRRRR"}}',
        "passphrase Zebra-Horse-Battery-Staple-CANARYq7Zk",
        f"Token ist abgelaufen: {CANARY}",
        f"access-token expired {CANARY}",
    ],
)
def test_no_canary_in_verifys_output_when_the_exec_plugin_fails_saying_a_credential(stderr, tmp_path, capsys):
    assert_no_canary(*outputs_of_a_failing_plugin(tmp_path, capsys, f"echo '{stderr}' >&2\n"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"error: token {CANARY} expired", "error: token [redacted] expired"),
        (f"password\t{CANARY}", "password\t[redacted]"),
        (f"API key: {CANARY}", "API key: [redacted]"),
        (f"api key {CANARY}.", "api key [redacted]"),
        ("the token file is read trimmed", "the token file is read trimmed"),
        (
            "set the password chartRepositoryPassword as a secret",
            "set the password chartRepositoryPassword as a secret",
        ),
        ("token v1beta1 and password 12345678", "token v1beta1 and password 12345678"),
    ],
)
def test_a_credential_named_in_prose_is_redacted_when_its_value_is_no_word(text, expected):
    """A plugin's stderr says its credential as prose (`token X expired`); a word after the name stays."""
    assert redact(text) == expected


@pytest.mark.parametrize(
    "said",
    [
        f"error: token {CANARY} expired",
        f"Passwort falsch: {CANARY}",
        f"the key is {CANARY}",
        f"private_key_id: {CANARY}",
    ],
)
def test_the_exec_plugins_stderr_is_never_quoted_off_a_terminal(tmp_path, said):
    """A plugin may say its credential in any words or language: its error names the command and that it wrote to
    stderr, never what."""
    script(tmp_path, "get-token.sh", f"echo '{said}' >&2\nexit 1\n")
    plugin = ExecPlugin("./get-token.sh", (), (), EXEC_API, tmp_path, tmp_path / "kubeconfig", "u")
    with pytest.raises(ExecPluginError) as failed:
        plugin.run(10)
    assert str(failed.value).endswith(
        "exited with status 1 after writing 1 line to stderr (not shown: a plugin may print its credential there); "
        "run `./get-token.sh` by hand to read what it says"
    )
    assert_no_canary(str(failed.value))


@pytest.mark.parametrize("length", [40, 90, 100, 200])
def test_a_url_whose_password_runs_past_the_quote_limit_is_redacted_before_the_cut(length):
    url = f"https://user:{(CANARY * 30)[:length]}@charts.example.com/x"
    assert_no_canary(shown(url), shown({"repository": url}), canaries=(CANARY[:4],))


def test_many_secret_leaves_and_as_many_lines_are_redacted_in_linear_time():
    """A secret map of 20,000 leaves, one 60-character problem line per leaf: one `str.replace` per form and line
    would be 10**9 searches; the index makes each position a few lookups (generous CPU bound, so it cannot flake)."""
    leaves = {f"k{i}": f"secretvalue{i:06d}" for i in range(20_000)}
    secrets = secrets_of([json.dumps(leaves)])
    started = time.process_time()
    lines = [redact(f'draDriverValues.k{i}: got "secretvalue{i:06d}"; expected a map', secrets) for i in range(20_000)]
    assert time.process_time() - started < 10.0
    assert all(line.endswith('got "[secret]"; expected a map') for line in lines)


MIB = 1 << 20


@pytest.mark.parametrize(
    "text",
    [
        "token" * (MIB // 5),
        "token:" + " " * MIB,
        "https://" + "@" * MIB,
        "a://b?" + "&=" * (MIB // 2),
        "a://" * (MIB // 4),
        "a." * (MIB // 2) + "://x",
        "abcd... (1 characters)" * (MIB // 24),
        "bearer " * (MIB // 7),
        "12345 " * (MIB // 6),
        "https://[" * (MIB // 9),
        "--token" + "\u00a0" * MIB,
        "token" + "\\u00a0" * (MIB // 6) + "=",
        "Basic\t" * (MIB // 6),
        "--api-key=" + "\\xa0" * (MIB // 4),
        "https://h/x" + ")" * MIB,
        "https://h/x" + ")." * (MIB // 2),
        "https://" + "\uff20" * MIB,
        "https://" + "\\uff20" * (MIB // 6),
        "https://" + ":a" * (MIB // 2),
        "https://" + "1:" * (MIB // 2),
        "https://[" + ":" * MIB,
        "https://h/#" + "a-" * (MIB // 2) + "~",
        "https://h/#" + "a1" * (MIB // 2),
        "https://h/#" + "Aa0." * (MIB // 4) + "-",
        "token" + ":" * MIB,
        "session " * (MIB // 8),
        "a1" * (MIB // 2),
        "a" * MIB + "1",
        "token" + "\uff1a" * MIB,
        # An authority without a scheme (`u:p@h`): runs of its user part, its colons and its '@'s.
        "a" * MIB + "@",
        "=a" * (MIB // 2) + "@",
        " a:@" * (MIB // 4),
        " a:b@c" * (MIB // 6),
        "%" * MIB + "@",
        "\\" * MIB + "@",
        "a%3A" * (MIB // 4) + "@",
        "\uff1a@" * (MIB // 2),
        "@:" * (MIB // 2),
        "(a" * (MIB // 2) + ":@",
        "a\\u" * (MIB // 3) + "@",
    ],
    ids=lambda text: f"{text[:10]}~{len(text)}",
)
def test_a_mebibyte_of_adversarial_text_is_redacted_in_linear_time(text):
    secrets = secrets_of([json.dumps({"a": "abcdefgh", "b": 12345, "c": [f"x{CANARY}"]})])
    started = time.process_time()
    redact(text, secrets)
    assert time.process_time() - started < 10.0


@pytest.mark.parametrize(
    "name",
    # Label keys hostile round three (a37 N3) saw printed in clear in a plan's diff.
    [
        *("pwd", "auth", "authorization", "bearer", "cookie", "session", "kubeconfig", "ssh-key", "signing-key"),
        *("dsn", "connection-string", "cert", "client-secret", "x-password-x", "passphrase"),
    ],
)
def test_a_key_named_after_a_credential_hides_its_values(name):
    assert names_a_credential(name) and names_a_credential(name.upper())


@pytest.mark.parametrize("name", ["team", "gpu-type", "nebius.com/gpu-platform", "dra.example.com/node-group"])
def test_a_key_that_names_no_credential_keeps_its_values(name):
    assert not names_a_credential(name)


@pytest.mark.parametrize(
    "value",
    [NUMBER_CANARY, NUMBER_CANARY + 0.25, -NUMBER_CANARY, [NUMBER_CANARY, CANARY], {"a": {"b": NUMBER_CANARY}}],
    ids=lambda value: type(value).__name__,
)
def test_no_leaf_of_a_secret_only_key_given_in_plain_text_is_quoted_by_the_stack_file_reader(value, tmp_path, capsys):
    """The type check quotes what it refuses; a plain kubeconfig's leaves, numbers too, are shown as [secret]."""
    text = (ROOT / "Pulumi.dev.yaml").read_text()
    line = f"  nebius-dra:existingClusterKubeconfig: {json.dumps(value)}\n"
    path = tmp_path / "Pulumi.try.yaml"
    path.write_text(text.replace("config:\n", "config:\n" + line, 1))
    (tmp_path / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    assert plan_cli.main(["--stack-file", str(path), "--no-base", "--out", "none"]) == 2
    shown_text = capsys.readouterr()
    assert "existingClusterKubeconfig: got " in shown_text.err and "[secret]" in shown_text.err
    assert_no_canary(shown_text.out, shown_text.err, canaries=(CANARY, str(NUMBER_CANARY)[:8]))


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        # A flag that takes a value never eats the next flag.
        (f"/bin/echo --secret --token {CANARY} -p x", "--secret --token [redacted]"),
        (f"cmd --password --api-key={CANARY}", "--password --api-key=[redacted]"),
        # A shell redirection is no value: the hint names the key.
        ("`pulumi config set nebius-dra:k --secret < kubeconfig`", "nebius-dra:k --secret < kubeconfig"),
        # A JSON escape of a control character inside a token does not end it.
        ('"token":"' + CANARY[:3] + "\\u0001" + CANARY + '"}', '"token":"[redacted]"}'),
        ('"password": "a\\n' + CANARY + '"', '"password": "[redacted]"'),
        # A bare fragment or query part is redacted whole (RFC 3986 sections 3.4 and 3.5 give them no structure).
        (f"https://h/charts?token=x#{CANARY}", "https://h/charts?token=[redacted]#[redacted]"),
        (f"https://h/x?{CANARY}&a=1", "https://h/x?[redacted]&a=[redacted]"),
        (f'got "https://h:1/x#{CANARY}"; expected', 'got "https://h:1/x#[redacted]"; expected'),
        # A careless URL's slashes (urllib reads the rest as a path) still end its scheme; its userinfo is as secret.
        (f'got "https:/u:{CANARY}@mirror.example.com/"', 'got "https:/[credentials]@mirror.example.com/"'),
        (f"oci:///robot:{CANARY}@registry.example.com/charts", "oci:///[credentials]@registry.example.com/charts"),
        (f"server https:\\\\u:{CANARY}@api.example.com", "server https:\\\\[credentials]@api.example.com"),
        # Hostile review a40 #3: a look-alike '@', as it is or escaped, ends the userinfo as '@' does; a ':' that no
        # port follows is a password's, its '@' missing.
        (f"https://u:{CANARY}\uff20harbor.example.com/n", "https://[credentials]\uff20harbor.example.com/n"),
        (f"https://u:{CANARY}\ufe6bharbor.example.com/n", "https://[credentials]\ufe6bharbor.example.com/n"),
        (
            f'got "https://u:{CANARY}\\uff20harbor.example.com/n"',
            'got "https://[credentials]\\uff20harbor.example.com/n"',
        ),
        (f"https://u:{CANARY}%40harbor.example.com/n", "https://[credentials]%40harbor.example.com/n"),
        (f'got "https://u:{CANARY}/n"; expected', 'got "https://[credentials]/n"; expected'),
        (f"https://u:1234;{CANARY}/n", "https://[credentials]/n"),
        ("on https://h.example.com:8443; and https://h:1,", "on https://h.example.com:8443; and https://h:1,"),
        (
            'got "https://[::1]:8443/n" and https://h.example.com:443',
            'got "https://[::1]:8443/n" and https://h.example.com:443',
        ),
        # An image pinned by digest is no URL: nothing of it is taken for credentials.
        ("image nvidia/cuda:13.1.1@sha256:abc", "image nvidia/cuda:13.1.1@sha256:abc"),
    ],
)
def test_flags_escapes_and_bare_url_parts_never_show_the_credential(text, kept):
    shown_text = redact(text)
    assert kept in shown_text, shown_text
    assert_no_canary(shown_text)


DIGEST = "sha256:" + "0123456789abcdef" * 4


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        # Hostile review, issue 37 #1: an authority without its `scheme://`, in a Helm value or a kubeconfig's server.
        (f"u:{CANARY}@host", "[credentials]@host"),
        (f"user:p%40ss{CANARY}@registry.example.com/x", "[credentials]@registry.example.com/x"),
        (f"  repository: u:{CANARY}@host/x\n", "  repository: [credentials]@host/x\n"),
        (f'{{"server":"admin:{CANARY}@api.example.com:6443"}}', '{"server":"[credentials]@api.example.com:6443"}'),
        (f"--url=robot:{CANARY}@h (ok)", "--url=[credentials]@h (ok)"),
        (f"(u:{CANARY}@h)", "([credentials]@h)"),
        (f"ops@corp.example:{CANARY}@h", "[credentials]@h"),
        (f"u:a@b{CANARY}@h", "[credentials]@h"),
        (f"mailto:u:{CANARY}@h", "[credentials]@h"),
        # Look-alikes of ':' and '@', as they are, escaped or percent-encoded.
        (f"u\uff1a{CANARY}\uff20h", "[credentials]\uff20h"),
        (f"u\ufe6b{CANARY}\ufe6bh".replace("\ufe6b", "\u2236", 1), "[credentials]\ufe6bh"),
        (f"u%3A{CANARY}%40h", "[credentials]%40h"),
        (f"u\\uff1a{CANARY}\\uff20h", "[credentials]\\uff20h"),
        # What only looks like one is kept: an image by tag or digest, a config key, a port, an address, the form named.
        (f"nvcr.io/nvidia/k8s-dra-driver-gpu:v25.8.0@{DIGEST}", None),
        (f"image busybox:1.36@{DIGEST}, pinned", None),
        ("repo:tag nebius-dra:name host:8443 [::1]:8443", None),
        ("ops@example.com git@github.com:org/repo.git mailto:ops@example.com", None),
        ("a URL with `user:password@` is refused", None),
    ],
)
def test_an_authority_without_a_scheme_has_its_userinfo_redacted(text, kept):
    for form in (text, json.dumps(text), shown(text)):
        assert_no_canary(redact(form))
    assert redact(text) == (text if kept is None else kept)


@given(user=USERINFO, before=USERINFO, after=USERINFO, host=HOST)
@example(user="u", before="p@", after="@x", host="registry.example.com")
def test_the_userinfo_of_an_authority_without_a_scheme_is_redacted_to_the_last_at(user, before, after, host):
    """As urlsplit reads `//` + the same text: the userinfo ends at the authority's last '@'."""
    user = user.lstrip("\"'=(,;")
    # After an empty user, a quote (or a backslash-escaped one, JSON in a JSON string) reads as compact JSON's
    # `"name":"value"` (the redactor's one exception).
    before = before if user else re.sub(r"^(?:\\?[\"'`])+", "", before)
    text = f"{user}:{before}{CANARY}{after}@{host}/charts"
    if CANARY not in urlsplit(f"//{text}").netloc.rpartition("@")[0]:
        return  # a ':' of the user part that is no first ':' of a token (a boundary character before it)
    for form in (f"image: {text}", f'"server": "{text}"', f"--url={text}"):
        assert_no_canary(redact(form))


def test_a_plan_of_helm_values_with_an_authority_without_a_scheme_shows_no_password(tmp_path, capsys):
    """Issue 37 #1, end to end: `u:PASSWORD@host` in draDriverValues reaches no output of the plan, not stdout, not
    stderr, not the JSON plan, not a file it writes: a plain values leaf of a credential's shape is refused (it would
    be deployed and kept in the state in clear), naming its path, and nothing is written."""
    document = yaml.safe_load((ROOT / "Pulumi.dev.yaml").read_text())
    document["config"]["nebius-dra:draDriverValues"] = {
        "image": {"repository": f"u:{CANARY}@registry.example.com/x"},
        "kubeletPlugin": {"priorityClassName": f"user:p%40ss{CANARY}@registry.example.com/x"},
    }
    path = tmp_path / "Pulumi.try.yaml"
    path.write_text(yaml.safe_dump(document))
    (tmp_path / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    out = tmp_path / "out"
    for output in ("text", "json"):
        argv = ["--stack-file", str(path), "--no-base", "--format", output, "--out", str(out)]
        assert plan_cli.main(argv) == plan_cli.EXIT_PROGRAM
        printed = capsys.readouterr()
        assert "image.repository" in printed.out + printed.err
        assert_no_canary(printed.out, printed.err)
    assert not [file for file in out.rglob("*") if file.is_file()]


def test_the_plain_kubeconfig_hint_names_the_key_it_asks_to_set_as_a_secret():
    config = dict(read_stack_file("dev").values)
    config["nebius-dra:existingClusterKubeconfig"] = "apiVersion: v1\nkind: Config\n"
    run = run_program("dev", config=config, secret_keys=[])
    assert "`pulumi config set nebius-dra:existingClusterKubeconfig --secret < kubeconfig`" in str(run.error)


# A config key is never a secret (attack 37, F3 and F4): the line that refuses one names it whole, in every output, and
# no word of the message after it is taken for a credential. Each breaks one rule the redactor had: `password` and
# `dbPassword` read as a credential field (`password: is`), `\e[2J` (a backslash, then a '[' without its ']') as a
# malformed URL `dra:\host`, the escape character as one once JSON-encoded (`\u001b[1m`). A key that may hold a
# credential (the backslash of `\e[2J`; issue 37's `user:PW@host`) is named by its shape, one with an invisible
# character with it escaped (`shown_name`), in both outputs.
CONFIG_KEYS = ["password", "dbPassword", "apiToken", "\\e[2J", "\x1b[1m"]


@pytest.mark.parametrize("key", CONFIG_KEYS)
@pytest.mark.parametrize("output", ["text", "json"])
def test_a_refused_config_key_is_named_whole_and_its_message_is_kept(key, output, tmp_path, capsys):
    stack_file = hostile_stack_file(tmp_path, {f"nebius-dra:{key}": "x"})
    status = plan_cli.main(["--stack-file", str(stack_file), "--format", output, "--out", "none", "--no-base"])
    assert status == plan_cli.EXIT_PROGRAM
    captured = capsys.readouterr()
    named = f"{shown_name(f'nebius-dra:{key}')}: is set in"
    assert named in (json.loads(captured.out)["error"] if output == "json" else captured.err)


def test_shown_redacts_a_value_before_it_encodes_it():
    # Redacted once encoded, the token would end at the backslash of `\u0007`, and its rest would show.
    assert shown("Bearer abc\x07def") == '"Bearer [redacted]"'


@pytest.mark.parametrize(
    "value",
    [
        f"bob:{CANARY}@charts.example.com",  # no scheme
        f"https\uff1a//bob:{CANARY}@h",  # a look-alike colon: no URL to the redactor
        f"https:bob:{CANARY}@h",  # no '//'
        f"//bob:{CANARY}@h/charts",
        f"https://h/c?sig={CANARY}",
        f"https://h/c;jsessionid={CANARY}",
        f"{CANARY}%40h",
        f"user:{CANARY}:x",
        f'{{"url": "https://u:{CANARY}@h/x"}}',
    ],
)
def test_shown_describes_a_text_with_a_credentials_mark_by_its_shape(value):
    """Refusals quote what the user gave through `shown`; a text with '@', a query, a parameter, a second ':' or a
    look-alike of either is told by its length and characters, however it is spelt around the credential."""
    for form in (value, {"source": value}, [value]):
        text = shown(form)
        assert_no_canary(text)
        assert f"<{len(value)} characters: " in text and SHAPE_END in text


@pytest.mark.parametrize(
    "value",
    [
        "gpu-h200-sxm",
        "nvidia/cuda:12.4.1-base",
        "nebius-dra:gpuNodeGroups",
        "https://h.example:8443/charts",
        "150%",
        "1.34\n",
        "ghcr.io/x/y@sha256:" + "a" * 64,
        "NVIDIA H200 (SXM)",
    ],
)
def test_shown_quotes_a_text_without_a_credentials_mark(value):
    assert shown(value) == json.dumps(value)


def test_the_json_plan_is_redacted_before_it_is_encoded(tmp_path, capsys, monkeypatch):
    real = plan_cli.build_plan
    error = f"refused https://m.example.com/c?sig={CANARY}\\"

    def failing(*args: Any, **kwargs: Any) -> Any:
        plan = real(*args, **kwargs)
        return dataclasses.replace(plan, run=dataclasses.replace(plan.run, error=ValueError(error)))

    monkeypatch.setattr(plan_cli, "build_plan", failing)
    status = plan_cli.main(["--stack", "dev", "--format", "json", "--out", "none", "--no-base"])
    assert status == plan_cli.EXIT_PROGRAM
    assert json.loads(capsys.readouterr().out)["error"] == "refused https://m.example.com/c?sig=[redacted]"


def test_a_problem_line_redacts_its_message_never_its_key():
    problems = ConfigProblems(secrets_of(["gpuNodeGroups"]))
    problems.add("nebius-dra:gpuNodeGroups", "got gpuNodeGroups")
    assert problems.lines == ["nebius-dra:gpuNodeGroups: got [secret]"]


# Every Unicode white space but the line feed that ends an output's line (a no-break space U+00A0 among them).
BLANKS = st.sampled_from(sorted({chr(c) for c in range(0x3000 + 1) if chr(c).isspace()} - {"\n"}))
# What a token, a password or base64 is written with, around the canary.
TOKEN_TEXT = st.text(alphabet="abcXYZ019-._~+/=", max_size=6)


@given(
    blank=BLANKS,
    before=TOKEN_TEXT,
    after=TOKEN_TEXT,
    form=st.sampled_from(["--token{}", "--password{}", "token:{}", "Bearer{}", "Authorization: Basic{}", "basic{}"]),
)
@example(blank="\u00a0", before="", after="", form="--token{}")
@example(blank=" ", before="", after="", form="Authorization: Basic{}")
def test_a_credential_after_any_unicode_blank_or_in_basic_authorization_is_redacted(blank, before, after, form):
    """A no-break space, an em space or a tab after `--token` ends no redaction; `Basic <base64>` is a credential
    (RFC 7617) as a bearer token is (RFC 6750)."""
    text = form.format(blank) + before + CANARY + after
    for quoted in every_form(text):
        assert_no_canary(redact(quoted))


@given(before=TOKEN_TEXT, after=TOKEN_TEXT, blank=BLANKS)
@example(before="", after="", blank=" ")
def test_every_credential_flag_of_a_command_line_is_redacted_by_argument(before, after, blank):
    """The exec plugin's command line is redacted argument by argument: `-p VALUE`, `-pVALUE`, a value with a space
    or a quote (one argument, which `shlex.join` quotes), the value after a flag that starts `--`."""
    secret = before + CANARY + after
    for argv in (
        ["get-token", "-p", secret],
        ["get-token", f"-p{secret}"],
        ["get-token", "--token", f"a{blank}'{secret}"],
        ["get-token", "--secret", "--token", secret],
        ["get-token", f"--api-key=x y{secret}"],
        ["get-token", f"--token{blank}{secret}"],
    ):
        assert_no_canary(redact(redacted_command(argv)))
    assert redacted_command(["get-token", "--profile", "dev", "-p", secret]) == "get-token --profile dev -p [redacted]"


@pytest.mark.parametrize(
    "args",
    [
        ["--token", CANARY, f"--client-secret={CANARY}"],
        ["-p", CANARY],
        [f"-p{CANARY}"],
        ["--token", f"a b{CANARY}"],
        ["--token\u00a0" + CANARY],
        ["-p", f"x'{CANARY}"],
    ],
    ids=["long", "short", "joined", "quoted", "no-break-space", "quote"],
)
def test_no_canary_in_verifys_output_from_an_exec_plugins_credential_flags(args, tmp_path, capsys):
    """Every exec error names the command line; a credential passed to it as a flag is not echoed, however written."""
    printed = outputs_of_a_failing_plugin(tmp_path, capsys, "", tuple(args))
    assert "get-token.sh --profile dev " in printed[1] and "[redacted]" in printed[1]
    assert_no_canary(*printed)


@pytest.mark.parametrize("position", [0, 150, 290, 299, 5000, 100_000])
def test_a_long_exec_plugin_stderr_is_quoted_redacted_and_bounded(position, tmp_path, capsys):
    """The plugin's last stderr line is quoted in at most 300 characters, redacted whatever the cut leaves."""
    line = "x" * position + f"token: {CANARY} Authorization: Basic {CANARY}" + "y" * 200_000
    (tmp_path / "stderr.txt").write_text(line + "\n")
    printed = outputs_of_a_failing_plugin(tmp_path, capsys, f"cat '{tmp_path / 'stderr.txt'}' >&2\n")
    assert_no_canary(*printed, canaries=(CANARY, CANARY[:5], "y" * 300))


def project_texts_about_credentials() -> list[str]:
    """Every string the config reader and the input models write, and every line of the configuration docs, that
    speaks of a login, a password, a token or authentication."""
    words = ("password", "token", "authentication", "login", "basic")
    texts = {
        node.value
        for module in (*(ROOT / "components" / "config").glob("*.py"), *(ROOT / "components" / "input").glob("*.py"))
        for node in ast.walk(ast.parse(module.read_text()))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    # The shell commands in the docs are left out: `--secret` before a value hides it, as a credential flag does.
    texts |= {
        line
        for doc in ("configuration.md", "e2e.md")
        for line in (ROOT / "docs" / doc).read_text().splitlines()
        if "--secret" not in line
    }
    return sorted(text for text in texts if any(word in text.lower() for word in words))


@pytest.mark.parametrize("before", ["prefix-", "project-", "ns_", "x:"])
def test_a_token_form_after_a_hyphen_or_underscore_is_a_token(before):
    """Re-attack, 2026-12-03: `prefix-ghp_...`, `project-ghp_...` were written and quoted in clear."""
    token = "ghp_CANARYabcdefghijklmnopqrstuvwxyz0123"
    assert may_hold_a_credential(f"{before}{token}")
    assert "CANARY" not in redact(f"value {before}{token} here")


@pytest.mark.parametrize("newline", ["\n", "\\n"])
@pytest.mark.parametrize("label", ["", "RSA ", "EC ", "ENCRYPTED ", "OPENSSH "])
def test_a_pem_private_key_pasted_into_a_value_is_redacted_and_never_quoted(label, newline):
    """Re-attack, 2026-12-03: a PEM private key in a plain draDriverValues leaf was written to the values file."""
    key = newline.join(
        [
            f"-----BEGIN {label}PRIVATE KEY-----",
            "MIIEpAIBAAKCAQEACANARYq7",
            "Zk+/abc=",
            f"-----END {label}PRIVATE KEY-----",
        ]
    )
    assert "CANARY" not in redact(f'{{"tls": {{"key": "{key}"}}}}')
    assert may_hold_a_credential(key)


def test_no_credential_pattern_eats_a_word_of_the_projects_own_texts_about_credentials():
    """Attack 2, #13: `password: a login goes in` lost its `a`, `basic authentication` its `authentication`; the
    verifier's `a bearer token is visible ASCII only` its `token`, and a stack name quoted before `: a stack name`
    (`"../../etc/passwd"`) its `a`."""
    texts = [
        *project_texts_about_credentials(),
        'kubeconfig k: user "u": token holds a character an HTTP Authorization header cannot carry (a space, a '
        "newline or another control or non-ASCII character); a bearer token is visible ASCII only (RFC 6750 section "
        "2.1). The value is secret and not shown",
        "bearer tokens need TLS (RFC 6750 section 5.3); a Bearer token.",
        '--stack: invalid stack name "../../etc/passwd": a stack name is 1 to 100 characters',
        "--stack: invalid stack name '../etc/passwd': the stack name is 1 to 100 characters",
    ]
    assert any("password: a login" in text for text in texts) and any("basic authentication" in text for text in texts)
    assert [text for text in texts if redact(text) != text] == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Helm 3 (https://helm.sh/docs/faq/changes_since_helm2/#release-names): a release lives in its namespace",
            "Helm 3 (https://helm.sh/docs/faq/changes_since_helm2/#release-names): a release lives in its namespace",
        ),
        ("(see https://en.wikipedia.org/wiki/Foo_(bar)) ok.", "(see https://en.wikipedia.org/wiki/Foo_(bar)) ok."),
        ("(https://u:p@h/x?t=s3cr3t).", "(https://[credentials]@h/x?t=[redacted])."),
    ],
)
def test_the_sentence_around_a_url_is_not_taken_for_its_fragment_or_query(text, expected):
    """Newcomer, 2026-12-02: the plan's sources lost their closing `)`, read as part of a redacted fragment."""
    assert redact(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # An anchor names a place in the page (RFC 3986 section 3.5): a cited source keeps it.
        (
            "https://kubernetes.io/docs/tasks/administer-cluster/namespaces/#deleting-a-namespace",
            "https://kubernetes.io/docs/tasks/administer-cluster/namespaces/#deleting-a-namespace",
        ),
        ("RFC 6749 (https://www.rfc-editor.org/rfc/rfc6749#section-4.2.2).", None),
        ('got "https://github.com/o/r/blob/main/a.py#L10-L20"; expected', None),
        ("https://docs.example.com/api#Release_v3.spec", None),
        # An OAuth implicit grant returns its token as a fragment parameter (RFC 6749 section 4.2.2).
        (
            "https://app.example.com/cb#access_token=CANARY&state=s",
            "https://app.example.com/cb#access_token=[redacted]&state=[redacted]",
        ),
        # A bare fragment that is no anchor's words may be a token (a share link's key): in capitals, in mixed case,
        # digits among letters, a doubled separator, a character no anchor has.
        ("https://h/x#CANARY", "https://h/x#[redacted]"),
        (f"https://h/x#{CANARY}", "https://h/x#[redacted]"),
        ("https://h/x#q7Zk-aa", "https://h/x#[redacted]"),
        ("https://h/x#a--b", "https://h/x#[redacted]"),
        ("https://h/x#a~b", "https://h/x#[redacted]"),
    ],
)
def test_a_fragment_is_shown_only_when_it_is_an_anchor(text, expected):
    """Newcomer a39, 2026-12-02: the plan's sources read `namespaces/#[redacted]`, their anchors taken for tokens."""
    assert redact(text) == (text if expected is None else expected)


def test_every_source_of_the_table_of_consequences_is_shown_whole():
    """Its closing brackets and its anchors (`namespaces/#deleting-a-namespace`) are the source's, not a secret."""
    assert [row.source for row in CONSEQUENCES if redact(row.source) != row.source] == []


# How a user and a password are pasted together into the username: RFC 7617's colon, blanks, look-alike colons.
# Hostile review a40 #2: only ':' was redacted, and the rest was quoted whole.
USERNAME_SEPARATORS = {
    ":": "U+003A COLON",
    " ": "U+0020 SPACE",
    "\t": "U+0009",
    "\n": "U+000A",
    "\ua789": "U+A789 MODIFIER LETTER COLON",
    "\uff1a": "U+FF1A FULLWIDTH COLON",
}


@pytest.mark.parametrize("separator", USERNAME_SEPARATORS)
@pytest.mark.parametrize("output", ["text", "json"])
def test_a_password_typed_into_the_username_is_never_quoted_by_the_plan(output, separator, tmp_path, capsys):
    """Hostile round five: `robot:<password>` in chartRepositoryUsername was refused quoting it whole."""
    login = {**MIRROR_LOGIN, "nebius-dra:chartRepositoryUsername": f"robot{separator}{CANARY_PASSWORD}"}
    stack_file = hostile_stack_file(tmp_path, login)
    status = plan_cli.main(["--stack-file", str(stack_file), "--format", output, "--out", "none", "--no-base"])
    printed = outputs_of(capsys)
    assert status == 2 and "chartRepositoryUsername" in printed[0] + printed[1], printed
    assert_no_canary(*printed)


@pytest.mark.parametrize("separator", USERNAME_SEPARATORS)
def test_a_password_typed_into_the_username_is_never_quoted_by_the_program(separator):
    """The refusal says what is wrong with the username, its length and its first character not allowed, never its
    text: no rule lists every character a password may be pasted after."""
    username = f"robot{separator}{CANARY_PASSWORD}"
    config = {
        **read_stack_file("dev").values,
        **MIRROR_LOGIN,
        "nebius-dra:chartRepositoryUsername": username,
        PASSWORD_KEY: "another-password",
    }
    run = run_program("dev", config=config, secret_keys=[PASSWORD_KEY])
    assert (
        f"nebius-dra:chartRepositoryUsername: got a user name of {len(username)} characters, character 6 is "
        f"{USERNAME_SEPARATORS[separator]} (the text is not quoted" in str(run.error)
    ), run.error
    assert "robot" not in str(run.error)
    assert_no_canary(str(run.error))


@pytest.mark.parametrize(
    "args",
    [
        *(["--pw", CANARY], ["--pass", CANARY], ["--pwd", CANARY], ["--passphrase", CANARY], ["--cred", CANARY]),
        *(["--credentials", CANARY], ["--jwt", CANARY], ["--otp", CANARY], [f"--auth={CANARY}"]),
        *(["-u", f"admin:{CANARY}"], [f"--user=admin:{CANARY}"]),
    ],
)
def test_an_exec_plugins_credential_flag_of_any_name_hides_its_value(args):
    """Hostile review, issue 37 #2: each of these was printed in the exec plugin's command line."""
    shown_command = redact(redacted_command(["get-token", "--profile", "dev", *args]))
    assert shown_command.startswith("get-token --profile dev ") and REDACTED_MARK in shown_command
    assert_no_canary(shown_command)


JWT_CANARY = f"eyJhbGciOiJIUzI1NiJ9.eyJ{CANARY}.sig"
GITHUB_CANARY = f"ghp_{CANARY}0123456789ab"


@pytest.mark.parametrize(
    "args",
    [[f"u:{CANARY}@host"], [JWT_CANARY], [GITHUB_CANARY], ["--profile", "dev", JWT_CANARY], [f"--out=u:{CANARY}@h"]],
    ids=["authority", "jwt", "github-token", "after-a-plain-flag", "a-flags-value"],
)
def test_an_exec_argument_of_a_credentials_shape_is_hidden_without_a_credential_flag_before_it(args):
    """A kubeconfig's exec `args: ["get-token", "u:PW@host"]`, a JWT or a GitHub token: no flag names a credential,
    the argument's shape does (`may_hold_a_credential`, the predicate `shown` quotes by)."""
    shown_command = redacted_command(["get-token", *args])
    assert shown_command.startswith("get-token ") and REDACTED_MARK in shown_command
    assert_no_canary(shown_command)


def test_an_exec_command_line_without_a_credential_is_shown_whole():
    argv = [
        "/usr/bin/aws",
        "eks",
        "get-token",
        "--cluster-name",
        "c",
        "--region=us-west-2",
        "--server",
        "https://h:443",
    ]
    assert redacted_command(argv) == " ".join(argv)


# A token of each known form: these count glued inside a word too; WORD_START_TOKENS only at a word's start (`task-`,
# `disk-` end in `sk-`).
KNOWN_FORM_TOKENS = [
    JWT_CANARY,
    GITHUB_CANARY,
    f"gho_{CANARY}0123456789ab",
    f"github_pat_{CANARY}_0123456789ab",
    f"glpat-{CANARY}-0123456789",
    f"xoxb-{CANARY}-0123",
    f"AKIA{CANARY.upper()}012345",
]
WORD_START_TOKENS = [
    f"sk-{CANARY}0123456789abcdef",
    f"sk-proj-{CANARY}0123456789abcdef_x-y",
    f"sk-ant-api03-{CANARY}0123456789abcdef",
]


@pytest.mark.parametrize("token", [*KNOWN_FORM_TOKENS, *WORD_START_TOKENS])
def test_redacted_replaces_a_whole_token_of_a_known_form_in_free_text(token):
    """Attack 2, A5: a CEL refusal quoted `productName == "ghp_..."` whole; free text hides a token by its form."""
    assert redact(f'productName == "{token}" fails.') == 'productName == "[redacted]" fails.'
    assert redact(f"token {token}.") == "token [redacted]."


@given(token=st.sampled_from(KNOWN_FORM_TOKENS), before=st.text("abXZ09", max_size=14), after=TOKEN_TEXT)
@example(token=GITHUB_CANARY, before="3", after="")
@example(token=GITHUB_CANARY, before="vpcsubnet-e00", after="")
@example(token=JWT_CANARY, before="x", after="")
@example(token=f"AKIA{CANARY.upper()}012345", before="X", after="9")
def test_a_token_of_a_known_form_glued_to_the_text_before_it_is_refused_and_redacted_alike(token, before, after):
    """Attack4 #1, #2: `3ghp_...`, `dra<token>`, `vpcsubnet-e00ghp_...` were quoted whole; a token's form counts
    wherever it starts inside a word, for the refusal (`may_hold_a_credential`) and the redaction alike."""
    text = before + token + after
    assert may_hold_a_credential(text)
    for quoted in every_form(text):
        assert_no_canary(redact(quoted), canaries=(CANARY, CANARY.upper()))


@pytest.mark.parametrize(
    "text",
    [
        "keyJobRunnerName",
        "surveyJsonFieldsAll",
        "task-queue-production",
        "EURASIA-1",
        "laughs_a",
        "boxoxb",
        "disk-AbCdEf0123456789AbCdEf01",
        "sk-learn-compatibility-layer",
    ],
)
def test_a_word_that_holds_a_token_forms_letters_is_no_token(text):
    """`eyJ` inside a camel-case word is no JWT (only a JOSE header's start is, glued), nor `sk-` inside a word."""
    assert not may_hold_a_credential(text) and redact(text) == text


@pytest.mark.parametrize("text", [JWT_CANARY, GITHUB_CANARY, f"AKIA{CANARY.upper()}012345"])
def test_shown_describes_a_token_by_its_shape_where_it_has_no_marker(text):
    assert NOT_QUOTED in shown(text) and CANARY not in shown(text) and CANARY.upper() not in shown(text)


@pytest.mark.parametrize(
    "image", [f"nvcr.io/nvidia/driver:v1@{DIGEST}", "nvcr.io/nvidia/driver:v1@sha512:" + "ab" * 64, "busybox:1.36"]
)
def test_an_image_by_tag_or_digest_is_quoted_by_shown(image):
    assert NOT_QUOTED not in shown(image) and shown(image).startswith(json.dumps(image)[:60])


def test_a_team_label_in_the_costs_quota_table_is_shown_by_its_shape():
    """A team, namespace or group name that may hold a credential is shown as every label shows one (`shown_name`)."""
    entry = {"team": f"u:{CANARY}@host", "namespace": f"ns:{CANARY}@h", "group": f"g:{CANARY}@h"}
    entry |= {"gpus": 2, "groupGpus": 8, "share": 0.25, "usdPerHour": 1.0, "usdPer30Days": 720.0}
    (row,) = team_rows({"teams": [entry]}, lambda value: f"${value:.2f}")
    assert all(NOT_QUOTED in label for label in row[:3]), row
    assert_no_canary(*row)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("https://yC8ttsxgp4yYsGht.charts.example/nvidia", "https://[redacted].charts.example/nvidia"),
        (
            "oci://mirror.CANARYx7Kq2mPz9Wv4Lb.registry.example/charts",
            "oci://mirror.[redacted].registry.example/charts",
        ),
        ("pulls from https://a1B2c3D4e5F6g7H8i9J0:8443/charts.", "pulls from https://[redacted]:8443/charts."),
        (f"https://{'0123456789abcdef' * 2}.example.com/x", "https://[redacted].example.com/x"),
        ("oci://ci-yC8ttsxgp4yYsGht.example.com:5000/cuda", "oci://ci-[redacted].example.com:5000/cuda"),
    ],
)
def test_a_token_shaped_host_label_is_redacted(text, expected):
    """Issue 37: a host label of a token's shape that no prefix names (a service handing out a host per customer) was
    printed as it is."""
    assert redact(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "https://nvidia2024mirror.example.com/charts",
        "https://helm.ngc.nvidia.com/nvidia",
        "oci://registry.k8s.io/dra-driver-nvidia/charts",
        "d111111abcdef8.cloudfront.net",
        "see docs.nebius.com/signup-billing/billing-changes-oct-2025.",
        "https://charts.example/nvidia2024mirror/stable",
        "nvidia/cuda:13.1.1-runtime-ubuntu24.04",
        # Outside a URL a dotted name is code as often: a plan's source cites the SDK's argument classes.
        "pulumi-nebius 0.6.73, Mk8sV1NodeGroupArgs.template: ...",
    ],
)
def test_a_host_or_word_of_no_tokens_shape_is_shown(text):
    assert redact(text) == text


@pytest.mark.parametrize(
    ("word", "token"),
    [
        ("yC8ttsxgp4yYsGht", True),  # a Cloudsmith entitlement token's shape: 16 of base62
        ("CANARYx7Kq2mPz9Wv4Lb", True),
        ("Z9yX8wV7uT6sR5qP4oN3mL2kJ1iH0gF9eD8c", True),  # a GitHub token's 36 after its prefix
        ("0123456789abcdef0123456789abcdef", True),  # 128 bits in hex
        ("nvidia2024mirror", False),
        ("h100sxm80gb2024", False),
        ("aB3" * 5, False),  # 15: under 16
        ("internationalization", False),
        ("ABCDEFGHIJKLMNOP1234", False),  # one case: none of the base62 rule, no hex
        ("12345678901234567890123456789012", False),  # digits only
        ("deadbeefdeadbeefdeadbeefdeadbeef", False),  # no digit
    ],
)
def test_a_token_shaped_word_needs_what_a_random_token_has(word, token):
    """Issue 37: any 16 letters and digits holding both were a token, `nvidia2024mirror` among them."""
    assert token_shaped_word(word) is token
