"""The few settings of each resource that a reviewer checks first.

A plan that printed every input would bury the version bump or the node count that a
pull request is about; these functions pick, per resource type, what decides cost,
capacity and compatibility. Inputs arrive already `presentable` (see plan_values).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from components.dra_constants import ON_DEMAND_CAPACITY, RESERVED_CAPACITY, SPOT_CAPACITY
from policies.dra_guardrails.planned import (
    CLUSTER_TYPE,
    COST_ESTIMATE_TYPE,
    NODE_GROUP_TYPE,
    POD_TYPE,
    field_at,
    has_key,
)
from tools.cost.render import doubted_total, span
from tools.plan.values import SECRET_PLACEHOLDER

Settings = dict[str, str]

NEBIUS_GPU_CLUSTER = "nebius:index/computeV1GpuCluster:ComputeV1GpuCluster"
NEBIUS_PRICING_POLICY = "nebius:index/billingV1PricingPolicy:BillingV1PricingPolicy"
KUBERNETES_PROVIDER = "pulumi:providers:kubernetes"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
CLAIM_TEMPLATE = "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate"
RESOURCE_CLAIM = "kubernetes:resource.k8s.io/v1:ResourceClaim"
DEVICE_CLASS = "kubernetes:resource.k8s.io/v1:DeviceClass"


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _present(pairs: Mapping[str, Any]) -> Settings:
    """Drops what is unset, so a line shows only what the program actually asked for."""
    return {key: _text(value) for key, value in pairs.items() if value is not None and value != ""}


def _cluster(inputs: Mapping[str, Any]) -> Settings:
    endpoints = field_at(inputs, "controlPlane", "endpoints") or {}
    return _present(
        {
            "name": inputs.get("name"),
            "version": field_at(inputs, "controlPlane", "version"),
            "etcd": field_at(inputs, "controlPlane", "etcdClusterSize"),
            "endpoint": "public" if "publicEndpoint" in endpoints else "private",
        }
    )


def _node_count(inputs: Mapping[str, Any]) -> str:
    autoscaling = inputs.get("autoscaling")
    if autoscaling:
        return f"autoscaling {autoscaling.get('minNodeCount')}..{autoscaling.get('maxNodeCount')}"
    return f"fixed {inputs.get('fixedNodeCount')}"


def _amount(amount: Any) -> str:
    if not isinstance(amount, Mapping):
        return "?"
    return f"{amount['percent']}%" if "percent" in amount else str(amount.get("count", "?"))


def _strategy(strategy: Any) -> str | None:
    if not isinstance(strategy, Mapping):
        return None
    return (
        f"surge {_amount(strategy.get('maxSurge'))}, unavailable {_amount(strategy.get('maxUnavailable'))}, "
        f"drain {strategy.get('drainTimeout', '?')}"
    )


def capacity_type(template: Any) -> str:
    """A node group's capacity as the stack file's `capacity.type` names it, from the template fields the program
    sends for it (components/values/node_groups.py, capacity_template_fields): spot sends `preemptible`, reserved
    `reservationPolicy`, on-demand neither."""
    if has_key(template, "preemptible"):
        return SPOT_CAPACITY
    return RESERVED_CAPACITY if has_key(template, "reservationPolicy") else ON_DEMAND_CAPACITY


def _capacity(template: Mapping[str, Any]) -> str | None:
    """Spot or reserved; nothing for plain on-demand, which sends no capacity field."""
    if capacity_type(template) == SPOT_CAPACITY:
        policy = field_at(template, "spotPricingPolicy", "id")
        return f"spot (max price {policy})" if policy else "spot (follows the spot price)"
    reservation = template.get("reservationPolicy")
    if isinstance(reservation, Mapping):
        blocks = reservation.get("reservationIds") or []
        return f"reservations {reservation.get('policy')}" + (f" ({', '.join(map(str, blocks))})" if blocks else "")
    return None


def _auto_repair(auto_repair: Any) -> str | None:
    conditions = field_at(auto_repair, "conditions") or []
    return (
        ", ".join(
            f"{c.get('type')}={c.get('status')} " + ("off" if c.get("disabled") else f"after {c.get('timeout')}")
            for c in conditions
        )
        or None
    )


def _node_group(inputs: Mapping[str, Any]) -> Settings:
    template = inputs.get("template") or {}
    gpu_settings = template.get("gpuSettings")
    driver = None
    if gpu_settings is not None:
        driver = gpu_settings.get("driversPreset") or "none (GPU Operator installs it)"
    taints = template.get("taints") or []
    # No `name`: the plan calls a group by its stack-file name, and Nebius's is `<cluster name>-<that name>`.
    return _present(
        {
            "platform": field_at(template, "resources", "platform"),
            "preset": field_at(template, "resources", "preset"),
            "nodes": _node_count(inputs),
            "dra": None if gpu_settings is None else bool(gpu_settings.get("dra")),
            "driversPreset": driver,
            "gpuCluster": field_at(template, "gpuCluster", "id"),
            "bootDiskGib": field_at(template, "bootDisk", "sizeGibibytes"),
            "taints": ", ".join(f"{t.get('key')}={t.get('value')}:{t.get('effect')}" for t in taints) or None,
            "capacity": _capacity(template),
            "strategy": _strategy(inputs.get("strategy")),
            "autoRepair": _auto_repair(inputs.get("autoRepair")),
        }
    )


def _gpu_cluster(inputs: Mapping[str, Any]) -> Settings:
    return _present({"name": inputs.get("name"), "fabric": inputs.get("infinibandFabric")})


def _pricing_policy(inputs: Mapping[str, Any]) -> Settings:
    price = field_at(inputs, "pricing", "maxPriceV1", "maxPrice")
    return _present(
        {
            "name": inputs.get("name"),
            "platform": field_at(inputs, "computeInstanceSpec", "v1", "platform"),
            "maxPrice": f"{price} USD per GPU-hour" if price else None,
        }
    )


def _kubernetes_provider(inputs: Mapping[str, Any]) -> Settings:
    return _present({"cluster": inputs.get("clusterIdentifier")})


def _helm_release(inputs: Mapping[str, Any]) -> Settings:
    return _present(
        {
            "release": inputs.get("name"),
            "chart": inputs.get("chart"),
            "version": inputs.get("version"),
            "namespace": inputs.get("namespace"),
            "repo": field_at(inputs, "repositoryOpts", "repo"),
            # With a private repository's login the options are a secret as a whole: their placeholder.
            "repositoryOpts": options if (options := inputs.get("repositoryOpts")) == SECRET_PLACEHOLDER else None,
            "atomic": inputs.get("atomic"),
            "timeout": inputs.get("timeout"),
        }
    )


def _request_summary(request: Mapping[str, Any]) -> str:
    """`name: class xN` for one device request, or its alternatives for a prioritized list."""
    if "firstAvailable" in request:
        options = " | ".join(_request_summary(option) for option in request.get("firstAvailable") or [])
        return f"{request.get('name')}: first of [{options}]"
    exact = request.get("exactly") or request
    amount = "all" if exact.get("allocationMode") == "All" else f"x{exact.get('count', 1)}"
    selectors = len(exact.get("selectors") or [])
    suffix = f" ({selectors} selector{'s' if selectors != 1 else ''})" if selectors else ""
    return f"{request.get('name')}: {exact.get('deviceClassName')} {amount}{suffix}"


def _devices(devices: Mapping[str, Any]) -> Settings:
    return _present(
        {
            "requests": "; ".join(_request_summary(r) for r in devices.get("requests") or []) or None,
            "constraints": "; ".join(
                f"{'+'.join(c.get('requests') or ['all'])} share {c.get('matchAttribute')}"
                for c in devices.get("constraints") or []
            )
            or None,
            "config": ", ".join(sorted({field_at(c, "opaque", "driver") or "?" for c in devices.get("config") or []}))
            or None,
        }
    )


def _metadata(inputs: Mapping[str, Any]) -> Settings:
    return _present(
        {"namespace": field_at(inputs, "metadata", "namespace"), "name": field_at(inputs, "metadata", "name")}
    )


def _claim_template(inputs: Mapping[str, Any]) -> Settings:
    return {**_metadata(inputs), **_devices(field_at(inputs, "spec", "spec", "devices") or {})}


def _resource_claim(inputs: Mapping[str, Any]) -> Settings:
    return {**_metadata(inputs), **_devices(field_at(inputs, "spec", "devices") or {})}


def _device_class(inputs: Mapping[str, Any]) -> Settings:
    selectors = field_at(inputs, "spec", "selectors") or []
    return _present({"name": field_at(inputs, "metadata", "name"), "selectors": len(selectors) or None})


def _pod(inputs: Mapping[str, Any]) -> Settings:
    spec = inputs.get("spec") or {}
    claims = [
        f"{claim.get('name')}<-{claim.get('resourceClaimTemplateName') or claim.get('resourceClaimName')}"
        for claim in spec.get("resourceClaims") or []
    ]
    images = sorted({container.get("image") for container in spec.get("containers") or [] if container.get("image")})
    return {**_metadata(inputs), **_present({"claims": ", ".join(claims) or None, "images": ", ".join(images) or None})}


def _cost_estimate(inputs: Mapping[str, Any]) -> Settings:
    hourly = field_at(inputs, "total", "hourlyUsd") or {}
    unpriced = field_at(inputs, "total", "unpriced") or []
    return _present(
        {
            "perHour": span(float(hourly.get("min", 0)), float(hourly.get("max", 0))) if hourly else None,
            "unpriced": ", ".join(map(str, unpriced)) or None,
            "priceCaveat": doubted_total(field_at(inputs, "total") or {}) or None,
        }
    )


SETTINGS_BY_TYPE: dict[str, Callable[[Mapping[str, Any]], Settings]] = {
    CLUSTER_TYPE: _cluster,
    NODE_GROUP_TYPE: _node_group,
    NEBIUS_GPU_CLUSTER: _gpu_cluster,
    NEBIUS_PRICING_POLICY: _pricing_policy,
    KUBERNETES_PROVIDER: _kubernetes_provider,
    HELM_RELEASE: _helm_release,
    CLAIM_TEMPLATE: _claim_template,
    RESOURCE_CLAIM: _resource_claim,
    DEVICE_CLASS: _device_class,
    POD_TYPE: _pod,
    COST_ESTIMATE_TYPE: _cost_estimate,
}


def key_settings(type_token: str, inputs: Mapping[str, Any]) -> Settings:
    """Settings for known types; any other Kubernetes object shows where it lands."""
    if type_token in SETTINGS_BY_TYPE:
        return SETTINGS_BY_TYPE[type_token](inputs)
    if type_token.startswith("kubernetes:"):
        return _metadata(inputs)
    return {}
