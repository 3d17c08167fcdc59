"""Every file and answer from outside goes through `components/config/reading.py`: regular files only, a size
cap, a depth cap, an alias cap, whole numbers in range. Each refusal names the input and the limit, exits 2 from
the tools, never hangs and never ends in a traceback; text echoed from it is escaped for terminals and Markdown.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from components.config import reading
from components.config.reading import InputError, load_json, markdown_text, parse_json, parse_yaml, printable
from components.config.stack_file import PROJECT_DIR, StackFileError, read_stack_file
from components.shown import shown
from policies.dra_guardrails import PolicyConfigError, validate_policy_config
from tests.git_repository import git
from tools.cost import __main__ as cost_cli
from tools.plan import __main__ as plan_cli

# A bound on waiting, not on speed: a read of a FIFO without a writer, a YAML alias bomb expanded or a plan
# stuck would not end within it, while a loaded 2-core machine (issue 38) stays far below it.
BOUND_S = 60.0
ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(8)
)


@pytest.fixture
def fifo(tmp_path) -> Path:
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path


def test_a_fifo_and_a_device_are_refused_at_once_never_waited_on(fifo):
    started = time.monotonic()
    with pytest.raises(InputError, match=r"cannot read --baseline .*: it is a FIFO, not a regular file"):
        load_json(fifo, f"--baseline {fifo}")
    with pytest.raises(InputError, match="it is a device, not a regular file"):
        load_json(Path("/dev/zero"), "--policy-config /dev/zero")
    assert time.monotonic() - started < BOUND_S


def test_a_file_past_the_size_limit_is_refused_by_name(tmp_path, monkeypatch):
    monkeypatch.setattr(reading, "MAX_INPUT_BYTES", 1024)
    path = tmp_path / "big.json"
    path.write_text(" " * 2048)
    with pytest.raises(InputError, match=r"big.json: larger than 0 MiB, the limit on one input \(MAX_INPUT_BYTES\)"):
        reading.read_text(path, str(path), limit=reading.MAX_INPUT_BYTES)


def test_a_yaml_alias_bomb_is_refused_before_it_is_built():
    started = time.monotonic()
    with pytest.raises(InputError, match=r"more than 200000 values once its aliases are expanded \(MAX_NODES\)"):
        parse_yaml(ALIAS_BOMB, "prices.yaml")
    assert time.monotonic() - started < BOUND_S


@pytest.mark.parametrize(
    ("parse", "text", "message"),
    [
        (parse_json, "[" * 100_000 + "]" * 100_000, "nested more than 64 levels deep (MAX_DEPTH)"),
        (parse_json, "[" * 500 + "]" * 500, "nested more than 64 levels deep (MAX_DEPTH)"),
        (parse_yaml, "a: " + "[" * 500 + "]" * 500, "nested more than 64 levels deep (MAX_DEPTH)"),
        (parse_json, "1" * 5000, "a whole number of 5000 digits; at most 300 (MAX_DIGITS)"),
        (parse_yaml, "a: " + "1" * 5000, "a whole number of 5000 digits; at most 300 (MAX_DIGITS)"),
        (parse_json, "1e999", "beyond a float's range (numbers must be finite)"),
        (parse_json, "NaN", "NaN is not a number this project reads"),
    ],
)
def test_depth_and_numbers_past_their_limits_are_refused_by_limit(parse, text, message):
    with pytest.raises(InputError) as refused:
        parse(text, "input")
    assert message in str(refused.value)


def test_a_deeply_nested_stack_value_is_refused_naming_the_file(tmp_path):
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    nested = "[" * 2000 + "]" * 2000
    (tmp_path / "Pulumi.t.yaml").write_text(f"config:\n  nebius-dra:draDriverValues: {{a: {nested}}}\n")
    with pytest.raises(StackFileError, match=r"Pulumi.t.yaml: nested more than 64 levels deep"):
        read_stack_file("t", tmp_path)


def run_plan(capsys, *args: str) -> tuple[int, str]:
    started = time.monotonic()
    status = plan_cli.main(["--stack", "dev", "--out", "none", *args])
    assert time.monotonic() - started < BOUND_S
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return status, err


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested more than 64 levels deep (MAX_DEPTH)"),
        ('{"max-hourly-cost": {"maxHourlyUsd": 1' + "0" * 5000 + "}}", "at most 300 (MAX_DIGITS)"),
        ('{"max-hourly-cost": {"maxHourlyUsd": 1e400}}', "beyond a float's range"),
        ('{"max-hourly-cost": {"maxHourlyUsd": 1' + "0" * 6 + "." + "0" * 292 + "}}", None),
        ("null", "the document is null"),
    ],
    ids=["deep", "digits", "float-overflow", "huge-but-in-range", "null"],
)
def test_the_plan_refuses_a_policy_config_past_the_limits_with_exit_2(tmp_path, capsys, document, message):
    path = tmp_path / "policy.json"
    path.write_text(document)
    status, err = run_plan(capsys, "--policy-config", str(path))
    if message is None:
        assert status in (plan_cli.EXIT_OK, plan_cli.EXIT_POLICY)
    else:
        assert status == plan_cli.EXIT_PROGRAM
        assert f'--policy-config "{path}"' in err and message in err


def test_a_budget_read_whole_but_past_what_any_stack_costs_is_refused_by_its_rule(tmp_path, capsys):
    """10**299 is within the reader's limits (300 digits), and no stack's cost could reach it: a gate that never fails."""
    path = tmp_path / "policy.json"
    path.write_text('{"max-hourly-cost": {"maxHourlyUsd": 1' + "0" * 299 + "}}")
    status, err = run_plan(capsys, "--policy-config", str(path))
    assert status == plan_cli.EXIT_PROGRAM
    assert "invalid policy config: max-hourly-cost: maxHourlyUsd must be a number of US dollars per hour" in err
    assert "at most 10,000,000" in err


@pytest.mark.parametrize("option", ["--policy-config", "--baseline"])
def test_the_plan_refuses_a_fifo_named_by_an_option(fifo, capsys, option):
    status, err = run_plan(capsys, option, str(fifo))
    assert status == plan_cli.EXIT_PROGRAM
    assert f"{option} {shown(str(fifo))}: it is a FIFO, not a regular file" in err


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            {"workload-images-pinned": {"enforcementLevel": ["mandatory"]}},
            'enforcement level ["mandatory"] is not one of',
        ),
        ({"workload-images-pinned": {"enforcementLevel": False}}, "enforcement level false is not one of"),
        ({"workload-images-pinned": {"enforcementLevel": ""}}, 'enforcement level "" is not one of'),
        ({"all": {"enforcementLevel": None}}, "enforcement level null is not one of"),
        (
            {
                "gpu-drivers-preset-known": {
                    "checkedPresets": [
                        {
                            "kubernetesVersion": "1.34",
                            "platform": "gpu-h200-sxm",
                            "driversPreset": "cuda13.0",
                            "checkedOn": "2026-02-31",
                        }
                    ]
                }
            },
            'checkedOn "2026-02-31" is not a day of the calendar',
        ),
    ],
    ids=["level-list", "level-false", "level-empty", "level-null", "impossible-date"],
)
def test_policy_config_values_that_would_do_nothing_or_crash_are_refused(config, message, capsys, tmp_path):
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(config))
    status, err = run_plan(capsys, "--policy-config", str(path))
    assert status == plan_cli.EXIT_PROGRAM
    assert message in err


def test_validate_policy_config_refuses_a_list_level_without_a_type_error():
    with pytest.raises(PolicyConfigError, match="enforcement level"):
        validate_policy_config({"all": {"enforcementLevel": ["advisory"]}})


def test_a_baseline_without_a_stack_name_is_refused(tmp_path, capsys):
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps({"nodeGroups": []}))
    status, err = run_plan(capsys, "--baseline", str(path))
    assert status == plan_cli.EXIT_PROGRAM
    assert 'the baseline has no "stack" name, so it cannot be known to be a plan of dev' in err


def test_a_baseline_value_reaches_the_terminal_and_the_summary_escaped(capsys, tmp_path):
    assert plan_cli.main(["--stack", "dev", "--out", "none", "--format", "json"]) == plan_cli.EXIT_OK
    document = json.loads(capsys.readouterr().out)
    # A release's values are the chart's, any text (a node group's preset is held to the stack's pattern, issue 37).
    values = next(r["values"] for r in document["releases"] if "kubeletPath" in r["values"])
    values["kubeletPath"] = "evil\x1b[2J\n```\n<img src=x onerror=alert(1)>"
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(document))
    for output in ("text", "markdown"):
        assert plan_cli.main(["--stack", "dev", "--out", "none", "--format", output, "--baseline", str(path)]) in (0, 1)
        shown = capsys.readouterr().out
        assert "\x1b" not in shown and "evil\\u001b[2J\\n```\\n<img" in shown
        assert "\n```\n<img" not in shown


def test_cost_refuses_an_empty_base(capsys):
    with pytest.raises(SystemExit) as exited:
        cost_cli.main(["--stack", "dev", "--base", ""])
    assert exited.value.code == 2
    assert "--base: got an empty revision" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("Pulumi.yaml", "config: [\n", "HEAD^1:Pulumi.yaml is not valid YAML"),
        ("Pulumi.yaml", "- a\n- b\n", "HEAD^1:Pulumi.yaml: expected a map with a config: map"),
        ("prices/nebius.yaml", ALIAS_BOMB, "MAX_NODES"),
    ],
    ids=["project-not-yaml", "project-a-list", "price-alias-bomb"],
)
def test_a_base_that_cannot_be_read_is_a_note_never_a_traceback(repository, name, text, message):
    (repository / name).write_text(text)
    git(repository, "commit", "--quiet", "-am", "broken base")
    git(repository, "checkout", "--quiet", "HEAD^1", "--", name)
    git(repository, "commit", "--quiet", "-am", "fixed")
    started = time.monotonic()
    base = cost_cli.base_cost("prod", "HEAD^1", repository)
    assert time.monotonic() - started < BOUND_S
    assert base.document is None and not base.comparable
    assert message in str(base.note)


def test_echoed_text_is_printable_and_literal_markdown():
    assert printable("a\nb\x1b[31m\u202e") == "a\\nb\\u001b[31m\\u202e"
    assert markdown_text("see [docs](https://x.example) <b>*now*</b> | `x`") == (
        "see \\[docs\\](https://x.example) &lt;b&gt;\\*now\\*&lt;/b&gt; \\| \\`x\\`"
    )


def test_a_price_source_reaches_the_pr_summary_as_text(tmp_path):
    from tools.cost.render import render_cost_markdown, render_cost_text

    document = {
        "groups": [
            {
                "name": "g",
                "usdPerNodeHour": 1.0,
                "priceDate": "2026-01-01",
                "priceSource": "https://x.example <img src=x> [click](https://evil.example)\n# heading\x1b[2J",
                "priceFrom": "prices/nebius.yaml",
            }
        ],
        "total": {},
    }
    markdown = "\n".join(render_cost_markdown(document))
    assert "<img" not in markdown and "[click]" not in markdown and "\n# heading" not in markdown
    text = "\n".join(render_cost_text(document))
    assert "\x1b" not in text and "\n# heading" not in text


def test_a_map_too_large_without_aliases_is_not_said_to_be_expanded():
    big = "".join(f"k{i}: 1\n" for i in range(reading.MAX_NODES))
    with pytest.raises(InputError, match=r"big.yaml: more than 200000 values \(MAX_NODES\)"):
        parse_yaml(big, "big.yaml")
