"""Claim templates and sample workloads from stack config, checked before anything reaches a cluster.

A ResourceClaimTemplate that Kubernetes accepts can still never allocate: a DeviceClass no
driver provides, a selector on an attribute the NVIDIA driver stopped publishing, or two
network classes where one NIC was meant. The API server cannot tell; these checks can, and
they name the entry and what to write instead.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any

from components.config.errors import ConfigProblems, config_key, shown
from components.config.raw import RawConfig
from components.dra_constants import (
    ALL_DEVICES,
    BUILTIN_TEMPLATES,
    CLASS_DRIVERS,
    DEFAULT_CLAIM_NAMESPACE,
    DEFAULT_GPU_PRODUCTS,
    EXACT_COUNT,
    GPU_DRIVER,
    GPU_TEMPLATE,
    IB_CLASS,
    IB_TEMPLATE,
    KNOWN_DEVICE_CLASSES,
    NETWORK_CLASSES,
    RDMA_CLASS,
    REMOVED_GPU_ATTRIBUTES,
)
from components.labels import DNS_LABEL
from components.model import (
    ClaimsConfig,
    ConstraintConfig,
    DeviceRequestConfig,
    GpuNodeGroupConfig,
    OpaqueConfig,
    UserClaimTemplate,
)

_DNS_PART = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS_SUBDOMAIN = re.compile(rf"^{_DNS_PART}(\.{_DNS_PART})*$")
QUALIFIED_ATTRIBUTE = re.compile(rf"^{_DNS_PART}(\.{_DNS_PART})*/[A-Za-z_][A-Za-z0-9_]{{0,31}}$")
REMOVED_ATTRIBUTE_IN_CEL = re.compile(r"""(?:\.\s*|\[\s*["'])(index|minor)\b(?!\s*\()""")
IMAGE_DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")
IMAGE_TAG = re.compile(r":([A-Za-z0-9_][A-Za-z0-9_.-]{0,127})$")
TEMPLATE_FIELDS = {"name", "requests", "constraints", "config", "separateNetworkDevices"}
REQUEST_FIELDS = {"name", "exactly"}
EXACT_FIELDS = {"deviceClassName", "count", "allocationMode", "selectors"}
V1BETA1_REQUEST_FIELDS = {"deviceClassName", "count", "allocationMode", "selectors", "adminAccess"}


@lru_cache(maxsize=1)
def _cel_environment() -> Any:
    """Built on first use: importing celpy and building its parser costs more than a plan without selectors."""
    import celpy

    return celpy.Environment()


def cel_compile_error(expression: str) -> str | None:
    """Why `expression` is not CEL, or None; the API server would refuse it the same way."""
    import celpy

    try:
        _cel_environment().compile(expression)
    except celpy.CELParseError as error:
        column = getattr(error, "column", None)
        where = f"column {column}" if column else "the end"
        return f"it stops parsing at {where} of {expression!r}"
    return None


def removed_attribute_in(expression: str) -> str | None:
    match = REMOVED_ATTRIBUTE_IN_CEL.search(expression)
    return match.group(1) if match and GPU_DRIVER in expression else None


def image_problem(image: str) -> str | None:
    if IMAGE_DIGEST.search(image):
        return None
    tag = IMAGE_TAG.search(image.rsplit("/", 1)[-1])
    if tag is None:
        return (
            "has no tag; pin one (for example nvidia/cuda:13.1.1-runtime-ubuntu24.04) so every run pulls the same image"
        )
    if tag.group(1) == "latest":
        return "uses the tag latest, which moves; pin a release tag or a digest"
    return None


def _strings(value: Any, key: str, problems: ConfigProblems, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        problems.add(config_key(key), f"got {shown(value)}; expected a list of {what}")
        return ()
    return tuple(value)


class _TemplateReader:
    """Reads one `userClaimTemplates` entry; every complaint names the entry and the field."""

    def __init__(
        self,
        entry: Mapping[str, Any],
        where: str,
        allowed_classes: Sequence[str],
        infiniband: bool,
        problems: ConfigProblems,
    ) -> None:
        self.entry = entry
        self.where = where
        self.allowed_classes = allowed_classes
        self.infiniband = infiniband
        self.problems = problems

    def add(self, message: str) -> None:
        self.problems.add(self.where, message)

    def template(self, name: str) -> UserClaimTemplate:
        unknown = sorted(set(self.entry) - TEMPLATE_FIELDS)
        if unknown:
            self.add(f"unknown field(s) {', '.join(unknown)}; allowed: {', '.join(sorted(TEMPLATE_FIELDS))}")
        raw_requests = self.entry.get("requests")
        if not isinstance(raw_requests, list) or not raw_requests:
            self.add(
                f"requests got {shown(raw_requests)}; expected a non-empty list of {{name, exactly: {{deviceClassName, count | allocationMode: All, selectors}}}}"
            )
            raw_requests = []
        requests = tuple(request for index, raw in enumerate(raw_requests) if (request := self.request(index, raw)))
        request_names = [request.name for request in requests]
        if len(set(request_names)) != len(request_names):
            self.add(f"request names {shown(request_names)} repeat; each request needs its own name")
        self.network_pair(requests)
        return UserClaimTemplate(
            name=name,
            requests=requests,
            constraints=self.constraints(requests),
            config=self.opaque(set(request_names)),
        )

    def request(self, index: int, raw: Any) -> DeviceRequestConfig | None:
        spot = f"requests[{index}]"
        if not isinstance(raw, dict):
            self.add(f"{spot} got {shown(raw)}; expected {{name, exactly: {{...}}}}")
            return None
        flat = sorted(set(raw) & V1BETA1_REQUEST_FIELDS)
        if flat:
            self.add(
                f"{spot} has {', '.join(flat)} directly on the request: that is the v1beta1 shape. "
                f"resource.k8s.io/v1 puts them under exactly: write {{name: {raw.get('name', 'gpu')}, exactly: {{deviceClassName: ..., count: 1}}}}"
            )
            return None
        unknown = sorted(set(raw) - REQUEST_FIELDS)
        if unknown:
            self.add(f"{spot} has unknown field(s) {', '.join(unknown)}; allowed: name, exactly")
        name = raw.get("name")
        if not isinstance(name, str) or not DNS_LABEL.match(name):
            self.add(
                f"{spot}.name got {shown(name)}; expected a DNS label (lowercase letters, digits and '-', at most 63 characters)"
            )
            return None
        spot = f"request {name}"
        exactly = raw.get("exactly")
        if not isinstance(exactly, dict):
            self.add(
                f"{spot}: exactly got {shown(exactly)}; expected {{deviceClassName, count | allocationMode: All, selectors}}"
            )
            return None
        unknown = sorted(set(exactly) - EXACT_FIELDS)
        if unknown:
            self.add(
                f"{spot}: exactly has unknown field(s) {', '.join(unknown)}; allowed: {', '.join(sorted(EXACT_FIELDS))}"
            )
        return DeviceRequestConfig(
            name=name,
            device_class=self.device_class(spot, exactly.get("deviceClassName")),
            count=self.count(spot, exactly),
            allocation_mode=str(exactly.get("allocationMode", EXACT_COUNT)),
            selectors=self.selectors(spot, exactly.get("selectors")),
        )

    def device_class(self, spot: str, device_class: Any) -> str:
        known = (*KNOWN_DEVICE_CLASSES, *self.allowed_classes)
        if not isinstance(device_class, str) or device_class not in known:
            self.add(
                f"{spot}: deviceClassName {shown(device_class)} is not a DeviceClass this cluster provides; known: {', '.join(known)}. "
                f"If another driver installs it, list it in {config_key('allowedDeviceClasses')}"
            )
            return str(device_class)
        if device_class in NETWORK_CLASSES and not self.infiniband:
            self.add(
                f"{spot}: deviceClassName {device_class} needs DRANet's NICs, which only InfiniBand GPU groups have; set infiniband: true on a GPU node group or drop this request"
            )
        return device_class

    def count(self, spot: str, exactly: Mapping[str, Any]) -> int | None:
        mode = exactly.get("allocationMode", EXACT_COUNT)
        count = exactly.get("count")
        if mode not in (EXACT_COUNT, ALL_DEVICES):
            self.add(f"{spot}: allocationMode got {shown(mode)}; allowed: {EXACT_COUNT} (with count) or {ALL_DEVICES}")
            return None
        if mode == ALL_DEVICES:
            if count is not None:
                self.add(
                    f"{spot}: count is set with allocationMode All, which takes every matching device on the node; drop count or use ExactCount"
                )
            return None
        if count is None:
            return 1
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            self.add(f"{spot}: count got {shown(count)}; expected a whole number >= 1")
            return None
        return count

    def selectors(self, spot: str, raw: Any) -> tuple[str, ...]:
        if raw is None:
            return ()
        shape = "a list of {cel: {expression: ...}}"
        if not isinstance(raw, list):
            self.add(f"{spot}: selectors got {shown(raw)}; expected {shape}")
            return ()
        expressions = []
        for index, selector in enumerate(raw):
            expression = (
                selector.get("cel", {}).get("expression")
                if isinstance(selector, dict) and isinstance(selector.get("cel"), dict)
                else None
            )
            if not isinstance(expression, str) or set(selector) != {"cel"} or set(selector["cel"]) != {"expression"}:
                self.add(f"{spot}: selectors[{index}] got {shown(selector)}; expected {shape}")
                continue
            compile_error = cel_compile_error(expression)
            removed = removed_attribute_in(expression)
            if compile_error:
                self.add(f"{spot}: selectors[{index}] is not valid CEL: {compile_error}")
            elif removed:
                self.add(
                    f"{spot}: selectors[{index}] uses the GPU attribute {removed}, which the NVIDIA DRA driver stopped publishing in 25.8.0, "
                    "so evaluating it fails on every GPU and the claim is never allocated; select on uuid, productName, pciBusID or pcieRoot instead"
                )
            else:
                expressions.append(expression)
        return tuple(expressions)

    def network_pair(self, requests: Sequence[DeviceRequestConfig]) -> None:
        classes = {request.device_class for request in requests}
        if {IB_CLASS, RDMA_CLASS} <= classes and self.entry.get("separateNetworkDevices") is not True:
            self.add(
                f"requests both {RDMA_CLASS} and {IB_CLASS}: Kubernetes treats them as independent requests and allocates two separate NICs. "
                f"An InfiniBand interface is already RDMA-capable: request {IB_CLASS} alone for one InfiniBand NIC ({RDMA_CLASS} alone for any RDMA NIC), "
                "or set separateNetworkDevices: true if the workload really needs two devices"
            )
        if "separateNetworkDevices" in self.entry and not isinstance(self.entry["separateNetworkDevices"], bool):
            self.add(
                f"separateNetworkDevices got {shown(self.entry['separateNetworkDevices'])}; expected true or false"
            )

    def listed(self, field_name: str, shape: str) -> list[Any]:
        raw = self.entry.get(field_name, [])
        if isinstance(raw, list):
            return raw
        self.add(f"{field_name} got {shown(raw)}; expected a list of {shape}")
        return []

    def request_references(self, spot: str, value: Any, request_names: set[str]) -> tuple[str, ...] | None:
        """The requests an entry applies to (empty: all of them), or None when it names one this template lacks."""
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            self.add(f"{spot}.requests got {shown(value)}; expected a list of request names")
            return None
        missing = sorted(set(value) - request_names)
        if missing:
            self.add(
                f"{spot}.requests names {', '.join(missing)}, which this template does not request; its requests: {', '.join(sorted(request_names))}"
            )
            return None
        return tuple(value)

    def foreign_driver_request(
        self, attribute: str, requests: Sequence[DeviceRequestConfig]
    ) -> DeviceRequestConfig | None:
        """A request whose devices come from another driver than the one that publishes a driver-domain attribute.

        A device without the matched attribute is never chosen, so such a constraint can never be met;
        only resource.kubernetes.io attributes (pcieRoot, pciBusID) are shared between drivers.
        """
        domain = attribute.partition("/")[0]
        if domain not in CLASS_DRIVERS.values():
            return None
        return next(
            (request for request in requests if CLASS_DRIVERS.get(request.device_class, domain) != domain), None
        )

    def constraints(self, all_requests: Sequence[DeviceRequestConfig]) -> tuple[ConstraintConfig, ...]:
        request_names = {request.name for request in all_requests}
        constraints = []
        for index, item in enumerate(self.listed("constraints", "{requests, matchAttribute}")):
            spot = f"constraints[{index}]"
            if not isinstance(item, dict) or set(item) - {"requests", "matchAttribute"} or "matchAttribute" not in item:
                self.add(
                    f"{spot} got {shown(item)}; expected {{requests: [...], matchAttribute: <domain>/<attribute>}}"
                )
                continue
            attribute = item["matchAttribute"]
            requests = self.request_references(spot, item.get("requests"), request_names)
            if not isinstance(attribute, str) or not QUALIFIED_ATTRIBUTE.match(attribute):
                self.add(
                    f"{spot}.matchAttribute got {shown(attribute)}; expected a qualified attribute such as resource.kubernetes.io/pcieRoot"
                )
            elif attribute.partition("/")[0] == GPU_DRIVER and attribute.partition("/")[2] in REMOVED_GPU_ATTRIBUTES:
                self.add(
                    f"{spot}.matchAttribute {attribute} was removed from the NVIDIA DRA driver in 25.8.0, so no device has it; use resource.kubernetes.io/pcieRoot"
                )
            elif requests is not None:
                foreign = self.foreign_driver_request(
                    attribute, [r for r in all_requests if not requests or r.name in requests]
                )
                if foreign:
                    domain = attribute.partition("/")[0]
                    self.add(
                        f"{spot}.matchAttribute {attribute} is published only by the {domain} driver, but request {foreign.name} "
                        f"gets its device from {CLASS_DRIVERS[foreign.device_class]}, which lacks it, so the claim is never allocated; "
                        f"match a resource.kubernetes.io attribute such as resource.kubernetes.io/pcieRoot, or limit requests to {domain} devices"
                    )
                else:
                    constraints.append(ConstraintConfig(match_attribute=attribute, requests=requests))
        return tuple(constraints)

    def opaque(self, request_names: set[str]) -> tuple[OpaqueConfig, ...]:
        configs = []
        for index, item in enumerate(self.listed("config", "{requests, opaque: {driver, parameters}}")):
            spot = f"config[{index}]"
            opaque = item.get("opaque") if isinstance(item, dict) else None
            if (
                not isinstance(opaque, dict)
                or set(item) - {"requests", "opaque"}
                or set(opaque) != {"driver", "parameters"}
            ):
                self.add(f"{spot} got {shown(item)}; expected {{requests: [...], opaque: {{driver, parameters}}}}")
                continue
            driver, parameters = opaque["driver"], opaque["parameters"]
            requests = self.request_references(spot, item.get("requests"), request_names)
            if not isinstance(driver, str) or not DNS_SUBDOMAIN.match(driver):
                self.add(f"{spot}.opaque.driver got {shown(driver)}; expected a driver name such as {GPU_DRIVER}")
            elif not isinstance(parameters, dict) or not {"apiVersion", "kind"} <= set(parameters):
                self.add(
                    f"{spot}.opaque.parameters got {shown(parameters)}; expected a map with apiVersion and kind (for example resource.nvidia.com/v1beta1, GpuConfig)"
                )
            elif requests is not None:
                configs.append(OpaqueConfig(driver=driver, parameters=parameters, requests=requests))
        return tuple(configs)


def parse_user_templates(
    value: Any, allowed_classes: Sequence[str], infiniband: bool, builtin_names: Sequence[str], problems: ConfigProblems
) -> tuple[UserClaimTemplate, ...]:
    key = config_key("userClaimTemplates")
    if not isinstance(value, list):
        problems.add(key, f"got {shown(value)}; expected a list of claim templates in the stack file")
        return ()
    templates: list[UserClaimTemplate] = []
    for index, entry in enumerate(value):
        name = entry.get("name") if isinstance(entry, dict) else None
        where = f"{key} entry {name if isinstance(name, str) and name else f'[{index}]'}"
        if not isinstance(entry, dict):
            problems.add(where, f"got {shown(entry)}; expected a map with name and requests")
            continue
        if not isinstance(name, str) or not DNS_SUBDOMAIN.match(name) or len(name) > 253:
            problems.add(
                where,
                f"name got {shown(name)}; expected lowercase letters, digits, '-' and '.', starting and ending with a letter or digit",
            )
            continue
        if name in builtin_names or name in {template.name for template in templates}:
            problems.add(
                where,
                f"name {name} is already used by {'a built-in template' if name in builtin_names else 'another entry'}; choose another name",
            )
            continue
        templates.append(_TemplateReader(entry, where, allowed_classes, infiniband, problems).template(name))
    return tuple(templates)


def _multi_gpu_count(read: RawConfig, largest_node: int, problems: ConfigProblems) -> int:
    count = read.integer("multiGpuCount", 0)
    if count == 0:
        return largest_node
    if count == 1:
        problems.add(
            config_key("multiGpuCount"),
            "got 1; the multi-GPU template needs 2 or more (the gpu template already asks for one), or 0 for every GPU of the largest node",
        )
    elif count > largest_node:
        problems.add(
            config_key("multiGpuCount"),
            f"got {count}, but the largest GPU node has {largest_node}; a claim's devices all come from one node, so it could never be allocated",
        )
    return count


def parse_claims_config(
    read: RawConfig, gpu_groups: Sequence[GpuNodeGroupConfig], problems: ConfigProblems
) -> ClaimsConfig:
    """The claim templates and samples to create, or problems recorded against their keys."""
    infiniband = any(group.infiniband for group in gpu_groups)
    namespace = read.text("claimNamespace") or DEFAULT_CLAIM_NAMESPACE
    if not DNS_LABEL.match(namespace):
        problems.add(
            config_key("claimNamespace"),
            f"got {shown(namespace)}; expected a DNS label (lowercase letters, digits and '-', at most 63 characters)",
        )
    builtins = _strings(
        read.structured("builtinClaimTemplates", list(BUILTIN_TEMPLATES)),
        "builtinClaimTemplates",
        problems,
        "built-in template names",
    )
    unknown = sorted(set(builtins) - set(BUILTIN_TEMPLATES))
    if unknown:
        problems.add(
            config_key("builtinClaimTemplates"),
            f"unknown template(s) {', '.join(unknown)}; allowed: {', '.join(BUILTIN_TEMPLATES)}",
        )
    products = _strings(
        read.structured("gpuProducts", list(DEFAULT_GPU_PRODUCTS)),
        "gpuProducts",
        problems,
        'GPU product names as nvidia-smi prints them (for example "NVIDIA H200")',
    )
    allowed_classes = _strings(
        read.structured("allowedDeviceClasses", []), "allowedDeviceClasses", problems, "DeviceClass names"
    )
    images = {}
    for key in ("sampleGpuImage", "sampleRdmaImage"):
        images[key] = read.text(key, required=True) or ""
        problem = image_problem(images[key]) if images[key] else None
        if problem:
            problems.add(config_key(key), f"{shown(images[key])} {problem}")
    claims = ClaimsConfig(
        namespace=namespace,
        builtin_templates=tuple(name for name in builtins if name in BUILTIN_TEMPLATES),
        multi_gpu_count=_multi_gpu_count(read, max((group.gpus_per_node for group in gpu_groups), default=0), problems),
        gpu_products=products,
        sample_pods=read.boolean("samplePods"),
        sample_gpu_image=images["sampleGpuImage"],
        sample_rdma_image=images["sampleRdmaImage"],
        allowed_device_classes=allowed_classes,
        infiniband=infiniband,
    )
    active = claims.active_builtin_templates
    user_templates = parse_user_templates(
        read.structured("userClaimTemplates", []), allowed_classes, infiniband, active, problems
    )
    if claims.sample_pods:
        needed = [GPU_TEMPLATE, IB_TEMPLATE] if infiniband else [GPU_TEMPLATE]
        for name in needed:
            if name not in active:
                problems.add(
                    config_key("samplePods"),
                    f"is true, but the samples claim the built-in template {name}, which {config_key('builtinClaimTemplates')} leaves out; add it or set samplePods to false",
                )
    return replace(claims, user_templates=user_templates)
