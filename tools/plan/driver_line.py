"""The DRA driver's chart line against a baseline: a move to the kubernetes-sigs line is planned, a move back refused.

The policy pack cannot judge this: a policy sees the planned inputs of one preview and never the
state they replace (pulumi-policy 1.21.0 ResourceValidationArgs and StackValidationArgs carry `props`
only), so a downgrade looks like any stack on 25.12.0. The offline plan has the earlier plan
(`--baseline`), so the check lives here. What the move takes is the chart's upgrade guide
(kubernetes-sigs/dra-driver-nvidia-gpu docs/upgrade.md at v0.4.0): keep the old object names with
`nameOverride`, apply the new CRDs by hand (Helm installs CRDs on a fresh install only), and no way
back, because 0.4.x writes a kubelet-plugin checkpoint (with a BootID) that 25.x cannot read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from components.dra_constants import KUBERNETES_OCI_REPOSITORY, LEGACY_CHART, RENAMED_CHART
from policies.dra_guardrails.planned import chart_name, is_dra_driver_release


@dataclass(frozen=True)
class DriverLineChange:
    """The DRA driver release moving between chart lines; `refused` when it moves back to 25.x."""

    before: str
    after: str
    refused: bool
    steps: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"before": self.before, "after": self.after, "refused": self.refused, "steps": list(self.steps)}


def driver_snapshot(resources: Iterable[Any]) -> dict[str, str] | None:
    """What the JSON plan records of the DRA driver release ({chart, version}), so a later plan can compare."""
    releases = [r for r in resources if is_dra_driver_release(r)]
    if len(releases) != 1:
        return None
    props = releases[0].props
    return {"chart": chart_name(props), "version": str(props.get("version"))}


def as_json(driver: Mapping[str, str]) -> str:
    return f"{driver['chart']} {driver['version']}"


def upgrade_steps(version: str) -> tuple[str, ...]:
    return (
        f"keep the old object names: the stack installs {RENAMED_CHART} under the release name {LEGACY_CHART} with "
        f"nameOverride={LEGACY_CHART}, so the upgrade adopts the running driver's objects (nothing to do)",
        "apply the new chart's CRDs by hand before `pulumi up`, since Helm installs CRDs only on a fresh install: "
        f"`helm pull {KUBERNETES_OCI_REPOSITORY}/{RENAMED_CHART} --version {version} --untar && "
        f"kubectl apply --server-side -f {RENAMED_CHART}/crds/`",
        f"no way back: {RENAMED_CHART} writes a kubelet-plugin checkpoint 25.x cannot read, so try it on dev first; "
        "a later plan that moves back is refused",
    )


def driver_line_change(before: Mapping[str, str] | None, after: Mapping[str, str] | None) -> DriverLineChange | None:
    """The move between the two lines, or None when the release stays on its line (or one side has none)."""
    if before is None or after is None or before["chart"] == after["chart"]:
        return None
    if before["chart"] == LEGACY_CHART and after["chart"] == RENAMED_CHART:
        return DriverLineChange(as_json(before), as_json(after), False, upgrade_steps(after["version"]))
    if before["chart"] == RENAMED_CHART and after["chart"] == LEGACY_CHART:
        return DriverLineChange(
            as_json(before),
            as_json(after),
            True,
            (
                f"refused: {RENAMED_CHART} cannot be downgraded to {LEGACY_CHART} (its kubelet-plugin checkpoint gained a "
                "BootID that 25.x cannot read, kubernetes-sigs/dra-driver-nvidia-gpu docs/upgrade.md at v0.4.0); keep "
                f"nebius-dra:draDriverChart {RENAMED_CHART}",
            ),
        )
    return None
