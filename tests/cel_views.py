"""A device as the scheduler's CEL sees it, and the CEL selectors a program run registers in its claim templates."""

from __future__ import annotations

from typing import Any

from components.dra_constants import GPU_DRIVER

TEMPLATE = "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate"
SEEDED_DOMAINS = (GPU_DRIVER, "dra.net", "resource.kubernetes.io")


def cel_view(driver: str, device: dict[str, Any]) -> dict[str, Any]:
    attributes: dict[str, dict[str, Any]] = {domain: {} for domain in SEEDED_DOMAINS}
    for qualified, typed in device.get("attributes", {}).items():
        domain, _, name = qualified.rpartition("/")
        (value,) = typed.values()
        attributes.setdefault(domain or driver, {})[name] = value
    capacity: dict[str, dict[str, Any]] = {domain: {} for domain in SEEDED_DOMAINS}
    for qualified, quantity in device.get("capacity", {}).items():
        domain, _, name = qualified.rpartition("/")
        capacity.setdefault(domain or driver, {})[name] = quantity["value"]
    return {"device": {"driver": driver, "attributes": attributes, "capacity": capacity}}


def registered_selectors(run) -> dict[tuple[str, str], tuple[str, list[str]]]:
    found = {}
    for template in run.of_type(TEMPLATE):
        for request in template.inputs["spec"]["spec"]["devices"]["requests"]:
            expressions = [s["cel"]["expression"] for s in request["exactly"].get("selectors", [])]
            if expressions:
                found[(template.inputs["metadata"]["name"], request["name"])] = (
                    request["exactly"]["deviceClassName"],
                    expressions,
                )
    return found
