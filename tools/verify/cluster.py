"""A thin adapter over the official `kubernetes` client that hands back objects as raw API JSON.

Responses are read with `_preload_content=False` and parsed as JSON, so the checks see
exactly what `kubectl get -o json` shows (camelCase, every field), never the client's
generated model classes. Every failure becomes a `ClusterError` whose message says what to
do about it; a missing object is `None`, not an error.

Nothing here waits without a limit. A socket timeout bounds one read, not a request: a server
that sends a byte a second, in the headers or in a chunked body, would hold it for hours. So
each request runs on a thread of its own and the caller waits for it until the request's
deadline (`request_timeout_s`, --request-timeout, for the connection, the headers and the whole
body) or the run's (`run_deadline`, --run-timeout), whichever comes first; the connection is
then shut down and the worker ends. A body larger than `MAX_RESPONSE_BYTES`, an error answer's
included, is cut off, not read until memory runs out. The exec websocket connects and reads under
the same per-request limit and stops past `MAX_EXEC_OUTPUT_BYTES` of output, and
the kubeconfig's exec credential plugin runs under its own (--exec-plugin-timeout). A server
that does not answer in time, or a plugin that does not finish, is a `ClusterUnreachableError`
naming the server URL or the command; an answer that cannot be used (not JSON, not the shape the
API returns, too large) is an `UnusableAnswerError`. Both mean nothing was judged: exit 2.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any, Protocol

import urllib3
from kubernetes import client
from kubernetes.client import rest
from kubernetes.client.rest import ApiException
from kubernetes.config.kube_config import KubeConfigLoader
from kubernetes.stream import stream, ws_client
from kubernetes.stream.ws_client import ERROR_CHANNEL
from websocket import WebSocket, WebSocketException, WebSocketTimeoutException

from components.config.reading import InputError, parse_json, printable
from components.dra_constants import RESOURCE_API_VERSION
from components.shown import shown
from tools.verify.kubeconfig import (
    ExecCredentials,
    ExecPluginError,
    KubeconfigError,
    kind_of,
    load_kubeconfig,
    one_line,
)
from tools.verify.objects import name_of, repeated_condition

Obj = dict[str, Any]
DEFAULT_REQUEST_TIMEOUT_S = 30.0
DEFAULT_EXEC_PLUGIN_TIMEOUT_S = 60.0
# A list of every ResourceSlice of a thousand 8-GPU nodes is a few MiB; 64 MiB is far above any real answer.
MAX_RESPONSE_BYTES = 64 << 20
# What one exec stream may send: the smoke commands (`nvidia-smi -L` and the `ls` of /sys/class/net and
# /sys/class/infiniband, tools/verify/smoke.py) print a few KiB; 16 MiB is far above any of them.
MAX_EXEC_OUTPUT_BYTES = 16 << 20
# all_reduce_perf prints a few KiB (tests/data/nccl); NCCL's WARN lines add some: 1 MiB keeps all of it.
MAX_LOG_BYTES = 1 << 20
READ_CHUNK_BYTES = 1 << 16
TIMEOUTS = (TimeoutError, urllib3.exceptions.TimeoutError, WebSocketTimeoutException)


class ClusterError(Exception):
    """The cluster could not be read or changed; the message names the likely fix."""


class ClusterUnreachableError(ClusterError):
    """The cluster could not be asked at all: its API server did not answer in time or could not be
    reached, or the exec credential plugin gave no credential. Nothing was judged: the run exits 2."""


class CredentialRefusedError(ClusterUnreachableError):
    """The API server refused the kubeconfig's credential (401): nothing can be asked with it, so nothing was
    judged; the message names the credential the kubeconfig sends. The run exits 2 (an unusable kubeconfig)."""


class CredentialCommandError(ClusterUnreachableError):
    """The kubeconfig's exec credential command gave no credential (it failed, timed out, printed no ExecCredential):
    no request was sent, so nothing was judged; the message names the command. The run exits 2."""


class UnusableAnswerError(ClusterError):
    """The API server answered, but with something no check can judge (not JSON, not the object or list
    the API returns, larger than MAX_RESPONSE_BYTES): that step judged nothing, the others go on; exit 2."""


class _Attempt:
    """One request on a thread of its own, so that the caller's wait bounds it whole, however the server drips."""

    def __init__(self, work: Callable[[_Attempt], bytes]) -> None:
        self.work = work
        self.finished = threading.Event()
        self.abandoned = False
        self.response: Any = None
        self.result: bytes = b""
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.result = self.work(self)
        except BaseException as error:  # handed to the waiting caller, which raises it there
            self.error = error
        finally:
            self.finished.set()

    def abandon(self) -> None:
        """The deadline passed: shut the connection down, so that the worker's blocked read ends now."""
        self.abandoned = True
        response = self.response
        if response is not None:
            with suppress(OSError):  # already closed by the server
                response.shutdown()


def read_body(response: Any, attempt: _Attempt) -> bytes:
    """The body in chunks, stopping past MAX_RESPONSE_BYTES or once the attempt is abandoned."""
    chunks: list[bytes] = []
    size = 0
    for chunk in response.stream(READ_CHUNK_BYTES, decode_content=True):
        size += len(chunk)
        if size > MAX_RESPONSE_BYTES:
            raise _TooLargeError
        if attempt.abandoned:
            break
        chunks.append(chunk)
    return b"".join(chunks)


class _TooLargeError(Exception):
    """The body passed MAX_RESPONSE_BYTES, or an exec stream passed MAX_EXEC_OUTPUT_BYTES."""


# The attempt whose request this thread is sending: how the REST client below finds the attempt it answers.
_SENDING = threading.local()


class _BoundedResponse(rest.RESTResponse):
    """An answer whose body the client reads itself (for an error status, before raising ApiException), in chunks
    and only up to MAX_RESPONSE_BYTES: urllib3's `.data` would read a body of any size whole."""

    def __init__(self, response: Any, attempt: _Attempt) -> None:
        super().__init__(response)
        self.attempt = attempt
        self.body: bytes | None = None

    def read(self) -> bytes:
        if self.body is None:
            try:
                self.body = read_body(self.response, self.attempt)
            except BaseException:
                self.response.close()
                raise
            self.response.release_conn()
            # The client declares `data` as None and reads the body from it (ApiException.from_response).
            self.data = self.body  # type: ignore[assignment]
        return self.body


class BoundedRESTClient(rest.RESTClientObject):
    """The client's REST layer, handing each answer to the attempt that sent it, so that the deadline can shut its
    connection down and an error body is read under the size limit too."""

    def request(self, *args: Any, **kwargs: Any) -> rest.RESTResponse:
        answer = super().request(*args, **kwargs)
        attempt = getattr(_SENDING, "attempt", None)
        if attempt is None:
            return answer
        attempt.response = answer.response
        return _BoundedResponse(answer.response, attempt)


def is_timeout(error: BaseException) -> bool:
    """A timeout, also when urllib3 wraps it (MaxRetryError) or the client chains it (ApiException from the websocket)."""
    if isinstance(error, urllib3.exceptions.NewConnectionError):
        return False  # urllib3 derives it from ConnectTimeoutError, but it is a refusal or a DNS failure
    if isinstance(error, TIMEOUTS):
        return True
    reason = getattr(error, "reason", None)
    if isinstance(reason, BaseException) and reason is not error and is_timeout(reason):
        return True
    return error.__context__ is not None and is_timeout(error.__context__)


@contextmanager
def bounded_websocket(seconds: float) -> Iterator[None]:
    """Opens the client's exec websockets with a socket timeout for the connect, handshake and every read, and
    MAX_EXEC_OUTPUT_BYTES as the limit on what one stream may receive.

    The client (kubernetes 37, `ws_client.create_websocket`) connects with no timeout and offers
    no setting for one; its `_request_timeout` only bounds `run_forever`. Nor does it bound what
    it buffers: `WSClient.update` reads every frame already waiting into its channels, and
    websocket-client reads a frame of any declared length whole. So, while the stream is opened,
    the `WebSocket` class it instantiates is swapped for one that passes `timeout` and counts
    what its socket reads, raising once a stream has received more than the limit.
    """
    original = ws_client.WebSocket

    class BoundedWebSocket(WebSocket):
        received = 0

        def connect(self, url: str, **options: Any) -> None:
            options.setdefault("timeout", seconds)
            super().connect(url, **options)

        def _recv(self, bufsize: int) -> bytes:
            data: bytes = super()._recv(bufsize)
            self.received += len(data)
            if self.received > MAX_EXEC_OUTPUT_BYTES:
                raise _TooLargeError
            return data

    ws_client.WebSocket = BoundedWebSocket  # type: ignore[misc]
    try:
        yield
    finally:
        ws_client.WebSocket = original  # type: ignore[misc]


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
    def list_custom_objects(
        self, group: str, version: str, kind: str, plural: str, namespace: str | None = None
    ) -> list[Obj]: ...
    def read_daemonset(self, namespace: str, name: str) -> Obj | None: ...
    def read_claim_template(self, namespace: str, name: str) -> Obj | None: ...
    def read_claim(self, namespace: str, name: str) -> Obj | None: ...
    def create_pod(self, namespace: str, manifest: Obj) -> Obj: ...
    def read_pod(self, namespace: str, name: str) -> Obj | None: ...
    def pod_events(self, namespace: str, name: str) -> list[Obj]: ...
    def exec_in_pod(self, namespace: str, name: str, container: str, command: Sequence[str]) -> ExecResult: ...
    def delete_pod(self, namespace: str, name: str) -> None: ...
    def delete_claim(self, namespace: str, name: str) -> None: ...
    def proxy_pod(self, namespace: str, name: str, port: int, path: str) -> str: ...


FORBIDDEN = "the kubeconfig's identity lacks this permission"


def explain_api_error(error: ApiException, action: str) -> str:
    if error.status == 404:
        dra = "Resource" in action or "DeviceClass" in action
        return f"{action}: not found (404)" + (
            ": the API server does not serve resource.k8s.io/v1, which needs Kubernetes 1.34 or later" if dra else ""
        )
    return f"{action}: HTTP {error.status} {error.reason}"


def exit_status(error_channel: str) -> tuple[int, str]:
    """The exit code from the exec error channel's Status object; 126 when the command could not start."""
    try:
        status = parse_json(error_channel, "the exec status") if error_channel.strip() else {"status": "Success"}
    except InputError as unreadable:
        return 126, f"unreadable exec status: {unreadable}"
    if not isinstance(status, dict):
        return 126, f"unreadable exec status: {error_channel[:200]}"
    if status.get("status") == "Success":
        return 0, ""
    causes = status.get("details", {}).get("causes") or []
    code = next((int(c["message"]) for c in causes if c.get("reason") == "ExitCode"), 126)
    return code, status.get("message", "")


class KubeCluster:
    EXEC_TIMEOUT_S = 60

    def __init__(
        self,
        api_client: client.ApiClient,
        request_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S,
        credentials: ExecCredentials | None = None,
        run_deadline: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        refused: str = "the API server refused the kubeconfig's credential",
        tls_unverified: str | None = None,
    ) -> None:
        """`credentials`: the kubeconfig's exec plugin, run before the first request and whenever its token expires.

        `run_deadline` (a `clock` time): no request but a deletion starts or lasts past it; None for no run limit.
        `refused`: what a 401 means, naming the credential the kubeconfig sends (`Kubeconfig.refused`).
        `tls_unverified`: the cluster entry whose insecure-skip-tls-verify turns off the check of the server's
        certificate, for the CLI to say so once (urllib3 would warn on every request); None when it is checked.
        """
        self.refused = refused
        self.tls_unverified = tls_unverified
        self.api_client = api_client
        self.server = api_client.configuration.host
        self.request_timeout_s = request_timeout_s
        self.credentials = credentials
        self.run_deadline = run_deadline
        self.clock = clock
        self.core = client.CoreV1Api(api_client)
        self.apps = client.AppsV1Api(api_client)
        self.resource = client.ResourceV1Api(api_client)
        self.batch = client.BatchV1Api(api_client)

    @classmethod
    def from_kubeconfig(
        cls,
        path: str | None,
        context: str | None = None,
        request_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S,
        exec_plugin_timeout_s: float = DEFAULT_EXEC_PLUGIN_TIMEOUT_S,
        run_deadline: float | None = None,
    ) -> KubeCluster:
        """Reads and checks the kubeconfig; runs no plugin and sends no request yet (the first call does)."""
        try:
            kubeconfig = load_kubeconfig(path, context)
        except KubeconfigError as error:
            raise ClusterError(str(error)) from None
        configuration = client.Configuration()
        try:
            loader = KubeConfigLoader(
                config_dict=kubeconfig.client_config(), active_context=kubeconfig.context.name, config_base_path=None
            )
            loader.load_and_set(configuration)
        except Exception as error:  # whatever the client still trips on is one line naming the file, not a traceback
            raise ClusterError(
                f"kubeconfig {kubeconfig.context.source}: context {shown(kubeconfig.context.name)}: "
                f"{type(error).__name__}: {one_line(str(error))}"
            ) from None
        # No retries: a server that does not answer fails after one --request-timeout, not after four.
        configuration.retries = 0
        credentials = None
        if kubeconfig.exec is not None:
            interactive = sys.stdin.isatty() and sys.stderr.isatty()
            credentials = ExecCredentials(kubeconfig.exec, exec_plugin_timeout_s, interactive)
        api_client = client.ApiClient(configuration)
        api_client.rest_client = BoundedRESTClient(configuration)
        unverified = (
            None
            if configuration.verify_ssl
            else f"cluster {shown(kubeconfig.cluster.name)} in {kubeconfig.cluster.source}"
        )
        return cls(
            api_client,
            request_timeout_s,
            credentials,
            run_deadline,
            refused=kubeconfig.refused,
            tls_unverified=unverified,
        )

    def _authenticate(self, action: str) -> None:
        """Installs the exec plugin's credential, running the plugin when there is none yet or it expired."""
        if self.credentials is None:
            return
        try:
            credential, renewed = self.credentials.current()
        except ExecPluginError as error:
            raise CredentialCommandError(f"{action}: no credential: {error}") from None
        if not renewed:
            return
        configuration = self.api_client.configuration
        if credential.token is not None:
            configuration.api_key["BearerToken"] = f"Bearer {credential.token}"
        else:
            configuration.cert_file, configuration.key_file = self.credentials.certificate_files(credential)
            # The connection pool reads the client certificate when it is built.
            self.api_client.rest_client = BoundedRESTClient(configuration)

    def _late(self, action: str, limit: str) -> ClusterUnreachableError:
        return ClusterUnreachableError(
            f"{action}: the API server {self.server} did not answer within {limit} (an answer ends with its "
            "last byte); check that the kubeconfig's server is the cluster's endpoint and that your network "
            "(VPN, firewall, proxy) reaches it"
        )

    def _unreachable(self, action: str, error: BaseException) -> ClusterUnreachableError:
        if is_timeout(error):
            return self._late(action, f"{self.request_timeout_s:g}s (--request-timeout)")
        reason = getattr(error, "reason", None) or error
        return ClusterUnreachableError(
            f"{action}: cannot reach the API server {self.server} ({one_line(str(reason))}); "
            "check the kubeconfig's server and your network"
        )

    def _deadline(self, cleanup: bool) -> tuple[float, str]:
        """When this request must be done, and the limit that says so; a deletion of the verifier's own objects
        always gets its --request-timeout, so that a run out of time still cleans up."""
        own = self.clock() + self.request_timeout_s
        if cleanup or self.run_deadline is None or own <= self.run_deadline:
            return own, f"{self.request_timeout_s:g}s (--request-timeout)"
        return self.run_deadline, "the run's time limit (--run-timeout)"

    def _bounded(
        self, action: str, call: Callable[..., Any], args: Sequence[Any], kwargs: dict, cleanup: bool
    ) -> bytes:
        """The body of one request, connection, headers and body all done by the deadline, at most MAX_RESPONSE_BYTES."""
        deadline, limit = self._deadline(cleanup)
        remaining = deadline - self.clock()
        if remaining <= 0:
            raise ClusterUnreachableError(f"{action}: not sent: {limit} is spent")

        # The sockets' own limit is a backstop a little after the deadline, so that the wait below speaks first.
        backstop = remaining + 1

        def work(attempt: _Attempt) -> bytes:
            _SENDING.attempt = attempt
            response = call(*args, _preload_content=False, _request_timeout=(backstop, backstop), **kwargs)
            attempt.response = response
            try:
                body = read_body(response, attempt)
            except BaseException:
                response.close()  # a half-read body must not go back to the pool for the next request
                raise
            response.release_conn()
            return body

        attempt = _Attempt(work)
        threading.Thread(target=attempt.run, name=f"tools.verify: {action}", daemon=True).start()
        if not attempt.finished.wait(remaining):
            attempt.abandon()
            raise self._late(action, limit)
        if isinstance(attempt.error, _TooLargeError):
            raise UnusableAnswerError(
                f"{action}: the API server {self.server} answered with more than {MAX_RESPONSE_BYTES >> 20} MiB "
                "(the verifier's limit on one answer); a proxy may stand in its way"
            )
        if attempt.error is not None:
            raise attempt.error
        return attempt.result

    def _request(
        self,
        action: str,
        call: Callable[..., Any],
        *args: Any,
        missing_ok: bool = False,
        cleanup: bool = False,
        **kwargs: Any,
    ) -> bytes | None:
        """The answer's body; None for a missing object when `missing_ok`."""
        self._authenticate(action)
        try:
            return self._bounded(action, call, args, kwargs, cleanup)
        except ApiException as error:
            if missing_ok and error.status == 404:
                return None
            if error.status == 0:  # the client's wrapping of a TLS failure: no HTTP answer at all
                raise self._unreachable(action, error) from error
            if error.status == 401:
                raise CredentialRefusedError(f"{action}: unauthorized (401): {self.refused}") from None
            if error.status == 403:
                # Refused like a 401: the credential was taken but may not do this, and no other can be tried
                # (docs/verify.md's exit codes: a credential the cluster refuses is exit 2, as a kubeconfig problem).
                raise CredentialRefusedError(f"{action}: forbidden (403): {FORBIDDEN}") from None
            raise ClusterError(explain_api_error(error, action)) from error
        except (urllib3.exceptions.HTTPError, OSError) as error:
            raise self._unreachable(action, error) from error
        except ValueError:  # http.client refusing a header: its message quotes the header, credential included
            raise ClusterUnreachableError(
                f"{action}: the request could not be sent (a header the kubeconfig gave is not a valid HTTP header; "
                "its value is not shown)"
            ) from None

    def _unusable(self, action: str, what: str) -> UnusableAnswerError:
        return UnusableAnswerError(
            f"{action}: the API server {self.server} answered with {what}; a proxy may stand in its way, "
            "or the server is not a Kubernetes API server"
        )

    def _call(
        self,
        action: str,
        call: Callable[..., Any],
        *args: Any,
        missing_ok: bool = False,
        cleanup: bool = False,
        **kwargs: Any,
    ) -> Obj | None:
        data = self._request(action, call, *args, missing_ok=missing_ok, cleanup=cleanup, **kwargs)
        if data is None:
            return None
        if not data:
            return {}
        try:
            document = parse_json(data, "its answer")
        except InputError as error:
            raise self._unusable(
                action, f"something this verifier cannot read ({printable(one_line(str(error), 200))})"
            ) from None
        if not isinstance(document, dict):
            raise self._unusable(action, "JSON that is not an object")
        items = document.get("items")
        for item in items if isinstance(items, list) else [document]:
            repeated = repeated_condition(item) if isinstance(item, dict) else None
            if repeated is not None:
                # A reader takes one entry of the two and drops the other, so the verdict would hang on their order.
                raise self._unusable(
                    action,
                    f"{printable(one_line(name_of(item) or 'an object', 60))!r} listing condition "
                    f"{printable(one_line(repeated, 60))} twice (a condition type is listed once)",
                )
        return document

    def _list_items(self, action: str, found: Obj | None, api_version: str, kind: str) -> list[Obj]:
        """The items of a list answer, once the answer says it is the list asked for: an API server names every
        list `<Kind>List` in the group's version (the Kubernetes API conventions, "Lists and Simple kinds"; the
        captured tests/data/captured/resourceslices-*.json: `ResourceSliceList`, `resource.k8s.io/v1`). A NodeList
        where DeviceClasses were asked would otherwise be counted as DeviceClasses."""
        if found is None:  # a CRD that is not installed (missing_ok)
            return []
        answer = found
        if answer.get("apiVersion") != api_version or answer.get("kind") != kind:
            asked = f"{kind} of {api_version}"
            got = f"{printable(one_line(str(answer.get('kind')), 60))} of {printable(one_line(str(answer.get('apiVersion')), 60))}"
            raise self._unusable(action, f"{got} where {asked} was asked")
        # An empty list is `"items": []`; Go's encoding/json writes a nil slice as `null`, so null (or no items) is none.
        # Anything else that is not a list (`{}`, `""`, `0`) is a malformed answer, not an empty list.
        items = answer.get("items")
        if items is None:
            return []
        if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
            what = "a list with an entry that is not an object" if isinstance(items, list) else kind_of(items)
            raise self._unusable(action, f"a {kind} whose items are {what}, not a list of objects")
        return items

    def _items(
        self, action: str, kind: str, call: Callable[..., Any], *args: Any, api_version: str = "v1", **kwargs: Any
    ) -> list[Obj]:
        return self._list_items(action, self._call(action, call, *args, **kwargs), api_version, kind)

    def list_nodes(self) -> list[Obj]:
        return self._items("list nodes", "NodeList", self.core.list_node)

    def list_pods(self, namespace: str) -> list[Obj]:
        return self._items(f"list pods in {namespace}", "PodList", self.core.list_namespaced_pod, namespace)

    def list_device_classes(self) -> list[Obj]:
        return self._items(
            "list DeviceClasses", "DeviceClassList", self.resource.list_device_class, api_version=RESOURCE_API_VERSION
        )

    def list_resource_slices(self) -> list[Obj]:
        return self._items(
            "list ResourceSlices",
            "ResourceSliceList",
            self.resource.list_resource_slice,
            api_version=RESOURCE_API_VERSION,
        )

    def list_custom_objects(
        self, group: str, version: str, kind: str, plural: str, namespace: str | None = None
    ) -> list[Obj]:
        """Objects of a CRD (Kueue's queues) of `kind`, listed by its `plural`; a CRD that is not installed reads as
        none."""
        api = client.CustomObjectsApi(self.api_client)
        action = f"list {plural}.{group}" + (f" in {namespace}" if namespace else "")
        if namespace is None:
            found = self._call(action, api.list_cluster_custom_object, group, version, plural, missing_ok=True)
        else:
            found = self._call(
                action, api.list_namespaced_custom_object, group, version, namespace, plural, missing_ok=True
            )
        # A CRD's list kind is its kind's name with List (ClusterQueueList: the apiextensions API names it
        # `spec.names.listKind`, "defaults to `kind`List"); the plural alone does not give it, so the caller names the kind.
        return self._list_items(action, found, f"{group}/{version}", f"{kind}List")

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
            "EventList",
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
            cleanup=True,
        )

    def delete_claim(self, namespace: str, name: str) -> None:
        self._call(
            f"delete ResourceClaim {namespace}/{name}",
            self.resource.delete_namespaced_resource_claim,
            name,
            namespace,
            missing_ok=True,
            cleanup=True,
        )

    def _burn_in_api(self, kind: str, verb: str) -> Callable[..., Any]:
        api, noun = {"Job": (self.batch, "job"), "Secret": (self.core, "secret"), "Service": (self.core, "service")}[
            kind
        ]
        return getattr(api, f"{verb}_namespaced_{noun}")

    def create_object(self, namespace: str, manifest: Obj) -> Obj:
        """Creates a Job, Secret or Service (the burn-in's objects) in `namespace`."""
        kind = manifest.get("kind")
        create = self._burn_in_api(str(kind), "create")
        return self._call(f"create {kind} in {namespace}", create, namespace, manifest) or {}

    def delete_object(self, kind: str, namespace: str, name: str) -> None:
        """Deletes a Job (its pods with it, in the background), Secret or Service; a missing one is fine."""
        delete = self._burn_in_api(kind, "delete")
        self._call(
            f"delete {kind} {namespace}/{name}",
            delete,
            name,
            namespace,
            propagation_policy="Background",
            grace_period_seconds=0,
            missing_ok=True,
            cleanup=True,
        )

    def read_job(self, namespace: str, name: str) -> Obj | None:
        return self._call(
            f"read Job {namespace}/{name}", self.batch.read_namespaced_job, name, namespace, missing_ok=True
        )

    def list_pods_labelled(self, namespace: str, selector: str) -> list[Obj]:
        return self._items(
            f"list pods {selector} in {namespace}",
            "PodList",
            self.core.list_namespaced_pod,
            namespace,
            label_selector=selector,
        )

    def pod_log(self, namespace: str, name: str, container: str) -> str:
        """The container's log, at most MAX_LOG_BYTES of its end."""
        data = self._request(
            f"read the log of pod {namespace}/{name}",
            self.core.read_namespaced_pod_log,
            name,
            namespace,
            container=container,
            limit_bytes=MAX_LOG_BYTES,
        )
        return (data or b"").decode(errors="replace")

    def proxy_pod(self, namespace: str, name: str, port: int, path: str) -> str:
        """GET `path` from a pod's port through the API server's proxy (the `pods/proxy` subresource)."""
        data = self._request(
            f"read /{path} of pod {namespace}/{name}:{port} through the API server's proxy",
            self.core.connect_get_namespaced_pod_proxy_with_path,
            f"{name}:{port}",
            namespace,
            path,
        )
        return (data or b"").decode(errors="replace")

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
        except _TooLargeError:
            raise UnusableAnswerError(
                f"{action}: the pod sent more than {MAX_EXEC_OUTPUT_BYTES >> 20} MiB (the verifier's limit on one "
                "command's output); the command is not the one the smoke workload runs, or a proxy stands in its way"
            ) from None
        except (WebSocketException, OSError) as error:
            if is_timeout(error):
                raise self._unreachable(action, error) from error
            raise ClusterError(f"{action}: the exec stream broke: {error}; run the verification again") from error
        finally:
            session.close()

    def _open_exec(self, action: str, namespace: str, name: str, container: str, command: Sequence[str]) -> Any:
        """The exec websocket; the client wraps every failure to open it, Ctrl-C included, in an ApiException with status 0."""
        self._authenticate(action)
        try:
            with bounded_websocket(self.request_timeout_s):
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
            if error.status == 0 and (is_timeout(error) or isinstance(error.__context__, OSError)):
                raise self._unreachable(action, error.__context__ or error) from error
            if error.status == 0:
                raise ClusterError(
                    f"{action}: could not open the exec stream: {error.reason}; the identity needs `create` on pods/exec, "
                    "and a proxy between you and the API server must pass websockets"
                ) from error
            raise ClusterError(explain_api_error(error, action)) from error
