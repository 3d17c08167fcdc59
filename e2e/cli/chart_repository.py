"""A Helm chart repository on 127.0.0.1 that serves the real upstream chart archives, as a mirror would.

The stack's releases name it through their repository settings (draDriverRepository,
gpuOperatorRepository, ...), so the Kubernetes provider's Helm pulls each chart over HTTP exactly
as from NGC or a company mirror. The archives are served unmodified; only the repository index is
made here, in the format Helm documents for a chart repository's `index.yaml`
(https://helm.sh/docs/topics/chart_repository/#the-index-file): per chart name, each version's
Chart.yaml fields, the archive's URL and its sha256 digest.

Given a username and a password, it is a private repository: every request without HTTP basic
authentication of that pair (RFC 7617: `Authorization: Basic base64(user:password)`) is answered
401 with a `WWW-Authenticate: Basic` challenge, as a Harbor, Artifactory or Nexus repository answers.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import tarfile
import threading
from datetime import UTC, datetime
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml


def chart_metadata(archive: Path) -> dict[str, Any]:
    """The Chart.yaml at the archive's top directory (`<name>/Chart.yaml`, as `helm package` writes it)."""
    with tarfile.open(archive) as tar:
        names = [m for m in tar.getmembers() if m.name.count("/") == 1 and m.name.endswith("/Chart.yaml")]
        if len(names) != 1:
            raise ValueError(f"{archive}: expected one <chart>/Chart.yaml, found {[m.name for m in names]}")
        stream = tar.extractfile(names[0])
        assert stream is not None
        metadata = yaml.safe_load(stream.read())
    if not isinstance(metadata, dict) or not metadata.get("name") or not metadata.get("version"):
        raise ValueError(f"{archive}: Chart.yaml has no name and version")
    return metadata


def repository_index(archives: list[Path]) -> dict[str, Any]:
    entries: dict[str, list[dict[str, Any]]] = {}
    now = datetime.now(UTC).isoformat()
    for archive in sorted(archives):
        metadata = chart_metadata(archive)
        entry = {
            **metadata,
            "urls": [archive.name],
            "digest": hashlib.sha256(archive.read_bytes()).hexdigest(),
            "created": now,
        }
        entries.setdefault(metadata["name"], []).append(entry)
    return {"apiVersion": "v1", "entries": entries, "generated": now}


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        self.server.requests.append(self.path)  # type: ignore[attr-defined]

    def _authorized(self) -> bool:
        expected = self.server.authorization  # type: ignore[attr-defined]
        given = self.headers.get("Authorization", "")
        return expected is None or hmac.compare_digest(given.encode(), expected.encode())

    def _refused(self) -> bool:
        """Answers 401 to a request that does not authenticate as the repository's user: listed in `refused`, not
        in `requests` (which then holds what was served)."""
        if self._authorized():
            return False
        self.server.refused.append(self.path)  # type: ignore[attr-defined]
        self.send_response_only(401)
        self.send_header("WWW-Authenticate", 'Basic realm="charts"')
        self.send_header("Content-Length", "0")
        self.end_headers()
        return True

    def do_GET(self) -> None:
        if not self._refused():
            super().do_GET()

    def do_HEAD(self) -> None:
        if not self._refused():
            super().do_HEAD()


class ChartRepository:
    """`with ChartRepository(charts_dir, work_dir) as repo:` serves `repo.url` until the block ends; with
    `credentials=(username, password)` only to requests that authenticate with them (`repo.refused`: the others)."""

    def __init__(self, charts: Path, directory: Path, credentials: tuple[str, str] | None = None) -> None:
        self.archives = sorted(charts.glob("*.tgz"))
        if not self.archives:
            raise FileNotFoundError(f"no chart archives (*.tgz) in {charts}")
        self.directory = directory
        self.index = repository_index(self.archives)
        self.charts = sorted(
            (name, entry["version"]) for name, found in self.index["entries"].items() for entry in found
        )
        self.url = ""
        self.requests: list[str] = []
        self.refused: list[str] = []
        self.authorization = (
            "Basic " + base64.b64encode(":".join(credentials).encode()).decode() if credentials is not None else None
        )

    def __enter__(self) -> ChartRepository:
        self.directory.mkdir(parents=True, exist_ok=True)
        for archive in self.archives:
            (self.directory / archive.name).write_bytes(archive.read_bytes())
        (self.directory / "index.yaml").write_text(yaml.safe_dump(self.index, sort_keys=True))
        handler = partial(_QuietHandler, directory=str(self.directory))
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.requests = self.requests  # type: ignore[attr-defined]
        self._server.refused = self.refused  # type: ignore[attr-defined]
        self._server.authorization = self.authorization  # type: ignore[attr-defined]
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="chart-repository", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
