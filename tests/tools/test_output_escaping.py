"""Every echoed argument is escaped for its output: terminals (no control character or escape sequence) and, in the
Markdown plan and PR comment, Markdown and HTML (a hostile `--base` name stays text inside a code block it cannot
close). Fences are tracked as CommonMark 0.31.2 section 4.5 defines them: a code block closes only at a fence of the
same character at least as long as the one that opened it."""

from __future__ import annotations

import re

import pytest

from components.config.reading import markdown_code_block
from tests.helpers import ROOT
from tools.cost.__main__ import BaseCost, Head, render
from tools.plan import __main__ as plan_cli
from tools.plan.model import build_plan
from tools.plan.report import render_markdown, render_text
from tools.verify import __main__ as verify_cli

HOSTILE_NAMES = [
    "main```\n<img src=x onerror=alert(1)>",
    "````` <script>alert(1)</script> `````",
    "x\x1b]8;;https://evil.example\x07click\x1b]8;;\x07\x1b[2J",
    "feature/\u202etxt.exe",
    "[docs](javascript:alert(1)) **bold** <b>b</b> | cell",
]
FENCE = re.compile(r"^(`{3,})")


def outside_code_blocks(markdown: str) -> list[str]:
    """The lines of `markdown` that are not inside a fenced code block."""
    outside: list[str] = []
    opened = ""
    for line in markdown.split("\n"):
        fence = FENCE.match(line)
        if opened:
            if fence and line.strip() == fence.group(1) and len(fence.group(1)) >= len(opened):
                opened = ""
        elif fence:
            opened = fence.group(1)
        else:
            outside.append(line)
    return outside


@pytest.fixture(scope="module")
def dev_plan():
    return build_plan("dev", out=None)


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_a_hostile_base_name_is_text_in_the_markdown_plan_and_inert_in_the_text_plan(dev_plan, name):
    dev_plan.no_baseline = f"{name} has no stack file Pulumi.dev.yaml: every node group of it is new"
    try:
        markdown = render_markdown(dev_plan)
        text = render_text(dev_plan)
    finally:
        dev_plan.no_baseline = None
    outside = "\n".join(outside_code_blocks(markdown))
    assert "<img" not in outside and "<script" not in outside and "<b>" not in outside and "javascript:" not in outside
    for output in (markdown, text):
        assert "\x1b" not in output and "\x07" not in output and "\u202e" not in output
    assert "\\u001b]8;;" in text or "\x1b" not in name


@pytest.mark.parametrize("lines", [["a", "```"], ["````x", "`"], [], ["``` ``````"]])
def test_no_line_closes_the_code_block_it_is_in(lines):
    block = markdown_code_block(lines, "text")
    assert outside_code_blocks("\n".join([*block, "after"])) == ["after"]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
@pytest.mark.parametrize("output", ["text", "markdown"])
def test_a_hostile_base_in_the_cost_is_escaped_for_its_output(name, output):
    head = Head({"groups": [], "total": {}}, {}, "1.34")
    base = BaseCost(name, None, f"{name} cannot be priced by this checkout's code")
    shown = render("dev", head, base, output)
    assert "\x1b" not in shown and "\u202e" not in shown
    if output == "markdown":
        assert "<img" not in shown and "<script" not in shown and "<b>" not in shown


@pytest.mark.parametrize("stack", ["dev\x1b[31m", "a\x1b]0;title\x07", "../dev", "dev\nforged: line"])
def test_verify_refuses_a_stack_name_that_is_no_name_and_echoes_it_escaped(stack, capsys):
    assert verify_cli.main(["--stack", stack, "--skip-smoke"]) == 2
    err = capsys.readouterr().err
    assert "--stack: invalid stack name" in err and "\x1b" not in err and "\x07" not in err
    assert len(err.strip().splitlines()) == 1


def test_an_unknown_base_with_terminal_escapes_is_echoed_escaped_once(capsys):
    assert plan_cli.main(["--stack", "dev", "--base", "HEAD\x1b]0;pwn\x07", "--out", "none"]) == plan_cli.EXIT_PROGRAM
    err = capsys.readouterr().err
    assert (
        '--base "<12 characters: letters, digits, control characters, ;]; hidden: may be a credential>" is not a git revision'
        in err
        and "\x1b" not in err
    )


def test_a_refused_stack_in_markdown_is_a_code_block_so_no_html_renders(tmp_path, capsys):
    root = ROOT
    (tmp_path / "Pulumi.yaml").write_text((root / "Pulumi.yaml").read_text())
    path = tmp_path / "Pulumi.try.yaml"
    dev = (root / "Pulumi.dev.yaml").read_text()
    path.write_text(dev.replace("config:\n", 'config:\n  nebius-dra:clusterName: "<b>x</b>[l](e)"\n', 1))
    assert plan_cli.main(["--stack-file", str(path), "--no-base", "--out", "none", "--format", "markdown"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("## Offline plan: `try` failed before any resource could be planned\n\n```text\n")
    assert err.rstrip().endswith("```") and err.count("```") == 2 and "<b>x</b>" in err
