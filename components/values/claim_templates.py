"""ResourceClaimTemplate specs: plain data in Kubernetes field names (`resource.k8s.io/v1`), then typed Args.

The tests validate the plain specs against the Kubernetes schema and evaluate their CEL; the
component registers the typed form, and the translation refuses any field it does not know,
so a misspelt or newly added field fails a test instead of vanishing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pulumi_kubernetes.resource import v1 as dra

from components.cel import cel_string
from components.dra_constants import (
    ADMIN_ACCESS_LABEL,
    EXACT_COUNT,
    GPU_BY_PRODUCT_TEMPLATE,
    GPU_CLASS,
    GPU_DRIVER,
    GPU_NIC_TEMPLATE,
    GPU_TEMPLATE,
    IB_CLASS,
    IB_TEMPLATE,
    MULTI_GPU_TEMPLATE,
    PCIE_ROOT_ATTRIBUTE,
    RDMA_CLASS,
    RDMA_TEMPLATE,
)
from components.model import (
    ClaimsConfig,
    ConstraintConfig,
    DeviceRequestConfig,
    DeviceSelection,
    DeviceToleration,
    UserClaimTemplate,
)
from components.values.strict import fields_of


def product_selector(products: Sequence[str]) -> str:
    """Selects GPUs whose `productName` (the name `nvidia-smi` prints, e.g. "NVIDIA H200") is listed."""
    listed = ", ".join(cel_string(product) for product in products)
    return f'device.attributes["{GPU_DRIVER}"].productName in [{listed}]'


def selection_fields(selection: DeviceSelection) -> dict[str, Any]:
    """A selection in Kubernetes field names: the body of `exactly` or of one `firstAvailable` entry."""
    fields: dict[str, Any] = {"deviceClassName": selection.device_class}
    if selection.allocation_mode == EXACT_COUNT:
        fields["count"] = selection.count if selection.count is not None else 1
    else:
        fields["allocationMode"] = selection.allocation_mode
    cel = [{"cel": {"expression": expression}} for expression in selection.selectors]
    if cel:
        fields["selectors"] = cel
    if selection.admin_access:
        fields["adminAccess"] = True
    if selection.tolerations:
        fields["tolerations"] = [toleration_fields(toleration) for toleration in selection.tolerations]
    if selection.capacity:
        fields["capacity"] = {"requests": dict(selection.capacity)}
    return fields


def toleration_fields(toleration: DeviceToleration) -> dict[str, Any]:
    """A device toleration in Kubernetes field names; a field left unset stays out, as the API server defaults it."""
    fields = {
        "key": toleration.key,
        "operator": toleration.operator,
        "value": toleration.value,
        "effect": toleration.effect,
        "tolerationSeconds": toleration.toleration_seconds,
    }
    return {name: value for name, value in fields.items() if value is not None}


def exact_request(
    name: str,
    device_class: str,
    count: int | None = 1,
    allocation_mode: str = EXACT_COUNT,
    selectors: Iterable[str] = (),
) -> dict[str, Any]:
    return {
        "name": name,
        "exactly": selection_fields(DeviceSelection(device_class, count, allocation_mode, tuple(selectors))),
    }


def device_request(request: DeviceRequestConfig) -> dict[str, Any]:
    if request.exactly is not None:
        return {"name": request.name, "exactly": selection_fields(request.exactly)}
    return {
        "name": request.name,
        "firstAvailable": [{"name": sub.name, **selection_fields(sub.selection)} for sub in request.first_available],
    }


def match_attribute(attribute: str, requests: Sequence[str] = (), kind: str = "matchAttribute") -> dict[str, Any]:
    """A constraint that the devices of `requests` (all of the claim's when empty) share `attribute`.

    With kind `distinctAttribute` (DRAConsumableCapacity) they must all differ in it instead.
    """
    constraint: dict[str, Any] = {kind: attribute}
    if requests:
        constraint["requests"] = list(requests)
    return constraint


def constraint_fields(constraint: ConstraintConfig) -> dict[str, Any]:
    if constraint.distinct_attribute is not None:
        return match_attribute(constraint.distinct_attribute, constraint.requests, "distinctAttribute")
    assert constraint.match_attribute is not None, "the config reader sets one of the two"
    return match_attribute(constraint.match_attribute, constraint.requests)


def opaque_config(driver: str, parameters: Mapping[str, Any], requests: Sequence[str] = ()) -> dict[str, Any]:
    config: dict[str, Any] = {"opaque": {"driver": driver, "parameters": dict(parameters)}}
    if requests:
        config["requests"] = list(requests)
    return config


def claim_template_spec(
    requests: Sequence[Mapping[str, Any]],
    constraints: Sequence[Mapping[str, Any]] = (),
    config: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The `spec` of a ResourceClaimTemplate: the ResourceClaim every pod using it gets."""
    devices: dict[str, Any] = {"requests": [dict(request) for request in requests]}
    if constraints:
        devices["constraints"] = [dict(constraint) for constraint in constraints]
    if config:
        devices["config"] = [dict(entry) for entry in config]
    return {"spec": {"devices": devices}}


def builtin_template_specs(claims: ClaimsConfig) -> dict[str, dict[str, Any]]:
    """The built-in templates this stack's nodes can satisfy, in the order the stack documents them."""
    candidates = {
        GPU_TEMPLATE: lambda: claim_template_spec([exact_request("gpu", GPU_CLASS)]),
        MULTI_GPU_TEMPLATE: lambda: claim_template_spec(
            [exact_request("gpus", GPU_CLASS, count=claims.multi_gpu_count)]
        ),
        GPU_BY_PRODUCT_TEMPLATE: lambda: claim_template_spec(
            [exact_request("gpu", GPU_CLASS, selectors=[product_selector(claims.gpu_products)])]
        ),
        IB_TEMPLATE: lambda: claim_template_spec([exact_request("ib", IB_CLASS)]),
        RDMA_TEMPLATE: lambda: claim_template_spec([exact_request("rdma", RDMA_CLASS)]),
        GPU_NIC_TEMPLATE: lambda: claim_template_spec(
            [exact_request("gpu", GPU_CLASS), exact_request("nic", IB_CLASS)],
            constraints=[match_attribute(PCIE_ROOT_ATTRIBUTE, ["gpu", "nic"])],
        ),
    }
    active = set(claims.active_builtin_templates)
    return {name: build() for name, build in candidates.items() if name in active}


def user_template_spec(template: UserClaimTemplate) -> dict[str, Any]:
    return claim_template_spec(
        [device_request(request) for request in template.requests],
        constraints=[constraint_fields(c) for c in template.constraints],
        config=[opaque_config(c.driver, c.parameters, c.requests) for c in template.config],
    )


def namespace_labels(claims: ClaimsConfig, managed: Mapping[str, str]) -> dict[str, str]:
    """The claim namespace's labels; Kubernetes admits adminAccess requests only where the admin label is set."""
    return {**managed, ADMIN_ACCESS_LABEL: "true"} if claims.admin_access else dict(managed)


def claim_template_specs(claims: ClaimsConfig) -> dict[str, dict[str, Any]]:
    """Every ResourceClaimTemplate the stack creates, built-in first, by name."""
    specs = builtin_template_specs(claims)
    specs.update((template.name, user_template_spec(template)) for template in claims.user_templates)
    return specs


def _selector_args(selector: Mapping[str, Any]) -> dra.DeviceSelectorArgs:
    cel = fields_of(selector, "selector", required={"cel"})["cel"]
    return dra.DeviceSelectorArgs(
        cel=dra.CELDeviceSelectorArgs(expression=fields_of(cel, "cel", required={"expression"})["expression"])
    )


SELECTION_FIELDS = ("deviceClassName", "allocationMode", "count", "selectors", "tolerations", "capacity")
TOLERATION_FIELDS = ("key", "operator", "value", "effect", "tolerationSeconds")


def _selectors_args(fields: Mapping[str, Any]) -> list[dra.DeviceSelectorArgs] | None:
    return [_selector_args(selector) for selector in fields.get("selectors", [])] or None


def _tolerations_args(fields: Mapping[str, Any]) -> list[dra.DeviceTolerationArgs] | None:
    tolerations = [
        fields_of(t, "toleration", required=(), optional=TOLERATION_FIELDS) for t in fields.get("tolerations", [])
    ]
    return [
        dra.DeviceTolerationArgs(
            key=t.get("key"),
            operator=t.get("operator"),
            value=t.get("value"),
            effect=t.get("effect"),
            toleration_seconds=t.get("tolerationSeconds"),
        )
        for t in tolerations
    ] or None


def _capacity_args(fields: Mapping[str, Any]) -> dra.CapacityRequirementsArgs | None:
    if "capacity" not in fields:
        return None
    return dra.CapacityRequirementsArgs(
        requests=fields_of(fields["capacity"], "capacity", required={"requests"})["requests"]
    )


def _subrequest_args(sub: Mapping[str, Any]) -> dra.DeviceSubRequestArgs:
    fields = fields_of(sub, "firstAvailable entry", required={"name", "deviceClassName"}, optional=SELECTION_FIELDS)
    return dra.DeviceSubRequestArgs(
        name=fields["name"],
        device_class_name=fields["deviceClassName"],
        allocation_mode=fields.get("allocationMode"),
        count=fields.get("count"),
        selectors=_selectors_args(fields),
        tolerations=_tolerations_args(fields),
        capacity=_capacity_args(fields),
    )


def _request_args(request: Mapping[str, Any]) -> dra.DeviceRequestArgs:
    fields = fields_of(request, "request", required={"name"}, optional={"exactly", "firstAvailable"})
    exactly = fields.get("exactly")
    if exactly is None:
        return dra.DeviceRequestArgs(
            name=fields["name"], first_available=[_subrequest_args(sub) for sub in fields["firstAvailable"]]
        )
    exact = fields_of(exactly, "exactly", required={"deviceClassName"}, optional={*SELECTION_FIELDS, "adminAccess"})
    return dra.DeviceRequestArgs(
        name=fields["name"],
        exactly=dra.ExactDeviceRequestArgs(
            device_class_name=exact["deviceClassName"],
            allocation_mode=exact.get("allocationMode"),
            count=exact.get("count"),
            selectors=_selectors_args(exact),
            admin_access=exact.get("adminAccess"),
            tolerations=_tolerations_args(exact),
            capacity=_capacity_args(exact),
        ),
    )


def _constraint_args(constraint: Mapping[str, Any]) -> dra.DeviceConstraintArgs:
    fields = fields_of(
        constraint, "constraint", required=(), optional={"matchAttribute", "distinctAttribute", "requests"}
    )
    return dra.DeviceConstraintArgs(
        match_attribute=fields.get("matchAttribute"),
        distinct_attribute=fields.get("distinctAttribute"),
        requests=fields.get("requests"),
    )


def _config_args(entry: Mapping[str, Any]) -> dra.DeviceClaimConfigurationArgs:
    fields = fields_of(entry, "config", required={"opaque"}, optional={"requests"})
    opaque = fields_of(fields["opaque"], "opaque", required={"driver", "parameters"})
    return dra.DeviceClaimConfigurationArgs(
        opaque=dra.OpaqueDeviceConfigurationArgs(driver=opaque["driver"], parameters=opaque["parameters"]),
        requests=fields.get("requests"),
    )


def template_spec_args(spec: Mapping[str, Any]) -> dra.ResourceClaimTemplateSpecArgs:
    """The typed form of a claim template spec; an unknown field anywhere raises instead of being dropped."""
    claim = fields_of(fields_of(spec, "template", required={"spec"})["spec"], "spec", required={"devices"})
    devices = fields_of(claim["devices"], "devices", required={"requests"}, optional={"constraints", "config"})
    return dra.ResourceClaimTemplateSpecArgs(
        spec=dra.ResourceClaimSpecArgs(
            devices=dra.DeviceClaimArgs(
                requests=[_request_args(request) for request in devices["requests"]],
                constraints=[_constraint_args(c) for c in devices.get("constraints", [])] or None,
                config=[_config_args(c) for c in devices.get("config", [])] or None,
            )
        )
    )
