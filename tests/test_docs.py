"""The README and docs/: every link lands, the README stays a ten-minute read that reaches every page in one
click, and each list the code holds (the stacks, verify's steps, the folders, the test modules) is the code's."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from pydantic import ValidationError

from components.config.driver import CHART_LINES
from components.config.errors import ConfigError
from components.config.stack import parse_stack_config
from components.config.stack_file import load_stack_config, program_config
from components.input.prices import PriceTableInput
from components.shown import NOT_QUOTED, shown
from components.values.sample_pods import sample_pod_spec
from policies.dra_guardrails import RULES
from tests.helpers import STACKS, suite_modules
from tools import ci_run, new_stack
from tools.cost.__main__ import main as cost_main
from tools.markdown_links import HEADING, anchors, prose, relative_targets, slug
from tools.plan.__main__ import main as plan_main
from tools.plan.model import build_plan
from tools.plan.report import render_text
from tools.verify import checks
from tools.verify.checks import ClusterState
from tools.verify.expectations import load_expectations
from tools.verify.report import verdict_line
from tools.verify.runner import Verification

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README_LINES = 400


def tracked(pattern: str) -> list[str]:
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "--", pattern], capture_output=True, text=True, timeout=60
    )
    return sorted(name for name in listed.stdout.split("\0") if name)


def markdown_pages() -> list[Path]:
    """README.md, docs/*.md and every other Markdown file git tracks (the e2e folders' READMEs among them)."""
    found = {ROOT / name for name in tracked("*.md")} | {ROOT / "README.md", *DOCS.glob("*.md")}
    return sorted(found)


def table_column(text: str, header: str) -> list[str]:
    """The backticked names in the first column of the table whose header row is `header`."""
    lines = text.splitlines()
    start = lines.index(header) + 2
    names: list[str] = []
    for row in lines[start:]:
        if not row.startswith("|"):
            break
        names += re.findall(r"`([^`]+)`", row.split(" | ")[0])
    return names


@pytest.mark.parametrize("page", markdown_pages(), ids=lambda page: page.relative_to(ROOT).as_posix())
def test_every_link_reaches_a_file_and_its_heading(page):
    text = page.read_text()
    broken = []
    for target in relative_targets(text):
        path, _, anchor = target.partition("#")
        destination = (page.parent / path).resolve() if path else page
        if not destination.exists():
            broken.append(f"{target}: no such file")
        elif anchor and destination.suffix == ".md" and anchor not in anchors(destination.read_text()):
            broken.append(f"{target}: {destination.relative_to(ROOT)} has no heading #{anchor}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_the_anchor_of_a_heading_is_githubs():
    assert slug("Running GPU node groups: roll-outs, repair, reservations, spot") == (
        "running-gpu-node-groups-roll-outs-repair-reservations-spot"
    )
    assert slug("A budget: `max-hourly-cost`") == "a-budget-max-hourly-cost"
    assert slug("GPU quotas per team (Kueue)") == "gpu-quotas-per-team-kueue"
    assert anchors("# A\n## A\n```\n# not a heading\n```\n## B") == {"a", "a-1", "b"}


def test_the_readme_is_read_in_ten_minutes_and_reaches_every_page_in_one_click():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= README_LINES
    linked = {target.partition("#")[0] for target in relative_targets(readme)}
    pages = {f"docs/{page.name}" for page in DOCS.iterdir() if page.suffix in (".md", ".json")}
    assert pages - linked == set(), "every page of docs/ is one click from the README"
    topics = readme.split("## Where each topic lives\n", 1)[1]
    assert {f"docs/{page.name}" for page in DOCS.glob("*.md")} <= set(re.findall(r"\]\((docs/[\w.-]+)\)", topics))


def test_the_readme_starts_with_the_commands_and_says_what_they_need():
    readme = (ROOT / "README.md").read_text()
    first = re.search(r"```bash\n(.*?)```", readme, re.DOTALL).group(1).splitlines()
    assert [line.split("#")[0].strip() for line in first] == ["make plan", "make test", "make e2e"]
    assert readme.splitlines().index("```bash") < 10, "the commands are on the first screen"
    assert "only Python 3.11" in readme and "Node.js 20" in readme and "Go" in readme


def readme_first_edit() -> tuple[dict, list[str], list[str]]:
    """The README's first edit (its YAML block), the plan it shows, and the refusal it shows for a misspelling."""
    section = (ROOT / "README.md").read_text().split("## A first edit, planned and read\n", 1)[1].split("\n## ", 1)[0]
    edit = yaml.safe_load(re.search(r"```yaml\n(.*?)```", section, re.DOTALL).group(1))
    shown, refused = re.findall(r"```text\n(.*?)```", section, re.DOTALL)
    return edit, shown.splitlines(), refused.splitlines()


def printed_as_shown(printed: str, shown: list[str]) -> None:
    """`shown` is where `printed` starts, line by line; a line ending in `...` is shown cut short."""
    lines = printed.splitlines()
    for index, line in enumerate(shown):
        expected = line.removesuffix("...")
        assert lines[index].startswith(expected) if line.endswith("...") else lines[index] == line, (index, line)


def test_the_readmes_first_edit_plans_as_the_readme_shows(tmp_path, capsys):
    edit, shown, refused = readme_first_edit()
    dev = yaml.safe_load((ROOT / "Pulumi.dev.yaml").read_text())
    baseline = tmp_path / "dev-before.json"
    assert plan_main(["--stack", "dev", "--format", "json", "--out", "none"]) == 0
    baseline.write_text(capsys.readouterr().out)
    (tmp_path / "Pulumi.dev.yaml").write_text(yaml.safe_dump({"config": {**dev["config"], **edit}}))
    edited = ["--stack-file", str(tmp_path / "Pulumi.dev.yaml"), "--out", "none"]
    assert plan_main([*edited, "--baseline", str(baseline)]) == 0
    printed_as_shown(capsys.readouterr().out, shown)
    (group,) = edit["nebius-dra:gpuNodeGroups"]
    group["fixedNodeCont"] = group.pop("fixedNodeCount")
    (tmp_path / "Pulumi.dev.yaml").write_text(yaml.safe_dump({"config": {**dev["config"], **edit}}))
    assert plan_main(edited) == 2
    printed_as_shown(capsys.readouterr().err, refused)


def test_the_readme_lists_exactly_the_committed_stacks():
    readme = (ROOT / "README.md").read_text()
    listed = table_column(readme, "| stack | what it is |")
    assert sorted(listed) == sorted(STACKS), (
        f"the README's table of stacks lists {listed}; git tracks the stack files of {list(STACKS)}: "
        "give each committed stack a row, and no other"
    )


def test_the_verify_page_lists_every_step_the_verifier_runs_in_its_order():
    expect = dataclasses.replace(load_expectations("prod"), queues=SimpleNamespace(enabled=True))
    steps = [step.name for step in Verification(object(), expect, None, None).steps()]  # type: ignore[arg-type]
    page = (DOCS / "verify.md").read_text()
    assert table_column(page, "| step | passes when |") == steps
    assert re.search(rf"FAIL \[\d+/{len(steps) - 1}\]", page), (
        "the example failure counts the steps of a stack without queues"
    )


def test_the_policy_page_lists_exactly_the_packs_rules():
    listed = table_column((DOCS / "policy-pack.md").read_text(), "| policy | level | fails when |")
    assert sorted(listed) == sorted(rule.name for rule in RULES)


def _component_types() -> dict[str, str]:
    """Every ComponentResource type the program defines, by its type token, with the module that defines it: the
    token as the class passes it to `super().__init__` or names it in a `_TYPE` constant of its module."""
    import importlib
    import inspect

    import pulumi

    found = {}
    for path in sorted((ROOT / "components").glob("*.py")):
        module = importlib.import_module(f"components.{path.stem}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != module.__name__ or not issubclass(cls, pulumi.ComponentResource):
                continue
            tokens = set(re.findall(rf'"(nebius-dra:[a-z]+:{cls.__name__})"', inspect.getsource(module)))
            assert len(tokens) == 1, (cls, tokens)
            found[tokens.pop()] = f"components/{path.name}"
    return found


def test_architecture_lists_every_component_type_of_the_resource_tree():
    """Newcomer 4: six of the plan tree's nine component types appeared in no doc. architecture.md's table lists
    each type the code defines, with its module, and nothing else; its summary-line example is dev's."""
    page = (DOCS / "architecture.md").read_text()
    section = page.split("## The components in the plan's resource tree\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(nebius-dra:[^`]+)` \| `([^`]+)` \|", section, re.MULTILINE)
    assert dict(rows) == _component_types()
    summary = build_plan("dev", out=None)
    first = render_text(summary).splitlines()[0]
    counted = re.search(r"\d+ resources \(\d+ created by providers, \d+ components\)", first)
    assert counted is not None and f"`{counted.group(0)}" in " ".join(section.split()), first


def test_architecture_names_the_product_of_every_top_level_path():
    page = (DOCS / "architecture.md").read_text()
    listed = table_column(page, "| path | product | what is in it |")
    top = {name.split("/", 1)[0] + ("/" if "/" in name else "") for name in tracked("*")}
    assert set(listed) == top, f"missing: {sorted(top - set(listed))}; not tracked: {sorted(set(listed) - top)}"


def test_development_lists_every_test_module():
    """By its path: the folder says which source a module tests, so a row naming the module alone says half."""
    page = (DOCS / "development.md").read_text()
    listed = table_column(page, "| file | what it checks |")
    modules = sorted(path.relative_to(ROOT).as_posix() for path in suite_modules())
    assert sorted(listed) == modules, (
        f"missing: {sorted(set(modules) - set(listed))}; no such module: {sorted(set(listed) - set(modules))}"
    )


def test_every_section_a_message_or_comment_names_is_a_heading_of_that_page():
    """`(docs/verify.md, Burn-in)` in a message, a docstring or a stack file's comment: the page has that heading."""
    named = re.compile(r"\((README|docs/[\w-]+\.md),? \"?([A-Z][\w' -]*?)\"?[,)]")
    sources = [*(ROOT / "tools").rglob("*.py"), *(ROOT / "components").rglob("*.py"), *ROOT.glob("Pulumi.*.yaml")]
    references = [(path, *match.groups()) for path in sources for match in named.finditer(path.read_text())]
    assert references, "the pattern finds the references it is meant to check"
    headings = {}
    for _, page, _section in references:
        text = (ROOT / (page + ".md" if page == "README" else page)).read_text()
        headings[page] = [match.group(2) for match in HEADING.finditer(prose(text))]
    stale = [
        f"{path.relative_to(ROOT)}: ({page}, {section})"
        for path, page, section in references
        if not any(heading.startswith(section) for heading in headings[page])
    ]
    assert not stale


def test_every_quoted_doubtful_price_carries_its_caveat():
    """prices/nebius.yaml marks the H200 price doubtful: a page that quotes it says so in the same paragraph."""
    table = yaml.safe_load((ROOT / "prices" / "nebius.yaml").read_text(encoding="utf-8"))
    doubted = [entry for entry in table["gpu"] if entry.get("doubtful")]
    assert doubted, "the table marks no price doubtful: this test has nothing to check"
    for page in sorted((ROOT / "docs").glob("*.md")):
        for paragraph in (" ".join(p.split()) for p in page.read_text(encoding="utf-8").split("\n\n")):
            for entry in doubted:
                quoted = f"${float(entry['onDemand']['usdPerGpuHour']):.2f} per" in paragraph
                assert not quoted or "doubtful" in paragraph, f"{page.name}: {paragraph[:120]}"


def test_every_pulumi_stack_init_the_docs_show_is_the_one_adding_a_stack_uses():
    """A fresh backend has no stack to select: the README's deploy creates it, with the secrets provider of
    "Adding a stack" (README, operating.md) and of what `make new-stack` prints."""
    texts = [(ROOT / "README.md").read_text(), (DOCS / "operating.md").read_text(), new_stack.next_steps("staging")]
    shown = [match for text in texts for match in re.findall(r"pulumi stack init (\S+)([^`#\n]*)", text)]
    assert {stack for stack, _ in shown} == {"dev", "staging"}, shown
    assert {options.strip() for _, options in shown} == {"--secrets-provider passphrase"}, shown
    deploying = (ROOT / "README.md").read_text().split("## Deploying\n", 1)[1].split("\n## ", 1)[0]
    assert "pulumi stack init dev --secrets-provider passphrase" in deploying


def test_the_readme_says_where_the_stacks_chart_line_and_version_come_from():
    """dev and prod set the chart line and the minor; the version is the line's default, set nowhere."""
    readme = " ".join((ROOT / "README.md").read_text().split())
    said = re.search(
        r"Both stay on Kubernetes (\S+) and the `([\w-]+)` chart line, set in their stack files, "
        r"at that line's default version, (\S+) \(",
        readme,
    )
    assert said, "the README says which chart line and version dev and prod run"
    minor, chart, version = said.groups()
    for stack in ("dev", "prod"):
        config = yaml.safe_load((ROOT / f"Pulumi.{stack}.yaml").read_text())["config"]
        assert config["nebius-dra:kubernetesVersion"] == minor and config["nebius-dra:draDriverChart"] == chart
        assert "nebius-dra:draDriverVersion" not in config, f"{stack} sets the version: the README says it does not"
    assert version.rstrip(",") == CHART_LINES[chart].default_version


def test_the_readme_names_every_build_and_the_vendor_directory_make_e2e_needs():
    first = (ROOT / "README.md").read_text().split("\nContents:", 1)[0]
    prose_of_it = " ".join(first.split())
    minors = ci_run.kube_minors()
    assert (
        f"Kubernetes {', '.join(minors[:-1])} and {minors[-1]}, the Kueue controller, helm and the Pulumi engine"
        in (prose_of_it)
    ), "every build of ci_run.build_stages"
    assert {stage.name for stage in ci_run.build_stages(minors)} == {
        *(f"build kube {minor}" for minor in minors),
        "build kueue",
        "build helm",
        "build pulumi engine",
    }
    assert "`../shared/vendor`" in first and '"shared" / "vendor"' in (ROOT / "e2e/pulumi/build.py").read_text()


def test_the_readme_quotes_make_tests_duration_from_the_figures():
    figures = json.loads(ci_run.FIGURES.read_text())
    (measured,) = (run for run in figures["test_runs"] if run["what"].startswith("make test"))
    readme = " ".join((ROOT / "README.md").read_text().split())
    said = re.search(r"`make test` takes about (\d+) minutes of CPU time \((\d+) minutes on a 2-core machine", readme)
    assert said, "the README says how long make test takes"
    assert (int(said[1]), int(said[2])) == (round(measured["cpu_minutes"]), measured["minutes"])
    assert "2-core machine" in measured["what"] and "(other sessions' builds and tests beside it)" in measured["what"]


def test_the_burn_in_sweeps_algbw_is_its_busbw_over_its_gpus():
    """nccl-tests' all-reduce: algbw = busbw x n / 2(n-1) (its doc/PERFORMANCE.md)."""
    page = " ".join((DOCS / "verify.md").read_text().split())
    busbw, algbw, gpus = map(int, re.search(r"(\d+) GB/s busbw, (\d+) GB/s algbw over (\d+) GPUs", page).groups())
    assert algbw == round(busbw * gpus / (2 * (gpus - 1)))


def test_the_node_groups_roll_out_example_is_what_the_plan_prints(tmp_path, capsys):
    """docs/node-groups.md's edit of prod, planned against prod as committed: the lines it shows, in order."""
    page = (DOCS / "node-groups.md").read_text()
    section = page.split("The offline plan prints each group's roll-out", 1)[1].split("\n### ", 1)[0]
    (edit,) = yaml.safe_load(re.search(r"```yaml\n(.*?)```", section, re.DOTALL).group(1))
    shown = re.search(r"```text\n(.*?)```", section, re.DOTALL).group(1).splitlines()
    prod = yaml.safe_load((ROOT / "Pulumi.prod.yaml").read_text())
    groups = prod["config"]["nebius-dra:gpuNodeGroups"]
    (group,) = (group for group in groups if group["name"] == edit["name"])
    assert "capacity" not in group, "the example adds what prod's group lacks"
    group.update(edit)
    assert plan_main(["--stack", "prod", "--format", "json", "--out", "none"]) == 0
    baseline = tmp_path / "prod-before.json"
    baseline.write_text(capsys.readouterr().out)
    (tmp_path / "Pulumi.prod.yaml").write_text(yaml.safe_dump(prod))
    assert plan_main(["--stack-file", str(tmp_path / "Pulumi.prod.yaml"), "--out", "none", "--baseline", str(baseline)]) == 0  # fmt: skip
    printed = capsys.readouterr().out.splitlines()
    start = printed.index(shown[0])
    assert printed[start : start + len(shown)] == shown


def test_the_readme_warns_that_make_demo_builds_what_the_cli_tier_starts():
    """`make demo` (e2e/cli/demo.py) builds, in the foreground, what the e2e/cli tier starts: the README says so."""
    makefile = (ROOT / "Makefile").read_text()
    assert "\t$(PY) -m tools.ci_run --builds-for e2e/cli\n\t$(PY) e2e/cli/demo.py\n" in makefile
    built = {stage.name for stage in ci_run.builds_for("e2e/cli", ci_run.kube_minors())}
    assert built == {f"build kube {ci_run.kube_minors()[0]}", "build pulumi engine"}
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert "its first run builds the Pulumi engine and a Kubernetes control plane from source" in readme


def test_adding_a_stack_commits_last_after_the_identities_and_git_adds_the_stack_files():
    """Newcomer's walk: operating.md said commit in step 4, before step 5 set the identities (the README: last), and
    never `git add`, though the tests fail until git tracks the stack file."""
    section = (DOCS / "operating.md").read_text().split("## Adding a stack\n", 1)[1].split("\n## ", 1)[0]
    steps = re.split(r"(?m)^\d+\. ", section)[1:]
    identities = next(n for n, step in enumerate(steps) if "NEBIUS_DEPLOY_SERVICE_ACCOUNT_ID" in step)
    committing = [n for n, step in enumerate(steps) if re.search(r"(?<!not )(?<!you )\bcommit\b", step)]
    assert committing and min(committing) > identities, [steps[n][:60] for n in committing]
    last = " ".join(steps[-1].split())
    assert "git add Pulumi.staging.yaml tools/ci_identity/Pulumi.staging.yaml" in last, last


# A status other than 0 or 2 said of a `make` target: GNU make exits 2 whenever a recipe fails, whatever the tool's.
MAKE_STATUS = re.compile(r"\bexit(?:s|s with)?(?: status| code)? `?([13-9]\d*)`?\b")


def test_no_doc_gives_a_make_target_an_exit_status_make_cannot_have():
    """Hostile review: "`make plan` ... exits with status 1 on a mandatory violation" (and the README's "exits 1"), while
    make turned the plan's 1 into its own 2; a sentence naming a status and a make target names the tool it is of."""
    wrong = []
    for path in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        for sentence in re.split(r"(?<=[.;:])\s+(?=[A-Z`(*-])", " ".join(path.read_text().split())):
            if (
                re.search(r"`make [a-z]", sentence)
                and MAKE_STATUS.search(sentence)
                and "venv/bin/python -m" not in sentence
            ):
                wrong.append(f"{path.name}: {sentence[:160]}")
    assert not wrong, wrong


def test_make_reports_a_failed_tool_as_2_naming_the_tools_status_as_the_readme_says(tmp_path):
    tool = tmp_path / "blocked"
    tool.write_text("#!/bin/sh\nexit 1\n")
    tool.chmod(0o755)
    made = subprocess.run(
        ["make", "--no-print-directory", "-o", "venv/.installed", "plan", f"PY={tool}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert made.returncode == 2 and re.search(
        r"make(\[\d+\])?: \*\*\* \[Makefile:\d+: plan\] Error 1$", made.stderr.strip()
    )
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert "`make plan` cannot pass them on: GNU make exits 2 whenever a recipe fails" in readme
    assert "`make: *** [Makefile:NN: plan] Error 1` for a blocked plan" in readme


def test_each_queue_example_plans_on_the_stack_it_names_without_a_quota_advisory():
    """queues.md's examples name their stack's groups (`# Pulumi.<stack>.yaml`): dev's as well as prod's, so a
    newcomer on a one-group stack has one that plans (newcomer's walk F4.1)."""
    blocks = re.findall(
        r"```yaml\n  # Pulumi\.(\w+)\.yaml\n(.*?)```", (ROOT / "docs" / "queues.md").read_text(), re.DOTALL
    )
    assert sorted(stack for stack, _ in blocks) == ["dev", "prod"]
    for stack, block in blocks:
        queues = yaml.safe_load(block)["nebius-dra:queues"]
        plan = build_plan(stack, {**load_stack_config(stack), "nebius-dra:queues": json.dumps(queues)}, out=None)
        assert not plan.blocked and [f.policy for f in plan.findings if f.policy.startswith("queue-")] == [], stack


def test_the_secret_placeholder_the_configuration_page_shows_plans_as_a_secret(tmp_path, capsys):
    """A newcomer without the Pulumi CLI plans with a `secure:` placeholder (issue 37): the page's example is read
    as a secret, plans, and its text is never printed."""
    (block,) = re.findall(
        r"### Writing a secret\n.*?```yaml\n  # Pulumi\.dev\.yaml.*?\n(.*?)  ```",
        (DOCS / "configuration.md").read_text(),
        re.DOTALL,
    )
    edit = yaml.safe_load(textwrap.dedent(block))["config"]
    placeholder = edit["nebius-dra:chartRepositoryPassword"]["secure"]
    dev = yaml.safe_load((ROOT / "Pulumi.dev.yaml").read_text())
    stack_file = tmp_path / "Pulumi.dev.yaml"
    stack_file.write_text(yaml.safe_dump({"config": {**dev["config"], **edit}}))
    assert plan_main(["--stack-file", str(stack_file), "--out", "none"]) == 0
    printed = capsys.readouterr()
    assert placeholder not in printed.out + printed.err


def test_the_price_docs_say_a_notes_kept_in_the_file_and_the_source_date_and_doubt_are_printed(tmp_path, capsys):
    """Newcomer's walk: configuration.md said an override's `note` is printed with the price; it is printed nowhere."""
    dev = yaml.safe_load((ROOT / "Pulumi.dev.yaml").read_text())
    (group,) = dev["config"]["nebius-dra:gpuNodeGroups"]
    rate = {"usdPerGpuHour": 3.1, "source": "contract NB-2026-17", "date": "2026-11-15"}
    entry = {"platform": group["platform"], "presets": [group["preset"]], "onDemand": rate}
    entry |= {"note": "negotiated: 12 months committed; schedule B", "doubtful": "pending countersignature"}
    variant = tmp_path / "Pulumi.priced.yaml"
    variant.write_text(yaml.safe_dump({"config": {**dev["config"], "nebius-dra:priceOverrides": {"gpu": [entry]}}}))
    for output in ("text", "json", "markdown"):
        assert cost_main(["--stack-file", str(variant), "--format", output]) == 0
        printed = capsys.readouterr().out
        assert "negotiated" not in printed, output
        assert all(said in printed for said in ("contract NB-2026-17", "2026-11-15", "pending countersignature"))
    cost = " ".join((DOCS / "cost.md").read_text().split())
    assert "list each price's date and source" in cost and "An entry's `note`" in cost
    assert "is printed nowhere, in text, Markdown or JSON" in cost
    configuration = " ".join((DOCS / "configuration.md").read_text().split())
    assert "`note` is printed with" not in configuration and "or `doubtful` is printed with" not in configuration
    assert "a `note` is printed nowhere, it stays in the file" in configuration


def test_the_mirror_section_names_the_repository_keys_dev_takes_and_the_others_are_refused():
    """Newcomer's walk: a mirror's URL in every repository key was refused for the charts dev does not install, which
    the page did not say; it now names the keys dev takes, and each other one is refused."""
    page = " ".join((DOCS / "configuration.md").read_text().split())
    section = page.split("### Charts from a mirror or a private repository", 1)[1]
    assert "a key for a chart it does not install is refused" in section
    (takes,) = re.findall(r"so dev takes (.*?)\. ", section)
    named = set(re.findall(r"`(\w+Repository)`", takes))
    keys = {"draDriverRepository", "gpuOperatorRepository", "networkOperatorRepository", "dcgmExporterRepository"}
    keys.add("kubePrometheusStackRepository")
    assert named and named <= keys
    dev = program_config(load_stack_config("dev"))
    for key in sorted(keys):
        config = {**dev, key: "oci://harbor.example.com/nvidia"}
        if key in named:
            parse_stack_config(config, "dev")
        else:
            with pytest.raises(ConfigError, match=f"nebius-dra:{key}"):
                parse_stack_config(config, "dev")


def test_the_sample_pods_section_says_they_get_no_pull_secret_as_the_stack_gives_none():
    """Newcomer's walk: nothing said how nodes pull a sample image from a registry that needs a login; there is no
    key for one, and the pods name none."""
    declared = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())["config"]
    assert not [key for key in declared if "pull" in key.lower() or "imagesecret" in key.lower()]
    spec = sample_pod_spec("gpu", "gpu", "registry.example.com:5000/ml/cuda:12.4-runtime", ["nvidia-smi"])
    assert "imagePullSecrets" not in spec and "serviceAccountName" not in spec
    section = " ".join((DOCS / "claim-templates.md").read_text().split("## Sample workloads", 1)[1].split())
    assert "No key gives the sample pods a pull secret: they name no `imagePullSecrets`" in section
    assert "from a registry that serves them without credentials, or through a registry mirror the nodes use" in section


def test_the_verify_page_says_its_counts_are_of_the_steps_that_ran_and_passes_on_no_nodes_read_as_0():
    """Newcomer's walk: `1 of 1 checks failed` with 14 steps skipped, and PASS lines on a cluster without GPU nodes,
    were said nowhere; nor what to do for a variant, since the verifier takes no --stack-file."""
    results = [
        SimpleNamespace(name="cluster-read", status="fail", seconds=0.1, summary="x"),
        *(SimpleNamespace(name=f"s{n}", status="skip", seconds=0, summary="not run") for n in range(14)),
    ]
    said = verdict_line(results)
    page = " ".join((DOCS / "verify.md").read_text().split())
    assert said == "1 of 1 checks failed: cluster-read" and f"whose `cluster-read` fails says `{said[:20]}`" in page
    expect = load_expectations("dev")
    empty = ClusterState(nodes=[], driver_pods=[], device_classes=[], resource_slices=[])
    for step, check in (
        ("gpu-slices", checks.check_gpu_slices),
        ("legacy-device-plugin", checks.check_legacy_device_plugin),
    ):
        outcome = check(empty, expect)
        assert outcome.passed and "0 GPU node(s)" in outcome.summary and f"`{step}`" in page
    assert not checks.check_gpu_nodes(empty, expect).passed
    assert "have nothing to check and PASS with counts of 0" in page
    assert (
        "the verifier takes no `--stack-file`" in page
        and "--stack-file" not in (ROOT / "tools/verify/__main__.py").read_text()
    )


def test_what_a_refusal_quotes_is_what_shown_quotes_and_a_source_refuses_a_colon_a_note_takes():
    """Newcomer's walk: `host:5000/ml/cuda:tag` read as quoted on the page and was hidden; and the refused marks of a
    price's source (no ':' in a reference) and of a note (prose: ':' and ';' are punctuation) were not told apart."""
    page = " ".join((DOCS / "configuration.md").read_text().split())
    section = page.split("**What a refusal quotes.**", 1)[1].split("**Editors.**", 1)[0]
    quoted = re.search(r"up to the next `/` or the end \((.*?)\)\.", section)
    assert quoted
    for value in re.findall(r"`([^`]+)`", quoted.group(1)):
        assert shown(value) == json.dumps(value), value
    for value in ("registry.example.com:5000/ml/cuda:12.4-runtime", "contract: NB-2026-17", "ghp_" + "a" * 36):
        assert f"`{value[:4]}" in section and NOT_QUOTED in shown(value), value
    assert "a reference such as a contract number holds no `:` at all" in section
    assert "a `note` or `doubtful` is prose, where `:` and `;` are punctuation" in section
    with pytest.raises(ValidationError):
        PriceTableInput.model_validate({"gpu": [price_entry(source="contract: NB-2026-17")]})
    PriceTableInput.model_validate({"gpu": [price_entry(note="negotiated: 12 months; schedule B")]})
    with pytest.raises(ValidationError):
        PriceTableInput.model_validate({"gpu": [price_entry(source="contract NB-2026-17; schedule B")]})


def price_entry(source: str = "contract NB-2026-17", note: str = "") -> dict:
    rate = {"usdPerGpuHour": 3.1, "source": source, "date": "2026-11-15"}
    entry = {"platform": "gpu-h200-sxm", "presets": ["1gpu-16vcpu-200gb"], "onDemand": rate}
    return entry | ({"note": note} if note else {})
