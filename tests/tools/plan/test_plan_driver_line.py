"""The offline plan against a baseline: moving the DRA driver to the kubernetes-sigs line is a planned, one-way change.

The policy pack sees only the planned state of one preview, so it cannot tell a downgrade from a stack that always
ran 25.12.0; the plan compares with the baseline's recorded driver (tools/plan/driver_line.py) and refuses it.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from components.config.stack_file import load_stack_config
from tools.plan import __main__ as plan_cli
from tools.plan.model import build_plan
from tools.plan.report import plan_document, render_markdown, render_text

RENAMED = {"nebius-dra:draDriverChart": "dra-driver-nvidia-gpu"}


def dev_plan_document(**config: str) -> dict[str, Any]:
    return plan_document(build_plan("dev", config={**load_stack_config("dev"), **config}, out=None))


def test_the_json_plan_records_the_driver_release():
    assert dev_plan_document()["draDriver"] == {"chart": "nvidia-dra-driver-gpu", "version": "25.12.0"}
    assert dev_plan_document(**RENAMED)["draDriver"] == {"chart": "dra-driver-nvidia-gpu", "version": "0.4.1"}


def test_moving_to_the_kubernetes_sigs_line_names_the_upgrade_guides_steps():
    plan = build_plan("dev", config={**load_stack_config("dev"), **RENAMED}, out=None, baseline=dev_plan_document())
    assert plan.driver_change is not None and not plan.driver_change.refused and not plan.blocked
    text = render_text(plan)
    assert "PLANNED CHART UPGRADE: DRA driver nvidia-dra-driver-gpu 25.12.0 -> dra-driver-nvidia-gpu 0.4.1" in text
    assert "nameOverride=nvidia-dra-driver-gpu" in text
    assert "kubectl apply --server-side -f dra-driver-nvidia-gpu/crds/" in text
    assert "no way back" in text
    changed = render_markdown(plan).split("### What changed\n", 1)[1].split("\n### ", 1)[0]
    assert "PLANNED CHART UPGRADE: DRA driver nvidia-dra-driver-gpu 25.12.0 -> dra-driver-nvidia-gpu 0.4.1" in changed
    assert plan_document(plan)["driverChange"]["refused"] is False


def test_moving_back_to_25_x_blocks_the_plan(tmp_path, capsys):
    baseline = tmp_path / "base.json"
    baseline.write_text(json.dumps(dev_plan_document(**RENAMED)))
    plan = build_plan("dev", out=None, baseline=json.loads(baseline.read_text()))
    assert plan.driver_change is not None and plan.driver_change.refused and plan.blocked
    assert (
        "BLOCKED: the DRA driver moves back from dra-driver-nvidia-gpu 0.4.1 to nvidia-dra-driver-gpu 25.12.0"
        in render_text(plan)
    )
    assert plan_cli.main(["--stack", "dev", "--out", "none", "--baseline", str(baseline)]) == plan_cli.EXIT_PROGRAM
    captured = capsys.readouterr()
    assert captured.out == "", "a refusal prints only itself, on stderr"
    assert captured.err.startswith(
        "python -m tools.plan: nebius-dra:draDriverChart: dra-driver-nvidia-gpu 0.4.1 -> nvidia-dra-driver-gpu 25.12.0 "
        "is refused"
    )
    assert "keep nebius-dra:draDriverChart dra-driver-nvidia-gpu" in captured.err


def test_a_driver_on_its_own_line_or_a_baseline_without_one_plans_no_change():
    assert build_plan("dev", out=None, baseline=dev_plan_document()).driver_change is None
    older = {key: value for key, value in dev_plan_document().items() if key != "draDriver"}
    assert build_plan("dev", out=None, baseline=older).driver_change is None


@pytest.mark.parametrize("recorded", [{"chart": "x"}, "nvidia-dra-driver-gpu", {"chart": 1, "version": "25.12.0"}])
def test_a_malformed_recorded_driver_is_refused(recorded):
    from tools.plan.baseline import BaselineError

    with pytest.raises(BaselineError, match="draDriver"):
        build_plan("dev", out=None, baseline={**dev_plan_document(), "draDriver": recorded})


@pytest.mark.parametrize(
    ("recorded", "named"),
    [
        ({"chart": "nvidia-dra-driver-gpu", "version": "latest"}, 'draDriver.version is "latest"'),
        ({"chart": "evil\u001b[31mchart", "version": "25.12.0"}, "draDriver.chart is"),
        ({"chart": "nvidia-dra-driver-gpu", "version": "99.0.0"}, 'but its releases have that chart at "25.12.0"'),
        ({"chart": "dra-driver-nvidia-gpu", "version": "0.4.1"}, "no release of that chart"),
    ],
)
def test_a_recorded_driver_that_is_no_chart_line_version_or_not_its_release_is_refused(recorded, named):
    """a39 F12: `draDriver` 99.0.0 beside a 25.12.0 release, "latest", or another chart were read as they came."""
    from tools.plan.baseline import BaselineError

    with pytest.raises(BaselineError, match=re.escape(named)):
        build_plan("dev", out=None, baseline={**dev_plan_document(), "draDriver": recorded})


def test_a_recorded_version_with_a_leading_zero_is_refused():
    """a39 F12: a cluster version "1.034" is no version tools.plan writes; read as numbers it equalled 1.34."""
    from tools.plan.baseline import BaselineError

    document = dev_plan_document()
    document["cluster"]["controlPlane"]["version"] = "1.034"
    with pytest.raises(BaselineError, match=re.escape('cluster.controlPlane.version is "1.034"')):
        build_plan("dev", out=None, baseline=document)


def test_the_readme_gives_a_refused_change_the_status_the_tool_returns():
    """a39 F14: a refused move back exits 2, as the move-back test shows; the README said
    1 for every BLOCKED."""
    from components.config.stack_file import PROJECT_DIR

    readme = " ".join((PROJECT_DIR / "README.md").read_text().split())
    statuses = readme.split("**Exit statuses**", 1)[1].split("`make plan` cannot pass them on", 1)[0]
    assert "2 on bad input, which includes a change the baseline refuses" in statuses
    # Newcomer 4: the CLI prints no summary for a refusal, only its stderr line, which the README quotes.
    assert "`python -m tools.plan: nebius-dra:draDriverChart: ... is refused: ...`" in statuses
