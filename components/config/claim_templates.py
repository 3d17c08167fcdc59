"""Claim templates and sample workloads from stack config, checked before anything reaches a cluster.

A ResourceClaimTemplate that Kubernetes accepts can still never allocate: a DeviceClass no
driver provides, a selector on an attribute the NVIDIA driver stopped publishing, or two
network classes where one NIC was meant. The API server cannot tell; these checks can, and
they name the entry and what to write instead. User templates speak the whole
`resource.k8s.io/v1` request shape the stack's Kubernetes minor enables by default: `exactly` or
`firstAvailable` (DRAPrioritizedList), `adminAccess` (DRAAdminAccess), constraints and config over
requests and `request/subrequest` names, and from 1.36 device `tolerations` (DRADeviceTaints),
`capacity` and `distinctAttribute` (DRAConsumableCapacity). A field whose gate is off by default on
the stack's minor is refused with the gate's name and the minor where it turns on; the table of
gates by minor is `components/dra_minors.py`, read from the releases' kube_features.go.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from components.cel import required_products, selector_problem
from components.config.errors import ConfigProblems, config_key, did_you_mean, refuse_repeats, shown, shown_name
from components.config.namespaces import refuse_taken_namespace, release_namespaces
from components.config.node_fit import unfit_reason
from components.dra_constants import (
    ALL_DEVICES,
    CLASS_DRIVERS,
    DEFAULT_CLAIM_NAMESPACE,
    DEVICE_CLASS_CONDITIONS,
    EXACT_COUNT,
    GPU_CLASS,
    GPU_DRIVER,
    GPU_PRODUCTS,
    GPU_TEMPLATE,
    IB_CLASS,
    IB_TEMPLATE,
    KNOWN_DEVICE_CLASSES,
    NETWORK_CLASSES,
    PASSTHROUGH_GATE,
    RDMA_CLASS,
    REMOVED_GPU_ATTRIBUTES,
    VFIO_CLASS,
)
from components.dra_minors import FIELD_GATES, field_gate_off_reason
from components.input.claim_templates import (
    ClaimConfigInput,
    ConstraintInput,
    DeviceRequestInput,
    DeviceTolerationInput,
    ExactRequestInput,
    SubRequestInput,
    UserClaimTemplateInput,
)
from components.input.fields import floating_tag
from components.input.stack import StackInput
from components.model import (
    ClaimsConfig,
    ConstraintConfig,
    DeviceRequestConfig,
    DeviceSelection,
    DeviceToleration,
    DraDriverConfig,
    GpuNodeGroupConfig,
    OpaqueConfig,
    SubRequestConfig,
    UserClaimTemplate,
)

IMAGE_DIGEST = re.compile(r"@sha256:[0-9a-f]{64}\Z")
IMAGE_TAG = re.compile(r":([A-Za-z0-9_][A-Za-z0-9_.-]{0,127})\Z")
# Namespaces the stack must never own: a stack-owned Namespace is deleted with the stack.
# The config fields that may be behind a feature gate; `Type.field` (the k8s.io/api resource/v1 type of the shape
# that carries it) is looked up in dra_minors.FIELD_GATES.
GATED_FIELDS = ("tolerations", "capacity", "firstAvailable", "adminAccess", "distinctAttribute")


def image_problem(image: str) -> str | None:
    if IMAGE_DIGEST.search(image):
        return None
    tag = IMAGE_TAG.search(image.rsplit("/", 1)[-1])
    if tag is None:
        return (
            "has no tag; pin one (for example nvidia/cuda:13.1.1-runtime-ubuntu24.04) so every run pulls the same image"
        )
    if why := floating_tag(tag.group(1)):
        return f"uses the tag {tag.group(1)}, which moves ({why}); pin a release tag or a digest"
    return None


def _gated(spot: str, shape: Any, api_type: str, version: str, add: Any) -> bool:
    """Records a problem for each field of `shape` whose gate is off on `version`; True when there was none."""
    clean = True
    for field_name in GATED_FIELDS:
        api_field = f"{api_type}.{field_name}"
        if api_field not in FIELD_GATES or getattr(shape, field_name, None) in (None, False):
            continue
        reason = field_gate_off_reason(api_field, version)
        if reason:
            clean = False
            add(f"{spot}.{field_name} needs {reason}, or remove the field")
    return clean


def _toleration(raw: DeviceTolerationInput) -> DeviceToleration:
    return DeviceToleration(raw.key, raw.operator, raw.value, raw.effect, raw.tolerationSeconds)


def toleration_problem(raw: DeviceTolerationInput) -> str | None:
    """The API server's rules across a toleration's fields (k8s.io/kubernetes pkg/apis/resource/validation)."""
    if raw.operator == "Exists" and raw.value:
        return f"operator Exists takes no value; got value {shown(raw.value)}"
    if not raw.key and raw.operator != "Exists":
        return "has no key, which matches every taint key only with operator Exists"
    if raw.tolerationSeconds is not None and raw.effect != "NoExecute":
        return "tolerationSeconds applies only to effect NoExecute"
    return None


class _TemplateReader:
    """Checks one `userClaimTemplates` entry; every complaint names the entry and the field."""

    def __init__(self, entry: UserClaimTemplateInput, context: _ClaimsContext, problems: ConfigProblems) -> None:
        self.entry = entry
        self.context = context
        self.where = f"{config_key('userClaimTemplates')} entry {shown_name(entry.name)}"
        self.problems = problems

    def add(self, message: str) -> None:
        self.problems.add(self.where, message)

    def template(self) -> UserClaimTemplate:
        requests = tuple(self.request(index, raw) for index, raw in enumerate(self.entry.requests))
        names = [request.name for request in requests]
        if len(set(names)) != len(names):
            self.add(f"request names {shown(names)} repeat; each request needs its own name")
        self.network_pair(requests)
        unfit = unfit_reason([request.selections for request in requests], self.context.gpu_groups)
        if unfit:
            self.add(unfit)
        references = {name: request for request in requests for name in self.reference_names(request)}
        return UserClaimTemplate(
            name=self.entry.name,
            requests=requests,
            constraints=self.constraints(references),
            config=self.opaque(references),
        )

    @staticmethod
    def reference_names(request: DeviceRequestConfig) -> list[str]:
        """What constraints and config may name: the request, and each `request/subrequest`."""
        return [request.name, *(f"{request.name}/{sub.name}" for sub in request.first_available)]

    def request(self, index: int, raw: DeviceRequestInput) -> DeviceRequestConfig:
        spot = f"request {raw.name}"
        if (raw.exactly is None) == (raw.firstAvailable is None):
            given = "both" if raw.exactly else "neither"
            self.add(
                f"{spot}: set exactly one of exactly: {{deviceClassName, ...}} or firstAvailable: [{{name, deviceClassName, ...}}]; got {given}"
            )
        _gated(spot, raw, "DeviceRequest", self.context.kubernetes_version, self.add)
        exactly = self.selection(f"{spot}: exactly", raw.exactly) if raw.exactly else None
        subrequests = tuple(
            SubRequestConfig(sub.name, self.selection(f"{spot}: firstAvailable[{position}] ({sub.name})", sub))
            for position, sub in enumerate(raw.firstAvailable or ())
        )
        sub_names = [sub.name for sub in subrequests]
        if len(set(sub_names)) != len(sub_names):
            self.add(f"{spot}: firstAvailable names {shown(sub_names)} repeat; each subrequest needs its own name")
        return DeviceRequestConfig(name=raw.name, exactly=exactly, first_available=subrequests)

    def selection(self, spot: str, raw: ExactRequestInput | SubRequestInput) -> DeviceSelection:
        api_type = "ExactDeviceRequest" if isinstance(raw, ExactRequestInput) else "DeviceSubRequest"
        usable = _gated(spot, raw, api_type, self.context.kubernetes_version, self.add)
        if raw.allocationMode == ALL_DEVICES and raw.count is not None:
            self.add(
                f"{spot}: count is set with allocationMode All, which takes every matching device on the node; drop count or use ExactCount"
            )
        admin_access = bool(getattr(raw, "adminAccess", False))
        return DeviceSelection(
            device_class=self.device_class(spot, raw.deviceClassName),
            count=(raw.count or 1) if raw.allocationMode == EXACT_COUNT else None,
            allocation_mode=raw.allocationMode,
            selectors=self.selectors(spot, [selector.cel.expression for selector in raw.selectors]),
            admin_access=admin_access,
            tolerations=self.tolerations(spot, raw.tolerations or []) if usable else (),
            capacity=tuple(raw.capacity.requests.items()) if usable and raw.capacity else (),
        )

    def tolerations(self, spot: str, given: Sequence[DeviceTolerationInput]) -> tuple[DeviceToleration, ...]:
        for index, raw in enumerate(given):
            problem = toleration_problem(raw)
            if problem:
                self.add(f"{spot}.tolerations[{index}] {problem}")
        return tuple(_toleration(raw) for raw in given)

    def device_class(self, spot: str, device_class: str) -> str:
        known = (*KNOWN_DEVICE_CLASSES, *self.context.allowed_classes)
        if device_class not in known:
            self.add(
                f"{spot}: deviceClassName {shown(device_class)} is not a DeviceClass this cluster provides"
                f"{did_you_mean(device_class, known)}; known: {', '.join(known)}. "
                f"If another driver installs it, list it in {config_key('allowedDeviceClasses')}"
            )
        elif device_class in NETWORK_CLASSES and not self.context.infiniband:
            self.add(
                f"{spot}: deviceClassName {device_class} needs DRANet's NICs, which only InfiniBand GPU groups have; set infiniband: true on a GPU node group or drop this request"
            )
        elif device_class == VFIO_CLASS and not self.context.passthrough:
            self.add(
                f"{spot}: deviceClassName {VFIO_CLASS} has devices only with {DEVICE_CLASS_CONDITIONS[VFIO_CLASS]}; "
                f"set that in {config_key('draDriverValues')} or request {KNOWN_DEVICE_CLASSES[0]}"
            )
        return device_class

    def selectors(self, spot: str, expressions: Sequence[str]) -> tuple[str, ...]:
        accepted = []
        for index, expression in enumerate(expressions):
            problem = selector_problem(expression, self.context.kubernetes_version) or self.product_problem(expression)
            if problem:
                self.add(f"{spot}: selectors[{index}] {problem}")
            else:
                accepted.append(expression)
        return tuple(accepted)

    def product_problem(self, expression: str) -> str | None:
        """A selector that requires a GPU product no group of the stack has, as `gpuProducts` is refused for it
        (`_gpu_products`): the API server accepts it, and the claim waits for ever, unallocated."""
        served = self.context.products
        required = required_products(expression, self.context.kubernetes_version)
        if not served or required is None or set(required) & set(served):
            return None
        every = ", ".join(f"{shown(product)} ({platform})" for platform, product in GPU_PRODUCTS.items())
        return (
            f"selects productName {', '.join(map(shown, required))}, which no GPU group of the stack serves (its "
            f"platforms' products: {', '.join(map(shown, served))}; every known platform's: {every}), so the claim "
            "is never allocated"
        )

    def network_pair(self, requests: Sequence[DeviceRequestConfig]) -> None:
        """Two requests that each get a NIC, one InfiniBand and one RDMA, where one NIC was meant.

        A single request whose firstAvailable lists both classes gets one NIC: that is the way to accept either.
        """
        nic_requests = [r for r in requests if r.device_classes and set(r.device_classes) <= set(NETWORK_CLASSES)]
        classes = {device_class for request in nic_requests for device_class in request.device_classes}
        if len(nic_requests) > 1 and {IB_CLASS, RDMA_CLASS} <= classes and not self.entry.separateNetworkDevices:
            self.add(
                f"requests both {RDMA_CLASS} and {IB_CLASS}: Kubernetes treats them as independent requests and allocates two separate NICs. "
                f"An InfiniBand interface is already RDMA-capable: request {IB_CLASS} alone for one InfiniBand NIC ({RDMA_CLASS} alone for any RDMA NIC), "
                "or set separateNetworkDevices: true if the workload really needs two devices"
            )

    def known_references(self, spot: str, given: Sequence[str], references: Mapping[str, DeviceRequestConfig]) -> bool:
        missing = sorted(set(given) - set(references))
        if missing:
            self.add(
                f"{spot}.requests names {', '.join(missing)}, which this template does not request; it may name: {', '.join(references)}"
            )
        return not missing

    def constraints(self, references: Mapping[str, DeviceRequestConfig]) -> tuple[ConstraintConfig, ...]:
        constraints = []
        for index, item in enumerate(self.entry.constraints):
            spot = f"constraints[{index}]"
            if not _gated(spot, item, "DeviceConstraint", self.context.kubernetes_version, self.add):
                continue
            if item.matchAttribute is not None and item.distinctAttribute is not None:
                self.add(f"{spot} sets both matchAttribute and distinctAttribute; a constraint takes exactly one")
            elif item.distinctAttribute is not None:
                if self.known_references(spot, item.requests, references):
                    constraints.append(ConstraintConfig(None, tuple(item.requests), item.distinctAttribute))
            elif item.matchAttribute is None:
                self.add(
                    f"{spot} has no matchAttribute; expected {{requests: [...], matchAttribute: <domain>/<attribute>}}"
                )
            elif self.known_references(spot, item.requests, references):
                constraint = self.constraint(spot, item, item.matchAttribute, references)
                if constraint:
                    constraints.append(constraint)
        return tuple(constraints)

    def constraint(
        self, spot: str, item: ConstraintInput, attribute: str, references: Mapping[str, DeviceRequestConfig]
    ) -> ConstraintConfig | None:
        domain, _, name = attribute.partition("/")
        if domain == GPU_DRIVER and name in REMOVED_GPU_ATTRIBUTES:
            self.add(
                f"{spot}.matchAttribute {attribute} was removed from the NVIDIA DRA driver in 25.8.0, so no device has it; use resource.kubernetes.io/pcieRoot"
            )
            return None
        covered = [references[name] for name in item.requests] or list(references.values())
        foreign = self.foreign_driver_request(domain, covered)
        if foreign:
            self.add(
                f"{spot}.matchAttribute {attribute} is published only by the {domain} driver, but request {foreign[0]} "
                f"gets its device from {foreign[1]}, which lacks it, so the claim is never allocated; "
                f"match a resource.kubernetes.io attribute such as resource.kubernetes.io/pcieRoot, or limit requests to {domain} devices"
            )
            return None
        return ConstraintConfig(match_attribute=attribute, requests=tuple(item.requests))

    @staticmethod
    def foreign_driver_request(domain: str, requests: Sequence[DeviceRequestConfig]) -> tuple[str, str] | None:
        """A request whose devices come from another driver than the one that publishes a driver-domain attribute.

        A device without the matched attribute is never chosen, so such a constraint can never be met;
        only resource.kubernetes.io attributes (pcieRoot, pciBusID) are shared between drivers.
        """
        if domain not in CLASS_DRIVERS.values():
            return None
        for request in requests:
            for device_class in request.device_classes:
                driver = CLASS_DRIVERS.get(device_class, domain)
                if driver != domain:
                    return request.name, driver
        return None

    def opaque(self, references: Mapping[str, DeviceRequestConfig]) -> tuple[OpaqueConfig, ...]:
        configs = []
        for index, item in enumerate(self.entry.config):
            spot = f"config[{index}]"
            if not {"apiVersion", "kind"} <= set(item.opaque.parameters):
                self.add(
                    f"{spot}.opaque.parameters got {shown(item.opaque.parameters)}; expected a map with apiVersion and kind "
                    "(for example resource.nvidia.com/v1beta1, GpuConfig)"
                )
            elif self.known_references(spot, item.requests, references):
                configs.append(self.opaque_config(item))
        return tuple(configs)

    @staticmethod
    def opaque_config(item: ClaimConfigInput) -> OpaqueConfig:
        return OpaqueConfig(driver=item.opaque.driver, parameters=item.opaque.parameters, requests=tuple(item.requests))


class _ClaimsContext:
    def __init__(self, settings: StackInput, gpu_groups: Sequence[GpuNodeGroupConfig], driver: DraDriverConfig) -> None:
        self.gpu_groups = tuple(gpu_groups)
        self.products = served_products(gpu_groups)
        self.allowed_classes = tuple(settings.allowedDeviceClasses)
        self.kubernetes_version = settings.kubernetesVersion
        self.infiniband = any(group.infiniband for group in gpu_groups)
        gates = driver.value_overrides.get("featureGates")
        self.passthrough = isinstance(gates, Mapping) and gates.get(PASSTHROUGH_GATE) is True


def _namespace(settings: StackInput, driver: DraDriverConfig, problems: ConfigProblems) -> str:
    namespace = settings.claimNamespace
    refuse_taken_namespace(
        config_key("claimNamespace"),
        namespace,
        # The exporter's own check refuses its namespace being this one.
        release_namespaces(settings, driver, with_metrics=False),
        "the stack creates the claim namespace and deletes it with the stack, so it must be one of its own",
        problems,
        example=DEFAULT_CLAIM_NAMESPACE,
    )
    return namespace


def _multi_gpu_count(count: int, gpu_groups: Sequence[GpuNodeGroupConfig], problems: ConfigProblems) -> int:
    """multi-gpu's GPUs, refused by the same one-node rule as every user template."""
    if count == 0:
        return max((group.gpus_per_node for group in gpu_groups), default=0)
    unfit = unfit_reason([(DeviceSelection(GPU_CLASS, count, EXACT_COUNT),)], gpu_groups)
    if count == 1:
        problems.add(
            config_key("multiGpuCount"),
            "got 1; the multi-GPU template needs 2 or more (the gpu template already asks for one), or 0 for every GPU of the largest node",
        )
    elif unfit:
        problems.add(config_key("multiGpuCount"), f"got {count}: the multi-gpu template {unfit}")
    return count


def parse_user_templates(
    settings: StackInput, context: _ClaimsContext, builtin_names: Sequence[str], problems: ConfigProblems
) -> tuple[UserClaimTemplate, ...]:
    templates: list[UserClaimTemplate] = []
    taken = set(builtin_names)
    for entry in settings.userClaimTemplates:
        if entry.name in taken:
            problems.add(
                f"{config_key('userClaimTemplates')} entry {shown_name(entry.name)}",
                f"name {entry.name} is already used by {'a built-in template' if entry.name in builtin_names else 'another entry'}; choose another name",
            )
            continue
        taken.add(entry.name)
        templates.append(_TemplateReader(entry, context, problems).template())
    return tuple(templates)


def served_products(gpu_groups: Sequence[GpuNodeGroupConfig]) -> tuple[str, ...]:
    """The GPU products the stack's groups have, when every group's platform has a known one (GPU_PRODUCTS); empty
    otherwise, since a group whose product is not known may serve any."""
    if not all(group.platform in GPU_PRODUCTS for group in gpu_groups):
        return ()
    return tuple(dict.fromkeys(GPU_PRODUCTS[group.platform] for group in gpu_groups))


def _gpu_products(
    settings: StackInput, gpu_groups: Sequence[GpuNodeGroupConfig], problems: ConfigProblems
) -> tuple[str, ...]:
    """The products `gpu-by-product` selects: the stack's list, else its platforms' own (GPU_PRODUCTS).

    A given list is refused when every platform's product is known and none of them is listed: no node could
    serve the template (an H100-only stack selecting "NVIDIA H200").
    """
    own = tuple(dict.fromkeys(GPU_PRODUCTS[g.platform] for g in gpu_groups if g.platform in GPU_PRODUCTS))
    given = tuple(dict.fromkeys(settings.gpuProducts))
    if not given:
        return own
    if served_products(gpu_groups) and not set(given) & set(own):
        problems.add(
            config_key("gpuProducts"),
            f"lists {', '.join(map(shown, given))}, which no GPU group of the stack serves (its platforms' products: "
            f"{', '.join(map(shown, own))}); list those, or leave gpuProducts out to select them",
        )
    return given


def parse_claims_config(
    settings: StackInput, gpu_groups: Sequence[GpuNodeGroupConfig], driver: DraDriverConfig, problems: ConfigProblems
) -> ClaimsConfig:
    """The claim templates and samples to create, or problems recorded against their keys."""
    infiniband = any(group.infiniband for group in gpu_groups)
    for key in ("sampleGpuImage", "sampleRdmaImage"):
        image = getattr(settings, key)
        problem = image_problem(image)
        if problem:
            problems.add(config_key(key), f"{shown(image)} {problem}")
    for key in ("builtinClaimTemplates", "allowedDeviceClasses", "gpuProducts"):
        refuse_repeats(key, getattr(settings, key), problems)
    known = [name for name in settings.allowedDeviceClasses if name in KNOWN_DEVICE_CLASSES]
    if known:
        problems.add(
            config_key("allowedDeviceClasses"),
            f"lists {', '.join(map(shown, known))}, which the stack knows already ({', '.join(KNOWN_DEVICE_CLASSES)}); "
            "list only DeviceClasses other drivers install",
        )
    claims = ClaimsConfig(
        namespace=_namespace(settings, driver, problems),
        builtin_templates=tuple(settings.builtinClaimTemplates),
        multi_gpu_count=_multi_gpu_count(settings.multiGpuCount, gpu_groups, problems),
        gpu_products=_gpu_products(settings, gpu_groups, problems),
        sample_pods=settings.samplePods,
        sample_gpu_image=settings.sampleGpuImage,
        sample_rdma_image=settings.sampleRdmaImage,
        allowed_device_classes=tuple(settings.allowedDeviceClasses),
        infiniband=infiniband,
    )
    active = claims.active_builtin_templates
    context = _ClaimsContext(settings, gpu_groups, driver)
    user_templates = parse_user_templates(settings, context, active, problems)
    if claims.sample_pods:
        needed = [GPU_TEMPLATE, IB_TEMPLATE] if infiniband else [GPU_TEMPLATE]
        for name in needed:
            if name not in active:
                problems.add(
                    config_key("samplePods"),
                    f"is true, but the samples claim the built-in template {name}, which {config_key('builtinClaimTemplates')} leaves out; add it or set samplePods to false",
                )
    return replace(claims, user_templates=user_templates)
