"""What each supported Kubernetes minor enables for DRA, read from the one table the policy pack reads too.

The table is `policies/dra_minors.json`: per minor (1.34, 1.35, 1.36) the stage and default of each
DRA feature gate, as `pkg/features/kube_features.go` of that release states it, and which API field
each gate guards (`+featureGate` in k8s.io/api resource/v1/types.go). It sits in the policy pack's
directory because the Pulumi CLI runs the pack from there. A field whose gate is off by default on the
stack's minor is refused with the gate's name and the minor where it turns on: Nebius managed clusters
run the default gates. The config refuses a kubernetesVersion whose minor has no row
(components/config/stack.py, naming the rows), so the program judges only minors the table has; the
policy pack, which judges what was registered, judges a newer minor by the newest row: a DRA gate
that is on by default stays on in later releases.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

TABLE_FILE = Path(__file__).resolve().parent.parent / "policies" / "dra_minors.json"
_TABLE: dict[str, Any] = json.loads(TABLE_FILE.read_text(encoding="utf-8"))
SUPPORTED_MINORS: tuple[str, ...] = tuple(_TABLE["minors"])
GATES: dict[str, dict[str, Any]] = _TABLE["gates"]
FIELD_GATES: dict[str, str] = _TABLE["fields"]
DRIVER_GATE_NEEDS: dict[str, str] = _TABLE["driverGates"]["needs"]
# The fields of the CEL variable `device` and the gate that declares each (None: every minor declares it).
CEL_DEVICE_FIELDS: dict[str, str | None] = _TABLE["celDevice"]["fields"]
_MINOR = re.compile(r"^([0-9]{1,3})\.([0-9]{1,3})")


def _number(minor: str) -> tuple[int, int]:
    match = _MINOR.match(minor)
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def minor_of(version: str) -> str:
    """The table row a kubernetesVersion is judged by: its MAJOR.MINOR, or the newest row for a newer minor.

    A version the config check refuses (malformed, or older than 1.34; reported against kubernetesVersion)
    is judged by the oldest row, which enables the least, so no second message contradicts the first.
    """
    number = _number(version)
    known = [minor for minor in SUPPORTED_MINORS if _number(minor) <= number]
    return known[-1] if known else SUPPORTED_MINORS[0]


def gate_on(gate: str, version: str) -> bool:
    """Whether `gate` is on by default in the minor of `version`."""
    return bool(GATES[gate][minor_of(version)]["default"])


def first_minor_on(gate: str) -> str | None:
    """The oldest supported minor where `gate` is on by default, or None when none is."""
    return next((minor for minor in SUPPORTED_MINORS if GATES[gate][minor]["default"]), None)


def gate_off_reason(gate: str, version: str) -> str | None:
    """Why `gate` is unusable on the minor of `version` ("DRADeviceTaints, Alpha and off by default in 1.34; ...").

    None when it is on there. The reason names where the gate turns on, so the fix is a kubernetesVersion.
    """
    minor = minor_of(version)
    row = GATES[gate][minor]
    if row["default"]:
        return None
    turns_on = first_minor_on(gate)
    where = (
        f'it is {GATES[gate][turns_on]["stage"]} and on by default from {turns_on}: set kubernetesVersion to "{turns_on}" or later'
        if turns_on
        else f"no supported minor ({', '.join(SUPPORTED_MINORS)}) turns it on"
    )
    return f"the Kubernetes feature gate {gate}, {row['stage']} and off by default in {minor}, which Nebius managed clusters do not enable; {where}"


def field_gate_off_reason(api_field: str, version: str) -> str | None:
    """Why the API field `Type.field` (as in k8s.io/api resource/v1) is unusable on `version`, or None."""
    return gate_off_reason(FIELD_GATES[api_field], version)


def cel_device_fields(version: str) -> tuple[str, ...]:
    """The fields of the CEL variable `device` that the API server of `version`'s minor declares for a new selector."""
    return tuple(name for name, gate in CEL_DEVICE_FIELDS.items() if gate is None or gate_on(gate, version))
