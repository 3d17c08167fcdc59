"""The plan as a reviewer reads it: what changed, verdicts, cost and roll-outs first; one name per node group; folds."""

from __future__ import annotations

import copy
import json
import re

import pytest

from components.config.stack_file import load_stack_config
from policies.dra_guardrails import Finding
from tests.helpers import STACKS
from tools.plan import __main__ as plan_cli
from tools.plan.graph import minutes
from tools.plan.model import build_plan
from tools.plan.report import (
    FOLD_ROWS,
    ROLLOUT_TITLE,
    _markdown_table,
    group_names,
    plan_document,
    render_markdown,
    render_text,
)

# A PR comment or job summary shows about this many lines before a reader scrolls (a laptop screen).
ONE_SCREEN = 45


@pytest.fixture(scope="module")
def plans():
    return {stack: build_plan(stack, out=None) for stack in STACKS}


def _other_names(stack: str, group: str) -> list[str]:
    """What a group is called besides its stack-file name: Nebius's name, its component's and its resource's."""
    cluster = load_stack_config(stack).get("nebius-dra:clusterName") or f"dra-{stack}"
    return [f"{cluster}-{group}", f"dra-{stack}-gpu-{group}", f"dra-{stack}-gpu-{group}-nodes"]


@pytest.mark.parametrize("stack", STACKS)
def test_the_text_plan_starts_with_what_changed_verdicts_cost_and_roll_outs(plans, stack):
    text = render_text(plans[stack])
    order = ["What changed", "Policy verdicts", "Cost (USD", ROLLOUT_TITLE, "Critical path", "Resources"]
    positions = [text.index(heading) for heading in order]
    assert positions == sorted(positions)
    assert "flowchart TD" not in text and "--graph prints it" in text
    assert "flowchart TD" in render_text(plans[stack], graph=True)


def test_graph_is_printed_by_the_cli_only_when_asked(capsys):
    assert plan_cli.main(["--stack", "dev", "--out", "none"]) == plan_cli.EXIT_OK
    assert "flowchart TD" not in capsys.readouterr().out
    assert plan_cli.main(["--stack", "dev", "--out", "none", "--graph"]) == plan_cli.EXIT_OK
    assert "\nflowchart TD\n" in capsys.readouterr().out


@pytest.mark.parametrize("stack", STACKS)
def test_the_markdown_plan_fits_one_screen_above_its_folds_and_keeps_the_path_total(plans, stack):
    markdown = render_markdown(plans[stack])
    above = markdown.split("<details>", 1)[0]
    assert len(above.splitlines()) <= ONE_SCREEN
    for section in ("### What changed", "### Policy verdicts", "### Cost", f"### {ROLLOUT_TITLE}"):
        assert section in above
    folds = re.findall(r"<details><summary>(.*?)</summary>(.*?)</details>", markdown, re.S)
    titles = [title for title, _ in folds]
    total = minutes(plans[stack].path[-1].finishes_at)
    assert f"Critical path of a first <code>pulumi up</code>: about {total} in total (estimates)" in titles
    bodies = {title.split(":")[0]: body for title, body in folds}
    assert "```mermaid\nflowchart TD" in bodies["Dependency graph (Mermaid)"]
    assert "```text\nnebius-dra-" in bodies["Resources"]


@pytest.mark.parametrize("stack", STACKS)
def test_every_section_calls_a_node_group_by_its_stack_file_name(plans, stack):
    groups = [group["name"] for group in json.loads(load_stack_config(stack)["nebius-dra:gpuNodeGroups"])]
    names = group_names(plans[stack])
    assert set(groups) <= set(names.values())
    for output in (render_text(plans[stack], graph=True), render_markdown(plans[stack])):
        for group in groups:
            rollouts = output.split(ROLLOUT_TITLE, 1)[1]
            assert f"\n  {group}: " in rollouts or f"\n| {group} | " in rollouts, (
                f"{group}'s roll-out is under its name"
            )
            for other in _other_names(stack, group):
                assert other not in output, f"{stack}: {group} also appears as {other}"


def test_a_rule_that_hits_several_groups_is_one_row_naming_them_all(plans):
    prod = plans["prod"]
    hits = [finding for finding in prod.findings if finding.policy == "gpu-drivers-preset-known"]
    assert len(hits) == 2, "prod's two preset groups both get the unlisted-minor advisory"
    text = render_text(prod)
    verdicts = text.split("Policy verdicts", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    assert verdicts[0] == "  advisory  gpu-drivers-preset-known  on h200-burst, h200-train"
    assert len(verdicts) == 2 and verdicts[1].startswith('    each asks for driversPreset "cuda13.0"')
    rows = [line for line in render_markdown(prod).splitlines() if "`gpu-drivers-preset-known`" in line]
    assert len(rows) == 1 and "| h200-burst, h200-train |" in rows[0]


def test_findings_that_differ_keep_each_message_under_its_resource(plans):
    plan = build_plan("prod", out=None)
    names = group_names(plan)
    [train] = [urn for urn, name in names.items() if name == "h200-train" and urn.endswith("-nodes")]
    [burst] = [urn for urn, name in names.items() if name == "h200-burst" and urn.endswith("-nodes")]
    plan.findings = [
        Finding("some-rule", False, train, 'Mk8sV1NodeGroup "dra-prod-gpu-h200-train-nodes" has four nodes'),
        Finding("some-rule", False, burst, 'Mk8sV1NodeGroup "dra-prod-gpu-h200-burst-nodes" has eight nodes'),
    ]
    text = render_text(plan)
    assert '    h200-train: node group "h200-train" has four nodes' in text
    assert '    h200-burst: node group "h200-burst" has eight nodes' in text


def test_a_long_table_folds_and_a_short_one_does_not():
    rows = [(str(n), "x") for n in range(FOLD_ROWS + 1)]
    assert _markdown_table(("a", "b"), rows[:FOLD_ROWS], "rows")[0] == "| a | b |"
    folded = _markdown_table(("a", "b"), rows, "rows")
    assert folded[0] == f"<details><summary>{FOLD_ROWS + 1} rows</summary>" and folded[-1] == "</details>"


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        # An '=' or a URL's ':' in a name: told by its shape (components.shown), whose list of punctuation is escaped.
        ("<img src=x onerror=alert(1)> [click](https://evil.example) | a |", "hidden: may be a credential"),
        ("<b>bold</b> *x* | a |", "&lt;b&gt;bold&lt;/b&gt; \\*x\\* \\| a \\|"),
    ],
)
def test_a_baseline_name_reaches_the_markdown_summary_escaped_never_as_html_or_a_link(name, shown):
    """a39 F15: a claim template of the baseline named `<img ...> [click](...)` went raw into the summary paragraph."""
    baseline = json.loads(json.dumps(plan_document(build_plan("dev", out=None))))
    forged = copy.deepcopy(baseline["claimTemplates"][0])
    forged["urn"] += "-forged"
    forged["name"] = name
    baseline["claimTemplates"].append(forged)
    markdown = render_markdown(build_plan("dev", out=None, baseline=baseline))
    summary = markdown.split("\n### What changed", 1)[0]
    assert "deletes claim template(s)" in summary
    assert "<img" not in summary and "<b>" not in summary and not re.search(r"(?<!\\)\]\(", summary)
    assert "| a |" not in summary and shown in summary, summary


def test_every_section_the_docs_name_is_one_the_plan_prints(plans):
    """Newcomer 4: offline-plan.md sent readers to a section "Nodes recreated", which is a line under "What changed".
    A section named in the docs (`under "X"`, `under **X**`) is a heading of the text plan: an unindented line."""
    from components.config.stack_file import PROJECT_DIR

    headings = [line for line in render_text(plans["dev"]).splitlines() if line and not line.startswith(" ")]
    pages = [PROJECT_DIR / "README.md", *sorted((PROJECT_DIR / "docs").glob("*.md"))]
    named = {
        (page.name, " ".join(found))
        for page in pages
        for found in re.findall(r'under (?:"([^"]+)"|\*\*([^*]+)\*\*)', " ".join(page.read_text().split()))
    }
    assert named, "the docs name no section: the pattern no longer reads them"
    unknown = {(page, name.strip()) for page, name in named if not any(h.startswith(name.strip()) for h in headings)}
    assert not unknown, (unknown, headings)
