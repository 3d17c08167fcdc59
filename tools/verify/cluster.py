"""A thin adapter over the official `kubernetes` client that hands back objects as raw API JSON.

Responses are read with `_preload_content=False` and parsed as JSON, so the checks see
exactly what `kubectl get -o json` shows (camelCase, every field), never the client's
generated model classes. Every failure becomes a `ClusterError` whose message says what to
do about it; a missing object is `None`, not an error.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import urllib3
from kubernetes import client, config
from kubernetes.client.rest import ApiException
from kubernetes.config.config_exception import ConfigException
from kubernetes.stream import stream
from kubernetes.stream.ws_client import ERROR_CHANNEL
from websocket import WebSocketException

Obj = dict[str, Any]


class ClusterError(Exception):
    """The cluster could not be read or changed; the message names the likely fix."""


@dataclass(frozen=True)
class ExecResult:
    stdout: str
    stderr: str
    exit_code: int


class Cluster(Protocol):
    """What the verifier needs from a cluster; the tests supply a fake with the same methods."""

    def list_nodes(self) -> list[Obj]: ...
    def list_pods(self, namespace: str) -> list[Obj]: ...
    def list_device_classes(self) -> list[Obj]: ...
    def list_resource_slices(self) -> list[Obj]: ...
    def read_daemonset(self, namespace: str, name: str) -> Obj | None: ...
    def read_claim_template(self, namespace: str, name: str) -> Obj | None: ...
    def read_claim(self, namespace: str, name: str) -> Obj | None: ...
    def create_pod(self, namespace: str, manifest: Obj) -> Obj: ...
    def read_pod(self, namespace: str, name: str) -> Obj | None: ...
    def pod_events(self, namespace: str, name: str) -> list[Obj]: ...
    def exec_in_pod(self, namespace: str, name: str, container: str, command: Sequence[str]) -> ExecResult: ...
    def delete_pod(self, namespace: str, name: str) -> None: ...
    def delete_claim(self, namespace: str, name: str) -> None: ...


def explain_api_error(error: ApiException, action: str) -> str:
    if error.status == 401:
        return (
            f"{action}: unauthorized (401): the kubeconfig's exec plugin did not produce a valid token; "
            "check that the `nebius` CLI is on PATH and its profile is logged in"
        )
    if error.status == 403:
        return f"{action}: forbidden (403): the kubeconfig's identity lacks this permission"
    if error.status == 404:
        dra = "Resource" in action or "DeviceClass" in action
        return f"{action}: not found (404)" + (
            ": the API server does not serve resource.k8s.io/v1, which needs Kubernetes 1.34 or later" if dra else ""
        )
    return f"{action}: HTTP {error.status} {error.reason}"


def exit_status(error_channel: str) -> tuple[int, str]:
    """The exit code from the exec error channel's Status object; 126 when the command could not start."""
    status = json.loads(error_channel) if error_channel.strip() else {"status": "Success"}
    if not isinstance(status, dict):
        return 126, f"unreadable exec status: {error_channel[:200]}"
    if status.get("status") == "Success":
        return 0, ""
    causes = status.get("details", {}).get("causes") or []
    code = next((int(c["message"]) for c in causes if c.get("reason") == "ExitCode"), 126)
    return code, status.get("message", "")


class KubeCluster:
    EXEC_TIMEOUT_S = 60

    def __init__(self, api_client: client.ApiClient) -> None:
        self.core = client.CoreV1Api(api_client)
        self.apps = client.AppsV1Api(api_client)
        self.resource = client.ResourceV1Api(api_client)

    @classmethod
    def from_kubeconfig(cls, path: str | None, context: str | None = None) -> KubeCluster:
        where = path or "$KUBECONFIG or ~/.kube/config"
        try:
            return cls(config.new_client_from_config(config_file=path, context=context))
        except (ConfigException, OSError, ValueError) as error:
            raise ClusterError(
                f"cannot load the kubeconfig from {where}: {error}; write it with "
                "`pulumi stack output kubeconfig --show-secrets > kubeconfig` and pass --kubeconfig kubeconfig"
            ) from error

    def _call(
        self, action: str, call: Callable[..., Any], *args: Any, missing_ok: bool = False, **kwargs: Any
    ) -> Obj | None:
        try:
            response = call(*args, _preload_content=False, **kwargs)
        except ApiException as error:
            if missing_ok and error.status == 404:
                return None
            raise ClusterError(explain_api_error(error, action)) from error
        except (urllib3.exceptions.HTTPError, OSError) as error:
            raise ClusterError(
                f"{action}: cannot reach the API server ({error}); check the kubeconfig's server and your network"
            ) from error
        return json.loads(response.data) if response.data else {}

    def _items(self, action: str, call: Callable[..., Any], *args: Any, **kwargs: Any) -> list[Obj]:
        return (self._call(action, call, *args, **kwargs) or {}).get("items") or []

    def list_nodes(self) -> list[Obj]:
        return self._items("list nodes", self.core.list_node)

    def list_pods(self, namespace: str) -> list[Obj]:
        return self._items(f"list pods in {namespace}", self.core.list_namespaced_pod, namespace)

    def list_device_classes(self) -> list[Obj]:
        return self._items("list DeviceClasses", self.resource.list_device_class)

    def list_resource_slices(self) -> list[Obj]:
        return self._items("list ResourceSlices", self.resource.list_resource_slice)

    def read_daemonset(self, namespace: str, name: str) -> Obj | None:
        return self._call(
            f"read DaemonSet {namespace}/{name}", self.apps.read_namespaced_daemon_set, name, namespace, missing_ok=True
        )

    def read_claim_template(self, namespace: str, name: str) -> Obj | None:
        return self._call(
            f"read ResourceClaimTemplate {namespace}/{name}",
            self.resource.read_namespaced_resource_claim_template,
            name,
            namespace,
            missing_ok=True,
        )

    def read_claim(self, namespace: str, name: str) -> Obj | None:
        return self._call(
            f"read ResourceClaim {namespace}/{name}",
            self.resource.read_namespaced_resource_claim,
            name,
            namespace,
            missing_ok=True,
        )

    def create_pod(self, namespace: str, manifest: Obj) -> Obj:
        return self._call(f"create pod in {namespace}", self.core.create_namespaced_pod, namespace, manifest) or {}

    def read_pod(self, namespace: str, name: str) -> Obj | None:
        return self._call(
            f"read pod {namespace}/{name}", self.core.read_namespaced_pod, name, namespace, missing_ok=True
        )

    def pod_events(self, namespace: str, name: str) -> list[Obj]:
        return self._items(
            f"list events of pod {namespace}/{name}",
            self.core.list_namespaced_event,
            namespace,
            field_selector=f"involvedObject.kind=Pod,involvedObject.name={name}",
        )

    def delete_pod(self, namespace: str, name: str) -> None:
        self._call(
            f"delete pod {namespace}/{name}",
            self.core.delete_namespaced_pod,
            name,
            namespace,
            grace_period_seconds=0,
            missing_ok=True,
        )

    def delete_claim(self, namespace: str, name: str) -> None:
        self._call(
            f"delete ResourceClaim {namespace}/{name}",
            self.resource.delete_namespaced_resource_claim,
            name,
            namespace,
            missing_ok=True,
        )

    def exec_in_pod(self, namespace: str, name: str, container: str, command: Sequence[str]) -> ExecResult:
        action = f"exec {' '.join(command)} in {namespace}/{name}"
        session = self._open_exec(action, namespace, name, container, command)
        try:
            session.run_forever(timeout=self.EXEC_TIMEOUT_S)
            if session.is_open():
                raise ClusterError(f"{action}: no answer within {self.EXEC_TIMEOUT_S}s")
            stdout, stderr = session.read_stdout(timeout=0), session.read_stderr(timeout=0)
            exit_code, message = exit_status(session.read_channel(ERROR_CHANNEL, timeout=0))
            return ExecResult(stdout, stderr + message, exit_code)
        except (WebSocketException, OSError) as error:
            raise ClusterError(f"{action}: the exec stream broke: {error}; run the verification again") from error
        finally:
            session.close()

    def _open_exec(self, action: str, namespace: str, name: str, container: str, command: Sequence[str]) -> Any:
        """The exec websocket; the client wraps every failure to open it, Ctrl-C included, in an ApiException with status 0."""
        try:
            return stream(
                self.core.connect_get_namespaced_pod_exec,
                name,
                namespace,
                container=container,
                command=list(command),
                stderr=True,
                stdin=False,
                stdout=True,
                tty=False,
                _preload_content=False,
            )
        except ApiException as error:
            if isinstance(error.__context__, KeyboardInterrupt):
                raise KeyboardInterrupt from None
            if error.status == 0:
                raise ClusterError(
                    f"{action}: could not open the exec stream: {error.reason}; the identity needs `create` on pods/exec, "
                    "and a proxy between you and the API server must pass websockets"
                ) from error
            raise ClusterError(explain_api_error(error, action)) from error
