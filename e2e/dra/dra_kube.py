"""Talking to the e2e control plane: server-side apply, status patches, bounded waits, and the scheduler's words.

Everything is read as plain dicts (camelCase, as `kubectl get -o json` shows them) through the
kubernetes client's dynamic client, so no field is lost to a typed model. Every wait has a limit
and, when it runs out, says what it waited for and what the API server, the scheduler and the
resourceclaim controller said meanwhile (pod conditions, events, claim status).
"""

from __future__ import annotations

import contextlib
import functools
import json
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from kubernetes import client, config
from kubernetes.dynamic import DynamicClient
from kubernetes.dynamic.exceptions import NotFoundError

FIELD_MANAGER = "nebius-dra-e2e"
WAIT = 60.0
RESOURCE_API = "resource.k8s.io/v1"
APPLY = "application/apply-patch+yaml"
MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"

T = TypeVar("T")
Obj = dict[str, Any]


def api_message(error: BaseException) -> str:
    """The API server's own message (the Status object's `message`), else the exception's text."""
    body = getattr(error, "body", None)
    if isinstance(body, bytes):
        body = body.decode(errors="replace")
    if isinstance(body, str):
        try:
            status = json.loads(body)
        except ValueError:
            return body.strip() or str(error)
        if isinstance(status, dict) and status.get("message"):
            return (
                f"{status.get('code', getattr(error, 'status', '?'))} {status.get('reason', '')}: {status['message']}"
            )
    return str(error)


def wait_for(what: str, probe: Callable[[], T], timeout: float = WAIT, interval: float = 0.25, explain=None) -> T:
    """`probe()` until it returns something truthy; after `timeout` seconds an AssertionError naming `what`."""
    deadline = time.monotonic() + timeout
    while True:
        result = probe()
        if result:
            return result
        if time.monotonic() >= deadline:
            detail = f"\n{explain()}" if explain else ""
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}{detail}")
        time.sleep(interval)


class Kube:
    def __init__(self, kubeconfig: str) -> None:
        self.api_client = config.new_client_from_config(config_file=kubeconfig)
        self.dyn = DynamicClient(self.api_client)
        self._resources: dict[tuple[str, str], Any] = {}

    def close(self) -> None:
        self.api_client.close()

    @functools.cached_property
    def server_version(self) -> str:
        """The API server's gitVersion (`/version`, e.g. v1.36.3): what a kubelet of the cluster's release reports."""
        return client.VersionApi(self.api_client).get_code().git_version

    def resource(self, api_version: str, kind: str):
        key = (api_version, kind)
        if key not in self._resources:
            self._resources[key] = self.dyn.resources.get(api_version=api_version, kind=kind)
        return self._resources[key]

    # ------------------------------------------------------------------ reads
    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        try:
            return self.resource(api_version, kind).get(name=name, namespace=namespace).to_dict()
        except NotFoundError:
            return None

    def list(self, api_version: str, kind: str, namespace: str | None = None, **selectors: str) -> list[Obj]:
        found = self.resource(api_version, kind).get(namespace=namespace, **selectors).to_dict()
        return found.get("items") or []

    def pod(self, namespace: str, name: str) -> Obj | None:
        return self.get("v1", "Pod", name, namespace)

    def claim(self, namespace: str, name: str) -> Obj | None:
        return self.get(RESOURCE_API, "ResourceClaim", name, namespace)

    def slices(self) -> list[Obj]:
        return self.list(RESOURCE_API, "ResourceSlice")

    # ----------------------------------------------------------------- writes
    def create(self, manifest: Mapping[str, Any]) -> Obj:
        res = self.resource(manifest["apiVersion"], manifest["kind"])
        namespace = manifest.get("metadata", {}).get("namespace")
        return res.create(body=dict(manifest), namespace=namespace).to_dict()

    def apply(self, manifest: Mapping[str, Any]) -> Obj:
        """Server-side apply as `kubectl apply --server-side --force-conflicts --validate=strict` would do it."""
        res = self.resource(manifest["apiVersion"], manifest["kind"])
        metadata = manifest.get("metadata", {})
        return self.dyn.server_side_apply(
            res,
            body=dict(manifest),
            name=metadata.get("name"),
            namespace=metadata.get("namespace"),
            field_manager=FIELD_MANAGER,
            force_conflicts=True,
            query_params=[("fieldValidation", "Strict")],
        ).to_dict()

    def patch(
        self,
        api_version: str,
        kind: str,
        name: str,
        body: Any,
        namespace: str | None = None,
        content_type: str = MERGE,
        status: bool = False,
    ) -> Obj:
        res = self.resource(api_version, kind)
        target = res.status if status else res
        return self.dyn.patch(target, body=body, name=name, namespace=namespace, content_type=content_type).to_dict()

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None, force: bool = False) -> None:
        """Deletes and does not wait; `force` is a zero grace period (no kubelet will ever confirm a pod's end)."""
        with contextlib.suppress(NotFoundError):
            self.resource(api_version, kind).delete(
                name=name, namespace=namespace, grace_period_seconds=0 if force else None
            )

    def wait_gone(
        self, api_version: str, kind: str, names: Iterable[str], namespace: str | None = None, timeout: float = WAIT
    ) -> None:
        remaining = set(names)

        def gone() -> bool:
            remaining.intersection_update(
                n for n in list(remaining) if self.get(api_version, kind, n, namespace) is not None
            )
            return not remaining

        wait_for(
            f"{kind} {', '.join(sorted(remaining))} to be deleted" + (f" in {namespace}" if namespace else ""),
            gone,
            timeout,
            explain=lambda: "\n".join(
                f"  {kind} {n}: {json.dumps((self.get(api_version, kind, n, namespace) or {}).get('metadata', {}).get('finalizers'))} finalizers"
                for n in sorted(remaining)
            ),
        )

    # ------------------------------------------------------- what was said
    def events(self, namespace: str, kind: str, name: str) -> list[Obj]:
        return self.list(
            "v1", "Event", namespace, field_selector=f"involvedObject.kind={kind},involvedObject.name={name}"
        )

    def pod_story(self, namespace: str, name: str) -> str:
        """What the scheduler and the resourceclaim controller said about a pod: condition, events, claim status."""
        pod = self.pod(namespace, name)
        if pod is None:
            return f"  pod {namespace}/{name} does not exist"
        lines = [
            f"  pod {namespace}/{name}: phase {pod.get('status', {}).get('phase')}, node {pod['spec'].get('nodeName') or '-'}"
        ]
        cond = pod_condition(pod, "PodScheduled")
        if cond:
            lines.append(f"  PodScheduled={cond.get('status')} {cond.get('reason', '')}: {cond.get('message', '')}")
        for event in self.events(namespace, "Pod", name):
            source = event.get("reportingComponent") or (event.get("source") or {}).get("component", "")
            lines.append(
                f"  event {event.get('reason')} from {source} (x{event.get('count', 1)}): {event.get('message')}"
            )
        extended = pod.get("status", {}).get("extendedResourceClaimStatus")
        if extended:
            lines.append(f"  extendedResourceClaimStatus: {json.dumps(extended, sort_keys=True)}")
        for status in pod.get("status", {}).get("resourceClaimStatuses") or []:
            claim_name = status.get("resourceClaimName")
            claim = self.claim(namespace, claim_name) if claim_name else None
            if claim is None:
                lines.append(f"  claim {status.get('name')}: not generated ({claim_name or 'no name yet'})")
                continue
            lines.append(f"  claim {claim_name}: status {json.dumps(claim.get('status') or {}, sort_keys=True)}")
            for event in self.events(namespace, "ResourceClaim", claim_name):
                lines.append(f"  claim event {event.get('reason')}: {event.get('message')}")
        if not pod.get("status", {}).get("resourceClaimStatuses"):
            lines.append(
                "  no resourceClaimStatuses on the pod yet (the resourceclaim controller has not made the claim)"
            )
        return "\n".join(lines)


def pod_condition(pod: Mapping[str, Any], kind: str) -> Mapping[str, Any]:
    return next((c for c in pod.get("status", {}).get("conditions") or [] if c.get("type") == kind), {})


def claim_names(pod: Mapping[str, Any]) -> dict[str, str]:
    """Pod-level claim name -> generated ResourceClaim name, once the resourceclaim controller made them."""
    return {
        s["name"]: s["resourceClaimName"]
        for s in pod.get("status", {}).get("resourceClaimStatuses") or []
        if s.get("resourceClaimName")
    }


def unschedulable_message(pod: Mapping[str, Any]) -> str | None:
    """The scheduler's verdict once it has judged the pod's claims (not while they are still being generated)."""
    cond = pod_condition(pod, "PodScheduled")
    message = cond.get("message") or ""
    if cond.get("status") == "False" and cond.get("reason") == "Unschedulable" and "not created yet" not in message:
        return message
    return None
